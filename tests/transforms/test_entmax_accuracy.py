"""Accuracy of alpha-entmax for 1 < alpha <= 100 against a 50-digit reference.

Issue 15, item 1: the threshold form ``p_j = [(alpha-1) z_j - tau]_+^(1/(alpha-1))``
loses every support entry whose ``p_j^(alpha-1)`` is below the float64
resolution of ``tau`` (``entmax_bisect([0, -0.01], alpha=50)`` gave ``[1, 0]``,
the answer is ``[0.98555, 0.01445]``). Here ``entmax_bisect``, the
``EntmaxLoss`` value and gradient and ``entmax_jvp`` are checked entry by entry
against mpmath (``mp.dps = 50``) on random, tied, near-tied (1e-8 apart),
huge-range (1e6 apart) and masked rows, in float64 (``1e-9``) and float32
(``1e-5``), on every backend (the autouse fixture ``transforms_backend`` runs
the module once per backend).

The reference does not use the threshold form either: at alpha = 100 it would
need hundreds of digits. It uses the exact support criterion (``z_j`` is in
the support iff ``sum_i [(alpha-1)(z_i - z_j)]_+^(1/(alpha-1)) < 1``, MATH.md
§7) and bisects, in 50-digit arithmetic, the sum constraint written with the
smallest support entry ``u`` as unknown: ``p_j^(alpha-1) = u^(alpha-1) +
(alpha-1)(z_j - z_r)``. ``test_reference_is_exact`` checks its output against
the optimality conditions at 400 digits and, for alpha <= 3, against a plain
threshold bisection.
"""

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

mp = pytest.importorskip("mpmath").mp

from sksparsemax.losses import EntmaxLoss
from sksparsemax.transforms import entmax_bisect, entmax_jvp

ALPHAS = [1.01, 1.1, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0]
TOL = {np.float64: 1e-9, np.float32: 1e-5}
K = 8


