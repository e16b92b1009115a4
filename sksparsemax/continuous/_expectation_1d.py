"""Forward and backward passes of 1D continuous attention: E_p[psi(t)] and its Jacobian.

The public functions, their validation, and the Gauss-Jacobi quadrature with an a
priori node count for general ``alpha``; the closed forms for ``alpha`` in {1, 2}
are in :mod:`._closed_1d`.
"""

import numpy as np
from scipy.special import gammaln

from .._checks import check_alpha
from ._basis import GaussianRBF1D
from ._closed_1d import closed_terms
from ._utils import (
    as_float_array,
    broadcast,
    check_method,
    check_number,
    check_positive,
    chunks,
    gauss_jacobi,
    jacobian_vjp,
)
from ._utils import half_width as _half_width  # benchmarks/bench_continuous.py imports this name

__all__ = [
    "rbf_expectation_1d",
    "rbf_expectation_and_jacobian_1d",
    "rbf_expectation_jacobian_1d",
    "rbf_expectation_vjp_1d",
]


def _prepare(mu, sigma2, basis, alpha, method):
    alpha = check_alpha(alpha)
    mu = as_float_array(mu, "mu")
    sigma2 = check_positive(sigma2, "sigma2")
    mu, sigma2 = broadcast({"mu": mu, "sigma2": sigma2})
    if not isinstance(basis, GaussianRBF1D):
        raise ValueError(f"basis must be a GaussianRBF1D, got {type(basis).__name__}.")
    check_method(method, alpha)
    use_closed = alpha in (1.0, 2.0) and method != "quadrature"
    shape = mu.shape
    return alpha, mu.ravel(), sigma2.ravel(), shape, use_closed


# ---------------------------------------------------------------------------------------
# Gauss-Jacobi quadrature for general alpha, with the number of nodes chosen a priori.
#
# In x = (t - mu) / a the basis function is g(x) = exp(-(d + h x)^2 / 2) (times
# 1 / (sqrt(2 pi) sigma_j), its maximum), d = (mu - mu_j) / sigma_j, h = a / sigma_j.
# g is entire; on the Bernstein ellipse E_rho (foci -1, 1, semi-axes cosh s, sinh s,
# s = log rho), |g(z)| <= exp(h^2 sinh(s)^2 / 2) because Re (d + h z)^2 >= -h^2 Im(z)^2.
# The integrands are f = q(x) g(x) with q in {x, x^2 - E[x^2], (1 - x^2) / E[1 - x^2]},
# |q| <= (1 + cosh(s)^2) / E[1 - x^2] on E_rho, so the Chebyshev coefficients of f obey
# |c_k| <= 2 M rho^-k (Trefethen, ATAP Thm 8.1). An n-node Gauss rule with positive
# weights summing to 1 is exact to degree 2n - 1, hence its error is at most twice the
# best approximation error:
#
#     |Q_n f - I f| <= 2 sum_{k >= 2n} |c_k| <= 4 M rho^(-2n) / (1 - 1/rho),
#     M = (1 + cosh(s)^2) / E[1 - x^2] * exp(h^2 sinh(s)^2 / 2),
#
# for every s > 0. The rule with n nodes is used for all h up to h_max(n), the largest
# h for which the bound (minimised over a grid of s) is below tol. Nodes are grouped
# into a fixed ladder of sizes (about 12% apart) so that a batch of densities needs
# only a few rules, each applied to its whole group with one matrix product.
# ---------------------------------------------------------------------------------------

_LOG_RHO = np.geomspace(1e-4, 10.0, 400)
_LADDER = np.unique(
    np.concatenate([np.arange(2, 16), np.round(16 * 2 ** (np.arange(0, 120) / 6)).astype(int)])
)
_LADDERS = {}


def _rule(n, exponent):
    """Gauss-Jacobi rule for the weight (1 - x^2)**exponent on [-1, 1], normalised (cached)."""
    return gauss_jacobi(n, exponent, exponent)


