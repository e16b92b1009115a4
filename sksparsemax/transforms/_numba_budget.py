"""Compiled budget sparsemax kernel (projection onto the capped simplex).

Part of the numba backend: same conventions as :mod:`._numba_kernels`
(C-contiguous rows, preallocated outputs, first invalid row returned). The
method is that of the NumPy path (:mod:`._budget`): the same float64 shifted
scores, the same safeguarded Newton iteration on ``f(t) = sum_i clip(y_i -
t, 0, 1) - b`` from the bracket ``[min y - 2, 0]`` and the start ``t = -1``,
the same stopping rules and the same finish (closed form, kinks, flat rows),
so both backends agree to rounding (the sums are accumulated in another
order). Per row, the iteration runs over a candidate buffer, without a sort:
the entries below the bracket (0 for every ``tau`` in it) and those capped
at its top leave it.
"""

import math

import numpy as np
from numba import njit

from ._numba_rows import _JIT, _JIT_INLINE, _row_max

_EPS = np.finfo(np.float64).eps


@njit(**_JIT_INLINE)
def _evaluate(ys, c, t, lo, hi, drop):
    """``f(t) + b``, the counts of ``p > 0`` and ``p = 1`` and the new ``c``.

    Passes over the candidates ``ys[:c]``, keeping (packed left) only those
    with ``lo < y`` and ``y - hi < 1``; the others are 0, or 1, for every
    ``tau`` in ``[lo, hi]`` (``t`` is in it). ``drop`` accumulates them:
    ``[number capped, max of the zeros, min of the capped]``; they count in
    the results. Branch-free: the tests are data-dependent. At most 64
    candidates are kept as they are.
    """
    s = 0.0
    n_pos = 0
    n_cap = 0
    if c <= 64:  # short: no packing, a loop without stores
        for a in range(c):
            d = ys[a] - t
            s += min(max(d, 0.0), 1.0)
            n_pos += d > 0.0
            n_cap += d >= 1.0
        k0 = int(drop[0])
        return s + k0, n_pos + k0, n_cap + k0, c
    w = 0
    k = int(drop[0])
    z_max, c_min = drop[1], drop[2]
    for a in range(c):
        y = ys[a]
        ys[w] = y
        zero = y <= lo
        cap = y - hi >= 1.0
        w += not (zero or cap)
        k += cap
        z_max = max(z_max, y if zero else -np.inf)
        c_min = min(c_min, y if cap else np.inf)
        d = y - t
        s += min(max(d, 0.0), 1.0)
        n_pos += d > 0.0
        n_cap += d >= 1.0
    k0 = int(drop[0])
    drop[0], drop[1], drop[2] = k, z_max, c_min
    return s + k0, n_pos + k0, n_cap + k0, w


@njit(**_JIT_INLINE)
def _segment_tau(ys, c, b, t_lo, t_hi, n_drop):
    """The closed form on ``[t_lo, t_hi]`` (no breakpoint inside), clipped to it."""
    n_free = 0
    n_cap = n_drop
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


@njit(**_JIT_INLINE)
def _snap_tau(ys, c, b, tau, K):
    """``tau`` moved onto a kink within its rounding error (:func:`._budget._snap_to_kinks`)."""
    n_free = 0
    up = np.inf
    down = -np.inf
    for a in range(c):
        y = ys[a]
        d = y - tau
        if 0.0 < d < 1.0:
            n_free += 1
            up = min(up, y)
            down = max(down, y)
    if n_free == 0:
        return tau
    down -= 1.0
    tol = 4.0 * _EPS * (1.0 + abs(tau) + math.log2(K + 1.0) * b / n_free)
    if up - tau <= tol:
        tau = up
    if tau - down <= tol and tau > down:
        tau = down
    return tau


