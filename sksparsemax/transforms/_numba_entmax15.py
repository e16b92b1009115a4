"""Compiled exact 1.5-entmax (numba backend; named by :mod:`._numba_kernels`).

Newton steps on the threshold certified by the closed form of their
support; rows longer than ``_ENTMAX15_NEWTON_MAX`` are read once and the
steps run over the entries that can be in the support. Same conventions as
:mod:`._numba_kernels` (C-contiguous rows, preallocated outputs, first
invalid row returned).
"""

import math

import numpy as np
from numba import njit

from ._numba_candidates import entmax15_candidates
from ._numba_columns import _COLUMNS_MAX, entmax15_columns

# The support size above which the NumPy path sums a 1.5-entmax support in
# decreasing order (_entmax15_tau_of_support follows the same rule).
from ._entmax15_numpy import _SORTED_SUPPORT

# The closed form of 1.5-entmax, its Newton step and its sort-based fallback
# (shared with the column kernels, the loss kernel and normmax).
from ._numba_entmax15_threshold import (
    _ENTMAX15_MAX_PASSES,
    _entmax15_closed_form,
    _entmax15_newton_step,
    _entmax15_pair_bound,
    _entmax15_sorted_tau,
)
from ._numba_rows import (
    _BLOCKED_MAX_MIN,
    _INSERTION_MAX,
    _JIT,
    _JIT_INLINE,
    _JIT_REASSOC,
    _block_sum,
    _pairwise_row_sum,
    _row_max_and_low,
    _row_max_of_lanes,
    _sort_desc,
    _store_max,
)

# entmax15: rows longer than this are read once, listing the entries that
# can be in the support, and the Newton passes run over these.
_ENTMAX15_NEWTON_MAX = 128
# entmax15: on rows longer than this, the NumPy path sums the final support
# in decreasing order (and the kernels do the same).
_ENTMAX15_SORTED_MIN = 24
# entmax15, long rows: the rounding of u = (z - m) / 2 is far below this
# (2.4e-7 in float32 for |z - m| <= 2); see _entmax15_rows_long.
_ENTMAX15_FLOOR_SLACK = 1e-6
# entmax15: rows of at least _BLOCKED_MAX_MIN entries start the Newton
# iteration from this many Newton steps on their 8 lane maxima
# (_entmax15_lane_bound); a third step gains too little to pay for itself.
_ENTMAX15_LANE_STEPS = 2


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
def _entmax15_first_step(Z, i, m, start):
    """First Newton pass of :func:`_entmax15_newton_tau`, at ``t = start``.

    Returns the closed form ``tau`` for ``S = {u > start}``, the size of that
    ``S`` and the next lower bound ``t``: the larger of the Newton step and
    Jensen's bound ``mean(u) - 1/sqrt(c)`` over the ``c`` entries of ``S``
    (``[.]_+^2`` is convex).
    """
    cnt, s1, s2, _ = _entmax15_sums_row(Z, i, m, start, 0.0)
    t = _entmax15_newton_step(cnt, s1, s2, start)
    jensen = s1 / cnt - 1.0 / math.sqrt(cnt)
    return _entmax15_closed_form(cnt, s1, s2), cnt, t if t > jensen else jensen


@njit(**_JIT_INLINE)
def _entmax15_lane_bound(lanes, m):
    """A lower bound of the 1.5-entmax threshold from 8 entries ``lanes`` of a row of maximum ``m``.

    As :func:`_entmax15_pair_bound` with 8 entries (the row's lane maxima,
    :func:`._numba_rows._row_max_of_lanes`): the threshold of a part of a
    row is at most the row's, and Newton steps from -1 on the part's
    ``f(t) = sum [u - t]_+^2 - 1``, ``u = (z - m) / 2``, stay below the
    part's threshold (``f`` is convex and decreasing; a first step from
    above its root, where the row's maximum is not among the 8, lands
    below it). On rows of random scores the largest entries are mostly
    lane maxima, so the bound is near the row's threshold and the Newton
    iteration over the whole row, which starts from it, takes fewer
    passes; the steps on 8 values in registers cost less than one such
    pass. Never below -1, the iteration's own start (a lower bound since
    the largest ``u`` is 0).
    """
    t = -1.0
    for _ in range(_ENTMAX15_LANE_STEPS):
        d1 = 0.0
        d2 = 0.0
        for r in range(8):
            d = np.float64((lanes[r] - m) / 2) - t
            d = d if d > 0 else 0.0
            d1 += d
            d2 += d * d
        if not d1 > 0:  # every lane at or below t (-inf masks)
            break
        t += (d2 - 1.0) / (2.0 * d1)
    return t if t > -1.0 else -1.0


