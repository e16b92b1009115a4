"""Forward pass r = E_p[psi] against adaptive quadrature (quad / dblquad)."""

import numpy as np
import pytest

from sksparsemax.continuous import (
    BetaGaussian,
    GaussianRBF1D,
    GaussianRBF2D,
    MultivariateBetaGaussian,
    rbf_expectation_1d,
    rbf_expectation_2d,
)

BASIS_1D = GaussianRBF1D([0.1, 0.35, 0.5, 0.9, 3.0], [0.02, 0.1, 0.5, 0.05, 0.3])
# (mu, sigma2): support wider than the narrow functions, narrow support, far from the basis
DENSITIES_1D = [(0.3, 0.05), (0.52, 2e-4), (-1.0, 0.5)]


def _tol(basis):
    return 1e-10 / (np.sqrt(2 * np.pi) * basis.sigma)  # relative to max psi_j


@pytest.mark.parametrize("alpha", [1.0, 1.25, 1.5, 2.0, 3.0, 6.0])
@pytest.mark.parametrize("mu, sigma2", DENSITIES_1D)
def test_1d_forward_matches_quad(alpha, mu, sigma2, ref_expectation_1d):
    p = BetaGaussian(mu, sigma2, alpha)
    ref = ref_expectation_1d(p, BASIS_1D.mu, BASIS_1D.sigma)
    r = rbf_expectation_1d(mu, sigma2, BASIS_1D, alpha)
    assert r.shape == (5,)
    assert np.all(np.abs(r - ref) <= _tol(BASIS_1D)), np.abs(r - ref)


@pytest.mark.parametrize("mu, sigma2", DENSITIES_1D + [(0.5, 1e-9), (0.4, 30.0)])
def test_1d_alpha2_closed_form_equals_quadrature_path(mu, sigma2):
    closed = rbf_expectation_1d(mu, sigma2, BASIS_1D, 2.0, method="closed")
    quad_path = rbf_expectation_1d(mu, sigma2, BASIS_1D, 2.0, method="quadrature")
    np.testing.assert_allclose(closed, quad_path, rtol=1e-12, atol=1e-14)


def test_1d_alpha2_narrow_support_matches_quad(ref_expectation_1d):
    # a / sigma_j from 1e-4 to 1: both sides of the switch to the Gauss rule.
    basis = GaussianRBF1D([0.5, 0.52, 0.6], [1.0, 1.0, 1.0])
    for sigma2 in [1e-12, 1e-6, 3e-5, 5e-5, 1e-3, 1.0]:
        p = BetaGaussian(0.5, sigma2, 2.0)
        ref = ref_expectation_1d(p, basis.mu, basis.sigma)
        r = rbf_expectation_1d(0.5, sigma2, basis, 2.0)
        np.testing.assert_allclose(r, ref, rtol=1e-11)


def test_1d_adaptive_quadrature_refines_for_narrow_basis(ref_expectation_1d):
    # Basis functions 100x narrower than the support need hundreds of nodes.
    basis = GaussianRBF1D([0.0, 0.3, -0.71], [0.005, 0.01, 0.007])
    p = BetaGaussian(0.0, 0.5, alpha=1.5)
    ref = ref_expectation_1d(p, basis.mu, basis.sigma)
    with pytest.raises(ValueError, match=r"needs about \d+ quadrature nodes.*n_max=32"):
        rbf_expectation_1d(0.0, 0.5, basis, 1.5, n_max=32)  # 32 nodes are not enough ...
    fine = rbf_expectation_1d(0.0, 0.5, basis, 1.5)
    assert np.all(np.abs(fine - ref) <= _tol(basis))  # ... the adaptive rule gets there
    loose = rbf_expectation_1d(0.0, 0.5, basis, 1.5, tol=1e-5)
    assert np.all(np.abs(loose - ref) <= 1e-5 / (np.sqrt(2 * np.pi) * basis.sigma))


def test_1d_batch_shapes_and_elementwise_agreement():
    mu = np.array([[0.1], [0.5], [0.8]])
    sigma2 = np.array([0.01, 0.1])
    basis = GaussianRBF1D.uniform(6, [0.1, 0.3])
    for alpha in [1.0, 1.5, 2.0]:
        r = rbf_expectation_1d(mu, sigma2, basis, alpha)
        assert r.shape == (3, 2, 12)
        for i in range(3):
            for j in range(2):
                np.testing.assert_allclose(r[i, j], rbf_expectation_1d(mu[i, 0], sigma2[j], basis, alpha), rtol=1e-13)


def test_1d_alpha_to_one_approaches_gaussian():
    gauss = rbf_expectation_1d(0.4, 0.02, BASIS_1D, 1.0)
    errs = [np.max(np.abs(rbf_expectation_1d(0.4, 0.02, BASIS_1D, a) - gauss)) for a in [1.1, 1.03, 1.01]]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 1e-2 * np.max(gauss)


BASIS_2D = GaussianRBF2D(
    [[0.3, 0.5], [0.6, 0.7], [0.45, 0.5], [2.0, -1.0]],
    [[[0.01, 0.0], [0.0, 0.02]], [[0.04, 0.01], [0.01, 0.03]], [[0.1, 0.0], [0.0, 0.1]], [[0.3, 0.1], [0.1, 0.2]]],
)
MU_2D = np.array([0.4, 0.55])
SIGMA_2D = np.array([[0.02, 0.006], [0.006, 0.01]])


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
def test_2d_forward_matches_dblquad(alpha, ref_expectation_2d):
    p = MultivariateBetaGaussian(MU_2D, SIGMA_2D, alpha)
    ref = ref_expectation_2d(p, BASIS_2D.mu, BASIS_2D.Sigma)
    r = rbf_expectation_2d(MU_2D, SIGMA_2D, BASIS_2D, alpha, n_angles=100)
    np.testing.assert_allclose(r, ref, rtol=1e-10, atol=1e-12)


