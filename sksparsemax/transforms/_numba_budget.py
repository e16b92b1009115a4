"""Compiled budget sparsemax kernel (projection onto the capped simplex).

Part of the numba backend: same conventions as :mod:`._numba_kernels`
(C-contiguous rows, preallocated outputs, first invalid row returned). The
arithmetic is that of the NumPy path (:mod:`._budget`): the same float64
shifted scores, the same breakpoint values at which the segment is located
(the prefix sums in the same order) and the same closed form on the segment,
so both backends agree to rounding (only the sum over the free set is
accumulated in another order).
"""

import math

import numpy as np
from numba import njit

from ._numba_rows import _JIT, _JIT_INLINE, _row_max


@njit(**_JIT)
def _sort_desc(buf, c):
    """Sort ``buf[:c]`` in decreasing order, in place (numba's quicksort)."""
    buf[:c].sort()
    for a in range(c // 2):
        x = buf[a]
        buf[a] = buf[c - 1 - a]
        buf[c - 1 - a] = x


@njit(**_JIT_INLINE)
def _flat_tau(ys, c, b):
    """``tau = y_(b+1)`` if ``f`` is flat at the integer level ``b``, else NaN.

    ``ys[:c]`` are the finite shifted scores sorted decreasingly; flat means
    ``y_(b) - y_(b+1) >= 1`` (``y_(c+1) = -inf``): the projection is then the
    indicator of the b largest scores, exact with this ``tau``.
    """
    if b != math.floor(b):
        return np.nan
    j = int(b)
    nxt = ys[j] if j < c else -np.inf
    if ys[j - 1] - nxt >= 1.0:
        return nxt
    return np.nan


@njit(**_JIT_INLINE)
def _segment(ys, c, b):
    """``(t_lo, t_hi)``: the segment of breakpoints where ``f`` reaches ``b``.

    Merges the sorted upper breakpoints ``ys[:c]`` and lower ones ``ys[:c] -
    1`` (an upper one first among equal values, as the NumPy path's stable
    sort) and evaluates ``f(v) = sum_U y - sum_L (y - 1) - (|U| - |L|) v`` at
    each, with the NumPy path's prefix sums; stops at the first ``v`` with
    ``f(v) >= b`` (``t_lo = v``; ``-inf`` if rounding leaves none).
    """
    iu = 0
    il = 0
    su = 0.0
    sl = 0.0
    slope = 0
    t_hi = ys[0]
    while il < c:
        if iu < c and ys[iu] >= ys[il] - 1.0:
            v = ys[iu]
            su += v
            slope += 1
            iu += 1
        else:
            v = ys[il] - 1.0
            sl += v
            slope -= 1
            il += 1
        if su - sl - slope * v >= b:
            return v, t_hi
        t_hi = v
    return -np.inf, t_hi


@njit(**_JIT_INLINE)
def _budget_tau(ys, c, b):
    """Threshold of one row: ``sum_i clip(y_i - tau, 0, 1) = b`` (see :mod:`._budget`)."""
    t = _flat_tau(ys, c, b)
    if not math.isnan(t):
        return t
    t_lo, t_hi = _segment(ys, c, b)
    n_free = 0
    n_cap = 0
    s = 0.0
    for a in range(c):
        y = ys[a]
        if y >= t_hi:
            if y - 1.0 >= t_hi:
                n_cap += 1
            else:
                n_free += 1
                s += y
    if n_free == 0:
        return t_hi
    t = (s + n_cap - b) / n_free
    return min(max(t, t_lo), t_hi)


@njit(**_JIT)
def budget_sparsemax_rows(Z, budget, out, zmax, count):
    """Budget sparsemax of every row of ``Z`` with the budgets ``budget`` (n,).

    Per row: the maximum (invalid rows stop the loop), the finite shifted
    scores ``y = z - max z`` in float64 (their number in ``count``), sorted
    decreasingly; the threshold by :func:`_budget_tau`; ``out = clip(y -
    tau, 0, 1)``, exactly 0 at masks. Returns the first row that is invalid
    or whose budget exceeds ``count`` (the caller tells them apart by
    ``zmax``), or -1.
    """
    n, K = Z.shape
    ys = np.empty(K, dtype=np.float64)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        m64 = np.float64(m)
        c = 0
        for j in range(K):
            y = np.float64(Z[i, j]) - m64
            if y > -np.inf:
                ys[c] = y
                c += 1
        count[i] = c
        b = budget[i]
        if b > c:
            return i
        _sort_desc(ys, c)
        tau = _budget_tau(ys, c, b)
        for j in range(K):
            y = np.float64(Z[i, j]) - m64
            d = y - tau
            out[i, j] = (d if d < 1.0 else 1.0) if y > tau else 0.0
    return -1
