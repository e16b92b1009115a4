"""Compiled row kernel of the top-k loss (numba backend; see ``_numba_engine``)."""

import numpy as np
from numba import njit

from ..transforms._numba_kernels import (
    _JIT_INLINE,
    _NET_K_MAX,
    _NET_ROW_MAX,
    top_k_dense,
    top_k_values,
    top_k_row,
)
from ..transforms._numba_rows import _JIT_FMA
from ._numba_engine import run, subtract_target, target_dot


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


# Fused multiply-adds in exp_nonpositive's polynomial (as in the mapping's
# kernel); no reassociation, so the sums keep their order.
@njit(**_JIT_FMA)
def kernel(task, params):
    """The top-k loss over a task of :mod:`._numba_engine`."""
    return run(sparse_softmax_row, task, params)
