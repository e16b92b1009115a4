"""Compiled row kernels for the optional numba backend.

This module imports :mod:`numba`; it is only imported (lazily, by
:mod:`._backend`) when numba is installed and the backend is ``"numba"`` or
``"auto"``. Every kernel works on a C-contiguous 2-D array of rows ``Z``
(n, K) of float32 or float64, loops over the rows inside the compiled code and
writes into preallocated outputs; the only scratch memory is a few buffers of
length K per call, none per row. The arithmetic is the same as the NumPy path
(shift by the row maximum, the same closed forms, the row sums that normalise
the outputs in NumPy's pairwise order), so both backends agree to rounding;
the iterative thresholds sum in a different order, and top-k softmax on
short rows evaluates exp by a polynomial within 1 ulp of libm's
(:func:`._numba_rows.exp_nonpositive`).

Invalid rows (NaN, ``+inf``, all ``-inf``) are not raised here: each kernel
stores the row maximum of every row it visits in ``zmax`` and returns the
index of the first row whose maximum is not finite (NaN if the row contains a
NaN), or -1. The caller then raises the library's ``ValueError`` through
:func:`._validation.checked_row_max`, so the message is the same for both
backends.

All kernels are compiled with ``cache=True`` (the machine code is stored next
to their source files, or under ``NUMBA_CACHE_DIR``), so the compilation cost
(a few seconds per kernel and dtype) is paid once per machine, not once per
process.

The sparsemax and top-k kernels are defined here, the alpha-entmax ones in
:mod:`._numba_entmax`, the row primitives they share with the loss kernels
(compilation options, row maximum, row sum, exp) in :mod:`._numba_rows`.
"""

import numpy as np
from numba import njit

# This module is the one the backend loads and the loss kernels import from:
# it names every kernel (the entmax ones are defined in ._numba_entmax) and
# the row primitives (defined in ._numba_rows).
from ._numba_blas import times_lower, times_lower_transposed  # noqa: F401
from ._numba_budget import budget_sparsemax_rows  # noqa: F401
from ._numba_entmax import entmax15_rows, entmax_bisect_rows  # noqa: F401
from ._numba_normmax import normmax_rows  # noqa: F401
from ._numba_vectors import (  # noqa: F401
    diagonal_gradient,
    direction_and_slope,
    store_pair,
    trial_point,
)
from ._numba_rows import (
    _JIT,
    _JIT_FMA,
    _JIT_INLINE,
    _JIT_REASSOC,
    _block_sum,
    _row_max,
    exp_nonpositive,
)

# sparse_softmax: for k up to _NET_K_MAX and rows of up to _NET_ROW_MAX
# entries, the k largest values come from a branch-free compare-exchange
# network (_push8); otherwise from the insertion of top_k_row.
_NET_K_MAX = 8
_NET_ROW_MAX = 128
# sparse_softmax: rows of up to this many entries take exp of every entry in
# one vectorised pass (exp_nonpositive) and mask it; longer rows take exp of
# the k kept entries only.
_DENSE_EXP_MAX = 16
# sparsemax: rows longer than this (32 KiB of float64 and more, which do not
# stay in the cache between passes) copy the entries that can still be in the
# support after the first pass; shorter rows are read in full at every pass.
_SPARSEMAX_COMPACT_MIN = 2**12


@njit(**_JIT_INLINE)
def _sparsemax_pass(Z, i, m, t):
    """``(sum_S y, |S|)`` over ``S = {y > t}`` of row ``i``, ``y = z - m`` (float64).

    Branch-free: in a kernel compiled with reassociation (``_JIT_REASSOC``)
    LLVM vectorises the two sums.
    """
    s = 0.0
    c = 0
    for j in range(Z.shape[1]):
        y = np.float64(Z[i, j] - m)
        keep = y > t
        s += y if keep else 0.0
        c += keep
    return s, c


@njit(**_JIT_INLINE)
def _michelot_step(t, s, c):
    """Michelot's next threshold ``max(t, (s - 1) / c)`` from ``S = {y > t}``.

    ``s = sum_S y``, ``c = |S|``. In exact arithmetic ``(s - 1) / c >= t``;
    taking the maximum keeps that under rounding, so ``{y > t}`` only
    shrinks and the iteration ends after at most ``|S|`` steps.
    """
    new = (s - 1.0) / c
    return new if new > t else t


