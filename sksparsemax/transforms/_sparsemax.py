"""Sparsemax: the Euclidean projection onto the probability simplex."""

import numpy as np

from . import _array_api as _xp
from . import _backend
from ._blocks import (
    DENSE_BLOCK,
    DENSE_K,
    block_candidates,
    checked_block_max,
    flat_segments,
    half_maxima_low,
    map_rows,
    padded_buckets,
    row_blocks,
)
from ._validation import (
    as_float_array,
    batch_from_rows,
    from_rows,
    pair_to_rows,
    raise_invalid_row,
    to_rows,
)


def _sparsemax_compiled(kern, Z, shape, name, write_out):
    """Sparsemax of the rows ``Z`` by the compiled kernel (numba backend).

    Returns ``(P, zmax, tau, size)``: the probabilities (``None`` unless
    ``write_out``), the row maxima, the thresholds in units of the scores
    shifted by them, and the support sizes.
    """
    Z = np.ascontiguousarray(Z)
    n, K = Z.shape
    P = np.empty_like(Z) if write_out else np.empty((0, 0), Z.dtype)
    tau = np.empty(n, Z.dtype)
    size = np.empty(n, np.intp)
    zmax = np.empty(n, Z.dtype)
    bad = kern.sparsemax_rows(Z, P, tau, size, zmax, write_out)
    raise_invalid_row(Z, shape, name, zmax, bad)
    return (P if write_out else None), zmax, tau, size


#: Entries per row block of :func:`shifted_sparsemax_inplace` on rows longer
#: than ``DENSE_K`` (4 MiB of float64): the flat path's temporaries (the
#: candidates, their indices) then take a block's size, not the size of Zs.
_INPLACE_BLOCK_ENTRIES = 2**19


