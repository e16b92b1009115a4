"""Fused forward + Jacobian passes, the a priori Gauss-Jacobi node count, and the rules."""

import math

import numpy as np
import pytest
from scipy.special import gammaln, jv

from sksparsemax.continuous import (
    BetaGaussian,
    ContinuousAttention1D,
    ContinuousAttention2D,
    GaussianRBF1D,
    GaussianRBF2D,
    rbf_expectation_1d,
    rbf_expectation_2d,
    rbf_expectation_and_jacobian_1d,
    rbf_expectation_and_jacobian_2d,
    rbf_expectation_jacobian_1d,
    rbf_expectation_jacobian_2d,
    rbf_expectation_vjp_1d,
)
from sksparsemax.continuous._expectation_1d import _ladder
from sksparsemax.continuous._utils import gauss_jacobi

BASIS_1D = GaussianRBF1D([0.1, 0.35, 0.5, 0.9, 3.0], [0.02, 0.1, 0.5, 0.05, 0.3])
MU = np.array([[0.3, 0.52], [-1.0, 0.45]])
SIGMA2 = np.array([[0.05, 2e-4], [0.5, 1e-8]])


@pytest.mark.parametrize(
    "alpha, method",
    [(1.0, "auto"), (1.25, "auto"), (1.5, "auto"), (2.0, "closed"), (2.0, "quadrature"), (3.0, "auto"), (6.0, "auto")],
)
def test_1d_fused_equals_separate_passes(alpha, method):
    r, jac = rbf_expectation_and_jacobian_1d(MU, SIGMA2, BASIS_1D, alpha, method=method)
    assert r.shape == (2, 2, 5) and jac.shape == (2, 2, 2, 5)
    # same nodes and the same formulas: equal up to the order of floating-point sums
    np.testing.assert_allclose(r, rbf_expectation_1d(MU, SIGMA2, BASIS_1D, alpha, method=method), rtol=1e-13, atol=0)
    np.testing.assert_allclose(
        jac, rbf_expectation_jacobian_1d(MU, SIGMA2, BASIS_1D, alpha, method=method), rtol=1e-13, atol=0
    )


BASIS_2D = GaussianRBF2D(
    [[0.3, 0.5], [0.6, 0.7], [0.45, 0.5], [2.0, -1.0]],
    [[[0.01, 0.0], [0.0, 0.02]], [[0.04, 0.01], [0.01, 0.03]], [[0.1, 0.0], [0.0, 0.1]], [[0.3, 0.1], [0.1, 0.2]]],
)
MU_2D = np.array([[0.4, 0.55], [0.52, 0.49], [0.1, 0.9]])
SIGMA_2D = np.array([[[0.02, 0.006], [0.006, 0.01]], [[2e-6, 5e-7], [5e-7, 1e-6]], 0.05 * np.eye(2)])


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_2d_fused_equals_separate_passes(alpha):
    r, jac = rbf_expectation_and_jacobian_2d(MU_2D, SIGMA_2D, BASIS_2D, alpha)
    assert r.shape == (3, 4) and jac.shape == (3, 6, 4)
    np.testing.assert_allclose(r, rbf_expectation_2d(MU_2D, SIGMA_2D, BASIS_2D, alpha), rtol=1e-13, atol=0)
    np.testing.assert_allclose(jac, rbf_expectation_jacobian_2d(MU_2D, SIGMA_2D, BASIS_2D, alpha), rtol=1e-13, atol=0)


def test_2d_alpha2_jacobian_closed_equals_quadrature_path():
    # the receding / approaching ray pairing only changes the odd angle sum (cov(t, psi))
    jac = rbf_expectation_jacobian_2d(MU_2D, SIGMA_2D, BASIS_2D, 2.0, method="closed")
    quad_path = rbf_expectation_jacobian_2d(MU_2D, SIGMA_2D, BASIS_2D, 2.0, method="quadrature", n_radial=256)
    scale = np.max(np.abs(jac), axis=-1, keepdims=True)
    assert np.all(np.abs(jac - quad_path) <= 1e-9 * scale)


