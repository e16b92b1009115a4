"""Beta-Gaussian (continuous entmax) densities in one and d dimensions."""

from typing import NamedTuple

import numpy as np
from scipy.special import betainc, betaincinv, ndtr, ndtri

from ._utils import (
    as_float_array,
    broadcast,
    check_alpha,
    check_positive,
    check_spd,
    log_rho2,
)

__all__ = ["BetaGaussian", "MultivariateBetaGaussian", "EllipsoidSupport"]

_REFERENCES = """
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins, M. Treviso, A. Farinhas, P. M. Q. Aguiar, M. A. T. Figueiredo,
       M. Blondel and V. Niculae, "Sparse Continuous Distributions and Fenchel-Young
       Losses", Journal of Machine Learning Research 23(257), 2022.
"""


def _rng(random_state):
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    return np.random.default_rng(random_state)


def _size_tuple(size):
    if size is None:
        return None
    if np.ndim(size) == 0:
        return (int(size),)
    return tuple(int(s) for s in size)


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
        return np.sqrt(self._rho2() * self.sigma2)

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
        rho2 = self._rho2()
        inner = 0.5 * (self.alpha - 1) * (rho2 - z2)
        inside = inner > 0
        safe = np.where(inside, inner, 1.0)
        return np.where(inside, np.log(safe) / (self.alpha - 1), -np.inf)

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
        a = self.alpha
        int_p_alpha = a * self._rho2() / (1 + 2 * a / (a - 1))
        return (1 - int_p_alpha) / (a * (a - 1))

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
        rng = _rng(random_state)
        shape = _size_tuple(size)
        shape = self.batch_shape if shape is None else shape
        try:
            mu, sigma2 = (np.broadcast_to(v, shape) for v in (self.mu, self.sigma2))
        except ValueError:
            raise ValueError(f"size {shape} does not match the batch shape {self.batch_shape}.") from None
        if self.alpha == 1:
            return mu + np.sqrt(sigma2) * rng.standard_normal(shape)
        b = 1.0 / (self.alpha - 1) + 1
        a = np.sqrt(np.exp(log_rho2(1, self.alpha, np.log(sigma2))) * sigma2)
        return mu + a * (2 * rng.beta(b, b, size=shape) - 1)

    def __repr__(self):
        return f"BetaGaussian(mu={self.mu!r}, sigma2={self.sigma2!r}, alpha={self.alpha!r})"


BetaGaussian.__doc__ = BetaGaussian.__doc__.replace("{references}", _REFERENCES.strip())


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
        inner = 0.5 * (self.alpha - 1) * (self._rho2() - q)
        inside = inner > 0
        safe = np.where(inside, inner, 1.0)
        return np.where(inside, np.log(safe) / (self.alpha - 1), -np.inf)

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
        a = self.alpha
        int_p_alpha = a * self._rho2() / (self.dim + 2 * a / (a - 1))
        return (1 - int_p_alpha) / (a * (a - 1))

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
        rng = _rng(random_state)
        shape = _size_tuple(size) or ()
        z = rng.standard_normal(shape + (self.dim,))
        if self.alpha > 1:
            norm = np.linalg.norm(z, axis=-1, keepdims=True)
            s = rng.beta(self.dim / 2, self.alpha / (self.alpha - 1), size=shape + (1,))
            z = z / norm * np.sqrt(self._rho2() * s)
        return self.mu + z @ self._chol.T

    def __repr__(self):
        return f"MultivariateBetaGaussian(mu={self.mu!r}, Sigma={self.Sigma!r}, alpha={self.alpha!r})"


MultivariateBetaGaussian.__doc__ = MultivariateBetaGaussian.__doc__.replace(
    "{references}", _REFERENCES.strip()
)
