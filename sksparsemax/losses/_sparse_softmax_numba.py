"""Compiled row and block kernels of the top-k loss (numba; see ``_numba_engine``)."""

import numpy as np
from numba import njit

from ..transforms._numba_kernels import (
    _COLUMNS_MAX,
    _JIT_INLINE,
    _NET_K_MAX,
    _NET_ROW_MAX,
    _row_max,
    _store_max,
    _top_k_exp_columns,
    _top_k_network_columns,
    _transposed_block,
    top_k_dense,
    top_k_values,
    top_k_row,
)
from ..transforms._numba_rows import _JIT_FMA
from ._numba_engine import (
    DENSE_TASK,
    ROWS_TASK,
    csr_task,
    dense_task,
    rows_task,
    subtract_target,
    target_dot,
)


@njit(**_JIT_INLINE)
def _top_k_exp_network(Z, i, k, m, out, oi):
    """``out[oi] = exp(z - m)`` on the top k of row ``i``, 0 elsewhere; returns their sum.

    For ``k <= _NET_K_MAX`` and rows of at most ``_NET_ROW_MAX`` entries,
    with the network of the mapping's kernel on short rows
    (``sparse_softmax_rows`` in ``transforms/_numba_top_k.py``): the k-th
    largest value comes from the branch-free compare-exchange network over
    every entry, and every entry's exp is evaluated and masked
    (``top_k_dense``; among equal values at the k-th place the lowest
    indices are kept). The insertion of ``top_k_row`` mispredicts a branch
    about once per entry that enters its buffer, and libm's ``exp`` is a
    call per entry: on such rows both cost more than the network and the
    masked exp.
    """
    _, v, _ = top_k_values(Z, i, k)  # the driver checked the row for NaN
    top_k_dense(Z, i, k, v, m, out, oi)
    s = 0.0
    for j in range(Z.shape[1]):
        s += out[oi, j]
    return s


@njit(**_JIT_INLINE)
def _top_k_exp_insertion(Z, i, k, m, bval, bidx, out, oi):
    """:func:`_top_k_exp_network` for any k and row length (:func:`top_k_row`)."""
    top_k_row(Z, i, k, bval, bidx)
    s = 0.0
    for p in range(k):
        e = np.exp(bval[p] - m)
        bval[p] = e
        s += e
    for j in range(Z.shape[1]):
        out[oi, j] = 0
    for p in range(k):
        out[oi, bidx[p]] = bval[p]
    return s


@njit(**_JIT_INLINE)
def sparse_softmax_row(Z, i, m, y, Q, qi, params, scratch, out, oi):
    """``log sum_{top k} exp(z - m) - q^T (z - m)`` of row ``i``; ``p - q`` into ``out[oi]``.

    ``k = params[0]`` (``1 <= k < K``); among equal scores at the k-th place
    the lowest indices are kept, as in
    :func:`~sksparsemax.transforms.sparse_softmax`.
    """
    k = int(params[0])
    K = Z.shape[1]
    bval, bidx, _ = scratch
    qz = target_dot(Z, i, m, y, Q, qi)
    if k <= _NET_K_MAX and K <= _NET_ROW_MAX:
        s = _top_k_exp_network(Z, i, k, m, out, oi)
    else:
        s = _top_k_exp_insertion(Z, i, k, m, bval, bidx, out, oi)
    inv = 1.0 / s
    for j in range(K):
        out[oi, j] *= inv
    subtract_target(out, oi, y, Q, qi)
    return np.log(s) - qz


