"""Beta-Gaussian densities against quadrature, closed forms and sampling."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import gamma as gamma_fn

from sksparsemax.continuous import BetaGaussian, MultivariateBetaGaussian

ALPHAS = [1.0, 1.25, 1.5, 2.0, 3.0, 6.0]
PARAMS_1D = [(0.3, 0.05), (-2.0, 3.0)]


def _bounds(p):
    lo, hi = (float(v) for v in p.support())
    mu, s = float(p.mu), math.sqrt(float(p.sigma2))
    return (mu - 40 * s, mu + 40 * s) if p.alpha == 1 else (lo, hi)


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("mu, sigma2", PARAMS_1D)
def test_1d_moments_and_entropy_match_quadrature(alpha, mu, sigma2, quad1):
    p = BetaGaussian(mu, sigma2, alpha)
    lo, hi = _bounds(p)
    pdf = lambda t: float(p.pdf(t))  # noqa: E731
    assert quad1(pdf, lo, hi, [mu]) == pytest.approx(1.0, abs=1e-10)
    assert quad1(lambda t: t * pdf(t), lo, hi, [mu]) == pytest.approx(p.mean(), abs=1e-10 * (1 + abs(mu)))
    var = quad1(lambda t: (t - mu) ** 2 * pdf(t), lo, hi, [mu])
    assert p.var() == pytest.approx(var, rel=1e-9)
    assert p.std() == pytest.approx(math.sqrt(var), rel=1e-9)
    if alpha == 1:
        ent = quad1(lambda t: -pdf(t) * float(p.logpdf(t)), lo, hi, [mu])
    else:
        ent = (1 - quad1(lambda t: pdf(t) ** alpha, lo, hi, [mu])) / (alpha * (alpha - 1))
    assert p.tsallis_entropy() == pytest.approx(ent, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
def test_1d_pdf_matches_first_principles(alpha, ref_pdf_1d):
    # Reference: p = [(alpha - 1)(-tau - (t - mu)^2 / (2 sigma2))]_+^(1/(alpha-1)) with tau
    # found by root-finding on the quadrature mass, not from the closed-form radius.
    mu, sigma2 = 0.4, 0.7
    p = BetaGaussian(mu, sigma2, alpha)
    ref = ref_pdf_1d(mu, sigma2, alpha)
    t = np.linspace(mu - 3, mu + 3, 41)
    np.testing.assert_allclose(p.pdf(t), [ref(x) for x in t], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(p.logpdf(t[p.pdf(t) > 0]), np.log([ref(x) for x in t[p.pdf(t) > 0]]), atol=1e-8)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 4.0])
def test_1d_cdf_and_ppf(alpha, quad1):
    p = BetaGaussian(1.0, 0.4, alpha)
    lo, hi = _bounds(p)
    for t in [lo + 0.1, 0.8, 1.0, 1.3, hi - 0.05]:
        assert p.cdf(t) == pytest.approx(quad1(lambda x: float(p.pdf(x)), lo, t, [1.0]), abs=1e-10)
    q = np.array([0.0, 0.01, 0.3, 0.5, 0.9, 1.0]) if alpha > 1 else np.array([0.01, 0.3, 0.5, 0.9])
    np.testing.assert_allclose(p.cdf(p.ppf(q)), q, atol=1e-12)
    assert np.isnan(p.ppf(1.5))


@pytest.mark.parametrize("sigma2", [0.01, 2 / 3, 5.0])
def test_alpha2_closed_forms(sigma2):
    mu = 0.7
    p = BetaGaussian(mu, sigma2, alpha=2.0)
    a = (1.5 * sigma2) ** (1 / 3)
    lo, hi = p.support()
    assert lo == pytest.approx(mu - a, rel=1e-13) and hi == pytest.approx(mu + a, rel=1e-13)
    assert p.tau() == pytest.approx(-(a**2) / (2 * sigma2), rel=1e-13)
    assert p.pdf(mu) == pytest.approx(-p.tau(), rel=1e-13)
    assert p.var() == pytest.approx(a**2 / 5, rel=1e-13)
    t = np.linspace(mu - 1.2 * a, mu + 1.2 * a, 25)
    np.testing.assert_allclose(p.pdf(t), np.maximum(a**2 - (t - mu) ** 2, 0) / (2 * sigma2), atol=1e-13)


def test_logpdf_is_minus_inf_outside_the_support():
    p = BetaGaussian(0.0, 2 / 3, alpha=2.0)  # support [-1, 1]
    out = p.logpdf([-3.0, -1.0, 1.0, 1.5])
    assert np.all(np.isneginf(out))
    assert np.all(p.pdf([-3.0, 1.0]) == 0)
    assert np.all(np.isfinite(p.logpdf([-0.999, 0.0, 0.999])))
    # alpha = 1 has full support
    assert np.isfinite(BetaGaussian(0.0, 1.0, alpha=1.0).logpdf(30.0))


def test_general_radius_formula():
    # half-width a = R (sigma2)^(1/(alpha+1)), R(1, 2) = (3/2)^(1/3)
    for sigma2 in [0.1, 1.0, 7.0]:
        lo, hi = BetaGaussian(0.0, sigma2, alpha=2.0).support()
        assert hi == pytest.approx(1.5 ** (1 / 3) * sigma2 ** (1 / 3), rel=1e-13)
    for alpha in [1.5, 3.0]:
        a1 = BetaGaussian(0.0, 1.0, alpha).support()[1]
        a2 = BetaGaussian(0.0, 5.0, alpha).support()[1]
        assert a2 / a1 == pytest.approx(5.0 ** (1 / (alpha + 1)), rel=1e-12)


def test_alpha_to_one_approaches_gaussian():
    mu, sigma2 = 0.5, 0.3
    gauss = BetaGaussian(mu, sigma2, alpha=1.0)
    t = np.linspace(mu - 2, mu + 2, 31)
    errors = []
    for alpha in [1.1, 1.01, 1.001]:
        p = BetaGaussian(mu, sigma2, alpha)
        errors.append(np.max(np.abs(p.pdf(t) - gauss.pdf(t))))
        assert p.var() == pytest.approx(sigma2, rel=5 * (alpha - 1))
        assert p.tsallis_entropy() == pytest.approx(gauss.tsallis_entropy(), abs=5 * (alpha - 1))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 2e-3


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
def test_1d_rvs_moments_and_ks(alpha):
    p = BetaGaussian(0.2, 0.5, alpha)
    x = p.rvs(size=20000, random_state=0)
    lo, hi = p.support()
    assert np.all((x >= lo) & (x <= hi))
    se = math.sqrt(p.var() / x.size)
    assert abs(x.mean() - p.mean()) < 5 * se
    assert x.var() == pytest.approx(p.var(), rel=0.05)
    assert stats.kstest(x, p.cdf).pvalue > 1e-3


def test_1d_batch_broadcasting():
    mu = np.array([[0.0], [1.0], [-2.0]])
    sigma2 = np.array([0.1, 0.5, 1.0, 3.0])
    p = BetaGaussian(mu, sigma2, alpha=1.5)
    assert p.batch_shape == (3, 4)
    t = 0.3
    out = p.pdf(t)
    for i in range(3):
        for j in range(4):
            single = BetaGaussian(mu[i, 0], sigma2[j], alpha=1.5)
            assert out[i, j] == single.pdf(t)
            assert p.var()[i, j] == single.var()
            assert p.tau()[i, j] == single.tau()
    x = p.rvs(random_state=1)
    assert x.shape == (3, 4)
    assert p.rvs(size=(5, 3, 4), random_state=1).shape == (5, 3, 4)


def test_1d_canonical_roundtrip():
    p = BetaGaussian([0.3, -1.0], [0.2, 4.0], alpha=1.7)
    theta = p.canonical()
    np.testing.assert_allclose(theta, [[1.5, -2.5], [-0.25, -0.125]])
    q = BetaGaussian.from_canonical(theta, alpha=1.7)
    np.testing.assert_allclose(q.mu, p.mu)
    np.testing.assert_allclose(q.sigma2, p.sigma2)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
def test_multivariate_d1_matches_univariate(alpha):
    p1 = BetaGaussian(0.3, 0.8, alpha)
    pd = MultivariateBetaGaussian([0.3], [[0.8]], alpha)
    t = np.linspace(-2, 2, 17)
    np.testing.assert_allclose(pd.pdf(t[:, None]), p1.pdf(t), rtol=1e-12)
    assert pd.tau() == pytest.approx(p1.tau(), rel=1e-12)
    assert pd.cov()[0, 0] == pytest.approx(p1.var(), rel=1e-12)
    assert pd.tsallis_entropy() == pytest.approx(p1.tsallis_entropy(), rel=1e-12)
    assert pd.support().radius**2 * 0.8 == pytest.approx(float(p1.support()[1] - 0.3) ** 2, rel=1e-12)


MU2 = np.array([0.4, -0.2])
SIGMA2 = np.array([[0.5, 0.15], [0.15, 0.3]])


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
def test_2d_moments_and_entropy_match_dblquad(alpha, polar_quad):
    p = MultivariateBetaGaussian(MU2, SIGMA2, alpha)
    radius = 12.0 if alpha == 1 else p.support().radius

    def integral(g):
        return polar_quad(lambda x, y: g(x, y, float(p.pdf([x, y]))), MU2, SIGMA2, radius, edge=alpha > 1)

    assert integral(lambda x, y, v: v) == pytest.approx(1.0, abs=1e-9)
    mean = [integral(lambda x, y, v: x * v), integral(lambda x, y, v: y * v)]
    np.testing.assert_allclose(mean, p.mean(), atol=1e-9)
    d0, d1 = MU2
    cov = [
        integral(lambda x, y, v: (x - d0) ** 2 * v),
        integral(lambda x, y, v: (x - d0) * (y - d1) * v),
        integral(lambda x, y, v: (y - d1) ** 2 * v),
    ]
    np.testing.assert_allclose(cov, p.cov()[[0, 0, 1], [0, 1, 1]], rtol=1e-8, atol=1e-11)
    if alpha == 1:
        ent = integral(lambda x, y, v: -v * math.log(v) if v > 0 else 0.0)
    else:
        ent = (1 - integral(lambda x, y, v: v**alpha)) / (alpha * (alpha - 1))
    assert p.tsallis_entropy() == pytest.approx(ent, rel=1e-8)


def test_2d_alpha2_closed_forms():
    p = MultivariateBetaGaussian(MU2, SIGMA2, alpha=2.0)
    det = np.linalg.det(SIGMA2)
    tau = -((math.pi * math.sqrt(det)) ** -0.5)
    assert p.tau() == pytest.approx(tau, rel=1e-13)
    np.testing.assert_allclose(p.cov(), (-tau / 3) * SIGMA2, rtol=1e-13)
    # support: the pdf vanishes on the ellipse (t - mu)' Sigma^-1 (t - mu) = -2 tau
    L = np.linalg.cholesky(SIGMA2)
    ang = np.linspace(0, 2 * np.pi, 9)
    u = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    rad = math.sqrt(-2 * tau)
    assert p.support().radius == pytest.approx(rad, rel=1e-13)
    assert np.all(p.pdf(MU2 + 0.999 * rad * u @ L.T) > 0)
    assert np.all(np.isneginf(p.logpdf(MU2 + 1.001 * rad * u @ L.T)))
    assert np.all(p.support().contains(MU2 + 0.999 * rad * u @ L.T))
    assert not np.any(p.support().contains(MU2 + 1.001 * rad * u @ L.T))


@pytest.mark.parametrize("alpha", [1.5, 2.0, 4.0])
def test_3d_normalisation_radial_quadrature(alpha, quad1):
    # In whitened coordinates the density is radial: int p = det(L) |S^2| int_0^rho p(r) r^2 dr.
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    Sigma = A @ A.T + 0.5 * np.eye(3)
    mu = np.array([1.0, 0.0, -1.0])
    p = MultivariateBetaGaussian(mu, Sigma, alpha)
    L = np.linalg.cholesky(Sigma)
    e = L @ np.array([0.6, 0.0, 0.8])  # unit direction in whitened space
    rho = p.support().radius
    radial = quad1(lambda r: float(p.pdf(mu + r * e)) * r * r, 0.0, rho)
    surface = 2 * math.pi**1.5 / gamma_fn(1.5)
    assert np.prod(np.diag(L)) * surface * radial == pytest.approx(1.0, abs=1e-10)


@pytest.mark.parametrize("alpha", [1.0, 2.0, 3.0])
@pytest.mark.parametrize("dim", [2, 3])
def test_multivariate_rvs_moments(alpha, dim):
    rng = np.random.default_rng(dim)
    A = rng.normal(size=(dim, dim))
    Sigma = A @ A.T + 0.3 * np.eye(dim)
    mu = rng.normal(size=dim)
    p = MultivariateBetaGaussian(mu, Sigma, alpha)
    x = p.rvs(size=40000, random_state=0)
    assert x.shape == (40000, dim)
    cov = p.cov()
    se = np.sqrt(np.diag(cov) / x.shape[0])
    assert np.all(np.abs(x.mean(axis=0) - p.mean()) < 5 * se)
    scale = np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    assert np.max(np.abs(np.cov(x.T) - cov) / scale) < 0.04
    if alpha > 1:
        assert np.all(p.support().contains(x))
    assert p.rvs(random_state=0).shape == (dim,)


def test_multivariate_canonical_roundtrip():
    p = MultivariateBetaGaussian(MU2, SIGMA2, alpha=1.3)
    theta = p.canonical()
    P = np.linalg.inv(SIGMA2)
    np.testing.assert_allclose(theta, np.concatenate([P @ MU2, (-0.5 * P).ravel()]))
    q = MultivariateBetaGaussian.from_canonical(theta, alpha=1.3)
    np.testing.assert_allclose(q.mu, MU2, rtol=1e-12)
    np.testing.assert_allclose(q.Sigma, SIGMA2, rtol=1e-12)
