"""Compiled alpha-normmax kernel (closed form at alpha = 2, root search otherwise).

Part of the numba backend: same conventions as :mod:`._numba_kernels`
(C-contiguous rows, preallocated outputs, first invalid row returned). The
arithmetic is the NumPy path's (:mod:`._normmax`), in float64.
"""

import numpy as np
from numba import njit

# alpha = 2 solves the equation of 1.5-entmax (sum_j [u_j - tau]_+^2 = 1, on
# u = z - max z instead of (z - max z) / 2): its candidate filter, sort and
# prefix rule are reused as they are.
from ._numba_entmax15_threshold import _entmax15_discard, _entmax15_prefix_tau
from ._numba_rows import (
    _INSERTION_MAX,
    _JIT,
    _JIT_INLINE,
    _block_sum,
    _row_max,
    _row_sum,
    _sort_desc,
)


@njit(**_JIT_INLINE)
def _normmax_root(buf, c, hi, alpha, tol, max_iter):
    """Root ``tau`` of ``sum_a [x_a - tau]_+^(alpha/(alpha-1)) = 1`` over ``buf[:c]``.

    The NumPy path's :func:`._normmax._threshold`: Newton steps on
    ``||[x - tau]_+||_b - 1`` from ``tau = -1``, bracket ``[-1, hi]``, a step
    outside it replaced by bisection; stop when ``|S - 1| <= tol`` or the
    bracket is narrower than ``tol * max(1, |tau|)``. Every step drops the
    candidates ``x <= lo`` (every later iterate is above ``lo``, so they
    contribute 0 from then on), compacting ``buf``.
    """
    a = alpha - 1.0
    e = 1.0 / a
    lo = -1.0
    t = lo
    for _ in range(max_iter):
        S = 0.0
        s1 = 0.0
        c2 = 0
        for b in range(c):
            x = buf[b]
            buf[c2] = x
            c2 += x > lo
            d = x - t
            if d > 0:
                q = d**e
                S += q * d
                s1 += q
        c = c2
        if S > 1.0:
            lo = t
        else:
            hi = t
        if abs(S - 1.0) <= tol or hi - lo <= tol * max(1.0, abs(t)):
            return t
        newton = t + (S ** (a / alpha) - 1.0) * S ** (1.0 / alpha) / s1
        if newton > lo and newton < hi:
            t = newton
        else:
            t = (lo + hi) / 2
    return t


@njit(**_JIT_INLINE)
def _closed_form_candidates(Z, i, mf, buf):
    """alpha = 2: the candidates ``u = z - max z > -1`` of row ``i`` into
    ``buf``, less those that lower bounds of the threshold rule out
    (``_entmax15_discard``); returns their number."""
    K = Z.shape[1]
    c = 0
    su = 0.0
    for j in range(K):
        u = np.float64(Z[i, j]) - mf
        buf[c] = u
        keep = u > -1.0
        su += u if keep else 0.0
        c += keep
    return _entmax15_discard(buf, c, su)


@njit(**_JIT)
def normmax_rows(Z, alpha, tol, max_iter, out, zmax):
    """alpha-normmax (alpha > 1) of every row of ``Z``.

    Per row, on ``x = z - max z`` in float64: ``alpha = 2`` by the sorted
    closed form (the prefix rule of 1.5-entmax on the sorted candidates), other alphas by the NumPy path's
    safeguarded Newton search (:func:`_normmax_root`) over the candidates
    ``x > -1`` (the others are 0 for every ``tau >= -1``), bracket ``[-1,
    -K^(-(alpha-1)/alpha)]``, then ``q = [x - tau]_+^(1/(alpha-1))``. The
    output is renormalised with the NumPy path's row sums. Returns the
    first invalid row or -1.
    """
    n, K = Z.shape
    e = 1.0 / (alpha - 1.0)
    closed = alpha == 2.0
    hi0 = -(float(K) ** (-(alpha - 1.0) / alpha))
    buf = np.empty(K, dtype=np.float64)
    taus = np.empty(K, dtype=np.float64)
    row = np.empty((1, K), dtype=np.float64)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=np.float64)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        mf = np.float64(m)
        if closed:
            # q = [u - tau]_+ with sum q^2 = 1: the prefix rule on the sorted
            # candidates. The sort stays in the kernel: a helper that passes
            # buf on to _sort_desc in one branch only would leave an unpaired
            # reference count per row (see _JIT_INLINE in ._numba_rows).
            c = _closed_form_candidates(Z, i, mf, buf)
            if c <= _INSERTION_MAX:
                for b in range(1, c):
                    x = buf[b]
                    p = b
                    while p > 0 and buf[p - 1] < x:
                        buf[p] = buf[p - 1]
                        p -= 1
                    buf[p] = x
            else:
                _sort_desc(buf, c)
            ts = _entmax15_prefix_tau(buf, c, taus)
            for j in range(K):
                d = (np.float64(Z[i, j]) - mf) - ts
                row[0, j] = d if d > 0 else 0.0
        else:
            c = 0
            for j in range(K):
                x = np.float64(Z[i, j]) - mf
                buf[c] = x
                c += x > -1.0
            t = _normmax_root(buf, c, hi0, alpha, tol, max_iter)
            for j in range(K):
                d = (np.float64(Z[i, j]) - mf) - t
                row[0, j] = d**e if d > 0 else 0.0
        s = _block_sum(row, 0, 0, K) if K <= 128 else _row_sum(row, 0, stack, vals)
        for j in range(K):
            out[i, j] = row[0, j] / s
    return -1
