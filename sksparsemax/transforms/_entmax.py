"""alpha-entmax (Peters, Niculae & Martins, 2019)."""


import numpy as np

from .._checks import check_alpha_values
from . import _array_api as _xp
from . import _array_api_entmax as _xpe
from . import _backend
from ._entmax15_numpy import entmax15_rows
from ._softmax import softmax
from ._validation import (
    as_float_array,
    check_tol_max_iter,
    checked_row_max,
    compiled_rows,
    from_rows,
    pair_to_rows,
    per_slice,
    to_rows,
)


def entmax15(z, axis=-1):
    r"""1.5-entmax, computed exactly.

    .. math::

        \operatorname{entmax}_{1.5}(z) = \arg\max_{p \in \Delta}\;
        p^\top z + H^T_{1.5}(p), \qquad p_i = [z_i/2 - \tau]_+^2,

    with :math:`\tau` such that the entries sum to one. For a support
    :math:`S` of size :math:`k`, with :math:`m` and :math:`s` the mean and the
    mean square of :math:`u = z/2` over :math:`S`, :math:`\tau_S = m -
    \sqrt{[1/k - (s - m^2)]_+}` (Peters et al., 2019, Algorithm 2, which
    sorts :math:`u` and tries every prefix). No sort is needed: the NumPy
    path brackets :math:`\tau` between Newton steps on the convex, decreasing
    :math:`f(t) = \sum_i [u_i - t]_+^2 - 1` (lower bounds) and the closed
    form on the entries above the lower bound (an upper bound, exact once no
    entry of that set lies below it), on the few candidates of each slice
    and row block by row block (see ``_entmax15_numpy``); the result is the
    closed form on the final support.

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
        return _xpe.entmax15(z, axis)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    kern = _backend.kernels()
    if kern is not None:
        return from_rows(compiled_rows(kern.entmax15_rows, Z, shape), shape, axis)
    return from_rows(entmax15_rows(Z, shape), shape, axis)


def _row_power(D, E, where=True):
    """``D ** E`` with one exponent per row (``E`` of shape (n, 1)), 0 where
    ``where`` is False.

    The exponents are expanded to the full shape: NumPy computes a power
    with a scalar-like exponent by other means (e.g. ``x ** 2`` as ``x * x``)
    than one with an array of exponents, so a broadcast exponent would make a
    row's result depend on how many rows share the call. With a full array
    every entry takes the same elementwise path, and a row's result is the
    same in any batch (per-slice ``alpha`` equals one call per slice).
    """
    E = np.ascontiguousarray(np.broadcast_to(E, D.shape))
    return np.power(D, E, where=where, out=np.zeros_like(D))


def _entmax_threshold(X, alpha, tol, max_iter):
    """Solve ``sum_i [x_i - tau]_+^(1/(alpha-1)) = 1`` row by row.

    ``X`` (n, K) float64 holds ``(alpha - 1) * (z - max z)`` (row maximum 0),
    ``alpha`` (n,) the rows' alphas in ``(1, 2]``. Safeguarded Newton: the root is bracketed by ``[-1, -K^(1-alpha)]``; each
    step takes the Newton iterate if it falls strictly inside the current
    bracket and bisects otherwise. A row stops when ``|f(tau)| <= tol`` or
    when the bracket is narrower than ``tol`` (relative to ``max(1, |tau|)``).
    Converged rows leave the active set.
    """
    n, K = X.shape
    e = 1.0 / (alpha - 1.0)
    lo = np.full(n, -1.0)
    hi = -np.power(float(K), 1.0 - alpha)
    tau_out = np.empty(n)
    t = lo.copy()
    rows = np.arange(n)
    sub = X
    for _ in range(max_iter):
        D = sub - t[:, None]
        pos = D > 0
        np.maximum(D, 0, out=D)
        W = _row_power(D, (e - 1.0)[:, None], pos)
        f = np.einsum("ij,ij->i", W, D) - 1.0
        fp = W.sum(axis=1) * e
        above = f > 0
        lo = np.where(above, t, lo)
        hi = np.where(above, hi, t)
        done = (np.abs(f) <= tol) | (hi - lo <= tol * np.maximum(1.0, np.abs(t)))
        if done.any():
            tau_out[rows[done]] = t[done]
            keep = ~done
            rows, sub, t, f, fp, lo, hi, e = (a[keep] for a in (rows, sub, t, f, fp, lo, hi, e))
            if rows.size == 0:
                return tau_out
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = t + f / fp
        inside = (newton > lo) & (newton < hi)
        t = np.where(inside, newton, (lo + hi) / 2)
    tau_out[rows] = t
    return tau_out


def _entmax_gap(Z, zmax, alpha, tol, max_iter):
    """alpha-entmax (alpha > 2) of the rows ``Z``, in float64, to full accuracy.

    The threshold form ``p_j = [(alpha-1) z_j - tau]_+^(1/(alpha-1))`` is
    ill-conditioned for large alpha: a support entry with ``p_j^(alpha-1)``
    far below the float64 resolution of ``tau`` (e.g. ``p_j = 0.014`` at
    alpha = 50, where ``p_j^49 ~ 1e-90``) is lost. Instead, with ``a = alpha
    - 1`` and ``r`` the smallest support entry (``u = p_r``), the optimality
    conditions read ``p_j^a = u^a + a (z_j - z_r)`` for ``z_j >= z_r``: a sum
    of non-negative terms, so no cancellation. Per row:

    1. Support: ``z_j`` is in it iff ``H(z_j) = sum_i [a (z_i - z_j)]_+^(1/a)
       < 1`` (Campos et al., 2025); ``H`` is monotone in the rank, so a
       binary search over the candidates ``a (max z - z_j) < 1`` sorted
       decreasingly gives ``z_r``, the smallest support value.
    2. ``u``: root of the increasing ``g(u) = m u + sum_{d_j > 0} (u^a +
       d_j)^(1/a) = 1`` (``d_j = a (z_j - z_r)``, ``m`` the ties of ``z_r``).
       ``g(exp(s))`` is convex and increasing in ``s``, and ``g(u) >= m u +
       H(z_r)``, so Newton steps on ``s = log u`` from ``u = (1 - H(z_r)) / m``
       decrease monotonically to the root; they stop when ``|g - 1| <= tol``
       or the step moves ``u`` by at most ``tol``, or after ``max_iter``
       steps. ``dg/du >= 1``: ``u`` is accurate to about ``tol``.
    3. ``p_j = (u^a + d_j)^(1/a)``, ``u`` for the ties of ``z_r``, 0 below.

    For ``a > 1``, ``dp_j/du = (u/p_j)^(a-1) <= 1``: an error in ``u`` is not
    amplified (for ``a < 1`` it would be, and the threshold form is used).

    ``alpha`` (n,) holds the rows' alphas (> 2). Returns the (unnormalised)
    float64 rows.
    """
    n, K = Z.shape
    a = (alpha - 1.0)[:, None]
    e = 1.0 / a
    Zf = Z.astype(np.float64)
    if n == 0 or K == 0:
        return Zf
    with np.errstate(over="ignore", invalid="ignore"):
        gap = a * (np.reshape(zmax, (-1, 1)).astype(np.float64) - Zf)
    cand = gap < 1.0  # p_j^a <= 1 - a (max z - z_j): the others are outside
    ncand = np.count_nonzero(cand, axis=1)
    C = int(ncand.max())
    Y = np.where(cand, Zf, -np.inf)
    Y = -np.sort(-Y, axis=1)[:, :C]  # candidates, decreasing; -inf pads
    rows = np.arange(n)

    def _terms(t):
        # [a (y - t)]_+^(1/a) over the sorted candidates, and d = a (y - t)
        with np.errstate(over="ignore", invalid="ignore"):
            D = a * (Y - t[:, None])
        return _row_power(D, e, D > 0), D

    lo = np.ones(n, dtype=np.intp)  # H(max z) = 0: always in the support
    hi = ncand + 1
    while True:
        act = hi - lo > 1
        if not act.any():
            break
        mid = np.where(act, (lo + hi) // 2, lo)
        W, _ = _terms(Y[rows, mid - 1])
        ok = W.sum(axis=1) < 1.0
        lo = np.where(act & ok, mid, lo)
        hi = np.where(act & ~ok, mid, hi)
    zr = Y[rows, lo - 1]
    W, D = _terms(zr)
    pos = D > 0
    m = np.count_nonzero(D == 0, axis=1).astype(np.float64)
    u = (1.0 - W.sum(axis=1)) / m
    s = np.log(u)
    act = np.arange(n)
    Ds, poss, ms, sa, aa, ea = D, pos, m, s.copy(), a[:, 0], e
    with np.errstate(under="ignore"):
        for _ in range(max_iter):
            ua = np.exp(aa * sa)  # u^a (may underflow to 0: then negligible)
            us = np.exp(sa)
            Wd = Ds + ua[:, None]
            Pw = _row_power(Wd, ea, poss)
            g = ms * us + Pw.sum(axis=1)
            R = np.divide(Pw, Wd, where=poss, out=np.zeros_like(Ds))
            step = (g - 1.0) / (ms * us + ua * R.sum(axis=1))
            sa -= step
            s[act] = sa
            keep = (np.abs(g - 1.0) > tol) & (us * np.abs(step) > tol)
            if not keep.any():
                break
            act, Ds, poss, ms, sa = act[keep], Ds[keep], poss[keep], ms[keep], sa[keep]
            aa, ea = aa[keep], ea[keep]
    u = np.exp(s)
    with np.errstate(under="ignore"):
        ua = np.exp(a[:, 0] * s)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        X = a * (Zf - zr[:, None])
        inside = X > 0
        P = _row_power(X + ua[:, None], e, inside)
    ties = X == 0
    P[ties] = np.broadcast_to(u[:, None], P.shape)[ties]
    return P


def entmax_bisect(z, alpha=1.5, axis=-1, *, tol=None, max_iter=100):
    r"""Compute alpha-entmax for any alpha >= 1, by a bracketed root search.

    .. math::

        \operatorname{entmax}_\alpha(z) = \arg\max_{p \in \Delta}\;
        p^\top z + H^T_\alpha(p), \qquad
        p_i = [(\alpha - 1) z_i - \tau]_+^{1/(\alpha - 1)},

    where :math:`H^T_\alpha(p) = (1 - \sum_i p_i^\alpha) / (\alpha(\alpha-1))`
    is the Tsallis entropy and :math:`\tau` makes the entries sum to one.
    ``alpha = 1`` is softmax (computed as such); ``alpha = 2`` is sparsemax.

    For ``alpha <= 2`` the threshold is bracketed by
    :math:`[(\alpha-1)\max z - 1,\ (\alpha-1)\max z - K^{1-\alpha}]` and
    found by safeguarded Newton steps (a step that leaves the current bracket
    is replaced by bisection); stopping rule, per slice:
    :math:`|\sum_i p_i - 1| \le` ``tol`` or a bracket narrower than ``tol``
    (relative), or ``max_iter`` steps. For ``alpha > 2`` the threshold form
    loses the small support entries (``p_j^{\alpha-1}`` far below the
    resolution of :math:`\tau`), so the slice is parametrised by its
    smallest support entry :math:`u = p_r` instead: :math:`p_j^{\alpha-1} =
    u^{\alpha-1} + (\alpha-1)(z_j - z_r)`, a sum of non-negative terms. The
    support is found exactly (:math:`z_j` is in it iff :math:`\sum_i
    [(\alpha-1)(z_i - z_j)]_+^{1/(\alpha-1)} < 1`, a binary search over the
    sorted candidates) and :math:`u` by Newton steps on :math:`\log u`
    (monotone, convex), stopping when :math:`|\sum_i p_i - 1| \le` ``tol``,
    when a step moves :math:`u` by at most ``tol``, or after ``max_iter``
    steps. Every entry is then accurate to a few ulps (absolute) for any
    ``alpha``. The result is divided by its sum so every slice sums to one.
    The search runs in float64 (a float32 input gives a float32 output).

    Parameters
    ----------
    z : array_like
        Scores (float32 kept, integers become float64, ``-inf`` entries are
        masks).
    alpha : float or array_like, default=1.5
        Entmax parameter, ``alpha >= 1``: one for every slice, or one per
        slice (as in the ``entmax`` package), an array of the batch shape
        (the shape of ``z`` without ``axis``) or broadcastable to the shape
        of ``z`` with ``axis`` of length 1 (e.g. ``(n, 1)`` for ``z`` of
        shape ``(n, K)``). Each slice is computed exactly as a call at its
        own alpha: on NumPy input the results are bitwise those of one call
        per slice.
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
    TypeError
        If ``alpha`` is not a real number or an array of real numbers.
    ValueError
        If a value of ``alpha`` is below 1 or not finite, or an array
        ``alpha`` does not fit the shape of ``z``; if a slice contains NaN or
        ``+inf`` or is all ``-inf``.

    See Also
    --------
    entmax15 : Exact algorithm for ``alpha = 1.5``.
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
    >>> entmax_bisect([[1.0, 0.2, -1.0], [1.0, 0.2, -1.0]], alpha=[[1.0], [2.0]])
    array([[0.6310..., 0.2835..., 0.0854...],
           [0.9      , 0.1      , 0.       ]])
    """
    alpha = check_alpha_values(alpha)
    tol, max_iter = check_tol_max_iter(tol, max_iter)
    if isinstance(alpha, float) and alpha == 1.0:
        return softmax(z, axis=axis)
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xpe.entmax_bisect(z, alpha, axis, tol=tol, max_iter=max_iter)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    if isinstance(alpha, float):
        alphas = np.full(Z.shape[0], alpha)
    else:
        alphas = per_slice(alpha, shape, axis)
    P = _entmax_rows(Z, shape, alphas, float(tol), int(max_iter))
    return from_rows(P.astype(Z.dtype, copy=False), shape, axis)


def _entmax_rows(Z, shape, alphas, tol, max_iter):
    """alpha-entmax of the rows ``Z`` (n, K), row ``i`` at ``alphas[i] >= 1``.

    Rows at alpha = 1 are softmax rows; the others go to the numba kernel
    or, on the NumPy path, to the threshold form (alpha <= 2, where
    ``1/(alpha-1) >= 1`` makes it well conditioned: ``|dp_j/dtau| <=
    1/(alpha-1)``) or the smallest-support-entry form (alpha > 2, where the
    threshold form loses the small entries). Every row is computed on its
    own, so a row's result is the same whatever the other rows and alphas.
    Returns float64 rows (or the kernel's dtype), normalised.
    """
    soft = alphas == 1.0
    if soft.any():
        checked_row_max(Z, shape)  # errors name the row of Z, not of a subset
        P = np.empty(Z.shape)
        P[soft] = softmax(Z[soft], axis=1)
        rest = ~soft
        if rest.any():
            P[rest] = _entmax_rows(Z[rest], shape, alphas[rest], tol, max_iter)
        return P
    kern = _backend.kernels()
    if kern is not None:
        return compiled_rows(kern.entmax_bisect_rows, Z, shape, alphas, tol, max_iter)
    zmax = checked_row_max(Z, shape)
    P = np.empty(Z.shape)
    gap = alphas > 2.0
    if gap.any():
        P[gap] = _entmax_gap(Z[gap], zmax[gap], alphas[gap], tol, max_iter)
    if not gap.all():
        thr = ~gap
        with np.errstate(over="ignore"):
            X = (alphas[thr, None] - 1.0) * (Z[thr].astype(np.float64) - zmax[thr])
        tau = _entmax_threshold(X, alphas[thr], tol, max_iter)
        X -= tau[:, None]
        np.maximum(X, 0, out=X)
        X = _row_power(X, 1.0 / (alphas[thr, None] - 1.0))
        P[thr] = X
    P /= P.sum(axis=1, keepdims=True)
    return P


def entmax_jvp(p, v, alpha, axis=-1):
    r"""Jacobian-vector product of alpha-entmax, computed from its output.

    With :math:`s_i = p_i^{2-\alpha}` on the support (0 outside it),

    .. math:: J v = s \odot v - s\,\frac{s^\top v}{\sum_j s_j}.

    ``alpha = 1`` gives the softmax Jacobian, ``alpha = 2`` the sparsemax
    Jacobian. :math:`J` is symmetric, so this is also the vector-Jacobian
    product. It is evaluated in float64 in a form without cancellation (for
    large ``alpha``, :math:`s` spans hundreds of orders of magnitude): see
    ``_entmax_jvp_rows``; a float32 result beyond the float32 range is
    ``inf``.

    Parameters
    ----------
    p : array_like
        Output of :func:`entmax15` or :func:`entmax_bisect` at this ``alpha``.
    v : array_like
        Tangent vectors, same shape as ``p``.
    alpha : float or array_like
        Entmax parameter, ``alpha >= 1``: one, or one per slice (the forms
        :func:`entmax_bisect` takes).
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
    alpha = check_alpha_values(alpha)
    if _xp.any_foreign(p, v):
        return _xpe.entmax_jvp(p, v, alpha, axis)
    P, V, shape, axis = pair_to_rows(p, v, axis)
    if not isinstance(alpha, float):
        alpha = per_slice(alpha, shape, axis)[:, None]
    JV = _entmax_jvp_rows(P, V, alpha)
    with np.errstate(over="ignore"):  # a float32 J v beyond its range is inf
        JV = JV.astype(P.dtype, copy=False)
    return from_rows(JV, shape, axis)


def _entmax_jvp_rows(P, V, alpha):
    """``J v`` row by row, in float64, without cancellation or overflow.

    ``s = p^(2-alpha)`` spans hundreds of orders of magnitude for large
    alpha (``s_j ~ 1e103`` for ``p_j = 0.007`` at alpha = 50), so ``s v - s
    (s.v)/sum(s)`` cancels catastrophically in the entry with the largest
    ``s`` and overflows. With ``M`` that entry, ``w = s / s_M`` (in log
    space, ``W = sum w``) and ``dv = v - v_M``: ``J v_j = s_j (dv_j - delta)``
    with ``delta = sum_k w_k dv_k / W``, and ``J v_M = -sum_k s_k dv_k / W``
    (``s_M w_k = s_k``), both free of cancellation.
    """
    n, K = P.shape
    P = P.astype(np.float64, copy=False)
    V = V.astype(np.float64, copy=False)
    pos = P > 0
    if n == 0 or K == 0:
        return np.zeros_like(P)
    with np.errstate(divide="ignore"):
        L = np.where(pos, (2.0 - alpha) * np.log(np.where(pos, P, 1.0)), -np.inf)
    rows = np.arange(n)
    M = np.argmax(L, axis=1)
    LM = L[rows, M]
    LM = np.where(np.isfinite(LM), LM, 0.0)  # rows without a support give 0
    with np.errstate(under="ignore", over="ignore"):
        w = np.exp(L - LM[:, None])
        S = np.exp(L)
    W = w.sum(axis=1)
    W = np.where(W > 0, W, 1.0)
    dV = np.where(pos, V - V[rows, M][:, None], 0.0)
    delta = np.einsum("ij,ij->i", w, dV) / W
    with np.errstate(over="ignore", invalid="ignore"):
        JV = np.where(pos, S * (dV - delta[:, None]), 0.0)
        Sk = np.where(pos, S, 0.0)
        Sk[rows, M] = 0.0
        JV[rows, M] = np.where(pos[rows, M], -np.einsum("ij,ij->i", Sk, dV) / W, 0.0)
    return JV