def test_2d_alpha2_small_support_wide_basis(ref_expectation_2d):
    # A rho^2 << 1 along every ray: the radial Gauss-Legendre branch.
    basis = GaussianRBF2D([[0.5, 0.5], [0.8, 0.3]], 0.25 * np.eye(2))
    Sigma = 1e-6 * np.array([[2.0, 0.5], [0.5, 1.0]])
    p = MultivariateBetaGaussian([0.52, 0.49], Sigma, 2.0)
    ref = ref_expectation_2d(p, basis.mu, basis.Sigma)
    r = rbf_expectation_2d([0.52, 0.49], Sigma, basis, 2.0)
    np.testing.assert_allclose(r, ref, rtol=1e-11)


def test_2d_alpha2_converges_with_the_number_of_angles(ref_expectation_2d):
    p = MultivariateBetaGaussian(MU_2D, SIGMA_2D, 2.0)
    ref = ref_expectation_2d(p, BASIS_2D.mu[:2], BASIS_2D.Sigma[:2])
    basis = GaussianRBF2D(BASIS_2D.mu[:2], BASIS_2D.Sigma[:2])
    errors = [
        np.max(np.abs(rbf_expectation_2d(MU_2D, SIGMA_2D, basis, 2.0, n_angles=n) - ref) / ref)
        for n in [4, 8, 16, 32, 64]
    ]
    assert all(e1 < e0 for e0, e1 in zip(errors, errors[1:]))
    assert errors[0] > 1e-3 and errors[-1] < 1e-11


def test_2d_alpha2_closed_equals_quadrature_path():
    mu = np.array([[0.4, 0.55], [0.1, 0.9], [0.7, 0.2]])
    Sigma = np.array([SIGMA_2D, 0.05 * np.eye(2), [[0.001, -0.0005], [-0.0005, 0.002]]])
    closed = rbf_expectation_2d(mu, Sigma, BASIS_2D, 2.0, method="closed")
    quad_path = rbf_expectation_2d(mu, Sigma, BASIS_2D, 2.0, method="quadrature")
    np.testing.assert_allclose(closed, quad_path, rtol=1e-11, atol=1e-14)


def test_2d_batch_broadcasting():
    mu = np.array([[0.2, 0.3], [0.5, 0.5], [0.9, 0.1]])
    r = rbf_expectation_2d(mu[:, None, :], SIGMA_2D * np.array([1.0, 2.0])[:, None, None], BASIS_2D, 2.0)
    assert r.shape == (3, 2, 4)
    for i in range(3):
        for j, s in enumerate([1.0, 2.0]):
            np.testing.assert_allclose(r[i, j], rbf_expectation_2d(mu[i], s * SIGMA_2D, BASIS_2D, 2.0), rtol=1e-13)


def test_2d_alpha_to_one_approaches_gaussian():
    gauss = rbf_expectation_2d(MU_2D, SIGMA_2D, BASIS_2D, 1.0)
    errs = [np.max(np.abs(rbf_expectation_2d(MU_2D, SIGMA_2D, BASIS_2D, a, n_radial=64) - gauss)) for a in [1.1, 1.01]]
    assert errs[0] > errs[1]
    assert errs[1] < 2e-2 * np.max(gauss)


def test_gauss_jacobi_rule_for_large_exponents():
    from scipy.special import roots_jacobi

    from sksparsemax.continuous._utils import _golub_welsch_jacobi, gauss_jacobi

    for a, b in [(0.5, 0.5), (2.0, 0.0), (-0.5, -0.5), (-0.5, 0.0), (3.0, 3.0)]:
        x, w = _golub_welsch_jacobi(40, a, b)
        x_ref, w_ref = roots_jacobi(40, a, b)
        np.testing.assert_allclose(x, x_ref, atol=1e-13)
        np.testing.assert_allclose(w / w.sum(), w_ref / w_ref.sum(), atol=1e-13)
    # beta = 1000, 512 nodes: roots_jacobi overflows; E[x^2] = 1 / (2 beta + 3), E[x^4] = 3 E[x^2] / (2 beta + 5)
    x, w = gauss_jacobi(512, 1000.0, 1000.0)
    assert np.all(np.isfinite(x)) and np.all(w >= 0)
    assert np.sum(w * x**2) == pytest.approx(1 / 2003, rel=1e-10)
    assert np.sum(w * x**4) == pytest.approx(3 / 2003 / 2005, rel=1e-9)


def test_basis_evaluation_matches_scipy():
    from scipy.stats import multivariate_normal, norm

    t = np.linspace(-1, 2, 7)
    np.testing.assert_allclose(BASIS_1D(t), norm.pdf(t[:, None], BASIS_1D.mu, BASIS_1D.sigma), rtol=1e-13, atol=1e-300)
    pts = np.random.default_rng(0).normal(size=(5, 2))
    expected = np.stack([multivariate_normal(m, S).pdf(pts) for m, S in zip(BASIS_2D.mu, BASIS_2D.Sigma)], axis=1)
    np.testing.assert_allclose(BASIS_2D(pts), expected, rtol=1e-12)
