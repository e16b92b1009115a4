"""Properties of sparsemax and sparsemax_threshold against independent references."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sksparsemax.transforms import sparsemax, sparsemax_threshold

PROPS = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=20, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


def _scale(z):
    """Magnitude that bounds the rounding error of a row (at least 1)."""
    z = np.asarray(z, dtype=np.float64)
    fin = z[np.isfinite(z)]
    return max(1.0, float(np.max(np.abs(fin))))


def _atol(z, dtype=np.float64):
    z = np.asarray(z)
    return 8 * z.shape[-1] * np.finfo(dtype).eps * _scale(z)


@PROPS
@given(data=st.data())
def test_on_simplex_and_equals_exact_closed_form(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    P = sparsemax(Z)
    assert P.shape == Z.shape and P.dtype == np.float64
    ref.assert_on_simplex(P)
    for z, p in zip(Z, P):
        np.testing.assert_allclose(p, ref.sparsemax(z), rtol=0, atol=_atol(z))
        # masks get exactly zero
        assert np.all(p[np.isneginf(z)] == 0.0)


@PROPS
@given(data=st.data())
def test_kkt_conditions(ref, data):
    """p = [z - tau]_+, sum p = 1, and z_i <= tau outside the support."""
    z = data.draw(ref.score_vectors(masks=data.draw(st.booleans())))
    p = sparsemax(z)
    tau, size = sparsemax_threshold(z)
    assert tau.shape == () and size.shape == ()
    tau = float(tau)
    tol = _atol(z)
    fin = np.isfinite(z)
    np.testing.assert_allclose(p[fin], np.maximum(z[fin] - tau, 0.0), rtol=0, atol=tol)
    np.testing.assert_allclose(p.sum(), 1.0, rtol=0, atol=tol)
    outside = p == 0
    assert np.all(z[outside] <= tau + tol)
    inside = p > 0
    assert np.all(z[inside] > tau - tol)
    # tau in [max z - 1, max z)
    zmax = z[fin].max()
    assert zmax - 1 - tol <= tau < zmax
    # the support size is the number of nonzero probabilities
    assert int(size) == np.count_nonzero(p)


@PROPS
@given(data=st.data())
def test_threshold_and_support_match_sorted_closed_form(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    tau, size = sparsemax_threshold(Z)
    assert tau.shape == Z.shape[:1] and size.shape == Z.shape[:1]
    assert tau.dtype == np.float64
    assert np.issubdtype(size.dtype, np.integer)
    for z, t, s in zip(Z, tau, size):
        _, tau_exact, k_exact = ref.sparsemax_exact(z)
        tol = _atol(z)
        np.testing.assert_allclose(t, float(tau_exact), rtol=0, atol=tol)
        # Entries within rounding of the exact threshold may legitimately be
        # counted either way; every other entry must be counted correctly.
        fin = z[np.isfinite(z)]
        d = fin - float(tau_exact)
        clearly_in = int(np.count_nonzero(d > tol))
        near = int(np.count_nonzero(np.abs(d) <= tol))
        assert clearly_in <= s <= clearly_in + near
        assert clearly_in <= k_exact <= clearly_in + near


@PROPS
@given(data=st.data())
def test_support_size_exact_on_dyadic_grid(ref, data):
    """On multiples of 1/8 the arithmetic is exact: the support must match exactly,
    including the many points that lie exactly on a kink (z_i == tau)."""
    Z = data.draw(ref.score_matrices(kinds=("grid",), masks=data.draw(st.booleans())))
    tau, size = sparsemax_threshold(Z)
    P = sparsemax(Z)
    for z, t, s, p in zip(Z, tau, size, P):
        pe, tau_exact, k_exact = ref.sparsemax_exact(z)
        assert s == k_exact
        assert np.count_nonzero(p) == np.count_nonzero(pe)
        np.testing.assert_allclose(t, float(tau_exact), rtol=0, atol=1e-15)


@PROPS
@given(data=st.data())
def test_equals_brute_force_projection(ref, data):
    z = data.draw(ref.score_vectors(max_size=6, masks=data.draw(st.booleans())))
    np.testing.assert_allclose(
        sparsemax(z), ref.sparsemax_brute_force(z), rtol=0, atol=_atol(z)
    )


@SLOW
@given(data=st.data())
def test_equals_slsqp_quadratic_programme(ref, data):
    z = data.draw(
        ref.score_vectors(max_size=5, kinds=("moderate", "ties", "grid", "clustered"),
                          masks=data.draw(st.booleans()))
    )
    np.testing.assert_allclose(sparsemax(z), ref.sparsemax_qp(z), rtol=0, atol=1e-6)


@PROPS
@given(data=st.data())
def test_shift_invariance_exact_shift(ref, data):
    """Shifting grid scores by a constant that keeps them exactly representable."""
    z = data.draw(ref.score_vectors(kinds=("grid", "ties"), masks=data.draw(st.booleans())))
    z = np.round(z * 8) / 8  # ties pool -> grid too
    c = data.draw(st.sampled_from([-3.0, 1.0, 1024.0, -1e6, 1e8, 2.0**40]))
    zc = z + c
    assert np.array_equal(zc - c, z)  # the shift is exact
    np.testing.assert_allclose(sparsemax(zc), sparsemax(z), rtol=0, atol=1e-14)
    t, s = sparsemax_threshold(z)
    tc, sc = sparsemax_threshold(zc)
    assert s == sc
    np.testing.assert_allclose(tc - c, t, rtol=0, atol=1e-14 * max(1.0, abs(c)))


@PROPS
@given(data=st.data())
def test_shift_invariance_general(ref, data):
    z = data.draw(ref.score_vectors(masks=data.draw(st.booleans())))
    c = data.draw(st.floats(-100, 100))
    np.testing.assert_allclose(
        sparsemax(z + c), sparsemax(z), rtol=0, atol=_atol(z) + _atol(z + c)
    )


@PROPS
@given(data=st.data())
def test_permutation_equivariance(ref, data):
    z = data.draw(ref.score_vectors(masks=data.draw(st.booleans())))
    perm = np.array(data.draw(st.permutations(range(z.size))))
    np.testing.assert_allclose(sparsemax(z[perm]), sparsemax(z)[perm], rtol=0, atol=_atol(z))
    t1, s1 = sparsemax_threshold(z)
    t2, s2 = sparsemax_threshold(z[perm])
    np.testing.assert_allclose(t1, t2, rtol=0, atol=_atol(z))


@PROPS
@given(data=st.data())
def test_float32_agrees_with_float64(ref, data):
    Z = data.draw(ref.score_matrices(kinds=("moderate", "ties", "grid", "tiny_spread"),
                                     masks=data.draw(st.booleans())))
    Z32 = Z.astype(np.float32)
    P32 = sparsemax(Z32)
    assert P32.dtype == np.float32
    ref.assert_on_simplex(P32)
    P64 = sparsemax(Z32.astype(np.float64))
    np.testing.assert_allclose(P32, P64, rtol=0, atol=2e-6)
    tau32, size32 = sparsemax_threshold(Z32)
    assert tau32.dtype == np.float32
    tau64, _ = sparsemax_threshold(Z32.astype(np.float64))
    assert np.all(np.abs(tau32 - tau64) <= 2e-6 * np.maximum(1, np.abs(tau64)))
    np.testing.assert_array_equal(size32, np.count_nonzero(P32, axis=-1))


def test_two_classes_grid():
    """K = 2: from the closed form, both entries are in the support iff
    |z1 - z2| < 1, and then tau = (z1 + z2 - 1)/2 so p1 = (z1 - z2 + 1)/2;
    otherwise the larger one gets everything.  Together:
    p1 = clip((z1 - z2 + 1)/2, 0, 1)."""
    g = np.linspace(-2, 2, 41)
    z1, z2 = np.meshgrid(g, g, indexing="ij")
    Z = np.stack([z1.ravel(), z2.ravel()], axis=1)
    P = sparsemax(Z)
    expected = np.clip((Z[:, 0] - Z[:, 1] + 1) / 2, 0, 1)
    np.testing.assert_allclose(P[:, 0], expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(P[:, 1], 1 - expected, rtol=0, atol=1e-15)
    # a few random (non-grid) pairs too
    rng = np.random.default_rng(0)
    Z = rng.normal(scale=2, size=(500, 2))
    np.testing.assert_allclose(
        sparsemax(Z)[:, 0], np.clip((Z[:, 0] - Z[:, 1] + 1) / 2, 0, 1), rtol=0, atol=1e-14
    )


@PROPS
@given(data=st.data())
def test_small_spread_gives_full_support_closed_form(ref, data):
    """If max z - min z < 1/K every entry is in the support (z_(K) - tau =
    z_(K) - mean z + 1/K > 0), so p = z - mean(z) + 1/K."""
    K = data.draw(st.integers(1, 8))
    z = np.array(data.draw(st.lists(st.floats(0, 0.99 / K), min_size=K, max_size=K)))
    z = z + data.draw(st.floats(-5, 5))
    p = sparsemax(z)
    np.testing.assert_allclose(p, z - z.mean() + 1.0 / K, rtol=0, atol=1e-13)
    assert sparsemax_threshold(z)[1] == K


@PROPS
@given(data=st.data())
def test_large_scale_gives_argmax(ref, data):
    """If the largest score beats the second by at least 1, p = e_argmax."""
    z = data.draw(ref.score_vectors(min_size=2, kinds=("moderate", "large_spread")))
    order = np.argsort(-z)
    assume(z[order[0]] - z[order[1]] > 1e-3)
    t = 1.0 / (z[order[0]] - z[order[1]])  # now the gap is exactly >= 1
    p = sparsemax(t * z)
    expected = np.zeros_like(z)
    expected[order[0]] = 1.0
    if (t * z)[order[0]] - (t * z)[order[1]] >= 1:
        np.testing.assert_array_equal(p, expected)
    p = sparsemax(4 * t * z)
    np.testing.assert_array_equal(p, expected)


@settings(max_examples=12, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), K=st.sampled_from([9, 17, 33, 64, 200, 1000]))
def test_wide_rows_and_long_batches_match_exact(ref, seed, K):
    """Wide rows (the threshold search has a separate path for K > 32) and
    batches of rows of mixed kinds, which converge after different numbers of
    steps, row by row against the exact closed form."""
    rng = np.random.default_rng(seed)
    Z = ref.random_rows(rng, max(2, 2000 // K), K)
    P = sparsemax(Z)
    tau, size = sparsemax_threshold(Z)
    ref.assert_on_simplex(P)
    for z, p, t, s in zip(Z, P, tau, size):
        pe, tau_exact, k_exact = ref.sparsemax_exact(z)
        tol = _atol(z)
        np.testing.assert_allclose(p, pe, rtol=0, atol=tol)
        np.testing.assert_allclose(t, float(tau_exact), rtol=0, atol=tol)
        d = z[np.isfinite(z)] - float(tau_exact)
        clearly_in = int(np.count_nonzero(d > tol))
        assert clearly_in <= s <= clearly_in + int(np.count_nonzero(np.abs(d) <= tol))
