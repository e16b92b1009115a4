"""Multivariate beta-Gaussian (continuous entmax) density and its support ellipsoid."""

from typing import NamedTuple

import numpy as np

from .._checks import check_alpha
from ._density_common import (
    check_random_state,
    log_kernel,
    size_tuple,
    tsallis_entropy,
    with_references,
)
from ._utils import as_float_array, check_spd, log_rho2

__all__ = ["EllipsoidSupport", "MultivariateBetaGaussian"]


class EllipsoidSupport(NamedTuple):
    r"""The ellipsoid :math:`\{t : (t - c)^\top S^{-1} (t - c) \le r^2\}`.

    Parameters
    ----------
    center : ndarray of shape (d,)
        Centre :math:`c` (the location :math:`\mu`).
    shape : ndarray of shape (d, d)
        Shape matrix :math:`S` (the scale :math:`\Sigma`).
    radius : float
        Mahalanobis radius :math:`r = \sqrt{-2\tau}`; ``inf`` for ``alpha = 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import EllipsoidSupport
    >>> s = EllipsoidSupport(np.zeros(2), np.eye(2), 1.0)
    >>> s.contains([[0.5, 0.5], [1.0, 1.0]])
    array([ True, False])
    """

    center: np.ndarray
    shape: np.ndarray
    radius: float

    def contains(self, t):
        """Whether each point lies in the (closed) ellipsoid.

        Parameters
        ----------
        t : array_like of shape (..., d)
            Points.

        Returns
        -------
        ndarray of bool of shape (...)
            Membership.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import EllipsoidSupport
        >>> EllipsoidSupport(np.zeros(1), np.eye(1) * 4, 1.0).contains([[1.9], [2.1]])
        array([ True, False])
        """
        diff = np.asarray(t, dtype=np.float64) - self.center
        q = np.einsum("...i,...i->...", diff, np.linalg.solve(self.shape, diff[..., None])[..., 0])
        return q <= self.radius**2


