"""Backward pass: Jacobians against central finite differences, VJPs against J g."""

import numpy as np
import pytest
from scipy.integrate import quad

from sksparsemax.continuous import (
    BetaGaussian,
    GaussianRBF1D,
    GaussianRBF2D,
    MultivariateBetaGaussian,
    rbf_expectation_1d,
    rbf_expectation_2d,
    rbf_expectation_jacobian_1d,
    rbf_expectation_jacobian_2d,
    rbf_expectation_vjp_1d,
    rbf_expectation_vjp_2d,
)

BASIS_1D = GaussianRBF1D([0.1, 0.35, 0.5, 0.9, 3.0], [0.02, 0.1, 0.5, 0.05, 0.3])


def _fd_1d(theta, alpha, basis, method, rel_step=1e-5):
    """Central differences of r(theta) for a batch of canonical parameters (B, 2)."""
    cols = []
    for k in range(2):
        h = rel_step * np.abs(theta[:, k])
        tp, tm = theta.copy(), theta.copy()
        tp[:, k] += h
        tm[:, k] -= h
        pp = BetaGaussian.from_canonical(tp, alpha)
        pm = BetaGaussian.from_canonical(tm, alpha)
        rp = rbf_expectation_1d(pp.mu, pp.sigma2, basis, alpha, method=method)
        rm = rbf_expectation_1d(pm.mu, pm.sigma2, basis, alpha, method=method)
        cols.append((rp - rm) / (2 * h[:, None]))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize(
    "alpha, method",
    [(1.0, "auto"), (1.25, "auto"), (1.5, "auto"), (2.0, "closed"), (2.0, "quadrature"), (3.0, "auto"), (6.0, "auto")],
)
def test_1d_jacobian_matches_finite_differences(alpha, method):
    mu = np.array([0.3, 0.52, -1.0, 0.45])
    sigma2 = np.array([0.05, 2e-4, 0.5, 1e-8])
    theta = BetaGaussian(mu, sigma2, alpha).canonical()
    jac = rbf_expectation_jacobian_1d(mu, sigma2, BASIS_1D, alpha, method=method)
    assert jac.shape == (4, 2, 5)
    fd = _fd_1d(theta, alpha, BASIS_1D, method)
    for b in range(4):
        for k in range(2):
            scale = np.max(np.abs(jac[b, k]))
            np.testing.assert_allclose(jac[b, k], fd[b, k], atol=2e-6 * scale, rtol=0)


