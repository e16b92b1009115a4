"""Univariate beta-Gaussian (continuous entmax) density, batched."""

import numpy as np
from scipy.special import betainc, betaincinv, ndtr, ndtri

from .._checks import check_alpha
from ._density_common import (
    check_random_state,
    log_kernel,
    size_tuple,
    tsallis_entropy,
    with_references,
)
from ._utils import as_float_array, broadcast, check_positive, half_width, log_rho2

__all__ = ["BetaGaussian"]


@with_references
class BetaGaussian:
    r"""Univariate beta-Gaussian (continuous alpha-entmax) density, batched.

    The continuous alpha-entmax transformation of the quadratic score
    :math:`f(t) = -(t - \mu)^2 / (2 \sigma^2)` [1]_ [2]_. For ``alpha > 1``

    .. math::

        p(t) = \left[(\alpha - 1)\left(-\tau - \frac{(t - \mu)^2}{2\sigma^2}\right)
               \right]_+^{1/(\alpha - 1)},

    a density supported on :math:`[\mu - a, \mu + a]` with half-width
    :math:`a = R\,(\sigma^2)^{1/(\alpha+1)}`,
    :math:`R = \left[\frac{\Gamma(1/2 + \alpha/(\alpha-1))}{\Gamma(\alpha/(\alpha-1))\sqrt\pi}
    \left(\frac{2}{\alpha-1}\right)^{1/(\alpha-1)}\right]^{(\alpha-1)/(\alpha+1)}` and
    threshold :math:`\tau = -a^2 / (2\sigma^2)`. ``alpha = 1`` is the Gaussian
    :math:`N(\mu, \sigma^2)`; ``alpha = 2`` is the truncated parabola
    :math:`p(t) = (a^2 - (t-\mu)^2) / (2\sigma^2)` with :math:`a = (3\sigma^2/2)^{1/3}`.

    **sigma2 is the scale of the score, not the variance.** For ``alpha > 1``
    the variance of the density is :math:`a^2 / (3 + 2\alpha/(\alpha-1))`, not
    :math:`\sigma^2`; for ``alpha = 2`` it is :math:`a^2/5` with
    :math:`a = (3\sigma^2/2)^{1/3}`. Only ``alpha = 1`` has variance :math:`\sigma^2`.

    With :math:`x = (t - \mu)/a`, :math:`(1 + x)/2` follows a
    :math:`\mathrm{Beta}(\beta + 1, \beta + 1)` law, :math:`\beta = 1/(\alpha-1)`,
    which gives :meth:`cdf`, :meth:`ppf` and :meth:`rvs`.

    The canonical (natural) parameters are :math:`\theta = [\mu/\sigma^2, -1/(2\sigma^2)]`
    with sufficient statistics :math:`\phi(t) = [t, t^2]`: :math:`f(t) = \theta^\top\phi(t)`
    up to a constant.

    Parameters
    ----------
    mu : float or array_like, default=0.0
        Location (the mode and the mean).
    sigma2 : float or array_like, default=1.0
        Scale of the quadratic score, strictly positive. Broadcast with ``mu``:
        the object then holds a batch of densities.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.

    Attributes
    ----------
    mu : ndarray
        Locations, broadcast to the batch shape.
    sigma2 : ndarray
        Score scales, broadcast to the batch shape.
    alpha : float
        The entmax parameter.

    See Also
    --------
    MultivariateBetaGaussian : The d-dimensional density.

    References
    ----------
    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import BetaGaussian
    >>> p = BetaGaussian(mu=0.0, sigma2=2 / 3, alpha=2.0)  # a = 1
    >>> [float(e) for e in p.support()]
    [-1.0, 1.0]
    >>> p.pdf([0.0, 0.5, 2.0])
    array([0.75  , 0.5625, 0.    ])
    >>> float(p.tau()), float(p.var())  # variance a**2 / 5, not sigma2
    (-0.75, 0.2)
    >>> BetaGaussian(mu=[0.0, 1.0], sigma2=[1.0, 4.0], alpha=1.5).mean()
    array([0., 1.])
    """

    def __init__(self, mu=0.0, sigma2=1.0, alpha=2.0):
        self.alpha = check_alpha(alpha)
        mu = as_float_array(mu, "mu")
        sigma2 = check_positive(sigma2, "sigma2")
        mu, sigma2 = broadcast({"mu": mu, "sigma2": sigma2})
        self.mu = np.array(mu)
        self.sigma2 = np.array(sigma2)

    @classmethod
    def from_canonical(cls, theta, alpha=2.0):
        r"""Build the density from canonical parameters.

        :math:`\sigma^2 = -1/(2\theta_2)` and :math:`\mu = \theta_1\sigma^2`.

        Parameters
        ----------
        theta : array_like of shape (..., 2)
            Canonical parameters :math:`[\mu/\sigma^2, -1/(2\sigma^2)]`; the
            second entry must be strictly negative.
        alpha : float, default=2.0
            Entmax parameter, ``alpha >= 1``.

        Returns
        -------
        BetaGaussian
            The (batch of) densities, of batch shape ``theta.shape[:-1]``.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> p = BetaGaussian.from_canonical([1.0, -0.5])
        >>> p.mu, p.sigma2
        (array(1.), array(1.))
        """
        theta = as_float_array(theta, "theta")
        if theta.ndim < 1 or theta.shape[-1] != 2:
            raise ValueError(f"theta must have shape (..., 2), got {theta.shape}.")
        if np.any(theta[..., 1] >= 0):
            raise ValueError("theta[..., 1] = -1 / (2 sigma2) must be strictly negative.")
        sigma2 = -0.5 / theta[..., 1]
        return cls(theta[..., 0] * sigma2, sigma2, alpha)

    def canonical(self):
        r"""Canonical parameters :math:`\theta = [\mu/\sigma^2, -1/(2\sigma^2)]`.

        Returns
        -------
        ndarray of shape (..., 2)
            One row per density of the batch.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> BetaGaussian(mu=1.0, sigma2=0.5).canonical()
        array([ 2., -1.])
        """
        return np.stack([self.mu / self.sigma2, -0.5 / self.sigma2], axis=-1)

    @property
    def batch_shape(self):
        """Shape of the batch of densities."""
        return self.mu.shape

    def _rho2(self):
        return np.exp(log_rho2(1, self.alpha, np.log(self.sigma2)))

    def _half_width(self):
        return half_width(self.sigma2, self.alpha)

    def tau(self):
        r"""The threshold :math:`\tau`.

        For ``alpha > 1``, :math:`p(t) = [(\alpha-1)(f(t) - \tau)]_+^{1/(\alpha-1)}`
        with :math:`\tau = -a^2/(2\sigma^2)` (for ``alpha = 2`` this is the
        usual :math:`p = [f - \tau]_+`; the papers' alternative convention
        :math:`p = [(\alpha-1)f - \tau']_+^{1/(\alpha-1)}` has
        :math:`\tau' = (\alpha-1)\tau`). For ``alpha = 1`` it is the
        log-partition function :math:`\frac12\log(2\pi\sigma^2)`, so that
        :math:`p = \exp(f - \tau)`.

        Returns
        -------
        ndarray
            One threshold per density of the batch.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> float(BetaGaussian(sigma2=2 / 3, alpha=2.0).tau())
        -0.75
        """
        if self.alpha == 1:
            return 0.5 * np.log(2 * np.pi * self.sigma2)
        return -0.5 * self._rho2()

    def support(self):
        """Support interval ``(lower, upper)``; ``(-inf, inf)`` for ``alpha = 1``.

        Returns
        -------
        lower, upper : ndarray
            Endpoints :math:`\\mu \\mp a`, one per density of the batch.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> BetaGaussian(mu=[1.0, 5.0], sigma2=2 / 3, alpha=2.0).support()
        (array([0., 4.]), array([2., 6.]))
        """
        if self.alpha == 1:
            inf = np.full(self.batch_shape, np.inf)
            return -inf, inf.copy()
        a = self._half_width()
        return self.mu - a, self.mu + a

    def logpdf(self, t):
        """Log-density; ``-inf`` outside the support.

        Parameters
        ----------
        t : array_like
            Points, broadcast against the batch shape.

        Returns
        -------
        ndarray
            :math:`\\log p(t)`.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> BetaGaussian(alpha=1.0).logpdf([0.0, 1.0])  # -log(2 pi) / 2 - t**2 / 2
        array([-0.91893853, -1.41893853])
        """
        t = as_float_array(t, "t")
        z2 = (t - self.mu) ** 2 / self.sigma2
        if self.alpha == 1:
            return -0.5 * (np.log(2 * np.pi * self.sigma2) + z2)
        return log_kernel(z2, self._rho2(), self.alpha)

    def pdf(self, t):
        """Density :math:`p(t)`.

        Parameters
        ----------
        t : array_like
            Points, broadcast against the batch shape.

        Returns
        -------
        ndarray
            :math:`p(t)`, zero outside the support.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> BetaGaussian(sigma2=2 / 3, alpha=2.0).pdf([0.5, 1.5])
        array([0.5625, 0.    ])
        """
        return np.exp(self.logpdf(t))

    def cdf(self, t):
        r"""Cumulative distribution function.

        For ``alpha > 1``, :math:`F(t) = I_{(1+x)/2}(\beta+1, \beta+1)`, the
        regularised incomplete beta function, with :math:`x = (t-\mu)/a` clipped
        to :math:`[-1, 1]`.

        Parameters
        ----------
        t : array_like
            Points, broadcast against the batch shape.

        Returns
        -------
        ndarray
            :math:`P(T \le t)`.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> BetaGaussian(sigma2=2 / 3, alpha=2.0).cdf([-1.0, 0.0, 0.5])
        array([0.      , 0.5     , 0.84375])
        """
        t = as_float_array(t, "t")
        if self.alpha == 1:
            return ndtr((t - self.mu) / np.sqrt(self.sigma2))
        b = 1.0 / (self.alpha - 1) + 1
        x = np.clip((t - self.mu) / self._half_width(), -1.0, 1.0)
        return betainc(b, b, 0.5 * (1 + x))

    def ppf(self, q):
        """Quantile function, the inverse of :meth:`cdf`.

        Parameters
        ----------
        q : array_like
            Probabilities in [0, 1] (NaN elsewhere).

        Returns
        -------
        ndarray
            The quantiles.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> BetaGaussian(sigma2=2 / 3, alpha=2.0).ppf([0.0, 0.5, 1.0])
        array([-1.,  0.,  1.])
        """
        q = np.asarray(q, dtype=np.float64)
        valid = (q >= 0) & (q <= 1)
        qs = np.where(valid, q, 0.5)
        if self.alpha == 1:
            with np.errstate(divide="ignore", over="ignore"):
                out = self.mu + np.sqrt(self.sigma2) * ndtri(qs)
        else:
            b = 1.0 / (self.alpha - 1) + 1
            out = self.mu + self._half_width() * (2 * betaincinv(b, b, qs) - 1)
        return np.where(valid, out, np.nan)

    def mean(self):
        """Mean, equal to ``mu``.

        Returns
        -------
        ndarray
            One mean per density of the batch.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> BetaGaussian(mu=3.0).mean()
        array(3.)
        """
        return self.mu.copy()

    def var(self):
        r"""Variance: :math:`a^2/(3 + 2\alpha/(\alpha-1))` for ``alpha > 1``, :math:`\sigma^2` for ``alpha = 1``.

        Returns
        -------
        ndarray
            One variance per density of the batch (``a**2 / 5`` for ``alpha = 2``).

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> float(BetaGaussian(sigma2=2 / 3, alpha=2.0).var())
        0.2
        """
        if self.alpha == 1:
            return self.sigma2.copy()
        return self._rho2() * self.sigma2 / (1 + 2 * self.alpha / (self.alpha - 1))

    def std(self):
        """Standard deviation, the square root of :meth:`var`.

        Returns
        -------
        ndarray
            One standard deviation per density of the batch.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> float(BetaGaussian(sigma2=4.0, alpha=1.0).std())
        2.0
        """
        return np.sqrt(self.var())

    def tsallis_entropy(self):
        r"""Compute the Tsallis alpha-entropy :math:`H_\alpha(p) = (1 - \int p^\alpha)/(\alpha(\alpha-1))`.

        For ``alpha > 1``, :math:`\int p^\alpha = \alpha\,\rho^2/(1 + 2\alpha/(\alpha-1))`
        with :math:`\rho^2 = -2\tau`; ``alpha = 1`` gives the Shannon differential
        entropy :math:`\frac12\log(2\pi e\sigma^2)`.

        Returns
        -------
        ndarray
            One entropy per density of the batch.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> float(BetaGaussian(sigma2=2 / 3, alpha=2.0).tsallis_entropy())  # (1 - 3/5) / 2
        0.2
        """
        if self.alpha == 1:
            return 0.5 * np.log(2 * np.pi * np.e * self.sigma2)
        return tsallis_entropy(self._rho2(), 1, self.alpha)

    def rvs(self, size=None, random_state=None):
        """Draw random samples.

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape, which the batch shape must broadcast to; defaults to
            the batch shape.
        random_state : None, int, numpy.random.Generator or RandomState
            Source of randomness.

        Returns
        -------
        ndarray
            Samples.

        Examples
        --------
        >>> from sksparsemax.continuous import BetaGaussian
        >>> x = BetaGaussian(sigma2=2 / 3, alpha=2.0).rvs(size=1000, random_state=0)
        >>> x.shape, bool(x.min() >= -1 and x.max() <= 1)
        ((1000,), True)
        """
        rng = check_random_state(random_state)
        shape = size_tuple(size)
        shape = self.batch_shape if shape is None else shape
        try:
            mu, sigma2 = (np.broadcast_to(v, shape) for v in (self.mu, self.sigma2))
        except ValueError:
            raise ValueError(f"size {shape} does not match the batch shape {self.batch_shape}.") from None
        if self.alpha == 1:
            return mu + np.sqrt(sigma2) * rng.standard_normal(shape)
        b = 1.0 / (self.alpha - 1) + 1
        return mu + half_width(sigma2, self.alpha) * (2 * rng.beta(b, b, size=shape) - 1)

    def __repr__(self):
        return f"BetaGaussian(mu={self.mu!r}, sigma2={self.sigma2!r}, alpha={self.alpha!r})"
