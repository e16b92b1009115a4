"""Compiled loss and gradient of a linear model (numba backend).

Imported lazily, only when the numba backend is in effect (see
:meth:`._linear_loss.LinearModelLoss.loss_gradient`), for the sparsemax,
softmax and top-k losses.

Dense ``X``: for few classes, BLAS computes ``X @ W.T`` and ``G.T @ X`` at a
fraction of its peak speed (a GEMM with 6 columns runs no faster than 6
matrix-vector products), and the loss needs a third pass over the scores in
between. The kernel makes one pass over the rows of ``X``, four rows at a
time: their scores (register-blocked dot products, 4 rows x 2 classes),
their loss and loss gradient ``p - q`` (the row kernels of
:mod:`sksparsemax.losses._numba_kernels`, the same arithmetic as
:class:`~sksparsemax.losses.SparsemaxLoss`,
:class:`~sksparsemax.losses.SoftmaxLoss` and
:class:`~sksparsemax.losses.SparseSoftmaxLoss`), and the outer products
``(p - q) x^T`` added into the gradient.

CSR ``X``: two passes over its rows, one for the scores (gathering rows of
``W.T``), losses and loss gradients, one for the outer products (scattered
into rows of the gradient's transpose); see :func:`_csr_linear_loss_gradient`.

Both skip the outer products of the rows whose loss gradient is zero (for
sparsemax, every row whose prediction hits its target: often half of them).
Sums of products are reassociated (like BLAS), so results agree with the
NumPy path to rounding, not bit for bit; everything is accumulated in
float64, also for float32 ``X`` (read as it is, never copied).
"""

import numpy as np
from numba import njit

from ..losses._numba_kernels import (
    softmax_row_loss_grad,
    sparse_softmax_row_loss_grad,
    sparsemax_row_loss_grad,
)
from ..transforms._numba_kernels import _JIT, _JIT_INLINE, _row_max

# The dot products and outer products may be reassociated and fused
# (vectorised), as in BLAS; NaN and inf keep their IEEE meaning.
_BLAS_LIKE = dict(_JIT, fastmath={"reassoc", "contract"}, boundscheck=False)

# Rows per block: 4 rows x 2 classes of dot products share their loads.
_ROWS = 4


@njit(**_BLAS_LIKE)
def _dot_block(A, i0, lo, hi, B, Zb):
    """``Zb[r, k] = A[i0 + r, lo:hi] @ B[k, lo:hi]`` for the 4 rows ``r`` of a block."""
    K = B.shape[0]
    k = 0
    while k + 1 < K:
        s00 = s01 = s10 = s11 = s20 = s21 = s30 = s31 = 0.0
        for j in range(lo, hi):
            w0 = B[k, j]
            w1 = B[k + 1, j]
            x0 = A[i0, j]
            x1 = A[i0 + 1, j]
            x2 = A[i0 + 2, j]
            x3 = A[i0 + 3, j]
            s00 += x0 * w0
            s01 += x0 * w1
            s10 += x1 * w0
            s11 += x1 * w1
            s20 += x2 * w0
            s21 += x2 * w1
            s30 += x3 * w0
            s31 += x3 * w1
        Zb[0, k], Zb[0, k + 1] = s00, s01
        Zb[1, k], Zb[1, k + 1] = s10, s11
        Zb[2, k], Zb[2, k + 1] = s20, s21
        Zb[3, k], Zb[3, k + 1] = s30, s31
        k += 2
    if k < K:
        s0 = s1 = s2 = s3 = 0.0
        for j in range(lo, hi):
            w0 = B[k, j]
            s0 += A[i0, j] * w0
            s1 += A[i0 + 1, j] * w0
            s2 += A[i0 + 2, j] * w0
            s3 += A[i0 + 3, j] * w0
        Zb[0, k] = s0
        Zb[1, k] = s1
        Zb[2, k] = s2
        Zb[3, k] = s3


@njit(**_BLAS_LIKE)
def _dot_rows(A, i0, r, lo, hi, B, Zb):
    """``Zb[rr, k] = A[i0 + rr, lo:hi] @ B[k, lo:hi]`` for ``rr < r`` (a short block)."""
    K = B.shape[0]
    for rr in range(r):
        for k in range(K):
            s = 0.0
            for j in range(lo, hi):
                s += A[i0 + rr, j] * B[k, j]
            Zb[rr, k] = s