@njit(**_JIT_INLINE)
def sparsemax_row_threshold(Z, i, m):
    """Sparsemax threshold of row ``i`` of ``Z`` (shifted units), Michelot's way.

    ``m`` is the row maximum. With ``y = z - m``, only the candidates
    ``y > -1`` can be in the support (the threshold is at least ``max y - 1 =
    -1``); ``tau = (sum_S y - 1) / |S|`` and ``S = {y > tau}`` are iterated
    from ``S`` = the candidates. Each ``tau`` is a lower bound of the root
    and increases monotonically; the iteration stops when ``S`` stops
    shrinking, at the closed form of Martins & Astudillo (2016) for the final
    support. Sums are accumulated in float64. Returns ``(tau, |S|)``.

    Every pass reads the whole row (:func:`_sparsemax_pass`): a vectorised
    pass over a row in the cache costs less than the data-dependent loop of
    a pass that also drops the entries left behind. Because a pass counts
    over the whole row, ``tau`` is kept monotone explicitly
    (:func:`_michelot_step`): when an entry lies within rounding of the
    root, the rounded closed form of a smaller support can fall below the
    previous one, and the set would then grow back and cycle forever.
    """
    t = -1.0
    s, c = _sparsemax_pass(Z, i, m, t)
    while True:
        t = _michelot_step(t, s, c)
        s, c2 = _sparsemax_pass(Z, i, m, t)
        if c2 == c:
            return t, c
        c = c2


@njit(**_JIT_INLINE)
def _sparsemax_row_threshold_compact(Z, i, m, buf):
    """:func:`sparsemax_row_threshold` for rows longer than ``_SPARSEMAX_COMPACT_MIN``.

    After the first pass, the entries above its threshold (a lower bound of
    the root) are copied into the float64 scratch ``buf`` (length K), and
    the later passes run over them: a row this long does not stay in the
    cache between passes.
    """
    K = Z.shape[1]
    s, c = _sparsemax_pass(Z, i, m, -1.0)
    t = _michelot_step(-1.0, s, c)
    n = 0
    for j in range(K):
        y = np.float64(Z[i, j] - m)
        buf[n] = y
        n += y > t
    if n == c:
        return t, c
    c = n
    s = 0.0
    for a in range(n):
        s += buf[a]
    while True:
        t = _michelot_step(t, s, c)
        s = 0.0
        c2 = 0
        for a in range(n):
            y = buf[a]
            keep = y > t
            s += y if keep else 0.0
            c2 += keep
        if c2 == c:
            return t, c
        c = c2


@njit(**_JIT_INLINE)
def _write_sparsemax_row(Z, i, m, tt, out):
    """``out[i] = max(z - m - tt, 0)`` (``tt`` rounded to the dtype of ``Z``)."""
    for j in range(Z.shape[1]):
        p = (Z[i, j] - m) - tt
        out[i, j] = p if p > 0 else 0


@njit(**_JIT_REASSOC)
def sparsemax_rows(Z, out, tau, size, zmax, write_out):
    """Sparsemax of every row of ``Z`` (threshold by Michelot's algorithm).

    See :func:`sparsemax_row_threshold` for the threshold of one row
    (:func:`_sparsemax_row_threshold_compact` for rows longer than
    ``_SPARSEMAX_COMPACT_MIN``). Writes ``tau`` (shifted units, dtype of
    ``Z``; the output is computed with this rounded value, as in the NumPy
    path), ``size`` (support size), ``zmax`` and, if ``write_out``, ``out =
    max(y - tau, 0)``. Returns the first invalid row or -1.

    Compiled with reassociation (``_JIT_REASSOC``): it vectorises the sums
    of :func:`_sparsemax_pass`; the thresholds equal the NumPy path's to
    rounding (which sums in its own order anyway).
    """
    K = Z.shape[1]
    compact = K > _SPARSEMAX_COMPACT_MIN
    buf = np.empty(K if compact else 0, dtype=np.float64)
    for i in range(Z.shape[0]):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        if compact:
            t, c = _sparsemax_row_threshold_compact(Z, i, m, buf)
        else:
            t, c = sparsemax_row_threshold(Z, i, m)
        tau[i] = t
        size[i] = c
        if write_out:
            _write_sparsemax_row(Z, i, m, tau[i], out)
    return -1


