"""Row primitives of the compiled kernels: compilation options, row maximum,
row sum, the sort of a row's candidates (the exp of the kernels is in
:mod:`._numba_exp`, the threshold of 1.5-entmax in
:mod:`._numba_entmax15_threshold`).

Shared by the mapping kernels (:mod:`._numba_kernels`, :mod:`._numba_entmax15`)
and the fused loss kernels of :mod:`sksparsemax.losses`; imported only when
the numba backend is in effect.
"""

import numpy as np
from numba import njit

# cache=True: compiled once, then loaded from __pycache__. numba checks only
# the timestamp of the file that defines a kernel, not of the helpers it
# inlines from other modules: after editing a helper (this module, the
# drivers of losses/_numba_engine.py), delete the *.nbi and *.nbc files under
# sksparsemax/, or the kernels of unchanged files run the old helper. (An
# installed release replaces every file, so users never see this.)
#
# fastmath=False is explicit: numba compiles a callee that does not set the
# option with the fast-math flags of the kernel that first calls it, so a
# helper whose order of sums matters (_block_sum, _row_sum, the 1.5-entmax
# support's closed form) would otherwise be reassociated when a
# _JIT_REASSOC kernel is compiled before its other callers.
_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath=False)
# Row helpers called once per row by the kernels (and by the fused loss
# kernels): inlined into their callers, a call per row costs as much as the
# row's arithmetic for a few classes. Such a helper must end the lifetime of
# each array it takes at one place on every path: it returns from inside a
# loop rather than breaking out of it, and no branch is the last use of an
# array that another branch does not use. Otherwise numba's reference-count
# pruning cannot pair the helper's incref and decref of that array, and
# every call pays for both.
_JIT_INLINE = dict(_JIT, inline="always")
# Kernels that call exp_nonpositive: fused multiply-adds in its polynomial
# (contraction of a * b + c only; no reassociation, so sums keep their order).
_JIT_FMA = dict(_JIT, fastmath={"contract"})
# Kernels whose row loops are the branch-free float sums of the 1.5-entmax
# Newton passes (_entmax15_sums_row, _entmax15_sums_buf): reassociation lets
# LLVM vectorise them. The sums whose order must match the NumPy path's are
# computed by helpers compiled on their own (_block_sum, _row_sum,
# ._numba_entmax15._entmax15_support_tau), which these flags do not reach.
_JIT_REASSOC = dict(_JIT, fastmath={"reassoc"})


# _row_max: rows of at least this many entries keep 8 running maxima.
_BLOCKED_MAX_MIN = 32


@njit(**_JIT_INLINE)
def _lane_maxima(Z, i, stop):
    """Maxima of the 8 lanes ``j = r (mod 8)``, ``j < stop``, of row ``i``, and a NaN flag.

    8 running maxima: a single one is a chain of dependent compares, one
    entry per compare latency; 8 independent ones run (and may be
    vectorised) side by side. Each is an entry of the row (NaN entries are
    skipped, and flagged). ``stop``: a multiple of 8, at least 8.
    """
    m0, m1, m2, m3 = Z[i, 0], Z[i, 1], Z[i, 2], Z[i, 3]
    m4, m5, m6, m7 = Z[i, 4], Z[i, 5], Z[i, 6], Z[i, 7]
    nan = ((m0 != m0) | (m1 != m1)) | ((m2 != m2) | (m3 != m3))
    nan |= ((m4 != m4) | (m5 != m5)) | ((m6 != m6) | (m7 != m7))
    for a in range(8, stop, 8):
        x0, x1, x2, x3 = Z[i, a], Z[i, a + 1], Z[i, a + 2], Z[i, a + 3]
        x4, x5, x6, x7 = Z[i, a + 4], Z[i, a + 5], Z[i, a + 6], Z[i, a + 7]
        nan |= ((x0 != x0) | (x1 != x1)) | ((x2 != x2) | (x3 != x3))
        nan |= ((x4 != x4) | (x5 != x5)) | ((x6 != x6) | (x7 != x7))
        m0 = x0 if x0 > m0 else m0
        m1 = x1 if x1 > m1 else m1
        m2 = x2 if x2 > m2 else m2
        m3 = x3 if x3 > m3 else m3
        m4 = x4 if x4 > m4 else m4
        m5 = x5 if x5 > m5 else m5
        m6 = x6 if x6 > m6 else m6
        m7 = x7 if x7 > m7 else m7
    return (m0, m1, m2, m3, m4, m5, m6, m7), nan


