"""One alpha per slice for ``entmax_bisect``, ``entmax_jvp`` and the entmax loss.

As in the ``entmax`` package, ``alpha`` may be an array with one value per
slice: of the batch shape, or broadcastable to the shape of ``z`` with the
distribution axis of length 1. The reference is the library itself called
once per slice at that slice's alpha: on NumPy input the rows must be
bitwise equal (on every backend: the module runs once per backend), on
other array libraries equal to rounding; the ``entmax`` package (PyTorch) is
a second, independent reference where its bisection is exact.
"""

import numpy as np
import pytest

from sksparsemax.losses import EntmaxLoss, entmax_loss
from sksparsemax.transforms import entmax_bisect, entmax_jvp

ALPHAS = np.array([1.0, 1.05, 1.3, 1.5, 2.0, 2.5, 3.0, 7.0, 20.0, 60.0])


def _scores(n=120, K=9, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, K)) * rng.choice([0.01, 0.3, 3.0, 30.0], (n, 1))
    Z[::7, 2] = -np.inf  # masks
    Z[3] = 0.0  # all tied
    Z[5, :4] = 1.0  # ties at the top
    alphas = ALPHAS[rng.integers(0, ALPHAS.size, n)]
    return Z.astype(dtype), alphas


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_rows_equal_one_call_per_row_bitwise(dtype):
    Z, alphas = _scores(dtype=dtype)
    P = entmax_bisect(Z, alphas[:, None])
    assert P.dtype == dtype
    for i in range(Z.shape[0]):
        np.testing.assert_array_equal(P[i], entmax_bisect(Z[i], alphas[i]), err_msg=f"row {i}")
    # the batch-shape form (n,) is the same as the keepdims form (n, 1)
    np.testing.assert_array_equal(entmax_bisect(Z, alphas), P)


def test_any_axis_and_batch_shape():
    Z, alphas = _scores(n=60)
    Z3 = Z.reshape(6, 10, 9).transpose(0, 2, 1)  # distributions along axis 1
    A3 = alphas.reshape(6, 1, 10)
    P3 = entmax_bisect(Z3, A3, axis=1)
    np.testing.assert_array_equal(P3.transpose(0, 2, 1).reshape(60, 9), entmax_bisect(Z, alphas))
    # batch shape (6, 10) for scores (6, 9, 10) along axis 1
    np.testing.assert_array_equal(entmax_bisect(Z3, alphas.reshape(6, 10), axis=1), P3)
    # broadcasting: one alpha per leading index
    A_lead = np.array([1.2, 1.5, 2.0, 3.0, 10.0, 1.0]).reshape(6, 1, 1)
    P = entmax_bisect(Z3, A_lead, axis=1)
    for b in range(6):
        np.testing.assert_array_equal(P[b], entmax_bisect(Z3[b], float(A_lead[b, 0, 0]), axis=0))


def test_equal_alphas_are_the_scalar_call():
    Z, _ = _scores(n=40)
    for a in [1.0, 1.5, 2.0, 4.0]:
        np.testing.assert_array_equal(entmax_bisect(Z, np.full((40, 1), a)), entmax_bisect(Z, a))
    np.testing.assert_array_equal(entmax_bisect(Z, np.array(3.0)), entmax_bisect(Z, 3.0))


def test_jvp_rows_equal_one_call_per_row_bitwise():
    Z, alphas = _scores()
    P = entmax_bisect(Z, alphas[:, None])
    V = np.random.default_rng(1).standard_normal(Z.shape)
    J = entmax_jvp(P, V, alphas[:, None])
    for i in range(Z.shape[0]):
        np.testing.assert_array_equal(J[i], entmax_jvp(P[i], V[i], alphas[i]), err_msg=f"row {i}")
    np.testing.assert_array_equal(entmax_jvp(P.T, V.T, alphas[None, :], axis=0), J.T)


@pytest.mark.parametrize(
    "alpha, error, match",
    [
        (np.ones(5), ValueError, r"alpha of shape \(5,\) does not fit the scores of shape \(4, 3\)"),
        (np.ones((4, 3)), ValueError, r"one broadcastable to \(4, 1\)"),
        (np.array([1.5, 0.5, 2.0, 2.0]), ValueError, r"alpha\[1\]=0.5"),
        (np.array([[1.5], [np.nan], [2.0], [2.0]]), ValueError, r"alpha\[1, 0\]=nan"),
        (np.array([1.5, np.inf, 2.0, 2.0]), ValueError, "finite numbers >= 1"),
        (np.array(["a", "b", "c", "d"]), TypeError, "dtype <U1"),
        (np.array([True, True, True, True]), TypeError, "dtype bool"),
        ([1.5, "x", 2.0, 2.0], TypeError, "array of them"),
    ],
)
def test_bad_alpha_arrays_are_refused(alpha, error, match):
    Z = np.zeros((4, 3))
    with pytest.raises(error, match=match):
        entmax_bisect(Z, alpha)
    with pytest.raises(error, match=match):
        entmax_jvp(np.full((4, 3), 1 / 3), np.ones((4, 3)), alpha)


