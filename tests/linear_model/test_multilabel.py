"""SparsemaxMultiLabel: targets, predictions, proportions."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sksparsemax.linear_model import SparsemaxClassifier, SparsemaxMultiLabel
from sksparsemax.transforms import sparsemax


@pytest.fixture(scope="module")
def mulan_like():
    """MULAN-like data: 8 labels, ~2 labels per example, some unlabelled."""
    X, Y = make_multilabel_classification(
        n_samples=500, n_features=20, n_classes=8, n_labels=2, length=60,
        allow_unlabeled=True, random_state=1,
    )
    X = StandardScaler().fit_transform(X)
    return X[:350], Y[:350], X[350:], Y[350:]


def _fit_quiet(est, X, Y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unlabelled rows
        return est.fit(X, Y, **kw)


def test_objective_matches_direct_minimisation(ref, mulan_like):
    X, Y, _, _ = mulan_like
    labelled = Y.sum(axis=1) > 0
    Q = Y[labelled] / Y[labelled].sum(axis=1, keepdims=True)
    C = 0.5
    f_ref = ref.objective(ref.sparsemax_loss_grad, X[labelled], Q, 8, C)
    theta_ref, value_ref = ref.fit_reference(f_ref)
    clf = _fit_quiet(SparsemaxMultiLabel(C=C, tol=1e-10, max_iter=5000), X, Y)
    value = f_ref(f_ref.pack(clf.coef_, clf.intercept_))[0]
    assert value == pytest.approx(value_ref, rel=1e-6)
    np.testing.assert_allclose(clf.coef_, f_ref.unpack(theta_ref)[0], atol=1e-4)
    # predict_proba is sparsemax of the scores; predict its support at scale 1.
    Z = X @ clf.coef_.T + clf.intercept_
    P = ref.sparsemax(Z)[0]
    np.testing.assert_allclose(clf.predict_proba(X), P, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(X), (P > 0).astype(int))


def test_softmax_loss_matches_direct_minimisation(ref, mulan_like):
    X, Y, _, _ = mulan_like
    labelled = Y.sum(axis=1) > 0
    Q = Y[labelled] / Y[labelled].sum(axis=1, keepdims=True)
    f_ref = ref.objective(ref.softmax_loss_grad, X[labelled], Q, 8, 1.0)
    _, value_ref = ref.fit_reference(f_ref)
    clf = _fit_quiet(SparsemaxMultiLabel(loss="softmax", tol=1e-10, max_iter=5000), X, Y)
    value = f_ref(f_ref.pack(clf.coef_, clf.intercept_))[0]
    assert value == pytest.approx(value_ref, rel=1e-6)
    P = clf.predict_proba(X)
    assert (P > 0).all()
    np.testing.assert_allclose(P.sum(axis=1), 1)


def test_unlabelled_rows_are_dropped_with_a_warning(mulan_like):
    X, Y, _, _ = mulan_like
    n_empty = int((Y.sum(axis=1) == 0).sum())
    assert n_empty > 0
    with pytest.warns(UserWarning, match=f"^{n_empty} of {len(Y)} rows of Y have no label"):
        clf = SparsemaxMultiLabel().fit(X, Y)
    keep = Y.sum(axis=1) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        clf_kept = SparsemaxMultiLabel().fit(X[keep], Y[keep])
    np.testing.assert_allclose(clf.coef_, clf_kept.coef_, atol=1e-12)
    with pytest.raises(ValueError, match="no label at all"):
        SparsemaxMultiLabel().fit(X, np.zeros_like(Y))


def test_dense_sparse_and_proportion_targets_agree(mulan_like):
    X, Y, _, _ = mulan_like
    dense = _fit_quiet(SparsemaxMultiLabel(tol=1e-8, max_iter=1000), X, Y)
    sparse = _fit_quiet(SparsemaxMultiLabel(tol=1e-8, max_iter=1000), X, sp.csr_matrix(Y))
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-12)
    sums = Y.sum(axis=1, keepdims=True)
    Q = np.divide(Y, sums, out=np.zeros(Y.shape), where=sums > 0)
    prop = _fit_quiet(SparsemaxMultiLabel(tol=1e-8, max_iter=1000), X, Q)
    np.testing.assert_allclose(prop.coef_, dense.coef_, atol=1e-10)
    np.testing.assert_array_equal(dense.classes_, np.arange(8))
    # bool and sparse X too
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0, X))
    a = _fit_quiet(SparsemaxMultiLabel(tol=1e-8, max_iter=1000), Xs, Y.astype(bool))
    b = _fit_quiet(SparsemaxMultiLabel(tol=1e-8, max_iter=1000), Xs.toarray(), Y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-7)


def test_random_proportions_are_estimated():
    """Label-proportion estimation: a well-specified model is recovered."""
    rng = np.random.default_rng(0)
    n, d, K = 3000, 5, 4
    X = rng.normal(size=(n, d))
    W = rng.normal(scale=2.0, size=(K, d))
    from sksparsemax.transforms import sparsemax

    Q = sparsemax(X @ W.T)
    clf = SparsemaxMultiLabel(C=1e4, tol=1e-8, max_iter=2000).fit(X, Q)
    np.testing.assert_allclose(clf.predict_proba(X), Q, atol=2e-3)


def test_predictions_beat_trivial_baseline(mulan_like):
    X, Y, X_test, Y_test = mulan_like
    labelled = Y_test.sum(axis=1) > 0
    most_frequent = (Y.mean(axis=0) >= 0.5).astype(int)
    trivial = f1_score(Y_test[labelled], np.tile(most_frequent, (labelled.sum(), 1)),
                       average="micro", zero_division=0)
    # "predict every label" baseline
    all_labels = f1_score(Y_test[labelled], np.ones_like(Y_test[labelled]), average="micro")
    for est in [SparsemaxMultiLabel(scale=2.0), SparsemaxMultiLabel(loss="softmax")]:
        clf = _fit_quiet(est, X, Y)
        Y_pred = clf.predict(X_test)
        assert Y_pred.shape == Y_test.shape and Y_pred.dtype.kind == "i"
        assert Y_pred.sum(axis=1).min() >= 1  # never empty
        score = f1_score(Y_test[labelled], Y_pred[labelled], average="micro")
        assert score > max(trivial, all_labels) + 0.15, (est, score, trivial, all_labels)


def test_scale_threshold_and_decision_function(mulan_like):
    X, Y, X_test, _ = mulan_like
    clf = _fit_quiet(SparsemaxMultiLabel(), X, Y)
    sizes = []
    for scale in [0.5, 1.0, 2.0, 5.0]:
        clf.set_params(scale=scale)
        Y_pred = clf.predict(X_test)
        M = clf.decision_function(X_test)
        np.testing.assert_array_equal(Y_pred, (M > 0).astype(int))
        sizes.append(Y_pred.sum())
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > sizes[-1]
    soft = _fit_quiet(SparsemaxMultiLabel(loss="softmax"), X, Y)
    P = soft.predict_proba(X_test)
    for thr in [None, 0.3]:
        soft.set_params(threshold=thr)
        t = 1 / 8 if thr is None else thr
        expected = P > t
        expected[np.arange(len(P)), P.argmax(axis=1)] = True
        np.testing.assert_array_equal(soft.predict(X_test), expected.astype(int))


def test_sparsemax_threshold_rule(mulan_like):
    # The proportion rule on sparsemax: labels with sparsemax(scale z)_k > p0,
    # plus the top label; checked against the mapping applied to raw scores.
    X, Y, X_test, _ = mulan_like
    clf = _fit_quiet(SparsemaxMultiLabel(), X, Y)
    Z = X_test @ clf.coef_.T + clf.intercept_
    support = clf.predict(X_test)
    for scale in [1.0, 2.0]:
        P = sparsemax(scale * Z, axis=1)
        counts = []
        for thr in [0.0, 0.1, 0.25, 0.6]:
            clf.set_params(scale=scale, threshold=thr)
            expected = P > thr
            expected[np.arange(len(P)), Z.argmax(axis=1)] = True
            Y_pred = clf.predict(X_test)
            np.testing.assert_array_equal(Y_pred, expected.astype(int))
            M = clf.decision_function(X_test)
            np.testing.assert_allclose(np.maximum(M + thr, 0), P, atol=1e-12)
            forced = Y_pred.astype(bool) & (M <= 0)
            assert forced.sum(axis=1).max() <= 1  # at most the top label
            counts.append(Y_pred.sum())
        assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    clf.set_params(scale=1.0, threshold=0.0)
    np.testing.assert_array_equal(clf.predict(X_test), support)


def test_one_dimensional_y_is_multiclass(mulan_like):
    X, Y, _, _ = mulan_like
    y = np.argmax(Y, axis=1)
    ml = SparsemaxMultiLabel(tol=1e-8, max_iter=2000).fit(X, y)
    mc = SparsemaxClassifier(tol=1e-8, max_iter=2000).fit(X, y)
    np.testing.assert_allclose(ml.coef_, mc.coef_, atol=1e-12)
    np.testing.assert_array_equal(ml.predict(X), mc.predict(X))
    assert ml.predict(X).ndim == 1


def test_bad_targets_name_the_problem(mulan_like):
    X, Y, _, _ = mulan_like
    Y_bad = Y.astype(float)
    Y_bad[4, 3] = -1.0
    with pytest.raises(ValueError, match=r"no negative entry; Y\[4, 3\] = -1.0"):
        SparsemaxMultiLabel().fit(X, Y_bad)
    Y_bad = Y.astype(float)
    Y_bad[7, 1] = 2.0
    with pytest.raises(ValueError, match=r"0 or 1.*Y\[7, 1\] = 2.0"):
        SparsemaxMultiLabel().fit(X, Y_bad)
    Q = Y / np.maximum(Y.sum(axis=1, keepdims=True), 1)
    Q[9] *= 0.5
    Q[9, 0] += 0.01
    with pytest.raises(ValueError, match=r"row 9 sums to 0\.5.*column 0"):
        SparsemaxMultiLabel().fit(X, Q)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        SparsemaxMultiLabel().fit(X, Y[:-2])


def test_grid_search_over_scale_and_pickle(mulan_like):
    X, Y, X_test, _ = mulan_like
    keep = Y.sum(axis=1) > 0
    pipe = make_pipeline(StandardScaler(), SparsemaxMultiLabel())
    grid = {"sparsemaxmultilabel__C": [0.1, 1.0], "sparsemaxmultilabel__scale": [1.0, 3.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gs = GridSearchCV(pipe, grid, scoring="f1_micro", cv=3, n_jobs=2).fit(X[keep], Y[keep])
    assert gs.best_score_ > 0.5
    clf = pickle.loads(pickle.dumps(gs.best_estimator_))
    np.testing.assert_array_equal(clf.predict(X_test), gs.predict(X_test))
    np.testing.assert_array_equal(clf.predict_proba(X_test), gs.predict_proba(X_test))