def _ladder(gamma, tol, n_min, n_max):
    """Node counts and the largest h = a / sigma each of them integrates to ``tol`` (cached)."""
    key = (float(gamma), float(tol), int(n_min), int(n_max))
    if key not in _LADDERS:
        sizes = _LADDER[(_LADDER > n_min) & (_LADDER < n_max)]
        sizes = np.concatenate([[n_min], sizes, [n_max]]) if n_max > n_min else np.array([n_max])
        s = _LOG_RHO
        e_w = (2 * gamma + 2) / (2 * gamma + 3)  # E[1 - x^2] under (1 - x^2)^gamma
        log_m = np.log((1 + np.cosh(s) ** 2) / e_w)
        slack = np.log(tol) - np.log(4.0) + np.log1p(-np.exp(-s)) - log_m  # (S,)
        # bound <= tol  <=>  h^2 sinh(s)^2 / 2 <= 2 n s + slack
        room = 2 * sizes[:, None] * s + slack
        h2 = np.where(room > 0, 2 * room / np.sinh(s) ** 2, 0.0)
        h_max = np.sqrt(np.max(h2, axis=1))  # past h_max[-1]: more than n_max nodes needed
        if len(_LADDERS) >= 64:
            _LADDERS.pop(next(iter(_LADDERS)))
        _LADDERS[key] = (sizes, np.maximum.accumulate(h_max))
    return _LADDERS[key]


def _nodes_needed(h, gamma, tol):
    """Smallest node count whose error bound is below ``tol`` for ``h = a / sigma``."""
    s = _LOG_RHO
    e_w = (2 * gamma + 2) / (2 * gamma + 3)
    log_m = np.log((1 + np.cosh(s) ** 2) / e_w)
    slack = np.log(tol) - np.log(4.0) + np.log1p(-np.exp(-s)) - log_m
    # h^2 sinh(s)^2 / 2 <= 2 n s + slack  <=>  n >= (h^2 sinh(s)^2 / 2 - slack) / (2 s)
    n = np.min((h * h * np.sinh(s) ** 2 / 2 - slack) / (2 * s))
    return int(np.ceil(n)) + 1


def _too_few_nodes(h, gamma, tol, n_max, a, sigma_min, where):
    """The ``ValueError`` for a density whose error bound needs more than ``n_max`` nodes."""
    needed = _nodes_needed(h, gamma, tol)
    raise ValueError(
        f"The density at {where} (support half-width a = {a:.6g}, {h:.6g} times the "
        f"narrowest basis width {sigma_min:.6g}) needs about {needed} quadrature nodes to "
        f"meet tol={tol:g}, more than n_max={n_max}: pass n_max={needed} or more, or a "
        "larger tol (or use wider basis functions or a smaller sigma2)."
    )


def _jacobi_columns(x, w, gamma, want_r, want_jac):
    """Weight columns: [(1 - x^2) w / E[1 - x^2]] for r, [x w, (x^2 - E[x^2]) w] for the Jacobian."""
    ex2 = 1.0 / (2 * gamma + 3)  # E[x^2] under (1 - x^2)^gamma, exact
    cols = []
    if want_r:
        cols.append(w * (1 - x * x) / (1 - ex2))
    if want_jac:
        cols += [w * x, w * (x * x - ex2)]
    return np.stack(cols, axis=1)


