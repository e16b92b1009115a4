"""Bad parameters get ValueErrors naming the parameter."""

import numpy as np
import pytest

from sksparsemax.continuous import (
    BetaGaussian,
    ContinuousAttention1D,
    ContinuousAttention2D,
    GaussianRBF1D,
    GaussianRBF2D,
    MultivariateBetaGaussian,
    rbf_expectation_1d,
    rbf_expectation_2d,
    rbf_expectation_vjp_1d,
)

B1 = GaussianRBF1D.uniform(4, 0.2)
B2 = GaussianRBF2D.grid(2, 0.3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sigma2": 0.0}, "sigma2"),
        ({"sigma2": -1.0}, "sigma2"),
        ({"sigma2": [1.0, np.nan]}, "sigma2"),
        ({"mu": np.inf}, "mu"),
        ({"alpha": 0.5}, "alpha"),
        ({"alpha": np.nan}, "alpha"),
        ({"mu": [0.0, 1.0, 2.0], "sigma2": [1.0, 2.0]}, "mu and sigma2"),
    ],
)
def test_beta_gaussian_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BetaGaussian(**kwargs)


@pytest.mark.parametrize("alpha", [[1.5, 2.0], "two", None, True])
def test_non_numeric_alpha_is_a_type_error(alpha):
    # the package-wide check (sksparsemax._checks): not a real number -> TypeError
    with pytest.raises(TypeError, match="alpha"):
        BetaGaussian(alpha=alpha)
    with pytest.raises(TypeError, match="alpha"):
        MultivariateBetaGaussian([0.0], [[1.0]], alpha=alpha)
    with pytest.raises(TypeError, match="alpha"):
        rbf_expectation_1d(0.5, 0.1, B1, alpha=alpha)
    with pytest.raises(TypeError, match="alpha"):
        rbf_expectation_2d([0.5, 0.5], np.eye(2), B2, alpha=alpha)
    with pytest.raises(TypeError, match="alpha"):
        ContinuousAttention1D(B1, alpha=alpha)


def test_from_canonical_errors():
    with pytest.raises(ValueError, match="theta"):
        BetaGaussian.from_canonical([1.0, 0.5])
    with pytest.raises(ValueError, match="theta"):
        BetaGaussian.from_canonical([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="theta"):
        MultivariateBetaGaussian.from_canonical([0.0, 0.0, 0.5, 0.0, 0.0, -0.5])
    with pytest.raises(ValueError, match="theta"):
        MultivariateBetaGaussian.from_canonical(np.zeros(5))


@pytest.mark.parametrize(
    "mu, Sigma, match",
    [
        ([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], "Sigma must be positive definite"),
        ([0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]], "Sigma must be symmetric"),
        ([0.0, 0.0], np.eye(3), "mu and Sigma"),
        ([0.0, 0.0], [[0.0, 0.0], [0.0, 0.0]], "Sigma must be positive definite"),
        ([[0.0, 0.0]], np.eye(2), "mu"),
    ],
)
def test_multivariate_errors(mu, Sigma, match):
    with pytest.raises(ValueError, match=match):
        MultivariateBetaGaussian(mu, Sigma)
    with pytest.raises(ValueError, match="alpha"):
        MultivariateBetaGaussian([0.0], [[1.0]], alpha=0.99)


def test_expectation_errors():
    with pytest.raises(ValueError, match="sigma2"):
        rbf_expectation_1d(0.5, -0.1, B1)
    with pytest.raises(ValueError, match="mu and sigma2"):
        rbf_expectation_1d([0.1, 0.2], [0.1, 0.2, 0.3], B1)
    with pytest.raises(ValueError, match="alpha"):
        rbf_expectation_1d(0.5, 0.1, B1, alpha=0.0)
    with pytest.raises(ValueError, match="basis"):
        rbf_expectation_1d(0.5, 0.1, B2)
    with pytest.raises(ValueError, match="method"):
        rbf_expectation_1d(0.5, 0.1, B1, alpha=1.5, method="closed")
    with pytest.raises(ValueError, match="grad_r"):
        rbf_expectation_vjp_1d([0.5, 0.6], 0.1, B1, np.ones(4))
    with pytest.raises(ValueError, match="Sigma must be positive definite"):
        rbf_expectation_2d([0.5, 0.5], [[1.0, 2.0], [2.0, 1.0]], B2)
    with pytest.raises(ValueError, match="mu and Sigma"):
        rbf_expectation_2d(np.zeros((3, 2)), np.stack([np.eye(2)] * 2), B2)
    with pytest.raises(ValueError, match="n_angles"):
        rbf_expectation_2d([0.5, 0.5], np.eye(2), B2, n_angles=7)
    with pytest.raises(ValueError, match="basis"):
        rbf_expectation_2d([0.5, 0.5], np.eye(2), B1)


def test_basis_errors():
    with pytest.raises(ValueError, match="sigma"):
        GaussianRBF1D([0.0, 1.0], [0.1, 0.0])
    with pytest.raises(ValueError, match="mu and sigma"):
        GaussianRBF1D([0.0, 1.0], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="Sigma must be positive definite"):
        GaussianRBF2D([[0.0, 0.0]], [[[1.0, 2.0], [2.0, 1.0]]])
    with pytest.raises(ValueError, match="mu and Sigma"):
        GaussianRBF2D([[0.0, 0.0]], np.stack([np.eye(2)] * 2))


def test_attention_errors():
    with pytest.raises(ValueError, match="ridge"):
        ContinuousAttention1D(B1, ridge=-1.0)
    with pytest.raises(ValueError, match="basis"):
        ContinuousAttention1D(B2)
    with pytest.raises(ValueError, match="fit"):
        ContinuousAttention1D(B1).context(0.5, 0.1)
    with pytest.raises(ValueError, match="positions"):
        ContinuousAttention1D(B1).fit(np.ones((10, 2)), positions=np.linspace(0, 1, 9))
    with pytest.raises(ValueError, match="values"):
        ContinuousAttention1D(B1).fit(np.ones(10))
    with pytest.raises(ValueError, match="positions"):
        ContinuousAttention2D(B2).fit(np.ones((10, 2)), positions=np.zeros((9, 2)))
    att = ContinuousAttention1D(B1).fit(np.ones((3, 10, 2)))
    with pytest.raises(ValueError, match="batch shape"):
        att.context(np.full(4, 0.5), 0.1)


def test_rvs_size_must_match_the_batch():
    with pytest.raises(ValueError, match="size"):
        BetaGaussian([0.0, 1.0], 1.0).rvs(size=3, random_state=0)
