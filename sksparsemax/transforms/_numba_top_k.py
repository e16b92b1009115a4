"""Compiled top-k softmax kernels (numba backend; named by :mod:`._numba_kernels`).

The mapping's row loop (:func:`sparse_softmax_rows`; its rows of few
entries go to :mod:`._numba_columns`) and the selection primitives of the
top-k loss's kernel (``losses/_sparse_softmax_numba.py``): a
compare-exchange network for the k largest values (k up to 8), an insertion
for larger k, and the masked or sparse evaluation of exp on the kept
entries.
"""

import numpy as np
from numba import njit

from ._numba_rows import (
    _JIT,
    _JIT_FMA,
    _JIT_INLINE,
    _block_sum,
    _lane_maxima,
    _store_max,
)
from ._numba_columns import _COLUMNS_MAX, _COLUMNS_VECTORISED, sparse_softmax_columns
from ._numba_exp import exp_nonpositive

# sparse_softmax: for k up to _NET_K_MAX, the k largest values come from a
# branch-free compare-exchange network (_push8). Rows of up to _COLUMNS_MAX
# entries are mapped by transposed blocks (._numba_columns: the network and
# a vectorised exp of every entry, one SIMD lane per row); on longer rows
# the network sees only the entries above a lower bound of the k-th largest
# (_lane_bound), and exp is taken of the k kept entries only. Larger k: the
# insertion of top_k_row. The loss kernel runs the network over every entry
# of rows of up to _NET_ROW_MAX entries, then exp of every entry
# (top_k_values, top_k_dense).
_NET_K_MAX = 8
_NET_ROW_MAX = 128
_PREFILTER_MIN = _COLUMNS_MAX + 1
# Rows of up to this many entries copy their candidates without a branch
# (_sparse_softmax_prefiltered_short), longer rows, where candidates are
# rare, behind a test (_sparse_softmax_prefiltered_long).
_BRANCH_FREE_COPY_MAX = 128


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


# The networks' helpers below take and return scalars and tuples only. Each
# is compiled once, on its own, and LLVM inlines it when the kernels are
# linked (no call to them remains in the machine code), where numba's own
# inlining would copy and type their IR again at each of their many call
# sites, a large part of the compile time of the kernels that call them.
@njit(**_JIT)
def _exchange(b, x):
    """``(max(b, x), min(b, x))`` without a branch (``x`` NaN: ``(b, x)``)."""
    return (x if x > b else b), (b if x > b else x)


@njit(**_JIT)
def _push4(b, x):
    """Push ``x`` into the decreasing 4-tuple ``b``; the smallest of the five drops out."""
    b0, x = _exchange(b[0], x)
    b1, x = _exchange(b[1], x)
    b2, x = _exchange(b[2], x)
    b3, x = _exchange(b[3], x)
    return (b0, b1, b2, b3)


@njit(**_JIT)
def _push6(b, x):
    """Push ``x`` into the decreasing 6-tuple ``b``; the smallest of the seven drops out."""
    b0, x = _exchange(b[0], x)
    b1, x = _exchange(b[1], x)
    b2, x = _exchange(b[2], x)
    b3, x = _exchange(b[3], x)
    b4, x = _exchange(b[4], x)
    b5, x = _exchange(b[5], x)
    return (b0, b1, b2, b3, b4, b5)


@njit(**_JIT)
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