def _jacobi_moments(mu, a, basis, gamma, tol, n_min, n_max, want_r, want_jac, shape=None):
    """Gauss-Jacobi moments of psi for every density: array (B, N, P), P = columns above.

    The weight is (1 - x^2)^gamma with gamma = (2 - alpha) / (alpha - 1), the weight of
    p^(2 - alpha); r uses p = p^(2 - alpha) (1 - x^2) (up to constants), so the forward
    pass and the Jacobian share the nodes and the basis evaluations.
    """
    mj, sj = basis.mu, basis.sigma
    n_b, n_basis = mu.size, mj.size
    inv_s = 1.0 / sj
    sizes, h_max = _ladder(gamma, tol, n_min, n_max)
    # the narrowest basis function sets the node count (the bound holds for every j)
    h = a * inv_s.max()
    level = np.searchsorted(h_max, h)
    if level.size and level.max() >= sizes.size:  # the bound needs more than n_max nodes
        bad = int(np.argmax(level >= sizes.size))
        if shape is None or len(shape) > 0:
            pos = bad if shape is None else tuple(int(i) for i in np.unravel_index(bad, shape))
            where = f"batch index {pos}"
        else:
            where = "the input"
        _too_few_nodes(h[bad], gamma, tol, n_max, a[bad], sj.min(), where)
    n_cols = int(want_r) + 2 * int(want_jac)
    out = np.empty((n_b, n_basis, n_cols))
    counts = np.bincount(level, minlength=sizes.size)
    for lev in np.nonzero(counts)[0]:
        idx = np.nonzero(level == lev)[0] if counts[lev] < n_b else slice(None)
        n = int(sizes[lev])
        x, w = _rule(n, gamma)
        W = _jacobi_columns(x, w, gamma, want_r, want_jac)
        mu_g, a_g = mu[idx], a[idx]
        res = np.empty((mu_g.size, n_basis, n_cols))
        for sl in chunks(mu_g.size, n_basis * n, budget=2**16):
            d = (mu_g[sl, None] - mj) * inv_s  # (b, N)
            hh = a_g[sl, None] * inv_s
            z = hh[..., None] * x
            z += d[..., None]
            np.square(z, out=z)
            z *= -0.5
            np.exp(z, out=z)
            res[sl] = (z.reshape(-1, n) @ W).reshape(z.shape[0], n_basis, n_cols)
        out[idx] = res
    out *= (inv_s / np.sqrt(2 * np.pi))[:, None]
    return out


def _quadrature_terms(mu, sigma2, basis, alpha, tol, n_min, n_max, want_r, want_jac, shape=None):
    """General alpha > 1: r and (cov(t, psi), cov((t - mu)^2, psi)) from one set of moments."""
    a = _half_width(sigma2, alpha)
    beta = 1.0 / (alpha - 1)
    gamma = (2 - alpha) * beta
    m = _jacobi_moments(mu, a, basis, gamma, tol, n_min, n_max, want_r, want_jac, shape)
    r = m[..., 0] if want_r else None
    if not want_jac:
        return r, None, None
    # Z = int p^(2 - alpha) dt = a K^gamma W_gamma, K = (alpha - 1) rho^2 / 2 = (alpha - 1)(-tau)
    rho2 = a * a / sigma2
    log_w = 0.5 * np.log(np.pi) + gammaln(gamma + 1) - gammaln(gamma + 1.5)
    za = np.exp(2 * np.log(a) + gamma * np.log((alpha - 1) * rho2 / 2) + log_w)[:, None]
    k = int(want_r)
    return r, za * m[..., k], za * a[:, None] * m[..., k + 1]


def _compute(mu, sigma2, basis, alpha, method, tol, n_min, n_max, want_r, want_jac):
    """Shared driver: returns (r, jac) reshaped to the batch shape (None where not wanted)."""
    alpha, mu_f, s2_f, shape, use_closed = _prepare(mu, sigma2, basis, alpha, method)
    if use_closed:
        r, c1, c2 = closed_terms(mu_f, s2_f, basis, alpha, want_r, want_jac)
    else:
        n_min, n_max = _check_nodes(n_min, n_max)
        tol = check_number(tol, "tol", strict=True)
        r, c1, c2 = _quadrature_terms(
            mu_f, s2_f, basis, alpha, tol, n_min, n_max, want_r, want_jac, shape
        )
    if r is not None:
        r = r.reshape(shape + (basis.n_basis,))
    jac = None
    if want_jac:
        # cov(t^2, psi) = cov((t - mu)^2, psi) + 2 mu cov(t, psi)
        jac = np.stack([c1, c2 + 2 * mu_f[:, None] * c1], axis=1).reshape(shape + (2, basis.n_basis))
    return r, jac


def _check_nodes(n_min, n_max):
    if int(n_min) != n_min or int(n_max) != n_max or not 1 <= n_min <= n_max:
        raise ValueError(f"n_min and n_max must be integers with 1 <= n_min <= n_max, got {n_min!r}, {n_max!r}.")
    return int(n_min), int(n_max)


