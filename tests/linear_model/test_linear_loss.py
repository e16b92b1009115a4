"""LinearModelLoss and the L-BFGS driver."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import approx_fprime
from sklearn.exceptions import ConvergenceWarning

from sksparsemax.linear_model._linear_loss import LinearModelLoss
from sksparsemax.linear_model._solver import minimize_lbfgs
from sksparsemax.losses import (
    EntmaxLoss,
    SoftmaxLoss,
    SparsemaxLoss,
    SparseSoftmaxLoss,
    check_target,
)


class StandInSoftmax:
    """A loss object written in the test: only what LinearModelLoss uses."""

    def __init__(self, ref):
        self.ref = ref

    def loss(self, Z, target):
        return self.ref.softmax_loss_grad(Z, target)[0]

    def loss_gradient(self, Z, target):
        return self.ref.softmax_loss_grad(Z, target)


def _data(n=30, d=4, K=3, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0
        X = sp.csr_matrix(X)
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    sw = rng.uniform(0.2, 3.0, size=n)
    return X, y, sw


def _to_lib(f_ref, theta, K, d, fit_intercept):
    W, b = f_ref.unpack(theta)
    return LinearModelLoss(None, fit_intercept).pack(W, b if fit_intercept else None)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_objective_matches_independent_reference(ref, fit_intercept, weighted):
    X, y, sw = _data()
    sw = sw if weighted else None
    n, d = X.shape
    K, C = 3, 0.7
    S = n if sw is None else sw.sum()
    rng = np.random.default_rng(1)
    f_ref = ref.objective(ref.sparsemax_loss_grad, X, y, K, C, sw, fit_intercept)
    theta = rng.normal(size=f_ref.n_theta)
    lml = LinearModelLoss(SparsemaxLoss(), fit_intercept)
    w = _to_lib(f_ref, theta, K, d, fit_intercept)
    target = check_target(y, n, K)
    f, g = lml.loss_gradient(w, X, target, K, sw, 1.0 / (C * S))
    f_expected, g_ref = f_ref(theta)
    assert f == pytest.approx(f_expected, rel=1e-12)
    # Map the reference gradient to the library's packing.
    gW, gb = f_ref.unpack(g_ref)
    np.testing.assert_allclose(g, lml.pack(gW, gb), rtol=1e-10, atol=1e-12)
    assert lml.loss(w, X, target, K, sw, 1.0 / (C * S)) == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(lml.gradient(w, X, target, K, sw, 1.0 / (C * S)), g)


def test_stand_in_loss_object(ref):
    """The layer only needs loss/loss_gradient of raw scores (duck typing)."""
    X, y, sw = _data(seed=3)
    n, d = X.shape
    K, C = 3, 2.0
    f_ref = ref.objective(ref.softmax_loss_grad, X, y, K, C, sw)
    theta = np.random.default_rng(0).normal(size=f_ref.n_theta)
    lml = LinearModelLoss(StandInSoftmax(ref), True)
    f, g = lml.loss_gradient(_to_lib(f_ref, theta, K, d, True), X, y, K, sw, 1 / (C * sw.sum()))
    f_expected, g_ref = f_ref(theta)
    assert f == pytest.approx(f_expected, rel=1e-12)
    np.testing.assert_allclose(g, lml.pack(*f_ref.unpack(g_ref)), rtol=1e-10)


@pytest.mark.parametrize(
    "base_loss",
    [SparsemaxLoss(), SoftmaxLoss(), EntmaxLoss(1.5), EntmaxLoss(1.3), SparseSoftmaxLoss(2)],
    ids=repr,
)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("proportions", [False, True])
def test_gradient_finite_differences(base_loss, sparse, proportions):
    """Full objective (intercept, sample weights, L2) vs central differences."""
    X, y, sw = _data(n=25, d=4, K=4, seed=5, sparse=sparse)
    n, d = X.shape
    K = 4
    rng = np.random.default_rng(2)
    if proportions:
        Q = rng.random((n, K)) * (rng.random((n, K)) < 0.6)
        Q[np.arange(n), rng.integers(0, K, n)] += 0.5
        target = check_target(Q / Q.sum(axis=1, keepdims=True), n, K)
    else:
        target = check_target(y, n, K)
    lml = LinearModelLoss(base_loss, True)
    w = rng.normal(scale=0.7, size=lml.n_coef(K, d))
    l2 = 0.3
    _, g = lml.loss_gradient(w, X, target, K, sw, l2)

    def f(v):
        return lml.loss(v, X, target, K, sw, l2)

    eps = 1e-6
    g_fd = np.array(
        [(f(w + eps * e) - f(w - eps * e)) / (2 * eps) for e in np.eye(w.size)]
    )
    # The top-k loss has kinks; random scores are away from them almost surely.
    np.testing.assert_allclose(g, g_fd, rtol=1e-5, atol=1e-7)
    # scipy's forward differences agree too (coarser).
    np.testing.assert_allclose(g, approx_fprime(w, f, 1e-7), rtol=1e-3, atol=1e-5)


def test_float32_scores_and_float64_gradient():
    X, y, sw = _data(n=40, d=5, K=3, seed=7)
    lml = LinearModelLoss(SparsemaxLoss(), True)
    target = check_target(y, 40, 3)
    w = np.random.default_rng(0).normal(size=lml.n_coef(3, 5))
    Z32 = lml.raw_prediction(w, X.astype(np.float32), 3)
    assert Z32.dtype == np.float32
    f32, g32 = lml.loss_gradient(w, X.astype(np.float32), target, 3, sw, 0.1)
    f64, g64 = lml.loss_gradient(w, X, target, 3, sw, 0.1)
    assert g32.dtype == np.float64 and isinstance(f32, float)
    assert f32 == pytest.approx(f64, rel=1e-5)
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5)


class _NoDensify(sp.csr_matrix):
    def toarray(self, *args, **kwargs):
        raise AssertionError("X was densified")

    todense = toarray


def test_sparse_X_is_never_densified():
    X, y, sw = _data(sparse=True)
    Xs = _NoDensify(X)
    lml = LinearModelLoss(SparsemaxLoss(), True)
    target = check_target(y, X.shape[0], 3)
    w = np.random.default_rng(0).normal(size=lml.n_coef(3, X.shape[1]))
    f, g = lml.loss_gradient(w, Xs, target, 3, sw, 0.1)
    f_dense, g_dense = lml.loss_gradient(w, X.toarray(), target, 3, sw, 0.1)
    assert f == pytest.approx(f_dense, rel=1e-12)
    np.testing.assert_allclose(g, g_dense, rtol=1e-12)
    f_csc, g_csc = lml.loss_gradient(w, sp.csc_matrix(X), target, 3, sw, 0.1)
    np.testing.assert_allclose(g_csc, g_dense, rtol=1e-12)


def _quadratic(w, A, b):
    r = A @ w - b
    return 0.5 * r @ r, A.T @ r


def test_lbfgs_driver_converges_and_counts_iterations():
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(20, 5)), rng.normal(size=20)
    w, f, n_iter = minimize_lbfgs(
        _quadratic, np.zeros(5), args=(A, b), max_iter=100, tol=1e-10
    )
    w_ls = np.linalg.lstsq(A, b, rcond=None)[0]
    np.testing.assert_allclose(w, w_ls, rtol=1e-6, atol=1e-8)
    assert f == pytest.approx(_quadratic(w_ls, A, b)[0])
    assert 1 <= n_iter < 100


def test_lbfgs_driver_warns_on_non_convergence_and_reports_progress(capsys):
    rng = np.random.default_rng(0)
    A, b = rng.normal(size=(20, 8)), rng.normal(size=20)
    with pytest.warns(ConvergenceWarning, match=r"(?s)after 2 iteration.*max_iter=2.*extra"):
        _, _, n_iter = minimize_lbfgs(
            _quadratic, np.zeros(8), args=(A, b), max_iter=2, tol=1e-12,
            verbose=10, name="Test", extra_warning_msg="extra",
        )
    assert n_iter == 2
    err = capsys.readouterr().err
    assert "[Test] iteration     1  objective" in err
    assert "[Test] stopped after 2 iteration(s)" in err