@njit(**_JIT_INLINE)
def top_k_row(Z, i, k, bval, bidx):
    """The ``k`` largest entries of row ``i`` of ``Z`` (``1 <= k <= K``).

    Writes their values, in decreasing order, into ``bval[:k]`` and their
    column indices into ``bidx[:k]``: one pass over the row keeps the k
    largest in this small buffer; a new entry enters only if it is strictly
    larger than the smallest kept one, and it is placed after the kept
    entries with an equal value, so among equal scores the lowest index
    wins. ``bval[0]`` is the row maximum if the row has no NaN. Returns
    whether the row contains a NaN.
    """
    K = Z.shape[1]
    nan = False
    # The first k entries, by a stable insertion sort.
    for j in range(k):
        x = Z[i, j]
        nan |= x != x
        _insert_decreasing(bval, bidx, j, x, j)
    last = bval[k - 1]
    for j in range(k, K):
        x = Z[i, j]
        nan |= x != x
        if x > last:  # it replaces the smallest kept entry
            _insert_decreasing(bval, bidx, k - 1, x, j)
            last = bval[k - 1]
    return nan


@njit(**_JIT_INLINE)
def _insert_decreasing(bval, bidx, p, x, j):
    """Insert ``x`` (column ``j``) into the decreasing ``bval[:p]`` (``bval[p]`` is free).

    It goes after the entries with an equal value (stable); ``bidx`` follows.
    """
    while p > 0 and bval[p - 1] < x:
        bval[p] = bval[p - 1]
        bidx[p] = bidx[p - 1]
        p -= 1
    bval[p] = x
    bidx[p] = j


@njit(**_JIT_INLINE)
def _exchange(b, x):
    """``(max(b, x), min(b, x))`` without a branch (``x`` NaN: ``(b, x)``)."""
    return (x if x > b else b), (b if x > b else x)


@njit(**_JIT_INLINE)
def _push8(b, x):
    """Push ``x`` into the decreasing 8-tuple ``b``; the smallest of the nine drops out.

    Eight compare-exchanges and no branch: the tuple lives in registers and
    its cost does not depend on the data (an insertion's branches are
    mispredicted about once per entry that enters). A NaN never enters.
    """
    b0, x = _exchange(b[0], x)
    b1, x = _exchange(b[1], x)
    b2, x = _exchange(b[2], x)
    b3, x = _exchange(b[3], x)
    b4, x = _exchange(b[4], x)
    b5, x = _exchange(b[5], x)
    b6, x = _exchange(b[6], x)
    b7, x = _exchange(b[7], x)
    return (b0, b1, b2, b3, b4, b5, b6, b7)


@njit(**_JIT_INLINE)
def _kth(b, k):
    """``b[k - 1]`` of the 8-tuple ``b`` (``1 <= k <= 8``), by selects."""
    v = b[0]
    v = b[1] if k > 1 else v
    v = b[2] if k > 2 else v
    v = b[3] if k > 3 else v
    v = b[4] if k > 4 else v
    v = b[5] if k > 5 else v
    v = b[6] if k > 6 else v
    v = b[7] if k > 7 else v
    return v


@njit(**_JIT_INLINE)
def _top8_values(Z, i):
    """The 8 largest values of row ``i`` (decreasing, ``-inf`` padded) and a NaN flag.

    Every entry goes through the network (:func:`_push8`): on rows of up
    to ``_NET_ROW_MAX`` entries this costs less than the insertion's
    mispredicted branches, or than a pre-filter that copies the entries
    above a lower bound of the k-th largest value.
    """
    ninf = -np.inf
    b = (ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf)
    nan = False
    for j in range(Z.shape[1]):
        x = Z[i, j]
        nan |= x != x
        b = _push8(b, x)
    return b, nan


