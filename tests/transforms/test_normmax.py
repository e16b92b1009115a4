"""alpha-normmax and its Jacobian-vector product.

References: the ``entmax`` package's ``normmax_bisect`` (torch, float64, 200
bisection steps: exact to rounding where the row is well conditioned), an
mpmath reference (threshold bisection at 100 digits) for large alpha, near
ties and huge ranges, and brute force over the supports for the alpha = 2
closed form. Runs once per backend (autouse fixture of conftest.py).

Accuracy is judged against the conditioning of normmax: the Jacobian entries
grow like ``q_j^(2-alpha)`` near the support boundary, so a rounding of the
scores by ``eps`` moves ``p_j`` by ``eps * sum_k |J_jk| (1 + |z_k - max z|)``;
the tolerance is a small multiple of that plus 1e-13.
"""

import functools
import itertools

import numpy as np
import pytest

from sksparsemax.transforms import backend, normmax, normmax_jvp

mp = pytest.importorskip("mpmath").mp
try:  # the reference implementation (PyTorch): only the comparisons need it
    import entmax
    import torch
except ImportError:
    entmax = torch = None
needs_entmax = pytest.mark.skipif(
    entmax is None, reason="the entmax package (PyTorch) is not installed"
)

EPS = np.finfo(np.float64).eps
ALPHAS = [1.01, 1.1, 1.5, 2.0, 2.5, 3.0, 5.0, 10.0]
LARGE_ALPHAS = [1.01, 1.5, 2.0, 2.5, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0]
K = 8


@functools.cache
def _mp_row(z, alpha, dps=100):
    """normmax of one row (a tuple, -inf masks) by bisection at ``dps`` digits."""
    with mp.workdps(dps):
        z = np.asarray(z, dtype=np.float64)
        fin = np.isfinite(z)
        x = [mp.mpf(float(v)) for v in z[fin]]
        m = max(x)
        x = [v - m for v in x]
        a = mp.mpf(alpha) - 1
        b = mp.mpf(alpha) / a
        lo, hi = mp.mpf(-1), mp.mpf(0)
        for _ in range(int(3.4 * dps) + 20):
            mid = (lo + hi) / 2
            if mp.fsum((v - mid) ** b for v in x if v > mid) > 1:
                lo = mid
            else:
                hi = mid
        t = (lo + hi) / 2
        q = [(v - t) ** (1 / a) if v > t else mp.mpf(0) for v in x]
        s = mp.fsum(q)
        p = np.zeros(z.size)
        p[fin] = [float(v / s) for v in q]
        return p


def mp_normmax(Z, alpha):
    Z = np.asarray(Z, dtype=np.float64)
    return np.stack([_mp_row(tuple(r), float(alpha)) for r in Z.reshape(-1, Z.shape[-1])])


def entmax_normmax(Z, alpha):
    return entmax.normmax_bisect(torch.tensor(Z), alpha=alpha, n_iter=200).numpy()


def jacobian(p, alpha):
    """Dense Jacobian of one row from K products (for the tests only)."""
    K = p.size
    return np.stack([normmax_jvp(p, np.eye(K)[k], alpha) for k in range(K)], axis=1)


def condition_bound(z, p, alpha):
    fin = np.isfinite(z)
    x = np.where(fin, np.abs(z - z[fin].max()), 0.0)
    return EPS * (np.abs(jacobian(p, alpha)) @ (1.0 + x))


