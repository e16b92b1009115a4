"""Compiled row kernels for the optional numba backend.

This module imports :mod:`numba`; it is only imported (lazily, by
:mod:`._backend`) when numba is installed and the backend is ``"numba"`` or
``"auto"``. Every kernel works on a C-contiguous 2-D array of rows ``Z``
(n, K) of float32 or float64, loops over the rows inside the compiled code and
writes into preallocated outputs; the only scratch memory is a few buffers of
length K per call, none per row. The arithmetic is the same as the NumPy path
(shift by the row maximum, the same closed forms, the row sums that normalise
the outputs in NumPy's pairwise order), so both backends agree to rounding;
the iterative thresholds sum in a different order.

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
(compilation options, row maximum, row sum) in :mod:`._numba_rows`.
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
from ._numba_rows import _JIT, _JIT_INLINE, _block_sum, _row_max


@njit(**_JIT_INLINE)
def sparsemax_row_threshold(Z, i, m, buf):
    """Sparsemax threshold of row ``i`` of ``Z`` (shifted units), Michelot's way.

    ``m`` is the row maximum; ``buf`` a float64 scratch array of length K.
    With ``y = z - m``, only the candidates ``y > -1`` can be in the support
    (the threshold is at least ``max y - 1 = -1``), so they are copied into
    ``buf``; then ``tau = (sum_S y - 1) / |S|`` and ``S = {y > tau}`` are
    iterated from ``S`` = all candidates. Each ``tau`` is a lower bound of the
    root and increases monotonically; the iteration stops when ``S`` stops
    shrinking, at the closed form of Martins & Astudillo (2016) for the final
    support. Sums are accumulated in float64. Returns ``(tau, |S|)``.
    """
    K = Z.shape[1]
    # Candidates (branch-free append).
    c = 0
    s = 0.0
    for j in range(K):
        y = Z[i, j] - m
        buf[c] = y
        keep = y > -1.0
        s += y if keep else 0.0
        c += keep
    t = (s - 1.0) / c
    while True:
        c2 = 0
        s2 = 0.0
        for j in range(c):
            y = buf[j]
            buf[c2] = y
            keep = y > t
            s2 += y if keep else 0.0
            c2 += keep
        if c2 == c:
            break
        c = c2
        t = (s2 - 1.0) / c2
    return t, c


@njit(**_JIT)
def sparsemax_rows(Z, out, tau, size, zmax, write_out):
    """Sparsemax of every row of ``Z`` (threshold by Michelot's algorithm).

    See :func:`sparsemax_row_threshold` for the threshold of one row.
    Writes ``tau`` (shifted units, dtype of ``Z``), ``size`` (support size),
    ``zmax`` and, if ``write_out``, ``out = max(y - tau, 0)``.
    Returns the first invalid row or -1.
    """
    n, K = Z.shape
    buf = np.empty(K, dtype=np.float64)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        t, c = sparsemax_row_threshold(Z, i, m, buf)
        tau[i] = t
        size[i] = c
        if write_out:
            tt = tau[i]  # rounded to the dtype of Z, as in the NumPy path
            for j in range(K):
                p = (Z[i, j] - m) - tt
                out[i, j] = p if p > 0 else 0
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


@njit(**_JIT)
def sparse_softmax_rows(Z, k, out, zmax):
    """Top-k softmax of every row of ``Z`` (``1 <= k < K``).

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
