"""Coverage as a guarantee: the mean over many random calibration/test splits.

Each base model is fitted once on a training part of a data set; the scores of
a pool of the other samples are computed once; then ``N_SPLITS`` random
calibration/test splits of the pool are drawn as index permutations and every
step (the order statistic, the coverage of the test part) is vectorised over
the splits.

The statistics. The pool is fixed, and a random split of it makes the
calibration and test points exchangeable, so for scores without ties the
expected coverage is exactly ``k / (n + 1)``, ``k = ceil((n + 1)(1 - eps))``,
``n = n_cal``. We choose ``1 - eps = (k - 1/2) / (n + 1)``: then
``k / (n + 1) = 1 - eps + 1 / (2 (n + 1))``, in the middle of the issue's
window ``[1 - eps, 1 - eps + 1 / (n + 1)]``, half a step from either end, and
a rule one rank off (the naive ``ceil(n (1 - eps))``, ``k - 1``, ``k + 1``)
lands on an end or outside. ``N_SPLITS = 1000`` makes three standard errors
of the mean coverage several times smaller than that half step, so the test
checks

- the issue's window: ``1 - eps <= mean <= 1 - eps + 1/(n + 1) + 3 SE``;
- and, sharper, ``|mean - k / (n + 1)| <= 3 SE``,

and shows that the wrong rules fail them. Ties: the sparse scores are exactly
0 for the top label, an atom of mass = accuracy; ``1 - eps`` is chosen above
every model's accuracy so that the quantile is never on it (asserted), and the
tied regime is tested on its own (the lower bound holds, the upper does not).
"""

import math

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sksparsemax.conformal import SparseConformalClassifier, nonconformity_scores
from sksparsemax.conformal._calibration import quantile_rank
from sksparsemax.datasets import load_emotions
from sksparsemax.linear_model import EntmaxClassifier, SparsemaxClassifier

N_SPLITS = 1000
SCORES = [("sparsemax", 2.0), ("entmax", 1.5), ("softmax", None)]
# data set -> (number of training samples, n_cal, k): coverage (k - 1/2) / (n_cal + 1)
DESIGN = {"digits": (500, 399, 394), "emotions": (250, 99, 91), "synthetic": (1000, 199, 181)}
MODELS = ("sparsemax", "entmax", "hgb")


def _data(name):
    if name == "digits":
        return load_digits(return_X_y=True)
    if name == "emotions":  # multi-label, used as multi-class: the first label of each song
        X, Y = load_emotions(subset="train", return_X_y=True)
        X2, Y2 = load_emotions(subset="test", return_X_y=True)
        return np.vstack([X, X2]), np.argmax(np.vstack([Y, Y2]), axis=1)
    return make_classification(
        3000, n_features=20, n_informative=8, n_classes=5, flip_y=0.1, random_state=0
    )


def _model(name):
    if name == "hgb":  # non-linear, scikit-learn's own
        return HistGradientBoostingClassifier(
            max_iter=15, max_leaf_nodes=8, early_stopping=False, random_state=0
        )
    clf = SparsemaxClassifier() if name == "sparsemax" else EntmaxClassifier(alpha=1.5)
    return make_pipeline(StandardScaler(), clf)


@pytest.fixture(scope="module")
def pools():
    """(data, model) -> (decision values of the pool, labels of the pool), fitted once."""
    out = {}
    with threadpool_limits(1):
        for data in DESIGN:
            X, y = _data(data)
            perm = np.random.default_rng(0).permutation(len(y))
            train, pool = perm[: DESIGN[data][0]], perm[DESIGN[data][0] :]
            for model in MODELS:
                fitted = _model(model).fit(X[train], y[train])
                out[data, model] = (fitted.decision_function(X[pool]), y[pool])
    return out


def _true_scores(Z, y, mapping, alpha):
    S = nonconformity_scores(Z, mapping=mapping, alpha=alpha or 1.5)
    return S[np.arange(len(y)), y]


def _splits(n_pool, seed):
    return np.argsort(np.random.default_rng(seed).random((N_SPLITS, n_pool)), axis=1)


def _coverages(t, perm, n_cal, k):
    """Coverage of the test part of each split, with T = the k-th smallest of
    the calibration part (inf if k > n_cal); and the thresholds."""
    cal, test = t[perm[:, :n_cal]], t[perm[:, n_cal:]]
    T = np.full(len(perm), np.inf) if k > n_cal else np.partition(cal, k - 1, axis=1)[:, k - 1]
    return (test <= T[:, None]).mean(axis=1), T


def _in_window(cov, coverage, n_cal):
    mean, se = cov.mean(), cov.std(ddof=1) / math.sqrt(len(cov))
    return coverage <= mean <= coverage + 1 / (n_cal + 1) + 3 * se


def _at_expectation(cov, k, n_cal):
    mean, se = cov.mean(), cov.std(ddof=1) / math.sqrt(len(cov))
    return abs(mean - k / (n_cal + 1)) <= 3 * se


CASES = [(d, m, s, a) for d in DESIGN for m in MODELS for s, a in SCORES]