@with_references
class MultivariateBetaGaussian:
    r"""Multivariate beta-Gaussian (continuous alpha-entmax) density in d dimensions.

    The continuous alpha-entmax transformation of the quadratic score
    :math:`f(t) = -\frac12 (t-\mu)^\top\Sigma^{-1}(t-\mu)` [1]_ [2]_. For ``alpha > 1``

    .. math::

        p(t) = \left[(\alpha-1)\left(-\tau - \tfrac12 (t-\mu)^\top\Sigma^{-1}(t-\mu)\right)
               \right]_+^{1/(\alpha-1)},
        \qquad \tau = -\frac{R^2}{2}\det(\Sigma)^{-1/(d + 2/(\alpha-1))},

    with :math:`R = \left[\frac{\Gamma(d/2 + \alpha/(\alpha-1))}{\Gamma(\alpha/(\alpha-1))
    \pi^{d/2}}\left(\frac{2}{\alpha-1}\right)^{1/(\alpha-1)}\right]^{(\alpha-1)/(2+(\alpha-1)d)}`.
    The support is the ellipsoid :math:`(t-\mu)^\top\Sigma^{-1}(t-\mu) \le -2\tau` and the
    covariance is :math:`-2\tau/(d + 2\alpha/(\alpha-1))\,\Sigma`: **Sigma is the scale
    of the score, not the covariance** (for ``alpha = 2``, ``d = 2`` the covariance is
    :math:`(-\tau/3)\Sigma` with :math:`\tau = -(\pi\sqrt{\det\Sigma})^{-1/2}`).
    ``alpha = 1`` is the Gaussian :math:`N(\mu, \Sigma)`.

    Canonical parameters: :math:`\theta = [\Sigma^{-1}\mu, \mathrm{vec}(-\frac12\Sigma^{-1})]`
    (``d + d**2`` numbers), with sufficient statistics :math:`\phi(t) = [t, \mathrm{vec}(tt^\top)]`.

    Parameters
    ----------
    mu : array_like of shape (d,)
        Location (the mode and the mean).
    Sigma : array_like of shape (d, d)
        Symmetric positive definite scale matrix of the score.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.

    Attributes
    ----------
    mu : ndarray of shape (d,)
        Location.
    Sigma : ndarray of shape (d, d)
        Scale matrix.
    alpha : float
        The entmax parameter.
    dim : int
        Dimension d.

    See Also
    --------
    BetaGaussian : The univariate, batched density.

    References
    ----------
    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import MultivariateBetaGaussian
    >>> Sigma = np.eye(2) / np.pi  # then tau = -1, radius sqrt(2)
    >>> p = MultivariateBetaGaussian(np.zeros(2), Sigma, alpha=2.0)
    >>> p.tau()
    -1.0
    >>> p.pdf([[0.0, 0.0], [0.5, 0.0], [1.0, 1.0]])
    array([1.        , 0.60730092, 0.        ])
    >>> p.cov()  # (-tau / 3) Sigma
    array([[0.1061033, 0.       ],
           [0.       , 0.1061033]])
    """

    def __init__(self, mu, Sigma, alpha=2.0):
        self.alpha = check_alpha(alpha)
        mu = as_float_array(mu, "mu")
        if mu.ndim != 1:
            raise ValueError(f"mu must be a 1-d array of shape (d,), got shape {mu.shape}.")
        Sigma = as_float_array(Sigma, "Sigma")
        if Sigma.shape != (mu.size, mu.size):
            raise ValueError(
                f"mu and Sigma have mismatched shapes: mu {mu.shape}, Sigma {Sigma.shape}; "
                f"Sigma must be ({mu.size}, {mu.size})."
            )
        self.Sigma, self._chol = check_spd(Sigma, "Sigma")
        self.mu = mu.copy()
        self.dim = mu.size
        self._logdet = 2 * np.sum(np.log(np.diag(self._chol)))

    @classmethod
    def from_canonical(cls, theta, alpha=2.0):
        r"""Build the density from canonical parameters.

        :math:`\Sigma = (-2\Theta)^{-1}` with :math:`\Theta` the (symmetrised)
        d x d block and :math:`\mu = \Sigma\theta_{1:d}`.

        Parameters
        ----------
        theta : array_like of shape (d + d**2,)
            :math:`[\Sigma^{-1}\mu, \mathrm{vec}(-\frac12\Sigma^{-1})]`.
        alpha : float, default=2.0
            Entmax parameter, ``alpha >= 1``.

        Returns
        -------
        MultivariateBetaGaussian
            The density.

        Examples
        --------
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> p = MultivariateBetaGaussian.from_canonical([1.0, 0.0, -0.5, 0.0, 0.0, -0.5])
        >>> p.mu, p.Sigma
        (array([1., 0.]), array([[1., 0.], [0., 1.]]))
        """
        theta = as_float_array(theta, "theta")
        n = theta.size
        d = int(round((np.sqrt(1 + 4 * n) - 1) / 2))
        if theta.ndim != 1 or d < 1 or d + d * d != n:
            raise ValueError(f"theta must have shape (d + d**2,), got {theta.shape}.")
        Theta = theta[d:].reshape(d, d)
        precision = -(Theta + Theta.T)
        try:
            np.linalg.cholesky(precision)
        except np.linalg.LinAlgError:
            raise ValueError("theta: the block -2 * Theta = Sigma^{-1} must be positive definite.") from None
        Sigma = np.linalg.inv(precision)
        Sigma = 0.5 * (Sigma + Sigma.T)
        return cls(Sigma @ theta[:d], Sigma, alpha)

    def canonical(self):
        r"""Canonical parameters :math:`[\Sigma^{-1}\mu, \mathrm{vec}(-\frac12\Sigma^{-1})]`.

        Returns
        -------
        ndarray of shape (d + d**2,)
            The canonical parameters.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> MultivariateBetaGaussian([2.0, 0.0], 2 * np.eye(2)).canonical()
        array([ 1.  ,  0.  , -0.25, -0.  , -0.  , -0.25])
        """
        precision = np.linalg.inv(self.Sigma)
        return np.concatenate([precision @ self.mu, (-0.5 * precision).ravel()])

    def _rho2(self):
        return float(np.exp(log_rho2(self.dim, self.alpha, self._logdet)))

    def _mahalanobis2(self, t):
        diff = t - self.mu
        z = np.linalg.solve(self._chol, diff[..., None])[..., 0]
        return np.sum(z * z, axis=-1)

    def tau(self):
        r"""The threshold :math:`\tau`.

        :math:`-\frac{R^2}{2}\det(\Sigma)^{-1/(d+2/(\alpha-1))}` for ``alpha > 1``
        (so that :math:`p = [(\alpha-1)(f - \tau)]_+^{1/(\alpha-1)}`); for
        ``alpha = 1`` the log-partition function :math:`\frac12\log((2\pi)^d\det\Sigma)`.

        Returns
        -------
        float
            The threshold.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> MultivariateBetaGaussian([0.0, 0.0], np.eye(2) / np.pi).tau()
        -1.0
        """
        if self.alpha == 1:
            return 0.5 * (self.dim * np.log(2 * np.pi) + self._logdet)
        return -0.5 * self._rho2()

    def support(self):
        r"""Support ellipsoid :math:`(t-\mu)^\top\Sigma^{-1}(t-\mu) \le -2\tau`.

        Returns
        -------
        EllipsoidSupport
            Centre ``mu``, shape ``Sigma`` and radius :math:`\sqrt{-2\tau}`
            (``inf`` for ``alpha = 1``).

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> s = MultivariateBetaGaussian([0.0, 0.0], np.eye(2) / np.pi).support()
        >>> float(s.radius) ** 2
        2.0
        """
        radius = np.inf if self.alpha == 1 else float(np.sqrt(self._rho2()))
        return EllipsoidSupport(self.mu.copy(), self.Sigma.copy(), radius)

    def logpdf(self, x):
        """Log-density; ``-inf`` outside the support.

        Parameters
        ----------
        x : array_like of shape (..., d)
            Points.

        Returns
        -------
        ndarray of shape (...)
            :math:`\\log p(x)`.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> float(MultivariateBetaGaussian([0.0, 0.0], np.eye(2), alpha=1.0).logpdf([0.0, 0.0]))
        -1.8378771
        """
        x = as_float_array(x, "x")
        if x.shape[-1:] != (self.dim,):
            raise ValueError(f"x must have shape (..., {self.dim}), got {x.shape}.")
        q = self._mahalanobis2(x)
        if self.alpha == 1:
            return -0.5 * (self.dim * np.log(2 * np.pi) + self._logdet + q)
        return log_kernel(q, self._rho2(), self.alpha)

    def pdf(self, x):
        """Density :math:`p(x)`.

        Parameters
        ----------
        x : array_like of shape (..., d)
            Points.

        Returns
        -------
        ndarray of shape (...)
            :math:`p(x)`, zero outside the support.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> MultivariateBetaGaussian([0.0, 0.0], np.eye(2) / np.pi).pdf([[0.0, 0.0], [2.0, 0.0]])
        array([1., 0.])
        """
        return np.exp(self.logpdf(x))

    def mean(self):
        """Mean, equal to ``mu``.

        Returns
        -------
        ndarray of shape (d,)
            The mean.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> MultivariateBetaGaussian([1.0, 2.0], np.eye(2)).mean()
        array([1., 2.])
        """
        return self.mu.copy()

    def cov(self):
        r"""Covariance :math:`-2\tau/(d + 2\alpha/(\alpha-1))\,\Sigma` (:math:`\Sigma` for ``alpha = 1``).

        Returns
        -------
        ndarray of shape (d, d)
            The covariance.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> MultivariateBetaGaussian([0.0], [[2 / 3]], alpha=2.0).cov()  # a**2 / 5, a = 1
        array([[0.2]])
        """
        if self.alpha == 1:
            return self.Sigma.copy()
        a = self.alpha
        return self._rho2() / (self.dim + 2 * a / (a - 1)) * self.Sigma

    def tsallis_entropy(self):
        r"""Compute the Tsallis alpha-entropy :math:`(1 - \int p^\alpha)/(\alpha(\alpha-1))`.

        :math:`\int p^\alpha = \alpha\,(-2\tau)/(d + 2\alpha/(\alpha-1))`; ``alpha = 1``
        gives the Shannon entropy :math:`\frac12\log((2\pi e)^d\det\Sigma)`.

        Returns
        -------
        float
            The entropy.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> MultivariateBetaGaussian([0.0, 0.0], np.eye(2) / np.pi).tsallis_entropy()
        0.1666667
        """
        if self.alpha == 1:
            return 0.5 * (self.dim * np.log(2 * np.pi * np.e) + self._logdet)
        return tsallis_entropy(self._rho2(), self.dim, self.alpha)

    def rvs(self, size=None, random_state=None):
        r"""Draw random samples.

        For ``alpha > 1``, :math:`t = \mu + \rho\sqrt{s}\,L u` with :math:`LL^\top = \Sigma`,
        :math:`u` uniform on the unit sphere and
        :math:`s \sim \mathrm{Beta}(d/2, \alpha/(\alpha-1))`.

        Parameters
        ----------
        size : int or tuple of int, optional
            Number (shape) of samples; ``None`` draws one sample of shape (d,).
        random_state : None, int, numpy.random.Generator or RandomState
            Source of randomness.

        Returns
        -------
        ndarray of shape (\*size, d)
            Samples.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import MultivariateBetaGaussian
        >>> p = MultivariateBetaGaussian([0.0, 0.0], np.eye(2) / np.pi)
        >>> x = p.rvs(size=500, random_state=0)
        >>> x.shape, bool(p.support().contains(x).all())
        ((500, 2), True)
        """
        rng = check_random_state(random_state)
        shape = size_tuple(size) or ()
        z = rng.standard_normal(shape + (self.dim,))
        if self.alpha > 1:
            norm = np.linalg.norm(z, axis=-1, keepdims=True)
            s = rng.beta(self.dim / 2, self.alpha / (self.alpha - 1), size=shape + (1,))
            z = z / norm * np.sqrt(self._rho2() * s)
        return self.mu + z @ self._chol.T

    def __repr__(self):
        return f"MultivariateBetaGaussian(mu={self.mu!r}, Sigma={self.Sigma!r}, alpha={self.alpha!r})"