def test_invalid_rows_are_named_with_mixed_alphas():
    Z, alphas = _scores(n=20)
    Z[13, 4] = np.nan
    with pytest.raises(ValueError, match="z contains NaN at row 13"):
        entmax_bisect(Z, alphas)


def test_agrees_with_the_entmax_package():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    entmax = pytest.importorskip("entmax", reason="the entmax package is not installed")
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((64, 7))
    # alphas where the package's threshold bisection is exact in float64
    alphas = rng.choice([1.1, 1.25, 1.5, 1.75, 2.0], 64)
    ours = entmax_bisect(Z, alphas[:, None])
    theirs = entmax.entmax_bisect(
        torch.tensor(Z), alpha=torch.tensor(alphas[:, None]), dim=-1, n_iter=200
    ).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


@pytest.mark.parametrize("lib", ["array_api_strict", "torch"])
def test_array_api_per_slice_alpha(lib):
    pytest.importorskip("array_api_compat", reason="array-api-compat is not installed")
    if lib == "torch":
        torch = pytest.importorskip("torch", reason="PyTorch is not installed")
        asarray, to_numpy = torch.asarray, lambda a: a.numpy()
    else:
        xs = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")
        asarray, to_numpy = xs.asarray, np.asarray
    Z, alphas = _scores()
    P = entmax_bisect(Z, alphas[:, None])
    Pa = to_numpy(entmax_bisect(asarray(Z), alphas[:, None]))
    np.testing.assert_allclose(Pa, P, rtol=0, atol=1e-15)
    V = np.random.default_rng(2).standard_normal(Z.shape)
    J = entmax_jvp(P, V, alphas)
    Ja = to_numpy(entmax_jvp(asarray(P), asarray(V), alphas))
    scale = np.maximum(1.0, np.abs(J).max(axis=1, keepdims=True))
    assert np.all(np.abs(Ja - J) <= 1e-13 * scale)
    if lib == "torch":  # alpha given as a tensor
        Pt = to_numpy(entmax_bisect(asarray(Z), torch.tensor(alphas[:, None])))
        np.testing.assert_array_equal(Pt, Pa)


@pytest.mark.parametrize("target", ["indices", "proportions"])
def test_loss_with_one_alpha_per_sample(target):
    Z, alphas = _scores(n=60, K=6)
    Z = np.where(np.isfinite(Z), Z, 0.0)
    rng = np.random.default_rng(4)
    if target == "indices":
        T = rng.integers(0, 6, 60)
    else:
        T = rng.dirichlet(np.ones(6), 60)
    loss = EntmaxLoss(alphas)
    value, grad = loss.loss_gradient(Z, T)
    for i, a in enumerate(alphas):
        one = EntmaxLoss(float(a))
        np.testing.assert_allclose(value[i], one.loss(Z[i : i + 1], T[i : i + 1])[0],
                                   rtol=1e-12, atol=1e-14, err_msg=f"row {i}")
        np.testing.assert_allclose(grad[i], one.gradient(Z[i : i + 1], T[i : i + 1])[0],
                                   rtol=0, atol=1e-15, err_msg=f"row {i}")
    np.testing.assert_array_equal(entmax_loss(Z, T, alpha=alphas[:, None]), loss.loss(Z, T))
    # the gradient is p - q with the rows' own mappings (of the shifted scores)
    np.testing.assert_allclose(loss.predict_proba(Z), entmax_bisect(Z, alphas, axis=1),
                               rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=r"does not fit the scores of shape \(5, 6\)"):
        loss.loss(Z[:5], T[:5])


def test_loss_gradient_matches_finite_differences_per_sample():
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((12, 5))
    alphas = np.array([1.0, 1.2, 1.5, 2.0, 2.5, 4.0] * 2)
    y = rng.integers(0, 5, 12)
    loss = EntmaxLoss(alphas)
    G = loss.gradient(Z, y)
    h = 1e-6
    for j in range(5):
        E = np.zeros_like(Z)
        E[:, j] = h
        fd = (loss.loss(Z + E, y) - loss.loss(Z - E, y)) / (2 * h)
        np.testing.assert_allclose(G[:, j], fd, rtol=0, atol=1e-7)