@pytest.mark.parametrize("data,model,mapping,alpha", CASES, ids=["-".join(map(str, c[:3])) for c in CASES])
def test_mean_coverage_is_guaranteed(pools, data, model, mapping, alpha):
    Z, y = pools[data, model]
    _, n_cal, k = DESIGN[data]
    coverage = (k - 0.5) / (n_cal + 1)
    assert quantile_rank(n_cal, coverage) == k
    t = _true_scores(Z, y, mapping, alpha)
    perm = _splits(len(y), seed=1)
    cov, T = _coverages(t, perm, n_cal, k)
    # the continuous regime: the quantile is never on the atom at 0 (nor on a tie)
    assert (T > 0).all()
    values, counts = np.unique(t, return_counts=True)
    assert np.mean(np.isin(T, values[counts > 1])) < 0.01
    se = cov.std(ddof=1) / math.sqrt(N_SPLITS)
    assert 3 * se < 0.5 / (n_cal + 1)  # the design resolves half a rank
    assert _in_window(cov, coverage, n_cal), (cov.mean(), coverage)
    assert _at_expectation(cov, k, n_cal), (cov.mean(), k / (n_cal + 1))
    # the wrong rules are caught: the naive quantile and one rank off
    naive = math.ceil(n_cal * coverage)
    assert naive == k - 1
    for wrong in (k - 1, k + 1):
        bad, _ = _coverages(t, perm, n_cal, wrong)
        assert not _at_expectation(bad, k, n_cal)
    assert not _in_window(_coverages(t, perm, n_cal, naive)[0], coverage, n_cal)


def test_estimator_reproduces_the_vectorised_rule(pools):
    """One split through SparseConformalClassifier(cv="prefit") gives the same
    threshold and sets as the vectorised computation above."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    Z, y = pools["synthetic", "hgb"]

    class Scores(ClassifierMixin, BaseEstimator):  # a prefit model that returns Z[row]
        classes_ = np.unique(y)

        def fit(self, X, y):
            return self

        def __sklearn_is_fitted__(self):
            return True

        def decision_function(self, X):
            return Z[np.asarray(X)[:, 0].astype(int)]

    _, n_cal, k = DESIGN["synthetic"]
    coverage = (k - 0.5) / (n_cal + 1)
    perm = _splits(len(y), seed=2)[0]
    cal, test = perm[:n_cal], perm[n_cal:]
    for mapping, alpha in SCORES:
        clf = SparseConformalClassifier(Scores(), mapping=mapping, alpha=alpha or 1.5,
                                        coverage=coverage, cv="prefit")
        clf.fit(cal[:, None], y[cal])
        t = _true_scores(Z, y, mapping, alpha)
        assert clf.temperature_ == np.sort(t[cal])[k - 1]
        S = nonconformity_scores(Z[test], mapping=mapping, alpha=alpha or 1.5)
        np.testing.assert_array_equal(clf.predict_set(test[:, None]), S <= clf.temperature_)


def test_ties_at_zero_keep_the_lower_bound(pools):
    """Coverage below the accuracy: the quantile is the atom at 0, every set is
    the top label, and the coverage is the accuracy (>= 1 - eps, but above the
    upper end of the window: the upper bound needs continuous scores)."""
    Z, y = pools["digits", "sparsemax"]
    t = _true_scores(Z, y, "sparsemax", None)
    accuracy = np.mean(t == 0)
    # The atom at 0 holds about 95% of the pool: at coverage 0.85 every one of
    # the splits' 199 calibration scores has at least k zeros (k is about 6
    # standard deviations of the number of zeros below its mean).
    n_cal, coverage = 199, 0.85
    k = quantile_rank(n_cal, coverage)
    cov, T = _coverages(t, _splits(len(y), seed=3), n_cal, k)
    assert (T == 0).all()
    assert cov.mean() >= coverage
    assert cov.mean() > coverage + 1 / (n_cal + 1)
    assert abs(cov.mean() - accuracy) < 0.01


def test_mondrian_per_class_coverage(pools):
    """Class-conditional thresholds: every class is covered at 1 - eps on average."""
    Z, y = pools["synthetic", "sparsemax"]
    t = _true_scores(Z, y, "sparsemax", None)
    n_cal, coverage = 500, 0.9
    perm = _splits(len(y), seed=4)[:300]
    cal, test = perm[:, :n_cal], perm[:, n_cal:]
    for c in np.unique(y):
        masked = np.sort(np.where(y[cal] == c, t[cal], np.inf), axis=1)
        n_c = (y[cal] == c).sum(axis=1)
        k_c = np.array([quantile_rank(n, coverage) for n in n_c])
        assert (k_c <= n_c).all()
        T = masked[np.arange(len(perm)), k_c - 1]
        hit = (t[test] <= T[:, None]) & (y[test] == c)
        cov = hit.sum(axis=1) / (y[test] == c).sum(axis=1)
        se = cov.std(ddof=1) / math.sqrt(len(cov))
        expected = np.mean(k_c / (n_c + 1))
        assert coverage <= expected
        assert abs(cov.mean() - expected) <= 3 * se, (c, cov.mean(), expected)
