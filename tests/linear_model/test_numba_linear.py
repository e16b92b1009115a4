"""The compiled one-pass linear kernels (numba backend) against references.

* ``LinearModelLoss.loss_gradient`` through the one-pass kernel (sparsemax
  and softmax losses) equals the objective of ``conftest.objective`` (plain
  NumPy, sorted closed-form sparsemax, max-shifted log-sum-exp, its own
  packing) for every shape class of the
  kernel: rows not a multiple of its block of 4, an odd number of classes,
  one feature, weights (some zero), both target kinds, with and without
  intercept, float32 and float64 data;
* it raises the loss's error on overflowing scores, like the BLAS path;
* it is used exactly where its gate says, and fits agree with the NumPy
  backend's;
* the triangular products of the whitening equal NumPy's dense products,
  and the preconditioner gives the same map on both backends.
"""

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("numba")

from sksparsemax import SparsemaxClassifier, SparsemaxMultiLabel  # noqa: E402
from sksparsemax.linear_model import _linear_loss  # noqa: E402
from sksparsemax.linear_model._linear_loss import LinearModelLoss  # noqa: E402
from sksparsemax.linear_model._numba_linear import (  # noqa: E402
    times_lower,
    times_lower_transposed,
)
from sksparsemax.linear_model._preconditioner import GramPreconditioner  # noqa: E402
from sksparsemax.losses import (  # noqa: E402
    EntmaxLoss,
    SoftmaxLoss,
    SparsemaxLoss,
    check_target,
)
from sksparsemax.transforms import backend  # noqa: E402


def _problem(n, d, K, proportions, weighted, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if proportions:
        Q = rng.random((n, K)) * (rng.random((n, K)) < 0.6)
        Q[:, 0] += 0.05  # every row has a label
        Q /= Q.sum(axis=1, keepdims=True)
        raw = Q
    else:
        raw = rng.integers(0, K, size=n)
    sw = None
    if weighted:
        sw = rng.uniform(0.2, 3.0, size=n)
        sw[::3] = 0.0
        sw[0] = 1.0
    return X, raw, sw


LOSSES = [(SparsemaxLoss, "sparsemax_loss_grad"), (SoftmaxLoss, "softmax_loss_grad")]


@pytest.mark.parametrize("loss, reference", LOSSES, ids=["sparsemax", "softmax"])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 38])
@pytest.mark.parametrize("d, K", [(1, 2), (7, 3), (6, 4), (5, 5)])
@pytest.mark.parametrize("proportions", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_one_pass_kernel_equals_reference_objective(
    ref, loss, reference, n, d, K, proportions, weighted, fit_intercept
):
    X, raw, sw = _problem(n, d, K, proportions, weighted, seed=n + d + K)
    C = 0.7
    target = check_target(raw, n, K)
    lml = LinearModelLoss(loss(), fit_intercept)
    rng = np.random.default_rng(1)
    f_ref = ref.objective(
        getattr(ref, reference), X, raw, K, C, sample_weight=sw,
        fit_intercept=fit_intercept,
    )
    l2 = 1.0 / (C * (n if sw is None else sw.sum()))
    with backend("numba"):
        assert lml._fused_dense_kernel(X, K) is not None
        for scale in (0.3, 3.0):  # small scores (large supports), large ones
            w = scale * rng.normal(size=lml.n_coef(K, d))
            value, grad = lml.loss_gradient(w, X, target, K, sw, l2)
            W, b = lml.weight_intercept(w, K)
            value_ref, grad_ref = f_ref(f_ref.pack(W, b if fit_intercept else None))
            gW_ref, gb_ref = f_ref.unpack(grad_ref)
            gW, gb = lml.weight_intercept(grad, K)
            assert value == pytest.approx(value_ref, rel=1e-12, abs=1e-14)
            np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-14)
            if fit_intercept:
                np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("loss", [SparsemaxLoss, SoftmaxLoss], ids=repr)