@njit(**_JIT_INLINE)
def sparse_softmax_block(row, Z, i0, b, y, Q, params, scratch, work, out, losses, zmax):
    """The top-k loss on a block of rows (see ``_numba_engine.row_by_row``).

    For ``k <= _NET_K_MAX`` and rows of at most ``_COLUMNS_MAX`` entries, by
    the transposed block of the mapping's column kernel
    (``sparse_softmax_columns`` in ``transforms/_numba_columns.py``): each
    step of the network, of the masked exp, of its sum and of the division
    runs along the block, one SIMD lane per row, where a row of 20 entries
    would leave the lanes of :func:`sparse_softmax_row` idle. A row with
    more than k entries at least its k-th largest (ties, or fewer than k
    finite entries) is left to :func:`sparse_softmax_row`, which keeps the
    lowest indices; the others get the same arithmetic as there (the same
    exp, summed in the order of the row). Longer rows or larger k: row by
    row. The row kernel is called from one place only: numba inlines it at
    each call, and each copy adds to the compile time.
    """
    return _sparse_softmax_block(Z, i0, b, y, Q, params, scratch, work, out, losses, zmax)


# Compiled on its own, not inlined into the drivers: it is called once per
# block, and LLVM optimises two moderate functions much faster than their
# inlined union. It takes no kernel argument (a kernel passed to a function
# that is not inlined would be a Python object in the machine code, which
# numba cannot cache) and calls the row kernel by name. Fused multiply-adds,
# as in the entry point below.
@njit(**_JIT_FMA)
def _sparse_softmax_block(Z, i0, b, y, Q, params, scratch, work, out, losses, zmax):
    """:func:`sparse_softmax_block`."""
    k = int(params[0])
    K = Z.shape[1]
    columns = k <= _NET_K_MAX and K <= _COLUMNS_MAX
    T, N, s, kept, nan = work
    if columns:
        bad = _top_k_columns(Z, b, k, T, N, s, kept, nan, zmax)
        if bad >= 0:
            return bad
    for r in range(b):
        if columns and kept[r] == k:
            m = N[0, r]
            qz = target_dot(Z, r, m, y, Q, i0 + r)  # before out[r], which may be Z[r]
            for j in range(K):
                out[r, j] = T[j, r]
            subtract_target(out, r, y, Q, i0 + r)
            losses[r] = np.log(s[r]) - qz
            continue
        if columns:
            m = N[0, r]
        else:
            m, ok = _row_max(Z, r, zmax)
            if not ok:
                return r
        losses[r] = sparse_softmax_row(Z, r, m, y, Q, i0 + r, params, scratch, out, r)
    return -1


@njit(**_JIT_INLINE)
def _top_k_columns(Z, b, k, T, N, s, kept, nan, zmax):
    """The columns of :func:`sparse_softmax_block`: ``T[j, r] = p_rj`` of
    the rows ``r < b`` of ``Z`` whose ``kept[r]`` (the count of entries at
    least the k-th largest) is k, their sums ``s``, maxima ``N[0]`` and
    ``zmax``; returns the first invalid row or -1."""
    K = Z.shape[1]
    _transposed_block(Z, 0, b, T)
    _top_k_network_columns(T, N, K, b, 4 if k <= 4 else (6 if k <= 6 else 8))
    _top_k_exp_columns(T, N, k, b, s, kept, nan)
    for r in range(b):
        if not _store_max(N[0, r], nan[r], zmax, r):
            return r
    inv = N[1]  # the second largest entries are no longer needed
    for r in range(b):
        inv[r] = 1.0 / s[r]
    for j in range(K):
        for r in range(b):
            T[j, r] *= inv[r]
    return -1


# Fused multiply-adds in exp_nonpositive's polynomial (as in the mapping's
# kernel); no reassociation, so the sums keep their order.
@njit(**_JIT_FMA)
def kernel(task, params):
    """The top-k loss over a task of :mod:`._numba_engine`."""
    if len(task) == ROWS_TASK:  # constant: the other branches are dropped (_numba_engine)
        return rows_task(sparse_softmax_row, task, params)
    elif len(task) == DENSE_TASK:
        return dense_task(sparse_softmax_row, sparse_softmax_block, task, params)
    else:
        return csr_task(sparse_softmax_row, sparse_softmax_block, task, params)
