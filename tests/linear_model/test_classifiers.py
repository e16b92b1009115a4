"""SparsemaxClassifier, SparseSoftmaxClassifier and EntmaxClassifier."""

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.class_weight import compute_sample_weight

from sksparsemax.linear_model import (
    EntmaxClassifier,
    SparsemaxClassifier,
    SparseSoftmaxClassifier,
)
from sksparsemax.transforms import entmax15, sparse_softmax


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=120, n_features=6, n_informative=4, n_redundant=0,
        n_classes=4, n_clusters_per_class=1, random_state=0,
    )
    return StandardScaler().fit_transform(X), y


def _tight(est, **params):
    return clone(est).set_params(**{"tol": 1e-10, "max_iter": 5000, **params})


# -- the fitted objective against an independent minimisation ---------------


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sparsemax_matches_direct_minimisation(ref, data, fit_intercept):
    X, y = data
    sw = np.random.default_rng(0).uniform(0.5, 2.0, size=y.shape[0])
    C = 0.3
    f_ref = ref.objective(ref.sparsemax_loss_grad, X, y, 4, C, sw, fit_intercept)
    theta_ref, value_ref = ref.fit_reference(f_ref)
    clf = SparsemaxClassifier(C=C, tol=1e-10, max_iter=5000, fit_intercept=fit_intercept)
    clf.fit(X, y, sample_weight=sw)
    value = f_ref(f_ref.pack(clf.coef_, clf.intercept_))[0]
    assert value == pytest.approx(value_ref, rel=1e-6)
    W_ref, b_ref = f_ref.unpack(theta_ref)
    np.testing.assert_allclose(clf.coef_, W_ref, atol=1e-4)
    # Predictions agree with the reference sparsemax of the reference scores.
    P_ref = ref.sparsemax(X @ W_ref.T + b_ref)[0]
    np.testing.assert_allclose(clf.predict_proba(X), P_ref, atol=1e-4)


def test_sparse_softmax_objective_not_worse_than_direct_minimisation(ref, data):
    """The top-k objective is non-smooth: compare objective values only."""
    X, y = data
    C = 1.0
    f_ref = ref.objective(ref.make_topk_loss_grad(2), X, y, 4, C)
    f_soft = ref.objective(ref.softmax_loss_grad, X, y, 4, C)
    theta0, _ = ref.fit_reference(f_soft)  # start off the tie, like the estimator
    from scipy.optimize import minimize

    res = minimize(f_ref, theta0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 20000, "gtol": 1e-12, "ftol": 1e-15})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = SparseSoftmaxClassifier(k=2, C=C, max_iter=2000, tol=1e-10).fit(X, y)
    value = f_ref(f_ref.pack(clf.coef_, clf.intercept_))[0]
    assert value <= res.fun * (1 + 1e-4)
    assert value >= res.fun * (1 - 1e-3)  # and it is the same problem
    P = clf.predict_proba(X)
    assert ((P > 0).sum(axis=1) <= 2).all()
    np.testing.assert_allclose(P, sparse_softmax(clf.decision_function(X), k=2), rtol=1e-6)


# -- equivalences --------------------------------------------------------------


@pytest.mark.parametrize(
    "est", [SparseSoftmaxClassifier(k=4), SparseSoftmaxClassifier(k=10), EntmaxClassifier(alpha=1)],
    ids=repr,
)
def test_softmax_cases_match_logistic_regression(data, est):
    X, y = data
    lr = LogisticRegression(C=0.5, tol=1e-10, max_iter=5000).fit(X, y)
    clf = _tight(est, C=0.5).fit(X, y)
    np.testing.assert_allclose(clf.coef_, lr.coef_, atol=1e-4)
    np.testing.assert_allclose(clf.intercept_, lr.intercept_, atol=1e-4)
    np.testing.assert_allclose(clf.predict_proba(X), lr.predict_proba(X), atol=1e-5)


