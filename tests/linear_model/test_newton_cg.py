"""The Newton-CG solver: Hessian-vector products, the driver, the estimators."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_classification, make_multilabel_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from sksparsemax.linear_model import (
    EntmaxClassifier,
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)
from sksparsemax.linear_model._linear_loss import LinearModelLoss
from sksparsemax.linear_model._solver import minimize_newton_cg
from sksparsemax.losses import (
    EntmaxLoss,
    SoftmaxLoss,
    SparsemaxLoss,
    SparseSoftmaxLoss,
    check_target,
)

LOSSES = [
    SparsemaxLoss(),
    SoftmaxLoss(),
    EntmaxLoss(1.5),
    EntmaxLoss(1.3),
    EntmaxLoss(1.0),
    EntmaxLoss(2.0),
    SparseSoftmaxLoss(2),
]


def _problem(n=30, d=5, K=4, seed=0, sparse=False, proportions=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0
        X = sp.csr_matrix(X)
    if proportions:
        Q = rng.random((n, K)) * (rng.random((n, K)) < 0.6)
        Q[np.arange(n), rng.integers(0, K, n)] += 0.5
        target = check_target(Q / Q.sum(axis=1, keepdims=True), n, K)
    else:
        y = rng.integers(0, K, size=n)
        y[:K] = np.arange(K)
        target = check_target(y, n, K)
    sw = rng.uniform(0.2, 3.0, size=n)
    return X, target, sw


# -- the loss-level Hessian --------------------------------------------------


@pytest.mark.parametrize("base_loss", LOSSES, ids=repr)
def test_loss_hessian_product_is_the_jacobian_of_the_gradient(base_loss):
    rng = np.random.default_rng(0)
    n, K = 12, 5
    Z = rng.normal(scale=1.5, size=(n, K))
    y = rng.integers(0, K, size=n)
    V = rng.normal(size=(n, K))
    P = base_loss.predict_proba(Z)
    HV = base_loss.hessian_product(P, V)
    h = 1e-6
    fd = (base_loss.gradient(Z + h * V, y) - base_loss.gradient(Z - h * V, y)) / (2 * h)
    np.testing.assert_allclose(HV, fd, rtol=1e-5, atol=1e-8)
    # Symmetric: u.(H v) == v.(H u); rows of H sum to 0 (shift invariance).
    U = rng.normal(size=(n, K))
    np.testing.assert_allclose(
        np.sum(U * HV, axis=1), np.sum(V * base_loss.hessian_product(P, U), axis=1),
        rtol=1e-10, atol=1e-12,
    )
    np.testing.assert_allclose(base_loss.hessian_product(P, np.ones((n, K))), 0, atol=1e-12)


def test_loss_hessian_product_float32_and_no_dense_jacobian():
    P = SparsemaxLoss().predict_proba(np.array([[1.0, 0.2, -1.0]], dtype=np.float32))
    HV = SparsemaxLoss().hessian_product(P, np.array([[1.0, 0.0, 5.0]], dtype=np.float32))
    assert HV.dtype == np.float32
    np.testing.assert_allclose(HV, [[0.5, -0.5, 0.0]])


# -- the full objective's Hessian-vector product -----------------------------


@pytest.mark.parametrize("base_loss", LOSSES, ids=repr)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["b", "no_b"])
@pytest.mark.parametrize("weighted", [False, True], ids=["sw1", "sw"])
def test_hessian_product_finite_differences(base_loss, sparse, fit_intercept, weighted):
    """H v of the full objective vs central differences of its gradient."""
    X, target, sw = _problem(sparse=sparse, seed=3)
    sw = sw if weighted else None
    n, d = X.shape
    K = 4
    lml = LinearModelLoss(base_loss, fit_intercept)
    rng = np.random.default_rng(1)
    w = rng.normal(scale=0.7, size=lml.n_coef(K, d))
    l2 = 0.3
    f, g, hessp = lml.loss_gradient_hessian_product(w, X, target, K, sw, l2)
    f_ref, g_ref = lml.loss_gradient(w, X, target, K, sw, l2)
    assert f == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
    g2, hessp2 = lml.gradient_hessian_product(w, X, target, K, sw, l2)
    np.testing.assert_allclose(g2, g_ref, rtol=1e-12, atol=1e-15)
    h = 1e-6
    # Random directions and every coordinate direction (so, the full Hessian).
    directions = [rng.normal(size=w.size) for _ in range(3)] + list(np.eye(w.size))
    for v in directions:
        Hv = hessp(v)
        fd = (
            lml.gradient(w + h * v, X, target, K, sw, l2)
            - lml.gradient(w - h * v, X, target, K, sw, l2)
        ) / (2 * h)
        # Random scores are away from the kinks (support changes) almost surely.
        np.testing.assert_allclose(Hv, fd, rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(hessp2(v), Hv, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("base_loss", [SparsemaxLoss(), EntmaxLoss(1.5)], ids=repr)
def test_hessian_product_label_proportions(base_loss):
    X, target, sw = _problem(proportions=True, seed=4, sparse=True)
    K, d = 4, X.shape[1]
    lml = LinearModelLoss(base_loss, True)
    w = np.random.default_rng(2).normal(scale=0.7, size=lml.n_coef(K, d))
    _, _, hessp = lml.loss_gradient_hessian_product(w, X, target, K, sw, 0.1)
    for v in np.eye(w.size):
        fd = (
            lml.gradient(w + 1e-6 * v, X, target, K, sw, 0.1)
            - lml.gradient(w - 1e-6 * v, X, target, K, sw, 0.1)
        ) / 2e-6
        np.testing.assert_allclose(hessp(v), fd, rtol=1e-5, atol=1e-8)


def test_hessian_product_float32_and_score_reuse():
    X, target, sw = _problem(seed=6)
    K, d = 4, X.shape[1]
    lml = LinearModelLoss(SparsemaxLoss(), True)
    w = np.random.default_rng(3).normal(scale=0.5, size=lml.n_coef(K, d))
    v = np.random.default_rng(4).normal(size=w.size)
    f64, g64, h64 = lml.loss_gradient_hessian_product(w, X, target, K, sw, 0.2)
    lml32 = LinearModelLoss(SparsemaxLoss(), True)
    f32, g32, h32 = lml32.loss_gradient_hessian_product(
        w, X.astype(np.float32), target, K, sw.astype(np.float32), 0.2
    )
    assert g32.dtype == np.float64 and h32(v).dtype == np.float64
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(h32(v), h64(v), rtol=1e-4, atol=1e-6)
    # A line search's loss() at the same coef: its scores are reused, and the
    # result is the same as from scratch.
    assert lml.loss(w, X, target, K, sw, 0.2) == pytest.approx(f64, rel=1e-14)
    f_again, g_again, h_again = lml.loss_gradient_hessian_product(w, X, target, K, sw, 0.2)
    assert f_again == pytest.approx(f64, rel=1e-14)
    np.testing.assert_allclose(g_again, g64, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(h_again(v), h64(v), rtol=1e-13, atol=1e-16)
    # ... but not at another coef.
    lml.loss(w + 1.0, X, target, K, sw, 0.2)
    _, g_other, _ = lml.loss_gradient_hessian_product(w, X, target, K, sw, 0.2)
    np.testing.assert_allclose(g_other, g64, rtol=1e-13, atol=1e-16)


def test_loss_without_hessian_is_rejected():
    class NoHessian:
        def loss_gradient(self, Z, target):  # pragma: no cover - never called
            raise AssertionError

    X, target, _ = _problem()
    lml = LinearModelLoss(NoHessian(), True)
    with pytest.raises(TypeError, match="hessian_product"):
        lml.loss_gradient_hessian_product(np.zeros(lml.n_coef(4, 5)), X, target, 4)


# -- the driver ----------------------------------------------------------------


def test_newton_cg_driver_on_a_quadratic_and_warnings(capsys):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 10))
    H = A.T @ A + 0.1 * np.eye(10)
    c = rng.normal(size=10)

    def func(w):
        return 0.5 * w @ H @ w - c @ w

    def grad_hess(w):
        return func(w), H @ w - c, lambda v: H @ v

    w, f, n_iter = minimize_newton_cg(grad_hess, func, np.zeros(10), max_iter=50, tol=1e-10)
    np.testing.assert_allclose(w, np.linalg.solve(H, c), rtol=1e-8)
    assert 1 <= n_iter <= 10
    with pytest.warns(ConvergenceWarning, match=r"(?s)after 1 iteration.*max_iter=1"):
        minimize_newton_cg(
            grad_hess, func, np.zeros(10), max_iter=1, tol=1e-14, max_inner=2,
            name="Quad", verbose=1,
        )
    err = capsys.readouterr().err
    assert "[Quad] stopped after 1 Newton iteration(s)" in err


# -- the estimators: newton-cg and lbfgs reach the same optimum --------------


def _datasets():
    X, y = make_classification(
        n_samples=150, n_features=8, n_informative=5, n_redundant=0,
        n_classes=4, n_clusters_per_class=1, random_state=0,
    )
    Xb, yb = make_classification(n_samples=100, n_features=5, random_state=1)
    rng = np.random.default_rng(2)
    Xs = sp.random(200, 60, density=0.1, format="csr", random_state=3)
    ys = np.asarray(Xs[:, :5].argmax(axis=1)).ravel() % 3
    return {
        "dense4": (StandardScaler().fit_transform(X), y),
        "binary": (StandardScaler().fit_transform(Xb), yb),
        "sparse3": (Xs, ys),
        "weighted": (StandardScaler().fit_transform(X), y, rng.uniform(0.1, 3, 150)),
    }


DATASETS = _datasets()

ESTIMATORS = [
    SparsemaxClassifier(),
    EntmaxClassifier(alpha=1.5),
    EntmaxClassifier(alpha=1.3),
    SparseSoftmaxClassifier(k=3),
    SparseSoftmaxClassifier(k=2),
]


def _objective(est, X, target, sample_weight=None):
    """The estimator's objective at its fitted coefficients."""
    n_classes = est.coef_.shape[0]
    lml = LinearModelLoss(est._make_loss(n_classes), est.fit_intercept)
    w = lml.pack(est.coef_.astype(np.float64), est.intercept_)
    sw_sum = X.shape[0] if sample_weight is None else float(np.sum(sample_weight))
    return lml.loss(
        w, X, check_target(target, X.shape[0], n_classes), n_classes,
        sample_weight, 1.0 / (est.C * sw_sum),
    )


