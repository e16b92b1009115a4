"""alpha-entmax (Peters, Niculae & Martins, 2019)."""

import numpy as np

from .._checks import check_alpha
from . import _array_api as _xp
from . import _backend
from ._softmax import softmax
from ._validation import (
    as_float_array,
    checked_row_max,
    compiled_rows,
    from_rows,
    pair_to_rows,
    to_rows,
)


def entmax15(z, axis=-1):
    r"""1.5-entmax, computed exactly by sorting.

    .. math::

        \operatorname{entmax}_{1.5}(z) = \arg\max_{p \in \Delta}\;
        p^\top z + H^T_{1.5}(p), \qquad p_i = [z_i/2 - \tau]_+^2,

    with :math:`\tau` such that the entries sum to one. Sort
    :math:`u = z/2` in decreasing order; for each candidate support size
    :math:`k`, with :math:`m_k` and :math:`s_k` the mean and the mean square of
    the :math:`k` largest entries, :math:`\tau_k = m_k - \sqrt{[1/k - (s_k -
    m_k^2)]_+}`, and the support size is the number of :math:`k` with
    :math:`\tau_k \le u_{(k)}` (Peters et al., 2019, Algorithm 2).

    Parameters
    ----------
    z : array_like
        Scores (float32 kept, integers become float64, ``-inf`` entries are
        masks).
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    p : ndarray or Array API array
        Same shape and floating dtype as ``z``, on the simplex, with exact
        zeros.

    Raises
    ------
    ValueError
        If a slice contains NaN or ``+inf`` or is all ``-inf``.

    See Also
    --------
    entmax_bisect : Any alpha >= 1.
    entmax_jvp : Jacobian-vector product.

    References
    ----------
    .. [1] B. Peters, V. Niculae and A. F. T. Martins, "Sparse
       Sequence-to-Sequence Models", ACL 2019.

    Examples
    --------
    >>> from sksparsemax.transforms import entmax15
    >>> entmax15([0.0, 0.0])
    array([0.5, 0.5])
    >>> entmax15([3.0, 1.0, -5.0])
    array([1., 0., 0.])
    """
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xp.entmax15(z, axis)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    kern = _backend.kernels()
    if kern is not None:
        return from_rows(compiled_rows(kern.entmax15_rows, Z, shape), shape, axis)
    zmax = checked_row_max(Z, shape)
    with np.errstate(over="ignore"):
        U = (Z - zmax) / 2  # row maximum 0
    # Entries with u <= -1 are never in the support (tau >= max u - 1):
    # clipping them keeps the prefix sums finite and changes no result.
    srt = -np.sort(-np.maximum(U, -2), axis=1)
    K = Z.shape[1]
    rho = np.arange(1, K + 1, dtype=U.dtype)
    mean = np.cumsum(srt, axis=1) / rho
    mean_sq = np.cumsum(srt * srt, axis=1) / rho
    delta = (1 - rho * (mean_sq - mean * mean)) / rho
    tau = mean - np.sqrt(np.maximum(delta, 0))
    size = np.count_nonzero(tau <= srt, axis=1, keepdims=True)
    tau_star = np.take_along_axis(tau, size - 1, axis=1)
    P = np.maximum(U - tau_star, 0)
    P *= P
    # Rounding in tau leaves row sums within a few ulps of 1; renormalise.
    P /= P.sum(axis=1, keepdims=True)
    return from_rows(P, shape, axis)


def _entmax_threshold(X, alpha, tol, max_iter):
    """Solve ``sum_i [x_i - tau]_+^(1/(alpha-1)) = 1`` row by row.

    ``X`` (n, K) float64 holds ``(alpha - 1) * (z - max z)`` (row maximum 0).
    Safeguarded Newton: the root is bracketed by ``[-1, -K^(1-alpha)]``; each
    step takes the Newton iterate if it falls strictly inside the current
    bracket and bisects otherwise. A row stops when ``|f(tau)| <= tol`` or
    when the bracket is narrower than ``tol`` (relative to ``max(1, |tau|)``).
    Converged rows leave the active set.
    """
    n, K = X.shape
    e = 1.0 / (alpha - 1.0)
    lo = np.full(n, -1.0)
    hi = np.full(n, -float(K) ** (1.0 - alpha))
    tau_out = np.empty(n)
    t = lo.copy()
    rows = np.arange(n)
    sub = X
    for _ in range(max_iter):
        D = sub - t[:, None]
        pos = D > 0
        np.maximum(D, 0, out=D)
        W = np.power(D, e - 1.0, where=pos, out=np.zeros_like(D))
        f = np.einsum("ij,ij->i", W, D) - 1.0
        fp = W.sum(axis=1) * e
        above = f > 0
        lo = np.where(above, t, lo)
        hi = np.where(above, hi, t)
        done = (np.abs(f) <= tol) | (hi - lo <= tol * np.maximum(1.0, np.abs(t)))
        if done.any():
            tau_out[rows[done]] = t[done]
            keep = ~done
            rows, sub, t, f, fp, lo, hi = (a[keep] for a in (rows, sub, t, f, fp, lo, hi))
            if rows.size == 0:
                return tau_out
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = t + f / fp
        inside = (newton > lo) & (newton < hi)
        t = np.where(inside, newton, (lo + hi) / 2)
    tau_out[rows] = t
    return tau_out