def test_binary_softmax_matches_logistic_regression_at_twice_C(data):
    X, y = data
    y = (y > 1).astype(int)
    lr = LogisticRegression(C=1.0, tol=1e-10, max_iter=5000).fit(X, y)
    clf = SparseSoftmaxClassifier(k=2, C=0.5, tol=1e-10, max_iter=5000).fit(X, y)
    assert clf.coef_.shape == (2, X.shape[1])
    np.testing.assert_allclose(clf.coef_[1] - clf.coef_[0], lr.coef_[0], atol=1e-4)
    np.testing.assert_allclose(clf.decision_function(X), lr.decision_function(X), atol=1e-4)


def test_entmax_near_one_is_close_to_logistic_regression(data):
    X, y = data
    lr = LogisticRegression(C=0.5, tol=1e-10, max_iter=5000).fit(X, y)
    clf = EntmaxClassifier(alpha=1.001, C=0.5, tol=1e-8, max_iter=5000).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), lr.predict_proba(X), atol=5e-3)


def test_entmax_two_is_sparsemax(data):
    X, y = data
    sm = _tight(SparsemaxClassifier()).fit(X, y)
    em = _tight(EntmaxClassifier(alpha=2)).fit(X, y)
    np.testing.assert_allclose(em.coef_, sm.coef_, atol=1e-8)
    np.testing.assert_allclose(em.predict_proba(X), sm.predict_proba(X), atol=1e-8)
    # Bisection near alpha=2 is a different code path: close, not equal.
    em2 = EntmaxClassifier(alpha=1.999, tol=1e-8, max_iter=5000).fit(X, y)
    np.testing.assert_allclose(em2.coef_, sm.coef_, atol=2e-2)


def test_entmax15_probabilities(data):
    X, y = data
    clf = EntmaxClassifier(alpha=1.5).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), entmax15(clf.decision_function(X)), rtol=1e-12)
    assert (clf.predict_proba(X) == 0).any()


# -- fit options -------------------------------------------------------------


@pytest.mark.parametrize(
    "est", [SparsemaxClassifier(), EntmaxClassifier(alpha=1.5)], ids=repr,
)
def test_warm_start_continues(data, est):
    X, y = data
    full = _tight(est, tol=1e-8).fit(X, y)
    clf = clone(est).set_params(tol=1e-8, max_iter=5, warm_start=True)
    with pytest.warns(ConvergenceWarning):
        clf.fit(X, y)
    assert clf.n_iter_ == 5
    clf.set_params(max_iter=5000).fit(X, y)  # continues from the 5 iterations
    np.testing.assert_allclose(clf.coef_, full.coef_, atol=1e-5)
    assert clf.n_iter_ < full.n_iter_
    n_again = clf.fit(X, y).n_iter_  # restarting at the optimum: ~nothing to do
    assert n_again <= 2


def test_warm_start_needs_same_problem(data):
    X, y = data
    clf = SparsemaxClassifier(warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match="same classes and number of features"):
        clf.fit(X[:, :3], y)


@pytest.mark.parametrize(
    "est",
    [SparsemaxClassifier(), EntmaxClassifier(alpha=1.5), SparseSoftmaxClassifier(k=2)],
    ids=repr,
)
def test_float32_and_float64_agree(data, est):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        c64 = clone(est).set_params(tol=1e-6, max_iter=500).fit(X, y)
        c32 = clone(est).set_params(tol=1e-6, max_iter=500).fit(X.astype(np.float32), y)
    assert c32.coef_.dtype == np.float32 and c32.intercept_.dtype == np.float32
    assert c32.predict_proba(X.astype(np.float32)).dtype == np.float32
    assert c64.coef_.dtype == np.float64
    np.testing.assert_allclose(c32.coef_, c64.coef_, atol=2e-2 if est.__class__ is SparseSoftmaxClassifier else 2e-3)
    assert np.mean(c32.predict(X) == c64.predict(X)) > 0.97


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_and_dense_give_the_same_model(data, fmt):
    X, y = data
    X = X.copy()
    X[np.abs(X) < 0.7] = 0
    dense = SparsemaxClassifier(tol=1e-8, max_iter=1000).fit(X, y)
    Xs = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    sparse = SparsemaxClassifier(tol=1e-8, max_iter=1000).fit(Xs, y)
    # Dense X is whitened for L-BFGS (GramPreconditioner), sparse X is not:
    # two paths to one minimiser, each stopped by L-BFGS's relative-reduction
    # test (ftol = 64 eps) before tol. That pins the objective to ~1e-14
    # relative, hence the coefficients to ~sqrt(2 * 64 eps * f / l2) ~ 1e-6.
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=2e-6)
    np.testing.assert_allclose(sparse.predict_proba(Xs), dense.predict_proba(X), atol=2e-6)