@pytest.mark.parametrize("proportions", [False, True])
def test_one_pass_kernel_float32_sums_in_float64(loss, proportions):
    """float32 X is read as it is and summed in float64: equal, to float64
    rounding, to the float64 path on the same (exactly representable) data."""
    X, raw, sw = _problem(53, 9, 5, proportions, True, seed=4)
    X32 = X.astype(np.float32)
    target = check_target(raw, 53, 5)
    lml = LinearModelLoss(loss(), True)
    w = np.random.default_rng(2).normal(size=lml.n_coef(5, 9))
    with backend("numba"):
        assert lml._fused_dense_kernel(X32, 5) is not None
        f32, g32 = lml.loss_gradient(w, X32, target, 5, sw, 0.01)
    with backend("numpy"):
        f64, g64 = lml.loss_gradient(w, X32.astype(np.float64), target, 5, sw, 0.01)
    assert g32.dtype == np.float64
    assert f32 == pytest.approx(f64, rel=1e-12)
    np.testing.assert_allclose(g32, g64, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("loss", [SparsemaxLoss, SoftmaxLoss], ids=repr)
def test_one_pass_kernel_overflow_raises_the_loss_error(loss):
    X, raw, _ = _problem(9, 3, 3, False, False)
    target = check_target(raw, 9, 3)
    lml = LinearModelLoss(loss(), True)
    w = np.full(lml.n_coef(3, 3), 1e308)
    messages = []
    for name in ("numba", "numpy"):
        with backend(name), np.errstate(over="ignore"):
            with pytest.raises(ValueError, match=r"\+inf") as info:
                lml.loss_gradient(w, X, target, 3, None, 0.1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_one_pass_kernel_gate(monkeypatch):
    X = np.random.default_rng(0).normal(size=(20, 6))
    sparsemax = LinearModelLoss(SparsemaxLoss(), True)
    with backend("numba"):
        assert sparsemax._fused_dense_kernel(X, 4) is not None
        assert sparsemax._fused_dense_kernel(sp.csr_matrix(X), 4) is None
        assert sparsemax._fused_dense_kernel(np.asfortranarray(X), 4) is None
        assert LinearModelLoss(SoftmaxLoss(), True)._fused_dense_kernel(X, 4) is not None
        assert LinearModelLoss(EntmaxLoss(1.5), True)._fused_dense_kernel(X, 4) is None
        monkeypatch.setattr(_linear_loss, "MAX_FUSED_COEF", 23)
        assert sparsemax._fused_dense_kernel(X, 4) is None  # 24 weights
    with backend("numpy"):
        assert sparsemax._fused_dense_kernel(X, 4) is None


@pytest.mark.parametrize(
    "est",
    [SparsemaxClassifier(tol=1e-10, max_iter=2000),
     SparsemaxMultiLabel(tol=1e-10, max_iter=2000),
     SparsemaxMultiLabel(loss="softmax", tol=1e-10, max_iter=2000)],
    ids=["SparsemaxClassifier", "SparsemaxMultiLabel", "SparsemaxMultiLabel-softmax"],
)
def test_fits_agree_on_both_backends(est):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 12))
    X[:, 1] += 0.8 * X[:, 0]  # correlated: the full whitening is used
    if isinstance(est, SparsemaxMultiLabel):
        y = (X[:, :5] + rng.normal(size=(150, 5)) > 0.5).astype(int)
        y[y.sum(axis=1) == 0, 0] = 1
    else:
        y = np.argmax(X[:, :4] + rng.normal(size=(150, 4)), axis=1)
    sw = rng.uniform(0.5, 2.0, size=150)
    fits = []
    for name in ("numba", "numpy"):
        with backend(name):
            fits.append(est.fit(X, y, sample_weight=sw))
            fits[-1] = (fits[-1].coef_.copy(), fits[-1].intercept_.copy())
    np.testing.assert_allclose(fits[0][0], fits[1][0], atol=1e-7)
    np.testing.assert_allclose(fits[0][1], fits[1][1], atol=1e-7)


@pytest.mark.parametrize("d", [1, 3, 4, 5, 9, 34])
@pytest.mark.parametrize("K", [1, 2, 3, 6])
def test_triangular_products_equal_dense_products(d, K):
    rng = np.random.default_rng(d * 10 + K)
    T = np.tril(rng.normal(size=(d, d)))
    V = rng.normal(size=(K, d))
    out = np.full((K, d), np.nan)
    times_lower(V, T, out)
    np.testing.assert_allclose(out, V @ T, rtol=1e-12, atol=1e-12)
    out = np.full((K, d), np.nan)
    times_lower_transposed(V, T, out)
    np.testing.assert_allclose(out, V @ T.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_preconditioner_same_map_on_both_backends(fit_intercept):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 11)) @ rng.normal(size=(11, 11))  # correlated
    K = 3
    maps = []
    for name in ("numba", "numpy"):
        with backend(name):
            pre = GramPreconditioner(X, K, fit_intercept, 1e-2)
        assert pre.L is not None
        n_coef = K * (11 + int(fit_intercept))
        v = np.random.default_rng(1).normal(size=n_coef)
        g = np.random.default_rng(2).normal(size=n_coef)
        maps.append((pre.coef(v), pre.gradient(g), pre.variables(pre.coef(v))))
        np.testing.assert_allclose(maps[-1][2], v, rtol=1e-9, atol=1e-9)
    for a, b in zip(maps[0], maps[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
