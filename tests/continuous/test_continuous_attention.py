"""Continuous attention: ridge fit, context vectors, gradients."""

import numpy as np
import pytest

from sksparsemax.continuous import (
    BetaGaussian,
    ContinuousAttention1D,
    ContinuousAttention2D,
    GaussianRBF1D,
    GaussianRBF2D,
    MultivariateBetaGaussian,
)

BASIS = GaussianRBF1D.uniform(8, [0.05, 0.2])


def test_ridge_coefficients_match_augmented_least_squares():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(30, 4))
    att = ContinuousAttention1D(BASIS, ridge=0.3).fit(values)
    positions = (np.arange(30) + 0.5) / 30
    F = BASIS(positions)
    # min ||F B - V||^2 + ridge ||B||^2 as an ordinary least-squares problem
    aug_F = np.vstack([F, np.sqrt(0.3) * np.eye(BASIS.n_basis)])
    aug_V = np.vstack([values, np.zeros((BASIS.n_basis, 4))])
    expected = np.linalg.lstsq(aug_F, aug_V, rcond=None)[0]
    np.testing.assert_allclose(att.coef_, expected, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_context_is_the_expected_value_function(alpha, quad1):
    rng = np.random.default_rng(1)
    positions = np.sort(rng.uniform(0, 1, size=25))
    att = ContinuousAttention1D(BASIS, alpha=alpha, ridge=0.01).fit(rng.normal(size=(25, 3)), positions)
    p = BetaGaussian(0.4, 0.01, alpha)
    lo, hi = (float(v) for v in p.support())
    lo, hi = max(lo, -3.0), min(hi, 4.0)
    context = att.context(0.4, 0.01)
    for d in range(3):
        ref = quad1(lambda t: float(p.pdf(t)) * float(BASIS(t) @ att.coef_[:, d]), lo, hi, [0.4])
        assert context[d] == pytest.approx(ref, abs=1e-10 * np.max(np.abs(att.coef_)))


def test_values_in_the_span_are_recovered_without_ridge():
    B = np.random.default_rng(2).normal(size=(BASIS.n_basis, 2))
    positions = np.linspace(0, 1, 100)
    att = ContinuousAttention1D(BASIS, ridge=0.0).fit(BASIS(positions) @ B, positions)
    np.testing.assert_allclose(att.coef_, B, rtol=1e-6, atol=1e-8)


def test_batched_values_pair_with_batched_densities():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(5, 20, 3))
    mu, sigma2 = rng.uniform(0, 1, 5), rng.uniform(0.001, 0.05, 5)
    att = ContinuousAttention1D(BASIS).fit(values)
    context = att.context(mu, sigma2)
    assert context.shape == (5, 3)
    for b in range(5):
        single = ContinuousAttention1D(BASIS).fit(values[b]).context(mu[b], sigma2[b])
        np.testing.assert_allclose(context[b], single, rtol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 2.0, 1.5])
def test_context_vjp_matches_finite_differences(alpha):
    rng = np.random.default_rng(4)
    att = ContinuousAttention1D(BASIS, alpha=alpha).fit(rng.normal(size=(3, 20, 2)))
    mu, sigma2 = np.array([0.2, 0.5, 0.8]), np.array([0.01, 0.02, 0.005])
    g = rng.normal(size=(3, 2))
    grad = att.context_vjp(mu, sigma2, g)
    theta = BetaGaussian(mu, sigma2, alpha).canonical()
    for k in range(2):
        h = 1e-6 * np.abs(theta[:, k])
        tp, tm = theta.copy(), theta.copy()
        tp[:, k] += h
        tm[:, k] -= h
        pp, pm = BetaGaussian.from_canonical(tp, alpha), BetaGaussian.from_canonical(tm, alpha)
        fd = np.sum(g * (att.context(pp.mu, pp.sigma2) - att.context(pm.mu, pm.sigma2)), axis=-1) / (2 * h)
        np.testing.assert_allclose(grad[:, k], fd, rtol=1e-5)


def test_shared_density_gradient_sums_over_the_values_batch():
    rng = np.random.default_rng(5)
    values = rng.normal(size=(4, 20, 2))
    att = ContinuousAttention1D(BASIS).fit(values)
    g = rng.normal(size=(4, 2))
    shared = att.context_vjp(0.5, 0.01, g)
    per_item = att.context_vjp(np.full(4, 0.5), np.full(4, 0.01), g)
    assert shared.shape == (2,)
    np.testing.assert_allclose(shared, per_item.sum(axis=0), rtol=1e-12)


BASIS_2D = GaussianRBF2D.grid(3, [0.1, 0.3])


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_2d_context_is_the_expected_value_function(alpha, polar_quad):
    rng = np.random.default_rng(6)
    image = rng.normal(size=(6, 7, 2))
    att = ContinuousAttention2D(BASIS_2D, alpha=alpha).fit(image)
    positions = ContinuousAttention2D.grid_positions(6, 7)
    assert positions.shape == (42, 2)
    np.testing.assert_allclose(positions[8], [1.5 / 6, 1.5 / 7])
    mu, Sigma = np.array([0.45, 0.6]), np.array([[0.01, 0.003], [0.003, 0.02]])
    p = MultivariateBetaGaussian(mu, Sigma, alpha)
    w = np.array([0.7, -1.3])  # check one projection of the context
    coef_w = att.coef_ @ w
    radius = 10.0 if alpha == 1 else p.support().radius
    def f(x, y):
        return float(p.pdf([x, y])) * float(BASIS_2D([x, y]) @ coef_w)

    ref = polar_quad(f, mu, Sigma, radius, edge=alpha > 1, epsabs=1e-11)
    assert att.context(mu, Sigma) @ w == pytest.approx(ref, abs=1e-9 * np.max(np.abs(coef_w)))


def test_2d_explicit_positions_equal_grid():
    image = np.random.default_rng(7).normal(size=(3, 5, 5, 2))
    grid = ContinuousAttention2D(BASIS_2D).fit(image)
    flat = ContinuousAttention2D(BASIS_2D).fit(image.reshape(3, 25, 2), ContinuousAttention2D.grid_positions(5, 5))
    np.testing.assert_allclose(grid.coef_, flat.coef_)


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_2d_context_vjp_matches_finite_differences(alpha):
    rng = np.random.default_rng(8)
    att = ContinuousAttention2D(BASIS_2D, alpha=alpha).fit(rng.normal(size=(6, 6, 3)))
    mu, Sigma = np.array([0.45, 0.6]), np.array([[0.01, 0.003], [0.003, 0.02]])
    g = rng.normal(size=3)
    grad = att.context_vjp(mu, Sigma, g)
    theta = MultivariateBetaGaussian(mu, Sigma, alpha).canonical()
    for k in range(6):
        h = 1e-6 * np.max(np.abs(theta))
        tp, tm = theta.copy(), theta.copy()
        tp[k] += h
        tm[k] -= h
        pp = MultivariateBetaGaussian.from_canonical(tp, alpha)
        pm = MultivariateBetaGaussian.from_canonical(tm, alpha)
        fd = g @ (att.context(pp.mu, pp.Sigma) - att.context(pm.mu, pm.Sigma)) / (2 * h)
        assert grad[k] == pytest.approx(fd, rel=1e-5, abs=1e-7 * np.max(np.abs(grad)))
