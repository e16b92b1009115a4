"""The solver fast path ``loss_gradient(Z, target, out=...)``.

With ``out`` the gradient is written into the given buffer, which may be the
scores themselves. It must give the values of the ordinary path for every
loss, target kind, dtype and ``-inf`` mask, validate ``out`` and leave ``Z``
alone on errors or when ``out`` is another array.
"""

import warnings

import numpy as np
import pytest

from sksparsemax.losses import (
    FenchelYoungLoss,
    EntmaxLoss,
    SoftmaxLoss,
    SparseSoftmaxLoss,
    SparsemaxLoss,
    check_target,
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


def problem(seed, kind, dtype, masked, n=40, K=6):
    rng = np.random.default_rng(seed)
    Z = (2.0 * rng.standard_normal((n, K))).astype(dtype)
    if kind == "indices":
        target = rng.integers(0, K, size=n)
        Q = np.eye(K)[target]
    else:
        Q = rng.dirichlet(np.ones(K), size=n)
        Q[Q < 0.12] = 0
        Q[np.arange(n), rng.integers(0, K, size=n)] += 0.2
        Q /= Q.sum(axis=1, keepdims=True)
        target = Q
    if masked:  # -inf on up to 2 classes of zero target probability per row
        mask = (rng.random(Z.shape) < 0.35) & (Q == 0)
        mask &= np.cumsum(mask, axis=1) <= 2
        Z[mask] = -np.inf
    return Z, target


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", ["indices", "proportions"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("masked", [False, True], ids=["finite", "masked"])
def test_out_path_equals_the_ordinary_path(loss, kind, dtype, masked):
    Z, target = problem(0, kind, dtype, masked)
    target = check_target(target, *Z.shape)
    values, grad = loss.loss_gradient(Z, target)

    # a separate buffer: Z is left as it was
    Z_before = Z.copy()
    out = np.empty_like(Z)
    values_out, grad_out = loss.loss_gradient(Z, target, out=out)
    assert grad_out is out
    np.testing.assert_array_equal(Z, Z_before)

    # in place: the scores become the gradient
    Zc = Z.copy()
    values_in, grad_in = loss.loss_gradient(Zc, target, out=Zc)
    assert grad_in is Zc and grad_in.dtype == dtype and values_in.dtype == dtype
    np.testing.assert_array_equal(values_in, values_out)
    np.testing.assert_array_equal(grad_in, grad_out)

    rtol, atol = (1e-12, 1e-14) if dtype == np.float64 else (1e-5, 1e-6)
    np.testing.assert_allclose(values_in, values, rtol=rtol, atol=atol)
    np.testing.assert_allclose(grad_in, grad, rtol=rtol, atol=atol)


def test_out_path_of_a_loss_with_only_the_public_methods():
    """The default in-place hook serves a subclass that writes the two public methods only."""

    class HalfSoftmaxLoss(FenchelYoungLoss):
        def predict_proba(self, Z):
            E = np.exp(np.asarray(Z) / 2)
            return E / E.sum(axis=1, keepdims=True)

        def omega(self, P):
            logP = np.log(P, where=P > 0, out=np.zeros_like(P))
            return 2 * np.einsum("ij,ij->i", P, logP)

    Z, y = problem(1, "indices", np.float64, False)
    loss = HalfSoftmaxLoss()
    values, grad = loss.loss_gradient(Z, y)
    Zc = Z.copy()
    values_in, grad_in = loss.loss_gradient(Zc, y, out=Zc)
    assert grad_in is Zc
    np.testing.assert_array_equal(values_in, values)
    np.testing.assert_array_equal(grad_in, grad)


@pytest.mark.parametrize(
    "make_out, message",
    [
        (lambda Z: np.empty((Z.shape[0], Z.shape[1] + 1)), "shape"),
        (lambda Z: np.empty(Z.shape, dtype=np.float32), "dtype"),
        (lambda Z: np.empty(Z.shape[::-1]).T, "C-contiguous"),
        (lambda Z: list(Z), "ndarray"),
    ],
    ids=["shape", "dtype", "fortran", "list"],
)
def test_invalid_out_raises(make_out, message):
    Z, y = problem(2, "indices", np.float64, False)
    with pytest.raises(ValueError, match=message):
        SparsemaxLoss().loss_gradient(Z, y, out=make_out(Z))


def test_read_only_out_raises():
    Z, y = problem(2, "indices", np.float64, False)
    out = np.empty_like(Z)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="writeable"):
        SoftmaxLoss().loss_gradient(Z, y, out=out)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_invalid_scores_raise_and_leave_the_buffer(bad):
    Z, y = problem(3, "indices", np.float64, False)
    Z[4, 2] = bad
    Z_before = Z.copy()
    with pytest.raises(ValueError, match="row 4"):
        SparsemaxLoss().loss_gradient(Z, y, out=Z)
    np.testing.assert_array_equal(Z, Z_before)