@njit(**_JIT)
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
def top_k_values(Z, i, k):
    """``(max, v, nan)``: row ``i``'s maximum, its k-th largest value ``v`` and a NaN flag.

    ``1 <= k <= 8``. Every entry goes through a branch-free network
    (:func:`_push8`) as wide as k needs, 4, 6 or 8: each entry costs as many
    compare-exchanges as the network is wide. On rows of up to
    ``_NET_ROW_MAX`` entries this costs less than the insertion's
    mispredicted branches, or than a pre-filter that copies the entries
    above a lower bound of the k-th largest value.
    """
    ninf = -np.inf
    nan = False
    if k <= 4:
        b4 = (ninf, ninf, ninf, ninf)
        for j in range(Z.shape[1]):
            x = Z[i, j]
            nan |= x != x
            b4 = _push4(b4, x)
        return b4[0], _kth(b4 + b4, k), nan
    if k <= 6:
        b6 = (ninf, ninf, ninf, ninf, ninf, ninf)
        for j in range(Z.shape[1]):
            x = Z[i, j]
            nan |= x != x
            b6 = _push6(b6, x)
        return b6[0], _kth(b6 + (ninf, ninf), k), nan
    b = (ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf)
    for j in range(Z.shape[1]):
        x = Z[i, j]
        nan |= x != x
        b = _push8(b, x)
    return b[0], _kth(b, k), nan


