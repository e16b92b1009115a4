"""Top-k sparse-softmax (Sun et al., 2021)."""

import numpy as np

from .._checks import check_k
from . import _array_api as _xp
from . import _backend
from ._softmax import softmax, softmax_jvp
from ._blocks import (
    DENSE_BLOCK,
    block_candidates,
    checked_block_max,
    flat_segments,
    group_maxima,
    map_rows,
    row_blocks,
    row_max,
)
from ._validation import as_float_array, compiled_rows, from_rows, to_rows


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


#: Entries per row block of the flat path.
_BLOCK = DENSE_BLOCK


def _column_ranks(UT, R, C):
    """Rank of every entry of each column of ``UT`` (K, b) in its column.

    ``R`` (K, b) int8 receives the ranks: the number of entries of the column
    that are larger, plus the number of equal ones at a lower index, so the
    ranks of a column are 0, ..., K - 1 and ``R < k`` keeps exactly ``k``
    entries (ties at the k-th value: lowest index first). One comparison per
    pair of entries, along contiguous rows of ``UT`` (entry i against all
    the later ones at once); ``C`` is a boolean scratch of shape (K - 1, b).
    """
    K = UT.shape[0]
    R[:] = np.arange(K - 1, -1, -1, dtype=R.dtype)[:, None]
    for i in range(K - 1):
        Ci = C[: K - 1 - i]
        np.greater_equal(UT[i], UT[i + 1 :], out=Ci)
        R[i + 1 :] += Ci
        R[i] -= np.add.reduce(Ci, axis=0, dtype=R.dtype)


def _dense_block(UT, zmax, k, Pb, scratch):
    """Top-k sparse-softmax of a block of narrow rows, transposed in ``UT`` (K, b), into ``Pb``.

    The top k of each row come from :func:`_column_ranks`, and its softmax
    is taken over them (in place in ``UT``, the memory of ``scratch[0]``).
    """
    K, b = UT.shape
    R = scratch[1][: b * K].reshape(K, b)
    _column_ranks(UT, R, scratch[2][: b * (K - 1)].reshape(K - 1, b))
    with np.errstate(over="ignore"):  # finite - max may overflow to -inf
        np.subtract(UT, zmax, out=UT)
    np.exp(UT, out=UT)
    UT *= R < k
    np.divide(UT, np.add.reduce(UT, axis=0), out=Pb.T)


def _kth_lower_bound(Zb, k):
    """Row maxima and a lower bound of the k-th largest entry of each row.

    The group maxima of at least ``2 k`` groups of columns
    (:func:`._blocks.group_maxima`) are distinct entries of the row, so
    their k-th largest is at most the row's k-th largest. One pass over the
    block, which also gives the row maxima, and a partition of the few
    group maxima.
    """
    G = group_maxima(Zb, 2 * k)
    w = G.shape[1]
    return row_max(G), np.partition(G, w - k, axis=1)[:, w - k]


def _flat_rows(Z, shape, k, out):
    """Top-k sparse-softmax of the wide rows ``Z`` into the zero array ``out``.

    Candidates: the entries at least :func:`_kth_lower_bound` (a few per
    row, at least k). Their k-th largest per row comes from a partition of
    the candidates padded with ``-inf``; ties at it are resolved by a
    running count along each row's candidates (lowest index first), which
    leaves exactly k per row, in row order.
    """
    n, K = Z.shape
    zmax = np.empty(n, Z.dtype)
    found = []
    for start, stop in row_blocks(n, K, _BLOCK):
        Zb = Z[start:stop]
        m, lower = _kth_lower_bound(Zb, k)
        zmax[start:stop] = checked_block_max(Z, start, Zb, shape, m=m)
        found.append(block_candidates(Zb, lower, start * K))
    idx, starts, counts = flat_segments(found, n, K)
    vals = Z.reshape(-1).take(idx)
    width = int(counts.max())
    C = np.full((n, width), -np.inf, Z.dtype)
    C.reshape(-1)[np.arange(idx.size) + np.repeat(np.arange(0, n * width, width) - starts, counts)] = vals
    kth = np.repeat(np.partition(C, width - k, axis=1)[:, width - k], counts)
    above = vals > kth
    tie = vals == kth
    missing = k - np.add.reduceat(above, starts, dtype=np.intp)
    rank = np.cumsum(tie, dtype=np.intp)
    rank -= np.repeat(rank[starts] - tie[starts], counts)
    above |= tie & (rank <= np.repeat(missing, counts))
    P = vals[above].reshape(n, k)
    with np.errstate(over="ignore"):
        P -= zmax[:, None]
    np.exp(P, out=P)
    P /= np.add.reduce(P, axis=1)[:, None]
    out.reshape(-1)[idx[above]] = P.reshape(-1)


def _sparse_softmax_rows(Z, shape, k):
    """Top-k sparse-softmax (``k < K``) of the rows ``Z`` (n, K), NumPy path."""
    return map_rows(Z, shape, "z", lambda Zf, out: _flat_rows(Zf, shape, k, out),
                    lambda UT, zmax, Pb, scratch: _dense_block(UT, zmax, k, Pb, scratch),
                    (Z.dtype, np.int8, bool))


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
    return from_rows(_sparse_softmax_rows(Z, shape, k), shape, axis_)


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
