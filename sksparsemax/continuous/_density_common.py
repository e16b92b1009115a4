"""Pieces shared by the 1D and the d-dimensional beta-Gaussian densities (private).

With ``q`` the squared Mahalanobis distance to the location and ``rho2 = -2 tau``
(see :mod:`._utils`), both densities are ``[(alpha - 1) (rho2 - q) / 2]_+ **
(1 / (alpha - 1))`` for ``alpha > 1``; the log-density and the Tsallis entropy
are written once here in terms of ``q``, ``rho2`` and the dimension ``d``.
"""

import numpy as np

__all__ = []

REFERENCES = """
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins, M. Treviso, A. Farinhas, P. M. Q. Aguiar, M. A. T. Figueiredo,
       M. Blondel and V. Niculae, "Sparse Continuous Distributions and Fenchel-Young
       Losses", Journal of Machine Learning Research 23(257), 2022.
"""


def with_references(cls):
    """Class decorator: fill the ``{references}`` slot of the class docstring."""
    cls.__doc__ = cls.__doc__.replace("{references}", REFERENCES.strip())
    return cls


def check_random_state(random_state):
    """A Generator or RandomState as given, else a new Generator seeded with it."""
    if isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    return np.random.default_rng(random_state)


def size_tuple(size):
    """``size`` of :meth:`rvs` as a tuple of ints (``None`` stays ``None``)."""
    if size is None:
        return None
    if np.ndim(size) == 0:
        return (int(size),)
    return tuple(int(s) for s in size)


def log_kernel(q, rho2, alpha):
    """log of [(alpha - 1) (rho2 - q) / 2]_+ ** (1 / (alpha - 1)); -inf outside the support."""
    inner = 0.5 * (alpha - 1) * (rho2 - q)
    inside = inner > 0
    safe = np.where(inside, inner, 1.0)
    return np.where(inside, np.log(safe) / (alpha - 1), -np.inf)


def tsallis_entropy(rho2, d, alpha):
    """(1 - int p^alpha) / (alpha (alpha - 1)), int p^alpha = alpha rho2 / (d + 2 alpha / (alpha - 1))."""
    int_p_alpha = alpha * rho2 / (d + 2 * alpha / (alpha - 1))
    return (1 - int_p_alpha) / (alpha * (alpha - 1))
