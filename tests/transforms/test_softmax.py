"""Properties of the softmax reference mapping."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sksparsemax.transforms import softmax

PROPS = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])

# Scores within ~700 of each other (no exp underflow to exactly zero).
FINITE_KINDS = ("moderate", "ties", "grid", "tiny_spread", "offset")


@PROPS
@given(data=st.data())
def test_on_simplex_and_equals_naive(ref, data):
    Z = data.draw(ref.score_matrices(masks=data.draw(st.booleans())))
    P = softmax(Z)
    assert P.shape == Z.shape and P.dtype == np.float64
    ref.assert_on_simplex(P)
    expected = ref.apply_rows(ref.softmax, Z)
    np.testing.assert_allclose(P, expected, rtol=1e-12, atol=1e-300)
    assert np.all(P[np.isneginf(Z)] == 0.0)


@PROPS
@given(data=st.data())
def test_strictly_positive_on_unmasked_entries(ref, data):
    z = data.draw(ref.score_vectors(kinds=FINITE_KINDS, masks=True))
    p = softmax(z)
    assert np.all(p[np.isfinite(z)] > 0)


@PROPS
@given(data=st.data())
def test_shift_invariance(ref, data):
    z = data.draw(ref.score_vectors(kinds=("grid", "moderate"), masks=data.draw(st.booleans())))
    z = np.round(z * 8) / 8
    c = data.draw(st.sampled_from([-7.0, 1.0, 1e6, -1e8, 2.0**40]))
    assert np.array_equal((z + c) - c, z)
    np.testing.assert_allclose(softmax(z + c), softmax(z), rtol=1e-13, atol=0)


@PROPS
@given(data=st.data())
def test_permutation_equivariance(ref, data):
    z = data.draw(ref.score_vectors(masks=data.draw(st.booleans())))
    perm = np.array(data.draw(st.permutations(range(z.size))))
    np.testing.assert_allclose(softmax(z[perm]), softmax(z)[perm], rtol=1e-13, atol=1e-300)


@PROPS
@given(data=st.data())
def test_float32_agrees_with_float64(ref, data):
    Z = data.draw(ref.score_matrices(kinds=("moderate", "ties", "grid", "tiny_spread"),
                                     masks=data.draw(st.booleans())))
    Z32 = Z.astype(np.float32)
    P32 = softmax(Z32)
    assert P32.dtype == np.float32
    ref.assert_on_simplex(P32)
    np.testing.assert_allclose(P32, softmax(Z32.astype(np.float64)), rtol=0, atol=1e-6)


def test_known_values():
    # softmax([log 1, log 2, log 5]) = [1, 2, 5] / 8
    p = softmax(np.log([1.0, 2.0, 5.0]))
    np.testing.assert_allclose(p, [1 / 8, 2 / 8, 5 / 8], rtol=1e-15)
    # two classes: softmax(z)_1 = logistic(z1 - z2)
    g = np.linspace(-30, 30, 121)
    Z = np.stack([g, np.zeros_like(g)], axis=1)
    np.testing.assert_allclose(softmax(Z)[:, 0], 1 / (1 + np.exp(-g)), rtol=1e-14)