def shifted_sparsemax_inplace(Zs):
    """Overwrite rows already validated and shifted to a maximum of 0 with their sparsemax.

    For the losses, which shift their scores themselves and need the
    probabilities where the scores were: ``Zs`` (n, K), C-contiguous,
    becomes ``sparsemax(Zs)`` with no (n, K) temporary. Returns ``tau``
    (n,), the thresholds in the shifted units. The NumPy path is the
    mapping's (:func:`_sparsemax_numpy`), written in place.
    """
    if _backend.kernels() is not None:
        tau = sparsemax_threshold(Zs, axis=1)[0]
        Zs -= tau[:, None]
        np.maximum(Zs, 0, out=Zs)
        return tau
    n, K = Zs.shape
    step = max(1, n) if K <= DENSE_K else max(1, _INPLACE_BLOCK_ENTRIES // K)
    tau = np.empty(n, dtype=Zs.dtype)
    for start in range(0, n, step):
        block = Zs[start : start + step]
        tau[start : start + step] = _sparsemax_numpy(block, block.shape, "Z", out=block)[1]
    return tau


#: Entries per row block of the flat path.
_BLOCK = DENSE_BLOCK


def _dense_block(UT, zmax, Pb, scratch):
    """Sparsemax of a block of narrow rows, transposed in ``UT`` (K, b), into ``Pb``.

    ``UT`` is shifted to a maximum of 0 in place; every operation then runs
    along contiguous rows of length b. Newton's iteration
    (:func:`_newton_columns`) starts from the best of three lower bounds of
    the threshold: -1, ``(sum z - 1) / K`` and the threshold of the maxima
    of two halves of the row (:func:`_pair_bound`). Returns the thresholds
    (b,), in the units of the scores.
    """
    K, b = UT.shape
    # finite - max, and the sum of huge negative entries, may overflow to -inf
    with np.errstate(over="ignore"):
        UT -= zmax
        total = np.add.reduce(UT, axis=0)
    if not np.isfinite(total).all():
        # -inf masks (or overflows): entries below -1 are never in the
        # support, and raising them to -2 keeps the sums finite (-inf times
        # 0 is NaN).
        np.maximum(UT, -2, out=UT)
        total = np.add.reduce(UT, axis=0)
    tau = np.maximum((total - 1) / K, _pair_bound(UT))
    # The output block is free until the last line (in place, its scores
    # are in UT already): the iteration's mask lives there, which saves a
    # scratch buffer of a block's size.
    tau = _newton_columns(UT, tau, Pb.reshape(K, b))
    UT -= tau
    np.maximum(UT, 0, out=Pb.T)
    return tau + zmax


def _newton_columns(UT, tau, W):
    """Thresholds of the columns of ``UT`` (K, b) by Newton's iteration from ``tau``.

    ``tau`` (b,) holds lower bounds of the thresholds, at least -1, and
    ``UT`` finite entries; ``W`` is a scratch array of ``UT``'s shape and
    dtype. Each step is ``tau = (sum_{u > tau} u - 1) / |{u > tau}|``
    (Michelot's fixed point, which is Newton's method on the convex,
    decreasing, piecewise-linear ``sum_i [u_i - tau]_+ - 1`` from the left):
    the iterates increase, stay below the root and stop, when no support
    changes, at the closed form of Martins & Astudillo (2016) for the final
    support. The step runs on the columns whose support still changes
    (gathered once a quarter have finished). The support's mask is kept in
    the dtype of the scores, so that the support's sum is one ``einsum`` (a
    product with a boolean mask costs a conversion per entry).
    """
    K = UT.shape[0]
    cols, sub, t, prev = None, UT, tau, None
    for _ in range(K + 2):  # the support shrinks at every step
        k = sub.shape[1]
        Mv = W[:, :k]
        np.greater(sub, t, out=Mv)
        n = np.add.reduce(Mv, axis=0)
        t = (np.einsum("ij,ij->j", sub, Mv) - 1) / n
        if cols is None:
            tau = t
        else:
            tau[cols] = t
        if prev is not None:
            active = n != prev
            n_active = np.count_nonzero(active)
            if n_active == 0:
                break
            if 4 * n_active <= 3 * k:
                idx = np.flatnonzero(active)
                cols = idx if cols is None else cols[idx]
                sub, t, n = np.take(sub, idx, axis=1), t[idx], n[idx]
        prev = n
    return tau


def _pair_bound(UT):
    """Lower bounds of the thresholds of the columns of ``UT`` (shifted to a maximum of 0).

    The threshold of the row maximum 0 and the other entry ``y`` of
    :func:`._blocks.half_maxima_low` is ``(y - 1) / 2``, or -1 when ``y <=
    -1`` (as the compiled kernel's start on rows of 8 to 31 entries; -1
    on rows of one entry).
    """
    if UT.shape[0] == 1:
        return np.full(UT.shape[1], -1, UT.dtype)
    y = half_maxima_low(UT)
    y -= 1
    y *= 0.5
    return np.maximum(y, -1, out=y)


def _flat_rows(Z, shape, name, out):
    """Sparsemax of the wide rows ``Z`` into ``out``, a zero array or ``Z`` itself.

    Only the candidates ``z > max z - 1`` can be in the support (the
    threshold is at least ``max z - 1``); they are gathered row after row
    (:func:`._blocks.block_candidates`, a few per row for standard-normal
    scores), and the rows with about as many candidates are padded into one
    matrix (:func:`._blocks.padded_buckets`), transposed, on which Newton's
    iteration runs as on narrow rows (:func:`_padded_sparsemax`). In place
    (``out`` is ``Z``) the candidates are copied before ``out`` is zeroed.
    Returns the thresholds (n,).
    """
    n, K = Z.shape
    zmax = np.empty(n, Z.dtype)
    found = []
    for start, stop in row_blocks(n, K, _BLOCK):
        Zb = Z[start:stop]
        zmax[start:stop] = m = checked_block_max(Z, start, Zb, shape, name)
        found.append(block_candidates(Zb, m - 1, start * K))
    idx, starts, counts = flat_segments(found, n, K)
    u = Z.reshape(-1).take(idx)
    u -= np.repeat(zmax, counts)
    if np.may_share_memory(out, Z):
        out.fill(0)
    tau = np.empty(n, Z.dtype)
    for rows, width, src, dst in padded_buckets(counts, starts):
        out.reshape(-1)[idx[src]], tau[rows] = _padded_sparsemax(u[src], rows.size, width, dst)
    return tau + zmax


def _padded_sparsemax(u, m, width, dst):
    """Sparsemax values of the candidates ``u`` of ``m`` rows, padded.

    The candidates of row i (shifted to a maximum of 0, so at least about
    -1) fill column i of ``UT`` (width, m) at the flat positions ``dst`` of
    its transpose, padded with -2, never in the support: the iteration of
    the narrow rows (:func:`_newton_columns`, from the same lower bounds as
    :func:`_dense_block`) then runs along contiguous rows of ``UT``, where
    an iteration on the flat candidates takes a segmented reduction per
    step. Returns the values of the entries ``u``, in their order, and the
    thresholds (m,).
    """
    padded = np.full((m, width), -2, u.dtype)
    padded.reshape(-1)[dst] = u
    UT = padded.T.copy()
    tau = np.maximum((np.add.reduce(UT, axis=0) - 1) / width, _pair_bound(UT))
    tau = _newton_columns(UT, tau, padded.reshape(width, m))  # padded is free
    UT -= tau
    np.maximum(UT, 0, out=UT)
    np.copyto(padded, UT.T)
    return padded.reshape(-1).take(dst), tau


def _sparsemax_numpy(Z, shape, name, out=None):
    """Sparsemax of the rows ``Z`` (n, K) on the NumPy path, block by block.

    Returns ``(P, tau)``: the probabilities (into ``out`` if given, which may
    be ``Z`` itself) and the thresholds (n,).
    """
    return map_rows(Z, shape, name, lambda Zf, P: _flat_rows(Zf, shape, name, P),
                    _dense_block, (Z.dtype,), out=out, row_values=True)


def sparsemax(z, axis=-1):
    r"""Sparsemax: the Euclidean projection of scores onto the simplex.

    .. math::

        \operatorname{sparsemax}(z) = \arg\min_{p \in \Delta^{K-1}} \|p - z\|^2,
        \qquad p_i = [z_i - \tau(z)]_+,

    where the threshold :math:`\tau(z)` is the unique value with
    :math:`\sum_i [z_i - \tau]_+ = 1` (see :func:`sparsemax_threshold`).
    Unlike softmax, sparsemax returns exact zeros: every entry with
    :math:`z_i \le \tau(z)` gets probability 0, and in particular every entry
    with :math:`z_i \le \max_j z_j - 1`.

    The computation shifts each slice by its maximum (so huge scores and
    constant shifts do not change the result) and finds the threshold
    exactly by a vectorised Newton iteration, with no sort and no Python loop
    over slices. Memory is O(size of ``z``).

    Parameters
    ----------
    z : array_like
        Scores, any shape. float32 stays float32, float64 stays float64,
        integers become float64. ``-inf`` entries are masks: they get
        probability exactly 0 and leave the rest of the slice unchanged.
        A NumPy masked array is read with its masked entries as ``-inf``
        (masked classes get probability exactly 0; the result is a plain
        ndarray). A ``scipy.sparse`` matrix is refused with a ``TypeError``:
        densify it with ``z.toarray()``.
    axis : int, default=-1
        Axis along which the distributions lie (negative values allowed).

    Returns
    -------
    p : ndarray or Array API array
        Same shape and floating dtype as ``z``; each slice along ``axis`` is
        on the probability simplex, with exact zeros.

    Raises
    ------
    ValueError
        If a slice contains NaN or ``+inf``, or has every entry ``-inf``
        (the message names the first offending slice), or if ``z`` has
        length 0 along ``axis``.
    TypeError
        If ``z`` is not real-valued, or is a ``scipy.sparse`` matrix.

    See Also
    --------
    sparsemax_threshold : The threshold and the support size.
    sparsemax_jvp : Jacobian-vector product.
    entmax_bisect : The alpha-entmax family (``alpha=2`` is sparsemax).

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From Softmax to Sparsemax:
       A Sparse Model of Attention and Multi-Label Classification", ICML 2016.
    .. [2] L. Condat, "Fast projection onto the simplex and the l1 ball",
       Mathematical Programming 158, 2016.

    Examples
    --------
    >>> from sksparsemax.transforms import sparsemax
    >>> sparsemax([1.0, 0.2, -1.0])
    array([0.9, 0.1, 0. ])
    >>> sparsemax([[0.5, 0.5], [3.0, 1.0]])
    array([[0.5, 0.5],
           [1. , 0. ]])
    """
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xp.sparsemax(z, axis)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    kern = _backend.kernels()
    if kern is not None:
        P = _sparsemax_compiled(kern, Z, shape, "z", True)[0]
    else:
        P = _sparsemax_numpy(Z, shape, "z")[0]
    return from_rows(P, shape, axis)


def sparsemax_threshold(z, axis=-1):
    r"""Threshold :math:`\tau(z)` and support size of sparsemax.

    Sort :math:`z_{(1)} \ge \dots \ge z_{(K)}`; with
    :math:`k(z) = \max\{k : 1 + k z_{(k)} > \sum_{j \le k} z_{(j)}\}`,

    .. math:: \tau(z) = \frac{\sum_{j \le k(z)} z_{(j)} - 1}{k(z)}

    and ``sparsemax(z) = max(z - tau, 0)`` has exactly :math:`k(z)` nonzero
    entries. (It is computed without sorting; see :func:`sparsemax`.)

    Parameters
    ----------
    z : array_like
        Scores (same conventions as :func:`sparsemax`).
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    tau : ndarray or Array API array
        Thresholds, shape of ``z`` without ``axis``, dtype of the result of
        :func:`sparsemax`.
    support_size : ndarray or Array API array of int
        Number of nonzero probabilities, same shape as ``tau``.

    Examples
    --------
    >>> from sksparsemax.transforms import sparsemax_threshold
    >>> tau, size = sparsemax_threshold([1.0, 0.2, -1.0])
    >>> float(tau), int(size)
    (0.1, 2)
    """
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xp.sparsemax_threshold(z, axis)
    z = as_float_array(z)
    Z, shape, _ = to_rows(z, axis)
    kern = _backend.kernels()
    if kern is not None:
        _, zmax, tau, size = _sparsemax_compiled(kern, Z, shape, "z", False)
        tau = tau + zmax
    else:
        P, tau = _sparsemax_numpy(Z, shape, "z")
        size = np.count_nonzero(P, axis=1)
    return batch_from_rows(tau, shape), batch_from_rows(size, shape)


def sparsemax_jvp(p, v, axis=-1):
    r"""Jacobian-vector product of sparsemax, computed from its output.

    With :math:`S = \{i : p_i > 0\}` and :math:`s` its indicator, the Jacobian
    is :math:`J = \operatorname{diag}(s) - s s^\top / |S|`, so

    .. math:: J v = s \odot \Big(v - \frac{1}{|S|} \sum_{j \in S} v_j\Big).

    :math:`J` is symmetric, so this is also the vector-Jacobian product
    (the backward pass). The K×K Jacobian is never formed.

    Parameters
    ----------
    p : array_like
        Output of :func:`sparsemax`.
    v : array_like
        Tangent (or cotangent) vectors, same shape as ``p``.
        Masked entries of a NumPy masked array ``p`` or ``v`` count as 0
        (for ``p``, the probability a masked class gets).
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    jv : ndarray or Array API array
        Same shape as ``p``; zero outside the support.

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
    >>> from sksparsemax.transforms import sparsemax_jvp
    >>> sparsemax_jvp([0.9, 0.1, 0.0], [1.0, 0.0, 5.0])
    array([ 0.5, -0.5,  0. ])
    """
    if _xp.any_foreign(p, v):
        return _xp.sparsemax_jvp(p, v, axis)
    P, V, shape, axis = pair_to_rows(p, v, axis)
    mask = P > 0
    mean = np.sum(V, axis=1, where=mask, keepdims=True) / np.count_nonzero(
        mask, axis=1
    ).reshape(-1, 1)
    out = np.where(mask, V - mean.astype(V.dtype, copy=False), 0).astype(
        V.dtype, copy=False
    )
    return from_rows(out, shape, axis)
