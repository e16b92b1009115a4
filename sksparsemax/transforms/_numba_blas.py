"""Small dense products, blocked like BLAS, for few rows or few columns (numba).

BLAS runs a product with a handful of rows or columns far below its peak (a
GEMM with 6 columns costs as much as 6 matrix-vector products). These
kernels block 4 rows by 2 columns in registers instead. They serve the
losses' compiled drivers (``X @ W.T`` and ``G.T @ X`` for few classes) and
the whitening of the linear models (products with a triangular matrix,
skipping its zero half); the latter reach them through
:func:`._backend.kernels`, like the mappings' kernels.
"""

import numpy as np
from numba import njit

from ._numba_rows import _JIT

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


@njit(**_BLAS_LIKE)
def _add_class_outer(X, rows, g, p, d, grad_W, k):
    """``grad_W[k, :d] += g[:p] @ X[rows[:p], :d]``: one class, ``p <= 4`` rows.

    The outer products of rows whose loss gradient has few nonzero classes
    (the sparse mappings' supports), queued per class: each class's row of
    ``grad_W`` is read and written once per 4 rows, and the zero entries of
    the gradient cost nothing.
    """
    if p == 4:
        a0, a1, a2, a3 = rows[0], rows[1], rows[2], rows[3]
        g0, g1, g2, g3 = g[0], g[1], g[2], g[3]
        for j in range(d):
            grad_W[k, j] += (g0 * X[a0, j] + g1 * X[a1, j]) + (g2 * X[a2, j] + g3 * X[a3, j])
    else:
        for r in range(p):
            a = rows[r]
            gr = g[r]
            for j in range(d):
                grad_W[k, j] += gr * X[a, j]


@njit(**_JIT)
def times_lower(V, T, out):
    """``out = V @ T`` for a lower triangular ``T`` (d, d), skipping its zeros.

    ``V`` and ``out`` have shape (K, d). With the transposed product
    (:func:`times_lower_transposed`), the two products per evaluation of a
    whitening change of variables (``GramPreconditioner`` of the linear models,
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
