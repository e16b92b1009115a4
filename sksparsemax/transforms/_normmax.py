"""alpha-normmax: the simplex argmax regularised by an alpha-norm."""


import numpy as np

from .._checks import check_alpha
from . import _array_api as _xp
from . import _array_api_normmax as _xpn
from . import _backend
from ._validation import (
    as_float_array,
    check_tol_max_iter,
    checked_row_max,
    compiled_rows,
    from_rows,
    pair_to_rows,
    to_rows,
)


def check_normmax_alpha(alpha, name="alpha"):
    """Return ``alpha`` as a float, raising unless it is a finite real > 1.

    ``alpha = 1`` is refused: :math:`\\|p\\|_1 = 1` is constant on the
    simplex, so the maximiser of :math:`\\langle z, p\\rangle - \\|p\\|_1` is
    any distribution on the largest scores (not unique when they tie), and
    the limit ``alpha -> 1`` (the uniform distribution on the ties) is a
    different mapping, argmax.
    """
    value = check_alpha(alpha, name)
    if value == 1.0:
        raise ValueError(
            f"{name} must be > 1 for normmax; got {name}=1.0 (the 1-norm is "
            "constant on the simplex, so the maximiser is not unique)."
        )
    return value


def _closed_form_2(X):
    """alpha = 2: ``q = [x - tau]_+`` with ``sum q^2 = 1``, by sorting.

    ``X`` (n, K) float64 has row maximum 0. For the ``k`` largest entries,
    with mean ``m_k`` and mean square ``s_k``, ``k (m_k - tau)^2 + k (s_k -
    m_k^2) = 1`` gives ``tau_k = m_k - sqrt([1/k - (s_k - m_k^2)]_+)`` (the
    smaller root: tau lies below the support); the support size is the
    number of ``k`` with ``tau_k <= x_(k)``, the rule of 1.5-entmax
    (Peters et al., 2019, Algorithm 2), whose equation this is. Returns the
    unnormalised ``q``.
    """
    # tau >= max x - 1 = -1: entries <= -1 are outside the support, and
    # clipping them keeps the prefix sums finite (-inf masks) and exact.
    srt = -np.sort(-np.maximum(X, -2.0), axis=1)
    rho = np.arange(1, X.shape[1] + 1, dtype=np.float64)
    mean = np.cumsum(srt, axis=1) / rho
    mean_sq = np.cumsum(srt * srt, axis=1) / rho
    delta = (1 - rho * (mean_sq - mean * mean)) / rho
    tau = mean - np.sqrt(np.maximum(delta, 0))
    size = np.count_nonzero(tau <= srt, axis=1, keepdims=True)
    Q = X - np.take_along_axis(tau, size - 1, axis=1)
    return np.maximum(Q, 0, out=Q)


def _threshold(X, alpha, tol, max_iter):
    """Root ``tau`` of ``sum_j [x_j - tau]_+^(alpha/(alpha-1)) = 1`` per row.

    ``X`` (n, K) float64 has row maximum 0. The root lies in ``[-1,
    -K^(-(alpha-1)/alpha)]`` (``q_max = (-tau)^(1/(alpha-1))`` is at most 1
    and at least ``K^(-1/alpha)``). Newton's method runs on ``F(tau) =
    ||[x - tau]_+||_b - 1``, ``b = alpha/(alpha-1)``, rather than on the sum
    of powers: both are convex and decreasing, but ``F`` is linear for a
    fixed support of equal entries, so its steps stay long where ``b`` is
    large (alpha near 1) and the sum of powers is flat. With ``q_j = [x_j -
    tau]_+^(1/(alpha-1))`` and ``S = sum q_j^alpha``, the step is ``(S^(1/b)
    - 1) S^(1/alpha) / sum q_j``. From the left end, Newton's iterates on a
    convex decreasing function increase monotonically to the root; a step
    that rounding would take outside the current bracket is replaced by
    bisection. A row stops when ``|S - 1| <= tol`` or its bracket is
    narrower than ``tol`` (relative to ``max(1, |tau|)``); converged rows
    leave the active set.
    """
    n, K = X.shape
    a = alpha - 1.0
    e = 1.0 / a
    lo = np.full(n, -1.0)
    hi = np.full(n, -float(K) ** (-a / alpha))
    tau_out = np.empty(n)
    t = lo.copy()
    rows = np.arange(n)
    sub = X
    for _ in range(max_iter):
        D = sub - t[:, None]
        pos = D > 0
        Q = np.power(D, e, where=pos, out=np.zeros_like(D))
        S = np.einsum("ij,ij->i", Q, np.maximum(D, 0, out=D))  # sum q^alpha
        above = S > 1.0
        lo = np.where(above, t, lo)
        hi = np.where(above, hi, t)
        done = (np.abs(S - 1.0) <= tol) | (hi - lo <= tol * np.maximum(1.0, np.abs(t)))
        if done.any():
            tau_out[rows[done]] = t[done]
            keep = ~done
            rows, sub, t, S, Q, lo, hi = (a_[keep] for a_ in (rows, sub, t, S, Q, lo, hi))
            if rows.size == 0:
                return tau_out
        newton = t + (S ** (a / alpha) - 1.0) * S ** (1.0 / alpha) / Q.sum(axis=1)
        inside = (newton > lo) & (newton < hi)
        t = np.where(inside, newton, (lo + hi) / 2)
    tau_out[rows] = t
    return tau_out


