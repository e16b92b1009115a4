"""Forward and backward passes of 1D continuous attention: E_p[psi(t)] and its Jacobian."""

import numpy as np
from scipy.special import gammaln, ndtr

from ._basis import GaussianRBF1D
from ._utils import (
    as_float_array,
    broadcast,
    check_alpha,
    check_positive,
    chunks,
    gauss_jacobi,
    log_rho2,
)

__all__ = ["rbf_expectation_1d", "rbf_expectation_jacobian_1d", "rbf_expectation_vjp_1d"]

_SQRT_2PI = np.sqrt(2 * np.pi)
# Below this half-width (in units of the basis width) the alpha = 2 closed forms
# lose digits to cancellation; a 24-node Gauss rule is exact to rounding there.
_NARROW = 0.05
_N_NARROW = 24


def _prepare(mu, sigma2, basis, alpha, method):
    alpha = check_alpha(alpha)
    mu = as_float_array(mu, "mu")
    sigma2 = check_positive(sigma2, "sigma2")
    mu, sigma2 = broadcast({"mu": mu, "sigma2": sigma2})
    if not isinstance(basis, GaussianRBF1D):
        raise ValueError(f"basis must be a GaussianRBF1D, got {type(basis).__name__}.")
    if method not in ("auto", "closed", "quadrature"):
        raise ValueError(f"method must be 'auto', 'closed' or 'quadrature', got {method!r}.")
    if method == "closed" and alpha not in (1.0, 2.0):
        raise ValueError(f"method='closed' needs alpha = 1 or 2, got alpha={alpha}.")
    if method == "quadrature" and alpha == 1:
        raise ValueError("method='quadrature' needs alpha > 1 (the support must be compact).")
    use_closed = alpha in (1.0, 2.0) and method != "quadrature"
    shape = mu.shape
    return alpha, mu.ravel(), sigma2.ravel(), shape, use_closed


def _half_width(sigma2, alpha):
    """Support half-width a = rho * sigma (alpha > 1)."""
    return np.sqrt(np.exp(log_rho2(1, alpha, np.log(sigma2))) * sigma2)


def _phi(z):
    return np.exp(-0.5 * z * z) / _SQRT_2PI


def _normal_mass(u, v):
    """Phi(v) - Phi(u) for u <= v, accurate in both tails."""
    return np.where(u > 0, ndtr(-u) - ndtr(-v), ndtr(v) - ndtr(u))


def _rule(n, exponent):
    """Gauss-Jacobi rule for the weight (1 - x^2)**exponent on [-1, 1], normalised."""
    return gauss_jacobi(n, exponent, exponent)


def _gauss_moments(mu, a, mj, sj, x, w, powers):
    """sum_k w_k x_k**p psi_j(mu + a x_k) for p in powers (w normalised).

    ``mu, a`` and ``mj, sj`` broadcast together to a shape S; returns a list of arrays of shape S.
    """
    z = (mu[..., None] + a[..., None] * x - mj[..., None]) / sj[..., None]
    vals = np.exp(-0.5 * z * z) / (_SQRT_2PI * sj[..., None])
    return [np.sum(vals * (w * x**p), axis=-1) for p in powers]


def _adaptive_moments(mu, a, basis, exponent, powers, tol, n_min, n_max):
    """Per-density doubling Gauss-Jacobi rule: moments of shape (len(powers), B, N)."""
    mj, sj = basis.mu, basis.sigma
    scale = 1.0 / (_SQRT_2PI * sj)  # sup of psi_j: the error is measured against it
    out = np.empty((len(powers), mu.size, mj.size))
    active = np.arange(mu.size)
    n = n_min
    previous = None
    while active.size:
        current = np.empty((len(powers), active.size, mj.size))
        x, w = _rule(n, exponent)
        for sl in chunks(active.size, mj.size * n):
            idx = active[sl]
            current[:, sl] = _gauss_moments(mu[idx, None], a[idx, None], mj, sj, x, w, powers)
        if previous is None:
            done = np.zeros(active.size, dtype=bool)
        else:
            err = np.max(np.abs(current - previous) / scale, axis=(0, 2))
            done = err <= tol
        if 2 * n > n_max:
            done[:] = True
        out[:, active[done]] = current[:, done]
        active, previous = active[~done], current[:, ~done]
        n *= 2
    return out


