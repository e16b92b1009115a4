"""Continuous entmax: beta-Gaussian densities and continuous attention.

The continuous counterpart of sparsemax and entmax (Martins et al., NeurIPS 2020;
JMLR 2022): with a quadratic score, ``alpha = 1`` gives a Gaussian and ``alpha > 1``
a beta-Gaussian with compact support (``alpha = 2``: a truncated parabola or
paraboloid). Attention over an interval or an image region is the expectation of
Gaussian radial basis functions under such a density.

- Densities: :class:`BetaGaussian` (1D, batched) and
  :class:`MultivariateBetaGaussian` (d dimensions).
- Basis functions: :class:`GaussianRBF1D`, :class:`GaussianRBF2D`.
- Forward / backward passes: :func:`rbf_expectation_1d`,
  :func:`rbf_expectation_jacobian_1d`, :func:`rbf_expectation_vjp_1d`,
  :func:`rbf_expectation_and_jacobian_1d` (both passes at once) and their ``_2d``
  counterparts.
- Attention: :class:`ContinuousAttention1D`, :class:`ContinuousAttention2D`.

This subpackage depends on NumPy and SciPy only.
"""

from ._attention import ContinuousAttention1D, ContinuousAttention2D
from ._basis import GaussianRBF1D, GaussianRBF2D
from ._density_1d import BetaGaussian
from ._density_nd import EllipsoidSupport, MultivariateBetaGaussian
from ._expectation_1d import (
    rbf_expectation_1d,
    rbf_expectation_and_jacobian_1d,
    rbf_expectation_jacobian_1d,
    rbf_expectation_vjp_1d,
)
from ._expectation_2d import (
    rbf_expectation_2d,
    rbf_expectation_and_jacobian_2d,
    rbf_expectation_jacobian_2d,
    rbf_expectation_vjp_2d,
)

__all__ = [
    "BetaGaussian",
    "ContinuousAttention1D",
    "ContinuousAttention2D",
    "EllipsoidSupport",
    "GaussianRBF1D",
    "GaussianRBF2D",
    "MultivariateBetaGaussian",
    "rbf_expectation_1d",
    "rbf_expectation_2d",
    "rbf_expectation_and_jacobian_1d",
    "rbf_expectation_and_jacobian_2d",
    "rbf_expectation_jacobian_1d",
    "rbf_expectation_jacobian_2d",
    "rbf_expectation_vjp_1d",
    "rbf_expectation_vjp_2d",
]