def _fit_both(est, X, y, sw=None, **params):
    params = {"tol": 1e-9, "max_iter": 3000, **params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lb = clone(est).set_params(solver="lbfgs", **params).fit(X, y, sample_weight=sw)
        nc = clone(est).set_params(solver="newton-cg", **params).fit(X, y, sample_weight=sw)
    return lb, nc


@pytest.mark.parametrize("name", list(DATASETS))
@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_newton_cg_and_lbfgs_reach_the_same_objective(est, name):
    X, y, *sw = DATASETS[name]
    sw = sw[0] if sw else None
    lb, nc = _fit_both(est, X, y, sw)
    y_ind = np.searchsorted(lb.classes_, y)
    f_lb, f_nc = _objective(lb, X, y_ind, sw), _objective(nc, X, y_ind, sw)
    kinks = isinstance(est, SparseSoftmaxClassifier) and est.k < lb.classes_.shape[0]
    # On a kink of the top-k loss neither solver meets tol (L-BFGS stops at
    # max_iter, on ftol or on its stall rule), and each stops within a few
    # 1e-5 of the optimum (relative): where exactly depends on rounding (on
    # the NumPy backend L-BFGS stalls 3.6e-5 above Newton-CG on "weighted").
    assert f_nc == pytest.approx(f_lb, rel=1e-4 if kinks else 1e-6)
    if not kinks:
        # Smooth (or piecewise twice differentiable) objectives: the same model.
        np.testing.assert_allclose(nc.coef_, lb.coef_, atol=1e-4)
        np.testing.assert_allclose(nc.predict_proba(X), lb.predict_proba(X), atol=1e-5)
        np.testing.assert_array_equal(nc.predict(X), lb.predict(X))
        assert nc.n_iter_ < lb.n_iter_  # Newton takes few iterations
    else:
        assert np.mean(nc.predict(X) == lb.predict(X)) >= 0.97


@pytest.mark.parametrize("loss", ["sparsemax", "softmax"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_multilabel_newton_cg_matches_lbfgs(loss, sparse):
    X, Y = make_multilabel_classification(
        n_samples=150, n_features=12, n_classes=6, allow_unlabeled=False, random_state=0
    )
    X = StandardScaler(with_mean=not sparse).fit_transform(sp.csr_matrix(X) if sparse else X)
    est = SparsemaxMultiLabel(loss=loss, C=0.5)
    lb, nc = _fit_both(est, X, Y)
    Q = Y / Y.sum(axis=1, keepdims=True)
    assert _objective(nc, X, Q) == pytest.approx(_objective(lb, X, Q), rel=1e-6)
    np.testing.assert_allclose(nc.coef_, lb.coef_, atol=1e-4)
    np.testing.assert_allclose(nc.predict_proba(X), lb.predict_proba(X), atol=1e-5)
    np.testing.assert_array_equal(nc.predict(X), lb.predict(X))


def test_sparse_softmax_k_ge_K_matches_logistic_regression_newton_cg():
    X, y = DATASETS["dense4"]
    lr = LogisticRegression(C=0.5, solver="newton-cg", tol=1e-10, max_iter=1000).fit(X, y)
    clf = SparseSoftmaxClassifier(
        k=4, C=0.5, solver="newton-cg", tol=1e-10, max_iter=1000
    ).fit(X, y)
    np.testing.assert_allclose(clf.coef_, lr.coef_, atol=1e-5)
    np.testing.assert_allclose(clf.intercept_, lr.intercept_, atol=1e-5)
    np.testing.assert_allclose(clf.predict_proba(X), lr.predict_proba(X), atol=1e-6)
    assert clf.n_iter_ <= 2 * lr.n_iter_[0] + 2


@pytest.mark.parametrize(
    "est", [SparsemaxClassifier(), EntmaxClassifier(alpha=1.5), SparseSoftmaxClassifier(k=2)],
    ids=repr,
)
def test_newton_cg_float32_and_sparse(est):
    X, y = DATASETS["dense4"]
    est = clone(est).set_params(solver="newton-cg", tol=1e-6, max_iter=500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        c64 = clone(est).fit(X, y)
        c32 = clone(est).fit(X.astype(np.float32), y)
        Xs = X.copy()
        Xs[np.abs(Xs) < 0.7] = 0
        dense = clone(est).set_params(tol=1e-8).fit(Xs, y)
        csr = clone(est).set_params(tol=1e-8).fit(sp.csr_matrix(Xs), y)
        csc32 = clone(est).fit(sp.csc_matrix(Xs, dtype=np.float32), y)
    assert c32.coef_.dtype == np.float32 and c32.intercept_.dtype == np.float32
    atol = 2e-2 if isinstance(est, SparseSoftmaxClassifier) else 2e-3
    np.testing.assert_allclose(c32.coef_, c64.coef_, atol=atol)
    assert np.mean(c32.predict(X) == c64.predict(X)) > 0.97
    # Top-k (k < K): kinks, neither solver meets tol; the same model roughly.
    np.testing.assert_allclose(csr.coef_, dense.coef_, atol=atol if atol > 2e-3 else 1e-7)
    assert csc32.coef_.dtype == np.float32
    assert np.mean(csc32.predict(Xs) == dense.predict(Xs)) > 0.97


@pytest.mark.parametrize("est", [SparsemaxClassifier(), EntmaxClassifier(alpha=1.5)], ids=repr)
def test_newton_cg_warm_start(est):
    X, y = DATASETS["dense4"]
    est = clone(est).set_params(solver="newton-cg", tol=1e-8)
    full = clone(est).set_params(max_iter=500).fit(X, y)
    clf = clone(est).set_params(max_iter=2, warm_start=True)
    with pytest.warns(ConvergenceWarning, match="Newton-CG failed to converge after 2"):
        clf.fit(X, y)
    assert clf.n_iter_ == 2
    clf.set_params(max_iter=500).fit(X, y)
    np.testing.assert_allclose(clf.coef_, full.coef_, atol=1e-6)
    assert clf.n_iter_ < full.n_iter_
    assert clf.fit(X, y).n_iter_ <= 1  # at the optimum already


def test_newton_cg_verbose_and_parameter_validation(capsys):
    X, y = DATASETS["dense4"]
    SparsemaxClassifier(solver="newton-cg", verbose=10).fit(X, y)
    err = capsys.readouterr().err
    assert re.search(r"\[SparsemaxClassifier\] iteration +1 +objective", err)
    assert "Hessian-vector products" in err
    with pytest.raises(ValueError, match="solver"):
        SparsemaxClassifier(solver="sag").fit(X, y)
    for cls in (SparsemaxClassifier, EntmaxClassifier, SparseSoftmaxClassifier,
                SparsemaxMultiLabel):
        assert cls().get_params()["solver"] == "lbfgs"
        assert "solver" in cls._parameter_constraints
        assert 'solver : {"lbfgs", "newton-cg"}' in cls.__doc__


def test_sparse_softmax_warm_up_with_newton_cg():
    X, y = DATASETS["dense4"]
    clf = SparseSoftmaxClassifier(k=2, solver="newton-cg", tol=1e-6, max_iter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    assert clf.n_iter_ > 5  # 5 softmax warm-up iterations + Newton iterations
    lb = clone(clf).set_params(solver="lbfgs", max_iter=2000, tol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lb.fit(X, y)
    assert clf.score(X, y) >= lb.score(X, y) - 0.02
