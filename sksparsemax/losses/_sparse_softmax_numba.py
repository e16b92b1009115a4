"""Compiled row kernel of the top-k loss (numba backend; see ``_numba_engine``)."""

import numpy as np
from numba import njit

from ..transforms._numba_kernels import _JIT, _JIT_INLINE, top_k_row
from ._numba_engine import run, subtract_target, target_dot


@njit(**_JIT_INLINE)
def sparse_softmax_row(Z, i, m, y, Q, qi, params, scratch, out, oi):
    """``log sum_{top k} exp(z - m) - q^T (z - m)`` of row ``i``; ``p - q`` into ``out[oi]``.

    ``k = params[0]`` (``1 <= k < K``); among equal scores at the k-th place
    the lowest indices are kept, as in
    :func:`~sksparsemax.transforms.sparse_softmax`.
    """
    k = int(params[0])
    bval, bidx, _ = scratch
    qz = target_dot(Z, i, m, y, Q, qi)
    top_k_row(Z, i, k, bval, bidx)  # the driver checked the row for NaN
    s = 0.0
    for p in range(k):
        e = np.exp(bval[p] - m)
        bval[p] = e
        s += e
    for j in range(Z.shape[1]):
        out[oi, j] = 0
    for p in range(k):
        out[oi, bidx[p]] = bval[p] / s
    subtract_target(out, oi, y, Q, qi)
    return np.log(s) - qz


@njit(**_JIT)
def kernel(task, params):
    """The top-k loss over a task of :mod:`._numba_engine`."""
    return run(sparse_softmax_row, task, params)
