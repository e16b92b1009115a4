"""Compiled row kernel of the 1.5-entmax loss (numba backend; see ``_numba_engine``)."""

import math

from numba import njit

from ..transforms._numba_entmax15 import _entmax15_newton_tau
from ..transforms._numba_rows import _JIT_INLINE, _JIT_REASSOC
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
def entmax15_row(Z, i, m, y, Q, qi, params, scratch, out, oi):
    """``<p, z - m> + H_1.5(p) - q^T (z - m)`` of row ``i``; ``p - q`` into ``out[oi]``.

    ``p = entmax15(z)``: with ``u = (z - m) / 2``, the threshold ``tau``
    by Newton steps checked against the closed form (the algorithm of
    ``entmax15_rows``), ``p = [u - tau]_+^2``
    normalised to sum 1 as the NumPy path does, and the Tsallis entropy
    ``H_1.5(p) = (sum p - sum p^1.5) / 0.75``. Entries outside the support (``-inf``
    masks included) add nothing.
    """
    fbuf, _, zbuf = scratch
    K = Z.shape[1]
    # Newton's passes end at the closed form of the exact support (they
    # certify it by counting); after the pass limit, at the closed form of
    # the last support, which Newton's quadratic convergence has made exact
    # to rounding long before.
    tau, _ = _entmax15_newton_tau(Z, i, m, -1.0)
    zbuf[0] = tau  # rounded to the dtype of the scores, as the NumPy path
    tau = zbuf[0]
    qz = target_dot(Z, i, m, y, Q, qi)  # before out (which may be Z) is written
    # The candidates are spent: fbuf now holds u (K entries), read twice below.
    total = 0.0
    for j in range(K):
        zbuf[0] = (Z[i, j] - m) / 2
        u = zbuf[0]
        fbuf[j] = u
        d = u - tau
        total += d * d if d > 0 else 0.0
    proportions = Q.shape[1] > 0
    pz = 0.0
    psum = 0.0
    p15 = 0.0
    for j in range(K):
        d = fbuf[j] - tau
        p = d * d / total if d > 0 else 0.0
        if p > 0:
            pz += p * (2.0 * fbuf[j])  # z - m (exactly, but for float32 rounding)
            psum += p
            p15 += p * math.sqrt(p)
        out[oi, j] = p - Q[qi, j] if proportions else p
    if not proportions:
        out[oi, y[qi]] -= 1
    # H = -sum p (p^0.5 - 1) / 0.75, summed as the NumPy path does.
    return pz + (psum - p15) / 0.75 - qz


# Reassociation, as in the 1.5-entmax mapping kernels: it vectorises the sums
# of the Newton passes, the bulk of a row's work. The driver's own sums (the
# loss over the rows, the intercept's gradient) may be reordered too, as BLAS
# reorders those of the products; the results equal the NumPy path's to
# rounding (tests/linear_model/test_numba_linear.py).
@njit(**_JIT_REASSOC)
def kernel(task, params):
    """The 1.5-entmax loss over a task of :mod:`._numba_engine`."""
    if len(task) == ROWS_TASK:  # constant: the other branches are dropped (_numba_engine)
        return rows_task(entmax15_row, task, params)
    elif len(task) == DENSE_TASK:
        return dense_task(entmax15_row, row_by_row, task, params)
    else:
        return csr_task(entmax15_row, row_by_row, task, params)
