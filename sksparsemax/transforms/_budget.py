"""Budget sparsemax: the Euclidean projection onto the capped simplex."""

import numbers

import numpy as np

from . import _array_api as _xp
from . import _backend
from ._validation import (
    _batch_index,
    as_float_array,
    from_rows,
    pair_to_rows,
    raise_invalid_row,
    to_rows,
)

_EPS = np.finfo(np.float64).eps
_COUNT = float(1 << 26)  # packs two counts in one float64 sum (K < 2**26)
_BLOCK = 1 << 16  # entries per block of rows in budget_threshold


def check_budget(budget):
    """``budget`` as a float64 array, raising unless its entries are finite and > 0.

    A real number or an array of them (one per slice); booleans, strings and
    complex numbers are a ``TypeError``.
    """
    if isinstance(budget, (bool, np.bool_)) or (
        np.isscalar(budget) and not isinstance(budget, numbers.Real)
    ):
        raise TypeError(f"budget must be a real number (or an array of them); got {budget!r}.")
    b = np.asarray(budget)
    if b.dtype.kind not in "iuf":
        raise TypeError(
            f"budget must be a real number (or an array of them); got dtype {b.dtype}."
        )
    b = b.astype(np.float64)
    bad = ~(np.isfinite(b) & (b > 0))
    if bad.any():
        value = b.ravel()[int(np.flatnonzero(bad.ravel())[0])]
        raise ValueError(f"budget must be a finite number > 0; got budget={float(value)!r}.")
    return b


def budget_rows(b, shape, axis, ndim):
    """The budget of every row of :func:`to_rows`'s output, shape (n_rows,).

    ``b`` (checked) broadcasts to the batch shape (``shape[:-1]``: the shape
    of ``z`` without ``axis``); an array with ``ndim`` dimensions and length
    1 along ``axis`` (the keepdims form) is accepted too.
    """
    batch = tuple(shape[:-1])
    if b.ndim == ndim and ndim > 0 and b.shape[axis] == 1:
        b = np.squeeze(b, axis=axis)
    try:
        return np.broadcast_to(b, batch).reshape(-1)
    except ValueError:
        raise ValueError(
            f"budget of shape {b.shape} cannot be broadcast to the shape {batch} of "
            "z without its distribution axis (one budget per slice)."
        ) from None


def raise_budget_error(b, counts, shape, name="z"):
    """Raise the error for the first row whose budget exceeds its unmasked entries."""
    bad = np.flatnonzero(b > counts)
    if bad.size:
        row = int(bad[0])
        raise ValueError(
            f"budget={b[row]:g} exceeds the number of unmasked entries "
            f"({int(counts[row])}) of {name} at {_batch_index(row, shape)}: "
            "0 < budget <= number of entries that are not -inf."
        )


