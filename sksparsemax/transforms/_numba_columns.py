"""Compiled kernels on transposed blocks of short rows (numba backend).

A row of a few entries gives the compiled code too little work to fill the
processor's SIMD lanes: the selection network of top-k softmax is a chain
of compare-exchanges along the row, one entry at a time, and each Newton
pass of 1.5-entmax a few sums over a handful of entries, followed by a
closed form with divisions and a square root. Here a block of
``_COLUMN_BLOCK`` rows is copied transposed into a (K, b) buffer, and each
step of the rows' computation runs along the contiguous rows of that
buffer, one entry of every row of the block at a time: the same arithmetic
for every row (branch-free selects, :func:`._numba_exp.exp_nonpositive`),
which LLVM turns into SIMD code, one lane per row (except the top-k
network for targets without AVX-512: see :data:`_COLUMNS_VECTORISED`).
Used for the rows that the NumPy path also maps by transposed blocks (at
most :data:`._blocks.DENSE_K` entries), whose order of sums it reproduces. The
inner loops index the block's buffers by the block row ``r`` only (the
row maxima are copied out of ``zmax[i0 + r]`` first): numba guards an
index ``i0 + r`` against negative values, and LLVM then loads it by a
gather.
"""

import math

import numpy as np
from numba import njit

from ._blocks import DENSE_K
from ._numba_exp import exp_nonpositive
from ._numba_entmax15_threshold import (
    _ENTMAX15_MAX_PASSES,
    _entmax15_closed_form,
    _entmax15_newton_step,
    _entmax15_pair_bound,
    _entmax15_sorted_tau,
)
from ._numba_rows import _JIT, _JIT_FMA, _JIT_INLINE, _store_max

# Rows per transposed block: 32 rows of at most DENSE_K (24) entries are
# 6 KiB of float64, which stay in the L1 cache with the block's other
# buffers; the 1.5-entmax iteration runs until the last row of a block is
# certified, which a smaller block reaches sooner.
_COLUMN_BLOCK = 32
# Rows of at most this many entries take the column kernels.
_COLUMNS_MAX = DENSE_K


def _target_has_avx512():
    """Whether numba compiles for a processor with AVX-512 (``avx512f``).

    The features are numba's own choice for its JIT target:
    ``NUMBA_CPU_FEATURES`` if set, else the host's (less AVX where
    ``NUMBA_ENABLE_AVX=0``).
    """
    from numba.core import codegen, config

    features = config.CPU_FEATURES
    if features is None:
        features = codegen.get_host_cpu_features()
    return "+avx512f" in str(features).split(",")


#: Whether the top-k mapping's short rows run by transposed blocks
#: (:func:`sparse_softmax_columns`). Its network's compare-exchanges read and
#: write their state in memory, meant as one block row per SIMD lane (the
#: kernel chosen for AVX-512 targets, docs/performance.rst), but for an AVX2
#: target LLVM leaves that loop scalar (a scalar compare per entry in its
#: machine code), and the row-by-row network
#: (``_numba_top_k._sparse_softmax_network_rows``, its state in registers)
#: is faster (``benchmarks/bench_short_rows.py``). A constant of the
#: compiled code: numba's cache is keyed by the processor it compiled for.
_COLUMNS_VECTORISED = _target_has_avx512()


@njit(**_JIT_INLINE)
def _exchange_column(N, t, r, x):
    """Keep ``max(N[t, r], x)`` in ``N[t, r]``; return ``min(N[t, r], x)`` (branch-free)."""
    y = N[t, r]
    N[t, r] = x if x > y else y
    return y if x > y else x


@njit(**_JIT_INLINE)
def _top_k_network_columns(T, N, K, b, width):
    """The ``width`` (4, 6 or 8) largest entries of the first ``b`` columns of ``T`` (K, b).

    ``N[t, r]`` holds the (t+1)-th largest entry of column ``r``,
    ``-inf`` while fewer than ``t + 1`` entries were seen: each entry is
    pushed through ``N[:width, r]`` by compare-exchanges (that of
    ``._numba_top_k._push8``, here one SIMD lane per column). A NaN never
    enters.
    """
    for t in range(8):
        for r in range(b):
            N[t, r] = -np.inf
    for j in range(K):
        for r in range(b):
            x = _exchange_column(N, 0, r, T[j, r])
            x = _exchange_column(N, 1, r, x)
            x = _exchange_column(N, 2, r, x)
            x = _exchange_column(N, 3, r, x)
            if width > 4:
                x = _exchange_column(N, 4, r, x)
                x = _exchange_column(N, 5, r, x)
            if width > 6:
                x = _exchange_column(N, 6, r, x)
                x = _exchange_column(N, 7, r, x)


