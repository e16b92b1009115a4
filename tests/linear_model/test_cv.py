"""The CV estimators: equal to GridSearchCV over the plain estimator, on warm paths.

References: scikit-learn's ``GridSearchCV`` over the plain estimator with the
same folds and grid (which refits every point from scratch),
``LogisticRegressionCV`` for the softmax loss, and plain fits at each ``C``
for the paths.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_classification, make_multilabel_classification
from sklearn.linear_model import LogisticRegressionCV
from sklearn.metrics import get_scorer
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sksparsemax.linear_model import (
    EntmaxClassifier,
    EntmaxClassifierCV,
    FenchelYoungClassifier,
    FenchelYoungClassifierCV,
    SparsemaxClassifier,
    SparsemaxClassifierCV,
    SparsemaxMultiLabel,
    SparsemaxMultiLabelCV,
    SparseSoftmaxClassifier,
    SparseSoftmaxClassifierCV,
)
from sksparsemax.linear_model._path import check_Cs

TIGHT = dict(tol=1e-10, max_iter=5000)
CS = np.logspace(-2, 2, 5)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=240, n_features=8, n_informative=5,
                               n_classes=4, n_clusters_per_class=1, class_sep=0.8,
                               random_state=0)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def folds(data):
    X, y = data
    return list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))


def _grid_search(plain, grid, X, y, folds, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GridSearchCV(plain, grid, cv=folds).fit(X, y, **fit_params)


def _assert_same_search(cv, search, coef_rtol=1e-5, score_atol=0.0):
    """Same choice, same scores (in GridSearchCV's order), same refit."""
    assert cv.best_params_ == search.best_params_
    np.testing.assert_allclose(cv.scores_.mean(axis=0).T.ravel(),
                               search.cv_results_["mean_test_score"], rtol=1e-12,
                               atol=score_atol)
    # Fold by fold: (fold, grid point, C) -> (C, grid point) rows, one column per fold.
    n_folds = cv.scores_.shape[0]
    np.testing.assert_allclose(
        cv.scores_.transpose(2, 1, 0).reshape(-1, n_folds),
        np.column_stack([search.cv_results_[f"split{i}_test_score"] for i in range(n_folds)]),
        rtol=1e-12, atol=n_folds * score_atol,
    )
    assert cv.best_score_ == pytest.approx(search.best_score_, rel=1e-12, abs=score_atol)
    scale = np.abs(search.best_estimator_.coef_).max()
    np.testing.assert_allclose(cv.coef_, search.best_estimator_.coef_, atol=coef_rtol * scale)
    np.testing.assert_allclose(cv.intercept_, search.best_estimator_.intercept_,
                               atol=coef_rtol * scale)


@pytest.mark.parametrize("sparse", [False, True])
def test_sparsemax_cv_equals_grid_search(data, folds, sparse):
    X, y = data
    X = sp.csr_matrix(X) if sparse else X
    cv = SparsemaxClassifierCV(Cs=CS, cv=folds, **TIGHT).fit(X, y)
    search = _grid_search(SparsemaxClassifier(**TIGHT), {"C": CS}, X, y, folds)
    _assert_same_search(cv, search)
    assert cv.C_ == search.best_params_["C"]
    assert cv.scores_.shape == (4, 1, 5)
    assert cv.coefs_paths_.shape == (4, 1, 5, 4, 9)


def test_newton_cg_paths_equal_grid_search(data, folds):
    X, y = data
    cv = SparsemaxClassifierCV(Cs=CS, cv=folds, solver="newton-cg", **TIGHT).fit(X, y)
    search = _grid_search(SparsemaxClassifier(solver="newton-cg", **TIGHT), {"C": CS},
                          X, y, folds)
    _assert_same_search(cv, search)


def test_entmax_cv_over_alpha_equals_grid_search(data, folds):
    X, y = data
    alphas = (1.25, 1.5, 2.0)
    cv = EntmaxClassifierCV(alphas=alphas, Cs=CS, cv=folds, **TIGHT).fit(X, y)
    search = _grid_search(EntmaxClassifier(**TIGHT), {"C": CS, "alpha": list(alphas)},
                          X, y, folds)
    _assert_same_search(cv, search)
    assert cv.alpha_ == search.best_params_["alpha"]
    assert cv.param_grid_ == [{"alpha": a} for a in alphas]
    assert cv.coefs_paths_.shape == (4, 3, 5, 4, 9)


def test_sparse_softmax_cv_over_k_equals_grid_search(data, folds):
    # The top-k loss has kinks at its minimiser: the warm and the cold fits
    # stop (on the stall rule) at slightly different points, where the tied
    # k-th and (k+1)-th scores of a held-out sample may fall either way. The
    # scores may then differ by one held-out sample of one fold (1/60 here).
    X, y = data
    cv = SparseSoftmaxClassifierCV(ks=(2, 3), Cs=CS, cv=folds, **TIGHT).fit(X, y)
    search = _grid_search(SparseSoftmaxClassifier(**TIGHT), {"C": CS, "k": [2, 3]},
                          X, y, folds)
    n_test = len(folds[0][1])
    _assert_same_search(cv, search, coef_rtol=1e-2,
                        score_atol=1.0 / (len(folds) * n_test) + 1e-12)
    assert cv.k_ == search.best_params_["k"]


def test_softmax_loss_cv_equals_logistic_regression_cv(data, folds):
    """An independent implementation: LogisticRegressionCV, same folds and Cs."""
    X, y = data
    cv = FenchelYoungClassifierCV(loss="softmax", Cs=CS, cv=folds, **TIGHT).fit(X, y)
    lr = LogisticRegressionCV(Cs=CS, cv=folds, scoring="accuracy", l1_ratios=(0,),
                              use_legacy_attributes=False, **TIGHT).fit(X, y)
    assert cv.C_ == lr.C_
    np.testing.assert_allclose(cv.scores_[:, 0, :], lr.scores_[:, 0, :], rtol=1e-12)
    # LogisticRegression's coefficients are those of the softmax loss, up to
    # the shift of the scores (its rows sum to zero, like ours from b = 0).
    np.testing.assert_allclose(cv.coefs_paths_[:, 0], lr.coefs_paths_[:, 0],
                               atol=1e-5 * np.abs(lr.coefs_paths_).max())
    np.testing.assert_allclose(cv.coef_, lr.coef_, atol=1e-5 * np.abs(lr.coef_).max())


def test_paths_are_the_plain_fits_at_each_C(data, folds):
    X, y = data
    cv = SparsemaxClassifierCV(Cs=CS, cv=folds, **TIGHT).fit(X, y)
    for f, (train, _) in enumerate(folds):
        for j, C in enumerate(CS):
            plain = SparsemaxClassifier(C=C, **TIGHT).fit(X[train], y[train])
            expected = np.column_stack([plain.coef_, plain.intercept_])
            # Each fit stops with max |gradient| <= tol, so it lies within about
            # ||g||_2 / l2 of the minimiser, l2 = 1 / (C n) the curvature the
            # penalty guarantees: at large C that, not rounding, bounds how
            # far two fits from different starts may end apart.
            apart = 2 * TIGHT["tol"] * np.sqrt(expected.size) * C * len(train)
            np.testing.assert_allclose(cv.coefs_paths_[f, 0, j], expected,
                                       atol=max(1e-6 * np.abs(expected).max(), apart))


def test_warm_starts_save_iterations(data, folds):
    """The paths are warm started: fewer iterations than the same fits from scratch."""
    X, y = data
    Cs = np.logspace(-1, 3, 12)
    cv = SparsemaxClassifierCV(Cs=Cs, cv=folds, tol=1e-6, max_iter=1000).fit(X, y)
    cold = np.array([[SparsemaxClassifier(C=C, tol=1e-6, max_iter=1000)
                      .fit(X[train], y[train]).n_iter_ for C in Cs]
                     for train, _ in folds])
    assert cv.n_iter_.shape == (4, 1, 12)
    # The first C of each path starts cold, like the plain fit.
    np.testing.assert_array_equal(cv.n_iter_[:, 0, 0], cold[:, 0])
    assert cv.n_iter_[:, 0, 1:].sum() < 0.7 * cold[:, 1:].sum()


def test_weights_go_to_the_fits_and_the_scores(data, folds):
    """With sample weights: GridSearchCV routing them to fit and scorer alike."""
    X, y = data
    sw = np.random.default_rng(0).uniform(0.2, 3.0, size=len(y))
    cv = SparsemaxClassifierCV(Cs=CS, cv=folds, **TIGHT).fit(X, y, sample_weight=sw)
    with config_context(enable_metadata_routing=True):
        plain = SparsemaxClassifier(**TIGHT).set_fit_request(sample_weight=True)
        scorer = get_scorer("accuracy").set_score_request(sample_weight=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = GridSearchCV(plain, {"C": CS}, cv=folds, scoring=scorer).fit(
                X, y, sample_weight=sw)
    _assert_same_search(cv, search)
    unweighted = SparsemaxClassifierCV(Cs=CS, cv=folds, **TIGHT).fit(X, y)
    assert not np.allclose(unweighted.scores_, cv.scores_)


def test_class_weight_is_computed_per_training_fold(data, folds):
    X, y = data
    keep = (y != 3) | (np.arange(len(y)) % 3 == 0)  # an unbalanced class 3
    X, y = X[keep], y[keep]
    folds = list(StratifiedKFold(4, shuffle=True, random_state=1).split(X, y))
    cv = SparsemaxClassifierCV(Cs=CS, cv=folds, class_weight="balanced", **TIGHT).fit(X, y)
    search = _grid_search(SparsemaxClassifier(class_weight="balanced", **TIGHT),
                          {"C": CS}, X, y, folds)
    _assert_same_search(cv, search)


def test_multilabel_cv_scores_every_rule_from_one_fit_per_C():
    X, Y = make_multilabel_classification(n_samples=200, n_features=10, n_classes=5,
                                          allow_unlabeled=False, random_state=0)
    X = StandardScaler().fit_transform(X)
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    scales, Cs = (1.0, 1.5, 2.5, 4.0), np.logspace(-1, 1, 3)
    cv = SparsemaxMultiLabelCV(Cs=Cs, scales=scales, cv=folds, scoring="f1_micro",
                               **TIGHT).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(SparsemaxMultiLabel(**TIGHT),
                              {"C": Cs, "scale": list(scales), "threshold": [None]},
                              cv=folds, scoring="f1_micro").fit(X, Y)
    _assert_same_search(cv, search)
    assert (cv.scale_, cv.threshold_) == (search.best_params_["scale"], None)
    # One path per fold: the rules do not refit.
    assert cv.coefs_paths_.shape == (3, 1, 3, 5, 11)
    assert cv.scores_.shape == (3, 4, 3)
    # The scale changes predictions: the scores differ across the rules.
    assert np.ptp(cv.scores_.mean(axis=0), axis=0).max() > 0


def test_multilabel_cv_over_scales_and_thresholds():
    X, Y = make_multilabel_classification(n_samples=150, n_features=6, n_classes=4,
                                          allow_unlabeled=False, random_state=1)
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    grid = {"C": [0.1, 1.0], "scale": [1.0, 2.0], "threshold": [None, 0.1, 0.3]}
    cv = SparsemaxMultiLabelCV(Cs=grid["C"], scales=grid["scale"],
                               thresholds=grid["threshold"], cv=folds,
                               scoring="f1_samples", **TIGHT).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(SparsemaxMultiLabel(**TIGHT), grid, cv=folds,
                              scoring="f1_samples").fit(X, Y)
    _assert_same_search(cv, search)
    assert cv.param_grid_[:3] == [{"scale": 1.0, "threshold": t} for t in (None, 0.1, 0.3)]


def test_multilabel_cv_dataframe_labels_name_the_classes():
    X, Y = make_multilabel_classification(n_samples=120, n_features=5, n_classes=3,
                                          allow_unlabeled=False, random_state=0)
    Y = pd.DataFrame(Y, columns=["sport", "politics", "music"])
    cv = SparsemaxMultiLabelCV(Cs=2, cv=3).fit(pd.DataFrame(X, columns=list("abcde")), Y)
    assert cv.classes_.tolist() == ["sport", "politics", "music"]
    assert cv.feature_names_in_.tolist() == list("abcde")
    assert cv.predict(pd.DataFrame(X[:4], columns=list("abcde"))).shape == (4, 3)


def test_ties_go_to_the_smallest_C_as_in_grid_search():
    # Two far-apart clusters: every C scores 1.0 on every fold.
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 30)
    X = rng.normal(size=(90, 3)) + 20.0 * np.eye(3)[y]
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    cv = SparsemaxClassifierCV(Cs=CS, cv=folds).fit(X, y)
    assert np.all(cv.scores_ == 1.0)
    search = _grid_search(SparsemaxClassifier(), {"C": CS}, X, y, folds)
    assert cv.C_ == CS[0] == search.best_params_["C"]


def test_refit_false_averages_the_folds_at_the_chosen_point(data, folds):
    X, y = data
    cv = EntmaxClassifierCV(alphas=(1.5, 2.0), Cs=CS, cv=folds, refit=False).fit(X, y)
    g, c = cv.best_index_
    mean = cv.coefs_paths_[:, g, c].mean(axis=0)
    np.testing.assert_allclose(cv.coef_, mean[:, :-1])
    np.testing.assert_allclose(cv.intercept_, mean[:, -1])
    assert cv.best_estimator_.alpha == cv.alpha_
    np.testing.assert_allclose(cv.predict_proba(X), cv.best_estimator_.predict_proba(X))


def test_string_labels_float32_pipeline_clone(data):
    X, y = data
    labels = np.array(["ant", "bee", "cat", "dog"])[y]
    pipe = make_pipeline(StandardScaler(), SparsemaxClassifierCV(Cs=3, cv=3))
    pipe.fit(X.astype(np.float32), labels)
    cv = pipe[-1]
    assert cv.classes_.tolist() == ["ant", "bee", "cat", "dog"]
    assert cv.coef_.dtype == np.float32
    assert set(pipe.predict(X[:10].astype(np.float32))) <= set(labels)
    np.testing.assert_allclose(pipe.predict_proba(X[:5]).sum(axis=1), 1.0, rtol=1e-6)
    params = clone(cv).get_params()
    assert params["Cs"] == 3 and "C" not in params and "warm_start" not in params


def test_without_intercept(data, folds):
    X, y = data
    cv = SparsemaxClassifierCV(Cs=CS, cv=folds, fit_intercept=False, **TIGHT).fit(X, y)
    search = _grid_search(SparsemaxClassifier(fit_intercept=False, **TIGHT), {"C": CS},
                          X, y, folds)
    _assert_same_search(cv, search)
    assert cv.coefs_paths_.shape[-1] == X.shape[1]
    np.testing.assert_array_equal(cv.intercept_, 0.0)


def test_parallel_folds_equal_serial(data, folds):
    X, y = data
    serial = SparsemaxClassifierCV(Cs=CS, cv=folds).fit(X, y)
    parallel = SparsemaxClassifierCV(Cs=CS, cv=folds, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(serial.scores_, parallel.scores_)
    # The worker processes do not see the test suite's lifted kernel size
    # rules (tests/conftest.py): the same fits, another summation order.
    np.testing.assert_allclose(serial.coefs_paths_, parallel.coefs_paths_, rtol=1e-6,
                               atol=1e-9)


def test_score_uses_the_scoring(data):
    X, y = data
    cv = SparsemaxClassifierCV(Cs=3, cv=3, scoring="balanced_accuracy").fit(X, y)
    assert cv.score(X, y) == pytest.approx(get_scorer("balanced_accuracy")(cv, X, y))
    default = SparsemaxClassifierCV(Cs=3, cv=3).fit(X, y)
    assert default.score(X, y) == pytest.approx(np.mean(default.predict(X) == y))


def test_check_Cs():
    np.testing.assert_allclose(check_Cs(3), [1e-4, 1.0, 1e4])
    np.testing.assert_array_equal(check_Cs([10, 0.1, 1]), [0.1, 1.0, 10.0])
    for bad, match in [([], "non-empty"), ([[1.0]], "1-D"), ([1.0, 0.0], r"Cs\[1\] = 0.0"),
                       ([np.nan], r"Cs\[0\] = nan"), (["a"], "numbers")]:
        with pytest.raises(ValueError, match=match):
            check_Cs(bad)


@pytest.mark.parametrize("est, match", [
    (SparsemaxClassifierCV(Cs=[1.0, -1.0]), r"Cs\[1\] = -1.0"),
    (EntmaxClassifierCV(alphas=(1.5, 0.5)), r"alphas\[1\] = 0.5: each alpha must be"),
    (EntmaxClassifierCV(alphas=()), "alphas must be a non-empty"),
    (SparseSoftmaxClassifierCV(ks=(1,)), r"ks\[0\] = 1: each k must be an integer >= 2"),
    (SparseSoftmaxClassifierCV(ks=(2.5,)), r"ks\[0\] = 2.5"),
    (SparsemaxMultiLabelCV(scales=(0.0,)), r"scales\[0\] = 0.0"),
    (SparsemaxMultiLabelCV(thresholds=(1.0,)), r"thresholds\[0\] = 1.0"),
])
def test_bad_grids_are_named(data, est, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_a_fold_without_a_class_is_named(data):
    X, y = data
    order = np.argsort(y, kind="stable")
    with pytest.raises(ValueError, match=r"fold 0 lacks the classes \[0\]"):
        SparsemaxClassifierCV(Cs=2, cv=KFold(4)).fit(X[order], y[order])


def test_one_class_fails_before_any_split(data):
    X, _ = data
    with pytest.raises(ValueError, match="only one class"):
        SparsemaxClassifierCV().fit(X, np.zeros(len(X)))


def test_generic_loss_instance(data, folds):
    from sksparsemax.losses import EntmaxLoss

    X, y = data
    cv = FenchelYoungClassifierCV(loss=EntmaxLoss(alpha=1.7), Cs=CS, cv=folds,
                                  **TIGHT).fit(X, y)
    search = _grid_search(FenchelYoungClassifier(loss=EntmaxLoss(alpha=1.7), **TIGHT),
                          {"C": CS}, X, y, folds)
    _assert_same_search(cv, search)