def _half_width(sigma2, alpha):
    return float(BetaGaussian(0.0, sigma2, alpha).support()[1])


@pytest.mark.parametrize("alpha", [1.5, 3.0])
@pytest.mark.parametrize("tol", [1e-5, 1e-8, 1e-12])
def test_1d_node_count_meets_tol(alpha, tol, ref_expectation_1d):
    # support half-width from 0.1 to 40 basis widths: the a priori node count must meet tol
    basis = GaussianRBF1D([0.0, 0.13, -0.4], [0.01, 0.03, 0.2])
    for mu, sigma2 in [(0.05, 1e-4), (0.1, 0.02), (0.0, 0.3)]:
        p = BetaGaussian(mu, sigma2, alpha)
        ref = ref_expectation_1d(p, basis.mu, basis.sigma)
        r = rbf_expectation_1d(mu, sigma2, basis, alpha, tol=tol)
        assert np.all(np.abs(r - ref) <= tol / (math.sqrt(2 * math.pi) * basis.sigma)), np.abs(r - ref)


def _fixed_rule_expectation(mu, sigma2, basis, alpha, n):
    """r_j by the n-node Gauss-Jacobi rule of rbf_expectation_1d, whatever its error."""
    gamma = (2 - alpha) / (alpha - 1)
    x, w = gauss_jacobi(n, gamma, gamma)
    a = float(_half_width(np.asarray(sigma2, float), alpha))
    weights = w * (1 - x * x) / (1 - 1 / (2 * gamma + 3))
    t = mu + a * x
    psi = np.exp(-0.5 * ((t[:, None] - basis.mu) / basis.sigma) ** 2) / (
        math.sqrt(2 * math.pi) * basis.sigma
    )
    return weights @ psi


