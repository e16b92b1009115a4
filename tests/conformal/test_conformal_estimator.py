"""SparseConformalClassifier: the fit paths, the sets and distributions, the contract."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from sksparsemax.conformal import (
    SparseConformalClassifier,
    conformal_quantile,
    nonconformity_scores,
)
from sksparsemax.linear_model import SparsemaxClassifier
from sksparsemax.transforms import entmax_bisect, softmax, sparsemax


@parametrize_with_checks(
    [
        SparseConformalClassifier(),
        SparseConformalClassifier(LogisticRegression(), mapping="entmax", class_conditional=True),
        SparseConformalClassifier(mapping="softmax", cv=3),
    ]
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # tiny calibration sets: T = inf
        check(estimator)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        900, n_features=10, n_informative=6, n_classes=4, flip_y=0.1, random_state=0
    )
    return X, y


def _z(model, X):
    return model.decision_function(X)


@pytest.mark.parametrize("mapping", ["sparsemax", "entmax", "softmax"])
def test_split_path_is_the_documented_rule(data, mapping):
    X, y = data
    clf = SparseConformalClassifier(
        LogisticRegression(), mapping=mapping, coverage=0.85, calibration_size=0.3, random_state=0
    ).fit(X, y)
    idx = np.arange(len(y))
    train, cal = train_test_split(idx, test_size=0.3, random_state=0, stratify=y)
    model = LogisticRegression().fit(X[train], y[train])
    np.testing.assert_allclose(clf.estimator_.coef_, model.coef_)
    S = nonconformity_scores(_z(model, X[cal]), mapping=mapping)
    t = S[np.arange(len(cal)), y[cal]]
    assert clf.temperature_ == conformal_quantile(t, 0.85)
    np.testing.assert_array_equal(clf.calibration_scores_, t)
    sets = clf.predict_set(X)
    np.testing.assert_array_equal(
        sets, nonconformity_scores(_z(model, X), mapping=mapping) <= clf.temperature_
    )
    assert sets.dtype == bool and sets.shape == (len(y), 4)


def test_prefit_path_calibrates_on_all_given_samples(data):
    X, y = data
    model = SparsemaxClassifier().fit(X[:400], y[:400])
    clf = SparseConformalClassifier(model, cv="prefit", coverage=0.8).fit(X[400:], y[400:])
    assert clf.estimator_ is model
    t = nonconformity_scores(model.decision_function(X[400:]))[np.arange(500), y[400:]]
    assert clf.temperature_ == conformal_quantile(t, 0.8)
    with pytest.raises(NotFittedError):
        SparseConformalClassifier(SparsemaxClassifier(), cv="prefit").fit(X, y)
    with pytest.raises(ValueError, match="labels the prefit estimator does not know"):
        SparseConformalClassifier(model, cv="prefit").fit(X[:10], y[:10] + 7)


def test_cross_conformal_path(data):
    X, y = data
    clf = SparseConformalClassifier(LogisticRegression(), cv=4, coverage=0.9, random_state=0)
    clf.fit(X[:600], y[:600])
    oof = np.empty(600)
    for train, test in StratifiedKFold(4, shuffle=True, random_state=0).split(X[:600], y[:600]):
        m = LogisticRegression().fit(X[train], y[train])
        oof[test] = nonconformity_scores(m.decision_function(X[test]))[np.arange(len(test)), y[test]]
    np.testing.assert_allclose(clf.calibration_scores_, oof)
    assert clf.temperature_ == conformal_quantile(oof, 0.9)
    np.testing.assert_allclose(clf.estimator_.coef_, LogisticRegression().fit(X[:600], y[:600]).coef_)
    # approximate guarantee: close to the target on new data
    covered = clf.predict_set(X[600:])[np.arange(300), y[600:]].mean()
    assert 0.85 <= covered <= 0.97


@pytest.mark.parametrize("mapping,alpha", [("sparsemax", 2.0), ("entmax", 1.5), ("entmax", 3.0)])
def test_predict_proba_support_is_exactly_the_set(data, mapping, alpha):
    """Calibrate and predict on the same points: the point that defines T has
    its label exactly on the boundary (s = T); it is in the set and in the
    support, and everywhere else predict_proba is the mapping of z / T."""
    X, y = data
    model = LogisticRegression().fit(X[:300], y[:300])
    clf = SparseConformalClassifier(model, mapping=mapping, alpha=alpha, cv="prefit", coverage=0.9)
    clf.fit(X[300:], y[300:])
    T = clf.temperature_
    P, sets = clf.predict_proba(X[300:]), clf.predict_set(X[300:])
    np.testing.assert_array_equal(P > 0, sets)
    S = nonconformity_scores(model.decision_function(X[300:]), mapping=mapping, alpha=alpha)
    assert (S[sets] == T).any()  # a boundary label is in the set ...
    assert (P[S == T] > 0).all()  # ... with a positive probability
    Z = model.decision_function(X[300:])
    ref = sparsemax(Z / T) if mapping == "sparsemax" else entmax_bisect(Z / T, alpha=alpha)
    np.testing.assert_allclose(P, ref, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X[300:]), clf.classes_[np.argmax(P, axis=1)])


def test_softmax_proba_is_renormalised_on_the_set(data):
    X, y = data
    model = LogisticRegression().fit(X[:300], y[:300])
    clf = SparseConformalClassifier(model, mapping="softmax", cv="prefit", response_method="predict_proba")
    clf.fit(X[300:], y[300:])
    sets, P = clf.predict_set(X[300:]), clf.predict_proba(X[300:])
    full = model.predict_proba(X[300:])
    ok = sets.any(axis=1)
    np.testing.assert_array_equal((P > 0)[ok], sets[ok])
    ref = np.where(sets, full, 0)[ok]
    np.testing.assert_allclose(P[ok], ref / ref.sum(axis=1, keepdims=True), rtol=1e-10)
    np.testing.assert_array_equal(sets, 1 - full <= clf.temperature_)


def test_class_conditional_thresholds(data):
    X, y = data
    model = LogisticRegression().fit(X[:300], y[:300])
    clf = SparseConformalClassifier(model, cv="prefit", class_conditional=True, coverage=0.8)
    clf.fit(X[300:], y[300:])
    S = nonconformity_scores(model.decision_function(X[300:]))
    t = S[np.arange(600), y[300:]]
    assert clf.temperature_.shape == (4,)
    for c in range(4):
        assert clf.temperature_[c] == conformal_quantile(t[y[300:] == c], 0.8)
    sets = clf.predict_set(X[300:])
    np.testing.assert_array_equal(sets, S <= clf.temperature_[None, :])
    np.testing.assert_array_equal(clf.predict_proba(X[300:]) > 0, sets)


def test_binary_one_dimensional_decision_function():
    X, y = make_classification(400, n_features=5, random_state=1)
    model = SparsemaxClassifier().fit(X[:200], y[:200])
    d = model.decision_function(X[200:])
    assert d.ndim == 1
    clf = SparseConformalClassifier(model, cv="prefit", coverage=0.9).fit(X[200:], y[200:])
    # (-d/2, d/2) and (0, d) give the same scores (they differ by a shift)
    S = nonconformity_scores(np.column_stack([np.zeros_like(d), d]))
    np.testing.assert_allclose(clf.calibration_scores_, S[np.arange(200), y[200:]], atol=1e-12)
    np.testing.assert_array_equal(clf.predict_set(X[200:]), S <= clf.temperature_ + 1e-12)
    # sparsemax(z) with T = 1 is the classifier's own predict_proba
    np.testing.assert_allclose(sparsemax(np.column_stack([-d / 2, d / 2])), model.predict_proba(X[200:]))


def test_pipeline_pandas_and_string_labels():
    X, y = load_iris(return_X_y=True, as_frame=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    inner = make_pipeline(StandardScaler(), LogisticRegression())
    clf = SparseConformalClassifier(inner, mapping="entmax", coverage=0.95, random_state=0)
    clf.fit(X, pd.Series(names))
    assert list(clf.classes_) == ["setosa", "versicolor", "virginica"]
    assert list(clf.feature_names_in_) == list(X.columns) and clf.n_features_in_ == 4
    assert set(clf.predict(X)) <= set(names)
    sets = clf.predict_set(X)
    assert sets[np.arange(150), y].mean() >= 0.9
    outer = make_pipeline(StandardScaler(), SparseConformalClassifier(LogisticRegression(), random_state=0))
    np.testing.assert_array_equal(outer.fit(X, names).predict_proba(X).shape, (150, 3))


def test_split_that_misses_a_class_masks_it():
    X, y = make_classification(300, n_features=5, n_informative=3, n_classes=3, random_state=0)
    y[:2] = 5  # a class with two samples: a plain split may leave it out of the training part
    clf = SparseConformalClassifier(LogisticRegression(), calibration_size=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert list(clf.classes_) == [0, 1, 2, 5]
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_too_small_calibration_set_warns_and_keeps_every_label():
    X, y = load_iris(return_X_y=True)
    clf = SparseConformalClassifier(LogisticRegression(), calibration_size=8, coverage=0.9,
                                    random_state=0)
    with pytest.warns(UserWarning, match="too few for coverage=0.9"):
        clf.fit(X, y)
    assert clf.temperature_ == np.inf
    assert clf.predict_set(X).all()
    np.testing.assert_allclose(clf.predict_proba(X), 1 / 3)
    # predict still follows the scores (ties of the uniform distribution broken by z)
    np.testing.assert_array_equal(clf.predict(X), clf.estimator_.predict(X))
    with pytest.warns(UserWarning, match="classes \\[0, 1, 2\\]"):
        SparseConformalClassifier(LogisticRegression(), calibration_size=8, class_conditional=True,
                                  random_state=0).fit(X, y)


def test_log_proba_scores_and_zero_probabilities():
    """response_method="predict_proba": z = log p; a zero probability is a -inf score."""
    X, y = load_iris(return_X_y=True)
    model = SparsemaxClassifier().fit(X[::2], y[::2])
    clf = SparseConformalClassifier(model, cv="prefit", response_method="predict_proba",
                                    coverage=0.9).fit(X[1::2], y[1::2])
    with np.errstate(divide="ignore"):
        Z = np.log(model.predict_proba(X))
    S = nonconformity_scores(Z)
    np.testing.assert_array_equal(clf.predict_set(X), S <= clf.temperature_)
    assert not clf.predict_set(X)[Z == -np.inf].any()


@pytest.mark.parametrize(
    "params,match",
    [
        ({"coverage": 1.0}, "'coverage' parameter"),
        ({"coverage": 0}, "'coverage' parameter"),
        ({"coverage": "0.9"}, "'coverage' parameter"),
        ({"mapping": "sparse"}, "'mapping' parameter"),
        ({"alpha": 1.0}, "'alpha' parameter"),
        ({"cv": 1}, "'cv' parameter"),
        ({"cv": "kfold"}, "'cv' parameter"),
        ({"calibration_size": 1.5}, "'calibration_size' parameter"),
        ({"response_method": "predict"}, "'response_method' parameter"),
        ({"estimator": "svm"}, "'estimator' parameter"),
    ],
)
def test_bad_parameters_name_themselves(data, params, match):
    X, y = data
    with pytest.raises((ValueError, TypeError), match=match):
        SparseConformalClassifier(**params).fit(X, y)


def test_estimator_without_scores_is_refused(data):
    from sklearn.base import BaseEstimator, ClassifierMixin

    class LabelsOnly(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            return self

    X, y = data
    with pytest.raises(ValueError, match="has no predict_proba method"):
        SparseConformalClassifier(LabelsOnly()).fit(X, y)
    with pytest.raises(ValueError, match="has no decision_function method"):
        SparseConformalClassifier(
            make_pipeline(StandardScaler(), LabelsOnly()), response_method="decision_function"
        ).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SparseConformalClassifier().fit(X, np.zeros(len(X)))


def test_softmax_matches_lac_sets_of_mapie(data):
    """Our softmax score is MAPIE's LAC: the same prefit model and calibration
    data give the same prediction sets."""
    mapie = pytest.importorskip("mapie.classification")
    X, y = data
    model = LogisticRegression().fit(X[:300], y[:300])
    ours = SparseConformalClassifier(model, mapping="softmax", cv="prefit", coverage=0.8,
                                     response_method="predict_proba")
    ours.fit(X[300:601], y[300:601])
    theirs = mapie.SplitConformalClassifier(model, confidence_level=0.8, conformity_score="lac",
                                            prefit=True).conformalize(X[300:601], y[300:601])
    sets = theirs.predict_set(X[601:])[1][:, :, 0]
    np.testing.assert_array_equal(ours.predict_set(X[601:]), sets)
    assert np.allclose(softmax(np.log(model.predict_proba(X[:3]))), model.predict_proba(X[:3]))


def test_prefit_model_with_unsorted_string_classes():
    """classes_ are taken from the prefit model, in its order (sorted or not)."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((300, 3))

    class Fixed(ClassifierMixin, BaseEstimator):
        classes_ = np.array(["b", "c", "a"])

        def fit(self, X, y):
            return self

        def __sklearn_is_fitted__(self):
            return True

        def decision_function(self, X):
            return Z[np.asarray(X)[:, 0].astype(int)]

    y = Fixed.classes_[np.argmax(Z + rng.standard_normal(Z.shape), axis=1)]
    X = np.arange(300)[:, None]
    clf = SparseConformalClassifier(Fixed(), cv="prefit", coverage=0.8).fit(X[:200], y[:200])
    assert list(clf.classes_) == ["b", "c", "a"]
    idx = np.array([{"b": 0, "c": 1, "a": 2}[v] for v in y[:200]])
    t = nonconformity_scores(Z[:200])[np.arange(200), idx]
    assert clf.temperature_ == conformal_quantile(t, 0.8)
    np.testing.assert_array_equal(clf.predict(X[200:]), clf.classes_[np.argmax(Z[200:], axis=1)])
