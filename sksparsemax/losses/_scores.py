"""Score matrices as every loss reads them: checked, shifted, dotted with targets."""

import numpy as np

from ..transforms import backend
from ..transforms._validation import as_float_array, checked_row_max
from . import _compiled
from ._targets import resolve_target


def check_scores(Z):
    """``Z`` as a float array (float32 kept), checked to be 2-D with a column.

    Only the shape: the values (NaN, ``+inf``, rows of ``-inf``) are checked
    where the row maxima are taken, once per evaluation.
    """
    Z = as_float_array(Z, "Z")
    if Z.ndim != 2:
        raise ValueError(
            "Z must be a 2-D array of scores of shape (n_samples, n_classes); "
            f"got shape {Z.shape}."
        )
    if Z.shape[1] == 0:
        raise ValueError("Z has 0 columns: a loss needs at least one class.")
    return Z


def shifted_scores(Z):
    """Validate a score matrix and shift each row so that its maximum is 0.

    Every loss is invariant to adding a constant to a row (targets sum to
    1), so all computations use the shifted scores: huge scores lose no
    precision and ``exp`` never overflows.

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores: finite or ``-inf`` (masked classes).

    Returns
    -------
    Zs : ndarray of shape (n_samples, n_classes)
        ``Z - Z.max(axis=1, keepdims=True)``, float32 if ``Z`` is float32,
        float64 otherwise (a new array).
    """
    Z = check_scores(Z)
    zmax = checked_row_max(Z, Z.shape, "Z")
    with np.errstate(over="ignore"):  # finite - max may overflow to -inf: a mask
        return Z - zmax


def masked_rowdot(A, Zs, mask=None):
    """Row-wise ``sum_j A[i, j] * Zs[i, j]`` over ``mask`` (all entries if None).

    Entries outside ``mask`` (where ``A`` is 0 and ``Zs`` may be ``-inf``)
    contribute exactly 0 instead of ``0 * -inf = nan``.
    """
    if mask is not None:
        Zs = np.where(mask, Zs, 0)
    return np.einsum("ij,ij->i", A, Zs)


def target_dot(target, Zs):
    """Row-wise ``q^T z`` of the shifted scores; ``-inf`` scores count 0 where ``q = 0``."""
    n = Zs.shape[0]
    if target.is_indices:
        return Zs[np.arange(n), target.indices]
    Q = target.proba_as(Zs.dtype)
    qz = np.einsum("ij,ij->i", Q, Zs)
    bad = ~np.isfinite(qz)
    if bad.any():  # -inf masks where q = 0: 0 * -inf must count as 0
        mask = target.positive()[0]
        qz[bad] = masked_rowdot(Q[bad], Zs[bad], mask[bad])
    return qz


def subtract_target(P, target):
    """``P -= q`` in place (no one-hot matrix for class indices)."""
    if target.is_indices:
        P[np.arange(P.shape[0]), target.indices] -= 1
    else:
        P -= target.proba_as(P.dtype)


def check_out(out, Z):
    """Check the ``out`` buffer of ``loss_gradient`` against the scores ``Z``."""
    if not isinstance(out, np.ndarray) or out.shape != Z.shape or out.dtype != Z.dtype:
        raise ValueError(
            f"out must be an ndarray of shape {Z.shape} and dtype {Z.dtype} "
            "(the scores' shape and floating dtype)."
        )
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("out must be a writeable C-contiguous array.")


def evaluate(loss, Z, target, check, need_loss, need_grad, out=None):
    """Per-sample losses (or None) and gradients of ``loss``; into ``out`` if given.

    The one evaluation path of every loss: check the scores, resolve the
    target, then the loss's compiled kernel (``out`` given, numba backend) or
    its shifted scores, ``_conjugate`` and ``_target_term``.
    """
    Z = check_scores(Z)
    n, K = Z.shape
    target = loss._map_target(resolve_target(target, n, K, check), Z)
    if out is not None:
        check_out(out, Z)
        compiled = loss.compiled(K)
        if compiled is not None and compiled.applies_to_rows(Z):
            return compiled.rows(Z, target, out)
    if Z.size < _compiled.MIN_ROWS_ENTRIES:
        # Too few scores for the compiled kernels, the mappings' included:
        # the NumPy path, so that evaluations on small data (a small fit)
        # compile nothing.
        with backend("numpy"):
            return _evaluate_by_conjugate(loss, Z, target, need_loss, need_grad, out)
    return _evaluate_by_conjugate(loss, Z, target, need_loss, need_grad, out)


def _evaluate_by_conjugate(loss, Z, target, need_loss, need_grad, out):
    """:func:`evaluate` by the loss's shifted scores, ``_conjugate`` and ``_target_term``."""
    if out is not None:
        zmax = checked_row_max(Z, Z.shape, "Z")
        with np.errstate(over="ignore"):  # finite - max may overflow to -inf
            Zs = np.subtract(Z, zmax, out=out)
        del zmax
        qz = target_dot(target, Zs)  # before Zs is overwritten by P
        phi = loss._conjugate_inplace(Zs)
        P = Zs
    else:
        Zs = shifted_scores(Z)
        phi, P = loss._conjugate(Zs, need_value=need_loss)
        qz = target_dot(target, Zs) if need_loss else None
    losses = None
    if need_loss:
        term = np.asarray(loss._target_term(target), dtype=P.dtype)
        with np.errstate(over="ignore"):
            losses = phi - qz
        losses += term
    if need_grad:
        subtract_target(P, target)
    return losses, P
