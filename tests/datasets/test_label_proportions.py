"""make_label_proportions: the 2016 sparsemax paper's label-proportion generator.

Statistical checks use fixed seeds (so they are deterministic) and compare with
distributions computed independently here with scipy.stats.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sksparsemax.datasets import make_label_proportions


def test_shapes_dtypes_and_defaults():
    X, Y, Q = make_label_proportions(random_state=0)
    assert X.shape == (100, 10) and Y.shape == (100, 10) and Q.shape == (100, 10)
    assert X.dtype == np.float64 and Y.dtype == np.int64 and Q.dtype == np.float64
    X, Y, Q, prior, words = make_label_proportions(
        30, 7, n_features=12, return_distributions=True, random_state=0
    )
    assert X.shape == (30, 12) and Y.shape == (30, 7) and Q.shape == (30, 7)
    assert prior.shape == (7,) and words.shape == (7, 12)
    np.testing.assert_allclose(prior.sum(), 1.0)
    np.testing.assert_allclose(words.sum(axis=1), 1.0)
    assert (prior > 0).all() and (words > 0).all()


@settings(max_examples=30, deadline=None)
@given(
    n_samples=st.integers(1, 40),
    n_labels=st.integers(1, 12),
    n_features=st.none() | st.integers(1, 15),
    length=st.floats(1, 300),
    proportions=st.sampled_from(["uniform", "random"]),
    seed=st.integers(0, 2**31 - 1),
)
def test_invariants(n_samples, n_labels, n_features, length, proportions, seed):
    X, Y, Q = make_label_proportions(
        n_samples,
        n_labels,
        n_features=n_features,
        document_length=length,
        proportions=proportions,
        random_state=seed,
    )
    assert X.shape == (n_samples, n_labels if n_features is None else n_features)
    np.testing.assert_allclose(Q.sum(axis=1), 1.0)
    assert (Q >= 0).all()
    np.testing.assert_array_equal(Q > 0, Y == 1)
    m = Y.sum(axis=1)
    assert (m >= 1).all() and (m <= n_labels).all()
    assert (X >= 0).all() and (X == np.round(X)).all()
    assert (X.sum(axis=1) >= 1).all()  # a zero length is redrawn
    if proportions == "uniform":
        np.testing.assert_allclose(Q, Y / m[:, None])


def test_random_proportions_are_not_uniform():
    _, Y, Q = make_label_proportions(500, 10, proportions="random", random_state=1)
    multi = Y.sum(axis=1) >= 2
    assert multi.sum() > 50
    spread = np.array([np.ptp(q[y == 1]) for q, y in zip(Q[multi], Y[multi])])
    assert (spread > 0).all()
    # Two active labels with weights U1/(U1+U2), U ~ Uniform(0, 1): the share of
    # the first has mean 1/2 and is spread over (0, 1)
    two = Y.sum(axis=1) == 2
    first = np.array([q[y == 1][0] for q, y in zip(Q[two], Y[two])])
    assert abs(first.mean() - 0.5) < 5 * 0.3 / np.sqrt(two.sum())
    assert first.min() < 0.2 and first.max() > 0.8


@pytest.mark.parametrize("length", [200, 1000])
def test_document_lengths_are_poisson(length):
    n = 4000
    X, _, _ = make_label_proportions(n, 10, document_length=length, random_state=2)
    lengths = X.sum(axis=1)
    assert abs(lengths.mean() - length) < 5 * np.sqrt(length / n)
    assert abs(lengths.var() / length - 1) < 5 * np.sqrt(2 / n)


@pytest.mark.parametrize(("n_labels", "rate"), [(10, 1.0), (3, 1.0), (4, 3.0)])
def test_labels_per_document_is_truncated_poisson(n_labels, rate):
    n = 20000
    _, Y, _ = make_label_proportions(
        n, n_labels, document_length=5, labels_per_document=rate, random_state=3
    )
    m = Y.sum(axis=1)
    k = np.arange(1, n_labels + 1)
    pmf = stats.poisson.pmf(k, rate)
    expected = n * pmf / pmf.sum()
    observed = np.array([(m == i).sum() for i in k])
    assert observed.sum() == n  # nothing outside [1, K]
    keep = expected >= 5  # pool the sparse tail into one bin
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_labels_are_drawn_from_the_prior_without_repeats():
    prior = np.array([0.6, 0.3, 0.1])
    n = 30000
    _, Y, _ = make_label_proportions(
        n, 3, document_length=5, labels_per_document=1.5, class_prior=prior, random_state=4
    )
    m = Y.sum(axis=1)
    # one label: drawn from the prior
    single = Y[m == 1]
    assert stats.chisquare(single.sum(axis=0), prior * len(single)).pvalue > 1e-3
    # two labels, drawn one after the other without repeats:
    # P({i, j}) = p_i p_j / (1 - p_i) + p_j p_i / (1 - p_j)
    pairs = list(itertools.combinations(range(3), 2))
    prob = np.array(
        [prior[i] * prior[j] * (1 / (1 - prior[i]) + 1 / (1 - prior[j])) for i, j in pairs]
    )
    np.testing.assert_allclose(prob.sum(), 1.0)
    double = Y[m == 2]
    counts = np.array([(double[:, i] & double[:, j]).sum() for i, j in pairs])
    assert counts.sum() == len(double)
    assert stats.chisquare(counts, prob * len(double)).pvalue > 1e-3


@pytest.mark.parametrize("proportions", ["uniform", "random"])
def test_words_come_from_the_mixture(proportions):
    n, K, V = 3000, 5, 8
    X, Y, Q, _, words = make_label_proportions(
        n, K, n_features=V, document_length=300, proportions=proportions,
        return_distributions=True, random_state=5,
    )
    lengths = X.sum(axis=1)
    expected = (lengths[:, None] * (Q @ words)).sum(axis=0)
    assert (np.abs(X.sum(axis=0) - expected) < 5 * np.sqrt(expected)).all()


def test_each_document_follows_its_own_proportions():
    # one word per label: the counts of a document are Multinomial(length, q)
    K, n, L = 6, 400, 2000
    X, Y, Q = make_label_proportions(
        n, K, document_length=L, proportions="random", word_distributions=np.eye(K),
        random_state=6,
    )
    assert (X[Y == 0] == 0).all()  # no word of an inactive label
    lengths = X.sum(axis=1, keepdims=True)
    # exact two-sided binomial tails of every active count, Bonferroni-corrected
    active = Y == 1
    counts, trials, q = X[active], np.broadcast_to(lengths, X.shape)[active], Q[active]
    tail = np.minimum(stats.binom.cdf(counts, trials, q), stats.binom.sf(counts - 1, trials, q))
    assert (2 * tail).min() > 1e-3 / active.sum()


def test_given_distributions_are_used():
    _, _, _, prior, words = make_label_proportions(10, 4, return_distributions=True, random_state=7)
    out = make_label_proportions(
        10, 4, class_prior=prior * 3, word_distributions=words, return_distributions=True,
        random_state=8,
    )
    np.testing.assert_allclose(out[3], prior)
    np.testing.assert_allclose(out[4], words)
    # labels with prior 0 are never active, and the count is capped at K+ = 2
    _, Y, _ = make_label_proportions(
        2000, 4, class_prior=[0.5, 0, 0.5, 0], labels_per_document=5, random_state=9
    )
    assert Y[:, [1, 3]].sum() == 0
    assert set(Y.sum(axis=1)) == {1, 2}
    # n_features is taken from word_distributions
    X, _, _ = make_label_proportions(3, 2, word_distributions=np.ones((2, 5)), random_state=0)
    assert X.shape == (3, 5)


def test_seeding():
    a = make_label_proportions(50, 5, random_state=42)
    b = make_label_proportions(50, 5, random_state=42)
    c = make_label_proportions(50, 5, random_state=43)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], c[0])
    g1 = make_label_proportions(50, 5, random_state=np.random.default_rng(1))
    g2 = make_label_proportions(50, 5, random_state=np.random.default_rng(1))
    r1 = make_label_proportions(50, 5, random_state=np.random.RandomState(1))
    r2 = make_label_proportions(50, 5, random_state=np.random.RandomState(1))
    np.testing.assert_array_equal(g1[0], g2[0])
    np.testing.assert_array_equal(r1[0], r2[0])
    # a shared generator advances between calls
    rng = np.random.default_rng(3)
    assert not np.array_equal(
        make_label_proportions(50, 5, random_state=rng)[0],
        make_label_proportions(50, 5, random_state=rng)[0],
    )


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_samples": 0}, "n_samples"),
        ({"n_samples": 2.5}, "n_samples"),
        ({"n_samples": True}, "n_samples"),
        ({"n_labels": 0}, "n_labels"),
        ({"n_labels": "3"}, "n_labels"),
        ({"document_length": 0}, "document_length"),
        ({"document_length": 0.5}, "document_length"),
        ({"document_length": float("nan")}, "document_length"),
        ({"document_length": float("inf")}, "document_length"),
        ({"proportions": "equal"}, "proportions"),
        ({"proportions": None}, "proportions"),
        ({"n_features": 0}, "n_features"),
        ({"labels_per_document": 0}, "labels_per_document"),
        ({"labels_per_document": -1.0}, "labels_per_document"),
        ({"class_prior": [1, 1]}, "class_prior"),
        ({"class_prior": [-1] + [1] * 9}, "class_prior"),
        ({"class_prior": [0] * 10}, "class_prior"),
        ({"word_distributions": np.ones((10, 3)), "n_features": 4}, "word_distributions"),
        ({"word_distributions": np.ones(10)}, "word_distributions"),
        ({"return_distributions": "yes"}, "return_distributions"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_label_proportions(**kwargs)