def _shifted_rows(Z, shape, b):
    """Shifted float64 scores ``Z - max`` of the rows, with the NumPy path's errors.

    The first row that is invalid (NaN, ``+inf``, all ``-inf``) or whose
    budget exceeds its number of unmasked entries is named, whichever comes
    first (as the compiled kernel, which stops at the first bad row). An
    entry whose shift overflows to ``-inf`` is a mask, also in that count.
    """
    zmax = Z.max(axis=1, keepdims=True) if Z.shape[0] else np.zeros((0, 1), Z.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        Y = Z.astype(np.float64)
        Y -= zmax
    if Y.size and Y.min() > -np.inf:  # no mask (and no NaN)
        counts = np.full(Y.shape[0], Y.shape[1])
    else:
        counts = np.count_nonzero(Y > -np.inf, axis=1)
    bad = ~np.isfinite(zmax[:, 0]) | (b > counts)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise_invalid_row(Z, shape, "z", zmax.ravel(), row)  # if the row is invalid
        raise_budget_error(b[: row + 1], counts[: row + 1], shape)
    return Y


def _evaluate(Y, t, b, buf):
    """``f(t) = sum_i clip(y_i - t, 0, 1) - b`` and the counts of ``p > 0`` and ``p = 1``.

    The free set (``0 < p_i < 1``) has ``n_pos - n_cap`` entries; the
    counts are those of the output :func:`capped_output` writes at ``t``
    (float64, exact). ``buf`` is scratch space of at least ``2 * Y.size``
    float64. The row sums are matrix-vector products (fast also for short
    rows); both counts come from one, of ``ceil(p) + 2**26 floor(p)`` (rows
    shorter than ``2**26``).
    """
    m = Y.size
    P = np.subtract(Y, t[:, None], out=buf[:m].reshape(Y.shape))
    np.clip(P, 0.0, 1.0, out=P)
    ones = np.ones(Y.shape[1])
    f = P @ ones - b
    if Y.shape[1] >= _COUNT:  # too wide to pack the counts
        return f, np.count_nonzero(P, axis=1) * 1.0, np.count_nonzero(P == 1.0, axis=1) * 1.0
    H = np.ceil(P, out=buf[m : 2 * m].reshape(Y.shape))
    np.floor(P, out=P)
    P *= _COUNT
    P += H
    counts = P @ ones  # exact: integers below 2**53
    n_cap = np.floor(counts / _COUNT)
    return f, counts - n_cap * _COUNT, n_cap


def _candidate_columns(Y, lo):
    """``Y`` with only the entries above ``lo`` (n,), packed left, ``-inf`` padded.

    Entries ``y <= lo`` get 0 for every ``tau`` in the bracket: they leave
    the iteration. ``Y`` itself when that does not shrink it below a quarter.
    """
    M = Y > lo[:, None]
    counts = np.count_nonzero(M, axis=1)
    width = int(counts.max()) if counts.size else 0
    if width > Y.shape[1] // 4:
        return Y
    r, c = np.nonzero(M)
    pos = np.arange(r.size) - (np.cumsum(counts) - counts)[r]
    out = np.full((Y.shape[0], max(width, 1)), -np.inf)
    out[r, pos] = Y[r, c]
    return out


def _newton_threshold(Y, b, max_iter=200):
    """``(tau, t_lo, check)``: safeguarded Newton on ``f`` (see :func:`budget_threshold`).

    The bracket ``[lo, hi] = [min y - 2, 0]`` (below ``min y - 1`` also when
    an ulp of ``min y`` exceeds 2) has ``f(lo) >= 0 > f(0) = -b``; from ``t
    = -1``, each step takes the Newton iterate ``t + f / |F|`` if it is
    strictly inside the current bracket and bisects otherwise (at the
    geometric mean of ``lo`` and ``min(hi, -1)`` while ``lo`` is 4 times
    lower: heavy tails). A row stops when its free and capped sets are
    those of the previous iterate, which was a Newton iterate (then ``f`` is
    linear between them and the new iterate is the root), when the Newton
    step no longer moves ``t``, when ``f = 0`` with no free entry (flat
    ``f``), or when the bracket has no float inside (``check`` 2, ``tau``
    and ``t_lo`` its ends, finished by :func:`_segment_threshold`).
    ``check`` is 1 where ``b`` entries are capped or have ``p > 0`` (a
    possible flat row for :func:`_flat_rows`). Converged rows leave the
    active set; for rows of 64 entries or more, the entries below ``lo``
    leave it too, once (after the second to fourth step) that removes three
    quarters of the columns.
    """
    n, K = Y.shape
    tau, t_lo = np.empty(n), np.empty(n)
    check = np.zeros(n, np.int8)
    ymin = Y.min(axis=1)
    masked = np.isneginf(ymin)
    if masked.any():
        ymin[masked] = np.min(np.where(Y[masked] > -np.inf, Y[masked], np.inf), axis=1)
    lo = np.minimum(ymin - 2.0, np.nextafter(ymin, -np.inf))  # f(lo) = c - b >= 0
    hi, t = np.zeros(n), np.full(n, -1.0)
    rows, sub, buf = np.arange(n), Y, np.empty(2 * Y.size)
    prev_pos = prev_cap = np.full(n, -1.0)
    newton = np.zeros(n, bool)
    for it in range(max_iter):
        f, n_pos, n_cap = _evaluate(sub, t, b, buf)
        n_free = n_pos - n_cap
        lo = np.where(f > 0, t, lo)
        hi = np.where(f < 0, t, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            nxt = t + f / n_free
        moved = (n_pos != prev_pos) | (n_cap != prev_cap)
        conv = (n_free > 0) & ((newton & ~moved) | (nxt == t))
        flat = (n_free == 0) & (f == 0)
        h = np.minimum(hi, -1.0)  # a bracket over orders of magnitude: geometric
        mid = np.where(lo < 4.0 * h, -np.sqrt(-lo) * np.sqrt(-h), 0.5 * lo + 0.5 * hi)
        stuck = ~(conv | flat) & ((mid <= lo) | (mid >= hi))
        done = conv | flat | stuck
        if done.any():
            r = rows[done]
            tau[r] = np.where(flat[done], t[done], np.clip(nxt[done], lo[done], hi[done]))
            tau[r] = np.where(stuck[done], hi[done], tau[r])
            t_lo[r] = lo[done]
            top = (n_cap[done] == b[done]) | (n_pos[done] == b[done])
            check[r] = np.where(stuck[done], 2, np.where(top, 1, 0))
            keep = ~done
            if not keep.any():
                return tau, t_lo, check
            rows, sub, t, nxt, lo, hi, b, n_pos, n_cap, mid = (
                a[keep] for a in (rows, sub, t, nxt, lo, hi, b, n_pos, n_cap, mid)
            )
        newton = (nxt > lo) & (nxt < hi)
        t = np.where(newton, nxt, mid)
        prev_pos, prev_cap = n_pos, n_cap
        if 1 <= it <= 3 and K >= 64 and sub.shape[1] == K:
            sub = _candidate_columns(sub, lo)
    tau[rows], t_lo[rows], check[rows] = hi, lo, 2
    return tau, t_lo, check


def _segment_threshold(Y, b, t_lo, t_hi):
    """The closed form on the segment ``[t_lo, t_hi]`` without a breakpoint inside.

    Free set ``y >= t_hi > y - 1``, capped set ``y - 1 >= t_hi``; the result
    is clipped to the segment (``t_hi`` if no entry is free).
    """
    with np.errstate(invalid="ignore"):
        upper = Y >= t_hi[:, None]
        capped = (Y - 1.0) >= t_hi[:, None]
    free = upper & ~capped
    n_free = np.count_nonzero(free, axis=1)
    s_free = np.sum(np.where(free, Y, 0.0), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (s_free + np.count_nonzero(capped, axis=1) - b) / n_free
    return np.where(n_free > 0, np.clip(tau, t_lo, t_hi), t_hi)


def _snap_to_kinks(Y, b, tau):
    """``tau`` moved onto a kink of ``f`` within its rounding error.

    A free entry with ``p = y - tau`` within rounding of 0 (or 1) means a
    root on the breakpoint ``y`` (``y - 1``): ``tau`` is put there, so that
    the entry (and its ties) is exactly 0 (1), as on a segment's end.
    """
    D = Y - tau[:, None]
    free = (D > 0) & (D < 1.0)
    n_free = np.count_nonzero(free, axis=1)
    up = np.min(np.where(free, Y, np.inf), axis=1)
    down = np.max(np.where(free, Y, -np.inf), axis=1) - 1.0
    tol = 4.0 * _EPS * (1.0 + np.abs(tau) + np.log2(Y.shape[1] + 1.0) * b / np.maximum(n_free, 1))
    tau = np.where(up - tau <= tol, up, tau)
    return np.where((tau - down <= tol) & (tau > down), down, tau)


def _flat_rows(Y, b, tau):
    """``tau``, replaced by ``y_(b+1)`` (``-inf`` if none) where ``f`` is flat at ``b``.

    For an integer budget ``b`` with ``y_(b) - y_(b+1) >= 1`` (or ``b`` equal
    to the number of unmasked entries) the projection is the indicator of
    the b largest scores; ``tau = y_(b+1)`` gives it with exact 0s and 1s.
    ``tau`` is within rounding of the root, so there the b largest scores
    are the capped entries or those with ``p > 0``, whichever are b.
    """
    with np.errstate(invalid="ignore"):  # tau = -inf at masks
        D = Y - tau[:, None]
        cap, pos = D >= 1.0, D > 0
    top = np.where((np.count_nonzero(cap, axis=1) == b)[:, None], cap, pos)
    last = np.min(np.where(top, Y, np.inf), axis=1)
    nxt = np.max(np.where(top, -np.inf, Y), axis=1)
    with np.errstate(invalid="ignore"):
        flat = (np.count_nonzero(top, axis=1) == b) & (last - nxt >= 1.0)
    return np.where(flat, nxt, tau)


def budget_threshold(Y, b):
    """Threshold ``tau`` (n,) of each row of the shifted float64 scores ``Y``.

    ``sum_i clip(y_i - tau, 0, 1) = b`` for the validated budgets ``b`` (n,)
    (``0 < b <= number of finite entries``). ``f(t) = sum_i clip(y_i - t, 0,
    1) - b`` is piecewise linear and non-increasing, with slope ``-|F|`` for
    the free set ``F`` (``0 < p_i < 1``); on the segment of the root, with
    ``C`` the capped set (``p_i = 1``),

    .. math:: \\tau = \\frac{\\sum_{i \\in F} y_i + |C| - b}{|F|},

    which a Newton step from any point of that segment reaches. The root is
    found by safeguarded Newton (:func:`_newton_threshold`), no sort; a flat
    ``f`` (an integer budget in a gap) is :func:`_flat_rows`'s case.
    """
    n, K = Y.shape
    if n == 0:
        return np.empty(0)
    step = max(1, _BLOCK // max(K, 1))
    if n > step:  # blocks of rows: bounded scratch space, in cache
        return np.concatenate([budget_threshold(Y[i : i + step], b[i : i + step])
                               for i in range(0, n, step)])
    tau, t_lo, check = _newton_threshold(Y, b)
    r = np.flatnonzero(check == 2)
    if r.size:
        Yr = Y[r]
        tau[r] = _segment_threshold(Yr, b[r], t_lo[r], tau[r])
        # b = number of entries: all ones (the bracket can collapse above them)
        tau[r[np.count_nonzero(Yr > -np.inf, axis=1) == b[r]]] = -np.inf
    r = np.flatnonzero(check < 2)
    tau[r] = _snap_to_kinks(Y[r], b[r], tau[r])
    r = np.flatnonzero(check > 0)
    if r.size:
        tau[r] = _flat_rows(Y[r], b[r], tau[r])
    return tau


def capped_output(Y, tau):
    """``clip(y - tau, 0, 1)`` row by row, exactly 0 at masks (also for ``tau = -inf``)."""
    with np.errstate(invalid="ignore"):
        D = Y - tau[:, None]
        np.clip(D, 0.0, 1.0, out=D)  # NaN only at masks for tau = -inf
    r = np.flatnonzero(np.isneginf(tau))
    if r.size:
        D[r] = Y[r] > -np.inf
    return D


def _budget_compiled(kern, Z, b, shape):
    """Budget sparsemax of the rows ``Z`` by the compiled kernel (numba backend)."""
    Z = np.ascontiguousarray(Z)
    out = np.empty_like(Z)
    n = Z.shape[0]
    zmax = np.empty(n, Z.dtype)
    counts = np.zeros(n, np.intp)
    bad = kern.budget_sparsemax_rows(Z, np.ascontiguousarray(b), out, zmax, counts)
    raise_invalid_row(Z, shape, "z", zmax, bad)
    if bad >= 0:  # a valid row whose budget exceeds its unmasked entries
        raise_budget_error(b[: bad + 1], counts[: bad + 1], shape)
    return out


def budget_sparsemax(z, budget, axis=-1):
    r"""Budget sparsemax: the Euclidean projection onto the capped simplex.

    .. math::

        \operatorname{budget\_sparsemax}_b(z) = \arg\min_{p \in C_b}
        \|p - z\|^2, \qquad
        C_b = \{p : 0 \le p_i \le 1,\ \textstyle\sum_i p_i = b\},

    that is :math:`\arg\max_{p \in C_b} \langle z, p\rangle - \tfrac12
    \|p\|^2` ("soft b-subsets"), with the closed form :math:`p_i =
    \operatorname{clip}(z_i - \tau, 0, 1)` where :math:`\tau` makes the
    entries sum to :math:`b`. Entries with :math:`z_i \le \tau` get exactly
    0, entries with :math:`z_i \ge \tau + 1` exactly 1. ``budget = 1`` is
    :func:`sparsemax` (the cap never binds when the sum is 1); for
    ``b < 1`` the result is :math:`b\,\operatorname{sparsemax}(z / b)`;
    ``budget`` equal to the number of unmasked entries gives all ones.

    The threshold is exact, without a sort: :math:`\sum_i
    \operatorname{clip}(z_i - \tau, 0, 1)` is piecewise linear in
    :math:`\tau`, with breakpoints :math:`z_i` and :math:`z_i - 1`, and a
    safeguarded Newton iteration (bisection when the Newton step leaves the
    bracket of the root) stops once the free and capped entries no longer
    change: the last Newton step then solves the linear equation on the
    root's segment in closed form. The slices are processed together, those
    that have converged leave the iteration. The computation runs in float64 on scores shifted by their
    slice maximum.

    Parameters
    ----------
    z : array_like
        Scores, any shape. float32 stays float32, float64 stays float64,
        integers become float64. ``-inf`` entries are masks: they get
        exactly 0 and do not count as entries.
    budget : float or array_like
        The sum :math:`b` of every slice, ``0 < budget <=`` the number of
        unmasked entries of the slice. An array gives one budget per slice:
        it broadcasts to the shape of ``z`` without ``axis`` (or has the
        shape of ``z`` with length 1 along ``axis``).
    axis : int, default=-1
        Axis along which the slices lie (negative values allowed).

    Returns
    -------
    p : ndarray or Array API array
        Same shape and floating dtype as ``z``; every slice has entries in
        [0, 1] that sum to its budget.

    Raises
    ------
    ValueError
        If a slice contains NaN or ``+inf`` or has every entry ``-inf``, if
        a budget is not finite and positive, or exceeds the number of
        unmasked entries of its slice (the message names the slice), or if
        ``budget`` does not broadcast.
    TypeError
        If ``z`` or ``budget`` is not real-valued.

    See Also
    --------
    budget_sparsemax_jvp : Jacobian-vector product.
    sparsemax : ``budget = 1``.

    References
    ----------
    .. [1] V. Niculae, "entmax: sparse probability mappings" (the
       ``budget_bisect`` function), 2019–2023.
    .. [2] W. Wang and C. Lu, "Projection onto the capped simplex",
       arXiv:1503.01002, 2015.

    Examples
    --------
    >>> from sksparsemax.transforms import budget_sparsemax
    >>> budget_sparsemax([1.0, 0.6, 0.2], budget=2)
    array([1. , 0.7, 0.3])
    >>> budget_sparsemax([[3.0, 2.0, 0.0, -1.0]], budget=2)
    array([[1., 1., 0., 0.]])
    >>> budget_sparsemax([0.5, 0.5, -float("inf")], budget=1.5)
    array([0.75, 0.75, 0.  ])
    """
    if _xp.any_foreign(z, budget):
        from . import _array_api_budget  # imports this module: not at the top

        return _array_api_budget.budget_sparsemax(z, budget, axis)
    b = check_budget(budget)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    b = budget_rows(b, shape, axis, z.ndim)
    kern = _backend.kernels()
    if kern is not None:
        return from_rows(_budget_compiled(kern, Z, b, shape), shape, axis)
    Y = _shifted_rows(Z, shape, b)
    P = capped_output(Y, budget_threshold(Y, b))
    return from_rows(P.astype(Z.dtype, copy=False), shape, axis)


def budget_sparsemax_jvp(p, v, axis=-1):
    r"""Jacobian-vector product of budget sparsemax, computed from its output.

    With the free set :math:`F = \{i : 0 < p_i < 1\}` and :math:`f` its
    indicator, the Jacobian is :math:`J = \operatorname{diag}(f) - f
    f^\top / |F|`, so

    .. math:: J v = f \odot \Big(v - \frac{1}{|F|} \sum_{j \in F} v_j\Big),

    and :math:`J v = 0` when :math:`F` is empty (a 0/1 output is locally
    constant). Entries at exactly 0 or exactly 1 are saturated: the mapping
    writes them exactly (:func:`budget_sparsemax` clips), so ``p_i == 1``
    is read as capped and ``p_i < 1`` as free. :math:`J` is symmetric, so
    this is also the vector-Jacobian product. On a kink (an entry exactly at
    0 or 1 that the scores make free on one side) this is the Jacobian of
    the side where it is saturated.

    Parameters
    ----------
    p : array_like
        Output of :func:`budget_sparsemax`.
    v : array_like
        Tangent (or cotangent) vectors, same shape as ``p``. Masked entries
        of NumPy masked arrays count as 0.
    axis : int, default=-1
        Axis along which the slices lie.

    Returns
    -------
    jv : ndarray or Array API array
        Same shape as ``p``; zero outside the free set.

    Raises
    ------
    ValueError
        If ``p`` has a NaN, infinite or negative entry, or ``v`` a NaN or
        infinite entry (the message names the first offending slice), or if
        the shapes differ.

    Examples
    --------
    >>> from sksparsemax.transforms import budget_sparsemax_jvp
    >>> budget_sparsemax_jvp([1.0, 0.7, 0.3], [1.0, 0.0, 3.0])
    array([ 0. , -1.5,  1.5])
    """
    if _xp.any_foreign(p, v):
        from . import _array_api_budget

        return _array_api_budget.budget_sparsemax_jvp(p, v, axis)
    P, V, shape, axis = pair_to_rows(p, v, axis)
    free = (P > 0) & (P < 1)
    count = np.count_nonzero(free, axis=1).reshape(-1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.sum(V, axis=1, where=free, keepdims=True) / count
    out = np.where(free, V - mean.astype(V.dtype, copy=False), 0).astype(V.dtype, copy=False)
    return from_rows(out, shape, axis)
