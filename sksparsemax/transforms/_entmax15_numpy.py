"""The NumPy path of 1.5-entmax: exact thresholds without sorting.

With ``u = (z - max z) / 2`` (row maximum 0), ``entmax15(z) = [u - tau]_+^2``
where ``tau`` is the root of ``f(t) = sum_i [u_i - t]_+^2 - 1``: convex and
decreasing, with ``f(-1) >= 0`` (so ``tau >= -1`` and only the entries
``u > -1`` can be in the support). For a candidate set ``S``, the closed form
of Peters et al. (2019),

    ``tau_S = mean_S - sqrt(delta_S)``, ``mean_S = sum_S u / |S|``,
    ``delta_S = (1 - |S| (sum_S u^2 / |S| - mean_S^2)) / |S|``,

is the root of ``q_S(t) = sum_S (u - t)^2 - 1``. Two facts drive the search:

* if ``S = {u > x}`` for a lower bound ``x <= tau``, then ``tau_S >= tau``
  (``f <= q_S`` on ``[x, tau_S]``), and ``tau_S = tau`` exactly when every
  entry of ``S`` lies above ``tau_S``: the support is found, and ``tau_S``
  is then the exact closed form on it;
* a Newton step on ``f`` from any point (convex, decreasing) lands at or
  below the root: from ``tau_S`` (the right) it gives a new lower bound,
  much closer than the step from ``x`` (the left), which is kept as a
  safeguard (it increases monotonically).

Each iteration evaluates ``tau_S`` on ``S = {u > x}``, checks it, and
replaces ``x`` by the Newton bound from ``tau_S``, which drops the entries
below it from ``S``. Standard-normal rows need two or three iterations.
Narrow rows iterate on the dense row block, transposed so that every
operation runs along long contiguous rows (:func:`_dense_block`). Wide rows
first bound ``tau`` from below by the sub-row of their group maxima
(:func:`_group_bound`); only the entries above that bound (a few per row)
are gathered, padded into columns (rows of similar candidate counts
together, :func:`._blocks.padded_buckets`) and iterated on
(:func:`_flat_rows`).
"""

import numpy as np

from ._blocks import (
    block_candidates,
    checked_block_max,
    flat_segments,
    group_maxima,
    half_maxima_low,
    map_rows,
    padded_buckets,
    row_blocks,
    row_max,
)
from ._blocks import DENSE_BLOCK as _FLAT_BLOCK

#: Bound on the iterations (each one drops entries or finishes the rows).
_MAX_ITER = 64


def _closed_form(A, Q, n):
    """``tau_S`` from ``A = sum_S u``, ``Q = sum_S u^2`` and ``n = |S|``."""
    mean = A / n
    delta = (1 - n * (Q / n - mean * mean)) / n
    return mean - np.sqrt(np.maximum(delta, 0))


def _newton(x, s1, s2):
    """Newton step on ``f`` from ``x``, with ``s1, s2`` the sums of
    ``[u - x]_+`` and ``[u - x]_+^2``: a lower bound of the root."""
    return x + (s2 - 1) / (2 * s1)


def _column_moments(UT, U2, y, W, M):
    """``n, A, Q`` of ``S = {u > y}`` for every column of ``UT`` (``U2 = UT**2``).

    ``UT`` (K, b) holds one row of scores per column (``W``, ``M`` scratch of
    its shape and dtype; the mask ``M`` is kept as 0.0 / 1.0, whose products
    and sums are cheaper than those of a boolean array): every operation runs
    along contiguous rows of length ``b``, with no per-row overhead for short
    rows.
    """
    np.greater(UT, y, out=M)
    n = np.add.reduce(M, axis=0)
    # One einsum per sum: a product and its reduction in one pass.
    return n, np.einsum("ij,ij->j", UT, M), np.einsum("ij,ij->j", U2, M)