def rbf_expectation_1d(mu, sigma2, basis, alpha=2.0, *, method="auto", tol=1e-12, n_min=4, n_max=4096):
    r"""Forward pass of 1D continuous attention: :math:`r = \mathbb{E}_p[\psi(t)]`.

    ``p`` is the beta-Gaussian :class:`BetaGaussian` ``(mu, sigma2, alpha)`` and
    :math:`\psi_j = N(\cdot; \mu_j, \sigma_j^2)` the Gaussian RBFs of ``basis``.
    Closed forms [1]_ [2]_:

    - ``alpha = 1``: :math:`r_j = N(\mu; \mu_j, \sigma^2 + \sigma_j^2)`;
    - ``alpha = 2``: with :math:`u = (\mu - a - \mu_j)/\sigma_j`,
      :math:`v = (\mu + a - \mu_j)/\sigma_j` and :math:`\Phi, \phi` the standard normal
      cdf and pdf, :math:`r_j = \frac{\sigma_j^2}{2\sigma^2}\left[v\phi(u) - u\phi(v) -
      (1 + uv)(\Phi(v) - \Phi(u))\right]`, an algebraic rearrangement of
      :math:`c_0 I_0 + c_1 I_1 + c_2 I_2` that avoids cancellation. Where the support
      is much narrower than the basis (:math:`a < 0.05\,\sigma_j`) a 24-node Gauss rule
      replaces it (exact to rounding there).

    Other ``alpha > 1`` use quadrature adapted to the density: in
    :math:`x = (t - \mu)/a \in [-1, 1]`, :math:`p \propto (1 - x^2)^{\gamma+1}` with
    :math:`\gamma = (2-\alpha)/(\alpha-1)`, so a Gauss-Jacobi rule for the weight
    :math:`(1 - x^2)^\gamma` (that of :math:`p^{2-\alpha}`, shared with the Jacobian)
    applied to :math:`(1 - x^2)\psi_j` integrates the endpoint singularity exactly and
    converges exponentially in the number of nodes. The number of nodes is chosen per
    density, a priori, from a rigorous error bound: :math:`\psi_j(\mu + a x)` is entire
    and bounded by :math:`\exp(h^2\sinh^2 s/2)\max\psi_j` on the Bernstein ellipse
    :math:`E_{e^s}`, :math:`h = a/\sigma_j`, which bounds its Chebyshev coefficients and
    hence the Gauss error, :math:`4 M e^{-2ns}/(1 - e^{-s})`; the smallest node count
    (from a ladder of sizes about 12% apart, at least ``n_min``) whose bound is below
    ``tol`` times :math:`\max\psi_j` for the narrowest basis function is used, about
    :math:`3.7\,a/\min_j\sigma_j + 4` nodes for ``tol = 1e-12``. Densities sharing a node
    count are integrated together with one matrix product. The bound holds for every
    input: a density that would need more than ``n_max`` nodes (a support much wider
    than the narrowest basis function, e.g. a large ``sigma2``) raises a
    ``ValueError`` that gives the node count needed, rather than losing accuracy.

    Parameters
    ----------
    mu : float or array_like
        Locations of the densities.
    sigma2 : float or array_like
        Score scales (not the variances), broadcast with ``mu`` to the batch shape.
    basis : GaussianRBF1D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    method : {'auto', 'closed', 'quadrature'}, default='auto'
        ``'auto'`` uses the closed forms for ``alpha`` in {1, 2} and quadrature
        otherwise; ``'quadrature'`` forces the Gauss-Jacobi rule (``alpha > 1``).
    tol : float, default=1e-12
        Quadrature tolerance, relative to :math:`\max_t \psi_j(t)`.
    n_min, n_max : int, default=4, 4096
        Smallest and largest number of quadrature nodes.

    Returns
    -------
    ndarray of shape (\*batch_shape, N)
        :math:`r_j = \int p(t)\psi_j(t)\,dt`.

    Raises
    ------
    ValueError
        If a density needs more than ``n_max`` quadrature nodes to meet ``tol``
        (the message gives the number needed; pass a larger ``n_max`` or ``tol``).

    See Also
    --------
    rbf_expectation_jacobian_1d : The backward pass.
    rbf_expectation_and_jacobian_1d : Both passes at once.

    References
    ----------
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins et al., "Sparse Continuous Distributions and Fenchel-Young
       Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> from sksparsemax.continuous import GaussianRBF1D, rbf_expectation_1d
    >>> basis = GaussianRBF1D([0.0, 1.0], [1.0, 1.0])
    >>> rbf_expectation_1d(0.0, 1.0, basis, alpha=1.0)  # N(0; mu_j, 2)
    array([0.28209479, 0.21969564])
    >>> rbf_expectation_1d([0.0, 0.5], 0.1, basis, alpha=1.5).shape
    (2, 2)
    """
    r, _ = _compute(mu, sigma2, basis, alpha, method, tol, n_min, n_max, True, False)
    return r