@pytest.mark.parametrize(
    "est", [SparsemaxClassifier(), EntmaxClassifier(alpha=1.5)], ids=repr,
)
def test_sample_weight_is_repetition(data, est):
    X, y = data
    rng = np.random.default_rng(0)
    sw = rng.integers(0, 4, size=y.shape[0])
    weighted = _tight(est, tol=1e-8).fit(X, y, sample_weight=sw)
    repeated = _tight(est, tol=1e-8).fit(np.repeat(X, sw, axis=0), np.repeat(y, sw))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-5)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-5)


def test_class_weight_balanced_is_implied_sample_weight(data):
    X, y = data
    keep = np.r_[np.flatnonzero(y != 0), np.flatnonzero(y == 0)[:8]]  # imbalanced
    X, y = X[keep], y[keep]
    balanced = _tight(SparsemaxClassifier(class_weight="balanced")).fit(X, y)
    counts = np.bincount(y)
    implied = (len(y) / (len(counts) * counts))[y]
    weighted = _tight(SparsemaxClassifier()).fit(X, y, sample_weight=implied)
    np.testing.assert_allclose(balanced.coef_, weighted.coef_, atol=1e-7)
    cw = {0: 3.0, 1: 1.0, 2: 0.5, 3: 1.0}
    by_dict = _tight(SparsemaxClassifier(class_weight=cw)).fit(X, y, sample_weight=implied)
    by_sw = _tight(SparsemaxClassifier()).fit(
        X, y, sample_weight=implied * compute_sample_weight(cw, y)
    )
    np.testing.assert_allclose(by_dict.coef_, by_sw.coef_, atol=1e-7)
    unweighted = _tight(SparsemaxClassifier()).fit(X, y)
    assert np.abs(balanced.coef_ - unweighted.coef_).max() > 1e-2


def test_string_labels_pandas_and_pickle(data):
    X, y = data
    labels = np.array(["ant", "bee", "cat", "dog"])[y]
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    clf = SparsemaxClassifier().fit(df, pd.Series(labels))
    np.testing.assert_array_equal(clf.classes_, ["ant", "bee", "cat", "dog"])
    np.testing.assert_array_equal(clf.feature_names_in_, df.columns)
    assert set(clf.predict(df)) <= set(clf.classes_)
    assert np.mean(clf.predict(df) == labels) > 0.7
    clone_ = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone_.predict(df), clf.predict(df))
    np.testing.assert_array_equal(clone_.predict_proba(df), clf.predict_proba(df))


def test_predict_log_proba_and_outputs(data):
    X, y = data
    clf = SparsemaxClassifier().fit(X, y)
    P = clf.predict_proba(X)
    assert (P == 0).any()
    np.testing.assert_allclose(P.sum(axis=1), 1)
    logP = clf.predict_log_proba(X)
    assert np.all(np.isneginf(logP[P == 0]))
    np.testing.assert_allclose(logP[P > 0], np.log(P[P > 0]))
    Z = clf.decision_function(X)
    np.testing.assert_allclose(Z, X @ clf.coef_.T + clf.intercept_)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(P, axis=1)])
    assert isinstance(clf.n_iter_, int) and clf.n_iter_ >= 1


