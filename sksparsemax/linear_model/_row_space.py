r"""Exact reduction of a problem with more features than samples to the row space of ``X``."""

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, eigh

from ._layout import CoefLayout
from ._preconditioner import MAX_SETUP_EVALUATIONS


class RowSpaceReduction:
    r"""Exact reduction of a problem with more features than samples.

    With an L2 penalty the optimal weights lie in the row space of the
    (centred) data: the loss sees ``W`` only through :math:`X_c W^\top`
    and any component orthogonal to the rows only adds to the penalty. With
    sample weights :math:`S` (rows of weight 0 left out), the weighted
    kernel :math:`S^{1/2} X_c X_c^\top S^{1/2} = E \Lambda E^\top` (its
    :math:`r \le n` positive eigenvalues) gives the orthonormal basis
    :math:`P = \Lambda^{-1/2} E^\top S^{1/2} X_c` of that space, and with
    :math:`W = V P`

    .. math::

        X W^\top + b = \tilde X V^\top + c, \qquad
        \tilde X = X_c P^\top \; (= S^{-1/2} E \Lambda^{1/2}
        \text{ on the weighted rows}), \quad c = b + W\mu, \qquad
        \|W\|_F = \|V\|_F:

    the same objective in ``r`` features instead of ``d``, solved exactly
    (the minimiser maps back to the minimiser). L-BFGS then works on
    ``K r`` instead of ``K d`` variables, whose own cost per iteration
    dominates for wide sparse data, and the reduced features are whitened
    by :class:`GramPreconditioner` (their weighted Gram matrix is the
    diagonal :math:`\Lambda`). The weighted mean :math:`\mu` centres the
    data, so that integer weights and repeated rows give the same reduced
    problem (up to the signs of its features).

    ``P`` (dense ``r x d``) is never formed: ``W = (V \Lambda^{-1/2} E^\top
    S^{1/2}) X_c`` is one product with ``X``, sparse or dense.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    fit_intercept : bool
        Centre the data (the intercepts absorb the means).
    sample_weight : ndarray of shape (n_samples,), default=None
    """

    def __init__(self, X, fit_intercept, sample_weight=None):
        X64 = X if X.dtype == np.float64 else X.astype(np.float64)
        if sp.issparse(X64):
            X64 = X64.tocsr()
        n = X64.shape[0]
        if sample_weight is None:
            s = np.ones(n)
            rows = np.arange(n)
        else:
            s = np.asarray(sample_weight, dtype=np.float64)
            rows = np.flatnonzero(s > 0)
        Xp = X64[rows]
        sqrt_s = np.sqrt(s[rows])
        cross = Xp @ X64.T  # X_pos X^T, (n_pos, n)
        cross = cross.toarray() if sp.issparse(cross) else np.asarray(cross)
        if fit_intercept:
            self.mean = np.asarray(s @ X64).ravel() / s.sum()
            Xmu = np.asarray(X64 @ self.mean).ravel()
            # X_c,pos X_c^T = X_pos X^T - (X_pos mu) 1^T - 1 (X mu)^T + mu^T mu
            cross -= Xmu[rows][:, None]
            cross -= Xmu[None, :]
            cross += float(self.mean @ self.mean)
        else:
            self.mean = None
        kernel = cross[:, rows] * sqrt_s[:, None] * sqrt_s[None, :]
        kernel = 0.5 * (kernel + kernel.T)
        eigval, eigvec = eigh(kernel, overwrite_a=True, check_finite=False)
        cutoff = max(eigval[-1], 0.0) * max(X.shape) * np.finfo(np.float64).eps
        keep = eigval > cutoff
        # A = Lambda^{-1/2} E^T S^{1/2}: P = A X_c,pos (r, n_pos).
        self._A = (eigvec[:, keep] * sqrt_s[:, None]).T / np.sqrt(eigval[keep])[:, None]
        # X~ = X_c P^T = (X_c X_c,pos^T) A^T, for every row (weight 0 too).
        self.features = cross.T @ self._A.T
        self._Xp = Xp
        self.fit_intercept = fit_intercept

    @property
    def n_reduced(self):
        """Number ``r`` of reduced features."""
        return self.features.shape[1]

    def reduce(self, w0, n_classes):
        """Packed reduced coefficients ``(V, c)`` of packed ``(W, b)``.

        ``V = W P^T`` is the projection of ``W`` on the row space (the
        orthogonal part, zero at the optimum, is dropped).
        """
        W0, b0 = CoefLayout.of(w0, n_classes, self.fit_intercept).split(w0)
        S = np.asarray(self._Xp @ W0.T)  # X_pos W0^T, (n_pos, K)
        if self.fit_intercept:
            S = S - W0 @ self.mean  # X_c,pos W0^T
        V0 = (self._A @ S).T
        c0 = None
        if self.fit_intercept:
            c0 = b0 + W0 @ self.mean
        return CoefLayout(n_classes, self.n_reduced, self.fit_intercept).pack(V0, c0)

    def expand(self, w_reduced, n_classes):
        """Weights (K, d) and intercepts (K,) or None of reduced coefficients."""
        V, c = CoefLayout(n_classes, self.n_reduced, self.fit_intercept).split(w_reduced)
        B = V @ self._A  # (K, n_pos): W = B X_c,pos
        W = np.asarray((self._Xp.T @ B.T).T)
        b = None
        if self.fit_intercept:
            W -= np.outer(B.sum(axis=1), self.mean)
            b = c - W @ self.mean
        return W, b


def row_space_reduction(X, n_classes, fit_intercept, sample_weight=None):
    """A :class:`RowSpaceReduction` of ``X`` if it pays off, else None.

    Used when there are at least twice as many features as samples and the
    setup (the ``n x n`` kernel matrix and its eigendecomposition, about
    ``n^3 + n nnz`` operations) costs at most :data:`MAX_SETUP_EVALUATIONS`
    iterations of L-BFGS on the full problem (about ``4 nnz K`` for the two
    products with ``X`` plus ``40 d K`` for L-BFGS's own updates).
    """
    n, d = X.shape
    if n < 2 or d < 2 * n:
        return None
    nnz = X.nnz if sp.issparse(X) else n * d
    setup = float(n) ** 3 + float(n) * nnz
    per_iteration = 4.0 * nnz * n_classes + 40.0 * d * n_classes
    if setup > MAX_SETUP_EVALUATIONS * per_iteration:
        return None
    try:
        reduction = RowSpaceReduction(X, fit_intercept, sample_weight)
    except (LinAlgError, ValueError):
        return None
    if reduction.n_reduced == 0:
        return None
    return reduction
