"""Compiled drivers of a loss's row kernel (numba backend).

A loss with a compiled path (:meth:`FenchelYoungLoss._row_kernel`) writes one
*row kernel*, the loss and gradient of one row of scores, and one entry point
that hands it to the drivers of the three tasks (below)::

    @njit(cache=True, nogil=True, inline="always")
    def row(Z, i, m, y, Q, qi, params, scratch, out, oi):
        ...  # returns Omega*(z) - q^T z for z = Z[i] - m; writes p - q into out[oi]

    @njit(cache=True, nogil=True)
    def kernel(task, params):
        if len(task) == ROWS_TASK:
            return rows_task(row, task, params)
        elif len(task) == DENSE_TASK:
            return dense_task(row, row_by_row, task, params)
        else:
            return csr_task(row, row_by_row, task, params)

``len(task)`` is a constant of the task's type: numba rewrites the tests as
constants and drops the branches of the other tasks before it inlines the
drivers, so each task compiles its own driver only, once. (Not a dispatch by
``numba.extending.overload`` with ``inline="always"``: numba types such an
overload's whole driver more than once per task, which multiplies the
compile time of a first fit; nor a driver compiled on its own: it would
take the row kernel as an argument, a Python object in the machine code,
which numba cannot cache.)

A loss may also hand the linear drivers a *block kernel* in place of
:func:`row_by_row`, which computes the rows of a block of up to ``_BLOCK``
score rows together (the top-k loss does, by transposed blocks: one SIMD
lane per row); the linear drivers call it on each block of rows whose
scores they computed::

    @njit(cache=True, nogil=True, inline="always")
    def block(row, Z, i0, b, y, Q, params, scratch, work, out, losses, zmax):
        ...  # rows r < b of Z (targets i0 + r): losses[r], out[r] = p - q

A large block kernel may be inlined as a thin wrapper that calls a function
compiled on its own (shorter compile times); that function must not take
the row kernel as an argument (see above): see ``_sparse_softmax_numba.py``.

The row kernel reaches the inlined drivers as a global of the entry point, so
each loss gets its own machine code with the row arithmetic inlined into the
loop (no call, no branch per row), and the entry point, a plain module-level
function with array arguments, is cached on disk like every other kernel.

The row kernel's arguments: ``Z`` the score rows (float32 or float64), ``i``
the row, ``m`` its maximum (finite: invalid rows never reach a row kernel),
the target as class indices ``y[qi]`` when ``Q`` has no columns, else the
distribution ``Q[qi]``; ``params`` the loss's float64 parameters; ``scratch``
the tuple ``(fbuf, ibuf, zbuf)`` of a float64 and an intp buffer of length
``K + 1`` and a one-entry buffer of the dtype of ``Z``; ``out[oi]`` receives
``p - q`` and may be ``Z[i]`` itself (read each entry before writing it).
The driver adds the loss's target term ``Omega(q)`` (``tterm``, one entry per
row, or one for class indices). A block kernel's arguments are those of
:func:`row_by_row`.

A *task* is a tuple of arrays; its length tells the entry point which driver runs:

``(Z, y, Q, tterm, out, losses, zmax)``
    every row of ``Z``: ``losses[i]`` and ``out[i] = p - q``; returns the first
    invalid row (NaN, ``+inf``, all ``-inf``) or -1, with ``zmax`` holding the
    row maxima for the error message. All rows are checked before any is
    written: ``out`` may be ``Z``.
``(X, W, b, y, Q, tterm, weights, scale, grad_W, grad_b)``
    dense C-contiguous ``X``: see :func:`_dense_linear`;
``(data, indices, indptr, Wt, b, y, Q, tterm, weights, scale, grad_Wt, grad_b)``
    CSR ``X``: see :func:`_csr_linear`.
"""

import numpy as np
from numba import njit

from ..transforms._numba_blas import (
    _BLAS_LIKE,
    _ROWS,
    _add_class_outer,
    _add_outer_block,
    _add_outer_rows,
    _dot_block,
    _dot_rows,
)
from ..transforms._numba_kernels import _COLUMN_BLOCK, _JIT_INLINE, _row_max

#: The lengths of the rows and the dense tasks' tuples (see the module
#: docstring); a CSR task, the entry points' last branch, has 12 entries.
ROWS_TASK, DENSE_TASK = 7, 10

