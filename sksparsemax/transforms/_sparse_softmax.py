"""Top-k sparse-softmax (Sun et al., 2021)."""

import numpy as np

from .._checks import check_k
from . import _array_api as _xp
from . import _backend
from ._softmax import softmax, softmax_jvp
from ._validation import as_float_array, checked_row_max, compiled_rows, from_rows, to_rows


def top_k_mask(Z, k):
    """Boolean mask of the ``k`` largest entries of each row of ``Z`` (n, K).

    Ties at the k-th largest value are broken deterministically: among equal
    scores the lowest index wins. Requires ``1 <= k < K``.
    """
    K = Z.shape[1]
    kth = np.partition(Z, K - k, axis=1)[:, K - k : K - k + 1]
    mask = Z > kth
    missing = k - np.count_nonzero(mask, axis=1, keepdims=True)
    ties = Z == kth
    # Keep the first `missing` tied entries of each row (lowest index wins).
    mask |= ties & (np.cumsum(ties, axis=1) <= missing)
    return mask


def sparse_softmax(z, k, axis=-1):
    r"""Top-k sparse-softmax: softmax over the k largest scores, 0 elsewhere.

    With :math:`\Omega_k(z)` the indices of the :math:`k` largest scores,

    .. math::

        p_i = \frac{\exp(z_i)}{\sum_{j \in \Omega_k(z)} \exp(z_j)}
        \ \text{ if } i \in \Omega_k(z), \qquad p_i = 0 \text{ otherwise.}

    Ties at the k-th largest score are broken deterministically: among equal
    scores the entry with the lowest index is kept. ``k >= K`` is plain
    :func:`softmax`.

    Parameters
    ----------
    z : array_like
        Scores (float32 kept, integers become float64; ``-inf`` entries are
        masks).
        A NumPy masked array is read with its masked entries as ``-inf``
        (masked classes get probability exactly 0; the result is a plain
        ndarray). A ``scipy.sparse`` matrix is refused with a ``TypeError``:
        densify it with ``z.toarray()``.
    k : int
        Number of entries kept, ``k >= 1``.
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    p : ndarray or Array API array
        Same shape and floating dtype as ``z``; each slice has at most ``k``
        nonzero entries (exactly ``min(k, K)`` when the scores are finite and
        within ~700 of each other, beyond which ``exp`` underflows).

    Raises
    ------
    ValueError
        If ``k < 1``; if a slice contains NaN or ``+inf`` or is all ``-inf``.
    TypeError
        If ``k`` is not an integer, or ``z`` is a ``scipy.sparse`` matrix.

    See Also
    --------
    softmax, sparsemax, sparse_softmax_jvp

    References
    ----------
    .. [1] J. Sun, Z. Yang, Y. Lu, J. Su and Y. Zhang, "Sparse-softmax: A
       Simpler and Faster Alternative Softmax Transformation",
       arXiv:2112.12433, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.transforms import sparse_softmax
    >>> sparse_softmax([np.log(3.0), 0.0, -1.0], k=2)
    array([0.75, 0.25, 0.  ])
    >>> sparse_softmax([1.0, 1.0, 1.0], k=2)  # tie: lowest indices win
    array([0.5, 0.5, 0. ])
    """
    k = check_k(k)
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xp.sparse_softmax(z, k, axis)
    z = as_float_array(z)
    Z, shape, axis_ = to_rows(z, axis)
    if k >= Z.shape[1]:
        return softmax(z, axis=axis)
    kern = _backend.kernels()
    if kern is not None:
        return from_rows(compiled_rows(kern.sparse_softmax_rows, Z, shape, k), shape, axis_)
    zmax = checked_row_max(Z, shape)
    mask = top_k_mask(Z, k)
    with np.errstate(over="ignore"):
        P = Z - zmax
    np.exp(P, out=P, where=mask)
    P[~mask] = 0
    P /= P.sum(axis=1, keepdims=True)
    return from_rows(P, shape, axis_)


def sparse_softmax_jvp(p, v, axis=-1):
    r"""Jacobian-vector product of top-k sparse-softmax, from its output.

    Away from ties at the k-th score the top-k set is locally constant and the
    Jacobian is the softmax Jacobian restricted to it:

    .. math:: J v = p \odot v - p\,(p^\top v),

    which is zero outside the support because :math:`p_i = 0` there. It is
    symmetric, so this is also the vector-Jacobian product.

    Parameters
    ----------
    p : array_like
        Output of :func:`sparse_softmax`.
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
    >>> from sksparsemax.transforms import sparse_softmax_jvp
    >>> sparse_softmax_jvp([0.5, 0.5, 0.0], [1.0, 0.0, 7.0])
    array([ 0.25, -0.25,  0.  ])
    """
    return softmax_jvp(p, v, axis=axis)
