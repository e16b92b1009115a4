"""Continuous attention: ridge-regressed value function and context vectors."""

import numpy as np

from ._attention_base import AttentionBase
from ._basis import GaussianRBF1D, GaussianRBF2D
from ._expectation_1d import rbf_expectation_1d, rbf_expectation_and_jacobian_1d, rbf_expectation_vjp_1d
from ._expectation_2d import rbf_expectation_2d, rbf_expectation_and_jacobian_2d, rbf_expectation_vjp_2d
from ._utils import as_float_array

__all__ = ["ContinuousAttention1D", "ContinuousAttention2D"]


class ContinuousAttention1D(AttentionBase):
    r"""Continuous attention over a sequence [1]_ [2]_.

    Values :math:`v_\ell \in \mathbb{R}^D` observed at positions :math:`t_\ell \in [0, 1]`
    are summarised by a value function :math:`V(t) = B^\top\psi(t)` whose coefficients
    are fitted by ridge regression,
    :math:`B = (F^\top F + \lambda I)^{-1}F^\top V`, :math:`F_{\ell j} = \psi_j(t_\ell)`.
    A beta-Gaussian density :math:`p` (location ``mu``, score scale ``sigma2``) then
    yields the context vector

    .. math::

        c = \mathbb{E}_p[V(t)] = B^\top r, \qquad r = \mathbb{E}_p[\psi(t)],

    with :math:`r` from :func:`rbf_expectation_1d` and gradients through
    :func:`rbf_expectation_vjp_1d`. NumPy only (no autograd).

    Parameters
    ----------
    basis : GaussianRBF1D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1`` (1: Gaussian attention, 2: sparse).
    ridge : float, default=0.1
        Ridge penalty :math:`\lambda \ge 0`.
    **options
        Passed to :func:`rbf_expectation_1d` (``method``, ``tol``, ...).

    Attributes
    ----------
    coef_ : ndarray of shape (\*values_batch, N, D)
        Value-function coefficients :math:`B`, set by :meth:`fit`.

    References
    ----------
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins et al., "Sparse Continuous Distributions and Fenchel-Young
       Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import ContinuousAttention1D, GaussianRBF1D
    >>> rng = np.random.default_rng(0)
    >>> values = rng.normal(size=(50, 3))  # 50 positions, 3 features
    >>> att = ContinuousAttention1D(GaussianRBF1D.uniform(16, [0.05, 0.2]), alpha=2.0)
    >>> att.fit(values).coef_.shape
    (32, 3)
    >>> att.context(mu=[0.2, 0.8], sigma2=0.01).shape
    (2, 3)
    """

    _basis_type = GaussianRBF1D
    _expectation_vjp = staticmethod(rbf_expectation_vjp_1d)
    _point_shape, _scale_shape = (), ()

    def fit(self, values, positions=None):
        """Fit the value function by ridge regression.

        Parameters
        ----------
        values : array_like of shape (..., L, D)
            Values; leading dimensions are a batch of sequences sharing the positions.
        positions : array_like of shape (L,), optional
            Positions in [0, 1]; defaults to the cell centres :math:`(\\ell + 1/2)/L`.

        Returns
        -------
        self : ContinuousAttention1D
            The fitted object.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention1D, GaussianRBF1D
        >>> att = ContinuousAttention1D(GaussianRBF1D.uniform(4, 0.3))
        >>> att.fit(np.ones((2, 10, 5))).coef_.shape
        (2, 4, 5)
        """
        values = as_float_array(values, "values")
        if values.ndim < 2:
            raise ValueError(f"values must have shape (..., L, D), got {values.shape}.")
        n_pos = values.shape[-2]
        if positions is None:
            positions = (np.arange(n_pos) + 0.5) / n_pos
        return self._fit(values, positions)

    def expectation(self, mu, sigma2):
        """Compute the basis expectations :math:`r = \\mathbb{E}_p[\\psi]`.

        Parameters
        ----------
        mu, sigma2 : array_like
            Density parameters (broadcast batch).

        Returns
        -------
        ndarray of shape (\\*batch_shape, N)
            See :func:`rbf_expectation_1d`.

        Examples
        --------
        >>> from sksparsemax.continuous import ContinuousAttention1D, GaussianRBF1D
        >>> ContinuousAttention1D(GaussianRBF1D.uniform(4, 0.3)).expectation(0.5, 0.1).shape
        (4,)
        """
        return rbf_expectation_1d(mu, sigma2, self.basis, self.alpha, **self.options)

    def context(self, mu, sigma2):
        """Context vectors :math:`c = B^\\top r`.

        Parameters
        ----------
        mu, sigma2 : array_like
            Density parameters; their batch shape broadcasts with the values' batch.

        Returns
        -------
        ndarray of shape (\\*batch_shape, D)
            The context vectors.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention1D, GaussianRBF1D
        >>> att = ContinuousAttention1D(GaussianRBF1D.uniform(8, 0.2)).fit(np.ones((20, 2)))
        >>> att.context(0.5, 0.01).shape
        (2,)
        """
        self._check_fitted()
        return self._combine(self.expectation(mu, sigma2))

    def context_vjp(self, mu, sigma2, grad_context):
        r"""Gradient of :math:`\langle g, c\rangle` w.r.t. the canonical parameters :math:`\theta`.

        :math:`\partial c/\partial\theta\cdot g = J\,(B g)` with :math:`J` from
        :func:`rbf_expectation_jacobian_1d`.

        Parameters
        ----------
        mu, sigma2 : array_like
            Density parameters.
        grad_context : array_like of shape (\*batch_shape, D)
            Upstream gradient with respect to the context.

        Returns
        -------
        ndarray of shape (\*batch_shape, 2)
            Gradient with respect to :math:`\theta = [\mu/\sigma^2, -1/(2\sigma^2)]`.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention1D, GaussianRBF1D
        >>> att = ContinuousAttention1D(GaussianRBF1D.uniform(8, 0.2)).fit(np.eye(10)[:, :3])
        >>> att.context_vjp([0.3, 0.6], 0.01, np.ones((2, 3))).shape
        (2, 2)
        """
        mu, sigma2 = np.asarray(mu, dtype=float), np.asarray(sigma2, dtype=float)
        return self._context_vjp(mu, sigma2, grad_context)

    def context_with_vjp(self, mu, sigma2):
        r"""Context vectors and their vector-Jacobian product, from one fused pass.

        Computes :math:`r` and :math:`J = \partial r/\partial\theta` together with
        :func:`rbf_expectation_and_jacobian_1d` (little more than the cost of ``r``
        alone) and returns the context with a closure for the backward pass, as a
        layer in a training loop needs both.

        Parameters
        ----------
        mu, sigma2 : array_like
            Density parameters; their batch shape broadcasts with the values' batch.

        Returns
        -------
        context : ndarray of shape (\*batch_shape, D)
            As :meth:`context`.
        vjp : callable
            ``vjp(grad_context)`` returns the gradient with respect to
            :math:`\theta`, shape ``mu``/``sigma2`` batch + ``(2,)``, as :meth:`context_vjp`.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention1D, GaussianRBF1D
        >>> att = ContinuousAttention1D(GaussianRBF1D.uniform(8, 0.2)).fit(np.eye(10)[:, :3])
        >>> context, vjp = att.context_with_vjp([0.3, 0.6], 0.01)
        >>> context.shape, vjp(np.ones((2, 3))).shape
        ((2, 3), (2, 2))
        """
        self._check_fitted()
        r, jac = rbf_expectation_and_jacobian_1d(mu, sigma2, self.basis, self.alpha, **self.options)
        return self._with_vjp(r, jac)