def _closed_forward(mu, sigma2, basis, alpha):
    mj, sj = basis.mu, basis.sigma
    mu, sigma2 = mu[:, None], sigma2[:, None]
    if alpha == 1:
        s2 = sigma2 + sj**2
        return np.exp(-0.5 * (mu - mj) ** 2 / s2) / np.sqrt(2 * np.pi * s2)
    a = _half_width(sigma2, alpha)
    u = (mu - a - mj) / sj
    v = (mu + a - mj) / sj
    # p(t) = (a^2 - (t - mu)^2) / (2 sigma2) = sj^2 (v - z)(z - u) / (2 sigma2), z = (t - mj) / sj
    r = sj**2 / (2 * sigma2) * (v * _phi(u) - u * _phi(v) - (1 + u * v) * _normal_mass(u, v))
    narrow = np.nonzero(np.broadcast_to(a / sj < _NARROW, r.shape))
    if narrow[0].size:
        x, w = _rule(_N_NARROW, 1.0)
        ab = np.broadcast_to(a, r.shape)
        (r[narrow],) = _gauss_moments(mu[narrow[0], 0], ab[narrow], mj[narrow[1]], sj[narrow[1]], x, w, [0])
    return r


def _closed_jacobian(mu, sigma2, basis, alpha):
    """Returns (cov(t, psi), cov((t - mu)^2, psi)) under the (2 - alpha)-weighted measure."""
    mj, sj = basis.mu, basis.sigma
    mu, sigma2 = mu[:, None], sigma2[:, None]
    if alpha == 1:
        s2 = sigma2 + sj**2
        r = np.exp(-0.5 * (mu - mj) ** 2 / s2) / np.sqrt(2 * np.pi * s2)
        e = sigma2 * (mj - mu) / s2  # mean of the product density minus mu
        post_var = sigma2 * sj**2 / s2
        return r * e, r * (post_var + e * e - sigma2)
    a = _half_width(sigma2, alpha)
    h = a / sj
    u = (mu - a - mj) / sj
    v = (mu + a - mj) / sj
    m = 0.5 * (u + v)
    pu, pv, mass = _phi(u), _phi(v), _normal_mass(u, v)
    # With w = z - m in [-h, h]: int w phi = int z phi - m mass, int (w^2 - h^2/3) phi likewise.
    int_z = pu - pv
    int_z2 = mass + u * pu - v * pv
    int_w = int_z - m * mass
    int_w2 = int_z2 - 2 * m * int_z + m * m * mass
    c1 = sj * int_w
    c2 = sj**2 * (int_w2 - h * h / 3 * mass)
    narrow = np.nonzero(np.broadcast_to(h < _NARROW, c1.shape))
    if narrow[0].size:
        x, w = _rule(_N_NARROW, 0.0)
        ab = np.broadcast_to(a, c1.shape)[narrow]
        m0, m1, m2 = _gauss_moments(mu[narrow[0], 0], ab, mj[narrow[1]], sj[narrow[1]], x, w, [0, 1, 2])
        size = 2 * ab  # |S|: the weights are normalised
        c1[narrow] = size * ab * m1
        c2[narrow] = size * ab**2 * (m2 - np.sum(w * x * x) * m0)
    return c1, c2


def _quadrature_jacobian(mu, sigma2, basis, alpha, tol, n_min, n_max):
    a = _half_width(sigma2, alpha)
    beta = 1.0 / (alpha - 1)
    gamma = (2 - alpha) * beta
    m0, m1, m2 = _adaptive_moments(mu, a, basis, gamma, [0, 1, 2], tol, n_min, n_max)
    x, w = _rule(n_min, gamma)
    ex2 = np.sum(w * x * x)  # E[x^2] under (1 - x^2)^gamma, exact for any n >= 2
    # Z = int p^(2 - alpha) dt = a K^gamma W_gamma, K = (alpha - 1) rho^2 / 2 = (alpha - 1)(-tau)
    rho2 = a * a / sigma2
    log_w = 0.5 * np.log(np.pi) + gammaln(gamma + 1) - gammaln(gamma + 1.5)
    z = np.exp(np.log(a) + gamma * np.log((alpha - 1) * rho2 / 2) + log_w)[:, None]
    return z * a[:, None] * m1, z * a[:, None] ** 2 * (m2 - ex2 * m0)


