"""Compiled alpha-entmax kernels (1.5-entmax and the root search for any alpha).

Part of the numba backend: same conventions as :mod:`._numba_kernels`
(C-contiguous rows, preallocated outputs, first invalid row returned).
"""

import math

import numpy as np
from numba import njit

# The closed form of 1.5-entmax, its sort-based fallback and the sort
# helpers (also used by normmax) live in ._numba_rows.
from ._numba_rows import (
    _ENTMAX15_SLACK,
    _INSERTION_MAX,
    _JIT,
    _JIT_INLINE,
    _JIT_REASSOC,
    _block_sum,
    _entmax15_closed_form,
    _entmax15_sorted_tau,
    _entmax15_support_tau,
    _entmax15_support_tau_buf,
    _row_max,
    _row_sum,
    _sort_desc,
)

# entmax15: above this row length, the Newton passes after the first run
# over the entries that can still be in the support, copied to a buffer.
_ENTMAX15_NEWTON_MAX = 128
# entmax15: on rows longer than this, the NumPy path sums the final support
# in decreasing order (and the kernels do the same).
_ENTMAX15_SORTED_MIN = 24
# entmax15: Newton passes before the sort-based fallback (a handful suffice).
_ENTMAX15_MAX_PASSES = 40


@njit(**_JIT_INLINE)
def _entmax15_sums_row(Z, i, m, t, check):
    """Sums of row ``i`` over ``S = {u > t}``: ``(|S|, sum u, sum u^2, #{u > check})``.

    ``u = (z - m) / 2``, rounded to the dtype of ``Z`` as the NumPy path
    computes it; the sums are float64. Branch-free, so that the loop is
    vectorised (the kernels allow the reassociation of these sums).
    """
    K = Z.shape[1]
    cnt = 0
    above = 0
    s1 = 0.0
    s2 = 0.0
    for j in range(K):
        u = np.float64((Z[i, j] - m) / 2)
        keep = u > t
        v = u if keep else 0.0
        s1 += v
        s2 += v * v
        cnt += keep
        above += u > check
    return cnt, s1, s2, above


@njit(**_JIT_INLINE)
def _entmax15_sums_buf(buf, c, t, check):
    """:func:`_entmax15_sums_row` over the values ``u`` in ``buf[:c]``."""
    cnt = 0
    above = 0
    s1 = 0.0
    s2 = 0.0
    for a in range(c):
        u = buf[a]
        keep = u > t
        v = u if keep else 0.0
        s1 += v
        s2 += v * v
        cnt += keep
        above += u > check
    return cnt, s1, s2, above


@njit(**_JIT_INLINE)
def _entmax15_newton_step(cnt, s1, s2, t):
    """Newton step on ``f(t) = sum_S (u - t)^2 - 1`` from ``t`` (sums over ``S = {u > t}``)."""
    d1 = s1 - cnt * t  # sum (u - t)
    d2 = s2 - 2.0 * t * s1 + cnt * t * t  # sum (u - t)^2
    return t + (d2 - 1.0) / (2.0 * d1)


@njit(**_JIT_INLINE)
def _entmax15_certified_now(cnt, above, t, new, tau):
    """Whether the closed form ``new`` of ``S = {u > t}`` is certified by the pass that gave it.

    The pass counted ``cnt = |S|`` and ``above = #{u > tau}`` for the
    previous closed form ``tau``. If ``t <= new <= tau`` and every entry of
    ``S`` is above ``tau``, then ``{u > new} = S``: ``new`` is the closed
    form of its own support, which the next pass would confirm by counting;
    this saves that pass, and the result is the same.
    """
    return above == cnt and t <= new and new <= tau