class ContinuousAttention2D(AttentionBase):
    r"""Continuous attention over an image (a 2D grid of positions) [1]_ [2]_.

    As :class:`ContinuousAttention1D` with positions :math:`t \in [0, 1]^2`,
    a :class:`GaussianRBF2D` basis and a bivariate beta-Gaussian density
    (location ``mu``, score scale ``Sigma``): :math:`c = B^\top r`,
    :math:`r = \mathbb{E}_p[\psi(t)]` from :func:`rbf_expectation_2d`.

    Parameters
    ----------
    basis : GaussianRBF2D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    ridge : float, default=0.1
        Ridge penalty :math:`\lambda \ge 0`.
    **options
        Passed to :func:`rbf_expectation_2d` (``n_angles``, ...).

    Attributes
    ----------
    coef_ : ndarray of shape (\*values_batch, N, D)
        Value-function coefficients :math:`B`, set by :meth:`fit`.

    References
    ----------
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins et al., "Sparse Continuous Distributions and Fenchel-Young
       Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import ContinuousAttention2D, GaussianRBF2D
    >>> image = np.random.default_rng(0).normal(size=(14, 14, 8))  # H x W x D
    >>> att = ContinuousAttention2D(GaussianRBF2D.grid(5, [0.1, 0.3])).fit(image)
    >>> att.context(mu=[0.5, 0.5], Sigma=0.02 * np.eye(2)).shape
    (8,)
    """

    _basis_type = GaussianRBF2D
    _expectation_vjp = staticmethod(rbf_expectation_vjp_2d)
    _point_shape, _scale_shape = (2,), (2, 2)

    @staticmethod
    def grid_positions(height, width):
        """Cell centres of an ``height x width`` grid on the unit square.

        Row ``i``, column ``j`` sits at :math:`((i + 1/2)/H, (j + 1/2)/W)`, in
        row-major order.

        Parameters
        ----------
        height, width : int
            Grid size.

        Returns
        -------
        ndarray of shape (height * width, 2)
            The positions.

        Examples
        --------
        >>> from sksparsemax.continuous import ContinuousAttention2D
        >>> ContinuousAttention2D.grid_positions(1, 2)
        array([[0.5 , 0.25],
               [0.5 , 0.75]])
        """
        rows = (np.arange(height) + 0.5) / height
        cols = (np.arange(width) + 0.5) / width
        return np.stack(np.meshgrid(rows, cols, indexing="ij"), axis=-1).reshape(-1, 2)

    def fit(self, values, positions=None):
        """Fit the value function by ridge regression.

        Parameters
        ----------
        values : array_like of shape (..., H, W, D) or (..., P, D)
            Values on a grid (when ``positions`` is None; see :meth:`grid_positions`)
            or at ``P`` given positions; leading dimensions are a batch.
        positions : array_like of shape (P, 2), optional
            Positions in the unit square.

        Returns
        -------
        self : ContinuousAttention2D
            The fitted object.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention2D, GaussianRBF2D
        >>> att = ContinuousAttention2D(GaussianRBF2D.grid(3, 0.3))
        >>> att.fit(np.ones((4, 6, 6, 2))).coef_.shape
        (4, 9, 2)
        """
        values = as_float_array(values, "values")
        if positions is None:
            if values.ndim < 3:
                raise ValueError(f"values must have shape (..., H, W, D) on a grid, got {values.shape}.")
            height, width = values.shape[-3:-1]
            positions = self.grid_positions(height, width)
            values = values.reshape(values.shape[:-3] + (height * width, values.shape[-1]))
        return self._fit(values, positions)

    def expectation(self, mu, Sigma):
        """Compute the basis expectations :math:`r = \\mathbb{E}_p[\\psi]`.

        Parameters
        ----------
        mu : array_like of shape (..., 2)
            Locations.
        Sigma : array_like of shape (..., 2, 2)
            Score scales.

        Returns
        -------
        ndarray of shape (\\*batch_shape, N)
            See :func:`rbf_expectation_2d`.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention2D, GaussianRBF2D
        >>> att = ContinuousAttention2D(GaussianRBF2D.grid(2, 0.3))
        >>> att.expectation([0.5, 0.5], 0.05 * np.eye(2)).shape
        (4,)
        """
        return rbf_expectation_2d(mu, Sigma, self.basis, self.alpha, **self.options)

    def context(self, mu, Sigma):
        """Context vectors :math:`c = B^\\top r`.

        Parameters
        ----------
        mu : array_like of shape (..., 2)
            Locations.
        Sigma : array_like of shape (..., 2, 2)
            Score scales.

        Returns
        -------
        ndarray of shape (\\*batch_shape, D)
            The context vectors.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention2D, GaussianRBF2D
        >>> att = ContinuousAttention2D(GaussianRBF2D.grid(3, 0.3)).fit(np.ones((5, 5, 2)))
        >>> att.context([[0.5, 0.5], [0.2, 0.7]], 0.05 * np.eye(2)).shape
        (2, 2)
        """
        self._check_fitted()
        return self._combine(self.expectation(mu, Sigma))

    def context_vjp(self, mu, Sigma, grad_context):
        r"""Gradient of :math:`\langle g, c\rangle` w.r.t. the canonical parameters :math:`\theta`.

        Parameters
        ----------
        mu : array_like of shape (..., 2)
            Locations.
        Sigma : array_like of shape (..., 2, 2)
            Score scales.
        grad_context : array_like of shape (\*batch_shape, D)
            Upstream gradient with respect to the context.

        Returns
        -------
        ndarray of shape (\*batch_shape, 6)
            Gradient with respect to :math:`\theta = [\Sigma^{-1}\mu, \mathrm{vec}(-\frac12\Sigma^{-1})]`.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention2D, GaussianRBF2D
        >>> att = ContinuousAttention2D(GaussianRBF2D.grid(3, 0.3)).fit(np.ones((5, 5, 2)))
        >>> att.context_vjp([0.5, 0.5], 0.05 * np.eye(2), np.ones(2)).shape
        (6,)
        """
        mu, Sigma = np.asarray(mu, dtype=float), np.asarray(Sigma, dtype=float)
        if mu.shape[-1:] != (2,) or Sigma.shape[-2:] != (2, 2):
            raise ValueError(f"mu must be (..., 2) and Sigma (..., 2, 2), got {mu.shape} and {Sigma.shape}.")
        return self._context_vjp(mu, Sigma, grad_context)

    def context_with_vjp(self, mu, Sigma):
        r"""Context vectors and their vector-Jacobian product, from one fused pass.

        Computes :math:`r` and :math:`J = \partial r/\partial\theta` together with
        :func:`rbf_expectation_and_jacobian_2d` and returns the context with a closure
        for the backward pass.

        Parameters
        ----------
        mu : array_like of shape (..., 2)
            Locations.
        Sigma : array_like of shape (..., 2, 2)
            Score scales.

        Returns
        -------
        context : ndarray of shape (\*batch_shape, D)
            As :meth:`context`.
        vjp : callable
            ``vjp(grad_context)`` returns the gradient with respect to
            :math:`\theta` (batch + ``(6,)``), as :meth:`context_vjp`.

        Examples
        --------
        >>> import numpy as np
        >>> from sksparsemax.continuous import ContinuousAttention2D, GaussianRBF2D
        >>> att = ContinuousAttention2D(GaussianRBF2D.grid(3, 0.3)).fit(np.ones((5, 5, 2)))
        >>> context, vjp = att.context_with_vjp([0.5, 0.5], 0.05 * np.eye(2))
        >>> context.shape, vjp(np.ones(2)).shape
        ((2,), (6,))
        """
        self._check_fitted()
        r, jac = rbf_expectation_and_jacobian_2d(mu, Sigma, self.basis, self.alpha, **self.options)
        return self._with_vjp(r, jac)
