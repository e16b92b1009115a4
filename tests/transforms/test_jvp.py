"""Jacobian-vector products against central finite differences of the mappings.

Every mapping is piecewise smooth; the finite differences are taken away from
the kinks: inputs are rejected when an entry is within a margin of the
threshold (sparsemax, entmax) or when the k-th and (k+1)-th scores are within
a margin of each other (top-k), and the step is far smaller than the margin.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sksparsemax.transforms import (
    entmax15,
    entmax_bisect,
    entmax_jvp,
    softmax,
    softmax_jvp,
    sparse_softmax,
    sparse_softmax_jvp,
    sparsemax,
    sparsemax_jvp,
)

PROPS = settings(max_examples=35, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


def _draw_point(ref, data, lo=-2.0, hi=2.0, max_size=6):
    z = data.draw(ref.moderate_vectors(min_size=1, max_size=max_size, lo=lo, hi=hi), label="z")
    v = data.draw(ref.tangent_vectors(z.size), label="v")
    u = data.draw(ref.tangent_vectors(z.size), label="u")
    return z, v, u


def _check_symmetry_and_invariants(jvp, p, v, u, atol=1e-12):
    Jv, Ju = jvp(p, v), jvp(p, u)
    # u.(J v) == v.(J u): J is symmetric
    np.testing.assert_allclose(u @ Jv, v @ Ju, rtol=0, atol=atol)
    # sum p == 1 for every z, so 1.(J v) == 0; shift invariance gives J 1 == 0
    np.testing.assert_allclose(Jv.sum(), 0.0, rtol=0, atol=atol)
    np.testing.assert_allclose(jvp(p, np.ones_like(p)), 0.0, rtol=0, atol=atol)
    # zero outside the support
    assert np.all(Jv[p == 0] == 0)


@PROPS
@given(data=st.data())
def test_sparsemax_jvp_finite_differences(ref, data):
    z, v, u = _draw_point(ref, data)
    assume(ref.sparsemax_margin(z) > 1e-3)
    p = sparsemax(z)
    Jv = sparsemax_jvp(p, v)
    assert Jv.shape == z.shape and Jv.dtype == np.float64
    # sparsemax is affine between kinks: the central difference is exact up to rounding
    fd = ref.central_difference(sparsemax, z, v, h=1e-4)
    np.testing.assert_allclose(Jv, fd, rtol=0, atol=1e-9)
    _check_symmetry_and_invariants(sparsemax_jvp, p, v, u)


def test_sparsemax_jvp_closed_form():
    """J v = s * (v - mean_S v) with S = {0, 1} for z = [1, 0.2, -1] (tau = 0.1)."""
    p = sparsemax([1.0, 0.2, -1.0])
    np.testing.assert_allclose(p, [0.9, 0.1, 0.0], atol=1e-15)
    v = np.array([3.0, -1.0, 7.0])
    np.testing.assert_allclose(sparsemax_jvp(p, v), [2.0, -2.0, 0.0], atol=1e-15)


@PROPS
@given(data=st.data())
def test_softmax_jvp_finite_differences(ref, data):
    z, v, u = _draw_point(ref, data, lo=-5, hi=5)
    p = softmax(z)
    Jv = softmax_jvp(p, v)
    fd = ref.central_difference(softmax, z, v, h=1e-5)
    np.testing.assert_allclose(Jv, fd, rtol=0, atol=1e-8)
    _check_symmetry_and_invariants(softmax_jvp, p, v, u)


@PROPS
@given(data=st.data())
def test_sparse_softmax_jvp_finite_differences(ref, data):
    z, v, u = _draw_point(ref, data)
    k = data.draw(st.integers(1, z.size + 1), label="k")
    assume(ref.topk_gap(z, k) > 1e-3)
    p = sparse_softmax(z, k)
    Jv = sparse_softmax_jvp(p, v)
    fd = ref.central_difference(lambda x: sparse_softmax(x, k), z, v, h=1e-5)
    np.testing.assert_allclose(Jv, fd, rtol=0, atol=1e-8)
    _check_symmetry_and_invariants(sparse_softmax_jvp, p, v, u)


ENTMAX_CASES = [
    (1.0, "softmax", lambda z: softmax(z)),
    (1.0, "bisect", lambda z: entmax_bisect(z, alpha=1.0)),
    (1.25, "bisect", lambda z: entmax_bisect(z, alpha=1.25)),
    (1.5, "entmax15", entmax15),
    (1.5, "bisect", lambda z: entmax_bisect(z, alpha=1.5)),
    (2.0, "sparsemax", sparsemax),
    (2.0, "bisect", lambda z: entmax_bisect(z, alpha=2.0)),
    (2.5, "bisect", lambda z: entmax_bisect(z, alpha=2.5)),
    (3.0, "bisect", lambda z: entmax_bisect(z, alpha=3.0)),
]


@pytest.mark.parametrize(
    "alpha, name, mapping", ENTMAX_CASES, ids=[f"{a}-{n}" for a, n, _ in ENTMAX_CASES]
)
@PROPS
@given(data=st.data())
def test_entmax_jvp_finite_differences(ref, data, alpha, name, mapping):
    z, v, u = _draw_point(ref, data)
    if alpha > 1:
        # away from the edge of the support; for alpha > 2 the slope of
        # x^(1/(alpha-1)) grows without bound there, so keep a wider margin
        assume(ref.entmax_margin(z, alpha) > (1e-2 if alpha > 2 else 1e-3))
    p = mapping(z)
    Jv = entmax_jvp(p, v, alpha)
    assert Jv.shape == z.shape and Jv.dtype == np.float64
    fd = ref.central_difference(mapping, z, v, h=1e-6)
    np.testing.assert_allclose(Jv, fd, rtol=0, atol=1e-6)
    _check_symmetry_and_invariants(lambda p_, v_: entmax_jvp(p_, v_, alpha), p, v, u)


@PROPS
@given(data=st.data())
def test_entmax_jvp_special_cases_match(ref, data):
    """alpha = 1 is the softmax Jacobian, alpha = 2 the sparsemax Jacobian."""
    z, v, _ = _draw_point(ref, data)
    p = softmax(z)
    np.testing.assert_allclose(entmax_jvp(p, v, 1.0), softmax_jvp(p, v), rtol=0, atol=1e-15)
    p = sparsemax(z)
    np.testing.assert_allclose(entmax_jvp(p, v, 2.0), sparsemax_jvp(p, v), rtol=0, atol=1e-15)


@PROPS
@given(data=st.data())
def test_jvp_batched_equals_row_by_row(ref, data):
    Z = data.draw(ref.score_matrices(kinds=("moderate", "ties", "grid"), masks=True))
    V = np.asarray(data.draw(st.lists(ref.tangent_vectors(Z.shape[1]),
                                      min_size=Z.shape[0], max_size=Z.shape[0])))
    k = data.draw(st.integers(1, Z.shape[1]))
    cases = [
        (sparsemax(Z), sparsemax_jvp),
        (softmax(Z), softmax_jvp),
        (sparse_softmax(Z, k), sparse_softmax_jvp),
        (entmax15(Z), lambda p, v: entmax_jvp(p, v, 1.5)),
        (entmax_bisect(Z, 3.0), lambda p, v: entmax_jvp(p, v, 3.0)),
    ]
    for P, jvp in cases:
        JV = jvp(P, V)
        assert JV.shape == Z.shape
        # masked entries are outside the support: the JVP is exactly 0 there
        assert np.all(JV[np.isneginf(Z)] == 0)
        for p, v, jv in zip(P, V, JV):
            np.testing.assert_allclose(jv, jvp(p, v), rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "jvp",
    [sparsemax_jvp, softmax_jvp, sparse_softmax_jvp,
     lambda p, v: entmax_jvp(p, v, 1.5)],
    ids=["sparsemax", "softmax", "sparse_softmax", "entmax"],
)
def test_jvp_dtypes(jvp):
    p = np.array([0.5, 0.5, 0.0])
    v = np.array([1.0, -2.0, 3.0])
    assert jvp(p.astype(np.float32), v.astype(np.float32)).dtype == np.float32
    assert jvp(p.astype(np.float32), v).dtype == np.float64
    assert jvp(p, v.astype(np.float32)).dtype == np.float64
    assert jvp(p, [1, -2, 3]).dtype == np.float64
    np.testing.assert_allclose(
        jvp(p.astype(np.float32), v.astype(np.float32)), jvp(p, v), rtol=0, atol=1e-6
    )