def test_binary_decision_function_and_roc_auc_grid_search(data):
    X, y = data
    yb = np.where(y > 1, "pos", "neg")
    clf = SparsemaxClassifier().fit(X, yb)
    d = clf.decision_function(X)
    assert d.shape == (X.shape[0],)
    Z = X @ clf.coef_.T + clf.intercept_
    np.testing.assert_allclose(d, Z[:, 1] - Z[:, 0])
    np.testing.assert_array_equal(clf.predict(X), np.where(d > 0, "pos", "neg"))
    # modified Huber link: p(second class) = clip((d + 1) / 2, 0, 1)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], np.clip((d + 1) / 2, 0, 1))
    gs = GridSearchCV(SparsemaxClassifier(), {"C": [0.01, 1.0]}, scoring="roc_auc", cv=3)
    gs.fit(X, yb)
    assert gs.best_score_ > 0.8


# -- pipelines and grid searches ---------------------------------------------


@pytest.mark.parametrize(
    "est, grid",
    [
        (SparsemaxClassifier(), {"C": [0.1, 10.0]}),
        (SparseSoftmaxClassifier(), {"C": [0.1, 1.0], "k": [2, 3]}),
        (EntmaxClassifier(), {"C": [1.0], "alpha": [1.0, 1.5, 2.0]}),
    ],
    ids=["sparsemax", "sparse_softmax", "entmax"],
)
def test_pipeline_grid_search(data, est, grid):
    X, y = data
    pipe = make_pipeline(StandardScaler(), est)
    name = pipe.steps[-1][0]
    grid = {f"{name}__{k}": v for k, v in grid.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gs = GridSearchCV(pipe, grid, cv=3, n_jobs=2).fit(X, y)
    assert gs.best_score_ > 0.6
    assert set(gs.best_params_) == set(grid)
    assert gs.predict_proba(X).shape == (X.shape[0], 4)


# -- errors -------------------------------------------------------------------


def test_errors(data):
    X, y = data
    with pytest.raises(ValueError, match="only one class: 1"):
        SparsemaxClassifier().fit(X, np.ones_like(y))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        SparsemaxClassifier().fit(X, y[:-1])
    X_nan = X.copy()
    X_nan[3, 2] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        SparsemaxClassifier().fit(X_nan, y)
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        SparsemaxClassifier().fit(X_inf, y)
    with pytest.raises(ValueError, match="k must be at least 2; got k=1.*zero model"):
        SparseSoftmaxClassifier(k=1).fit(X, y)
    with pytest.raises(ValueError, match=re.escape("'k' parameter")):
        SparseSoftmaxClassifier(k=0).fit(X, y)
    with pytest.raises(ValueError, match=re.escape("'alpha' parameter")):
        EntmaxClassifier(alpha=0.5).fit(X, y)
    with pytest.raises(ValueError, match=re.escape("range [1.0, inf). Got inf")):
        EntmaxClassifier(alpha=np.inf).fit(X, y)
    with pytest.raises(ValueError, match=re.escape("'C' parameter")):
        SparsemaxClassifier(C=0).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight has 5 entries"):
        SparsemaxClassifier().fit(X, y, sample_weight=np.ones(5))
    with pytest.raises(ValueError, match=r"Negative values.*sample_weight\[2\]"):
        SparsemaxClassifier().fit(X, y, sample_weight=np.r_[1, 1, -1, np.ones(len(y) - 3)])
    with pytest.raises(ValueError, match="Unknown label type"):
        SparsemaxClassifier().fit(X, np.linspace(0, 1, len(y)))
    clf = SparsemaxClassifier().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features, but SparsemaxClassifier is expecting 6"):
        clf.predict(X[:, :3])


def test_verbose_reports_progress(data, capsys):
    X, y = data
    SparsemaxClassifier(verbose=10, tol=1e-8, max_iter=200).fit(X, y)
    err = capsys.readouterr().err
    assert "[SparsemaxClassifier] iteration     1  objective" in err
    assert "[SparsemaxClassifier] stopped after" in err


def test_sparse_softmax_starts_off_the_tie(data):
    """The softmax warm-up moves the start off the all-equal tie."""
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = SparseSoftmaxClassifier(k=2, max_iter=1).fit(X, y)
    # 5 softmax iterations + 1: the scores are no longer all equal.
    assert clf.n_iter_ == 6
    Z = clf.decision_function(X)
    assert np.ptp(Z, axis=1).min() > 0