@njit(**_JIT_INLINE)
def _top_k_exp_columns(T, N, k, b, s, kept, nan):
    """``T[j, r] = exp(T[j, r] - N[0, r])`` where ``T[j, r] >= N[k - 1, r]``, else 0.

    On the columns ``r < b`` of ``T`` (K, B), with their maxima ``N[0]`` and
    k-th largest entries ``N[k - 1]`` (:func:`_top_k_network_columns`):
    ``s[r]`` gets the sum of the column's kept exps, in order and in the
    dtype of ``s``, ``kept[r]`` their count and ``nan[r]`` whether the
    column has a NaN. One pass along the block per entry of the rows.
    """
    for r in range(b):
        s[r] = 0
        kept[r] = 0
        nan[r] = False
    for j in range(T.shape[0]):
        for r in range(b):
            x = T[j, r]
            v = N[k - 1, r]
            nan[r] |= x != x
            kept[r] += x >= v
            e = exp_nonpositive(np.float64(x - N[0, r]))
            T[j, r] = e if x >= v else 0
            s[r] += T[j, r]


@njit(**_JIT_FMA)
def sparse_softmax_columns(Z, k, out, zmax):
    """Top-k softmax of the rows of ``Z`` (n, K), ``1 <= k <= 8``, ``k < K <= _COLUMNS_MAX``.

    Per block of rows, transposed: the maximum ``m`` and the k-th largest
    value ``v`` of each row from the network
    (:func:`_top_k_network_columns`), then one pass that takes
    ``exp(z - m)`` of every entry, keeps those at least ``v`` and sums them
    in row order (as the NumPy path's ``add.reduce`` along the transposed
    block does), and counts them. A row with more than k entries equal to
    ``v`` (ties, or masked entries where fewer than k are finite) keeps the
    first of them (lowest indices), in a scalar pass over its row. Writes
    ``out`` and ``zmax``; returns the first invalid row or -1.
    """
    n, K = Z.shape
    B = _COLUMN_BLOCK
    T = np.empty((K, B), dtype=Z.dtype)
    N = np.empty((8, B), dtype=Z.dtype)
    s = np.empty(B, dtype=Z.dtype)
    kept = np.empty(B, dtype=np.intp)
    nan = np.empty(B, dtype=np.bool_)
    width = 4 if k <= 4 else (6 if k <= 6 else 8)
    for i0 in range(0, n, B):
        b = min(B, n - i0)
        _transposed_block(Z, i0, b, T)
        _top_k_network_columns(T, N, K, b, width)
        _top_k_exp_columns(T, N, k, b, s, kept, nan)  # s in the dtype of Z, as NumPy sums
        for r in range(b):
            if not _store_max(N[0, r], nan[r], zmax, i0 + r):
                return i0 + r
        for j in range(K):
            for r in range(b):
                T[j, r] = T[j, r] / s[r]
        for r in range(b):
            if kept[r] == k:
                for j in range(K):
                    out[i0 + r, j] = T[j, r]
            else:
                _top_k_ties_row(Z, i0 + r, k, N[k - 1, r], N[0, r], out)
    return -1


@njit(**_JIT_INLINE)
def _top_k_ties_row(Z, i, k, v, m, out):
    """Row ``i`` of :func:`sparse_softmax_columns` where more than k entries are at least ``v``.

    Those above ``v`` are kept, and the first entries equal to ``v`` (lowest
    indices) until k are kept.
    """
    K = Z.shape[1]
    ties = k
    for j in range(K):
        ties -= Z[i, j] > v
    for j in range(K):
        x = Z[i, j]
        keep = x > v or (x == v and ties > 0)
        ties -= x == v
        out[i, j] = exp_nonpositive(np.float64(x - m)) if keep else 0
    s = out[i, 0]
    for j in range(1, K):
        s += out[i, j]
    for j in range(K):
        out[i, j] = out[i, j] / s