def test_1d_node_count_is_close_to_necessary():
    # the bound-based count is about 3.7 h + 4 nodes for tol = 1e-12 (h = a / sigma) ...
    sizes, h_max = _ladder(0.5, 1e-12, 4, 4096)
    for h in [0.01, 1.0, 10.0, 100.0]:
        n = sizes[np.searchsorted(h_max, h)]
        assert n <= 4.2 * h + 14
    # ... looser tolerances use fewer nodes (n grows like sqrt(log(1 / tol))) ...
    loose_sizes, loose_h = _ladder(0.5, 1e-6, 4, 4096)
    assert loose_sizes[np.searchsorted(loose_h, 50.0)] < 0.85 * sizes[np.searchsorted(h_max, 50.0)]
    # ... and half as many nodes as chosen would miss the tolerance by orders of magnitude
    alpha, sigma2 = 1.5, 0.3
    basis = GaussianRBF1D([0.0, 0.21], [0.01, 0.01])
    h = _half_width(sigma2, alpha) / 0.01
    n = int(sizes[np.searchsorted(h_max, h)])
    fine = rbf_expectation_1d(0.0, sigma2, basis, alpha, n_min=2 * n, n_max=2 * n)
    # (too few nodes for the bound now raise, so the half rule is applied by hand)
    with pytest.raises(ValueError, match="n_max"):
        rbf_expectation_1d(0.0, sigma2, basis, alpha, n_min=n // 2, n_max=n // 2)
    half = _fixed_rule_expectation(0.0, sigma2, basis, alpha, n // 2)
    chosen = rbf_expectation_1d(0.0, sigma2, basis, alpha)
    scale = 1 / (math.sqrt(2 * math.pi) * 0.01)
    assert np.max(np.abs(chosen - fine)) <= 1e-12 * scale
    assert np.max(np.abs(half - fine)) > 1e-8 * scale


def test_1d_batch_groups_by_node_count():
    # densities needing very different node counts, in one batch, equal the one-by-one results
    mu = np.array([0.0, 0.5, 0.2, 0.9])
    sigma2 = np.array([1e-6, 0.5, 0.01, 0.1])
    for alpha in [1.5, 3.0]:
        r, jac = rbf_expectation_and_jacobian_1d(mu, sigma2, BASIS_1D, alpha)
        for b in range(4):
            r_b, jac_b = rbf_expectation_and_jacobian_1d(mu[b], sigma2[b], BASIS_1D, alpha)
            np.testing.assert_allclose(r[b], r_b, rtol=1e-13, atol=1e-300)
            np.testing.assert_allclose(jac[b], jac_b, rtol=1e-12, atol=1e-14 * np.max(np.abs(jac_b)))


def test_1d_node_options_are_checked():
    with pytest.raises(ValueError, match="n_min and n_max"):
        rbf_expectation_1d(0.5, 0.1, BASIS_1D, 1.5, n_min=64, n_max=32)
    with pytest.raises(ValueError, match="tol"):
        rbf_expectation_1d(0.5, 0.1, BASIS_1D, 1.5, tol=0.0)


@pytest.mark.parametrize("exponent", [-0.8, -0.5, 0.0, 2.5])
@pytest.mark.parametrize("n", [40, 600, 2000])
def test_gauss_jacobi_rule_integrates_cosine(exponent, n):
    # E[cos(k x)] under (1 - x^2)^g on [-1, 1] is Gamma(nu + 1) (2 / k)^nu J_nu(k), nu = g + 1/2
    x, w = gauss_jacobi(n, exponent, exponent)
    assert abs(np.sum(w) - 1) < 1e-14 and np.all(w > 0)
    for k in [3.0, 20.0]:
        nu = exponent + 0.5
        exact = math.exp(gammaln(nu + 1) + nu * math.log(2 / k)) * jv(nu, k)
        assert abs(np.sum(w * np.cos(k * x)) - exact) < 1e-11


def test_gauss_jacobi_asymmetric_weight():
    # E[x] under (1 - x)^a (1 + x)^b is (b - a) / (a + b + 2)
    for n in [10, 500]:
        x, w = gauss_jacobi(n, 1.5, -0.3)
        assert np.sum(w * x) == pytest.approx((-0.3 - 1.5) / (1.5 - 0.3 + 2), abs=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0])
def test_attention_1d_context_with_vjp(alpha):
    rng = np.random.default_rng(0)
    att = ContinuousAttention1D(GaussianRBF1D.uniform(8, [0.05, 0.2]), alpha=alpha).fit(rng.normal(size=(3, 20, 2)))
    g = rng.normal(size=(3, 2))
    for mu, sigma2 in [(np.array([0.2, 0.5, 0.8]), np.array([0.01, 0.02, 0.005])), (0.4, 0.01)]:
        context, vjp = att.context_with_vjp(mu, sigma2)
        np.testing.assert_allclose(context, att.context(mu, sigma2), rtol=1e-13)
        np.testing.assert_allclose(vjp(g), att.context_vjp(mu, sigma2, g), rtol=1e-12)
        assert vjp(g).shape == np.shape(mu) + (2,)


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_attention_2d_context_with_vjp(alpha):
    rng = np.random.default_rng(1)
    att = ContinuousAttention2D(GaussianRBF2D.grid(3, [0.1, 0.3]), alpha=alpha).fit(rng.normal(size=(2, 6, 6, 3)))
    mu, Sigma = np.array([[0.45, 0.6], [0.3, 0.2]]), np.array([[0.01, 0.003], [0.003, 0.02]])
    g = rng.normal(size=(2, 3))
    context, vjp = att.context_with_vjp(mu, Sigma)
    np.testing.assert_allclose(context, att.context(mu, Sigma), rtol=1e-13)
    np.testing.assert_allclose(vjp(g), att.context_vjp(mu, Sigma, g), rtol=1e-12)


def test_vjp_uses_the_same_jacobian():
    g = np.random.default_rng(2).normal(size=MU.shape + (5,))
    _, jac = rbf_expectation_and_jacobian_1d(MU, SIGMA2, BASIS_1D, 1.5)
    np.testing.assert_allclose(
        rbf_expectation_vjp_1d(MU, SIGMA2, BASIS_1D, g, 1.5), np.einsum("...kn,...n->...k", jac, g), rtol=1e-13
    )