# Rows per block of the linear drivers: the block kernels' transposed blocks
# (a multiple of the 4 rows of the dense products).
_BLOCK = _COLUMN_BLOCK

# Dense X: a row whose loss gradient has at most 1 / _FEW_CLASSES of its
# classes nonzero (a sparse mapping's support and the target) is queued per
# class and added by _add_class_outer, the others in blocks of 4 rows by
# _add_outer_block. A class's product over 4 queued rows shares fewer loads
# than a block's 4 rows x 2 classes, so queueing pays only when most of the
# row's classes are zero.
_FEW_CLASSES = 4


@njit(**_JIT_INLINE)
def target_dot(Z, i, m, y, Q, qi):
    """``q^T (z - m)`` of row ``i`` of ``Z`` with the target row ``y[qi]`` or
    ``Q[qi]``; a ``-inf`` score counts 0 where ``q = 0``."""
    if Q.shape[1] == 0:
        return Z[i, y[qi]] - m
    qz = 0.0
    for j in range(Z.shape[1]):
        q = Q[qi, j]
        if q != 0:
            qz += q * (Z[i, j] - m)
    return qz


@njit(**_JIT_INLINE)
def subtract_target(out, oi, y, Q, qi):
    """``out[oi] -= q`` for the target row ``y[qi]`` or ``Q[qi]``."""
    if Q.shape[1] == 0:
        out[oi, y[qi]] -= 1
    else:
        for j in range(out.shape[1]):
            out[oi, j] -= Q[qi, j]


@njit(**_JIT_INLINE)
def _scratch(n_rows, K, dtype):
    """Row maxima ``zmax`` (float64, n_rows) and the row kernels' ``scratch``."""
    return (
        np.empty(n_rows, dtype=np.float64),
        (
            np.empty(K + 1, dtype=np.float64),
            np.empty(K + 1, dtype=np.intp),
            np.empty(1, dtype=dtype),
        ),
    )


@njit(**_JIT_INLINE)
def _block_buffers(K):
    """A block's losses and row maxima, and the block kernel's ``work``.

    ``work`` is a (K, _BLOCK) and an (8, _BLOCK) float64 matrix, and vectors
    of _BLOCK float64 values, counts (intp) and flags (bool), allocated
    apart: LLVM vectorises a loop along the rows of a block only where it
    knows that the arrays written do not overlap those read.
    """
    work = (
        np.empty((K, _BLOCK), dtype=np.float64),
        np.empty((8, _BLOCK), dtype=np.float64),
        np.empty(_BLOCK, dtype=np.float64),
        np.empty(_BLOCK, dtype=np.intp),
        np.empty(_BLOCK, dtype=np.bool_),
    )
    return np.empty(_BLOCK, dtype=np.float64), np.empty(_BLOCK, dtype=np.float64), work


@njit(**_JIT_INLINE)
def row_by_row(row, Z, i0, b, y, Q, params, scratch, work, out, losses, zmax):
    """The default block kernel: the row kernel ``row`` on each row of the block.

    The block is the rows ``r < b`` of ``Z``, whose targets are those of the
    rows ``i0 + r``; ``losses[r]`` receives the row's loss (without the
    target term), ``out[r]`` its ``p - q`` (``out`` may be ``Z``), ``zmax[r]``
    its maximum; ``work`` is the block kernel's scratch (see
    :func:`_block_buffers`), ``scratch`` the row kernel's. Returns the
    first invalid row of the block (NaN, ``+inf``, all ``-inf``) or -1; the
    rows after it are left as they were.
    """
    for r in range(b):
        m, ok = _row_max(Z, r, zmax)
        if not ok:
            return r
        losses[r] = row(Z, r, m, y, Q, i0 + r, params, scratch, out, r)
    return -1


@njit(**_JIT_INLINE)
def _tterm(tterm, qi):
    return tterm[0] if tterm.shape[0] == 1 else tterm[qi]


@njit(**_BLAS_LIKE)
def _csr_row_scores(data, indices, lo, hi, Wt, b, Z, i):
    """``Z[i] = b + sum_p data[p] Wt[indices[p]]`` over the stored entries ``lo:hi`` of a row."""
    K = Wt.shape[1]
    for j in range(K):
        Z[i, j] = b[j]
    for p in range(lo, hi):
        col = indices[p]
        a = data[p]
        for j in range(K):
            Z[i, j] += a * Wt[col, j]