@njit(**_JIT_INLINE)
def _store_max(m, nan, zmax, i):
    """Store row ``i``'s maximum ``m`` in ``zmax[i]`` (NaN if the row has one); is the row valid?

    Valid: no NaN, and a finite maximum (not ``+inf``, not every entry ``-inf``).
    """
    zmax[i] = m
    if nan:
        zmax[i] = np.nan
        return False
    return m > -np.inf and m < np.inf


@njit(**_JIT_INLINE)
def _row_max(Z, i, zmax):
    """Maximum of row ``i`` (dtype of ``Z``), also stored in ``zmax[i]``: ``(m, ok)``.

    :func:`_row_max_and_low` without ``low`` (which a kernel that does not
    use it does not compute: the call is inlined).
    """
    m, _, ok = _row_max_and_low(Z, i, zmax)
    return m, ok


@njit(**_JIT_INLINE)
def _row_max_of_lanes(Z, i, zmax):
    """``(m, lanes, ok)`` of row ``i`` (at least 8 entries): its maximum, validity, lane maxima.

    The largest of the maxima of the 8 lanes of the first ``K // 8 * 8``
    entries (:func:`_lane_maxima`, returned too: 8 entries of the row, from
    which the 1.5-entmax kernel bounds its threshold) and of the other
    entries; ``m`` and ``ok`` as :func:`_row_max_and_low` gives them.
    """
    K = Z.shape[1]
    j = K // 8 * 8
    lanes, nan = _lane_maxima(Z, i, j)
    m = lanes[0]
    for r in range(1, 8):
        m = lanes[r] if lanes[r] > m else m
    for a in range(j, K):
        x = Z[i, a]
        nan |= x != x
        m = x if x > m else m
    return m, lanes, _store_max(m, nan, zmax, i)


@njit(**_JIT_INLINE)
def _row_max_and_low(Z, i, zmax):
    """``(m, low, ok)``: maximum of row ``i`` (also stored in ``zmax[i]``), another entry, validity.

    ``ok`` is False if the row contains a NaN (then ``zmax[i]`` is NaN, as
    NumPy's ``max`` gives) or if its maximum is not finite (``+inf``, or
    every entry ``-inf``). Rows of at least ``_BLOCKED_MAX_MIN`` entries:
    :func:`_row_max_of_lanes`, and ``low = -inf``. Shorter rows: two running
    maxima over alternate entries (``m0`` from entry 0, ``m1`` from the last
    one; two chains of dependent compares, each half as long as one); ``m``
    is the larger and ``low`` the smaller, a different entry of the row when
    it has two or more (a lower bound of its second largest, from which the
    sparsemax and 1.5-entmax kernels bound their thresholds). Among equal
    values (0.0 and -0.0) the one kept may differ from the first in row
    order, which changes no difference ``z - m`` that the kernels use.
    """
    K = Z.shape[1]
    if K >= _BLOCKED_MAX_MIN:
        m, _, ok = _row_max_of_lanes(Z, i, zmax)
        return m, -np.inf, ok
    m0 = Z[i, 0]
    m1 = Z[i, K - 1]
    nan = (m0 != m0) | (m1 != m1)
    for a in range(1, K - 1, 2):
        x0 = Z[i, a]
        x1 = Z[i, a + 1]
        nan |= (x0 != x0) | (x1 != x1)
        m0 = x0 if x0 > m0 else m0
        m1 = x1 if x1 > m1 else m1
    m = m1 if m1 > m0 else m0
    low = m0 if m1 > m0 else m1
    return m, low, _store_max(m, nan, zmax, i)


@njit(**_JIT)
def _block_sum(A, i, lo, n):
    """Sum of ``A[i, lo:lo + n]``, ``1 <= n <= 128``, in the order of NumPy's pairwise sum (see :func:`_row_sum`)."""
    if n < 8:
        res = A[i, lo]  # 0 + a == a for the nonnegative sums used here
        for a in range(lo + 1, lo + n):
            res += A[i, a]
        return res
    r0 = A[i, lo]
    r1 = A[i, lo + 1]
    r2 = A[i, lo + 2]
    r3 = A[i, lo + 3]
    r4 = A[i, lo + 4]
    r5 = A[i, lo + 5]
    r6 = A[i, lo + 6]
    r7 = A[i, lo + 7]
    a = 8
    stop = n - n % 8
    while a < stop:
        b = lo + a
        r0 += A[i, b]
        r1 += A[i, b + 1]
        r2 += A[i, b + 2]
        r3 += A[i, b + 3]
        r4 += A[i, b + 4]
        r5 += A[i, b + 5]
        r6 += A[i, b + 6]
        r7 += A[i, b + 7]
        a += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while a < n:
        res += A[i, lo + a]
        a += 1
    return res