@njit(**_JIT_INLINE)
def _flat_tau(ys, c, b, tau, drop):
    """``y_(b+1)`` (``-inf`` if none) if ``f`` is flat at the integer ``b``, else ``tau``.

    Flat means ``y_(b) - y_(b+1) >= 1``; ``tau`` is within rounding of the
    root, so the b largest scores are then the capped entries or those with
    ``p > 0`` at ``tau`` (as :func:`._budget._flat_rows`).
    """
    if b != math.floor(b):
        return tau
    n_cap = int(drop[0])
    n_pos = n_cap
    min_cap, min_pos = drop[2], drop[2]
    max_rest, max_zero = drop[1], drop[1]
    for a in range(c):
        y = ys[a]
        d = y - tau
        if d >= 1.0:
            n_cap += 1
            min_cap = min(min_cap, y)
        else:
            max_rest = max(max_rest, y)
        if d > 0.0:
            n_pos += 1
            min_pos = min(min_pos, y)
        else:
            max_zero = max(max_zero, y)
    if n_cap == b:
        last, nxt = min_cap, max_rest
    elif n_pos == b:
        last, nxt = min_pos, max_zero
    else:
        return tau
    return nxt if last - nxt >= 1.0 else tau


@njit(**_JIT)
def _budget_tau(ys, c, b, ymin, drop, K, max_iter=200):
    """Threshold of one row: ``sum_i clip(y_i - tau, 0, 1) = b`` (see :mod:`._budget`).

    ``ys[:c]`` holds the finite shifted scores (maximum 0, minimum ``ymin``);
    the buffer is reordered and shrunk in place.
    """
    if b == c:  # all ones
        return -np.inf
    drop[0], drop[1], drop[2] = 0.0, -np.inf, np.inf
    lo = min(ymin - 2.0, np.nextafter(ymin, -np.inf))  # f(lo) = c - b >= 0
    hi, t = 0.0, -1.0
    prev_pos, prev_cap = -1, -1
    newton = False
    for _ in range(max_iter):
        s, n_pos, n_cap, c = _evaluate(ys, c, t, lo, hi, drop)
        f = s - b
        n_free = n_pos - n_cap
        if f > 0.0:
            lo = t
        elif f < 0.0:
            hi = t
        if n_free == 0 and f == 0.0:
            return _flat_tau(ys, c, b, _snap_tau(ys, c, b, t, K), drop)
        nxt = t + f / n_free if n_free > 0 else np.nan
        moved = n_pos != prev_pos or n_cap != prev_cap
        if n_free > 0 and ((newton and not moved) or nxt == t):
            tau = _snap_tau(ys, c, b, min(max(nxt, lo), hi), K)
            return _flat_tau(ys, c, b, tau, drop)
        h = min(hi, -1.0)  # a bracket over orders of magnitude: geometric
        mid = -math.sqrt(-lo) * math.sqrt(-h) if lo < 4.0 * h else 0.5 * lo + 0.5 * hi
        if mid <= lo or mid >= hi:
            break
        newton = lo < nxt < hi
        t = nxt if newton else mid
        prev_pos, prev_cap = n_pos, n_cap
    tau = _segment_tau(ys, c, b, lo, hi, int(drop[0]))
    return _flat_tau(ys, c, b, tau, drop)


@njit(**_JIT)
def budget_sparsemax_rows(Z, budget, out, zmax, count):
    """Budget sparsemax of every row of ``Z`` with the budgets ``budget`` (n,).

    Per row: the maximum (invalid rows stop the loop), the finite shifted
    scores ``y = z - max z`` in float64 (their number in ``count``); the
    threshold by :func:`_budget_tau`; ``out = clip(y - tau, 0, 1)``,
    exactly 0 at masks. Returns the first row that is invalid or whose
    budget exceeds ``count`` (the caller tells them apart by ``zmax``), or
    -1.
    """
    n, K = Z.shape
    ys = np.empty(K, dtype=np.float64)
    drop = np.empty(3, dtype=np.float64)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        m64 = np.float64(m)
        c = 0
        ymin = 0.0
        for j in range(K):
            y = np.float64(Z[i, j]) - m64
            if y > -np.inf:
                ys[c] = y
                c += 1
                ymin = min(ymin, y)
        count[i] = c
        b = budget[i]
        if b > c:
            return i
        tau = _budget_tau(ys, c, b, ymin, drop, K)
        for j in range(K):
            y = np.float64(Z[i, j]) - m64
            d = y - tau
            out[i, j] = (d if d < 1.0 else 1.0) if y > tau else 0.0
    return -1
