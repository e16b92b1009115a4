"""Softmax, the dense reference mapping."""

import numpy as np

from . import _array_api as _xp
from ._validation import (
    as_float_array,
    checked_row_max,
    from_rows,
    pair_to_rows,
    raise_bad_pair,
    to_rows,
)


def softmax(z, axis=-1):
    r"""Numerically stable softmax along an axis.

    .. math::

        \operatorname{softmax}(z)_i = \frac{\exp(z_i - \max_j z_j)}
                                         {\sum_k \exp(z_k - \max_j z_j)}

    Parameters
    ----------
    z : array_like
        Scores. float32 stays float32, float64 stays float64, integers become
        float64. ``-inf`` entries are masks and get probability exactly 0.
        A NumPy masked array is read with its masked entries as ``-inf``
        (masked classes get probability exactly 0; the result is a plain
        ndarray). A ``scipy.sparse`` matrix is refused with a ``TypeError``:
        densify it with ``z.toarray()``.
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    p : ndarray or Array API array
        Same shape and floating dtype as ``z``; every slice along ``axis``
        lies on the probability simplex.

    Raises
    ------
    ValueError
        If a slice contains NaN or ``+inf``, or has every entry ``-inf``.
    TypeError
        If ``z`` is not real-valued, or is a ``scipy.sparse`` matrix.

    See Also
    --------
    sparsemax, sparse_softmax, entmax15, entmax_bisect

    Examples
    --------
    >>> from sksparsemax.transforms import softmax
    >>> softmax([0.0, 0.0, float("-inf")])
    array([0.5, 0.5, 0. ])
    """
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xp.softmax(z, axis)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    zmax = checked_row_max(Z, shape)
    with np.errstate(over="ignore"):  # finite - max may overflow to -inf: a mask
        P = Z - zmax
    np.exp(P, out=P)
    P /= P.sum(axis=1, keepdims=True)
    return from_rows(P, shape, axis)


def softmax_jvp(p, v, axis=-1):
    r"""Jacobian-vector product of softmax, computed from its output.

    .. math:: J v = p \odot v - p\,(p^\top v)

    The Jacobian is symmetric, so this is also the vector-Jacobian product.

    Parameters
    ----------
    p : array_like
        Output of :func:`softmax` (or of :func:`sparse_softmax`).
    v : array_like
        Tangent vectors, same shape as ``p``.
        Masked entries of a NumPy masked array ``p`` or ``v`` count as 0
        (for ``p``, the probability a masked class gets).
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    jv : ndarray or Array API array
        Same shape as ``p``.

    Raises
    ------
    ValueError
        If ``p`` has a NaN, infinite or negative entry, or ``v`` a NaN or
        infinite entry (the message names the first offending slice), or if
        the shapes differ.
    TypeError
        If ``p`` or ``v`` is a ``scipy.sparse`` matrix (densify it with
        ``.toarray()``).

    Examples
    --------
    >>> from sksparsemax.transforms import softmax, softmax_jvp
    >>> softmax_jvp(softmax([0.0, 0.0]), [1.0, 0.0])
    array([ 0.25, -0.25])
    """
    if _xp.any_foreign(p, v):
        return _xp.softmax_jvp(p, v, axis)
    P, V, shape, axis = pair_to_rows(p, v, axis, check=False)
    with np.errstate(over="ignore", invalid="ignore"):
        PV = P * V
        total = PV.sum(axis=1, keepdims=True)
    # the row sums are finite unless P or V holds NaN or an infinity (0 * inf
    # is NaN): only the sign of P needs one more reduction
    if not (np.isfinite(total).all() and P.min(initial=0.0) >= 0):
        raise_bad_pair(P, V, shape)  # nothing raised if a sum merely overflowed
    PV -= P * total
    return from_rows(PV, shape, axis)