# ---------------------------------------------------------------------------
# Reference (mpmath)
# ---------------------------------------------------------------------------
def _load_reference():
    """The 50-digit reference of ``benchmarks/bench_entmax_accuracy.py`` (one copy)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_entmax_accuracy.py"
    spec = importlib.util.spec_from_file_location("bench_entmax_accuracy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BENCH = _load_reference()
_ref_row = _BENCH.ref_row
DPS = _BENCH.DPS


def _rows(dtype):
    """Test rows of width K, shorter ones padded with -inf masks."""
    rng = np.random.default_rng(15)
    rows = [[0.0, -0.01], [0.0, -0.01, -0.01], [0.0, -0.01, -0.01 - 1e-8]]
    for scale in [0.003, 0.03, 0.3, 3.0, 30.0]:
        for k in [1, 2, 3, 5, K]:
            rows.append(list(rng.standard_normal(k) * scale))
    rows += [
        [0.0] * K,  # all tied
        [1.0, 1.0, 1.0, 0.99, 0.99, 0.5],  # ties at the top and the bottom
        [0.0, -0.001, -0.001, -0.001, -0.002],
        [0.0, -1e-8, -2e-8, -0.02, -0.02 + 1e-8],  # near ties
        [0.5, 0.5 - 1e-8, 0.5 - 2e-8, 0.49, -1.0],
        [0.0, -1e-8, -0.05, -0.05 - 1e-8, -0.1, -0.1 - 1e-8],
        [1e6, 0.0, -1e6, 1e6 - 0.01],  # huge ranges
        [3e6, -3e6, 2e6, 3e6 - 1e-3, 3e6 - 1e-3],
        [-1e6, -2e6, 1e6, 0.0],
    ]
    Z = np.full((len(rows), K), -np.inf)
    for i, r in enumerate(rows):
        Z[i, : len(r)] = r
        Z[i] = np.roll(Z[i], i)  # the masks and the maximum anywhere
    return Z.astype(dtype)


@functools.cache
def _reference(alpha, dtype):
    Z = _rows(dtype)
    return Z, [_ref_row(z, alpha) for z in Z]


def _as_float(P):
    return np.array([[float(x) for x in row] for row in P])


def _row_tol(ref, tol):
    """Per-row tolerance ``tol * max(1, max |ref|)`` (absolute unless the row is large)."""
    scale = np.abs(np.where(np.isfinite(ref), ref, 0))
    return tol * np.maximum(1.0, scale.max(axis=-1, keepdims=True))


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------
def test_issue_example():
    expected = [0.9855472966717011, 0.0144527033282989]  # 0.49^(1/49), 1 - that
    np.testing.assert_allclose(entmax_bisect([0.0, -0.01], alpha=50), expected, atol=1e-9)
    p32 = entmax_bisect(np.float32([0, -0.01]), alpha=50)
    assert p32.dtype == np.float32
    np.testing.assert_allclose(p32, expected, atol=1e-5)


@pytest.mark.parametrize("alpha", [1.5, 3.0, 20.0, 100.0])
def test_reference_is_exact(alpha):
    """The reference satisfies the optimality conditions (and agrees with bisection on tau)."""
    Z, P = _reference(alpha, np.float64)
    with mp.workdps(400):
        a = mp.mpf(alpha) - 1
        for z, p in zip(Z, P):
            assert abs(mp.fsum(p) - 1) < mp.mpf(10) ** (-45)
            zs = [mp.mpf(float(x)) for x in z]
            sup = [j for j in range(K) if p[j] > 0]
            top = max(sup, key=lambda j: zs[j])
            # p_j^(a) - p_top^(a) = a (z_j - z_top) on the support (relative to p_top^a)
            for j in sup:
                lhs = p[j] ** a - p[top] ** a
                assert abs(lhs - a * (zs[j] - zs[top])) < mp.mpf(10) ** (-40) * (1 + abs(lhs))
            # outside the support: H(z_j) >= 1
            for j in range(K):
                if p[j] == 0 and zs[j] != -mp.inf:
                    H = mp.fsum((a * (x - zs[j])) ** (1 / a) for x in zs if x > zs[j])
                    assert H >= 1 - mp.mpf(10) ** (-40)
    if alpha <= 3.0:  # the threshold form is resolvable at 50 digits
        with mp.workdps(DPS):
            for z, p in zip(Z, P):
                zs = [mp.mpf(float(x)) for x in z if x > -np.inf]
                a = mp.mpf(alpha) - 1
                lo, hi = a * max(zs) - 1, a * max(zs)
                for _ in range(200):
                    t = (lo + hi) / 2
                    if mp.fsum(max(a * x - t, 0) ** (1 / a) for x in zs) > 1:
                        lo = t
                    else:
                        hi = t
                q = [max(a * mp.mpf(float(x)) - lo, 0) ** (1 / a) if x > -np.inf else 0 for x in z]
                assert max(abs(x - y) for x, y in zip(p, q)) < 1e-40


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_entmax_bisect_accuracy(alpha, dtype):
    Z, P = _reference(alpha, dtype)
    ref = _as_float(P)
    p = entmax_bisect(Z, alpha=alpha)
    assert p.dtype == dtype
    assert np.all(p[np.isneginf(Z)] == 0)
    np.testing.assert_allclose(p, ref, rtol=0, atol=TOL[dtype])
    # any axis, same numbers
    np.testing.assert_allclose(entmax_bisect(Z.T, alpha=alpha, axis=0).T, p, rtol=0, atol=0)


def _array_library(name):
    if name == "torch":
        torch = pytest.importorskip("torch", reason="PyTorch is not installed")
        return torch.asarray, lambda a: a.numpy()
    xs = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")
    return xs.asarray, np.asarray


@pytest.mark.parametrize("lib", ["array_api_strict", "torch"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_entmax_bisect_accuracy_array_api(alpha, dtype, lib):
    """The Array API path (torch, CuPy, JAX...) meets the same bound: it has its
    own vectorised copy of both algorithms (threshold for alpha <= 2, smallest
    support entry above)."""
    pytest.importorskip("array_api_compat", reason="array-api-compat is not installed")
    asarray, to_numpy = _array_library(lib)
    Z, P = _reference(alpha, dtype)
    p = to_numpy(entmax_bisect(asarray(Z), alpha=alpha))
    assert p.dtype == dtype
    assert np.all(p[np.isneginf(Z)] == 0)
    np.testing.assert_allclose(p, _as_float(P), rtol=0, atol=TOL[dtype])
    pT = to_numpy(entmax_bisect(asarray(np.ascontiguousarray(Z.T)), alpha=alpha, axis=0))
    np.testing.assert_allclose(pT.T, p, rtol=0, atol=4e-16 if dtype == np.float64 else 0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_entmax_loss_accuracy(alpha, dtype):
    Z, P = _reference(alpha, dtype)
    n = Z.shape[0]
    rng = np.random.default_rng(int(alpha * 100))
    # a non-masked class per row
    y = np.array([rng.choice(np.flatnonzero(np.isfinite(z))) for z in Z])
    loss = EntmaxLoss(alpha)
    value, grad = loss.loss(Z, y), loss.gradient(Z, y)
    with mp.workdps(DPS):
        a1 = mp.mpf(alpha)
        ref_val = []
        for z, p, c in zip(Z, P, y):
            zs = [mp.mpf(float(x)) for x in z]
            pz = mp.fsum(pj * zj for pj, zj in zip(p, zs) if pj > 0)
            ent = (1 - mp.fsum(pj**a1 for pj in p)) / (a1 * (a1 - 1))
            ref_val.append(float(pz - zs[c] + ent))
    ref_val = np.array(ref_val)
    ref_grad = _as_float(P)
    ref_grad[np.arange(n), y] -= 1
    zscale = np.abs(np.where(np.isfinite(Z), Z, 0)).max(axis=1).astype(np.float64)
    tol = TOL[dtype]
    # the value involves p^T z: its rounding scales with |z|
    assert np.all(np.abs(value - ref_val) <= tol * np.maximum(1.0, zscale)), (
        np.abs(value - ref_val).max()
    )
    np.testing.assert_allclose(grad, ref_grad, rtol=0, atol=tol)


def _ref_jvp(p, v, alpha):
    with mp.workdps(DPS):
        e = 2 - mp.mpf(alpha)
        s = [pj**e if pj > 0 else mp.mpf(0) for pj in p]
        logs = [mp.log10(x) for x in s if x > 0]
    # s v - s (s.v)/sum(s) cancels over the range of s: enough digits for it
    with mp.workdps(DPS + int(max(logs) - min(logs)) + 10):
        s = [pj**e if pj > 0 else mp.mpf(0) for pj in p]
        sv = mp.fsum(a * b for a, b in zip(s, v)) / mp.fsum(s)
        return [float(sj * (vj - sv)) for sj, vj in zip(s, v)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_entmax_jvp_accuracy(alpha, dtype):
    """J v at the computed p: float64 against the exact p (end to end), float32
    against the JVP of the float32 p itself (float32 rounding of p is amplified
    ``alpha - 2`` times in ``s = p^(2-alpha)``)."""
    Z, P = _reference(alpha, dtype)
    p = entmax_bisect(Z, alpha=alpha)
    rng = np.random.default_rng(int(alpha * 10))
    V = rng.standard_normal(Z.shape).astype(dtype)
    jv = entmax_jvp(p, V, alpha)
    assert jv.dtype == dtype
    if dtype == np.float64:
        pref = P
    else:
        pref = [[mp.mpf(float(x)) for x in row] for row in p]
    ref = np.array([_ref_jvp(pr, [mp.mpf(float(x)) for x in v], alpha) for pr, v in zip(pref, V)])
    fmax = float(np.finfo(dtype).max)
    big = np.abs(ref) > fmax / 2
    assert np.all(np.isinf(jv[np.abs(ref) > fmax * 1.01]))
    ok = ~big
    tol = _row_tol(np.where(big, 0, ref), TOL[dtype])
    with np.errstate(invalid="ignore"):
        err = np.where(ok, np.abs(jv.astype(np.float64) - ref), 0)
    assert np.all(err <= tol), err.max()
    assert np.all(jv[p == 0] == 0)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 3.0, [[1.0], [2.5]]])
@pytest.mark.parametrize("max_iter", [2.7, True, "10", 0])
def test_entmax_bisect_refuses_a_max_iter_that_is_not_a_count(max_iter, alpha):
    from sksparsemax.transforms import entmax_bisect

    with pytest.raises((TypeError, ValueError), match="max_iter"):
        entmax_bisect([[0.0, 1.0], [0.0, 1.0]], alpha, max_iter=max_iter)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 3.0, [[1.0], [2.5]]])
@pytest.mark.parametrize("tol", [0.0, -1e-3, float("nan"), float("inf"), "1e-6"])
def test_entmax_bisect_refuses_a_bad_tol(tol, alpha):
    from sksparsemax.transforms import entmax_bisect

    with pytest.raises(ValueError, match="tol must be a finite positive number"):
        entmax_bisect([[0.0, 1.0], [0.0, 1.0]], alpha, tol=tol)
