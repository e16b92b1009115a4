"""Numerics (shifts, dtypes, -inf masks, invalid scores) and the API contract."""

import warnings

import numpy as np
import pytest

import sksparsemax.losses._targets as targets_module
from sksparsemax import transforms
from sksparsemax.losses import (
    FenchelYoungLoss,
    EntmaxLoss,
    SoftmaxLoss,
    SparseSoftmaxLoss,
    SparsemaxLoss,
    check_target,
    entmax_loss,
    softmax_loss,
    sparse_softmax_loss,
    sparsemax_loss,
)

LOSSES = [
    SparsemaxLoss(),
    SparseSoftmaxLoss(1),
    SparseSoftmaxLoss(3),
    SparseSoftmaxLoss(6),
    EntmaxLoss(1.0),
    EntmaxLoss(1.5),
    EntmaxLoss(1.75),
    EntmaxLoss(2.0),
    SoftmaxLoss(),
]
LOSS_IDS = [repr(loss) for loss in LOSSES]
KINDS = ["indices", "proportions"]


def problem(seed, n=40, K=6, kind="indices", scale=2.0):
    rng = np.random.default_rng(seed)
    Z = scale * rng.standard_normal((n, K))
    if kind == "indices":
        return Z, rng.integers(0, K, size=n)
    Q = rng.dirichlet(np.ones(K), size=n)
    Q[Q < 0.12] = 0
    Q[np.arange(n), rng.integers(0, K, size=n)] += 0.2
    return Z, Q / Q.sum(axis=1, keepdims=True)


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ------------------------------------------------------------ shifts, dtypes
@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_row_shift_invariance_float64(loss, kind):
    Z, target = problem(0, kind=kind)
    base, gbase = loss.loss_gradient(Z, target)
    shifts = np.random.default_rng(1).choice([-1e3, -7.25, 3.5, 1e6], size=(Z.shape[0], 1))
    values, grad = loss.loss_gradient(Z + shifts, target)
    atol = 1e-14 * Z.shape[1] * (1 + np.abs(shifts))
    np.testing.assert_allclose(values, base, rtol=1e-10, atol=atol.max())
    np.testing.assert_allclose(grad, gbase, atol=atol.max())


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_float32_does_not_drift_under_a_1e6_shift(loss, kind):
    Z, target = problem(2, kind=kind)
    Z = np.round(Z * 16) / 16  # multiples of 1/16: Z + 1e6 is exact in float32
    Z32 = (Z + 1e6).astype(np.float32)
    assert np.array_equal(Z32.astype(np.float64) - 1e6, Z)  # the premise
    values, grad = loss.loss_gradient(Z32, target)
    assert values.dtype == np.float32 and grad.dtype == np.float32
    ref, gref = loss.loss_gradient(Z, target)
    np.testing.assert_allclose(values, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grad, gref, atol=1e-5)


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_float32_agrees_with_float64_and_keeps_its_dtype(loss, kind):
    Z, target = problem(3, kind=kind)
    Z32 = Z.astype(np.float32)
    v32, g32 = loss.loss_gradient(Z32, target)
    v64, g64 = loss.loss_gradient(Z32.astype(np.float64), target)
    assert v32.dtype == g32.dtype == loss.predict_proba(Z32).dtype == np.float32
    assert loss.loss(Z32, target).dtype == loss.gradient(Z32, target).dtype == np.float32
    np.testing.assert_allclose(v32, v64, rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(g32, g64, atol=2e-6)


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
def test_integer_scores_become_float64(loss):
    Z = np.array([[3, 1, 0, -2, 0, 1], [0, 0, 0, 0, 0, 0]])
    values, grad = loss.loss_gradient(Z, [0, 5])
    assert values.dtype == grad.dtype == np.float64
    np.testing.assert_array_equal(values, loss.loss(Z.astype(float), [0, 5]))


# ------------------------------------------------------------ -inf masks
@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_masked_classes_are_as_if_removed(loss, kind, dtype):
    Z, target = problem(4, n=30, K=6, kind=kind)
    Z = Z.astype(dtype)
    rng = np.random.default_rng(5)
    Q = np.eye(6)[target] if kind == "indices" else target
    Zm = Z.copy()
    # mask up to 2 classes with zero target probability per row
    mask = (rng.random(Z.shape) < 0.35) & (Q == 0)
    mask &= np.cumsum(mask, axis=1) <= 2
    Zm[mask] = -np.inf
    values, grad = loss.loss_gradient(Zm, target)
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(grad))
    assert np.all(grad[mask] == 0)
    for i in range(Z.shape[0]):
        keep = ~mask[i]
        z, q = Z[i : i + 1, keep], Q[i : i + 1, keep]
        # the top-k of the reduced row are the top-k of the masked row as long
        # as k does not exceed the number of unmasked classes
        sub = SparseSoftmaxLoss(min(loss.k, keep.sum())) if hasattr(loss, "k") else loss
        v, g = sub.loss_gradient(z, q)
        np.testing.assert_allclose(values[i], v[0], rtol=1e-6 if dtype == np.float32 else 1e-13)
        np.testing.assert_allclose(grad[i, keep], g[0], atol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_masked_target_class_gives_infinite_loss_never_nan(loss, dtype):
    Z, y = problem(6, n=5, kind="indices")
    Z = Z.astype(dtype)
    ok = loss.loss(Z, y)
    Z[2, y[2]] = -np.inf
    values, grad = loss.loss_gradient(Z, y)
    assert values[2] == np.inf
    assert not np.isnan(values).any() and not np.isnan(grad).any()
    np.testing.assert_array_equal(np.delete(values, 2), np.delete(ok, 2))
    np.testing.assert_allclose(grad[2], loss.predict_proba(Z[2:3])[0] - np.eye(6)[y[2]])
    # proportions: -inf on a class with q_j > 0
    Q = np.full((2, 6), 1 / 6)
    Z2 = Z[:2].copy()
    Z2[1, 3] = -np.inf
    values = loss.loss(Z2, Q)
    assert np.isfinite(values[0]) and values[1] == np.inf


def test_extreme_finite_spread_is_a_mask_without_warnings():
    Z = np.array([[0.0, -1e308, 1e308]])
    for loss in LOSSES:
        values, grad = loss.loss_gradient(Z, [2])
        assert values[0] == 0.0  # the target's margin is 1e308
        assert np.all(np.isfinite(grad))


@pytest.mark.parametrize(
    "Z, message",
    [
        ([[0.0, 1.0], [np.nan, 0.0]], r"Z contains NaN at row 1"),
        ([[0.0, np.inf], [0.0, 0.0]], r"Z contains \+inf .* at row 0"),
        ([[0.0, 1.0], [-np.inf, -np.inf]], r"every entry equal to -inf .* at row 1"),
        ([0.0, 1.0], r"2-D array of scores"),
        (np.zeros((2, 2, 2)), r"2-D array of scores"),
        (np.zeros((2, 0)), r"0 columns"),
    ],
)
@pytest.mark.parametrize("loss", [SparsemaxLoss(), SparseSoftmaxLoss(2), EntmaxLoss(1.5)])
def test_invalid_scores_raise(loss, Z, message):
    with pytest.raises(ValueError, match=message):
        loss.loss_gradient(Z, [0, 1])
    with pytest.raises(ValueError, match=message):
        loss.predict_proba(Z)


def test_non_numeric_scores_raise_type_error():
    with pytest.raises(TypeError, match="Z must be an array of real numbers"):
        sparsemax_loss([["a", "b"]], [0])


# ------------------------------------------------------------ API contract
@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_loss_gradient_equals_loss_and_gradient(loss, kind):
    Z, target = problem(7, kind=kind)
    values, grad = loss.loss_gradient(Z, target)
    assert values.shape == (40,) and grad.shape == (40, 6)
    np.testing.assert_array_equal(values, loss.loss(Z, target))
    np.testing.assert_array_equal(grad, loss.gradient(Z, target))


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
def test_loss_gradient_evaluates_the_mapping_once(loss, monkeypatch):
    calls = []
    original = type(loss)._conjugate

    def counting(self, Zs, need_value=True):
        calls.append(need_value)
        return original(self, Zs, need_value)

    monkeypatch.setattr(type(loss), "_conjugate", counting)
    Z, y = problem(8)
    loss.loss_gradient(Z, y)
    assert calls == [True]


@pytest.mark.parametrize("kind", KINDS)
def test_functions_are_the_objects(kind):
    Z, target = problem(9, kind=kind)
    pairs = [
        (sparsemax_loss(Z, target), SparsemaxLoss()),
        (sparse_softmax_loss(Z, target, 3), SparseSoftmaxLoss(3)),
        (entmax_loss(Z, target), EntmaxLoss(1.5)),
        (entmax_loss(Z, target, 1.2), EntmaxLoss(1.2)),
        (softmax_loss(Z, target), SoftmaxLoss()),
    ]
    for values, loss in pairs:
        np.testing.assert_array_equal(values, loss.loss(Z, target))


def test_predict_proba_is_the_mapping():
    Z, _ = problem(10, scale=3.0)
    np.testing.assert_allclose(
        SparsemaxLoss().predict_proba(Z), transforms.sparsemax(Z), atol=1e-15
    )
    for k in (1, 3, 6, 9):
        np.testing.assert_allclose(
            SparseSoftmaxLoss(k).predict_proba(Z), transforms.sparse_softmax(Z, k), atol=1e-15
        )
    np.testing.assert_allclose(EntmaxLoss(1.5).predict_proba(Z), transforms.entmax15(Z), atol=1e-15)
    np.testing.assert_allclose(
        EntmaxLoss(1.3).predict_proba(Z), transforms.entmax_bisect(Z, 1.3), atol=1e-15
    )
    np.testing.assert_allclose(EntmaxLoss(1).predict_proba(Z), transforms.softmax(Z), atol=1e-15)
    np.testing.assert_allclose(SoftmaxLoss().predict_proba(Z), transforms.softmax(Z), atol=1e-15)
    # ties at the k-th score: lowest index wins, as in the transform
    np.testing.assert_array_equal(
        SparseSoftmaxLoss(2).predict_proba([[1.0, 1.0, 1.0]]), [[0.5, 0.5, 0.0]]
    )


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_checked_target_and_check_false_fast_paths(loss, kind, monkeypatch):
    Z, raw = problem(11, kind=kind)
    expected = loss.loss_gradient(Z, raw)
    checked = check_target(raw, *Z.shape)

    def forbidden(*args, **kwargs):
        raise AssertionError("a checked target was validated again")

    monkeypatch.setattr(targets_module, "_check_indices", forbidden)
    monkeypatch.setattr(targets_module, "_check_proba", forbidden)
    for target in (checked, raw):
        check = target is checked  # a Target is not re-validated even with check=True
        values, grad = loss.loss_gradient(Z, target, check=check)
        np.testing.assert_allclose(values, expected[0], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(grad, expected[1], atol=1e-15)
    np.testing.assert_allclose(loss.loss(Z, checked), expected[0], rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(loss.gradient(Z, checked), expected[1], atol=1e-15)


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
def test_one_hot_matrix_equals_indices(loss):
    Z, y = problem(12)
    values, grad = loss.loss_gradient(Z, np.eye(6)[y])
    np.testing.assert_array_equal(values, loss.loss(Z, y))
    np.testing.assert_array_equal(grad, loss.gradient(Z, y))
    # and through the unchecked path, where the matrix is not compressed
    values, grad = loss.loss_gradient(Z, np.eye(6)[y], check=False)
    np.testing.assert_allclose(values, loss.loss(Z, y), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(grad, loss.gradient(Z, y), atol=1e-15)


def test_cached_target_constants_follow_alpha():
    Z, Q = problem(13, kind="proportions")
    t = check_target(Q, *Z.shape)
    for alpha in (1.0, 1.5, 1.3, 2.0, 1.5):
        np.testing.assert_allclose(
            EntmaxLoss(alpha).loss(Z, t), EntmaxLoss(alpha).loss(Z, Q), rtol=1e-14, atol=1e-15
        )


def test_the_caller_arrays_are_not_modified():
    Z, Q = problem(14, kind="proportions")
    Z0, Q0 = Z.copy(), Q.copy()
    for loss in LOSSES:
        loss.loss_gradient(Z, Q)
        loss.predict_proba(Z)
    np.testing.assert_array_equal(Z, Z0)
    np.testing.assert_array_equal(Q, Q0)


def test_parameters_are_validated():
    with pytest.raises(ValueError, match="k must be at least 1"):
        SparseSoftmaxLoss(0)
    for bad in (2.5, True, "3"):
        with pytest.raises(TypeError, match="k must be an integer"):
            SparseSoftmaxLoss(bad)
    with pytest.raises(ValueError, match="alpha"):
        EntmaxLoss(0.9)
    with pytest.raises(TypeError, match="alpha"):
        EntmaxLoss("1.5")
    assert SparseSoftmaxLoss(np.int64(3)).k == 3
    assert repr(SparseSoftmaxLoss(3)) == "SparseSoftmaxLoss(k=3)"
    assert repr(EntmaxLoss(1.5)) == "EntmaxLoss(alpha=1.5)"
    assert repr(SparsemaxLoss()) == "SparsemaxLoss()"


def test_a_new_loss_is_one_subclass():
    """Softmax with temperature 2: only the mapping and the regulariser are written."""

    class HalfSoftmaxLoss(FenchelYoungLoss):
        def predict_proba(self, Z):
            E = np.exp(np.asarray(Z) / 2)
            return E / E.sum(axis=1, keepdims=True)

        def omega(self, P):
            logP = np.log(P, where=P > 0, out=np.zeros_like(P))
            return 2 * np.einsum("ij,ij->i", P, logP)

    Z, y = problem(15)
    loss = HalfSoftmaxLoss()
    values, grad = loss.loss_gradient(Z, y)
    np.testing.assert_allclose(values, 2 * softmax_loss(Z / 2, y), rtol=1e-13)
    np.testing.assert_allclose(grad, SoftmaxLoss().gradient(Z / 2, y), atol=1e-15)
    with pytest.raises(ValueError, match="class index 9"):
        loss.loss(Z, np.full(40, 9))
