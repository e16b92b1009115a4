"""Softmax, the dense reference mapping."""

import numpy as np

from . import _array_api as _xp
from ._validation import as_float_array, checked_row_max, from_rows, pair_to_rows, to_rows


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
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    jv : ndarray or Array API array
        Same shape as ``p``.

    Examples
    --------
    >>> from sksparsemax.transforms import softmax, softmax_jvp
    >>> softmax_jvp(softmax([0.0, 0.0]), [1.0, 0.0])
    array([ 0.25, -0.25])
    """
    if _xp.any_foreign(p, v):
        return _xp.softmax_jvp(p, v, axis)
    P, V, shape, axis = pair_to_rows(p, v, axis)
    PV = P * V
    PV -= P * PV.sum(axis=1, keepdims=True)
    return from_rows(PV, shape, axis)