def _hard_rows():
    rng = np.random.default_rng(17)
    rows = [[0.0, -0.01], [0.0, -0.01, -0.01], [0.0, -0.01, -0.01 - 1e-8]]
    for scale in [0.003, 0.03, 0.3, 3.0, 30.0]:
        for k in [1, 2, 3, 5, K]:
            rows.append(list(rng.standard_normal(k) * scale))
    rows += [
        [0.0] * K,
        [1.0, 1.0, 1.0, 0.99, 0.99, 0.5],
        [0.0, -1e-8, -2e-8, -0.02, -0.02 + 1e-8],  # near ties
        [0.5, 0.5 - 1e-8, 0.5 - 2e-8, 0.49, -1.0],
        [1e6, 0.0, -1e6, 1e6 - 0.01],  # huge ranges
        [3e6, -3e6, 2e6, 3e6 - 1e-3, 3e6 - 1e-3],
        [0.0, np.nextafter(-1.0, 0.0)],  # an entry on the support boundary
        [0.0, -1.0 + 1e-10, -0.5],
    ]
    Z = np.full((len(rows), K), -np.inf)
    for i, r in enumerate(rows):
        Z[i, : len(r)] = r
        Z[i] = np.roll(Z[i], i)  # the masks and the maximum anywhere
    return Z


# ---------------------------------------------------------------------------
# Against the references
# ---------------------------------------------------------------------------
@needs_entmax
@pytest.mark.parametrize("alpha", ALPHAS)
def test_matches_entmax_package(alpha):
    rng = np.random.default_rng(int(alpha * 100))
    Z = rng.standard_normal((60, 7)) * rng.choice([0.1, 1.0, 3.0], size=(60, 1))
    P = normmax(Z, alpha)
    np.testing.assert_allclose(P, entmax_normmax(Z, alpha), rtol=0, atol=1e-10)


@pytest.mark.parametrize("alpha", LARGE_ALPHAS)
def test_matches_mpmath_to_the_conditioning(alpha):
    Z = _hard_rows()
    P = normmax(Z, alpha)
    R = mp_normmax(Z, alpha)
    for z, p, r in zip(Z, P, R):
        tol = 1e-13 + 64 * condition_bound(z, r, alpha)
        assert np.all(np.abs(p - r) <= tol), (z, p, r, tol)
    # Away from the support boundary (all but the last two rows) every entry
    # is exact to rounding, for every alpha.
    np.testing.assert_allclose(P[:-2], R[:-2], rtol=0, atol=1e-13)


def test_boundary_entry_is_ill_conditioned():
    # At alpha = 20 a score one ulp above the boundary already carries 12%
    # of the mass: the exact map of the float input is out of float64 reach,
    # and the error stays within the conditioning.
    z = np.array([0.0, np.nextafter(-1.0, 0.0)])
    r = mp_normmax(z[None], 20.0)[0]
    assert r[1] > 0.1
    assert np.all(np.abs(normmax(z, 20.0) - r) <= 64 * condition_bound(z, r, 20.0))


def _closed_form_brute_force(z):
    """alpha = 2 over every support S: tau solves sum_S (z - tau)^2 = 1 with
    tau below z_S and at least the scores outside S (KKT)."""
    idx = np.flatnonzero(np.isfinite(z))
    for k in range(1, idx.size + 1):
        for S in itertools.combinations(idx, k):
            zs = z[list(S)]
            disc = zs.mean() ** 2 - (np.mean(zs**2) - 1.0 / k)
            if disc < 0:
                continue
            tau = zs.mean() - np.sqrt(disc)
            rest = np.setdiff1d(idx, S)
            if np.all(zs > tau - 1e-12) and np.all(z[rest] <= tau + 1e-12):
                q = np.zeros(z.size)
                q[list(S)] = np.maximum(zs - tau, 0)
                return q / q.sum()
    raise AssertionError("no feasible support")


def test_alpha_2_closed_form_against_brute_force():
    rng = np.random.default_rng(2)
    rows = [rng.standard_normal(6) * s for s in (0.1, 0.5, 1, 3) for _ in range(10)]
    rows += [rng.integers(-8, 9, size=6) / 8 for _ in range(20)]  # ties, kinks
    Z = np.array(rows)
    Z[::7, 2] = -np.inf
    P = normmax(Z, 2.0)
    for z, p in zip(Z, P):
        np.testing.assert_allclose(p, _closed_form_brute_force(z), rtol=0, atol=1e-13)