@njit(**_BLAS_LIKE)
def _csr_add_outer(data, indices, indptr, G, rows, n_rows, grad_Wt):
    """``grad_Wt += sum_r x_r^T G[r]`` over the rows ``rows[:n_rows]`` of CSR ``X``."""
    K = G.shape[1]
    for t in range(n_rows):
        i = rows[t]
        for p in range(indptr[i], indptr[i + 1]):
            col = indices[p]
            a = data[p]
            for j in range(K):
                grad_Wt[col, j] += a * G[i, j]


@njit(**_JIT_INLINE)
def _rows(row, params, Z, y, Q, tterm, out, losses, zmax):
    """Loss and gradient of every row of ``Z`` (the rows task)."""
    n, K = Z.shape
    for i in range(n):
        _, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
    _, scratch = _scratch(0, K, Z.dtype)
    for i in range(n):
        value = row(Z, i, zmax[i], y, Q, i, params, scratch, out, i)
        losses[i] = value + _tterm(tterm, i)
    return -1


@njit(**_JIT_INLINE)
def _dense_linear(row, block, params, X, W, b, y, Q, tterm, weights, scale, grad_W, grad_b):
    """Weighted loss of ``Z = X @ W.T + b`` and its gradient in ``W, b``.

    One pass over the rows of dense ``X`` (n, d), by blocks of ``_BLOCK``
    rows: their scores (float64, 4 rows at a time), losses and loss
    gradients (the block kernel ``block``), and the outer products
    ``c_i (p_i - q_i) x_i^T`` added into ``grad_W`` (which the caller fills
    with the penalty's gradient first), skipped for rows whose loss gradient
    is zero. A row whose gradient has few nonzero classes (at most
    ``K / _FEW_CLASSES``: a sparse mapping's support and the target) is
    queued per class, and each class's queue of 4 rows is added by
    :func:`_add_class_outer`: its product then costs in proportion to the
    nonzero entries, not to all K classes; the other rows are added 4 at a
    time by :func:`_add_outer_block`. ``grad_b`` is overwritten with
    ``sum_i c_i (p_i - q_i)``; the row weights are ``c_i = weights[i] *
    scale`` (or ``scale`` when ``weights`` is empty). Returns ``(sum_i c_i
    loss_i, -1)``, or ``(nan, i)`` at the first row ``i`` with invalid
    scores.
    """
    n, d = X.shape
    K = W.shape[0]
    use_weights = weights.shape[0] > 0
    Zb = np.empty((_BLOCK, K), dtype=np.float64)  # a block's scores, then p - q
    losses, zmax, work = _block_buffers(K)
    _, scratch = _scratch(0, K, np.float64)
    Gp = np.empty((_ROWS, K), dtype=np.float64)  # pending rows' c_i (p_i - q_i)
    rows = np.empty(_ROWS, dtype=np.int64)
    pending = 0
    # Per-class queues of (row, gradient entry) for the rows with few
    # nonzero classes.
    qrows = np.empty((K, _ROWS), dtype=np.int64)
    qg = np.empty((K, _ROWS), dtype=np.float64)
    qn = np.zeros(K, dtype=np.int64)
    grad_b[:] = 0.0
    total = 0.0
    for i0 in range(0, n, _BLOCK):
        nb = min(_BLOCK, n - i0)
        for r0 in range(0, nb, _ROWS):
            r = min(_ROWS, nb - r0)
            if r == _ROWS:
                _dot_block(X, i0 + r0, 0, d, W, Zb[r0:])
            else:
                _dot_rows(X, i0 + r0, r, 0, d, W, Zb[r0:])
        for rr in range(nb):
            for j in range(K):
                Zb[rr, j] += b[j]
        bad = block(row, Zb, i0, nb, y, Q, params, scratch, work, Zb, losses, zmax)
        if bad >= 0:
            return np.nan, i0 + bad
        for rr in range(nb):
            i = i0 + rr
            c = weights[i] * scale if use_weights else scale
            total += c * (losses[rr] + _tterm(tterm, i))
            # c (p - q), its sum, and its nonzero count, written out: this
            # loop runs once per row, and LLVM vectorises it better in place
            # than through an inlined helper.
            nnz = 0
            for j in range(K):
                g = c * Zb[rr, j]
                Gp[pending, j] = g
                grad_b[j] += g
                nnz += g != 0
            if _FEW_CLASSES * nnz <= K:
                if nnz == 0:
                    continue
                for j in range(K):
                    g = Gp[pending, j]
                    if g != 0:
                        t = qn[j]
                        qrows[j, t] = i
                        qg[j, t] = g
                        if t + 1 == _ROWS:
                            _add_class_outer(X, qrows[j], qg[j], _ROWS, d, grad_W, j)
                            qn[j] = 0
                        else:
                            qn[j] = t + 1
            else:
                rows[pending] = i
                pending += 1
                if pending == _ROWS:
                    _add_outer_block(X, rows, Gp, d, grad_W)
                    pending = 0
    if pending:
        _add_outer_rows(X, rows, Gp, pending, d, grad_W)
    for j in range(K):
        if qn[j]:
            _add_class_outer(X, qrows[j], qg[j], qn[j], d, grad_W, j)
    return total, -1


