"""Compiled fused loss kernels for the optional numba backend.

Imported lazily (by :func:`fused_kernels`) only when the numba backend is in
effect. A solver calls ``loss_gradient`` once per iteration; the NumPy path
makes half a dozen passes over the (n, K) scores (row maxima, shift,
threshold, mapping, squared norms, target terms). The kernels here make one
pass per row: row maximum (with the library's invalid-row check), threshold,
loss value and gradient, with the same arithmetic as the NumPy path (shifted
scores, ``phi = tau + ||p||^2 / 2``), so both agree to rounding (sums are
accumulated in float64 here).

Like the mapping kernels of :mod:`sksparsemax.transforms._numba_kernels`,
they return the first invalid row (NaN, ``+inf``, all ``-inf``) or -1 and store
the row maxima in ``zmax``, so that the caller raises the library's error. All
rows are checked before any is written: on invalid scores ``out`` (which may be
the scores themselves) is left untouched.
"""

import numpy as np
from numba import njit

from ..transforms._numba_kernels import (
    _JIT,
    _JIT_INLINE,
    _row_max,
    sparsemax_row_threshold,
    top_k_row,
)


@njit(**_JIT)
def _first_invalid_row(Z, zmax):
    """Store every row maximum in ``zmax``; the first invalid row, or -1."""
    for i in range(Z.shape[0]):
        _, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
    return -1


@njit(**_JIT_INLINE)
def _target_dot(Z, i, m, use_indices, y, Q, qi):
    """``q^T (z - m)`` of row ``i`` of ``Z`` with the target row ``y[qi]`` or
    ``Q[qi]``; a ``-inf`` score counts 0 where ``q = 0``."""
    if use_indices:
        return Z[i, y[qi]] - m
    qz = 0.0
    for j in range(Z.shape[1]):
        q = Q[qi, j]
        if q != 0:
            qz += q * (Z[i, j] - m)
    return qz


@njit(**_JIT_INLINE)
def sparsemax_row_loss_grad(Z, i, m, use_indices, y, Q, qi, half_sq, buf, tau, out, oi):
    """Sparsemax loss of row ``i`` of ``Z`` (maximum ``m``); ``p - q`` into ``out[oi]``.

    The target row is ``y[qi]`` (class indices, ``use_indices``) or
    ``Q[qi]``, with ``half_sq[qi]`` (or ``half_sq[0]``) its ``||q||^2 / 2``;
    ``buf`` is float64 scratch of length K and ``tau`` a one-entry array of
    the dtype of ``Z`` (the threshold is rounded to it, as in the NumPy
    path). ``out[oi]`` may be ``Z[i]`` itself: each entry is read before it
    is written. Returns the loss (float64).
    """
    K = Z.shape[1]
    t, _ = sparsemax_row_threshold(Z, i, m, buf)
    tau[0] = t
    tt = tau[0]
    qz = _target_dot(Z, i, m, use_indices, y, Q, qi)
    half = half_sq[0] if use_indices else half_sq[qi]
    sq = 0.0
    for j in range(K):
        p = (Z[i, j] - m) - tt
        p = p if p > 0 else 0
        sq += p * p
        out[oi, j] = p if use_indices else p - Q[qi, j]
    if use_indices:
        out[oi, y[qi]] -= 1
    return (tt + 0.5 * sq) - qz + half


@njit(**_JIT_INLINE)
def softmax_row_loss_grad(Z, i, m, use_indices, y, Q, qi, out, oi):
    """Softmax cross-entropy of row ``i`` of ``Z`` (maximum ``m``); ``p - q`` into ``out[oi]``.

    ``log sum exp(z - m) - q^T (z - m)`` with the target row ``y[qi]`` or
    ``Q[qi]`` (see :func:`sparsemax_row_loss_grad`; a ``-inf`` score counts
    0 in ``q^T z`` where ``q = 0``), the same arithmetic as the NumPy path.
    ``out[oi]`` may be ``Z[i]`` itself. Returns the loss (float64).
    """
    K = Z.shape[1]
    qz = _target_dot(Z, i, m, use_indices, y, Q, qi)
    s = 0.0
    for j in range(K):
        e = np.exp(Z[i, j] - m)
        out[oi, j] = e
        s += e
    for j in range(K):
        p = out[oi, j] / s
        out[oi, j] = p if use_indices else p - Q[qi, j]
    if use_indices:
        out[oi, y[qi]] -= 1
    return np.log(s) - qz


@njit(**_JIT_INLINE)
def sparse_softmax_row_loss_grad(Z, i, m, use_indices, y, Q, qi, k, bval, bidx, out, oi):
    """Top-k loss of row ``i`` of ``Z`` (maximum ``m``, ``k < K``); ``p - q`` into ``out[oi]``.

    ``log sum_{top k} exp(z - m) - q^T (z - m)`` with the target row
    ``y[qi]`` or ``Q[qi]`` (see :func:`softmax_row_loss_grad`) and ``p`` the
    top-k softmax (among equal scores at the k-th place the lowest indices
    are kept, as in :func:`~sksparsemax.transforms.sparse_softmax`);
    ``bval`` (float64) and ``bidx`` (intp) are scratch of length ``k``.
    ``out[oi]`` may be ``Z[i]`` itself. Returns the loss (float64).
    """
    K = Z.shape[1]
    qz = _target_dot(Z, i, m, use_indices, y, Q, qi)
    top_k_row(Z, i, k, bval, bidx)  # the row was checked for NaN by the caller
    s = 0.0
    for p in range(k):
        e = np.exp(bval[p] - m)
        bval[p] = e
        s += e
    for j in range(K):
        out[oi, j] = 0 if use_indices else -Q[qi, j]
    for p in range(k):
        out[oi, bidx[p]] += bval[p] / s
    if use_indices:
        out[oi, y[qi]] -= 1
    return np.log(s) - qz


@njit(**_JIT)
def sparsemax_loss_grad_rows(Z, y, Q, half_sq, out, losses, zmax):
    """Sparsemax loss and gradient of every row, one pass per row.

    The target is the class indices ``y`` when ``Q`` has no columns, else
    the distributions ``Q`` (then ``y`` is ignored); ``half_sq`` holds
    ``||q||^2 / 2`` per row (one entry, 1/2, for class indices). Writes

    ``losses[i] = tau + ||p||^2 / 2 - q^T (z - max z) + half_sq[i]`` and
    ``out[i] = p - q``,

    where a ``-inf`` score counts 0 in ``q^T z`` where ``q = 0`` and makes
    the loss ``+inf`` where ``q > 0``. ``out`` may be ``Z`` itself (each row
    is read before it is overwritten).
    """
    n, K = Z.shape
    use_indices = Q.shape[1] == 0
    buf = np.empty(K, dtype=np.float64)
    tau = np.empty(1, dtype=Z.dtype)
    bad = _first_invalid_row(Z, zmax)
    if bad >= 0:
        return bad
    for i in range(n):
        losses[i] = sparsemax_row_loss_grad(
            Z, i, zmax[i], use_indices, y, Q, i, half_sq, buf, tau, out, i
        )
    return -1