def _dense_threshold(UT, W, M, x):
    """``tau`` of every column of ``UT`` (maximum 0, entries at least -2).

    ``x``: a lower bound of ``tau`` per column; ``W`` (two arrays) and ``M``
    scratch of the shape and dtype of ``UT``. The iteration runs on the columns not
    yet finished, gathered once a quarter of the active ones have finished.
    The result is the closed form on the final support, from the moments of
    ``u`` itself (the form of the sort-based algorithm).
    """
    b = UT.shape[1]
    tau = np.empty(b, UT.dtype)
    U2 = np.multiply(UT, UT, out=W[1])
    cols, sub, sub2 = None, UT, U2
    for _ in range(_MAX_ITER):
        k = sub.shape[1]
        Wv, Mv = W[0][:, :k], M[:, :k]
        n, A, Q = _column_moments(sub, sub2, x, Wv, Mv)
        t = _closed_form(A, Q, n)
        m, A, Q = _column_moments(sub, sub2, t, Wv, Mv)
        if cols is None:
            tau[:] = t
        else:
            tau[cols] = t
        active = m != n
        n_active = np.count_nonzero(active)
        if n_active == 0:
            break
        # Newton from t (u-moments of {u > t} shifted by t)
        t_right = _newton(t, A - m * t, Q - t * (2 * A - m * t))
        x = np.where(active, np.maximum(x, t_right), t)
        if 4 * n_active <= 3 * k:
            idx = np.flatnonzero(active)
            cols = idx if cols is None else cols[idx]
            sub, sub2, x = np.take(sub, idx, axis=1), np.take(sub2, idx, axis=1), x[idx]
    return tau


def _dense_block(UT, zmax, Pb, scratch):
    """1.5-entmax of a block of narrow rows, transposed in ``UT`` (K, b), into ``Pb``.

    ``UT`` is the memory of ``scratch[0]`` and becomes ``u`` in place
    (``scratch``: four arrays of at least ``UT.size`` entries, in its dtype).
    """
    K, b = UT.shape
    W0, W1, M = (a[: b * K].reshape(K, b) for a in scratch[1:])
    with np.errstate(over="ignore"):  # finite - max may overflow to -inf
        UT -= zmax
    UT *= 0.5
    # Entries u <= -1 are never in the support (tau >= -1): clipping them
    # keeps the sums finite and changes no result.
    np.maximum(UT, -2, out=UT)
    tau = _dense_threshold(UT, (W0, W1), M, _pair_bound(UT))
    UT -= tau
    np.maximum(UT, 0, out=UT)
    UT *= UT
    # Rounding in tau leaves row sums within a few ulps of 1; renormalise.
    np.divide(UT, np.add.reduce(UT, axis=0), out=Pb.T)


def _pair_bound(UT):
    """Lower bounds of the thresholds of the columns of ``UT`` (``u``, maximum 0).

    The threshold of ``u = 0`` and the other entry ``y`` of
    :func:`._blocks.half_maxima_low` is their closed form ``y / 2 -
    sqrt((1 - y^2 / 2) / 2)`` when ``y > -1``, else -1 (as the compiled
    kernel's start on rows of 8 to 31 entries; -1 on rows of one entry).
    """
    if UT.shape[0] == 1:
        return np.full(UT.shape[1], -1, UT.dtype)
    y = half_maxima_low(UT)
    tau = y / 2 - np.sqrt(np.maximum((1 - y * y / 2) / 2, 0))
    return np.where(y > -1, tau, -1).astype(UT.dtype, copy=False)


def _group_bound(A, zmax):
    """Lower bound of ``tau`` from the group maxima ``A`` (b, G) of the rows.

    The threshold of the sub-row ``A`` (distinct entries of the row) is at
    most that of the row (``f`` only gains terms); Newton steps on its ``f``
    from -1 stay below it. Computed on ``A`` transposed (contiguous rows).
    """
    with np.errstate(over="ignore"):
        UA = np.subtract(A.T, zmax, order="C")
    UA *= 0.5
    np.maximum(UA, -2, out=UA)
    t = np.full(zmax.shape, -1, UA.dtype)
    D = np.empty_like(UA)
    for _ in range(3):
        np.subtract(UA, t, out=D)
        np.maximum(D, 0, out=D)
        s1 = np.add.reduce(D, axis=0)
        D *= D
        t = _newton(t, s1, np.add.reduce(D, axis=0))
    return t


