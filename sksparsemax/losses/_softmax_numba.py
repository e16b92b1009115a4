"""Compiled row kernel of the softmax loss (numba backend; see ``_numba_engine``)."""

import numpy as np
from numba import njit

from ..transforms._numba_kernels import _JIT_INLINE
from ..transforms._numba_exp import exp_nonpositive
from ..transforms._numba_rows import _JIT_FMA
from ._numba_engine import (
    DENSE_TASK,
    ROWS_TASK,
    csr_task,
    dense_task,
    row_by_row,
    rows_task,
    subtract_target,
    target_dot,
)


@njit(**_JIT_INLINE)
def softmax_row(Z, i, m, y, Q, qi, params, scratch, out, oi):
    """``log sum exp(z - m) - q^T (z - m)`` of row ``i``; ``p - q`` into ``out[oi]``.

    The exponentials are :func:`~.._numba_exp.exp_nonpositive` (within 1
    ulp, plain arithmetic that LLVM vectorises; libm's ``exp`` is a call per
    entry), summed in the order of the row; the row is scaled by ``1 / s``.
    """
    K = Z.shape[1]
    qz = target_dot(Z, i, m, y, Q, qi)
    m = np.float64(m)
    for j in range(K):
        out[oi, j] = exp_nonpositive(np.float64(Z[i, j]) - m)
    s = 0.0
    for j in range(K):
        s += out[oi, j]
    inv = 1.0 / s
    for j in range(K):
        out[oi, j] *= inv
    subtract_target(out, oi, y, Q, qi)
    return np.log(s) - qz


# Fused multiply-adds in exp_nonpositive's polynomial; no reassociation, so
# the sums keep their order.
@njit(**_JIT_FMA)
def kernel(task, params):
    """The softmax loss over a task of :mod:`._numba_engine`."""
    if len(task) == ROWS_TASK:  # constant: the other branches are dropped (_numba_engine)
        return rows_task(softmax_row, task, params)
    elif len(task) == DENSE_TASK:
        return dense_task(softmax_row, row_by_row, task, params)
    else:
        return csr_task(softmax_row, row_by_row, task, params)
