"""Compiled row kernel of the sparsemax loss (numba backend; see ``_numba_engine``)."""

from numba import njit

from ..transforms._numba_kernels import _JIT_INLINE, _JIT_REASSOC, sparsemax_row_threshold
from ._numba_engine import (
    DENSE_TASK,
    ROWS_TASK,
    csr_task,
    dense_task,
    row_by_row,
    rows_task,
    target_dot,
)


@njit(**_JIT_INLINE)
def sparsemax_row(Z, i, m, y, Q, qi, params, scratch, out, oi):
    """``tau + ||p||^2 / 2 - q^T (z - m)`` of row ``i``; ``p - q`` into ``out[oi]``.

    The arithmetic of :func:`~sksparsemax.losses._sparsemax.sparsemax_conjugate`:
    the threshold is rounded to the dtype of ``Z`` (``scratch[2]``), as
    the NumPy path computes it in that dtype.
    """
    zbuf = scratch[2]
    t, _ = sparsemax_row_threshold(Z, i, m, -1.0)
    zbuf[0] = t
    tt = zbuf[0]
    qz = target_dot(Z, i, m, y, Q, qi)
    proportions = Q.shape[1] > 0
    sq = 0.0
    for j in range(Z.shape[1]):  # p - q in the same pass (the hot loop)
        p = (Z[i, j] - m) - tt
        p = p if p > 0 else 0
        sq += p * p
        out[oi, j] = p - Q[qi, j] if proportions else p
    if not proportions:
        out[oi, y[qi]] -= 1
    return (tt + 0.5 * sq) - qz


# Reassociation, as in the sparsemax mapping's kernels: it vectorises the
# threshold's passes over a row. The driver's sums (the loss over the rows,
# the intercept's gradient) may be reordered too, as BLAS reorders those of
# the products; the results equal the NumPy path's to rounding
# (tests/linear_model/test_numba_linear.py).
@njit(**_JIT_REASSOC)
def kernel(task, params):
    """The sparsemax loss over a task of :mod:`._numba_engine`."""
    if len(task) == ROWS_TASK:  # constant: the other branches are dropped (_numba_engine)
        return rows_task(sparsemax_row, task, params)
    elif len(task) == DENSE_TASK:
        return dense_task(sparsemax_row, row_by_row, task, params)
    else:
        return csr_task(sparsemax_row, row_by_row, task, params)