@pytest.mark.parametrize("alpha", [1.05, 1.5, 2.0, 3.0, 7.0, 30.0])
def test_optimality_conditions(alpha, ref):
    rng = np.random.default_rng(3)
    Z = ref.random_rows(rng, 80, 9)
    P = normmax(Z, alpha)
    ref.assert_on_simplex(P)
    N = np.sum(P**alpha, axis=1) ** (1 / alpha)
    Q = P / N[:, None]
    # q_j^(alpha-1) = z_j - tau on the support, z_j <= tau outside it.
    zmax = Z.max(axis=1, keepdims=True)
    X = np.where(np.isfinite(Z), Z - zmax, -np.inf)
    T = np.where(P > 0, X - Q ** (alpha - 1), np.nan)
    tau = np.nanmean(T, axis=1)
    np.testing.assert_allclose(np.nanmax(T, 1) - np.nanmin(T, 1), 0, atol=1e-9)
    assert np.all(np.where(P == 0, X, -np.inf) <= tau[:, None] + 1e-9)
    # The objective is no worse than at nearby points of the simplex.
    def objective(p):
        return np.sum(np.where(p > 0, p * np.where(np.isfinite(Z), Z, 0), 0), 1) - (
            np.sum(p**alpha, axis=1) ** (1 / alpha))
    for _ in range(5):
        D = rng.dirichlet(np.ones(9), size=80) * np.isfinite(Z)
        D /= D.sum(1, keepdims=True)
        assert np.all(objective(P) >= objective(0.9 * P + 0.1 * D) - 1e-12)


# ---------------------------------------------------------------------------
# Masks, dtypes, axes, errors, backends
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [1.5, 2.0, 4.0])
def test_neg_inf_is_a_mask(alpha):
    z = np.array([0.3, -np.inf, 1.0, -0.2, -np.inf])
    p = normmax(z, alpha)
    assert p[1] == 0 and p[4] == 0
    np.testing.assert_allclose(p[[0, 2, 3]], normmax(z[[0, 2, 3]], alpha), rtol=1e-14)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 6.0])
def test_dtypes(alpha):
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((20, 5))
    p32 = normmax(Z.astype(np.float32), alpha)
    assert p32.dtype == np.float32
    np.testing.assert_allclose(p32, normmax(Z, alpha), atol=2e-6)
    assert normmax([3, 1, 0], alpha).dtype == np.float64
    np.testing.assert_array_equal(normmax([3, 1, 0], alpha), normmax([3.0, 1.0, 0.0], alpha))
    j32 = normmax_jvp(p32, np.ones_like(p32), alpha)
    assert j32.dtype == np.float32


@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.0])
def test_any_axis(alpha):
    rng = np.random.default_rng(5)
    z = rng.standard_normal((3, 4, 5))
    v = rng.standard_normal((3, 4, 5))
    for axis in (0, 1, 2, -2):
        p = normmax(z, alpha, axis=axis)
        by_hand = np.moveaxis(normmax(np.moveaxis(z, axis, -1), alpha), -1, axis)
        np.testing.assert_array_equal(p, by_hand)
        jv = normmax_jvp(p, v, alpha, axis=axis)
        jv_hand = np.moveaxis(
            normmax_jvp(np.moveaxis(p, axis, -1), np.moveaxis(v, axis, -1), alpha), -1, axis)
        np.testing.assert_array_equal(jv, jv_hand)


