"""Budget sparsemax (projection onto the capped simplex) and its JVP.

References: an exact brute force over the partitions of the entries into
{0, free, 1} in rational arithmetic (written here, from the optimality
conditions), the reference package ``entmax`` (``budget_bisect``, a
bisection run to 200 steps in float64) and its autograd backward, and
central finite differences. The module runs once per backend (conftest).
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sksparsemax import transforms as T
from sksparsemax.transforms import budget_sparsemax, budget_sparsemax_jvp, sparsemax

INF = np.inf
try:  # the reference implementation (PyTorch): only the comparisons need it
    import entmax
    import torch
except ImportError:
    entmax = torch = None
needs_entmax = pytest.mark.skipif(
    entmax is None, reason="the entmax package (PyTorch) is not installed"
)


# ---------------------------------------------------------------------------
# Exact reference
# ---------------------------------------------------------------------------
def budget_brute_force(z, b):
    """Projection of one row onto {0 <= p <= 1, sum p = b}, exactly.

    ``p = clip(z - tau, 0, 1)`` is the projection iff the partition of the
    unmasked entries into zeros (``z_i <= tau``), free ones (``tau < z_i <
    tau + 1``) and ones (``z_i >= tau + 1``) is consistent with ``tau =
    (sum_F z + |C| - b) / |F|`` (or, with no free entry, ``|C| = b`` and a
    ``tau`` between the zeros and the ones). Every partition is tried, in
    rational arithmetic; the projection is unique, so all consistent
    partitions give the same ``p`` (checked).
    """
    z = np.asarray(z, dtype=np.float64)
    idx = [i for i in range(z.size) if np.isfinite(z[i])]
    zf = {i: Fraction(float(z[i])) for i in idx}
    b = Fraction(b)
    found = None
    for labels in itertools.product((0, 1, 2), repeat=len(idx)):
        Z0 = [zf[i] for i, lab in zip(idx, labels) if lab == 0]
        F = [zf[i] for i, lab in zip(idx, labels) if lab == 1]
        C = [zf[i] for i, lab in zip(idx, labels) if lab == 2]
        if F:
            tau = (sum(F, Fraction(0)) + len(C) - b) / len(F)
            ok = all(tau < x < tau + 1 for x in F)
        else:
            if len(C) != b:
                continue
            lo = max(Z0, default=None)
            hi = min(C, default=None)
            tau = lo if lo is not None else (hi - 1)
            ok = hi is None or tau <= hi - 1
        ok = ok and all(x <= tau for x in Z0) and all(x >= tau + 1 for x in C)
        if not ok:
            continue
        p = {i: min(max(zf[i] - tau, Fraction(0)), Fraction(1)) for i in idx}
        if found is not None:
            assert found == p
        found = p
    assert found is not None
    out = np.zeros(z.size)
    for i, v in found.items():
        out[i] = float(v)
    return out


def reference_entmax(Z, b):
    Zt = torch.tensor(np.asarray(Z, dtype=np.float64))
    return entmax.budget_bisect(Zt, budget=b, n_iter=200).numpy()


def _budgets(K):
    return [b for b in (0.25, 0.5, 1, 1.5, 2, 2.5, 3, 4.75, K) if b <= K]


# ---------------------------------------------------------------------------
# The mapping
# ---------------------------------------------------------------------------
@needs_entmax
@pytest.mark.parametrize("K", [2, 3, 5, 10, 40, 200])
def test_matches_entmax_budget_bisect(K):
    rng = np.random.default_rng(K)
    Z = rng.normal(size=(300, K)) * rng.choice([0.1, 1.0, 3.0], size=(300, 1))
    for b in _budgets(K):
        P = budget_sparsemax(Z, b)
        R = reference_entmax(Z, b)
        np.testing.assert_allclose(P, R, rtol=0, atol=1e-10)
        np.testing.assert_allclose(P.sum(axis=1), b, rtol=0, atol=1e-12 * K)


@st.composite
def rows_and_budget(draw, ref, max_size=6):
    z = draw(ref.score_vectors(min_size=1, max_size=max_size, masks=True))
    k = int(np.isfinite(z).sum())
    b = draw(st.one_of(
        st.integers(1, k).map(float),
        st.floats(0.05, float(k), allow_nan=False),
        st.sampled_from([0.5, 1.5, 2.5]).filter(lambda v: v <= k),
    ))
    return z, b


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_matches_exact_brute_force(ref, data):
    z, b = data.draw(rows_and_budget(ref))
    p = budget_sparsemax(z, b)
    exact = budget_brute_force(z, b)
    fin = z[np.isfinite(z)]
    spread = float(fin.max() - fin.min())
    np.testing.assert_allclose(p, exact, rtol=0, atol=1e-13 * (1.0 + spread))
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(p[~np.isfinite(z)] == 0)
    np.testing.assert_allclose(p.sum(), b, rtol=0, atol=1e-12 * (1.0 + spread))


@pytest.mark.parametrize(
    "z, b, expected",
    [
        ([3.0, 2.0, 0.0, -1.0], 2, [1, 1, 0, 0]),  # a gap >= 1: a 0/1 vector
        ([0.3, 0.1, -3.7], 2, [1, 1, 0]),
        ([0.0, 0.0, -5.0], 2, [1, 1, 0]),
        ([1.0, 1.0, 1.0], 3, [1, 1, 1]),  # budget = K
        ([-1e17, 0.0, -INF], 2, [1, 1, 0]),  # budget = K': all unmasked ones
        ([0.0, -0.5, -INF, -0.5], 3, [1, 1, 0, 1]),
        ([0.0, 0.0, 0.0, 0.0], 2, [0.5, 0.5, 0.5, 0.5]),  # ties
        ([1.0, 0.6, 0.2], 2, [1, 0.7, 0.3]),
    ],
)
def test_exact_values_and_exact_zeros_and_ones(z, b, expected):
    p = budget_sparsemax(z, b)
    np.testing.assert_allclose(p, expected, rtol=0, atol=1e-15)
    expected = np.asarray(expected, dtype=float)
    saturated = (expected == 0) | (expected == 1)
    assert np.array_equal(p[saturated], expected[saturated])  # exact 0s and 1s


@needs_entmax
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_generic_rows_have_exact_zeros_and_ones(ref, data):
    z = data.draw(ref.moderate_vectors(min_size=2, max_size=8, lo=-3, hi=3))
    b = data.draw(st.floats(0.1, float(z.size), allow_nan=False))
    p = budget_sparsemax(z, b)
    exact = budget_brute_force(z, b) if z.size <= 6 else reference_entmax(z[None], b)[0]
    # away from the kinks (margin 1e-9), the saturated entries are exact
    tau_free = z[(exact > 0) & (exact < 1)] - exact[(exact > 0) & (exact < 1)]
    if tau_free.size:
        tau = float(np.mean(tau_free))
        margin = np.minimum(np.abs(z - tau), np.abs(z - tau - 1)).min()
        if margin > 1e-9:
            assert np.all(p[exact == 0] == 0)
            assert np.all(p[exact == 1] == 1)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_small_budgets_are_scaled_sparsemax(ref, data):
    """For b <= 1 the cap never binds: p = b sparsemax(z / b); b = 1 is sparsemax."""
    z = data.draw(ref.score_vectors(min_size=1, max_size=8, kinds=("moderate", "ties")))
    b = data.draw(st.floats(0.05, 1.0))
    np.testing.assert_allclose(budget_sparsemax(z, b), b * sparsemax(z / b),
                               rtol=0, atol=1e-14)
    np.testing.assert_allclose(budget_sparsemax(z, 1.0), sparsemax(z), rtol=0, atol=1e-15)


def test_shift_invariance_and_huge_scores():
    z = np.array([0.3, -0.2, 1.1, 0.0, -2.0])
    p = budget_sparsemax(z, 2.5)
    np.testing.assert_allclose(budget_sparsemax(z + 1e6, 2.5), p, atol=1e-9)
    np.testing.assert_allclose(budget_sparsemax(z * 1e300, 2), [1, 0, 1, 0, 0], atol=0)


def test_dtypes():
    z = np.array([[0.3, -0.2, 1.1, 0.0]])
    p64 = budget_sparsemax(z, 2.2)
    p32 = budget_sparsemax(z.astype(np.float32), 2.2)
    assert p32.dtype == np.float32 and p64.dtype == np.float64
    np.testing.assert_allclose(p32, budget_sparsemax(z.astype(np.float32).astype(float), 2.2),
                               rtol=0, atol=1e-7)
    pint = budget_sparsemax(np.array([3, 1, 0, 0]), 2)
    assert pint.dtype == np.float64
    np.testing.assert_array_equal(pint, [1, 1, 0, 0])
    assert budget_sparsemax([[1.0, 0.2]], np.int64(1)).dtype == np.float64


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_axis(axis):
    rng = np.random.default_rng(3)
    z = rng.normal(size=(3, 4, 5))
    p = budget_sparsemax(z, 1.7, axis=axis)
    moved = np.moveaxis(z, axis, -1)
    expected = budget_sparsemax(moved.reshape(-1, moved.shape[-1]), 1.7)
    np.testing.assert_array_equal(np.moveaxis(p, axis, -1).reshape(expected.shape), expected)
    np.testing.assert_allclose(p.sum(axis=axis), 1.7, atol=1e-14)


def test_budget_per_slice():
    rng = np.random.default_rng(4)
    z = rng.normal(size=(3, 6, 4))
    b = np.array([[1.0, 2.0, 3.5, 0.5], [4.0, 2.5, 1.0, 6.0], [2, 2, 2, 2]])  # z without axis 1
    p = budget_sparsemax(z, b, axis=1)
    for i, j in itertools.product(range(3), range(4)):
        np.testing.assert_array_equal(p[i, :, j], budget_sparsemax(z[i, :, j], b[i, j]))
    np.testing.assert_allclose(p.sum(axis=1), b, atol=1e-14)
    # the keepdims form (entmax's convention) and broadcasting
    np.testing.assert_array_equal(budget_sparsemax(z, b[:, None, :], axis=1), p)
    np.testing.assert_array_equal(budget_sparsemax(z, np.array([1.5]), axis=1),
                                  budget_sparsemax(z, 1.5, axis=1))
    with pytest.raises(ValueError, match=r"budget of shape \(2,\) cannot be broadcast"):
        budget_sparsemax(z, np.array([1.0, 2.0]), axis=1)


@pytest.mark.parametrize(
    "z, budget, match",
    [
        ([[1.0, np.nan]], 1, "z contains NaN at row 0"),
        ([[1.0, 0.0], [INF, 0.0]], 1, r"z contains \+inf .* at row 1"),
        ([[1.0, 0.0], [-INF, -INF]], 1, r"every entry equal to -inf .* at row 1"),
        ([[1.0, 0.0], [1.0, -INF]], 2,
         r"budget=2 exceeds the number of unmasked entries \(1\) of z at row 1"),
        ([[1.0, 0.0]], 2.5, r"budget=2.5 exceeds the number of unmasked entries \(2\)"),
        ([1.0, 0.0], 0, "budget must be a finite number > 0; got budget=0.0"),
        ([1.0, 0.0], -1.0, "budget must be a finite number > 0"),
        ([1.0, 0.0], np.nan, "budget must be a finite number > 0; got budget=nan"),
        ([1.0, 0.0], [1.0, INF], "budget must be a finite number > 0; got budget=inf"),
    ],
)
def test_errors(z, budget, match):
    with pytest.raises(ValueError, match=match):
        budget_sparsemax(np.array(z), budget)


def test_error_names_first_bad_slice_of_either_kind():
    z = np.array([[1.0, 2.0], [1.0, -INF], [np.nan, 0.0]])
    with pytest.raises(ValueError, match="budget=2 exceeds .* at row 1"):
        budget_sparsemax(z, 2)
    with pytest.raises(ValueError, match=r"position \(1, 0\)"):
        budget_sparsemax(np.array([[[1.0, 2.0]], [[1.0, -INF]]]), 2)


@pytest.mark.parametrize("budget", [True, "2", 1j, None])
def test_budget_type_errors(budget):
    with pytest.raises(TypeError, match="budget must be a real number"):
        budget_sparsemax([1.0, 0.0], budget)


def test_backends_agree_to_rounding(ref):
    pytest.importorskip("numba")
    rng = np.random.default_rng(5)
    for K in (3, 8, 64):
        Z = ref.random_rows(rng, 400, K)
        counts = np.isfinite(Z).sum(axis=1)
        for b in (0.5, 1.0, 2.0, 2.5):
            B = np.minimum(b, counts).astype(float)
            with T.backend("numpy"):
                P0 = budget_sparsemax(Z, B)
            with T.backend("numba"):
                P1 = budget_sparsemax(Z, B)
            np.testing.assert_allclose(P1, P0, rtol=0, atol=1e-12)
            assert np.array_equal(P1 == 0, P0 == 0) or np.abs(P1 - P0).max() < 1e-13
    with T.backend("numba"):
        P32 = budget_sparsemax(Z.astype(np.float32), 1.0)
    with T.backend("numpy"):
        np.testing.assert_allclose(P32, budget_sparsemax(Z.astype(np.float32), 1.0), atol=1e-6)


# ---------------------------------------------------------------------------
# Array API
# ---------------------------------------------------------------------------
@pytest.fixture(params=["array_api_strict", "torch"])
def lib(request):
    if request.param == "array_api_strict":
        xs = pytest.importorskip("array_api_strict")
        with xs.ArrayAPIStrictFlags(api_version="2023.12"):
            yield xs.asarray, np.asarray, type(xs.asarray(0.0))
    else:
        yield torch.asarray, lambda a: a.numpy(), torch.Tensor


@needs_entmax
def test_array_api_equals_numpy(lib, ref):
    to_lib, to_np, kind = lib
    rng = np.random.default_rng(6)
    Z = ref.random_rows(rng, 50, 7)
    Z[:3] = [3.0, 2.0, 0.0, -1.0, -1.5, -2.0, -3.0]
    for b in (0.5, 1.0, 2.0, 2.5):
        B = np.minimum(b, np.isfinite(Z).sum(axis=1)).astype(float)
        with T.backend("numpy"):
            P = budget_sparsemax(Z, B)
        out = budget_sparsemax(to_lib(Z), B)
        assert isinstance(out, kind)
        np.testing.assert_allclose(to_np(out), P, rtol=0, atol=1e-13)
        out = budget_sparsemax(to_lib(Z), to_lib(B))  # budget of the library
        np.testing.assert_allclose(to_np(out), P, rtol=0, atol=1e-13)
    z3 = rng.normal(size=(2, 5, 3)).astype(np.float32)
    out = budget_sparsemax(to_lib(z3), 1.5, axis=1)
    assert out.dtype == to_lib(z3).dtype
    with T.backend("numpy"):
        np.testing.assert_allclose(to_np(out), budget_sparsemax(z3, 1.5, axis=1), atol=1e-6)


@needs_entmax
def test_array_api_errors(lib):
    to_lib = lib[0]
    with pytest.raises(ValueError, match="budget=2 exceeds .* of z at row 1"):
        budget_sparsemax(to_lib(np.array([[1.0, 2.0], [1.0, -INF]])), 2)
    with pytest.raises(ValueError, match="z contains NaN at row 1"):
        budget_sparsemax(to_lib(np.array([[1.0, 2.0], [1.0, np.nan]])), 1)
    with pytest.raises(ValueError, match="budget must be a finite number > 0"):
        budget_sparsemax(to_lib(np.array([[1.0, 2.0]])), to_lib(np.array([-1.0])))


@needs_entmax
def test_array_api_jvp_equals_numpy(lib):
    to_lib, to_np, kind = lib
    rng = np.random.default_rng(7)
    with T.backend("numpy"):
        P = budget_sparsemax(rng.normal(size=(20, 6)), 2.5)
        V = rng.normal(size=P.shape)
        expected = budget_sparsemax_jvp(P, V)
    out = budget_sparsemax_jvp(to_lib(P), to_lib(V))
    assert isinstance(out, kind)
    np.testing.assert_allclose(to_np(out), expected, rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------
# Jacobian-vector product
# ---------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_jvp_central_differences(ref, data):
    z = data.draw(ref.moderate_vectors(min_size=2, max_size=7))
    v = data.draw(ref.tangent_vectors(z.size))
    b = data.draw(st.floats(0.2, float(z.size) - 0.1))
    p = budget_sparsemax(z, b)
    # only away from the kinks: every entry's distance to 0 / 1 > 1e-4
    free = (p > 0) & (p < 1)
    tau = float(np.mean(z[free] - p[free])) if free.any() else None
    if tau is None or np.min(np.minimum(np.abs(z - tau), np.abs(z - tau - 1))) < 1e-4:
        return
    h = 1e-6
    fd = ref.central_difference(lambda x: budget_sparsemax(x, b), z, v, h)
    np.testing.assert_allclose(budget_sparsemax_jvp(p, v), fd, rtol=0, atol=1e-7)


@needs_entmax
def test_jvp_matches_entmax_backward():
    rng = np.random.default_rng(8)
    Z = rng.normal(size=(200, 9))
    G = rng.normal(size=Z.shape)
    for b in (0.5, 1.0, 2.0, 3.5):
        Zt = torch.tensor(Z, requires_grad=True)
        entmax.budget_bisect(Zt, budget=b, n_iter=200).backward(torch.tensor(G))
        P = budget_sparsemax(Z, b)
        np.testing.assert_allclose(budget_sparsemax_jvp(P, G), Zt.grad.numpy(),
                                   rtol=0, atol=1e-12)


def test_jvp_saturated_rows_and_exact_ones():
    p = budget_sparsemax([3.0, 2.0, 0.0, -1.0], 2)  # [1, 1, 0, 0]: locally constant
    np.testing.assert_array_equal(budget_sparsemax_jvp(p, [1.0, 2.0, 3.0, 4.0]), 0)
    np.testing.assert_allclose(
        budget_sparsemax_jvp([1.0, 0.7, 0.3], [1.0, 0.0, 3.0]), [0, -1.5, 1.5])
    out = budget_sparsemax_jvp(np.float32([1, 0.5, 0.5]), np.float32([1, 2, 3]))
    assert out.dtype == np.float32
    with pytest.raises(ValueError, match="p contains NaN at row 0"):
        budget_sparsemax_jvp([[np.nan, 1.0]], [[0.0, 1.0]])
    with pytest.raises(ValueError, match="same shape"):
        budget_sparsemax_jvp([1.0, 0.0], [1.0])


def test_jvp_axis():
    rng = np.random.default_rng(9)
    z = rng.normal(size=(4, 6, 3))
    v = rng.normal(size=z.shape)
    p = budget_sparsemax(z, 2.0, axis=1)
    out = budget_sparsemax_jvp(p, v, axis=1)
    for i, j in itertools.product(range(4), range(3)):
        np.testing.assert_allclose(out[i, :, j], budget_sparsemax_jvp(p[i, :, j], v[i, :, j]))


def test_masked_arrays_and_sparse_inputs():
    sp = pytest.importorskip("scipy.sparse")
    Z = np.array([[0.3, 1.2, -0.5, 0.9], [2.0, 0.1, 0.4, -1.0]])
    mask = np.array([[0, 1, 0, 0], [1, 0, 0, 0]], dtype=bool)
    out = budget_sparsemax(np.ma.array(Z, mask=mask), 2.0)
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, budget_sparsemax(np.where(mask, -INF, Z), 2.0))
    assert np.all(out[mask] == 0)
    with pytest.raises(ValueError, match=r"budget=3.5 exceeds the number of unmasked entries \(3\)"):
        budget_sparsemax(np.ma.array(Z, mask=mask), 3.5)
    with pytest.raises(TypeError, match=r"z is a scipy\.sparse .*z\.toarray\(\)"):
        budget_sparsemax(sp.csr_matrix(Z), 2.0)
    p = budget_sparsemax(Z, 2.0)
    v = np.ma.array(np.ones_like(Z), mask=mask)  # masked tangents count as 0
    np.testing.assert_array_equal(budget_sparsemax_jvp(p, v),
                                  budget_sparsemax_jvp(p, np.where(mask, 0.0, 1.0)))
    with pytest.raises(TypeError, match=r"v is a scipy\.sparse"):
        budget_sparsemax_jvp(p, sp.csr_matrix(Z))