def rbf_expectation_jacobian_1d(
    mu, sigma2, basis, alpha=2.0, *, method="auto", tol=1e-12, n_min=4, n_max=4096
):
    r"""Backward pass: Jacobian of :math:`r = \mathbb{E}_p[\psi]` w.r.t. the canonical parameters.

    With :math:`\theta = [\mu/\sigma^2, -1/(2\sigma^2)]` and :math:`\phi(t) = [t, t^2]`,
    the Jacobian is the :math:`(2-\alpha)`-covariance [1]_ [2]_

    .. math::

        \frac{\partial r}{\partial\theta} = \int p^{2-\alpha}\phi\psi^\top
        - \frac{(\int p^{2-\alpha}\phi)(\int p^{2-\alpha}\psi)^\top}{\int p^{2-\alpha}},

    the covariance :math:`\mathrm{Cov}_p(\phi, \psi)` for ``alpha = 1`` (closed form
    through the Gaussian product rule) and :math:`|S|\,\mathrm{Cov}_{U(S)}(\phi, \psi)`
    for ``alpha = 2`` (closed form with erf). Other ``alpha`` use the Gauss-Jacobi rule
    with weight :math:`p^{2-\alpha} \propto (1-x^2)^{(2-\alpha)/(\alpha-1)}` and the
    a priori node count of :func:`rbf_expectation_1d` (same nodes, same tolerance), and
    :math:`\int p^{2-\alpha} = a K^{\gamma}\sqrt{\pi}\,\Gamma(\gamma+1)/\Gamma(\gamma+3/2)`,
    :math:`K = (\alpha-1)(-\tau)`, :math:`\gamma = (2-\alpha)/(\alpha-1)`.

    Parameters
    ----------
    mu : float or array_like
        Locations of the densities.
    sigma2 : float or array_like
        Score scales, broadcast with ``mu`` to the batch shape.
    basis : GaussianRBF1D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    method : {'auto', 'closed', 'quadrature'}, default='auto'
        As in :func:`rbf_expectation_1d`.
    tol : float, default=1e-12
        Quadrature tolerance, relative to :math:`\max_t \psi_j(t)`.
    n_min, n_max : int, default=4, 4096
        Smallest and largest number of quadrature nodes.

    Returns
    -------
    ndarray of shape (\*batch_shape, 2, N)
        Row 0: :math:`\partial r/\partial\theta_1`; row 1: :math:`\partial r/\partial\theta_2`.

    Raises
    ------
    ValueError
        If a density needs more than ``n_max`` quadrature nodes to meet ``tol``
        (as in :func:`rbf_expectation_1d`).

    See Also
    --------
    rbf_expectation_vjp_1d : Vector-Jacobian product.
    rbf_expectation_and_jacobian_1d : Forward and backward passes at once.
    BetaGaussian.from_canonical : Densities from canonical parameters.

    References
    ----------
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins et al., "Sparse Continuous Distributions and Fenchel-Young
       Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> from sksparsemax.continuous import GaussianRBF1D, rbf_expectation_jacobian_1d
    >>> basis = GaussianRBF1D.uniform(8, widths=0.1)
    >>> rbf_expectation_jacobian_1d([0.2, 0.7], 0.01, basis).shape
    (2, 2, 8)
    """
    _, jac = _compute(mu, sigma2, basis, alpha, method, tol, n_min, n_max, False, True)
    return jac


