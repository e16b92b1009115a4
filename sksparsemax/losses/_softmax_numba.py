"""Compiled row kernel of the softmax loss (numba backend; see ``_numba_engine``)."""

import numpy as np
from numba import njit

from ..transforms._numba_kernels import _JIT, _JIT_INLINE
from ._numba_engine import run, subtract_target, target_dot


@njit(**_JIT_INLINE)
def softmax_row(Z, i, m, y, Q, qi, params, scratch, out, oi):
    """``log sum exp(z - m) - q^T (z - m)`` of row ``i``; ``p - q`` into ``out[oi]``."""
    K = Z.shape[1]
    qz = target_dot(Z, i, m, y, Q, qi)
    s = 0.0
    for j in range(K):
        e = np.exp(Z[i, j] - m)
        out[oi, j] = e
        s += e
    for j in range(K):
        out[oi, j] /= s
    subtract_target(out, oi, y, Q, qi)
    return np.log(s) - qz


@njit(**_JIT)
def kernel(task, params):
    """The softmax loss over a task of :mod:`._numba_engine`."""
    return run(softmax_row, task, params)
