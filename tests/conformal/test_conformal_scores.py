"""The non-conformity scores: brute-force references, exactness, edge cases, errors."""

import tracemalloc

import numpy as np
import pytest

from sksparsemax.conformal import conformal_quantile, nonconformity_scores
from sksparsemax.conformal._scores import get_score, set_distribution
from sksparsemax.transforms import entmax_bisect, softmax, sparsemax

ALPHAS = [1.25, 1.5, 2.0, 3.0, 10.0]


def _naive(Z, alpha):
    """(alpha - 1) ||(z - z_y)_+||_{1/(alpha-1)} by the definition (an n x K x K array)."""
    D = np.maximum(Z[:, None, :] - Z[:, :, None], 0.0)  # D[i, y, j] = (z_j - z_y)_+
    p = 1.0 / (alpha - 1.0)
    return (alpha - 1.0) * np.sum(D**p, axis=2) ** (1.0 / p)


def _rows(seed=0, n=60, K=7):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, K)) * rng.choice([0.01, 1.0, 30.0], size=(n, 1))
    Z[::5, 2] = Z[::5, 4]  # ties
    Z[1::7, :3] = Z[1::7, :1]  # a three-way tie at some rank
    Z[2::9] = Z[2::9].max(axis=1, keepdims=True)  # rows all tied
    return Z


