"""Properties of the top-k sparse-softmax (Sun et al. 2021)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sksparsemax.transforms import softmax, sparse_softmax

PROPS = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])

# Finite scores within ~700 of each other: exp does not underflow to 0.
FINITE_KINDS = ("moderate", "ties", "grid", "tiny_spread", "offset")


@PROPS
@given(data=st.data())
def test_equals_naive_topk_softmax(ref, data):
    """Against a selection-loop top-k (lowest index wins on ties) + softmax."""
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    k = data.draw(st.integers(1, Z.shape[1] + 2))
    P = sparse_softmax(Z, k)
    assert P.shape == Z.shape and P.dtype == np.float64
    ref.assert_on_simplex(P)
    expected = ref.apply_rows(lambda z: ref.sparse_softmax(z, k), Z)
    np.testing.assert_allclose(P, expected, rtol=1e-12, atol=1e-300)
    assert np.all(P[np.isneginf(Z)] == 0.0)


@PROPS
@given(data=st.data())
def test_support_has_exactly_min_k_K_entries(ref, data):
    Z = data.draw(ref.score_matrices(kinds=FINITE_KINDS))
    K = Z.shape[1]
    k = data.draw(st.integers(1, K + 2))
    P = sparse_softmax(Z, k)
    np.testing.assert_array_equal(np.count_nonzero(P, axis=1), min(k, K))
    # the support is the naive top-k set, ties included
    for z, p in zip(Z, P):
        assert np.flatnonzero(p).tolist() == ref.topk_indices(z, k)


@PROPS
@given(data=st.data())
def test_support_with_masks_at_most_k(ref, data):
    z = data.draw(ref.score_vectors(kinds=FINITE_KINDS, masks=True))
    k = data.draw(st.integers(1, z.size + 1))
    p = sparse_softmax(z, k)
    n_finite = int(np.isfinite(z).sum())
    assert np.count_nonzero(p) == min(k, n_finite)


def test_ties_lowest_index_wins():
    # every tie below is resolved by taking the lowest indices
    np.testing.assert_allclose(sparse_softmax([1.0, 1.0, 1.0, 1.0], 2), [0.5, 0.5, 0, 0])
    np.testing.assert_allclose(sparse_softmax([1.0, 1.0, 1.0, 1.0], 3), [1 / 3] * 3 + [0])
    z = np.array([0.0, 2.0, 1.0, 2.0, 1.0])
    # k = 1: the first of the two 2's
    np.testing.assert_array_equal(sparse_softmax(z, 1), [0, 1, 0, 0, 0])
    # k = 3: both 2's and the first 1 -> softmax([2, 1, 2]) on {1, 2, 3}
    e = np.exp([2.0, 1.0, 2.0])
    expected = np.zeros(5)
    expected[[1, 2, 3]] = e / e.sum()
    np.testing.assert_allclose(sparse_softmax(z, 3), expected, rtol=1e-15)
    # the same rule in every row of a batch and along axis 0
    Z = np.array([[3.0, 3.0, 3.0], [0.0, 5.0, 5.0], [-1.0, -1.0, -2.0]])
    np.testing.assert_array_equal(
        sparse_softmax(Z, 1), [[1, 0, 0], [0, 1, 0], [1, 0, 0]]
    )
    np.testing.assert_array_equal(
        sparse_softmax(Z.T, 1, axis=0), np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0]]).T
    )


@PROPS
@given(data=st.data())
def test_ties_lowest_index_wins_property(ref, data):
    """Rows with many repeated values: the kept tied entries are the lowest-index ones."""
    z = data.draw(ref.score_vectors(min_size=2, kinds=("ties", "grid")))
    k = data.draw(st.integers(1, z.size - 1))
    p = sparse_softmax(z, k)
    support = np.flatnonzero(p)
    kth = np.sort(z)[::-1][k - 1]
    tied = np.flatnonzero(z == kth)
    kept = np.intersect1d(support, tied)
    n_above = int(np.sum(z > kth))
    assert np.all(np.isin(np.flatnonzero(z > kth), support))
    assert kept.tolist() == tied[: k - n_above].tolist()


@PROPS
@given(data=st.data())
def test_k_at_least_K_is_softmax(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    K = Z.shape[1]
    k = data.draw(st.integers(K, K + 5))
    np.testing.assert_allclose(sparse_softmax(Z, k), softmax(Z), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(
        sparse_softmax(Z, k), ref.apply_rows(ref.softmax, Z), rtol=1e-12, atol=1e-300
    )


@PROPS
@given(data=st.data())
def test_k_equal_one_is_argmax(ref, data):
    z = data.draw(ref.score_vectors(masks=data.draw(st.booleans())))
    expected = np.zeros(z.size)
    expected[ref.topk_indices(z, 1)] = 1.0
    np.testing.assert_array_equal(sparse_softmax(z, 1), expected)


@PROPS
@given(data=st.data())
def test_permutation_equivariance_distinct_scores(ref, data):
    z = data.draw(ref.score_vectors(masks=data.draw(st.booleans())))
    fin = z[np.isfinite(z)]
    assume(np.unique(fin).size == fin.size)  # no ties: the top-k set is unambiguous
    k = data.draw(st.integers(1, z.size))
    perm = np.array(data.draw(st.permutations(range(z.size))))
    np.testing.assert_allclose(
        sparse_softmax(z[perm], k), sparse_softmax(z, k)[perm], rtol=1e-13, atol=1e-300
    )


@PROPS
@given(data=st.data())
def test_shift_invariance(ref, data):
    z = data.draw(ref.score_vectors(kinds=("grid", "ties"), masks=data.draw(st.booleans())))
    z = np.round(z * 8) / 8
    k = data.draw(st.integers(1, z.size + 1))
    c = data.draw(st.sampled_from([-7.0, 1.0, 1e6, -1e8, 2.0**40]))
    assert np.array_equal((z + c) - c, z)
    np.testing.assert_allclose(sparse_softmax(z + c, k), sparse_softmax(z, k), rtol=1e-13, atol=0)


@PROPS
@given(data=st.data())
def test_float32_agrees_with_float64(ref, data):
    Z = data.draw(ref.score_matrices(kinds=("moderate", "ties", "grid", "tiny_spread"),
                                     masks=data.draw(st.booleans())))
    k = data.draw(st.integers(1, Z.shape[1] + 1))
    Z32 = Z.astype(np.float32)
    P32 = sparse_softmax(Z32, k)
    assert P32.dtype == np.float32
    ref.assert_on_simplex(P32)
    np.testing.assert_allclose(
        P32, sparse_softmax(Z32.astype(np.float64), k), rtol=0, atol=1e-6
    )


@pytest.mark.parametrize("k", [np.int64(2), np.int32(2), 2])
def test_numpy_integer_k_accepted(k):
    np.testing.assert_allclose(sparse_softmax([0.0, 0.0, -1.0], k), [0.5, 0.5, 0.0])