@njit(**_JIT_INLINE)
def _entmax15_newton_tau(Z, i, m, start):
    """Exact threshold of 1.5-entmax of row ``i`` (shifted by its maximum ``m``), sort-free.

    ``f(t) = sum_j [u_j - t]_+^2 - 1`` is convex and decreasing up to its
    root ``tau``, so Newton steps from a lower bound (``start``: -1, since
    the largest ``u`` is 0, :func:`_entmax15_pair_bound` or
    :func:`_entmax15_lane_bound`; :func:`_entmax15_first_step`) increase
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
    tau, size, t = _entmax15_first_step(Z, i, m, start)
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
def _entmax15_newton_tau_candidates(Z, i, m, idx, n, floor, buf):
    """:func:`_entmax15_newton_tau` over the candidate columns ``idx[:n]`` of a long row.

    The candidates (:func:`._numba_candidates.entmax15_candidates`) include
    every entry of the row with ``u > floor``; those left out have ``u <=
    floor`` (``floor >= -1``, below the threshold). Their ``u`` go to
    ``buf[:n]`` (float64, row order) and every pass runs over them: the root
    of the candidates' ``f`` is the row's, and so are the sums over ``S =
    {u > t}`` for ``t >= floor``. A closed form at or below ``floor`` is not
    certified (the count could not see the entries left out). Returns
    ``(tau, ok)``.
    """
    for q in range(n):
        buf[q] = np.float64((Z[i, idx[q]] - m) / 2)
    cnt, s1, s2, _ = _entmax15_sums_buf(buf, n, -1.0, 0.0)
    tau = _entmax15_closed_form(cnt, s1, s2)
    size = cnt
    t = _entmax15_newton_step(cnt, s1, s2, -1.0)
    jensen = s1 / cnt - 1.0 / math.sqrt(cnt)
    t = t if t > jensen else jensen
    for _ in range(_ENTMAX15_MAX_PASSES):
        cnt, s1, s2, above = _entmax15_sums_buf(buf, n, t, tau)
        if above == size and tau >= floor:
            return tau, True
        new = _entmax15_closed_form(cnt, s1, s2)
        if _entmax15_certified_now(cnt, above, t, new, tau) and new >= floor:
            return new, True
        tau, size = new, cnt
        t = _entmax15_newton_step(cnt, s1, s2, t)
    return tau, False


@njit(**_JIT_INLINE)
def _entmax15_write_row(Z, i, m, tau, out, rounded):
    """``out[i] = [u - tau]_+^2`` over its row sum (``tau`` rounded to the dtype of ``Z``).

    The rounding, the row sum and the division are those of the NumPy path,
    on rows of at most ``_ENTMAX15_NEWTON_MAX`` (128) entries: NumPy sums
    such a row as :func:`._numba_rows._block_sum` does. (Without a branch
    to the longer rows' sum: an array that only one branch passes on keeps
    numba from pairing the reference counts of this inlined helper's
    arrays, which every row would then update.)
    """
    K = Z.shape[1]
    rounded[0] = tau
    ts = rounded[0]
    for j in range(K):
        d = (Z[i, j] - m) / 2 - ts
        out[i, j] = d * d if d > 0 else 0
    s = _block_sum(out, i, 0, K)
    for j in range(K):
        out[i, j] = out[i, j] / s


@njit(**_JIT)
def _entmax15_support_tau(Z, i, m, tau, buf):
    """``tau`` recomputed from its support ``{u > tau}`` in row ``i`` (:func:`_entmax15_tau_of_support`).

    ``buf``: float64 scratch of length 2K.
    """
    K = Z.shape[1]
    c = 0
    for j in range(K):  # branch-free gather: the test is mispredicted otherwise
        u = np.float64((Z[i, j] - m) / 2)
        buf[c] = u
        c += u > tau
    return _entmax15_tau_of_support(buf, c, K, tau)


@njit(**_JIT)
def _entmax15_support_tau_buf(buf, n, tau):
    """:func:`_entmax15_support_tau` from candidates ``buf[:n]`` (row order) that include the support.

    The long rows' kernel keeps the entries that can be in the support in
    ``buf`` (length at least 2n): the support is gathered from them in
    place, in the same order, instead of from the whole row.
    """
    c = 0
    for a in range(n):
        u = buf[a]
        buf[c] = u
        c += u > tau
    return _entmax15_tau_of_support(buf, c, n, tau)


@njit(**_JIT_INLINE)
def _entmax15_tau_of_support(buf, c, off, tau):
    """The closed form of the support ``buf[:c]`` (row order); large supports summed in decreasing order.

    The closed form cancels (``1 - |S| var``), so the order of its sums
    shows in the last ulps of ``tau``. Supports of more than
    ``_SORTED_SUPPORT`` entries are summed in decreasing order, as the NumPy
    path and the sort-based algorithm sum them, smaller ones in the order of
    the row, as the NumPy path does: the two backends then agree to about
    one ulp. Supports of up to two entries are left as they are (``tau`` is
    returned, as in the NumPy path). ``buf[off:off + c]`` is scratch for the
    sort (``off >= c``). Inlined into its callers, which are compiled on
    their own, so these sums are never reassociated.
    """
    if c <= 2:
        return tau
    s1 = 0.0
    s2 = 0.0
    if c <= _SORTED_SUPPORT:
        for a in range(c):
            s1 += buf[a]
            s2 += buf[a] * buf[a]
        return _entmax15_closed_form(c, s1, s2)
    if c <= _INSERTION_MAX:
        # Branch-free sort by rank (ties keep their order): into buf[off:].
        for a in range(c):
            x = buf[a]
            r = 0
            for b in range(c):
                y = buf[b]
                r += (y > x) | ((y == x) & (b < a))
            buf[off + r] = x
        for a in range(off, off + c):
            s1 += buf[a]
            s2 += buf[a] * buf[a]
        return _entmax15_closed_form(c, s1, s2)
    _sort_desc(buf, c)
    for a in range(c):
        s1 += buf[a]
        s2 += buf[a] * buf[a]
    return _entmax15_closed_form(c, s1, s2)


# The two row loops allow reassociation (_JIT_REASSOC): LLVM then vectorises
# the float sums of _entmax15_sums_row and _entmax15_sums_buf. No other
# expression of theirs is a chain that it could reorder.


@njit(**_JIT_REASSOC)
def _entmax15_rows_short(Z, out, zmax, taus):
    """:func:`entmax15_rows` for rows of more than ``_COLUMNS_MAX`` and up to ``_ENTMAX15_NEWTON_MAX`` entries.

    The Newton iteration starts from :func:`_entmax15_pair_bound` on rows
    shorter than ``_BLOCKED_MAX_MIN`` and from :func:`_entmax15_lane_bound`
    on longer rows, whose maximum is found from 8 lane maxima anyway.
    """
    n, K = Z.shape
    buf = np.empty(2 * K, dtype=np.float64)
    scratch = np.empty(K, dtype=Z.dtype)
    for i in range(n):
        if K >= _BLOCKED_MAX_MIN:
            m, lanes, ok = _row_max_of_lanes(Z, i, zmax)
            if not ok:
                return i
            start = _entmax15_lane_bound(lanes, m)
        else:
            m, low, ok = _row_max_and_low(Z, i, zmax)
            if not ok:
                return i
            start = _entmax15_pair_bound(low, m)
        tau, ok = _entmax15_newton_tau(Z, i, m, start)
        # Calls in the kernel itself (see _JIT_INLINE in ._numba_rows).
        if not ok:
            tau = _entmax15_sorted_tau(Z, i, m, scratch, taus)
        else:  # K > _COLUMNS_MAX = _ENTMAX15_SORTED_MIN
            tau = _entmax15_support_tau(Z, i, m, tau, buf)
        _entmax15_write_row(Z, i, m, tau, out, taus)
    return -1


@njit(**_JIT_REASSOC)
def _entmax15_rows_long(Z, out, zmax, taus):
    """:func:`entmax15_rows` for rows of more than ``_ENTMAX15_NEWTON_MAX`` entries.

    Each row is read once (:func:`._numba_candidates.entmax15_candidates`:
    its maximum, the entries that can be in the support, zeros written to
    ``out``); the threshold comes from the candidates
    (:func:`_entmax15_newton_tau_candidates`; the sort of the whole row
    should no check succeed), and only the support is written and
    normalised, by the NumPy path's row sum
    (:func:`._numba_rows._pairwise_row_sum`).
    """
    n, K = Z.shape
    buf = np.empty(2 * K, dtype=np.float64)
    idx = np.empty(K, dtype=np.intp)
    scratch = np.empty(K, dtype=Z.dtype)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=out.dtype)
    for i in range(n):
        m, nan, c, cut = entmax15_candidates(Z, i, idx, out, buf)
        if not _store_max(m, nan, zmax, i):
            return i
        m = zmax[i]
        # Entries below the cut have u <= (cut - m) / 2 up to the rounding
        # of u (far less than _ENTMAX15_FLOOR_SLACK); those below m - 2 have
        # u <= -1 exactly.
        floor = max(-1.0, (cut - m) / 2 + _ENTMAX15_FLOOR_SLACK)
        tau, ok = _entmax15_newton_tau_candidates(Z, i, m, idx, c, floor, buf)
        # Calls in the kernel itself (see _JIT_INLINE in ._numba_rows).
        if not ok:
            tau = _entmax15_sorted_tau(Z, i, m, scratch, taus)
            c = K
            for j in range(K):
                idx[j] = j
        else:  # K > _ENTMAX15_NEWTON_MAX > _ENTMAX15_SORTED_MIN
            tau = _entmax15_support_tau_buf(buf, c, tau)
        taus[0] = tau
        ts = taus[0]  # rounded to the dtype of Z, as in the NumPy path
        p = 0  # the support's columns move to the front of idx
        for q in range(c):
            j = idx[q]
            d = (Z[i, j] - m) / 2 - ts
            out[i, j] = d * d if d > 0 else 0
            idx[p] = j
            p += d > 0
        s = _pairwise_row_sum(out, i, idx, p, stack, vals)
        for q in range(p):
            j = idx[q]
            out[i, j] = out[i, j] / s
    return -1


def entmax15_rows(Z, out, zmax):
    """Exact 1.5-entmax of every row of ``Z``.

    Per row, with ``u = (z - max z) / 2``: the threshold ``tau`` by Newton
    steps and the closed form of its support (:func:`_entmax15_newton_tau`;
    rows longer than ``_ENTMAX15_NEWTON_MAX`` are read once and the steps
    run over their candidates, :func:`_entmax15_rows_long`; a sort of the
    candidates,
    :func:`_entmax15_sorted_tau`, should no check succeed), recomputed in
    the NumPy path's order of sums on rows longer than
    ``_ENTMAX15_SORTED_MIN`` (:func:`_entmax15_support_tau`); then ``out =
    [u - tau]_+^2`` over its row sum, with the rounding and the row sums of
    the NumPy path (:func:`_entmax15_write_row`). Rows of up to
    ``_COLUMNS_MAX`` entries run the same iteration on transposed blocks of
    rows (:func:`._numba_columns.entmax15_columns`). Returns the first
    invalid row or -1.

    A Python function that picks the compiled kernel by the row length:
    numba then compiles, on a first call, the kernel of that row length
    only, where one compiled function that chose inside would compile all
    three.
    """
    K = Z.shape[1]
    if K <= _COLUMNS_MAX:
        return entmax15_columns(Z, out, zmax)
    taus = np.empty(K, dtype=Z.dtype)
    if K <= _ENTMAX15_NEWTON_MAX:
        return _entmax15_rows_short(Z, out, zmax, taus)
    return _entmax15_rows_long(Z, out, zmax, taus)