@njit(**_JIT_INLINE)
def top_k_dense(Z, i, k, v, m, out, oi):
    """``out[oi] = exp(z - m)`` on the top k of row ``i`` (k-th largest value ``v``), 0 elsewhere.

    Every entry's exp is evaluated (:func:`._numba_rows.exp_nonpositive`, in
    SIMD) and masked. When more entries than k equal ``v``, only the first of
    them (lowest indices) are kept, in a second, scalar pass. ``out[oi]``
    may be ``Z[i]``: each entry is read before it is written. Also the top-k
    loss's kernel (``losses/_sparse_softmax_numba.py``).
    """
    K = Z.shape[1]
    above = 0
    at_least = 0
    for j in range(K):
        x = Z[i, j]
        above += x > v
        at_least += x >= v
    if at_least == k:
        for j in range(K):
            x = Z[i, j]
            e = exp_nonpositive(np.float64(x - m))
            out[oi, j] = e if x >= v else 0
    else:
        ties = k - above
        for j in range(K):
            x = Z[i, j]
            keep = x > v or (x == v and ties > 0)
            ties -= x == v
            out[oi, j] = exp_nonpositive(np.float64(x - m)) if keep else 0


@njit(**_JIT_INLINE)
def _top_k_sparse(Z, i, k, v, m, out):
    """As :func:`top_k_dense`, with exp on the k kept entries only.

    The test of an entry is a branch, taken k times per row: cheaper on long
    rows than exp of every entry or a list of the kept columns.
    """
    K = Z.shape[1]
    above = 0
    for j in range(K):
        above += Z[i, j] > v
    ties = k - above
    for j in range(K):
        x = Z[i, j]
        out[i, j] = 0
        if x >= v:
            if x > v or ties > 0:
                out[i, j] = np.exp(x - m)
            ties -= x == v


@njit(**_JIT_FMA)
def sparse_softmax_rows(Z, k, out, zmax):
    """Top-k softmax of every row of ``Z`` (``1 <= k < K``).

    For ``k <= 8`` and rows of up to 128 entries: the k-th largest value
    ``v`` and the maximum come from a compare-exchange network
    (:func:`_top8_values`); the kept entries are those above ``v`` and the
    first ones (lowest indices) equal to it, exactly k; exp is evaluated for
    every entry in SIMD on short rows (:func:`top_k_dense`), for the k kept
    ones on the others (:func:`_top_k_sparse`). Otherwise one pass per row
    finds the k largest entries and the row maximum (:func:`top_k_row`, the
    same tie rule) and exp is evaluated on them. The row sums are those of
    the NumPy path. Writes ``out`` and ``zmax``; returns the first invalid
    row or -1.
    """
    n, K = Z.shape
    if k > _NET_K_MAX or K > _NET_ROW_MAX:
        return _sparse_softmax_insertion(Z, k, out, zmax)
    for i in range(n):
        b, nan = _top8_values(Z, i)
        if nan:
            zmax[i] = np.nan
            return i
        zmax[i] = b[0]
        m = zmax[i]  # the row maximum, in the dtype of Z
        if not (m > -np.inf and m < np.inf):
            return i
        v = _kth(b, k)
        if K <= _DENSE_EXP_MAX:
            top_k_dense(Z, i, k, v, m, out, i)
        else:
            _top_k_sparse(Z, i, k, v, m, out)
        s = _block_sum(out, i, 0, K)  # the NumPy path's row sum, to the last bit
        for j in range(K):
            out[i, j] = out[i, j] / s
    return -1


@njit(**_JIT)
def _sparse_softmax_insertion(Z, k, out, zmax):
    """:func:`sparse_softmax_rows` by :func:`top_k_row` (any k, any row length).

    One pass per row finds the k largest entries and the row maximum (the
    first of them) and checks for NaN (:func:`top_k_row`: among equal scores
    the lowest index wins); ``exp`` is evaluated on the k kept entries only.
    Writes ``out`` and ``zmax``; returns the first invalid row or -1.
    """
    n, K = Z.shape
    bval = np.empty(k, dtype=Z.dtype)
    bidx = np.empty(k, dtype=np.intp)
    for i in range(n):
        nan = top_k_row(Z, i, k, bval, bidx)
        m = bval[0]  # the row maximum (if there is no NaN)
        if nan:
            zmax[i] = np.nan
            return i
        zmax[i] = m
        if not (m > -np.inf and m < np.inf):
            return i
        for j in range(K):
            out[i, j] = 0
        for p in range(k):
            out[i, bidx[p]] = np.exp(bval[p] - m)
        if K <= 128:  # the NumPy path's row sum, to the last bit
            s = _block_sum(out, i, 0, K)
        else:
            s = out[i, bidx[0]]
            for p in range(1, k):
                s += out[i, bidx[p]]
        for p in range(k):
            out[i, bidx[p]] = out[i, bidx[p]] / s
    return -1