@njit(**_BLAS_LIKE)
def _add_outer_block(X, rows, Gp, d, grad_W):
    """``grad_W[:, :d] += Gp.T @ X[rows, :d]`` for 4 rows (2 classes at a time)."""
    K = grad_W.shape[0]
    a0, a1, a2, a3 = rows[0], rows[1], rows[2], rows[3]
    k = 0
    while k + 1 < K:
        g00, g10, g20, g30 = Gp[0, k], Gp[1, k], Gp[2, k], Gp[3, k]
        g01, g11, g21, g31 = Gp[0, k + 1], Gp[1, k + 1], Gp[2, k + 1], Gp[3, k + 1]
        for j in range(d):
            x0 = X[a0, j]
            x1 = X[a1, j]
            x2 = X[a2, j]
            x3 = X[a3, j]
            grad_W[k, j] += (g00 * x0 + g10 * x1) + (g20 * x2 + g30 * x3)
            grad_W[k + 1, j] += (g01 * x0 + g11 * x1) + (g21 * x2 + g31 * x3)
        k += 2
    if k < K:
        g0, g1, g2, g3 = Gp[0, k], Gp[1, k], Gp[2, k], Gp[3, k]
        for j in range(d):
            grad_W[k, j] += (g0 * X[a0, j] + g1 * X[a1, j]) + (
                g2 * X[a2, j] + g3 * X[a3, j]
            )


@njit(**_BLAS_LIKE)
def _add_outer_rows(X, rows, Gp, p, d, grad_W):
    """``grad_W[:, :d] += Gp[:p].T @ X[rows[:p], :d]`` for fewer than 4 rows."""
    K = grad_W.shape[0]
    for r in range(p):
        a = rows[r]
        for k in range(K):
            g = Gp[r, k]
            if g != 0:
                for j in range(d):
                    grad_W[k, j] += g * X[a, j]


#: The losses of the kernels (the ``loss`` argument of their inlined bodies).
SPARSEMAX, SOFTMAX, SPARSE_SOFTMAX = 0, 1, 2


@njit(**_JIT_INLINE)
def _scratch(n_rows, K, k):
    """The scratch arrays of :func:`_row_loss`, once per kernel call.

    ``zmax`` (float64, one entry per row of the score array), ``buf``
    (float64, K), ``tau`` (float64, 1), ``bval`` (float64, k) and ``bidx``
    (intp, k).
    """
    return (
        np.empty(n_rows, dtype=np.float64),
        np.empty(K, dtype=np.float64),
        np.empty(1, dtype=np.float64),
        np.empty(max(k, 1), dtype=np.float64),
        np.empty(max(k, 1), dtype=np.intp),
    )


@njit(**_JIT_INLINE)
def _row_loss(loss, Z, r, m, i, y, Q, half_sq, k, buf, tau, bval, bidx, out, o):
    """Loss of the scores ``Z[r]`` (maximum ``m``) of sample ``i``; ``p - q`` into ``out[o]``.

    The row kernel of ``loss`` (:mod:`sksparsemax.losses._numba_kernels`);
    ``out[o]`` may be ``Z[r]``.
    """
    use_indices = Q.shape[1] == 0
    if loss == SPARSEMAX:
        return sparsemax_row_loss_grad(Z, r, m, use_indices, y, Q, i, half_sq, buf, tau, out, o)
    if loss == SOFTMAX:
        return softmax_row_loss_grad(Z, r, m, use_indices, y, Q, i, out, o)
    return sparse_softmax_row_loss_grad(Z, r, m, use_indices, y, Q, i, k, bval, bidx, out, o)