@njit(**_JIT_INLINE)
def _entmax15_first_step(Z, i, m):
    """First Newton pass of :func:`_entmax15_newton_tau`, at ``t = -1``.

    Returns the closed form ``tau`` for ``S = {u > -1}``, the size of that
    ``S`` and the next lower bound ``t``: the larger of the Newton step and
    Jensen's bound ``mean(u) - 1/sqrt(c)`` over the ``c`` candidates
    ``u > -1`` (``[.]_+^2`` is convex).
    """
    cnt, s1, s2, _ = _entmax15_sums_row(Z, i, m, -1.0, 0.0)
    t = _entmax15_newton_step(cnt, s1, s2, -1.0)
    jensen = s1 / cnt - 1.0 / math.sqrt(cnt)
    return _entmax15_closed_form(cnt, s1, s2), cnt, t if t > jensen else jensen


@njit(**_JIT_INLINE)
def _entmax15_newton_tau(Z, i, m):
    """Exact threshold of 1.5-entmax of row ``i`` (shifted by its maximum ``m``), sort-free.

    ``f(t) = sum_j [u_j - t]_+^2 - 1`` is convex and decreasing up to its
    root ``tau``, so Newton steps from a lower bound (``t = -1``: the
    largest ``u`` is 0; :func:`_entmax15_first_step`) increase
    monotonically to ``tau``. Each pass over the row gives the sums for the
    next step and the closed form ``tau_S`` for the support ``S = {u > t}``
    (:func:`_entmax15_closed_form`); ``tau_S`` is the threshold exactly when
    ``{u > tau_S} = S`` (then ``tau_S`` solves ``f = 0``, whose root is
    unique), which the next pass checks by counting (or the same pass,
    :func:`_entmax15_certified_now`). So the result is the
    closed form for the exact support, as the prefix rule of the NumPy path
    gives. Returns ``(tau, ok)``; ``ok`` is False if no check succeeded
    within ``_ENTMAX15_MAX_PASSES`` passes.
    """
    tau, size, t = _entmax15_first_step(Z, i, m)
    for _ in range(_ENTMAX15_MAX_PASSES):
        cnt, s1, s2, above = _entmax15_sums_row(Z, i, m, t, tau)
        if above == size:
            return tau, True
        new = _entmax15_closed_form(cnt, s1, s2)
        if _entmax15_certified_now(cnt, above, t, new, tau):
            return new, True
        tau, size = new, cnt
        t = _entmax15_newton_step(cnt, s1, s2, t)
    return tau, False


@njit(**_JIT_INLINE)
def _entmax15_newton_tau_compact(Z, i, m, buf):
    """:func:`_entmax15_newton_tau` for long rows: later passes over a few entries.

    After the first pass, the entries above its lower bound of ``tau``
    (less ``_ENTMAX15_SLACK``, far more than its rounding error) are copied
    into ``buf`` (float64; a branch taken for these few entries only), and
    the later passes run over them. A closed form below that cut is
    rejected (the check could not see the entries left out). Returns
    ``(tau, ok, c)``: ``buf[:c]`` holds the copied entries, in row order
    (with ``ok``, a superset of the support).
    """
    K = Z.shape[1]
    tau, size, t = _entmax15_first_step(Z, i, m)
    low = t - _ENTMAX15_SLACK
    c = 0
    for j in range(K):
        u = np.float64((Z[i, j] - m) / 2)
        if u > low:
            buf[c] = u
            c += 1
    for _ in range(_ENTMAX15_MAX_PASSES):
        cnt, s1, s2, above = _entmax15_sums_buf(buf, c, t, tau)
        if above == size and tau >= low:
            return tau, True, c
        new = _entmax15_closed_form(cnt, s1, s2)
        if _entmax15_certified_now(cnt, above, t, new, tau) and new >= low:
            return new, True, c
        tau, size = new, cnt
        t = _entmax15_newton_step(cnt, s1, s2, t)
    return tau, False, c


