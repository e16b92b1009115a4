"""Budget sparsemax: the Euclidean projection onto the capped simplex."""

import numbers

import numpy as np

from . import _array_api as _xp
from . import _backend
from ._validation import (
    _batch_index,
    as_float_array,
    checked_row_max,
    from_rows,
    pair_to_rows,
    raise_invalid_row,
    to_rows,
)


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
        Y = Z.astype(np.float64) - zmax
    counts = np.count_nonzero(Y > -np.inf, axis=1)
    bad = ~np.isfinite(zmax[:, 0]) | (b > counts)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        head = zmax.copy()
        head[row + 1 :] = 0
        checked_row_max(Z, shape, "z", head)  # raises if the row is invalid
        raise_budget_error(b[: row + 1], counts[: row + 1], shape)
    return Y


def _segment_values(Ys):
    """Breakpoints of ``f(t) = sum_i clip(y_i - t, 0, 1)`` and ``f`` at them.

    ``Ys`` (n, K) holds each row's shifted scores sorted decreasingly
    (``-inf`` masks last). The breakpoints are ``y_i`` (where entry i leaves
    0) and ``y_i - 1`` (where it reaches 1); sorted decreasingly as ``v_k``,
    with ``U_k`` / ``L_k`` the entries whose upper / lower breakpoint is among
    the first k, ``f(t) = sum_{U_k} y - sum_{L_k} (y - 1) - (|U_k| - |L_k|) t``
    on the segment ``[v_{k+1}, v_k]``. Equal breakpoints contribute 0 at
    their own value, so the order among ties does not matter.

    Returns ``(Vs, C)``: the sorted breakpoints (``-inf`` for masks) and
    ``C[:, k] = f(v_k)``, made non-decreasing (``f`` is, but its rounded
    values need not be) and ``+inf`` at masks.
    """
    K = Ys.shape[1]
    with np.errstate(invalid="ignore"):
        V = np.concatenate([Ys, Ys - 1.0], axis=1)
    # Stable: among equal values the upper breakpoints come first, as in the
    # compiled kernel's merge (the two halves are sorted runs: a merge).
    order = np.argsort(-V, axis=1, kind="stable")
    Vs = np.take_along_axis(V, order, axis=1)
    lower = order >= K
    fin = np.isfinite(Vs)
    W = np.where(fin, Vs, 0.0)
    sum_u = np.cumsum(np.where(lower, 0.0, W), axis=1)
    sum_l = np.cumsum(np.where(lower, W, 0.0), axis=1)
    slope = np.cumsum(np.where(lower, -1, 1), axis=1)
    C = np.where(fin, sum_u - sum_l - slope * W, np.inf)
    np.maximum.accumulate(C, axis=1, out=C)
    return Vs, C


def _flat_threshold(Ys, b):
    """Threshold of the rows whose solution is a 0/1 vector, NaN for the others.

    For an integer budget ``b`` with ``y_(b) - y_(b+1) >= 1`` (or ``b`` equal
    to the number of unmasked entries) ``f`` is flat at level ``b`` and the
    projection is the indicator of the b largest scores. Taking ``tau =
    y_(b+1)`` (``-inf`` when there is none) gives it with exact 0s and 1s:
    ``y_(b+1) - tau = 0`` and ``y_(b) - tau`` is the rounded gap, ``>= 1``.
    """
    n = Ys.shape[0]
    whole = b == np.floor(b)
    j = np.where(whole, b, 1).astype(np.intp)
    rows = np.arange(n)
    padded = np.concatenate([Ys, np.full((n, 1), -np.inf)], axis=1)
    last, nxt = padded[rows, j - 1], padded[rows, j]
    with np.errstate(invalid="ignore"):
        flat = whole & (last - nxt >= 1.0)
    return np.where(flat, nxt, np.nan)


def budget_threshold(Y, b):
    """Threshold ``tau`` (n,) of each row of the shifted float64 scores ``Y``.

    ``sum_i clip(y_i - tau, 0, 1) = b`` for the validated budgets ``b`` (n,)
    (``0 < b <= number of finite entries``). The segment of the breakpoints
    where ``f`` crosses ``b`` is located on the prefix sums
    (:func:`_segment_values`); there ``f`` is linear, with free set ``F``
    (``0 < p_i < 1``) and capped set ``C`` (``p_i = 1``), and

    .. math:: \\tau = \\frac{\\sum_{i \\in F} y_i + |C| - b}{|F|},

    evaluated afresh from the row (not from the prefix sums, whose
    cancellation would cost accuracy) and clipped to the segment, so that
    rounding never moves ``tau`` past a breakpoint. A flat ``f`` (an integer
    budget in a gap) is :func:`_flat_threshold`'s case.
    """
    n, K = Y.shape
    if n == 0:
        return np.empty(0)
    Ys = -np.sort(-Y, axis=1)
    Vs, C = _segment_values(Ys)
    k = np.count_nonzero(C < b[:, None], axis=1)  # >= 1: f(max y) = 0 < b
    rows = np.arange(n)
    t_hi = Vs[rows, k - 1]
    t_lo = np.where(k < 2 * K, Vs[rows, np.minimum(k, 2 * K - 1)], -np.inf)
    with np.errstate(invalid="ignore"):
        upper = Y >= t_hi[:, None]
        capped = (Y - 1.0) >= t_hi[:, None]
    free = upper & ~capped
    n_free = np.count_nonzero(free, axis=1)
    s_free = np.sum(np.where(free, Y, 0.0), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (s_free + np.count_nonzero(capped, axis=1) - b) / n_free
    tau = np.where(n_free > 0, np.clip(tau, t_lo, t_hi), t_hi)
    flat = _flat_threshold(Ys, b)
    return np.where(np.isnan(flat), tau, flat)


def capped_output(Y, tau):
    """``clip(y - tau, 0, 1)`` row by row, exactly 0 at masks (also for ``tau = -inf``)."""
    with np.errstate(invalid="ignore"):
        D = Y - tau[:, None]
        return np.where(Y > tau[:, None], np.minimum(D, 1.0), 0.0)


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

    The threshold is exact and sort-based: :math:`\sum_i
    \operatorname{clip}(z_i - \tau, 0, 1)` is piecewise linear in
    :math:`\tau`, with breakpoints :math:`z_i` and :math:`z_i - 1`; they are
    sorted, the segment where the sum crosses :math:`b` is found from
    prefix sums, and the linear equation on it is solved in closed form. No
    iteration and no Python loop over slices; O(K log K) per slice. The
    computation runs in float64 on scores shifted by their slice maximum.

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
