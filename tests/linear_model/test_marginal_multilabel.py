"""MarginalMultiLabel: per-label marginals, against independent references.

- ``loss="softmax"`` is one-vs-rest logistic regression: the coefficients of
  ``OneVsRestClassifier(LogisticRegression(C))`` (same objective scaling);
- ``loss="sparsemax"``: each label minimised on its own by scipy's L-BFGS on
  the modified Huber objective written here from its closed form;
- scikit-learn's multi-label checks run in test_estimator_checks.py with no
  expected failure.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.datasets import make_multilabel_classification
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

from sksparsemax.linear_model import MarginalMultiLabel


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(
        n_samples=240, n_features=8, n_classes=4, random_state=0
    )
    return StandardScaler().fit_transform(X), Y


def _huber_label(X, y, C):
    """One label's sparsemax marginal model, by scipy: the reference."""
    n, d = X.shape

    def f(w):
        z = X @ w[:d] + w[d]
        conj = np.where(z <= -1, 0.0, np.where(z >= 1, z, (z + 1) ** 2 / 4))
        p = np.clip((z + 1) / 2, 0, 1)
        value = np.mean(conj - y * z) + w[:d] @ w[:d] / (2 * C * n)
        g = p - y
        grad = np.r_[X.T @ g / n + w[:d] / (C * n), g.mean()]
        return value, grad

    res = minimize(f, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
    return res.x[:d], res.x[d]


def test_sparsemax_equals_one_fit_per_label(data):
    X, Y = data
    est = MarginalMultiLabel(C=0.5, tol=1e-10, max_iter=2000).fit(X, Y)
    for j in range(Y.shape[1]):
        w, b = _huber_label(X, Y[:, j].astype(float), 0.5)
        np.testing.assert_allclose(est.coef_[j], w, rtol=0, atol=1e-6)
        np.testing.assert_allclose(est.intercept_[j], b, rtol=0, atol=1e-6)


def test_softmax_is_one_vs_rest_logistic_regression(data):
    X, Y = data
    est = MarginalMultiLabel(C=0.3, loss="softmax", tol=1e-10, max_iter=2000).fit(X, Y)
    ovr = OneVsRestClassifier(LogisticRegression(C=0.3, tol=1e-12, max_iter=10000)).fit(X, Y)
    W = np.vstack([e.coef_ for e in ovr.estimators_])
    b = np.array([e.intercept_[0] for e in ovr.estimators_])
    np.testing.assert_allclose(est.coef_, W, rtol=0, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, b, rtol=0, atol=1e-6)
    np.testing.assert_allclose(est.predict_marginals(X), ovr.predict_proba(X), atol=1e-6)
    np.testing.assert_array_equal(est.predict(X), ovr.predict(X))


def test_predictions_are_consistent_and_exact(data):
    X, Y = data
    est = MarginalMultiLabel().fit(X, Y)
    P = est.predict_marginals(X)
    assert P.min() == 0.0 and P.max() == 1.0  # exact 0s and 1s
    assert not hasattr(est, "decision_function")  # see the class Notes
    Z = X @ est.coef_.T + est.intercept_
    np.testing.assert_allclose(P, np.clip((Z + 1) / 2, 0, 1), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(est.predict(X), (Z > 0).astype(int))
    proba = est.predict_proba(X)
    assert isinstance(proba, list) and len(proba) == Y.shape[1]
    for j, pj in enumerate(proba):
        np.testing.assert_array_equal(pj[:, 1], P[:, j])
        np.testing.assert_allclose(pj.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    log = est.predict_log_proba(X)
    assert np.isneginf(log[0]).any() or np.isneginf(np.concatenate(log)).any()


def test_sample_weight_equals_repeated_rows(data):
    X, Y = data
    rng = np.random.default_rng(0)
    sw = rng.integers(0, 3, X.shape[0])
    a = MarginalMultiLabel(tol=1e-10, max_iter=2000).fit(X, Y, sample_weight=sw)
    rep = np.repeat(np.arange(X.shape[0]), sw)
    b = MarginalMultiLabel(tol=1e-10, max_iter=2000).fit(X[rep], Y[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-6)


def test_sparse_input_and_marginal_targets(data):
    X, Y = data
    dense = MarginalMultiLabel(tol=1e-10, max_iter=2000).fit(X, Y)
    csr = MarginalMultiLabel(tol=1e-10, max_iter=2000).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=0, atol=1e-7)
    soft = np.clip(Y * 0.8 + 0.1, 0, 1)  # marginal targets in (0, 1)
    est = MarginalMultiLabel(tol=1e-10, max_iter=2000).fit(X, soft)
    for j in range(Y.shape[1]):
        w, _ = _huber_label(X, soft[:, j], 1.0)
        np.testing.assert_allclose(est.coef_[j], w, rtol=0, atol=1e-6)


def test_a_1d_y_is_the_multiclass_model_of_the_loss(data):
    X, _ = data
    from sksparsemax.linear_model import FenchelYoungClassifier

    rng = np.random.default_rng(1)
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, X.shape[0])]
    for loss in ("sparsemax", "softmax"):
        est = MarginalMultiLabel(loss=loss, tol=1e-10, max_iter=2000).fit(X, y)
        ref = FenchelYoungClassifier(loss=loss, tol=1e-10, max_iter=2000).fit(X, y)
        np.testing.assert_allclose(est.coef_, ref.coef_, rtol=0, atol=1e-8)
        np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-8)
        np.testing.assert_array_equal(est.predict(X), ref.predict(X))
        assert list(est.classes_) == ["a", "b", "c"]


def test_dataframe_labels_and_errors(data):
    pd = pytest.importorskip("pandas")
    X, Y = data
    names = ["sports", "music", "news", "art"]
    est = MarginalMultiLabel().fit(X, pd.DataFrame(Y, columns=names))
    assert list(est.classes_) == names
    bad = Y.astype(float)
    bad[3, 2] = 2.0
    with pytest.raises(ValueError, match=r"Y\[3, 2\] = 2.0"):
        MarginalMultiLabel().fit(X, bad)
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN|Y\\[3, 2\\] = nan"):
        MarginalMultiLabel().fit(X, bad)


def test_every_loss_gives_marginals(data):
    X, Y = data
    from sksparsemax.losses import loss_names

    for name in loss_names():
        if name == "budget_sparsemax":  # rows sum to the budget: refused
            with pytest.raises(ValueError, match="summing to one"):
                MarginalMultiLabel(loss=name).fit(X, Y)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = MarginalMultiLabel(loss=name).fit(X, Y)
        P = est.predict_marginals(X)
        assert P.shape == Y.shape and P.min() >= 0 and P.max() <= 1, name
        # a label is predicted iff its marginal is above 1/2
        np.testing.assert_array_equal(est.predict(X), (P > 0.5).astype(int), err_msg=name)