def test_sparsemax_score_is_the_total_margin():
    Z = _rows()
    S = nonconformity_scores(Z)
    np.testing.assert_allclose(S, np.maximum(Z[:, None, :] - Z[:, :, None], 0).sum(2), atol=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_entmax_score_matches_its_definition(alpha):
    Z = _rows(1)
    S = nonconformity_scores(Z, mapping="entmax", alpha=alpha)
    np.testing.assert_allclose(S, _naive(Z, alpha), rtol=1e-12, atol=1e-12)


def test_entmax_2_is_sparsemax_and_softmax_is_lac():
    Z = _rows(2)
    np.testing.assert_allclose(
        nonconformity_scores(Z, mapping="entmax", alpha=2.0), nonconformity_scores(Z), atol=1e-12
    )
    np.testing.assert_allclose(nonconformity_scores(Z, mapping="softmax"), 1 - softmax(Z))


@pytest.mark.parametrize("mapping,alpha", [("sparsemax", 2.0)] + [("entmax", a) for a in ALPHAS])
def test_support_of_the_mapping_at_T_is_the_strict_sublevel_set(mapping, alpha):
    """Brute force: y in supp mapping(z / T) iff s(z, y) < T, over a grid of T."""
    Z = _rows(3, n=40)
    S = nonconformity_scores(Z, mapping=mapping, alpha=alpha)
    checked = 0
    for T in np.geomspace(1e-3, 1e2, 31):
        P = sparsemax(Z / T) if mapping == "sparsemax" else entmax_bisect(Z / T, alpha=alpha)
        clear = np.abs(S - T) > 1e-9 * T  # leave the numerically ambiguous boundary out
        np.testing.assert_array_equal((P > 0)[clear], (S < T)[clear])
        checked += clear.sum()
    assert checked > 0.99 * 31 * Z.size


@pytest.mark.parametrize("mapping", ["sparsemax", "entmax", "softmax"])
def test_sets_are_top_k_and_ties_are_exact(mapping):
    Z = _rows(4)
    S = nonconformity_scores(Z, mapping=mapping, alpha=1.5)
    order = np.argsort(-Z, axis=1, kind="stable")
    Ss = np.take_along_axis(S, order, axis=1)
    Zs = np.take_along_axis(Z, order, axis=1)
    assert (np.diff(Ss, axis=1) >= 0).all()  # never decreasing along the ranking
    tied = Zs[:, 1:] == Zs[:, :-1]
    assert (Ss[:, 1:][tied] == Ss[:, :-1][tied]).all()  # bit-identical at ties
    if mapping != "softmax":
        top = Z == Z.max(axis=1, keepdims=True)
        assert (S[top] == 0).all() and (S[~top] > 0).all()
    # hence any threshold gives a top-k set of z
    for T in np.quantile(S, [0.1, 0.5, 0.9]):
        k = (S <= T).sum(axis=1)
        kth = np.take_along_axis(Zs, np.maximum(k - 1, 0)[:, None], axis=1)
        np.testing.assert_array_equal(S <= T, (Z >= kth) & (k[:, None] > 0))


def test_shift_invariance_large_scores_and_float32():
    Z = _rows(5)
    S = nonconformity_scores(Z)
    np.testing.assert_allclose(nonconformity_scores(Z + 1e6), S, atol=1e-8)
    np.testing.assert_allclose(nonconformity_scores(Z * 1e150), S * 1e150, rtol=1e-12)
    Z32 = Z.astype(np.float32)
    S32 = nonconformity_scores(Z32, mapping="entmax")
    assert S32.dtype == np.float64
    np.testing.assert_allclose(S32, _naive(Z32.astype(np.float64), 1.5), rtol=1e-12, atol=1e-12)
    big = nonconformity_scores([[1e308, -1e308, 0.0]])
    assert big[0, 0] == 0 and big[0, 1] == np.inf and np.isfinite(big[0, 2])


@pytest.mark.parametrize("mapping", ["sparsemax", "entmax"])
def test_minus_inf_is_a_mask(mapping):
    Z = np.array([[1.0, -np.inf, 0.0, -np.inf], [-np.inf, 2.0, 2.0, -np.inf]])
    S = nonconformity_scores(Z, mapping=mapping)
    assert np.isinf(S[Z == -np.inf]).all()
    np.testing.assert_allclose(S[0, [0, 2]], [0.0, 1.0 if mapping == "sparsemax" else 0.5])
    assert (S[1, 1:3] == 0).all()
    np.testing.assert_array_equal(nonconformity_scores(Z, mapping="softmax")[Z == -np.inf], 1.0)


def test_no_n_by_K_by_K_array():
    Z = np.random.default_rng(0).standard_normal((2000, 100))
    for mapping in ("sparsemax", "entmax"):
        tracemalloc.start()
        nonconformity_scores(Z, mapping=mapping)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 12 * Z.nbytes, (mapping, peak / Z.nbytes)  # n K K would be 100 x


@pytest.mark.parametrize(
    "Z,match",
    [
        ([1.0, 2.0], "2-D"),
        ([[1.0, np.nan]], "NaN or \\+inf"),
        ([[1.0, np.inf]], "NaN or \\+inf"),
        ([[0.0, 1.0], [-np.inf, -np.inf]], "all -inf \\(row 1\\)"),
    ],
)
def test_bad_scores_raise(Z, match):
    with pytest.raises(ValueError, match=match):
        nonconformity_scores(Z)


def test_bad_mapping_and_alpha_raise():
    with pytest.raises(ValueError, match="mapping must be"):
        nonconformity_scores([[0.0, 1.0]], mapping="sparse")
    with pytest.raises(ValueError, match="alpha must be > 1"):
        nonconformity_scores([[0.0, 1.0]], mapping="entmax", alpha=1.0)
    with pytest.raises(ValueError, match="alpha must be a finite number >= 1"):
        nonconformity_scores([[0.0, 1.0]], mapping="entmax", alpha=0.5)
    with pytest.raises(TypeError, match="alpha must be a real number"):
        nonconformity_scores([[0.0, 1.0]], mapping="entmax", alpha="1.5")
    with pytest.raises(TypeError, match="real numbers"):
        nonconformity_scores([["a", "b"]])


# -- the distribution on the set ---------------------------------------------------


@pytest.mark.parametrize("mapping,alpha", [("sparsemax", 2.0), ("entmax", 1.5), ("entmax", 4.0)])
def test_distribution_support_is_exactly_the_set_at_the_boundary(mapping, alpha):
    """T = a score of the data: the boundary labels (s = T) are in the set and
    in the support; the other entries are the mapping of z / T."""
    Z = _rows(6, n=200)
    scorer = get_score(mapping, alpha)
    S = scorer.scores(Z)
    for T in np.unique(S[(S > 0) & np.isfinite(S)])[::37]:
        in_set = S <= T
        P = set_distribution(scorer, Z, in_set, T)
        np.testing.assert_array_equal(P > 0, in_set)
        assert (S == T).any()
        ref = sparsemax(Z / T) if mapping == "sparsemax" else entmax_bisect(Z / T, alpha=alpha)
        np.testing.assert_allclose(P, ref, atol=1e-12)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_distribution_limits_zero_and_infinite_temperature():
    Z = np.array([[3.0, 3.0, 1.0], [0.0, -1.0, -5.0]])
    scorer = get_score("sparsemax", 2.0)
    S = scorer.scores(Z)
    P0 = set_distribution(scorer, Z, S <= 0.0, 0.0)
    np.testing.assert_array_equal(P0, [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    Pinf = set_distribution(scorer, Z, S <= np.inf, np.inf)
    np.testing.assert_array_equal(Pinf, np.full((2, 3), 1 / 3))
    # a tiny positive temperature does not overflow
    Pt = set_distribution(scorer, Z, S <= 1e-300, 1e-300)
    np.testing.assert_array_equal(Pt, P0)


def test_softmax_distribution_and_empty_sets():
    Z = np.log(np.array([[0.5, 0.3, 0.2], [0.34, 0.33, 0.33]]))
    scorer = get_score("softmax", 1.5)
    S = scorer.scores(Z)
    T = conformal_quantile(np.array([0.6, 0.6]), 0.5)  # = 0.6
    in_set = S <= T
    assert in_set[0].tolist() == [True, False, False]
    assert not in_set[1].any()  # LAC sets can be empty
    P = set_distribution(scorer, Z, in_set, T)
    np.testing.assert_allclose(P[0], softmax(np.where(in_set[0], Z[0], -np.inf)))
    np.testing.assert_array_equal(P[1], [1.0, 0.0, 0.0])  # empty set: the top label