def normmax(z, alpha=2.0, axis=-1, *, tol=None, max_iter=100):
    r"""Compute alpha-normmax: the simplex argmax regularised by an alpha-norm.

    .. math::

        \operatorname{normmax}_\alpha(z) = \arg\max_{p \in \Delta}\;
        p^\top z - \|p\|_\alpha, \qquad
        p = \frac{q}{\sum_j q_j}, \quad
        q_j = [z_j - \tau]_+^{1/(\alpha - 1)},

    with :math:`\tau` such that :math:`\sum_j q_j^\alpha = 1` (then
    :math:`q = p / \|p\|_\alpha`). The output is sparse; ``alpha -> 1``
    tends to argmax, ``alpha -> inf`` to the :math:`\ell_\infty` case, the
    uniform distribution on the support of sparsemax (then
    :math:`q_j^\alpha \to z_j - \tau` and :math:`\sum_j [z_j - \tau]_+ =
    1`).

    ``alpha = 2`` is computed exactly by sorting: on a support of size
    :math:`k`, :math:`\sum_j (z_j - \tau)^2 = 1` is a quadratic in
    :math:`\tau` and the support is found by the prefix rule of 1.5-entmax.
    Other ``alpha`` solve for :math:`\tau` in float64 by safeguarded Newton
    steps on :math:`\|[z - \tau]_+\|_{\alpha/(\alpha-1)} - 1` (convex and
    decreasing; a step outside the current bracket :math:`[\max z - 1,\
    \max z - K^{-(\alpha-1)/\alpha}]` is replaced by bisection), stopping
    when :math:`|\sum_j q_j^\alpha - 1| \le` ``tol``, when the bracket is
    narrower than ``tol`` (relative), or after ``max_iter`` steps.

    The threshold form is kept for ``alpha > 2`` too (alpha-entmax switches
    to its smallest support entry there, see :func:`entmax_bisect`): an
    error :math:`\epsilon` in :math:`\tau` moves :math:`p_j` by about
    :math:`\epsilon\, q_j^{2-\alpha} / ((\alpha-1) \sum_k q_k)`, and a
    change :math:`\epsilon` of a score moves it by as much (the Jacobian of
    normmax, unlike that of entmax, has entries of that size:
    :func:`normmax_jvp`). So every entry is accurate to the effect of
    rounding the scores, for any ``alpha``: to a few ulps away from the
    support boundary, and as ill-determined as the problem itself for an
    entry on it (:math:`q_j^{\alpha-1}` near the resolution of
    :math:`\tau`), which no float64 parametrisation avoids: there the
    constraint's sum of O(1) terms carries :math:`q_j^\alpha` below its
    rounding.

    Parameters
    ----------
    z : array_like
        Scores (float32 kept, integers become float64, ``-inf`` entries are
        masks). Computed in float64.
    alpha : float, default=2.0
        Norm index, ``alpha > 1``.
    axis : int, default=-1
        Axis along which the distributions lie.
    tol : float, optional
        Tolerance of the stopping rule; default ``4 * eps`` of float64.
    max_iter : int, default=100
        Maximum number of steps of the root search.

    Returns
    -------
    p : ndarray or Array API array
        Same shape and floating dtype as ``z``, on the simplex, with exact
        zeros.

    Raises
    ------
    ValueError
        If ``alpha <= 1`` (at ``alpha = 1`` the maximiser is not unique);
        if a slice contains NaN or ``+inf`` or is all ``-inf``.

    See Also
    --------
    normmax_jvp : Jacobian-vector product.
    entmax_bisect : The Tsallis-regularised counterpart.
    sksparsemax.losses.NormmaxLoss : Its Fenchel-Young loss.

    References
    ----------
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, P. M. Q. Aguiar,
       M. A. T. Figueiredo, M. Blondel and V. Niculae, "Sparse Continuous
       Distributions and Fenchel-Young Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> from sksparsemax.transforms import normmax
    >>> normmax([0.0, 0.0])
    array([0.5, 0.5])
    >>> normmax([1.0, 0.2, -1.0])  # q = z - 0.0169 on the support, |q| = 1
    array([0.8429..., 0.1570..., 0.    ])
    >>> normmax([3.0, 1.0, -5.0], alpha=4.0)
    array([1., 0., 0.])
    """
    alpha = check_normmax_alpha(alpha)
    tol, max_iter = check_tol_max_iter(tol, max_iter)
    if not isinstance(z, np.ndarray) and _xp.is_foreign(z):
        return _xpn.normmax(z, alpha, axis, tol=tol, max_iter=max_iter)
    z = as_float_array(z)
    Z, shape, axis = to_rows(z, axis)
    kern = _backend.kernels()
    if kern is not None:
        P = compiled_rows(kern.normmax_rows, Z, shape, alpha, tol, max_iter)
        return from_rows(P, shape, axis)
    zmax = checked_row_max(Z, shape)
    with np.errstate(over="ignore"):  # finite - max may overflow to -inf: a mask
        X = Z.astype(np.float64) - zmax
    if alpha == 2.0:
        Q = _closed_form_2(X)
    else:
        tau = _threshold(X, alpha, tol, max_iter)
        Q = X - tau[:, None]
        np.power(Q, 1.0 / (alpha - 1.0), where=Q > 0, out=Q)
        np.maximum(Q, 0, out=Q)  # -inf masks and entries below tau
    Q /= Q.sum(axis=1, keepdims=True)
    return from_rows(Q.astype(Z.dtype, copy=False), shape, axis)


