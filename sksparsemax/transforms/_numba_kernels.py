"""Compiled row kernels for the optional numba backend.

This module imports :mod:`numba`; it is only imported (lazily, by
:mod:`._backend`) when numba is installed and the backend is ``"numba"`` or
``"auto"``. Every kernel works on a C-contiguous 2-D array of rows ``Z``
(n, K) of float32 or float64, loops over the rows inside the compiled code and
writes into preallocated outputs; the only scratch memory is a few buffers of
length K (or of a block of short rows, :mod:`._numba_columns`) per call, none
per row. The arithmetic is the same as the NumPy path (shift by the row
maximum, the same closed forms, the row sums that normalise the outputs in
the NumPy path's order), so both backends agree to rounding;
the iterative thresholds sum in a different order, and top-k softmax on
short rows evaluates exp by a polynomial within 1 ulp of libm's
(:func:`._numba_exp.exp_nonpositive`).

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

The sparsemax kernels are defined here, the top-k ones in
:mod:`._numba_top_k` (short rows: :mod:`._numba_columns`), the alpha-entmax ones in :mod:`._numba_entmax15` and
:mod:`._numba_entmax`, the one-pass candidate selection of long rows in
:mod:`._numba_candidates`, the row primitives they share with the loss
kernels (compilation options, row maximum, row sum) in :mod:`._numba_rows`
and :mod:`._numba_exp`.
"""

import numpy as np
from numba import njit

# This module is the one the backend loads and the loss kernels import from:
# it names every kernel (the entmax ones are defined in ._numba_entmax15 and
# ._numba_entmax) and the row primitives (defined in ._numba_rows).
from ._numba_blas import times_lower, times_lower_transposed  # noqa: F401
from ._numba_budget import budget_sparsemax_rows  # noqa: F401
from ._numba_candidates import row_candidates
from ._numba_columns import (  # noqa: F401
    _COLUMN_BLOCK,
    _COLUMNS_MAX,
    _top_k_exp_columns,
    _top_k_network_columns,
    _transposed_block,
)
from ._numba_entmax import entmax_bisect_rows  # noqa: F401
from ._numba_entmax15 import entmax15_rows  # noqa: F401
from ._numba_normmax import normmax_rows  # noqa: F401
from ._numba_top_k import (  # noqa: F401
    _NET_K_MAX,
    _NET_ROW_MAX,
    _kth,
    sparse_softmax_rows,
    top_k_dense,
    top_k_row,
    top_k_values,
)
from ._numba_vectors import (  # noqa: F401
    diagonal_gradient,
    direction_and_slope,
    store_pair,
    trial_point,
)
from ._numba_rows import (  # noqa: F401
    _BLOCKED_MAX_MIN,
    _JIT,
    _JIT_FMA,
    _JIT_INLINE,
    _JIT_REASSOC,
    _row_max,
    _row_max_and_low,
    _store_max,
)

# sparsemax: rows of at least this many entries (16 KiB of float64, which
# do not stay in the cache between passes) are read once
# (_sparsemax_row_one_pass); shorter rows are read in full at every pass of
# Michelot's iteration, which costs less while they stay in the cache.
_SPARSEMAX_ONE_PASS_MIN = 2**11
# sparsemax: rows of at least this many entries and fewer than
# _BLOCKED_MAX_MIN start Michelot's iteration from the threshold of their two
# alternate maxima (_sparsemax_pair_bound); on shorter rows it costs more than
# the passes it saves (measured), longer rows find their maximum in 8 lanes.
_SPARSEMAX_PAIR_BOUND_MIN = 8


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
def sparsemax_row_threshold(Z, i, m, start):
    """Sparsemax threshold of row ``i`` of ``Z`` (shifted units), Michelot's way.

    ``m`` is the row maximum and ``start`` a lower bound of the threshold,
    at least -1 (the threshold is at least ``max y - 1 = -1``), such as
    :func:`_sparsemax_pair_bound`. With ``y = z - m``, only the entries
    ``y > start`` can be in the support; ``tau = (sum_S y - 1) / |S|`` and
    ``S = {y > tau}`` are iterated from ``S = {y > start}``. Each ``tau`` is
    a lower bound of the root and increases monotonically; the iteration
    stops when ``S`` stops shrinking, at the closed form of Martins &
    Astudillo (2016) for the final support. Sums are accumulated in
    float64. Returns ``(tau, |S|)``.

    Every pass reads the whole row (:func:`_sparsemax_pass`): a vectorised
    pass over a row in the cache costs less than the data-dependent loop of
    a pass that also drops the entries left behind. Because a pass counts
    over the whole row, ``tau`` is kept monotone explicitly
    (:func:`_michelot_step`): when an entry lies within rounding of the
    root, the rounded closed form of a smaller support can fall below the
    previous one, and the set would then grow back and cycle forever.
    """
    t = start
    s, c = _sparsemax_pass(Z, i, m, t)
    while True:
        t = _michelot_step(t, s, c)
        s, c2 = _sparsemax_pass(Z, i, m, t)
        if c2 == c:
            return t, c
        c = c2