@pytest.mark.parametrize("alpha", [2.0, 3.0])
def test_invalid_scores_raise(alpha):
    with pytest.raises(ValueError, match=r"z contains NaN at row 1\."):
        normmax([[0.0, 1.0], [np.nan, 0.0]], alpha)
    with pytest.raises(ValueError, match=r"z contains \+inf .* at row 0\."):
        normmax([[np.inf, 1.0]], alpha)
    with pytest.raises(ValueError, match=r"every entry equal to -inf .* at position \(1, 0\)"):
        normmax(np.array([[[0.0, 1.0]], [[-np.inf, -np.inf]]]), alpha)
    with pytest.raises(ValueError, match="length 0 along axis"):
        normmax(np.zeros((2, 0)), alpha)


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match=r"alpha must be > 1 for normmax; got alpha=1\.0"):
        normmax([0.0, 1.0], alpha=1)
    with pytest.raises(ValueError, match=r"alpha must be > 1 for normmax"):
        normmax_jvp([0.5, 0.5], [1.0, 0.0], alpha=1.0)
    with pytest.raises(ValueError, match=r"alpha must be a finite number >= 1"):
        normmax([0.0, 1.0], alpha=0.5)
    with pytest.raises(ValueError, match=r"alpha must be a finite number >= 1"):
        normmax([0.0, 1.0], alpha=float("nan"))
    with pytest.raises(TypeError, match="alpha must be a real number"):
        normmax([0.0, 1.0], alpha="2")
    with pytest.raises(ValueError, match="tol must be a finite positive number"):
        normmax([0.0, 1.0], alpha=3.0, tol=0.0)
    with pytest.raises(TypeError, match="max_iter must be an integer"):
        normmax([0.0, 1.0], alpha=3.0, max_iter=2.5)
    with pytest.raises(ValueError, match="p and v must have the same shape"):
        normmax_jvp([0.5, 0.5], [1.0, 0.0, 0.0], alpha=2.0)
    with pytest.raises(ValueError, match=r"p contains a negative entry at row 0"):
        normmax_jvp([[1.5, -0.5]], [[1.0, 0.0]], alpha=2.0)


def test_single_class_and_constant_rows():
    for alpha in (1.5, 2.0, 10.0):
        np.testing.assert_array_equal(normmax([[3.0]], alpha), [[1.0]])
        np.testing.assert_allclose(normmax(np.full((2, 4), 7.0), alpha), 0.25, rtol=1e-15)
        assert normmax(np.zeros((0, 3)), alpha).shape == (0, 3)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.0])