#: Supports larger than this are summed in decreasing order (:func:`_sorted_closed_form`).
_SORTED_SUPPORT = 12


def _sorted_closed_form(UT, tau, M):
    """Recompute, in place, ``tau`` of the columns with a large support, with
    the support summed in decreasing order (as the sort-based algorithm).

    The closed form cancels (``1 - |S| var``), so on a large support the
    order of the sums shows in the last ulps of ``tau``: summed as the
    sort-based algorithm does, the result is that algorithm's to about one
    ulp, as the compiled kernels' are. ``M``: scratch of the shape and
    dtype of ``UT``.
    """
    np.greater(UT, tau, out=M)
    n_s = np.add.reduce(M, axis=0)
    cols = np.flatnonzero(n_s > _SORTED_SUPPORT)
    if cols.size == 0:
        return
    # -u sorted increasingly (u decreasingly); the zeros in front add nothing
    V = np.sort(np.where(M[:, cols] > 0, -UT[:, cols], 0), axis=0)
    A = -np.add.reduce(V, axis=0)
    V *= V
    tau[cols] = _closed_form(A, np.add.reduce(V, axis=0), n_s[cols])


def _flat_rows(Z, shape, out):
    """1.5-entmax of the wide rows ``Z`` into the zero array ``out``.

    Block by block (the block stays in the cache between the two passes):
    the group maxima (:func:`._blocks.group_maxima`, which give the row
    maxima), a lower bound ``x`` of ``tau`` from them (:func:`_group_bound`)
    and the candidates ``u > x``, widened by a few ulps so that rounding in
    ``u = (z - max z) / 2`` loses none. The iteration then runs once on the
    candidates of all rows.
    """
    n, K = Z.shape
    zmax = np.empty(n, Z.dtype)
    x = np.empty(n, Z.dtype)
    margin = 8 * np.finfo(Z.dtype).eps
    found = []
    for start, stop in row_blocks(n, K, _FLAT_BLOCK):
        Zb = Z[start:stop]
        A = group_maxima(Zb)
        zmax[start:stop] = m = checked_block_max(Z, start, Zb, shape, m=row_max(A))
        x[start:stop] = t = _group_bound(A, m) - margin
        found.append(block_candidates(Zb, m + 2 * t, start * K))
    idx, starts, counts = flat_segments(found, n, K)
    u = Z.reshape(-1).take(idx)
    u -= np.repeat(zmax, counts)
    u *= 0.5
    for rows, width, src, dst in padded_buckets(counts, starts):
        out.reshape(-1)[idx[src]] = _padded_entmax15(u[src], x[rows], rows.size, width, dst)


def _padded_entmax15(u, x, m, width, dst):
    """1.5-entmax values of the candidates ``u`` of ``m`` rows, padded.

    The candidates of row i fill column i of ``UT`` (width, m) at the flat
    positions ``dst`` of its transpose, padded with -2 (below every lower
    bound ``x``): the dense iteration then runs on ``UT``. Returns the
    values of the entries ``u``, in their order.
    """
    padded = np.full((m, width), -2, u.dtype)
    padded.reshape(-1)[dst] = u
    UT = padded.T.copy()
    M = np.empty_like(UT)
    tau = _dense_threshold(UT, (padded.reshape(width, m), np.empty_like(UT)), M, x)
    _sorted_closed_form(UT, tau, M)
    UT -= tau
    np.maximum(UT, 0, out=UT)
    UT *= UT
    # Rounding in tau leaves row sums within a few ulps of 1; renormalise.
    UT /= np.add.reduce(UT, axis=0)
    np.copyto(padded, UT.T)
    return padded.reshape(-1).take(dst)


def entmax15_rows(Z, shape):
    """1.5-entmax of the rows ``Z`` (n, K), validated block by block."""
    return map_rows(Z, shape, "z", lambda Zf, out: _flat_rows(Zf, shape, out), _dense_block,
                    (Z.dtype,) * 4)