def entmax_bisect(z, alpha=1.5, axis=-1, *, tol=None, max_iter=100):
    r"""Compute alpha-entmax for any alpha >= 1, by a bracketed root search.

    .. math::

        \operatorname{entmax}_\alpha(z) = \arg\max_{p \in \Delta}\;
        p^\top z + H^T_\alpha(p), \qquad
        p_i = [(\alpha - 1) z_i - \tau]_+^{1/(\alpha - 1)},

    where :math:`H^T_\alpha(p) = (1 - \sum_i p_i^\alpha) / (\alpha(\alpha-1))`
    is the Tsallis entropy and :math:`\tau` makes the entries sum to one.
    ``alpha = 1`` is softmax (computed as such); ``alpha = 2`` is sparsemax.

    The threshold is bracketed by :math:`[(\alpha-1)\max z - 1,\
    (\alpha-1)\max z - K^{1-\alpha}]` and found by safeguarded Newton steps
    (a step that leaves the current bracket is replaced by bisection). The
    stopping rule, per slice: :math:`|\sum_i p_i - 1| \le` ``tol`` or a
    bracket narrower than ``tol`` (relative), or ``max_iter`` steps. The
    result is then divided by its sum so every slice sums to one. The
    search runs in float64 (a float32 input gives a float32 output).

    Parameters
    ----------
    z : array_like
        Scores (float32 kept, integers become float64, ``-inf`` entries are
        masks).
    alpha : float, default=1.5
        Entmax parameter, ``alpha >= 1``.
    axis : int, default=-1
        Axis along which the distributions lie.
    tol : float, optional
        Tolerance of the stopping rule; default ``4 * eps`` of float64.
    max_iter : int, default=100
        Maximum number of steps of the root search.

    Returns
    -------
    p : ndarray or Array API array
        Same shape and floating dtype as ``z``, on the simplex.

    Raises
    ------
    ValueError
        If ``alpha < 1``; if a slice contains NaN or ``+inf`` or is all
        ``-inf``.

    See Also
    --------
    entmax15 : Exact sort-based algorithm for ``alpha = 1.5``.
    sparsemax : ``alpha = 2``.
    entmax_jvp : Jacobian-vector product.

    References
    ----------
    .. [1] B. Peters, V. Niculae and A. F. T. Martins, "Sparse
       Sequence-to-Sequence Models", ACL 2019.
    .. [2] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 2020.

    Examples
    --------
    >>> from sksparsemax.transforms import entmax_bisect
    >>> entmax_bisect([1.0, 0.2, -1.0], alpha=2.0)  # sparsemax
    array([0.9, 0.1, 0. ])
    >>> entmax_bisect([0.0, 0.0, 0.0], alpha=1.7)
    array([0.333..., 0.333..., 0.333...])
    """
    alpha = check_alpha(alpha)
    if alpha == 1.0:
        return softmax(z, axis=axis)
    if tol is None:
        tol = 4 * np.finfo(np.float64).eps
    if not tol > 0:
        raise ValueError(f"tol must be positive; got tol={tol}.")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter}.")
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xp.entmax_bisect(z, alpha, axis, tol=tol, max_iter=max_iter)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    kern = _backend.kernels()
    if kern is not None:
        params = (alpha, float(tol), int(max_iter))
        P = compiled_rows(kern.entmax_bisect_rows, Z, shape, *params)
        return from_rows(P, shape, axis)
    zmax = checked_row_max(Z, shape)
    with np.errstate(over="ignore"):
        X = (alpha - 1.0) * (Z.astype(np.float64) - zmax)
    tau = _entmax_threshold(X, alpha, tol, int(max_iter))
    X -= tau[:, None]
    np.maximum(X, 0, out=X)
    np.power(X, 1.0 / (alpha - 1.0), out=X)
    X /= X.sum(axis=1, keepdims=True)
    return from_rows(X.astype(Z.dtype, copy=False), shape, axis)


def entmax_jvp(p, v, alpha, axis=-1):
    r"""Jacobian-vector product of alpha-entmax, computed from its output.

    With :math:`s_i = p_i^{2-\alpha}` on the support (0 outside it),

    .. math:: J v = s \odot v - s\,\frac{s^\top v}{\sum_j s_j}.

    ``alpha = 1`` gives the softmax Jacobian, ``alpha = 2`` the sparsemax
    Jacobian. :math:`J` is symmetric, so this is also the vector-Jacobian
    product.

    Parameters
    ----------
    p : array_like
        Output of :func:`entmax15` or :func:`entmax_bisect` at this ``alpha``.
    v : array_like
        Tangent vectors, same shape as ``p``.
    alpha : float
        Entmax parameter, ``alpha >= 1``.
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    jv : ndarray or Array API array
        Same shape as ``p``; zero outside the support.

    Examples
    --------
    >>> from sksparsemax.transforms import entmax_jvp
    >>> entmax_jvp([0.25, 0.75, 0.0], [1.0, 0.0, 3.0], alpha=1.5)
    array([ 0.3169..., -0.3169...,  0.    ])
    """
    alpha = check_alpha(alpha)
    if _xp.any_foreign(p, v):
        return _xp.entmax_jvp(p, v, alpha, axis)
    P, V, shape, axis = pair_to_rows(p, v, axis)
    pos = P > 0
    S = np.power(P, 2.0 - alpha, where=pos, out=np.zeros_like(P))
    SV = S * V
    SV -= S * (SV.sum(axis=1, keepdims=True) / S.sum(axis=1, keepdims=True))
    return from_rows(SV, shape, axis)
