"""Gaussian radial basis functions for continuous attention."""

import numpy as np

from ._utils import as_float_array, broadcast, check_positive, check_spd

__all__ = ["GaussianRBF1D", "GaussianRBF2D"]


def _check_layout(count, name, widths):
    """A positive integer ``count`` of centres (per axis) and a flat array of positive widths."""
    if int(count) != count or count < 1:
        raise ValueError(f"{name} must be a positive integer, got {count!r}.")
    return int(count), check_positive(np.atleast_1d(widths), "widths").ravel()


class GaussianRBF1D:
    r"""Univariate Gaussian radial basis functions :math:`\psi_j(t) = N(t; \mu_j, \sigma_j^2)`.

    The basis of continuous attention [1]_: the value function is approximated
    as :math:`V(t) \approx B^\top\psi(t)`.

    Parameters
    ----------
    mu : array_like of shape (n_basis,)
        Centres :math:`\mu_j`.
    sigma : array_like of shape (n_basis,) or float
        Widths (standard deviations) :math:`\sigma_j > 0`, broadcast with ``mu``.

    Attributes
    ----------
    mu : ndarray of shape (n_basis,)
        Centres.
    sigma : ndarray of shape (n_basis,)
        Widths.

    References
    ----------
    .. [1] A. F. T. Martins et al., "Sparse and Continuous Attention Mechanisms",
       NeurIPS 2020; and "Sparse Continuous Distributions and Fenchel-Young Losses",
       JMLR 23(257), 2022.

    Examples
    --------
    >>> from sksparsemax.continuous import GaussianRBF1D
    >>> basis = GaussianRBF1D.uniform(n_centers=4, widths=[0.1, 0.5])
    >>> basis.n_basis
    8
    >>> basis([0.0, 0.5]).shape
    (2, 8)
    """

    def __init__(self, mu, sigma):
        mu = as_float_array(mu, "mu")
        sigma = check_positive(sigma, "sigma")
        if mu.ndim > 1 or sigma.ndim > 1:
            raise ValueError("mu and sigma must be 1-d arrays (or scalars).")
        mu, sigma = broadcast({"mu": np.atleast_1d(mu), "sigma": np.atleast_1d(sigma)})
        self.mu = np.array(mu)
        self.sigma = np.array(sigma)

    @classmethod
    def uniform(cls, n_centers, widths=(0.1, 0.5), low=0.0, high=1.0):
        """Centres equally spaced on ``[low, high]`` (endpoints included), one per width.

        Parameters
        ----------
        n_centers : int
            Number of centres.
        widths : float or sequence of float, default=(0.1, 0.5)
            Widths; every centre is paired with every width.
        low, high : float, default=0.0, 1.0
            Range of the centres.

        Returns
        -------
        GaussianRBF1D
            ``n_centers * len(widths)`` functions, width-major.

        Examples
        --------
        >>> from sksparsemax.continuous import GaussianRBF1D
        >>> GaussianRBF1D.uniform(3, widths=0.2).mu
        array([0. , 0.5, 1. ])
        """
        n_centers, widths = _check_layout(n_centers, "n_centers", widths)
        centers = np.linspace(low, high, n_centers)
        return cls(np.tile(centers, widths.size), np.repeat(widths, n_centers))

    @property
    def n_basis(self):
        """Number of basis functions."""
        return self.mu.size

    def __call__(self, t):
        """Evaluate the basis.

        Parameters
        ----------
        t : array_like
            Points.

        Returns
        -------
        ndarray of shape (\\*t.shape, n_basis)
            :math:`\\psi_j(t)`.

        Examples
        --------
        >>> from sksparsemax.continuous import GaussianRBF1D
        >>> GaussianRBF1D([0.0], [1.0])(0.0)  # 1 / sqrt(2 pi)
        array([0.39894228])
        """
        t = as_float_array(t, "t")[..., None]
        z = (t - self.mu) / self.sigma
        return np.exp(-0.5 * z * z) / (np.sqrt(2 * np.pi) * self.sigma)

    def __repr__(self):
        return f"GaussianRBF1D(n_basis={self.n_basis})"


