"""Properties of entmax15 and entmax_bisect against independent references."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sksparsemax.transforms import entmax15, entmax_bisect, softmax, sparsemax

PROPS = settings(max_examples=35, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=15, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(data=st.data())
def test_bisect_alpha2_equals_sparsemax(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    P = entmax_bisect(Z, alpha=2.0)
    assert P.dtype == np.float64
    ref.assert_on_simplex(P)
    np.testing.assert_allclose(P, sparsemax(Z), rtol=0, atol=1e-12)
    np.testing.assert_allclose(P, ref.apply_rows(ref.sparsemax, Z), rtol=0, atol=1e-12)


@PROPS
@given(data=st.data())
def test_bisect_alpha15_equals_entmax15(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    P = entmax_bisect(Z, alpha=1.5)
    ref.assert_on_simplex(P)
    np.testing.assert_allclose(P, entmax15(Z), rtol=0, atol=1e-12)


@PROPS
@given(data=st.data())
def test_bisect_alpha1_equals_softmax(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    P = entmax_bisect(Z, alpha=1.0)
    ref.assert_on_simplex(P)
    np.testing.assert_allclose(P, softmax(Z), rtol=0, atol=1e-12)
    np.testing.assert_allclose(P, ref.apply_rows(ref.softmax, Z), rtol=0, atol=1e-12)


@PROPS
@given(data=st.data())
def test_float32_bisect_agrees_with_exact_mappings(ref, data):
    Z = data.draw(ref.score_matrices(kinds=("moderate", "ties", "grid", "tiny_spread"),
                                     masks=data.draw(st.booleans())))
    Z32 = Z.astype(np.float32)
    Z64 = Z32.astype(np.float64)
    for alpha, exact in [(2.0, sparsemax), (1.5, entmax15), (1.0, softmax)]:
        P32 = entmax_bisect(Z32, alpha=alpha)
        assert P32.dtype == np.float32
        ref.assert_on_simplex(P32)
        np.testing.assert_allclose(P32, exact(Z64), rtol=0, atol=1e-6)
        E32 = exact(Z32)
        assert E32.dtype == np.float32
        np.testing.assert_allclose(P32, E32, rtol=0, atol=1e-6)


@PROPS
@given(data=st.data())
def test_entmax15_equals_naive_bisection(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    P = entmax15(Z)
    assert P.dtype == np.float64
    ref.assert_on_simplex(P)
    np.testing.assert_allclose(
        P, ref.apply_rows(lambda z: ref.entmax(z, 1.5), Z), rtol=0, atol=1e-12
    )
    assert np.all(P[np.isneginf(Z)] == 0.0)


@PROPS
@given(data=st.data())
def test_entmax15_float32(ref, data):
    Z = data.draw(ref.score_matrices(kinds=("moderate", "ties", "grid", "tiny_spread"),
                                     masks=data.draw(st.booleans())))
    Z32 = Z.astype(np.float32)
    P32 = entmax15(Z32)
    assert P32.dtype == np.float32
    ref.assert_on_simplex(P32)
    np.testing.assert_allclose(P32, entmax15(Z32.astype(np.float64)), rtol=0, atol=1e-6)


@PROPS
@given(data=st.data(), alpha=st.sampled_from([1.1, 1.25, 1.75, 2.5, 3.0, 4.0]))
def test_bisect_general_alpha_equals_naive_bisection(ref, data, alpha):
    Z = data.draw(ref.score_matrices(max_rows=3, masks=data.draw(st.booleans())))
    if alpha > 2:
        # p = x^(1/(alpha-1)) has an infinite slope at the edge of the support:
        # one ulp on tau moves an entry at the edge by far more than 1e-10.
        for z in Z:
            assume(ref.entmax_margin(z, alpha) > 1e-6)
    P = entmax_bisect(Z, alpha=alpha)
    ref.assert_on_simplex(P)
    np.testing.assert_allclose(
        P, ref.apply_rows(lambda z: ref.entmax(z, alpha), Z), rtol=0, atol=1e-10
    )


@SLOW
@given(data=st.data(), alpha=st.sampled_from([1.5, 2.0, 3.0]))
def test_bisect_maximises_tsallis_objective(ref, data, alpha):
    """Against SLSQP on argmax_p p.z + (1 - sum p^alpha) / (alpha (alpha - 1))."""
    z = data.draw(ref.score_vectors(max_size=5, kinds=("moderate", "ties", "grid")))
    np.testing.assert_allclose(entmax_bisect(z, alpha=alpha), ref.entmax_tsallis(z, alpha),
                               rtol=0, atol=2e-5)
    if alpha == 1.5:
        np.testing.assert_allclose(entmax15(z), ref.entmax_tsallis(z, alpha), rtol=0, atol=2e-5)


@PROPS
@given(data=st.data(), alpha=st.sampled_from([1.25, 1.5, 2.0, 3.0]))
def test_shift_invariance(ref, data, alpha):
    z = data.draw(ref.score_vectors(kinds=("grid", "ties"), masks=data.draw(st.booleans())))
    z = np.round(z * 8) / 8
    c = data.draw(st.sampled_from([-7.0, 1.0, 1e6, -1e8, 2.0**40]))
    assert np.array_equal((z + c) - c, z)
    np.testing.assert_allclose(entmax_bisect(z + c, alpha), entmax_bisect(z, alpha),
                               rtol=0, atol=1e-13)
    if alpha == 1.5:
        np.testing.assert_allclose(entmax15(z + c), entmax15(z), rtol=0, atol=1e-13)


@PROPS
@given(data=st.data(), alpha=st.sampled_from([1.25, 1.5, 2.0, 3.0]))
def test_permutation_equivariance(ref, data, alpha):
    z = data.draw(ref.score_vectors(masks=data.draw(st.booleans())))
    perm = np.array(data.draw(st.permutations(range(z.size))))
    if alpha > 2:
        assume(ref.entmax_margin(z, alpha) > 1e-6)
    np.testing.assert_allclose(entmax_bisect(z[perm], alpha), entmax_bisect(z, alpha)[perm],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(entmax15(z[perm]), entmax15(z)[perm], rtol=0, atol=1e-13)


def test_known_values_entmax15():
    # K = 2, u = z/2: both in the support iff |u1 - u2| < 1; then
    # (u1 - tau)^2 + (u2 - tau)^2 = 1 gives, with d = u1 - u2,
    # p1 = ((d + sqrt(2 - d^2)) / 2)^2 (derived by hand from the closed form).
    g = np.linspace(-3, 3, 61)
    Z = np.stack([g, np.zeros_like(g)], axis=1)
    d = g / 2
    inside = np.abs(d) < 1
    p1 = np.where(inside, ((d + np.sqrt(np.clip(2 - d**2, 0, None))) / 2) ** 2,
                  (d > 0).astype(float))
    np.testing.assert_allclose(entmax15(Z)[:, 0], p1, rtol=0, atol=1e-14)
    np.testing.assert_allclose(entmax_bisect(Z, 1.5)[:, 0], p1, rtol=0, atol=1e-13)


@pytest.mark.parametrize("tol", [0.0, -1e-3])
def test_bad_tol_raises(tol):
    with pytest.raises(ValueError, match="tol"):
        entmax_bisect([0.0, 1.0], alpha=1.5, tol=tol)


def test_bad_max_iter_raises():
    with pytest.raises(ValueError, match="max_iter"):
        entmax_bisect([0.0, 1.0], alpha=1.5, max_iter=0)


def test_max_iter_one_still_sums_to_one():
    """The documented stopping rule: after max_iter steps the result is normalised."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(20, 7))
    P = entmax_bisect(Z, alpha=1.7, max_iter=1)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    assert np.all(P >= 0)
