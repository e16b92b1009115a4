"""The packing of a linear model's coefficients into one flat vector.

L-BFGS and Newton-CG work on one flat float64 vector; the linear loss, the
preconditioners and the row-space reduction all read and write the weights
``W`` (K, d) and the intercepts ``b`` (K,) in it. :class:`CoefLayout` is the
one description of that packing they share.
"""

import numpy as np


class CoefLayout:
    """Packed coefficients ``w = (W.ravel(), b)``: weights first, then intercepts.

    Parameters
    ----------
    n_classes : int
        Number of score columns K (rows of ``W``).
    n_features : int
        Number of features d (columns of ``W``).
    fit_intercept : bool
        Whether ``w`` ends with K intercepts.
    """

    def __init__(self, n_classes, n_features, fit_intercept):
        self.n_classes = int(n_classes)
        self.n_features = int(n_features)
        self.fit_intercept = bool(fit_intercept)

    @classmethod
    def of(cls, coef, n_classes, fit_intercept):
        """The layout of a packed vector ``coef`` with ``n_classes`` rows."""
        n_weights = coef.shape[0] - (n_classes if fit_intercept else 0)
        return cls(n_classes, n_weights // max(n_classes, 1), fit_intercept)

    @property
    def n_weights(self):
        """Number of weights, ``K * d``."""
        return self.n_classes * self.n_features

    @property
    def n_coef(self):
        """Length of the packed vector."""
        return self.n_weights + (self.n_classes if self.fit_intercept else 0)

    def zeros(self):
        """Packed all-zero coefficients (float64)."""
        return np.zeros(self.n_coef, dtype=np.float64)

    def split(self, coef):
        """Views of the weights (K, d) and the intercepts (K,) or None."""
        W = coef[: self.n_weights].reshape(self.n_classes, self.n_features)
        b = coef[self.n_weights :] if self.fit_intercept else None
        return W, b

    def pack(self, weights, intercept=None):
        """Pack ``weights`` (K, d) and ``intercept`` (K,) into a float64 vector.

        Without ``intercept`` the intercepts are 0 (when the layout has them).
        """
        coef = self.zeros()
        W, b = self.split(coef)
        W[...] = weights
        if b is not None and intercept is not None:
            b[...] = intercept
        return coef
