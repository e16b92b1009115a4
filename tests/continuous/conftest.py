"""Independent references for the continuous-attention tests: adaptive quadrature.

Nothing here calls the code under test except the densities' ``pdf`` (itself
checked against quadrature in test_continuous_density.py).
"""

import math

import numpy as np
import pytest
from scipy.integrate import dblquad, quad


def _psi1(t, mj, sj):
    z = (t - mj) / sj
    return math.exp(-0.5 * z * z) / (math.sqrt(2 * math.pi) * sj)


def quad_1d(f, lo, hi, points=()):
    pts = [p for p in points if lo < p < hi]
    val, _ = quad(f, lo, hi, points=pts or None, limit=400, epsabs=1e-14, epsrel=1e-13)
    return val


def beta_gaussian_1d_pdf(mu, sigma2, alpha):
    """p(t) written from MATH.md section 5 (tau from the normalisation, found by quad)."""
    if alpha == 1:
        return lambda t: math.exp(-0.5 * (t - mu) ** 2 / sigma2) / math.sqrt(2 * math.pi * sigma2)
    b = 1 / (alpha - 1)

    def unnorm(t, tau):
        v = (alpha - 1) * (-tau - 0.5 * (t - mu) ** 2 / sigma2)
        return v**b if v > 0 else 0.0

    def mass(tau):
        half = math.sqrt(-2 * tau * sigma2)
        return quad_1d(lambda t: unnorm(t, tau), mu - half, mu + half)

    from scipy.optimize import brentq

    tau = brentq(lambda tau: mass(tau) - 1, -1e4, -1e-12, xtol=1e-15, rtol=1e-15)
    return lambda t: unnorm(t, tau)


@pytest.fixture
def ref_expectation_1d():
    """r_j = int p psi_j by adaptive quad; p from the class's pdf (validated separately)."""

    def ref(density, basis_mu, basis_sigma):
        lo, hi = (float(v) for v in density.support())
        mu, s = float(density.mu), math.sqrt(float(density.sigma2))
        if density.alpha == 1:
            lo, hi = mu - 40 * s, mu + 40 * s
        out = []
        for mj, sj in zip(basis_mu, basis_sigma):
            pts = (mu, mj, mj - 3 * sj, mj + 3 * sj)
            out.append(quad_1d(lambda t: float(density.pdf(t)) * _psi1(t, mj, sj), lo, hi, pts))
        return np.array(out)

    return ref


def polar_quad_2d(f, mu, Sigma, radius, edge=False, epsabs=1e-13):
    """int f(t) dt over the ellipse (t - mu)' Sigma^-1 (t - mu) <= radius^2, by dblquad.

    Whitened polar coordinates t = mu + L r u(angle), dt = det(L) r dr d(angle);
    ``edge=True`` substitutes r = radius sin(phi) (for densities vanishing at the edge).
    """
    L = np.linalg.cholesky(Sigma)
    l00, l10, l11 = L[0, 0], L[1, 0], L[1, 1]
    m0, m1 = mu

    def g(r, ang):
        c, s = math.cos(ang), math.sin(ang)
        return f(m0 + r * l00 * c, m1 + r * (l10 * c + l11 * s)) * r

    if edge:
        # r = radius sin(phi): smooths the (radius^2 - r^2)^beta edge of a compact support
        def h(phi, ang):
            return g(radius * math.sin(phi), ang) * radius * math.cos(phi)

        val, _ = dblquad(h, 0.0, 2 * math.pi, 0.0, math.pi / 2, epsabs=epsabs, epsrel=1e-11)
    else:
        val, _ = dblquad(g, 0.0, 2 * math.pi, 0.0, radius, epsabs=epsabs, epsrel=1e-11)
    return val * l00 * l11


@pytest.fixture
def ref_expectation_2d():
    """r_j = int p psi_j over the support, dblquad in whitened polar coordinates."""

    def ref(density, basis_mu, basis_Sigma):
        mu, Sigma = density.mu, density.Sigma
        radius = 10.0 if density.alpha == 1 else density.support().radius  # 10 sd: tail < 1e-21
        out = []
        for mj, Sj in zip(basis_mu, basis_Sigma):
            P = np.linalg.inv(Sj)
            norm = 1 / (2 * math.pi * math.sqrt(np.linalg.det(Sj)))
            p00, p01, p11 = P[0, 0], P[0, 1], P[1, 1]

            def f(x, y, mj=mj):
                dx, dy = x - mj[0], y - mj[1]
                psi = norm * math.exp(-0.5 * (p00 * dx * dx + 2 * p01 * dx * dy + p11 * dy * dy))
                return float(density.pdf([x, y])) * psi

            out.append(polar_quad_2d(f, mu, Sigma, radius, edge=density.alpha > 1))
        return np.array(out)

    return ref


@pytest.fixture
def ref_pdf_1d():
    return beta_gaussian_1d_pdf


@pytest.fixture
def polar_quad():
    return polar_quad_2d


@pytest.fixture
def quad1():
    return quad_1d
