"""Compiled alpha-entmax for any alpha, by a safeguarded root search.

Part of the numba backend: same conventions as :mod:`._numba_kernels`
(C-contiguous rows, preallocated outputs, first invalid row returned). The
exact 1.5-entmax kernel is in :mod:`._numba_entmax15`.
"""

import math

import numpy as np
from numba import njit

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
def _entmax_root(buf, c, hi, e, square, linear, tol, max_iter):
    """Root ``tau`` of ``sum_a [x_a - tau]_+^e = 1`` over the candidates ``buf[:c]``.

    The NumPy path's safeguarded Newton iteration: bracket ``[-1, hi]``,
    start at its left end; stop when ``|f(tau)| <= tol`` or the bracket is
    narrower than ``tol * max(1, |tau|)``; a Newton iterate outside the
    bracket is replaced by bisection. Every step drops the candidates
    ``x <= lo`` (every later iterate is above the left end ``lo`` of the
    bracket, so they contribute 0 from then on), compacting ``buf``; the
    sums are those of the full rows, in the same order. ``square``
    (``e = 2``) and ``linear`` (``e = 1``) avoid the power.
    """
    em1 = e - 1.0
    lo = -1.0
    t = lo
    for _ in range(max_iter):
        f = 0.0
        fp = 0.0
        c2 = 0
        if square:
            for a in range(c):
                x = buf[a]
                buf[c2] = x
                c2 += x > lo
                d = x - t
                d = d if d > 0 else 0.0
                f += d * d
                fp += d
        elif linear:
            for a in range(c):
                x = buf[a]
                buf[c2] = x
                c2 += x > lo
                d = x - t
                f += d if d > 0 else 0.0
                fp += 1.0 if d > 0 else 0.0
        else:
            for a in range(c):
                x = buf[a]
                buf[c2] = x
                c2 += x > lo
                d = x - t
                if d > 0:
                    w = d**em1
                    f += w * d
                    fp += w
        c = c2
        f -= 1.0
        fp *= e
        if f > 0:
            lo = t
        else:
            hi = t
        if abs(f) <= tol or hi - lo <= tol * max(1.0, abs(t)):
            return t
        newton = t + f / fp
        if newton > lo and newton < hi:
            t = newton
        else:
            t = (lo + hi) / 2
    return t


@njit(**_JIT_INLINE)
def _tsallis_power(d, e, square, linear):
    """``[d]_+^e``, without the power for ``e = 2`` (``square``) and ``e = 1`` (``linear``)."""
    if square:
        return d * d if d > 0 else 0.0
    if linear:
        return d if d > 0 else 0.0
    return d**e if d > 0 else 0.0


@njit(**_JIT_INLINE)
def _gap_terms_sum(buf, c, t, a, e):
    """``sum_{b < c} [a (buf[b] - t)]_+^e`` (``H(t)`` over the sorted candidates)."""
    h = 0.0
    for b in range(c):
        d = a * (buf[b] - t)
        if d > 0:
            h += d**e
    return h


@njit(**_JIT_INLINE)
def _gap_root(buf, c, a, e, tol, max_iter):
    """Smallest support value ``z_r`` and ``u = p_r`` from the sorted candidates ``buf[:c]``.

    The NumPy path's :func:`._entmax._entmax_gap`: binary search of the
    support size on ``H(z_(k)) < 1``, then Newton steps on ``s = log u`` for
    ``m u + sum_{d_j > 0} (u^a + d_j)^(1/a) = 1``, ``d_j = a (z_j - z_r)``,
    from ``u = (1 - H(z_r)) / m``, with the same stopping rule. Returns
    ``(z_r, u, u^a)``.
    """
    lo = 1
    hi = c + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _gap_terms_sum(buf, c, buf[mid - 1], a, e) < 1.0:
            lo = mid
        else:
            hi = mid
    zr = buf[lo - 1]
    m = 0.0
    k = 0
    h = 0.0
    for b in range(c):
        d = a * (buf[b] - zr)
        if d > 0:
            h += d**e
            buf[k] = d  # keep the d_j > 0 only
            k += 1
        elif d == 0:
            m += 1.0
    s = math.log((1.0 - h) / m)
    for _ in range(max_iter):
        ua = math.exp(a * s)
        us = math.exp(s)
        g = 0.0
        r = 0.0
        for b in range(k):
            wd = buf[b] + ua
            pw = wd**e
            g += pw
            r += pw / wd
        g += m * us
        step = (g - 1.0) / (m * us + ua * r)
        s -= step
        if abs(g - 1.0) <= tol or us * abs(step) <= tol:
            break
    return zr, math.exp(s), math.exp(a * s)