@njit(**_JIT_INLINE)
def _csr_linear(
    row, block, params, data, indices, indptr, Wt, b, y, Q, tterm, weights, scale, grad_Wt,
    grad_b,
):
    """:func:`_dense_linear` for CSR ``X`` (two passes over its rows).

    ``X`` is given by its CSR arrays; the weights and their gradient are
    transposed, ``Wt`` and ``grad_Wt`` of shape (d, K), so that the entries
    of a feature are contiguous. The first pass computes each block's scores
    (gathering rows of ``Wt``), losses and loss gradients; the second adds
    the outer products of the rows with a nonzero loss gradient into
    ``grad_Wt``. Apart, each pass streams through one of ``Wt`` and
    ``grad_Wt``; fused, they would compete for the cache.
    """
    n = indptr.shape[0] - 1
    K = Wt.shape[1]
    use_weights = weights.shape[0] > 0
    G = np.empty((n, K), dtype=np.float64)  # scores, then c_i (p_i - q_i)
    losses, zmax, work = _block_buffers(K)
    _, scratch = _scratch(0, K, np.float64)
    rows = np.empty(n, dtype=np.int64)
    n_rows = 0
    grad_b[:] = 0.0
    total = 0.0
    for i0 in range(0, n, _BLOCK):
        nb = min(_BLOCK, n - i0)
        for i in range(i0, i0 + nb):
            _csr_row_scores(data, indices, indptr[i], indptr[i + 1], Wt, b, G, i)
        Gb = G[i0:i0 + nb]
        bad = block(row, Gb, i0, nb, y, Q, params, scratch, work, Gb, losses, zmax)
        if bad >= 0:
            return np.nan, i0 + bad
        for rr in range(nb):
            i = i0 + rr
            c = weights[i] * scale if use_weights else scale
            total += c * (losses[rr] + _tterm(tterm, i))
            nonzero = False
            for j in range(K):  # c (p - q), as in _dense_linear
                g = c * G[i, j]
                G[i, j] = g
                grad_b[j] += g
                nonzero |= g != 0
            if nonzero:
                rows[n_rows] = i
                n_rows += 1
    _csr_add_outer(data, indices, indptr, G, rows, n_rows, grad_Wt)
    return total, -1


@njit(**_JIT_INLINE)
def rows_task(row, task, params):
    """The rows task: :func:`_rows` with the row kernel."""
    Z, y, Q, tterm, out, losses, zmax = task
    return _rows(row, params, Z, y, Q, tterm, out, losses, zmax)


@njit(**_JIT_INLINE)
def dense_task(row, block, task, params):
    """The dense task: :func:`_dense_linear` with the row and the block kernels."""
    X, W, b, y, Q, tterm, weights, scale, grad_W, grad_b = task
    return _dense_linear(
        row, block, params, X, W, b, y, Q, tterm, weights, scale, grad_W, grad_b
    )


@njit(**_JIT_INLINE)
def csr_task(row, block, task, params):
    """The CSR task: :func:`_csr_linear` with the row and the block kernels."""
    data, indices, indptr, Wt, b, y, Q, tterm, weights, scale, grad_Wt, grad_b = task
    return _csr_linear(
        row, block, params, data, indices, indptr, Wt, b, y, Q, tterm, weights, scale,
        grad_Wt, grad_b,
    )