def rbf_expectation_and_jacobian_1d(
    mu, sigma2, basis, alpha=2.0, *, method="auto", tol=1e-12, n_min=4, n_max=4096
):
    r"""Forward and backward passes at once: :math:`r = \mathbb{E}_p[\psi]` and :math:`\partial r/\partial\theta`.

    Equal to ``(rbf_expectation_1d(...), rbf_expectation_jacobian_1d(...))`` (same
    formulas, same quadrature nodes) at the cost of little more than one of them: the
    closed forms share the normal cdf/pdf evaluations, and the Gauss-Jacobi path shares
    the nodes and the basis evaluations (the forward weight :math:`p` is
    :math:`p^{2-\alpha}` times :math:`(1 - x^2)`, up to constants).

    Parameters
    ----------
    mu : float or array_like
        Locations of the densities.
    sigma2 : float or array_like
        Score scales, broadcast with ``mu`` to the batch shape.
    basis : GaussianRBF1D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    method : {'auto', 'closed', 'quadrature'}, default='auto'
        As in :func:`rbf_expectation_1d`.
    tol : float, default=1e-12
        Quadrature tolerance, relative to :math:`\max_t \psi_j(t)`.
    n_min, n_max : int, default=4, 4096
        Smallest and largest number of quadrature nodes.

    Returns
    -------
    r : ndarray of shape (\*batch_shape, N)
        As :func:`rbf_expectation_1d`.
    jac : ndarray of shape (\*batch_shape, 2, N)
        As :func:`rbf_expectation_jacobian_1d`.

    Raises
    ------
    ValueError
        If a density needs more than ``n_max`` quadrature nodes to meet ``tol``
        (as in :func:`rbf_expectation_1d`).

    See Also
    --------
    rbf_expectation_1d, rbf_expectation_jacobian_1d

    Examples
    --------
    >>> from sksparsemax.continuous import GaussianRBF1D, rbf_expectation_and_jacobian_1d
    >>> basis = GaussianRBF1D.uniform(8, widths=0.1)
    >>> r, jac = rbf_expectation_and_jacobian_1d([0.2, 0.7], 0.01, basis, alpha=1.5)
    >>> r.shape, jac.shape
    ((2, 8), (2, 2, 8))
    """
    return _compute(mu, sigma2, basis, alpha, method, tol, n_min, n_max, True, True)


def rbf_expectation_vjp_1d(mu, sigma2, basis, grad_r, alpha=2.0, **kwargs):
    r"""Vector-Jacobian product :math:`(\partial r/\partial\theta)\,g`: the gradient w.r.t. :math:`\theta`.

    Given :math:`g = \partial\mathcal{L}/\partial r`, returns
    :math:`\partial\mathcal{L}/\partial\theta = J g` with :math:`J` from
    :func:`rbf_expectation_jacobian_1d` [1]_. Chain further to :math:`(\mu, \sigma^2)`
    with :math:`\partial\theta/\partial\mu = [1/\sigma^2, 0]` and
    :math:`\partial\theta/\partial\sigma^2 = [-\mu/\sigma^4, 1/(2\sigma^4)]`.

    Parameters
    ----------
    mu : float or array_like
        Locations of the densities.
    sigma2 : float or array_like
        Score scales, broadcast with ``mu`` to the batch shape.
    basis : GaussianRBF1D
        The N basis functions.
    grad_r : array_like of shape (\*batch_shape, N)
        Upstream gradient with respect to ``r``.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    **kwargs
        Passed to :func:`rbf_expectation_jacobian_1d` (``method``, ``tol``, ...).

    Returns
    -------
    ndarray of shape (\*batch_shape, 2)
        Gradient with respect to :math:`\theta`.

    References
    ----------
    .. [1] A. F. T. Martins et al., "Sparse and Continuous Attention Mechanisms",
       NeurIPS 2020; JMLR 23(257), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import GaussianRBF1D, rbf_expectation_vjp_1d
    >>> basis = GaussianRBF1D.uniform(4, widths=0.2)
    >>> rbf_expectation_vjp_1d([0.3, 0.6], 0.02, basis, np.ones((2, 4))).shape
    (2, 2)
    """
    jac = rbf_expectation_jacobian_1d(mu, sigma2, basis, alpha, **kwargs)
    return jacobian_vjp(jac, grad_r)