def test_huge_scores_and_shift_invariance(alpha):
    # z - max z overflows to -inf for the far entries: masks, no warning.
    np.testing.assert_array_equal(normmax([1e308, -1e308, 0.999e308], alpha), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(
        normmax(np.array([3e38, -3e38, 0.0], np.float32), alpha), [1.0, 0.0, 0.0])
    z = np.array([0.3, -0.2, 0.1, -1.5])
    np.testing.assert_allclose(normmax(z + 1e4, alpha), normmax(z, alpha), atol=1e-11)


@pytest.mark.parametrize("alpha", [1.2, 2.0, 2.5, 20.0])
def test_backends_agree(alpha, ref):
    rng = np.random.default_rng(6)
    Z = ref.random_rows(rng, 200, 11)
    Z32 = Z.astype(np.float32)
    out = {}
    for name in ("numpy", "numba"):
        with backend(name):
            out[name] = (normmax(Z, alpha), normmax(Z32, alpha))
    np.testing.assert_allclose(out["numpy"][0], out["numba"][0], rtol=0, atol=1e-13)
    np.testing.assert_allclose(out["numpy"][1], out["numba"][1], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(out["numpy"][0] == 0, out["numba"][0] == 0)


@needs_entmax
def test_long_rows_and_the_threshold_filter(ref):
    # Long rows take the kernels' other branches (sorting, row sums).
    rng = np.random.default_rng(7)
    Z = rng.standard_normal((5, 300)) * 0.05
    for alpha in (2.0, 3.0):
        with backend("numpy"):
            expected = normmax(Z, alpha)
        np.testing.assert_allclose(normmax(Z, alpha), expected, rtol=0, atol=1e-14)
        ref.assert_on_simplex(expected)
        np.testing.assert_allclose(expected, entmax_normmax(Z, alpha), atol=1e-10)


# ---------------------------------------------------------------------------
# The Jacobian-vector product
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [1.1, 1.5, 2.0, 2.5, 4.0, 10.0])
def test_jvp_central_differences(alpha, ref):
    rng = np.random.default_rng(8)
    for _ in range(20):
        z = rng.standard_normal(6)
        v = rng.standard_normal(6)
        h = 1e-6
        fd = ref.central_difference(lambda x: normmax(x, alpha), z, v, h)
        jv = normmax_jvp(normmax(z, alpha), v, alpha)
        np.testing.assert_allclose(jv, fd, rtol=1e-5, atol=1e-6)


@needs_entmax
@pytest.mark.parametrize("alpha", [1.1, 1.5, 2.0, 3.0, 6.0, 20.0])
def test_jvp_matches_entmax_backward(alpha):
    rng = np.random.default_rng(9)
    Z = rng.standard_normal((40, 7))
    V = rng.standard_normal((40, 7))
    zt = torch.tensor(Z, requires_grad=True)
    out = entmax.normmax_bisect(zt, alpha=alpha, n_iter=200)
    (g,) = torch.autograd.grad(out, zt, torch.tensor(V))
    jv = normmax_jvp(normmax(Z, alpha), V, alpha)
    np.testing.assert_allclose(jv, g.numpy(), rtol=1e-9, atol=1e-9 * np.abs(jv).max())


@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0, 50.0])
def test_jvp_structure(alpha):
    rng = np.random.default_rng(10)
    Z = rng.standard_normal((30, 6))
    P = normmax(Z, alpha)
    U, V = rng.standard_normal((2, 30, 6))
    JU, JV = normmax_jvp(P, U, alpha), normmax_jvp(P, V, alpha)
    assert np.all(np.isfinite(JV))
    assert np.all(JV[P == 0] == 0)
    scale = np.abs(JV).max(axis=1)
    np.testing.assert_allclose(JV.sum(axis=1), 0, atol=1e-12 * (1 + scale).max())
    np.testing.assert_allclose(np.sum(U * JV, 1), np.sum(V * JU, 1), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(normmax_jvp(P, np.ones_like(P), alpha), 0, atol=1e-12)


# ---------------------------------------------------------------------------
# Array API
# ---------------------------------------------------------------------------
def _namespaces():
    out = [pytest.param(torch, id="torch")]
    try:
        import array_api_strict
    except ImportError:  # pragma: no cover
        return out
    return out + [pytest.param(array_api_strict, id="array_api_strict")]


@needs_entmax
@pytest.mark.parametrize("xp", _namespaces())
@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.0, 25.0])
def test_array_api_equals_numpy(xp, alpha, ref):
    rng = np.random.default_rng(11)
    Z = ref.random_rows(rng, 40, 6).reshape(5, 8, 6)
    V = rng.standard_normal(Z.shape)
    with backend("numpy"):
        for axis in (-1, 1):
            Zt = np.moveaxis(Z, -1, axis)
            expected = normmax(Zt, alpha, axis=axis)
            got = normmax(xp.asarray(Zt), alpha, axis=axis)
            assert type(got) is type(xp.asarray(Zt))
            np.testing.assert_allclose(np.asarray(got), expected, rtol=0, atol=1e-14)
            Vt = np.moveaxis(V, -1, axis)
            jv = normmax_jvp(xp.asarray(expected), xp.asarray(Vt), alpha, axis=axis)
            jv_np = normmax_jvp(expected, Vt, alpha, axis=axis)
            np.testing.assert_allclose(np.asarray(jv), jv_np, rtol=1e-12,
                                       atol=1e-12 * np.abs(jv_np).max())
        got32 = normmax(xp.asarray(Z.astype(np.float32)), alpha)
        assert got32.dtype == xp.float32
        np.testing.assert_allclose(np.asarray(got32), normmax(Z.astype(np.float32), alpha),
                                   atol=1e-6)
    with pytest.raises(ValueError, match=r"z contains NaN at position \(0, 1\)"):
        normmax(xp.asarray(np.array([[[0.0, 1.0], [np.nan, 0.0]]])), alpha)