@njit(**_JIT_INLINE)
def _transposed_block(Z, i0, b, T):
    """Copy the rows ``i0:i0 + b`` of ``Z`` into the columns ``:b`` of ``T`` (K, B)."""
    for r in range(b):
        for j in range(Z.shape[1]):
            T[j, r] = Z[i0 + r, j]


@njit(**_JIT_INLINE)
def _block_max_columns(T, b, m0, m1, nan, zmax, i0):
    """Row maxima of the block ``T`` into ``zmax[i0:i0 + b]`` and ``m0``, and another entry into ``m1``.

    The two maxima of alternate entries, as
    :func:`._numba_rows._row_max_and_low` takes them: ``m0`` gets the
    larger (the row maximum, in the dtype of ``Z``), ``m1`` the smaller (a
    lower bound of the row's second largest entry). Returns the first
    invalid row of the block (see :func:`._numba_rows._store_max`) or -1.
    """
    K = T.shape[0]
    for r in range(b):
        x0 = T[0, r]
        x1 = T[K - 1, r]
        m0[r] = x0
        m1[r] = x1
        nan[r] = (x0 != x0) | (x1 != x1)
    for a in range(1, K - 1, 2):
        for r in range(b):
            x0 = T[a, r]
            x1 = T[a + 1, r]
            nan[r] |= (x0 != x0) | (x1 != x1)
            m0[r] = x0 if x0 > m0[r] else m0[r]
            m1[r] = x1 if x1 > m1[r] else m1[r]
    for r in range(b):
        if not _store_max(max(m0[r], m1[r]), nan[r], zmax, i0 + r):
            return i0 + r
    for r in range(b):
        low = m1[r] if m0[r] >= m1[r] else m0[r]
        m0[r] = zmax[i0 + r]
        m1[r] = low
    return -1


@njit(**_JIT_INLINE)
def _entmax15_first_pass_columns(T, U, b, m, low, t, tau, size, s1, s2):
    """``U = (T - m) / 2`` (float64), and the first Newton pass of every column.

    :func:`._numba_entmax15._entmax15_first_step` for a block of rows, from
    the pair bound of the row maximum ``m`` and the other entry ``low``
    (-1 on rows of one entry): ``tau`` the closed form of ``S = {u > t}``,
    ``size = |S|``, and ``t`` the next lower bound.
    """
    K = T.shape[0]
    for r in range(b):
        t[r] = _entmax15_pair_bound(low[r], m[r]) if K > 1 else -1.0
        size[r] = 0
        s1[r] = 0
        s2[r] = 0
    for j in range(K):
        for r in range(b):
            u = np.float64((T[j, r] - m[r]) / 2)
            U[j, r] = u
            keep = u > t[r]
            v = u if keep else 0.0
            s1[r] += v
            s2[r] += v * v
            size[r] += keep
    for r in range(b):
        c = size[r]
        tau[r] = _entmax15_closed_form(c, s1[r], s2[r])
        step = _entmax15_newton_step(c, s1[r], s2[r], t[r])
        jensen = s1[r] / c - 1.0 / math.sqrt(c)
        t[r] = step if step > jensen else jensen


@njit(**_JIT_INLINE)
def _entmax15_pass_columns(U, b, t, tau, cnt, s1, s2, above):
    """Sums of every column ``r < b`` of ``U`` over ``S = {u > t[r]}``, and ``#{u > tau[r]}``.

    :func:`._numba_entmax15._entmax15_sums_row` for a block of rows at once,
    summed in row order.
    """
    K = U.shape[0]
    for r in range(b):
        cnt[r] = 0
        s1[r] = 0
        s2[r] = 0
        above[r] = 0
    for j in range(K):
        for r in range(b):
            u = U[j, r]
            keep = u > t[r]
            v = u if keep else 0.0
            s1[r] += v
            s2[r] += v * v
            cnt[r] += keep
            above[r] += u > tau[r]