@njit(**_JIT_INLINE)
def _entmax15_write_row(Z, i, m, tau, out, rounded, stack, vals):
    """``out[i] = [u - tau]_+^2`` over its row sum (``tau`` rounded to the dtype of ``Z``).

    The rounding, the row sum and the division are those of the NumPy path.
    """
    K = Z.shape[1]
    rounded[0] = tau
    ts = rounded[0]
    for j in range(K):
        d = (Z[i, j] - m) / 2 - ts
        out[i, j] = d * d if d > 0 else 0
    s = _block_sum(out, i, 0, K) if K <= 128 else _row_sum(out, i, stack, vals)
    for j in range(K):
        out[i, j] = out[i, j] / s


# The two row loops allow reassociation (_JIT_REASSOC): LLVM then vectorises
# the float sums of _entmax15_sums_row and _entmax15_sums_buf. No other
# expression of theirs is a chain that it could reorder.


@njit(**_JIT_REASSOC)
def _entmax15_rows_short(Z, out, zmax, taus):
    """:func:`entmax15_rows` for rows of up to ``_ENTMAX15_NEWTON_MAX`` entries."""
    n, K = Z.shape
    buf = np.empty(2 * K, dtype=np.float64)
    scratch = np.empty(K, dtype=Z.dtype)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=out.dtype)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        tau, ok = _entmax15_newton_tau(Z, i, m)
        # Calls in the kernel itself (see _JIT_INLINE in ._numba_rows).
        if not ok:
            tau = _entmax15_sorted_tau(Z, i, m, scratch, taus)
        elif K > _ENTMAX15_SORTED_MIN:
            tau = _entmax15_support_tau(Z, i, m, tau, buf)
        _entmax15_write_row(Z, i, m, tau, out, taus, stack, vals)
    return -1


@njit(**_JIT_REASSOC)
def _entmax15_rows_long(Z, out, zmax, taus):
    """:func:`entmax15_rows` for rows of more than ``_ENTMAX15_NEWTON_MAX`` entries."""
    n, K = Z.shape
    buf = np.empty(2 * K, dtype=np.float64)
    scratch = np.empty(K, dtype=Z.dtype)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=out.dtype)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        tau, ok, c = _entmax15_newton_tau_compact(Z, i, m, buf)
        # Calls in the kernel itself (see _JIT_INLINE in ._numba_rows).
        if not ok:
            tau = _entmax15_sorted_tau(Z, i, m, scratch, taus)
        else:  # K > _ENTMAX15_NEWTON_MAX > _ENTMAX15_SORTED_MIN
            tau = _entmax15_support_tau_buf(buf, c, tau)
        _entmax15_write_row(Z, i, m, tau, out, taus, stack, vals)
    return -1


@njit(**_JIT)
def entmax15_rows(Z, out, zmax):
    """Exact 1.5-entmax of every row of ``Z``.

    Per row, with ``u = (z - max z) / 2``: the threshold ``tau`` by Newton
    steps and the closed form of its support (:func:`_entmax15_newton_tau`,
    :func:`_entmax15_newton_tau_compact` on rows longer than
    ``_ENTMAX15_NEWTON_MAX``; a sort of the candidates,
    :func:`_entmax15_sorted_tau`, should no check succeed), recomputed in
    the NumPy path's order of sums on rows longer than
    ``_ENTMAX15_SORTED_MIN`` (:func:`_entmax15_support_tau`); then ``out =
    [u - tau]_+^2`` over its row sum, with the rounding and the row sums of
    the NumPy path (:func:`_entmax15_write_row`). Returns the first invalid
    row or -1.
    """
    K = Z.shape[1]
    taus = np.empty(K, dtype=Z.dtype)
    if K <= _ENTMAX15_NEWTON_MAX:
        return _entmax15_rows_short(Z, out, zmax, taus)
    return _entmax15_rows_long(Z, out, zmax, taus)


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
        # the NumPy path's row sum, to the last bit
        s = _block_sum(row, 0, 0, K) if K <= 128 else _row_sum(row, 0, stack, vals)
        for j in range(K):
            out[i, j] = row[0, j] / s
    return -1
