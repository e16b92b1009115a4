"""Closed forms of 1D continuous attention for alpha in {1, 2} (private).

For ``alpha = 1`` the Gaussian product rule gives r and the covariances; for
``alpha = 2`` they are sums of normal cdf and pdf values at the support ends,
shared between the forward pass and the Jacobian.
"""

import numpy as np
from scipy.special import ndtr

from ._utils import gauss_jacobi, half_width

__all__ = []

_SQRT_2PI = np.sqrt(2 * np.pi)
# Below this half-width (in units of the basis width) the alpha = 2 closed forms
# lose digits to cancellation; a 24-node Gauss rule is exact to rounding there.
_NARROW = 0.05
_N_NARROW = 24


def _phi(z):
    return np.exp(-0.5 * z * z) / _SQRT_2PI


def _normal_mass(u, v):
    """Phi(v) - Phi(u) for u <= v, accurate in both tails.

    For u > 0 the mirrored difference Phi(-u) - Phi(-v) avoids cancellation near 1;
    the arguments are swapped before the (only two) ndtr calls.
    """
    flip = u > 0
    lo = np.where(flip, -v, u)
    hi = np.where(flip, -u, v)
    return ndtr(hi) - ndtr(lo)


def _gauss_moments(mu, a, mj, sj, x, w, powers):
    """sum_k w_k x_k**p psi_j(mu + a x_k) for p in powers (w normalised).

    ``mu, a`` and ``mj, sj`` broadcast together to a shape S; returns a list of arrays of shape S.
    Used by the alpha = 2 closed forms where the support is much narrower than the basis.
    """
    z = (mu[..., None] + a[..., None] * x - mj[..., None]) / sj[..., None]
    vals = np.exp(-0.5 * z * z) / (_SQRT_2PI * sj[..., None])
    return [np.sum(vals * (w * x**p), axis=-1) for p in powers]


def closed_terms(mu, sigma2, basis, alpha, want_r, want_jac):
    """alpha in {1, 2}: r and (cov(t, psi), cov((t - mu)^2, psi)), sharing the erf work."""
    mj, sj = basis.mu, basis.sigma
    mu, sigma2 = mu[:, None], sigma2[:, None]
    r = c1 = c2 = None
    if alpha == 1:
        s2 = sigma2 + sj**2
        r = np.exp(-0.5 * (mu - mj) ** 2 / s2) / np.sqrt(2 * np.pi * s2)
        if want_jac:
            e = sigma2 * (mj - mu) / s2  # mean of the product density minus mu
            post_var = sigma2 * sj**2 / s2
            c1, c2 = r * e, r * (post_var + e * e - sigma2)
        return r, c1, c2
    a = half_width(sigma2, alpha)
    h = a / sj
    u = (mu - a - mj) / sj
    v = (mu + a - mj) / sj
    pu, pv, mass = _phi(u), _phi(v), _normal_mass(u, v)
    if want_r:
        # p(t) = (a^2 - (t - mu)^2) / (2 sigma2) = sj^2 (v - z)(z - u) / (2 sigma2), z = (t - mj) / sj
        r = sj**2 / (2 * sigma2) * (v * pu - u * pv - (1 + u * v) * mass)
    if want_jac:
        m = 0.5 * (u + v)
        # With w = z - m in [-h, h]: int w phi = int z phi - m mass, int (w^2 - h^2/3) phi likewise.
        int_z = pu - pv
        int_z2 = mass + u * pu - v * pv
        int_w = int_z - m * mass
        int_w2 = int_z2 - 2 * m * int_z + m * m * mass
        c1 = sj * int_w
        c2 = sj**2 * (int_w2 - h * h / 3 * mass)
    narrow = np.nonzero(np.broadcast_to(h < _NARROW, u.shape))
    if narrow[0].size:
        ab = np.broadcast_to(a, u.shape)[narrow]
        mu_n, mj_n, sj_n = mu[narrow[0], 0], mj[narrow[1]], sj[narrow[1]]
        if want_r:
            x, w = gauss_jacobi(_N_NARROW, 1.0, 1.0)
            (r[narrow],) = _gauss_moments(mu_n, ab, mj_n, sj_n, x, w, [0])
        if want_jac:
            x, w = gauss_jacobi(_N_NARROW, 0.0, 0.0)
            m0, m1, m2 = _gauss_moments(mu_n, ab, mj_n, sj_n, x, w, [0, 1, 2])
            size = 2 * ab  # |S|: the weights are normalised
            c1[narrow] = size * ab * m1
            c2[narrow] = size * ab**2 * (m2 - np.sum(w * x * x) * m0)
    return r, c1, c2