def test_invalid_target_raises_and_leaves_the_buffer():
    Z, y = problem(3, "indices", np.float64, False)
    y[5] = 9
    Z_before = Z.copy()
    with pytest.raises(ValueError, match="class index 9"):
        EntmaxLoss(1.5).loss_gradient(Z, y, out=Z)
    np.testing.assert_array_equal(Z, Z_before)


# The numba backend computes a loss and its gradient in one fused pass per
# row for the losses with a row kernel (sksparsemax.losses._numba_engine); it
# must give the NumPy path's values, masks, errors and untouched buffers.
# Top-k: k = 3, 6, 8 take the three widths of the selection network (4, 6, 8).
COMPILED_LOSSES = [
    SparsemaxLoss(), SparseSoftmaxLoss(3), SparseSoftmaxLoss(6), SparseSoftmaxLoss(8),
    SoftmaxLoss(), EntmaxLoss(1.5),
]


@pytest.mark.parametrize("loss", COMPILED_LOSSES, ids=repr)
@pytest.mark.parametrize("kind", ["indices", "proba"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_compiled_row_kernels_match_numpy(loss, kind, dtype, masked, in_place):
    pytest.importorskip("numba")
    from sksparsemax.transforms import backend

    # K = 150: the top-k kernel's insertion path (rows too long for its
    # selection network).
    for seed, K in [(0, 6), (1, 1), (2, 40), (3, 150)]:
        Z, target = problem(seed, kind, dtype, masked, n=200, K=K)
        Z[:3] += dtype(1e6)  # huge scores: only differences matter
        Z[3, :] = 0.25  # a tie over the whole row
        if K >= 6:  # ties at the 3rd place (top-k: the lowest indices win)
            Z[4, :] = -1.0
            Z[4, [0, 2, 3, 5]] = [3.0, 2.0, 2.0, 2.0]
        with backend("numpy"):
            loss0, grad0 = loss.loss_gradient(Z, target)
        with backend("numba"):
            Zc = Z.copy()
            out = Zc if in_place else np.empty_like(Z)
            loss1, grad1 = loss.loss_gradient(Zc, target, out=out)
        assert grad1 is out and loss1.dtype == dtype
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(loss1, loss0, rtol=rtol, atol=10 * rtol)
        np.testing.assert_allclose(grad1, grad0, rtol=rtol, atol=10 * rtol)
        if not in_place:
            np.testing.assert_array_equal(Zc, Z)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("kind", ["indices", "proba"])
def test_fused_sparsemax_kernel_errors_leave_the_buffer(bad, kind):
    pytest.importorskip("numba")
    from sksparsemax.transforms import backend

    Z, target = problem(4, kind, np.float64, False)
    if bad == -np.inf:
        Z[6, :] = bad  # a row with nothing left
    else:
        Z[6, 1] = bad
    Z_before = Z.copy()
    messages = []
    for name in ("numpy", "numba"):
        with backend(name), pytest.raises(ValueError, match="row 6") as info:
            SparsemaxLoss().loss_gradient(Z, target, out=Z)
        messages.append(str(info.value))
        np.testing.assert_array_equal(Z, Z_before)
    assert messages[0] == messages[1]