@njit(**_JIT_INLINE)
def _gap_row(Z, i, mf, alpha, tol, max_iter, buf, row):
    """alpha-entmax (alpha > 2) of row ``i`` (maximum ``mf``) into ``row[0]``,
    parametrised by its smallest support entry.

    As the NumPy path (:func:`._entmax._entmax_gap`): the candidates
    ``(alpha - 1)(max z - z) < 1`` (in float64) are sorted decreasingly,
    :func:`_gap_root` gives ``z_r`` and ``u``, and ``p_j = (u^a + a (z_j -
    z_r))^(1/a)`` (``u`` for the ties of ``z_r``, 0 below); unnormalised.
    """
    K = Z.shape[1]
    a = alpha - 1.0
    e = 1.0 / a
    c = 0
    for j in range(K):
        x = np.float64(Z[i, j])
        buf[c] = x
        c += a * (mf - x) < 1.0
    # Sort the candidates decreasingly (in the kernel: see entmax15_rows).
    if c <= _INSERTION_MAX:
        for b in range(1, c):
            x = buf[b]
            q = b
            while q > 0 and buf[q - 1] < x:
                buf[q] = buf[q - 1]
                q -= 1
            buf[q] = x
    else:
        _sort_desc(buf, c)
    zr, u, ua = _gap_root(buf, c, a, e, tol, max_iter)
    for j in range(K):
        d = a * (np.float64(Z[i, j]) - zr)
        if d > 0:
            row[0, j] = (d + ua) ** e
        elif d == 0:
            row[0, j] = u
        else:
            row[0, j] = 0.0


@njit(**_JIT_INLINE)
def _threshold_row(Z, i, mf, alpha, tol, max_iter, buf, row):
    """alpha-entmax (1 < alpha <= 2) of row ``i`` (maximum ``mf``) into
    ``row[0]``, unnormalised: the NumPy path's safeguarded Newton steps on
    ``x = (alpha - 1)(z - max z)`` in float64, bracket ``[-1, -K^(1-alpha)]``
    (:func:`_entmax_root`). Only the candidates ``x > -1`` enter the sums
    (the others contribute 0 for every ``tau >= -1``)."""
    K = Z.shape[1]
    am1 = alpha - 1.0
    e = 1.0 / am1
    square = e == 2.0  # alpha = 1.5: d ** 1 is d, d ** 2 is d * d
    linear = e == 1.0  # alpha = 2: d ** 0 is 1, d ** 1 is d
    c = 0
    for j in range(K):
        x = am1 * (np.float64(Z[i, j]) - mf)
        buf[c] = x
        c += x > -1.0
    t = _entmax_root(buf, c, -(float(K) ** (1.0 - alpha)), e, square, linear, tol, max_iter)
    for j in range(K):
        row[0, j] = _tsallis_power(am1 * (np.float64(Z[i, j]) - mf) - t, e, square, linear)


@njit(**_JIT)
def entmax_bisect_rows(Z, alphas, tol, max_iter, out, zmax):
    """alpha-entmax of every row ``i`` at its own ``alphas[i] > 1``.

    ``alphas[i] > 2`` takes the smallest-support-entry form
    (:func:`_gap_row`), ``1 < alphas[i] <= 2`` the threshold form
    (:func:`_threshold_row`): the NumPy path's split. Each row is computed
    on its own, so a row's result does not depend on the other rows (one
    alpha for all rows is ``alphas`` filled with it). The output is
    renormalised with the NumPy path's row sums. Returns the first invalid
    row or -1.
    """
    n, K = Z.shape
    buf = np.empty(K, dtype=np.float64)
    row = np.empty((1, K), dtype=np.float64)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=np.float64)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        alpha = alphas[i]
        if alpha > 2.0:
            _gap_row(Z, i, np.float64(m), alpha, tol, max_iter, buf, row)
        else:
            _threshold_row(Z, i, np.float64(m), alpha, tol, max_iter, buf, row)
        # the NumPy path's row sum, in the order of NumPy's pairwise sum
        s = _block_sum(row, 0, 0, K) if K <= 128 else _row_sum(row, 0, stack, vals)
        for j in range(K):
            out[i, j] = row[0, j] / s
    return -1