def rbf_expectation_1d(mu, sigma2, basis, alpha=2.0, *, method="auto", tol=1e-12, n_min=32, n_max=4096):
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
    :math:`x = (t - \mu)/a \in [-1, 1]`, :math:`p \propto (1 - x^2)^{1/(\alpha-1)}`, so
    a Gauss-Jacobi rule with that weight integrates the endpoint singularity exactly
    and converges exponentially in the number of nodes. The rule is adaptive: the
    number of nodes doubles from ``n_min``, density by density, until two successive
    rules differ by at most ``tol`` times :math:`\max\psi_j` (or ``n_max`` is reached).

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
    n_min, n_max : int, default=32, 4096
        Smallest and largest number of quadrature nodes.

    Returns
    -------
    ndarray of shape (\*batch_shape, N)
        :math:`r_j = \int p(t)\psi_j(t)\,dt`.

    See Also
    --------
    rbf_expectation_jacobian_1d : The backward pass.

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
    alpha, mu_f, s2_f, shape, use_closed = _prepare(mu, sigma2, basis, alpha, method)
    if use_closed:
        r = _closed_forward(mu_f, s2_f, basis, alpha)
    else:
        a = _half_width(s2_f, alpha)
        (r,) = _adaptive_moments(mu_f, a, basis, 1.0 / (alpha - 1), [0], tol, n_min, n_max)
    return r.reshape(shape + (basis.n_basis,))


def rbf_expectation_jacobian_1d(
    mu, sigma2, basis, alpha=2.0, *, method="auto", tol=1e-12, n_min=32, n_max=4096
):
    r"""Backward pass: Jacobian of :math:`r = \mathbb{E}_p[\psi]` w.r.t. the canonical parameters.

    With :math:`\theta = [\mu/\sigma^2, -1/(2\sigma^2)]` and :math:`\phi(t) = [t, t^2]`,
    the Jacobian is the :math:`(2-\alpha)`-covariance [1]_ [2]_

    .. math::

        \frac{\partial r}{\partial\theta} = \int p^{2-\alpha}\phi\psi^\top
        - \frac{(\int p^{2-\alpha}\phi)(\int p^{2-\alpha}\psi)^\top}{\int p^{2-\alpha}},

    the covariance :math:`\mathrm{Cov}_p(\phi, \psi)` for ``alpha = 1`` (closed form
    through the Gaussian product rule) and :math:`|S|\,\mathrm{Cov}_{U(S)}(\phi, \psi)`
    for ``alpha = 2`` (closed form with erf). Other ``alpha`` use the adaptive
    Gauss-Jacobi rule with weight :math:`p^{2-\alpha} \propto (1-x^2)^{(2-\alpha)/(\alpha-1)}`
    (see :func:`rbf_expectation_1d`), and
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
    n_min, n_max : int, default=32, 4096
        Smallest and largest number of quadrature nodes.

    Returns
    -------
    ndarray of shape (\*batch_shape, 2, N)
        Row 0: :math:`\partial r/\partial\theta_1`; row 1: :math:`\partial r/\partial\theta_2`.

    See Also
    --------
    rbf_expectation_vjp_1d : Vector-Jacobian product.
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
    alpha, mu_f, s2_f, shape, use_closed = _prepare(mu, sigma2, basis, alpha, method)
    if use_closed:
        c1, c2 = _closed_jacobian(mu_f, s2_f, basis, alpha)
    else:
        c1, c2 = _quadrature_jacobian(mu_f, s2_f, basis, alpha, tol, n_min, n_max)
    # cov(t^2, psi) = cov((t - mu)^2, psi) + 2 mu cov(t, psi)
    jac = np.stack([c1, c2 + 2 * mu_f[:, None] * c1], axis=1)
    return jac.reshape(shape + (2, basis.n_basis))


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
    grad_r = as_float_array(grad_r, "grad_r")
    if grad_r.shape != jac.shape[:-2] + (jac.shape[-1],):
        raise ValueError(
            f"grad_r must have shape {jac.shape[:-2] + (jac.shape[-1],)} (batch shape + (N,)), "
            f"got {grad_r.shape}."
        )
    return np.einsum("...kn,...n->...k", jac, grad_r)