def normmax_jvp(p, v, alpha, axis=-1):
    r"""Jacobian-vector product of alpha-normmax, computed from its output.

    With :math:`N = \|p\|_\alpha`, :math:`q = p / N`, :math:`r_j =
    q_j^{2-\alpha}` on the support (0 outside it) and :math:`w = v -
    \langle p, v\rangle`,

    .. math:: J v = \frac{N}{\alpha - 1}\left(r \odot w - p\,\langle r,
              w\rangle\right).

    (Differentiate :math:`q_j^{\alpha-1} = z_j - \tau` and
    :math:`\sum_j q_j^\alpha = 1`: :math:`d\tau = \langle p, dz\rangle`,
    then normalise.) :math:`J` is symmetric, so this is also the
    vector-Jacobian product; :math:`J \mathbf{1} = 0` and the entries of
    :math:`J v` sum to 0. It is evaluated in float64, with :math:`r` scaled
    by its maximum (in log space: for large ``alpha`` it spans hundreds of
    orders of magnitude); a result beyond the float range is ``inf``.

    Parameters
    ----------
    p : array_like
        Output of :func:`normmax` at this ``alpha``.
    v : array_like
        Tangent vectors, same shape as ``p``.
    alpha : float
        Norm index, ``alpha > 1``.
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    jv : ndarray or Array API array
        Same shape as ``p``; zero outside the support.

    Examples
    --------
    >>> from sksparsemax.transforms import normmax_jvp
    >>> normmax_jvp([0.5, 0.5, 0.0], [1.0, 0.0, 3.0], alpha=2.0)
    array([ 0.3535..., -0.3535...,  0.    ])
    """
    alpha = check_normmax_alpha(alpha)
    if _xp.any_foreign(p, v):
        return _xpn.normmax_jvp(p, v, alpha, axis)
    P, V, shape, axis = pair_to_rows(p, v, axis)
    JV = _jvp_rows(P, V, alpha)
    with np.errstate(over="ignore"):  # a float32 J v beyond its range is inf
        JV = JV.astype(P.dtype, copy=False)
    return from_rows(JV, shape, axis)


def norm_rows(P, alpha):
    """``||p||_alpha`` of each row of the non-negative float64 ``P``, as
    ``max p * ||p / max p||_alpha`` (no underflow of ``p^alpha``)."""
    pmax = P.max(axis=1, initial=0.0)
    scale = np.where(pmax > 0, pmax, 1.0)
    with np.errstate(under="ignore"):
        S = np.einsum("ij->i", (P / scale[:, None]) ** alpha)
    return pmax * S ** (1.0 / alpha)


def _jvp_rows(P, V, alpha):
    """``J v`` row by row, in float64 (see :func:`normmax_jvp`).

    ``r = q^(2-alpha)`` is scaled by its row maximum ``R`` in log space and
    ``N R / (alpha - 1)`` applied last, so nothing overflows before the
    result itself does.
    """
    P = P.astype(np.float64, copy=False)
    V = V.astype(np.float64, copy=False)
    if P.shape[0] == 0:
        return np.zeros_like(P)
    pos = P > 0
    N = norm_rows(P, alpha)
    Nsafe = np.where(N > 0, N, 1.0)
    with np.errstate(divide="ignore"):
        L = np.where(pos, (2.0 - alpha) * np.log(np.where(pos, P, 1.0) / Nsafe[:, None]),
                     -np.inf)
    LM = L.max(axis=1)
    LM = np.where(np.isfinite(LM), LM, 0.0)  # rows without a support give 0
    with np.errstate(under="ignore"):
        rho = np.exp(L - LM[:, None])
    W = np.where(pos, V - np.einsum("ij,ij->i", P, V)[:, None], 0.0)
    B = rho * W - P * np.einsum("ij,ij->i", rho, W)[:, None]
    with np.errstate(over="ignore"):
        scale = np.exp(np.log(Nsafe) + LM - np.log(alpha - 1.0))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(B != 0, B * scale[:, None], 0.0)