@njit(**_JIT_INLINE)
def _sparsemax_pair_bound(low, m):
    """A lower bound of the sparsemax threshold from the maximum ``m`` and another entry ``low``.

    (:func:`._numba_rows._row_max_and_low`.) The threshold of any part of a
    row is at most the row's (the sum ``sum_j max(y_j - t, 0)`` over the
    part is at most the sum over the row, and both decrease in ``t``), and
    the threshold of the two shifted entries ``0`` and ``y = low - m`` is
    ``(y - 1) / 2`` when ``y > -1``, else -1. Started there, Michelot's
    iteration needs fewer passes, and their number varies less from row to
    row (the branch that ends the iteration is mispredicted less often),
    than from -1.
    """
    t = (np.float64(low - m) - 1.0) * 0.5
    return t if t > -1.0 else -1.0


@njit(**_JIT_INLINE)
def _sparsemax_candidates_threshold(Z, i, m, idx, n, vals):
    """Michelot's threshold of row ``i`` from the candidate columns ``idx[:n]``.

    As :func:`sparsemax_row_threshold`, over the candidates listed by
    :func:`._numba_candidates.row_candidates` (a superset of ``{y >= -1}``,
    which holds the support); ``vals[:n]`` receives their ``y = z - m``
    (rounded to the dtype of ``Z``, as in the passes over the row, then
    float64). Returns ``(tau, |S|)``.
    """
    t = -1.0
    s = 0.0
    c = 0
    for q in range(n):
        y = np.float64(Z[i, idx[q]] - m)
        vals[q] = y
        keep = y > t
        s += y if keep else 0.0
        c += keep
    while True:
        t = _michelot_step(t, s, c)
        s = 0.0
        c2 = 0
        for q in range(n):
            y = vals[q]
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
def _sparsemax_rows_one_pass(Z, out, tau, size, zmax, write_out):
    """:func:`sparsemax_rows` on rows read once (:func:`._numba_candidates.row_candidates`).

    The iteration runs over the listed candidates, and only they are
    written after the zeros.
    """
    K = Z.shape[1]
    vals = np.empty(K, dtype=np.float64)
    idx = np.empty(K, dtype=np.intp)
    for i in range(Z.shape[0]):
        m, nan, n = row_candidates(Z, i, 1.0, idx, out, write_out)
        if not _store_max(m, nan, zmax, i):
            return i
        t, c = _sparsemax_candidates_threshold(Z, i, m, idx, n, vals)
        tau[i] = t
        size[i] = c
        if write_out:
            tt = tau[i]
            for q in range(n):
                j = idx[q]
                p = (Z[i, j] - m) - tt
                out[i, j] = p if p > 0 else 0
    return -1


def sparsemax_rows(Z, out, tau, size, zmax, write_out):
    """Sparsemax of every row of ``Z`` (threshold by Michelot's algorithm).

    See :func:`sparsemax_row_threshold` for the threshold of one row, started
    from :func:`_sparsemax_pair_bound` on rows of ``_SPARSEMAX_PAIR_BOUND_MIN``
    to 31 entries and from -1 on the others. Rows of at least
    ``_SPARSEMAX_ONE_PASS_MIN`` entries are read once
    (:func:`._numba_candidates.row_candidates`), the iteration runs over the
    listed candidates, and only they are written after the zeros. Writes ``tau``
    (shifted units, dtype of ``Z``; the output is computed with this rounded
    value, as in the NumPy path), ``size`` (support size), ``zmax`` and, if
    ``write_out``, ``out = max(y - tau, 0)``. Returns the first invalid row
    or -1.

    A Python function that picks the compiled kernel by the row length:
    numba then compiles, on a first call, the kernel of that row length
    only. The kernels are compiled with reassociation (``_JIT_REASSOC``):
    it vectorises the sums of :func:`_sparsemax_pass`; the thresholds equal
    the NumPy path's to rounding (which sums in its own order anyway).
    """
    if Z.shape[1] >= _SPARSEMAX_ONE_PASS_MIN:
        return _sparsemax_rows_one_pass(Z, out, tau, size, zmax, write_out)
    return _sparsemax_rows_iterative(Z, out, tau, size, zmax, write_out)


@njit(**_JIT_REASSOC)
def _sparsemax_rows_iterative(Z, out, tau, size, zmax, write_out):
    """:func:`sparsemax_rows` on rows shorter than ``_SPARSEMAX_ONE_PASS_MIN``."""
    K = Z.shape[1]
    pair_bound = _SPARSEMAX_PAIR_BOUND_MIN <= K < _BLOCKED_MAX_MIN
    for i in range(Z.shape[0]):
        m, low, ok = _row_max_and_low(Z, i, zmax)
        if not ok:
            return i
        start = _sparsemax_pair_bound(low, m) if pair_bound else -1.0
        t, c = sparsemax_row_threshold(Z, i, m, start)
        tau[i] = t
        size[i] = c
        if write_out:
            _write_sparsemax_row(Z, i, m, tau[i], out)
    return -1