class GaussianRBF2D:
    r"""Bivariate Gaussian radial basis functions :math:`\psi_j(t) = N(t; \mu_j, \Sigma_j)`.

    Parameters
    ----------
    mu : array_like of shape (n_basis, 2)
        Centres :math:`\mu_j`.
    Sigma : array_like of shape (n_basis, 2, 2) or (2, 2)
        Symmetric positive definite covariances :math:`\Sigma_j` (one shared
        matrix is broadcast).

    Attributes
    ----------
    mu : ndarray of shape (n_basis, 2)
        Centres.
    Sigma : ndarray of shape (n_basis, 2, 2)
        Covariances.

    References
    ----------
    .. [1] A. F. T. Martins et al., "Sparse and Continuous Attention Mechanisms",
       NeurIPS 2020; and "Sparse Continuous Distributions and Fenchel-Young Losses",
       JMLR 23(257), 2022.

    Examples
    --------
    >>> from sksparsemax.continuous import GaussianRBF2D
    >>> basis = GaussianRBF2D.grid(n_per_side=3, widths=[0.1, 0.3])
    >>> basis.n_basis
    18
    >>> basis([[0.5, 0.5]]).shape
    (1, 18)
    """

    def __init__(self, mu, Sigma):
        mu = as_float_array(mu, "mu")
        if mu.ndim != 2 or mu.shape[1] != 2:
            raise ValueError(f"mu must have shape (n_basis, 2), got {mu.shape}.")
        Sigma, chol = check_spd(Sigma, "Sigma", dim=2)
        if Sigma.ndim == 2:
            Sigma, chol = (np.broadcast_to(m, (mu.shape[0], 2, 2)) for m in (Sigma, chol))
        if Sigma.shape != (mu.shape[0], 2, 2):
            raise ValueError(
                f"mu and Sigma have mismatched shapes: mu {mu.shape}, Sigma {Sigma.shape}."
            )
        self.mu = mu.copy()
        self.Sigma = np.array(Sigma)
        self._chol = np.array(chol)

    @classmethod
    def grid(cls, n_per_side, widths=(0.1, 0.3), low=0.0, high=1.0):
        """Isotropic functions with centres on a square grid over ``[low, high]**2``.

        Parameters
        ----------
        n_per_side : int
            Number of centres per axis.
        widths : float or sequence of float, default=(0.1, 0.3)
            Standard deviations :math:`s` (:math:`\\Sigma_j = s^2 I`); every
            centre is paired with every width.
        low, high : float, default=0.0, 1.0
            Range of the centres on both axes.

        Returns
        -------
        GaussianRBF2D
            ``n_per_side**2 * len(widths)`` functions.

        Examples
        --------
        >>> from sksparsemax.continuous import GaussianRBF2D
        >>> GaussianRBF2D.grid(2, widths=0.5).mu
        array([[0., 0.],
               [0., 1.],
               [1., 0.],
               [1., 1.]])
        """
        n_per_side, widths = _check_layout(n_per_side, "n_per_side", widths)
        axis = np.linspace(low, high, n_per_side)
        centers = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
        mu = np.tile(centers, (widths.size, 1))
        Sigma = np.repeat(widths**2, centers.shape[0])[:, None, None] * np.eye(2)
        return cls(mu, Sigma)

    @property
    def n_basis(self):
        """Number of basis functions."""
        return self.mu.shape[0]

    def __call__(self, t):
        """Evaluate the basis.

        Parameters
        ----------
        t : array_like of shape (..., 2)
            Points.

        Returns
        -------
        ndarray of shape (..., n_basis)
            :math:`\\psi_j(t)`.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import GaussianRBF2D
        >>> GaussianRBF2D([[0.0, 0.0]], np.eye(2))([0.0, 0.0])  # 1 / (2 pi)
        array([0.15915494])
        """
        t = as_float_array(t, "t")
        if t.shape[-1:] != (2,):
            raise ValueError(f"t must have shape (..., 2), got {t.shape}.")
        diff = t[..., None, :] - self.mu
        # Solve L z = diff for the lower-triangular 2x2 Cholesky factors.
        L = self._chol
        z0 = diff[..., 0] / L[:, 0, 0]
        z1 = (diff[..., 1] - L[:, 1, 0] * z0) / L[:, 1, 1]
        norm = 2 * np.pi * L[:, 0, 0] * L[:, 1, 1]
        return np.exp(-0.5 * (z0 * z0 + z1 * z1)) / norm

    def __repr__(self):
        return f"GaussianRBF2D(n_basis={self.n_basis})"