@njit(**_JIT_INLINE)
def _linear_loss_gradient(
    loss, X, W, b, y, Q, half_sq, k, weights, scale, grad_W, grad_b
):
    """Weighted loss of ``Z = X @ W.T + b`` and its gradient in ``W, b``.

    Inlined into one kernel per loss (:func:`sparsemax_linear_loss_gradient`
    and the others), so that the loss branch is resolved at compile time.

    Parameters
    ----------
    loss : int
        :data:`SPARSEMAX` (the sparsemax loss), :data:`SOFTMAX` (softmax
        cross-entropy) or :data:`SPARSE_SOFTMAX` (the top-k loss), computed
        by the row kernels of :mod:`sksparsemax.losses._numba_kernels`.
    X : ndarray of shape (n, d), C-contiguous, float64 or float32
    W : ndarray of shape (K, d), C-contiguous float64
    b : ndarray of shape (K,), float64 (zeros without an intercept)
    y, Q, half_sq
        The target, as for
        :func:`sksparsemax.losses._numba_kernels.sparsemax_loss_grad_rows`
        (class indices ``y`` when ``Q`` has no columns, else ``Q``);
        ``half_sq`` is only read for the sparsemax loss.
    k : int
        The number of scores the top-k loss keeps (``1 <= k < K``); not read
        by the other losses.
    weights : ndarray of shape (n,) or (0,), float64
        Per-row weights (times ``scale``), or none (then every row has
        weight ``scale``).
    scale : float
    grad_W : ndarray of shape (K, d), float64
        ``sum_i c_i (p_i - q_i) x_i^T`` is added to it (``c_i`` the row
        weights): the caller fills it with the penalty's gradient first,
        which saves a pass over it.
    grad_b : ndarray of shape (K,), float64
        Overwritten with ``sum_i c_i (p_i - q_i)``.

    Returns
    -------
    value : float
        ``sum_i c_i loss_i``.
    bad_row : int
        -1, or the first row whose scores are invalid (NaN, ``+inf``, all
        ``-inf``); then the other results are meaningless and the caller
        raises the library's error (from the NumPy path).
    """
    n, d = X.shape
    K = W.shape[0]
    use_weights = weights.shape[0] > 0
    Zb = np.empty((_ROWS, K), dtype=np.float64)
    zmax, buf, tau, bval, bidx = _scratch(_ROWS, K, k)
    Gp = np.empty((_ROWS, K), dtype=np.float64)  # pending rows' c_i (p_i - q_i)
    rows = np.empty(_ROWS, dtype=np.int64)
    pending = 0
    grad_b[:] = 0.0
    total = 0.0
    for i0 in range(0, n, _ROWS):
        r = min(_ROWS, n - i0)
        if r == _ROWS:
            _dot_block(X, i0, 0, d, W, Zb)
        else:
            _dot_rows(X, i0, r, 0, d, W, Zb)
        for rr in range(r):
            i = i0 + rr
            for j in range(K):
                Zb[rr, j] += b[j]
            c = weights[i] * scale if use_weights else scale
            m, ok = _row_max(Zb, rr, zmax)
            if not ok:
                return np.nan, i
            value = _row_loss(
                loss, Zb, rr, m, i, y, Q, half_sq, k, buf, tau, bval, bidx, Gp, pending
            )
            total += c * value
            # c (p - q), its sum, and whether it is zero (written out here:
            # as an inlined helper, measured 7% slower on scene).
            nonzero = False
            for j in range(K):
                g = c * Gp[pending, j]
                Gp[pending, j] = g
                grad_b[j] += g
                nonzero |= g != 0
            if nonzero:
                rows[pending] = i
                pending += 1
                if pending == _ROWS:
                    _add_outer_block(X, rows, Gp, d, grad_W)
                    pending = 0
    if pending:
        _add_outer_rows(X, rows, Gp, pending, d, grad_W)
    return total, -1


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
def _csr_linear_loss_gradient(
    loss, data, indices, indptr, Wt, b, y, Q, half_sq, k, weights, scale, grad_Wt, grad_b
):
    """:func:`_linear_loss_gradient` for CSR ``X`` (two passes over its rows).

    ``X`` is given by its CSR arrays ``data, indices, indptr``; the weights
    and their gradient are transposed: ``Wt`` and ``grad_Wt`` have shape
    (d, K), so that the entries of a feature are contiguous. The first pass
    computes each row's scores (gathering rows of ``Wt``), loss and loss
    gradient, and notes the rows whose loss gradient is not zero; the second
    adds their outer products into ``grad_Wt``. Fused into one pass, the
    gather from ``Wt`` and the scatter into ``grad_Wt`` compete for the
    cache (measured no faster than scipy's two products); apart, each streams
    through one of them, and the second skips the rows that hit their target
    (sparsemax: about a quarter of the text benchmark's rows late in a
    fit). Returns ``(value, bad_row)`` like :func:`_linear_loss_gradient`.
    """
    n = indptr.shape[0] - 1
    K = Wt.shape[1]
    use_weights = weights.shape[0] > 0
    G = np.empty((n, K), dtype=np.float64)  # scores, then c_i (p_i - q_i)
    zmax, buf, tau, bval, bidx = _scratch(n, K, k)
    rows = np.empty(n, dtype=np.int64)
    n_rows = 0
    grad_b[:] = 0.0
    total = 0.0
    for i in range(n):
        _csr_row_scores(data, indices, indptr[i], indptr[i + 1], Wt, b, G, i)
        m, ok = _row_max(G, i, zmax)
        if not ok:
            return np.nan, i
        value = _row_loss(loss, G, i, m, i, y, Q, half_sq, k, buf, tau, bval, bidx, G, i)
        c = weights[i] * scale if use_weights else scale
        total += c * value
        nonzero = False
        for j in range(K):
            g = c * G[i, j]
            G[i, j] = g
            grad_b[j] += g
            nonzero |= g != 0
        if nonzero:
            rows[n_rows] = i
            n_rows += 1
    _csr_add_outer(data, indices, indptr, G, rows, n_rows, grad_Wt)
    return total, -1


# One compiled kernel per loss and layout of X (the loss branch resolved at
# compile time: a run-time switch cost 15%). Dense X: (X, W, b, y, Q, half_sq,
# k, weights, scale, grad_W, grad_b); CSR X: its arrays (data, indices,
# indptr) instead of X, and W.T, grad_W.T, both of shape (d, K).