@njit(**_JIT_INLINE)
def _listed_block_sum(A, i, lo, n, idx, q, end):
    """:func:`_block_sum` of ``A[i, lo:lo + n]`` where only the columns ``idx[q:end]`` (increasing) can be nonzero.

    Each of NumPy's partial sums (one sequential sum below 8 entries; else
    8 interleaved ones, their pairwise combination, then the tail one by
    one) is its listed entries added in order: adding an exact 0 changes
    no partial sum, so the result is :func:`_block_sum`'s to the last bit
    without reading the zeros (the entries are nonnegative: no -0.0 to
    preserve).
    """
    res = A[i, lo] - A[i, lo]  # 0 in the dtype of A (finite entries)
    if n < 8:
        for a in range(q, end):
            res += A[i, idx[a]]
        return res
    r0 = res
    r1 = res
    r2 = res
    r3 = res
    r4 = res
    r5 = res
    r6 = res
    r7 = res
    stop = lo + n - n % 8
    a = q
    while a < end and idx[a] < stop:
        j = idx[a]
        x = A[i, j]
        lane = (j - lo) % 8
        if lane == 0:
            r0 += x
        elif lane == 1:
            r1 += x
        elif lane == 2:
            r2 += x
        elif lane == 3:
            r3 += x
        elif lane == 4:
            r4 += x
        elif lane == 5:
            r5 += x
        elif lane == 6:
            r6 += x
        else:
            r7 += x
        a += 1
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while a < end:
        res += A[i, idx[a]]
        a += 1
    return res


@njit(**_JIT)
def _row_sum(A, i, stack, vals):
    """Sum of the row ``A[i]`` in the order of NumPy's pairwise sum, in the dtype of ``A``.

    NumPy's generic loop sums a contiguous row pairwise: below 8 entries one
    by one, up to 128 with 8 interleaved partial sums, above that the sum of
    the two halves (the first a multiple of 8 long). Following it keeps the
    rounding of the NumPy path's row sums (builds of NumPy whose SIMD
    reduction groups the additions otherwise, as NumPy 2.4 on AVX-512 does,
    may differ in the last bit), with 8 independent additions per step
    instead of a chain of K. The recursion runs on an explicit stack (``stack``: an
    (128, 3) intp scratch array, ``vals``: 128 entries of A's dtype); see
    :func:`_pairwise_row_sum`.
    """
    return _pairwise_row_sum(A, i, stack[0], -1, stack, vals)


@njit(**_JIT)
def _pairwise_row_sum(A, i, idx, n, stack, vals):
    """:func:`_row_sum`; with ``n >= 0``, only the columns ``idx[:n]`` (increasing) can be nonzero.

    The leaves of the recursion (blocks of at most 128 entries) are visited
    left to right; with ``n >= 0`` each is summed from its listed columns
    only (:func:`_listed_block_sum`), to the last bit as :func:`_row_sum`, and
    a segment without a listed column is 0 without being split. ``n < 0``:
    every leaf is read.
    Compiled on its own, so that no caller's fast-math flags reorder it.
    """
    K = A.shape[1]
    if K <= 128:
        return _block_sum(A, i, 0, K)
    stack[0, 0] = 0
    stack[0, 1] = K
    stack[0, 2] = 0
    top = 1
    nv = 0
    q = 0
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        m = stack[top, 1]
        if n >= 0:
            while q < n and idx[q] < lo:
                q += 1
        if stack[top, 2] == 1:  # both halves done: add them
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        elif n >= 0 and not (q < n and idx[q] < lo + m):
            vals[nv] = 0  # nothing listed in this segment: its sum is 0
            nv += 1
        elif m <= 128:
            if n < 0:
                vals[nv] = _block_sum(A, i, lo, m)
            else:
                end = q
                while end < n and idx[end] < lo + m:
                    end += 1
                vals[nv] = _listed_block_sum(A, i, lo, m, idx, q, end)
                q = end
            nv += 1
        else:
            m2 = m // 2
            m2 -= m2 % 8
            stack[top, 2] = 1
            stack[top + 1, 0] = lo + m2
            stack[top + 1, 1] = m - m2
            stack[top + 1, 2] = 0
            stack[top + 2, 0] = lo
            stack[top + 2, 1] = m2
            stack[top + 2, 2] = 0
            top += 3
    return vals[0]


# entmax15, entmax, normmax: up to this many remaining candidates are sorted
# by an inline insertion sort, more by numba's quicksort.
_INSERTION_MAX = 32


@njit(**_JIT)
def _sort_desc(buf, c):
    """Sort ``buf[:c]`` in decreasing order, in place (numba's quicksort)."""
    buf[:c].sort()
    for a in range(c // 2):
        x = buf[a]
        buf[a] = buf[c - 1 - a]
        buf[c - 1 - a] = x