@pytest.mark.parametrize("alpha", [1.5, 3.0])
def test_1d_jacobian_is_the_2_minus_alpha_covariance(alpha):
    # d r / d theta = int p^(2-alpha) phi psi' - (int p^(2-alpha) phi)(int p^(2-alpha) psi)' / int p^(2-alpha)
    p = BetaGaussian(0.3, 0.05, alpha)
    lo, hi = (float(v) for v in p.support())
    basis = GaussianRBF1D([0.2, 0.5], [0.1, 0.3])

    gamma = (2 - alpha) / (alpha - 1)  # p^(2-alpha) vanishes (or blows up) like ((t-lo)(hi-t))^gamma

    def integral(g):
        def f(t):
            # the ratio p^(2-alpha) / weight is smooth; evaluate it just inside the endpoints
            tt = min(max(t, lo + 1e-9 * (hi - lo)), hi - 1e-9 * (hi - lo))
            return float(p.pdf(tt)) ** (2 - alpha) / ((tt - lo) * (hi - tt)) ** gamma * g(t)

        return quad(f, lo, hi, weight="alg", wvar=(gamma, gamma), epsabs=1e-14, epsrel=1e-13, limit=200)[0]

    z = integral(lambda t: 1.0)
    jac = rbf_expectation_jacobian_1d(0.3, 0.05, basis, alpha)
    for j in range(2):
        psi = lambda t: float(basis(t)[j])  # noqa: E731
        ipsi = integral(psi)
        for k, phi in enumerate([lambda t: t, lambda t: t * t]):
            ref = integral(lambda t: phi(t) * psi(t)) - integral(phi) * ipsi / z
            assert jac[k, j] == pytest.approx(ref, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
def test_1d_vjp_is_jacobian_times_gradient(alpha):
    rng = np.random.default_rng(0)
    mu, sigma2 = rng.uniform(0, 1, size=(2, 3)), rng.uniform(0.001, 0.1, size=(2, 3))
    g = rng.normal(size=(2, 3, 5))
    jac = rbf_expectation_jacobian_1d(mu, sigma2, BASIS_1D, alpha)
    vjp = rbf_expectation_vjp_1d(mu, sigma2, BASIS_1D, g, alpha)
    assert vjp.shape == (2, 3, 2)
    np.testing.assert_allclose(vjp, np.einsum("abkn,abn->abk", jac, g), rtol=1e-13)
    # directional derivative of <g, r> along theta
    theta = BetaGaussian(mu, sigma2, alpha).canonical()
    d = rng.normal(size=theta.shape) * np.abs(theta) * 1e-6
    pp, pm = BetaGaussian.from_canonical(theta + d, alpha), BetaGaussian.from_canonical(theta - d, alpha)
    diff = rbf_expectation_1d(pp.mu, pp.sigma2, BASIS_1D, alpha) - rbf_expectation_1d(pm.mu, pm.sigma2, BASIS_1D, alpha)
    lhs = np.sum(g * diff, axis=-1) / 2
    np.testing.assert_allclose(lhs, np.sum(vjp * d, axis=-1), rtol=1e-5, atol=1e-9 * np.max(np.abs(lhs)))


BASIS_2D = GaussianRBF2D(
    [[0.3, 0.5], [0.6, 0.7], [0.45, 0.5], [2.0, -1.0]],
    [[[0.01, 0.0], [0.0, 0.02]], [[0.04, 0.01], [0.01, 0.03]], [[0.1, 0.0], [0.0, 0.1]], [[0.3, 0.1], [0.1, 0.2]]],
)
MU_2D = np.array([[0.4, 0.55], [0.52, 0.49]])
SIGMA_2D = np.array([[[0.02, 0.006], [0.006, 0.01]], [[2e-6, 5e-7], [5e-7, 1e-6]]])


@pytest.mark.parametrize(
    "alpha, method", [(1.0, "auto"), (1.5, "auto"), (2.0, "closed"), (2.0, "quadrature"), (3.0, "auto")]
)
def test_2d_jacobian_matches_finite_differences(alpha, method):
    jac = rbf_expectation_jacobian_2d(MU_2D, SIGMA_2D, BASIS_2D, alpha, method=method)
    assert jac.shape == (2, 6, 4)
    for b in range(2):
        theta = MultivariateBetaGaussian(MU_2D[b], SIGMA_2D[b], alpha).canonical()
        for k in range(6):
            # Theta_12 and Theta_21 are separate coordinates; from_canonical symmetrises.
            h = 1e-5 * np.max(np.abs(theta[:2] if k < 2 else theta[2:]))
            tp, tm = theta.copy(), theta.copy()
            tp[k] += h
            tm[k] -= h
            pp = MultivariateBetaGaussian.from_canonical(tp, alpha)
            pm = MultivariateBetaGaussian.from_canonical(tm, alpha)
            rp = rbf_expectation_2d(pp.mu, pp.Sigma, BASIS_2D, alpha, method=method)
            rm = rbf_expectation_2d(pm.mu, pm.Sigma, BASIS_2D, alpha, method=method)
            fd = (rp - rm) / (2 * h)
            scale = np.max(np.abs(jac[b, k]))
            np.testing.assert_allclose(jac[b, k], fd, atol=5e-6 * scale, rtol=0)


@pytest.mark.parametrize("alpha", [1.0, 2.0, 1.5])
def test_2d_vjp_is_jacobian_times_gradient(alpha):
    g = np.random.default_rng(1).normal(size=(2, 4))
    jac = rbf_expectation_jacobian_2d(MU_2D, SIGMA_2D, BASIS_2D, alpha)
    vjp = rbf_expectation_vjp_2d(MU_2D, SIGMA_2D, BASIS_2D, g, alpha)
    assert vjp.shape == (2, 6)
    np.testing.assert_allclose(vjp, np.einsum("bkn,bn->bk", jac, g), rtol=1e-13)