@njit(**_JIT)
def sparsemax_linear_loss_gradient(X, W, b, y, Q, half_sq, k, weights, scale, grad_W, grad_b):
    """:func:`_linear_loss_gradient` for the sparsemax loss."""
    return _linear_loss_gradient(
        SPARSEMAX, X, W, b, y, Q, half_sq, k, weights, scale, grad_W, grad_b
    )


@njit(**_JIT)
def softmax_linear_loss_gradient(X, W, b, y, Q, half_sq, k, weights, scale, grad_W, grad_b):
    """:func:`_linear_loss_gradient` for the softmax loss."""
    return _linear_loss_gradient(
        SOFTMAX, X, W, b, y, Q, half_sq, k, weights, scale, grad_W, grad_b
    )


@njit(**_JIT)
def sparse_softmax_linear_loss_gradient(
    X, W, b, y, Q, half_sq, k, weights, scale, grad_W, grad_b
):
    """:func:`_linear_loss_gradient` for the top-k loss (``k < K``)."""
    return _linear_loss_gradient(
        SPARSE_SOFTMAX, X, W, b, y, Q, half_sq, k, weights, scale, grad_W, grad_b
    )


@njit(**_JIT)
def sparsemax_csr_linear_loss_gradient(
    data, indices, indptr, Wt, b, y, Q, half_sq, k, weights, scale, grad_Wt, grad_b
):
    """:func:`_csr_linear_loss_gradient` for the sparsemax loss."""
    return _csr_linear_loss_gradient(
        SPARSEMAX, data, indices, indptr, Wt, b, y, Q, half_sq, k, weights, scale,
        grad_Wt, grad_b,
    )


@njit(**_JIT)
def softmax_csr_linear_loss_gradient(
    data, indices, indptr, Wt, b, y, Q, half_sq, k, weights, scale, grad_Wt, grad_b
):
    """:func:`_csr_linear_loss_gradient` for the softmax loss."""
    return _csr_linear_loss_gradient(
        SOFTMAX, data, indices, indptr, Wt, b, y, Q, half_sq, k, weights, scale,
        grad_Wt, grad_b,
    )


@njit(**_JIT)
def sparse_softmax_csr_linear_loss_gradient(
    data, indices, indptr, Wt, b, y, Q, half_sq, k, weights, scale, grad_Wt, grad_b
):
    """:func:`_csr_linear_loss_gradient` for the top-k loss (``k < K``)."""
    return _csr_linear_loss_gradient(
        SPARSE_SOFTMAX, data, indices, indptr, Wt, b, y, Q, half_sq, k, weights, scale,
        grad_Wt, grad_b,
    )


@njit(**_JIT)
def times_lower(V, T, out):
    """``out = V @ T`` for a lower triangular ``T`` (d, d), skipping its zeros.

    ``V`` and ``out`` have shape (K, d). With the transposed product
    (:func:`times_lower_transposed`), the two products per evaluation of a
    whitening change of variables (:class:`._preconditioner.GramPreconditioner`,
    ``T`` the inverse Cholesky factor): with ``V`` of a few rows, BLAS runs
    them far below its peak, and it does not skip the zeros.
    """
    d = T.shape[0]
    K = V.shape[0]
    Vb = np.empty((_ROWS, K), dtype=np.float64)
    rows = np.empty(_ROWS, dtype=np.int64)
    out[:, :] = 0.0
    for r0 in range(0, d, _ROWS):
        r = min(_ROWS, d - r0)
        for rr in range(r):  # out += V[:, r0 + rr] T[r0 + rr, :r0 + r]
            rows[rr] = r0 + rr
            for k in range(K):
                Vb[rr, k] = V[k, r0 + rr]
        if r == _ROWS:
            _add_outer_block(T, rows, Vb, r0 + r, out)
        else:
            _add_outer_rows(T, rows, Vb, r, r0 + r, out)


@njit(**_JIT)
def times_lower_transposed(R, T, out):
    """``out = R @ T.T`` for a lower triangular ``T`` (d, d), skipping its zeros.

    ``R`` and ``out`` have shape (K, d); see :func:`times_lower`.
    """
    d = T.shape[0]
    K = R.shape[0]
    Zb = np.empty((_ROWS, K), dtype=np.float64)
    for r0 in range(0, d, _ROWS):
        r = min(_ROWS, d - r0)
        if r == _ROWS:
            _dot_block(T, r0, 0, r0 + r, R, Zb)
        else:
            _dot_rows(T, r0, r, 0, r0 + r, R, Zb)
        for rr in range(r):
            for k in range(K):
                out[k, r0 + rr] = Zb[rr, k]