@njit(**_JIT_INLINE)
def _entmax15_newton_columns(U, b, t, tau, size, done, cnt, s1, s2, above):
    """The passes of :func:`._numba_entmax15._entmax15_newton_tau` after the first, on a block.

    Until every column is certified (or ``_ENTMAX15_MAX_PASSES``): each
    pass gives every column the closed form of ``S = {u > t}``, certified
    if the previous one is confirmed (``#{u > tau} = size``) or by the same
    pass (:func:`._numba_entmax15._entmax15_certified_now`); a column that
    is certified keeps its ``tau`` (``done``), the others take the new
    closed form and the Newton step. Branch-free (``&`` and ``|`` where
    ``_entmax15_certified_now`` has ``and``), so that the loop over the
    columns is vectorised.
    """
    for r in range(b):
        done[r] = False
    for _ in range(_ENTMAX15_MAX_PASSES):
        _entmax15_pass_columns(U, b, t, tau, cnt, s1, s2, above)
        remaining = 0
        for r in range(b):
            c = cnt[r]
            new = _entmax15_closed_form(c, s1[r], s2[r])
            ends = done[r] | (above[r] == size[r])
            now = ~ends & (above[r] == c) & (t[r] <= new) & (new <= tau[r])
            go_on = ~(ends | now)
            step = _entmax15_newton_step(c, s1[r], s2[r], t[r])
            tau[r] = new if go_on | now else tau[r]
            size[r] = c if go_on else size[r]
            t[r] = step if go_on else t[r]
            done[r] = ~go_on
            remaining += go_on
        if remaining == 0:
            return


@njit(**_JIT_INLINE)
def _entmax15_write_columns(T, b, m, tau, ts, s, out, i0):
    """``out[i0 + r] = [u - tau]_+^2`` over its sum in row order, from the block ``T``.

    ``tau`` is rounded to the dtype of ``Z`` (``ts``), and ``u = (z - m) /
    2`` computed in that dtype, as the NumPy path's transposed blocks
    compute them.
    """
    K = T.shape[0]
    for r in range(b):
        ts[r] = tau[r]
        s[r] = 0
    for j in range(K):
        for r in range(b):
            d = (T[j, r] - m[r]) / 2 - ts[r]
            T[j, r] = d * d if d > 0 else 0
            s[r] += T[j, r]
    for j in range(K):
        for r in range(b):
            T[j, r] = T[j, r] / s[r]
    for r in range(b):
        for j in range(K):
            out[i0 + r, j] = T[j, r]


@njit(**_JIT)
def entmax15_columns(Z, out, zmax):
    """Exact 1.5-entmax of the rows of ``Z`` (n, K), ``K <= _COLUMNS_MAX``, by transposed blocks.

    The iteration of :func:`._numba_entmax15._entmax15_newton_tau` (Newton
    steps on the threshold, each pass giving the closed form of the support
    it implies and the count that certifies it), run on a block of rows at
    once: every pass is one vectorised pass over the block, and a row that
    is certified keeps its threshold while the others go on
    (:func:`_entmax15_newton_columns`). It starts from the threshold of the
    maxima of the two halves of the row (alternate entries;
    :func:`._numba_entmax15_threshold._entmax15_pair_bound`). A row that no
    pass certifies within ``_ENTMAX15_MAX_PASSES`` takes the sort-based
    threshold. Then ``[u - tau]_+^2`` over its sum in row order
    (:func:`_entmax15_write_columns`). Writes ``out`` and ``zmax``; returns
    the first invalid row or -1.
    """
    n, K = Z.shape
    B = _COLUMN_BLOCK
    T = np.empty((K, B), dtype=Z.dtype)
    U = np.empty((K, B), dtype=np.float64)
    m = np.empty(B, dtype=Z.dtype)
    low = np.empty(B, dtype=Z.dtype)
    nan = np.empty(B, dtype=np.bool_)
    done = np.empty(B, dtype=np.bool_)
    t, tau, s1, s2 = np.empty((4, B), dtype=np.float64)
    size, cnt, above = np.empty((3, B), dtype=np.intp)
    ts, s = np.empty((2, B), dtype=Z.dtype)
    scratch = np.empty(K, dtype=Z.dtype)
    taus = np.empty(K, dtype=Z.dtype)
    for i0 in range(0, n, B):
        b = min(B, n - i0)
        _transposed_block(Z, i0, b, T)
        bad = _block_max_columns(T, b, m, low, nan, zmax, i0)
        if bad >= 0:
            return bad
        _entmax15_first_pass_columns(T, U, b, m, low, t, tau, size, s1, s2)
        _entmax15_newton_columns(U, b, t, tau, size, done, cnt, s1, s2, above)
        for r in range(b):
            if not done[r]:
                tau[r] = _entmax15_sorted_tau(Z, i0 + r, m[r], scratch, taus)
        _entmax15_write_columns(T, b, m, tau, ts, s, out, i0)
    return -1