@njit(**_JIT_INLINE)
def top_k_dense(Z, i, k, v, m, out, oi):
    """``out[oi] = exp(z - m)`` on the top k of row ``i`` (k-th largest value ``v``), 0 elsewhere.

    Every entry's exp is evaluated (:func:`._numba_exp.exp_nonpositive`, in
    SIMD) and masked. When more entries than k equal ``v``, only the first of
    them (lowest indices) are kept, in a second, scalar pass. ``out[oi]``
    may be ``Z[i]``: each entry is read before it is written. With
    :func:`top_k_values`, the row function of the top-k loss's kernel
    (``losses/_sparse_softmax_numba.py``).
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
def _lane_bound(Z, i, k):
    """``(m, low, nan)``: row ``i``'s maximum, a lower bound of its k-th largest value, a NaN flag.

    The maxima of the 8 lanes ``j = r (mod 8)`` are 8 entries of the row,
    so the k-th largest of them (``k <= 8``) is at most the row's k-th
    largest value. They come from one pass with 8 independent running
    maxima (:func:`._numba_rows._lane_maxima`); the last ``K mod 8``
    entries go straight into the network. ``K >= 8``.
    """
    K = Z.shape[1]
    end = K // 8 * 8
    lanes, nan = _lane_maxima(Z, i, end)
    ninf = -np.inf
    b = (ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf)
    for a in range(end, K):
        x = Z[i, a]
        nan |= x != x
        b = _push8(b, x)
    for r in range(8):
        b = _push8(b, lanes[r])
    return b[0], _kth(b, k), nan


@njit(**_JIT_INLINE)
def _top_k_long_row(Z, i, k, low, m, bval, bidx, out):
    """Top-k softmax of a long row ``i`` from its entries at least ``low`` (at most its k-th largest).

    The candidates are rare on rows of more than ``_BRANCH_FREE_COPY_MAX``
    entries: a test that is almost never taken costs less than a store per
    entry. Their values go into ``bval`` and their columns into ``bidx``
    (scratch of the row's length), in row order; the network finds the k-th
    largest value ``v`` among them, which is the row's, since every entry
    at least ``v`` is a candidate. The row is zeroed, and exp is evaluated,
    behind a test too, on the kept candidates only (those above ``v`` and
    the first ones equal to it: exactly k, less ``m``; there the
    branch-free selection of the short rows and its separate exp loop cost
    more), summed by :func:`_kept_sum`.
    """
    K = Z.shape[1]
    c = 0
    for j in range(K):
        x = Z[i, j]
        if x >= low:
            bval[c] = x
            bidx[c] = j
            c += 1
    ninf = -np.inf
    b = (ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf)
    for a in range(c):
        b = _push8(b, bval[a])
    v = _kth(b, k)
    above = 0
    for a in range(c):
        above += bval[a] > v
    ties = k - above
    for j in range(K):
        out[i, j] = 0
    p = 0  # the kept candidates move to the front of bval / bidx (p <= a)
    for a in range(c):
        x = bval[a]
        if x > v or (x == v and ties > 0):
            bval[p] = np.exp(x - m)
            bidx[p] = bidx[a]
            p += 1
        ties -= x == v
    s = _kept_sum(bval, k)
    for a in range(k):
        out[i, bidx[a]] = bval[a] / s


@njit(**_JIT_INLINE)
def _kept_sum(e, k):
    """``e[0] + ... + e[k - 1]`` (``k <= 8``) in the order of NumPy's ``add.reduce`` on k values.

    Sequentially below 8, in pairs of pairs at 8: the NumPy path sums its k
    kept values so, and the two backends differ by the rounding of exp only.
    """
    if k < 8:
        s = e[0]
        for a in range(1, k):
            s += e[a]
        return s
    return ((e[0] + e[1]) + (e[2] + e[3])) + ((e[4] + e[5]) + (e[6] + e[7]))


def sparse_softmax_rows(Z, k, out, zmax):
    """Top-k softmax of every row of ``Z`` (``1 <= k < K``).

    For ``k <= 8`` on rows of up to ``_COLUMNS_MAX`` entries, by transposed
    blocks of rows (:func:`._numba_columns.sparse_softmax_columns`: a
    compare-exchange network gives the k-th largest value ``v`` and the
    maximum, exp is evaluated for every entry in SIMD and masked; where the
    target processor does not vectorise the blocks' network, the same
    arithmetic row by row, :func:`_sparse_softmax_network_rows`); on longer
    rows, the network sees only the entries above a lower bound of ``v``,
    and exp is evaluated for the k kept ones only
    (:func:`_sparse_softmax_prefiltered_short`, and
    :func:`_sparse_softmax_prefiltered_long` on rows of more than
    ``_BRANCH_FREE_COPY_MAX`` entries). Otherwise one pass per row finds
    the k largest entries and the row maximum (:func:`top_k_row`). Among
    equal values at the k-th place the lowest indices are kept. Writes
    ``out`` and ``zmax``; returns the first invalid row or -1.

    A Python function that picks the compiled kernel by k and the row
    length: numba then compiles, on a first call, that kernel only, where
    one compiled function that chose inside would compile all five.
    """
    K = Z.shape[1]
    if k > _NET_K_MAX:
        return _sparse_softmax_insertion(Z, k, out, zmax)
    if K > _BRANCH_FREE_COPY_MAX:
        return _sparse_softmax_prefiltered_long(Z, k, out, zmax)
    if K >= _PREFILTER_MIN:
        return _sparse_softmax_prefiltered_short(Z, k, out, zmax)
    if _COLUMNS_VECTORISED:
        return sparse_softmax_columns(Z, k, out, zmax)
    return _sparse_softmax_network_rows(Z, k, out, zmax)


@njit(**_JIT_FMA)
def _sparse_softmax_network_rows(Z, k, out, zmax):
    """:func:`sparse_softmax_rows` for ``k <= 8`` on rows of up to ``_COLUMNS_MAX`` entries, row by row.

    Where the transposed blocks of
    :func:`._numba_columns.sparse_softmax_columns` are not vectorised
    (``_COLUMNS_VECTORISED``): per row, the network over every entry
    (:func:`top_k_values`, its state in registers), the masked exp of every
    entry (:func:`top_k_dense`, the lowest indices kept among ties at the
    k-th place), summed in row order and divided. The same arithmetic as
    the column kernel's, row by row: the same result, bit for bit.
    """
    n, K = Z.shape
    for i in range(n):
        m, v, nan = top_k_values(Z, i, k)
        if not _store_max(m, nan, zmax, i):
            return i
        m = zmax[i]  # in the dtype of Z, as the column kernel subtracts it
        top_k_dense(Z, i, k, v, m, out, i)
        s = out[i, 0]
        for j in range(1, K):
            s += out[i, j]
        for j in range(K):
            out[i, j] = out[i, j] / s
    return -1


@njit(**_JIT)
def _sparse_softmax_prefiltered_short(Z, k, out, zmax):
    """:func:`sparse_softmax_rows` for ``k <= 8`` on rows of more than ``_COLUMNS_MAX`` and up to ``_BRANCH_FREE_COPY_MAX`` entries.

    Per row, one vectorised pass gives the maximum and a lower bound
    ``low`` of the k-th largest value ``v`` (:func:`_lane_bound`). A second
    pass zeroes the row and lists the columns of the candidates (the
    entries at least ``low``: a handful on rows of random scores) without a
    branch: a store per entry costs less than a test mispredicted for a
    good part of the entries, and the column alone is stored (the values
    are read back from the row, in the cache: a second store per entry
    costs more). The network finds ``v`` among the candidates, which is the
    row's, since every entry at least ``v`` is one; the kept ones (above
    ``v``, and the first ones equal to it: exactly k) move to the front of
    the list, again without a branch (whether a candidate is kept is
    mispredicted about once per row otherwise), and exp is evaluated on
    them only. The network over every entry would cost 8 compare-exchanges
    per entry, the insertion of :func:`top_k_row` a mispredicted branch per
    entry that enters its buffer.
    """
    n, K = Z.shape
    bidx = np.empty(K, dtype=np.intp)
    e = np.empty(8, dtype=Z.dtype)
    ninf = -np.inf
    for i in range(n):
        m, low, nan = _lane_bound(Z, i, k)
        if not _store_max(m, nan, zmax, i):
            return i
        m = zmax[i]  # in the dtype of Z, as the NumPy path subtracts it
        c = 0
        for j in range(K):
            x = Z[i, j]
            out[i, j] = 0
            bidx[c] = j
            c += x >= low
        b = (ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf)
        for a in range(c):
            b = _push8(b, Z[i, bidx[a]])
        v = _kth(b, k)
        above = 0
        for a in range(c):
            above += Z[i, bidx[a]] > v
        ties = k - above
        p = 0
        for a in range(c):
            j = bidx[a]
            x = Z[i, j]
            bidx[p] = j
            p += (x > v) | ((x == v) & (ties > 0))
            ties -= x == v
        for a in range(k):
            e[a] = np.exp(Z[i, bidx[a]] - m)
        s = _kept_sum(e, k)
        for a in range(k):
            out[i, bidx[a]] = e[a] / s
    return -1


@njit(**_JIT)
def _sparse_softmax_prefiltered_long(Z, k, out, zmax):
    """:func:`sparse_softmax_rows` for ``k <= 8`` on rows of more than ``_BRANCH_FREE_COPY_MAX`` entries.

    Per row, one vectorised pass gives the maximum and a lower bound of the
    k-th largest value (:func:`_lane_bound`), and :func:`_top_k_long_row`
    runs the network on the entries above it only (a handful on rows of
    random scores).
    """
    n, K = Z.shape
    bval = np.empty(K, dtype=Z.dtype)
    bidx = np.empty(K, dtype=np.intp)
    for i in range(n):
        m, low, nan = _lane_bound(Z, i, k)
        if not _store_max(m, nan, zmax, i):
            return i
        m = zmax[i]  # in the dtype of Z, as the NumPy path subtracts it
        _top_k_long_row(Z, i, k, low, m, bval, bidx, out)
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
        if not _store_max(m, nan, zmax, i):
            return i
        for j in range(K):
            out[i, j] = 0
        for p in range(k):
            out[i, bidx[p]] = np.exp(bval[p] - m)
        if K <= 128:  # pairwise, as np.sum sums a row
            s = _block_sum(out, i, 0, K)
        else:
            s = out[i, bidx[0]]
            for p in range(1, k):
                s += out[i, bidx[p]]
        for p in range(k):
            out[i, bidx[p]] = out[i, bidx[p]] / s
    return -1
