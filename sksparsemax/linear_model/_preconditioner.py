r"""Whitening of the weights for L-BFGS on dense data with few features.

L-BFGS converges slowly when the objective is badly conditioned, and the
conditioning of a linear model's objective is that of its regularised Gram
matrix. For the sparsemax loss this matters more than for the logistic
loss: its Hessian with respect to the scores of a sample, the Jacobian
:math:`\operatorname{diag}(s) - s s^\top / |S|` of sparsemax, has the
eigenvalue 1 on the support, where the logistic loss has at most 1/4. With
the features correlated (or merely many), plain L-BFGS needs several times
the iterations of a logistic regression at the same ``C``.

:class:`GramPreconditioner` changes the variables: with the centred Gram
:math:`G = X^\top X / n - \mu\mu^\top` (:math:`\mu` the feature means),
the Cholesky factor :math:`L L^\top = G + \lambda I` and

.. math::

    W = V L^{-1}, \qquad b = c - W\mu,

the model-side quadratic form :math:`\tfrac1n\|X_c W^\top\|^2 +
\lambda\|W\|^2` becomes :math:`\|V\|^2` (one row per class), and the
intercepts decouple from the weights. The objective and its minimiser are
unchanged: only the path of L-BFGS is (and its stopping rule, below).

It costs one Gram matrix (:math:`n d^2` flops), one Cholesky factorisation
(:math:`d^3/3`) and two products with its inverse per evaluation (:math:`2Kd^2`,
against :math:`4ndK` for the two products with ``X``), so the full matrix is
only used where that is cheap next to the iterations it saves: a setup of at
most :data:`MAX_SETUP_EVALUATIONS` evaluations (:func:`gram_preconditioner`).
Otherwise (many features, e.g. text) only its diagonal is used: every
feature is scaled by its (weighted) standard deviation, centred by its mean,
which costs one pass over the data and already removes most of the
iterations on bag-of-words features, whose scales span orders of magnitude.

The intercepts get scales of their own, from the loss's curvature
(:mod:`._intercept_scaling`): :meth:`GramPreconditioner.scale_intercepts`
makes them part of the change of variables, :math:`b = M_t c - W\mu`.

Stopping rule: L-BFGS stops once the largest entry of the gradient is at
most ``tol`` both with respect to the original coefficients ``(W, b)`` (the
rule of :class:`~sklearn.linear_model.LogisticRegression`) and with respect
to the whitened ones ``(V, c)``, which is invariant to the scale of the
features: the first alone can hold far from the minimiser when the features
are small (row-normalised text), the second alone when they are large.
"""

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cholesky, solve_triangular
from scipy.linalg.lapack import dtrtri

from ..transforms import _backend
from ._intercept_scaling import InterceptScaling
from ._layout import CoefLayout
from ._lbfgs import _fused_kernels, _max_abs

#: The setup (Gram + Cholesky) may cost at most this many objective
#: evaluations (two products of X with a (d, K) matrix each).
MAX_SETUP_EVALUATIONS = 15


#: The full preconditioner needs two d x d float64 matrices (the moments'
#: Gram matrix, kept for a regularisation path, and the inverse Cholesky
#: factor); they may take at most as many entries as X (its nonzeros if
#: sparse), or this many, whichever is larger (16 MiB).
MAX_DENSE_ENTRIES = 2**21

#: Rows per block of the weighted (or float32) Gram matrix: blocks of about
#: 8 MB, so that no copy of X is made.
_BLOCK_ENTRIES = 2**20


def _row_blocks(X, s):
    """Consecutive row blocks of dense ``X`` as float64 copies, with their weights.

    Blocks of about :data:`_BLOCK_ENTRIES` entries, so that no full copy of
    ``X`` is made.
    """
    step = max(1, _BLOCK_ENTRIES // max(X.shape[1], 1))
    for start in range(0, X.shape[0], step):
        yield X[start : start + step].astype(np.float64), s[start : start + step]


def _weighted_gram(X, sample_weight):
    """``X^T S X / sum(s)`` and the weighted mean ``s^T X / sum(s)`` (float64).

    With ``S = diag(sample_weight)`` (the identity if None), so that integer
    weights and repeated rows give the same matrix. Float64 data without
    weights take one BLAS ``syrk``; otherwise the rows go through in blocks
    (float64, scaled by ``sqrt(s)``), never a full copy of ``X``.
    """
    n, d = X.shape
    if sample_weight is None and X.dtype == np.float64 and not sp.issparse(X):
        G = X.T @ X  # BLAS syrk, no copy
        G /= n
        return G, X.mean(axis=0)
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
    total = float(s.sum())
    if sp.issparse(X):
        Xs = sp.diags(np.sqrt(s)) @ X.astype(np.float64, copy=False)  # a copy of the nonzeros
        G = np.asarray((Xs.T @ Xs).todense())
        G /= total
        return G, np.asarray(s @ X).ravel() / total
    G = np.zeros((d, d))
    mean = np.zeros(d)
    for block, sb in _row_blocks(X, s):
        mean += sb @ block
        block *= np.sqrt(sb)[:, None]
        G += block.T @ block
    G /= total
    mean /= total
    return G, mean


def _weighted_moments(X, sample_weight):
    """Weighted second moments ``s^T X**2 / sum(s)`` and means (float64, d each)."""
    n = X.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
    total = float(s.sum())
    if sp.issparse(X):
        X64 = X.astype(np.float64, copy=False)
        second = np.asarray(s @ X64.multiply(X64)).ravel()
        mean = np.asarray(s @ X64).ravel()
    else:
        second = np.zeros(X.shape[1])
        mean = np.zeros(X.shape[1])
        for block, sb in _row_blocks(X, s):
            mean += sb @ block
            second += sb @ (block * block)
    return second / total, mean / total


class GramMoments:
    """The weighted moments of ``X`` that a :class:`GramPreconditioner` factorises.

    They do not depend on the regularisation, so a regularisation path
    computes them once and factorises ``G + l2 I`` for each ``l2``
    (:func:`gram_preconditioner_path`).

    Attributes
    ----------
    mean : ndarray of shape (n_features,)
        The weighted feature means.
    G : ndarray of shape (n_features, n_features) or None
        The weighted Gram matrix, centred when ``fit_intercept``; None for
        the diagonal variant.
    var : ndarray of shape (n_features,) or None
        The diagonal variant: the weighted variances (second moments without
        an intercept).
    largest_off_diagonal : float or None
        The largest absolute off-diagonal entry of ``G``.
    """

    def __init__(self, X, fit_intercept, sample_weight=None, diagonal=False):
        if diagonal:
            second, mean = _weighted_moments(X, sample_weight)
        else:
            second, mean = _weighted_gram(X, sample_weight)
        self._set(second, mean, fit_intercept, diagonal)

    @classmethod
    def from_sums(cls, second, mean, total, fit_intercept, diagonal=False):
        """The moments from their weighted sums (``X^T S X`` or ``s^T X**2``, ``s^T X``).

        For data summed block by block (a fit on Dask collections): the
        sums are divided by the total weight ``total``.
        """
        self = cls.__new__(cls)
        self._set(np.asarray(second, dtype=np.float64) / total,
                  np.asarray(mean, dtype=np.float64) / total, fit_intercept, diagonal)
        return self

    def _set(self, second, mean, fit_intercept, diagonal):
        """Centre (with an intercept) the normalised moments and keep them."""
        self.G = self.var = self.largest_off_diagonal = None
        self.consumed = False  # see GramPreconditioner's overwrite_moments
        self.mean = mean
        if diagonal:
            var = second - self.mean**2 if fit_intercept else second
            self.var = np.maximum(var, 0.0)
            return
        G, d = second, second.shape[0]
        if fit_intercept:
            step = 64  # G -= mean mean^T in row blocks: no d x d temporary
            for start in range(0, d, step):
                G[start : start + step] -= np.outer(self.mean[start : start + step], self.mean)
        diag = G.diagonal().copy()
        G.flat[:: d + 1] = 0.0  # the largest off-diagonal entry, no temporary
        largest_off = max(float(G.max()), -float(G.min())) if d else 0.0
        G.flat[:: d + 1] = diag
        self.largest_off_diagonal = largest_off
        self.G = G


class GramPreconditioner:
    """The change of variables ``w = P(v)`` that whitens the regularised Gram.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Training data.
    n_classes : int
        Number of score columns K.
    fit_intercept : bool
        Whether the packed coefficients end with K intercepts (then the
        Gram is centred and the intercepts are shifted by ``W mu``).
    l2 : float
        The L2 strength of the objective; also the ridge of the factorised
        matrix (raised to a small fraction of the Gram's mean diagonal if it
        is smaller, so that the factorisation exists).
    sample_weight : ndarray of shape (n_samples,), default=None
        The Gram matrix and the means are weighted like the objective, so
        that weights and repeated samples give the same path.
    diagonal : bool, default=False
        Use only the diagonal of the Gram matrix (the features' weighted
        variances plus ``l2``): a column scaling, for data whose full Gram
        matrix would cost too much (many features). Costs one pass over
        the nonzeros of ``X``.
    moments : GramMoments, default=None
        The moments of ``X`` (weighted by ``sample_weight``), when the
        caller has them (a regularisation path); None: computed here.
    overwrite_moments : bool, default=False
        Factorise the Gram matrix of ``moments`` in place rather than a copy
        of it (the last ``l2`` of a path: one d x d matrix fewer); the
        moments cannot serve another preconditioner afterwards. Moments
        computed here are always factorised in place.

    Raises
    ------
    numpy.linalg.LinAlgError
        If the Cholesky factorisation fails (then use no preconditioner).
    ValueError
        If ``moments`` were factorised in place by an earlier preconditioner.
    """

    def __init__(self, X, n_classes, fit_intercept, l2, sample_weight=None,
                 diagonal=False, moments=None, overwrite_moments=False):
        d = X.shape[1]
        self.layout = CoefLayout(n_classes, d, fit_intercept)
        self.fit_intercept = fit_intercept
        if moments is None:
            moments = GramMoments(X, fit_intercept, sample_weight, diagonal)
            overwrite_moments = True
        if moments.consumed:
            raise ValueError("these GramMoments were factorised in place by an earlier "
                             "GramPreconditioner (overwrite_moments=True)")
        self.mean = moments.mean if fit_intercept else None
        if moments.G is None:
            var = moments.var
            ridge = max(float(l2), 1e-10 * max(float(np.mean(var)), 1e-300))
            self.L_inv = None
            self.scale = np.sqrt(var + ridge)
            return
        if overwrite_moments:
            G, moments.G, moments.consumed = moments.G, None, True
        else:
            G = moments.G.copy()  # factorised in place; the moments serve every l2
        ridge = max(float(l2), 1e-10 * max(float(np.trace(G)) / d, 1e-300))
        G.flat[:: d + 1] += ridge
        if moments.largest_off_diagonal <= 1e-8 * np.max(G.diagonal()):
            # A diagonal Gram (uncorrelated features, e.g. the reduced
            # features of RowSpaceReduction): L = diag(sqrt(G_jj)).
            self.L_inv = None
            self.scale = np.sqrt(G.diagonal())
            return
        # Lower Cholesky factor: L L^T = G + ridge I, and its inverse (well
        # conditioned thanks to the ridge): two products with a triangular
        # matrix per evaluation cost less than two triangular solves. Only
        # L^{-1} is kept, in G's own memory: G is symmetric, so G.T is the
        # same matrix in Fortran order, which LAPACK factorises in place into
        # U = L^T and then inverts in place into U^{-1} = L^{-T}, whose
        # transpose is L^{-1} in C order. The one map that needs L
        # (variables, once per fit) solves with L^{-1} instead.
        upper = cholesky(G.T, lower=False, overwrite_a=True, check_finite=False)
        del G
        inv_upper, info = dtrtri(upper, lower=0, overwrite_c=1)
        if info != 0:
            raise LinAlgError("the Cholesky factor of the Gram matrix is singular")
        self.L_inv = inv_upper.T

    #: The map of the intercept variables (:meth:`scale_intercepts`), or
    #: None (the identity).
    intercepts = None

    def scale_intercepts(self, scale, keep_sum):
        """Make the intercepts ``b = M_t c - W mu``, ``t = scale`` of shape (K,).

        ``scale``: from :func:`._intercept_scaling.intercept_scales`, so that
        every intercept variable has about the same curvature; None leaves
        them as they are. ``keep_sum``: the loss is shift-invariant (see
        :class:`._intercept_scaling.InterceptScaling`). No effect without
        intercepts.
        """
        if self.fit_intercept and scale is not None:
            self.intercepts = InterceptScaling(scale, keep_sum)

    def _split(self, flat):
        return self.layout.split(flat)

    def coef(self, v):
        """Packed coefficients ``w = (W, b)`` of the packed variables ``v``."""
        V, c = self._split(v)
        w = np.empty_like(v)
        W, b = self._split(w)
        # W = V L^{-1}.
        if self.L_inv is None:
            np.divide(V, self.scale, out=W)
        else:
            _times_lower(V, self.L_inv, W)
        if self.fit_intercept:
            if self.intercepts is None:
                b[...] = c
            else:
                self.intercepts.apply(c, out=b)
            b -= W @ self.mean
        return w

    def variables(self, w):
        """Packed variables ``v`` of the packed coefficients ``w`` (inverse of coef)."""
        W, b = self._split(w)
        v = np.empty_like(w, dtype=np.float64)
        V, c = self._split(v)
        if self.L_inv is None:
            np.multiply(W, self.scale, out=V)
        else:
            # V = W L, i.e. V L^{-1} = W: L^{-T} V^T = W^T, a triangular solve.
            V[...] = solve_triangular(self.L_inv, W.T, lower=True, trans="T",
                                      check_finite=False).T
        if self.fit_intercept:
            c[...] = b + W @ self.mean
            if self.intercepts is not None:
                self.intercepts.solve(c, out=c)
        return v

    def gradient(self, g):
        """Gradient with respect to ``v`` of the gradient ``g`` with respect to ``w``.

        ``g_V = (g_W - g_b mu^T) L^{-T}`` and ``g_c = M_t g_b`` (``M_t``
        is symmetric).
        """
        gW, gb = self._split(g)
        out = np.empty_like(g)
        gV, gc = self._split(out)
        if self.fit_intercept:
            self._intercept_gradient(gb, gc)
        if self.L_inv is None:  # in place in gV: no (K, d) temporary
            if self.fit_intercept:
                np.multiply.outer(gb, self.mean, out=gV)
                np.subtract(gW, gV, out=gV)
                gV /= self.scale
            else:
                np.divide(gW, self.scale, out=gV)
            return out
        if self.fit_intercept:
            # R = g_W - g_b mu^T, the one (K, d) temporary: einsum writes the
            # outer product without the iteration buffers of NumPy's
            # broadcast product (which would double R on small problems).
            R = np.einsum("i,j->ij", gb, self.mean)
            np.subtract(gW, R, out=R)
        else:
            R = gW
        # g_V = R L^{-T}: the adjoint of V -> V L^{-1}.
        _times_lower(R, self.L_inv, gV, transposed=True)
        return out

    def gradient_and_max(self, g):
        """:meth:`gradient` of ``g``, and the largest absolute entry of both gradients.

        What the stopping rule tests at every evaluation: for the diagonal
        variant on many coefficients the numba backend computes all three in
        one pass over ``g`` (:func:`sksparsemax.transforms._numba_vectors.diagonal_gradient`).
        """
        kernels = _fused_kernels(g.size) if self.L_inv is None else None
        if kernels is None:
            gv = self.gradient(g)
            return gv, max(_max_abs(g), _max_abs(gv))
        gW, gb = self._split(g)
        out = np.empty_like(g)
        gV, gc = self._split(out)
        largest = 0.0
        if self.fit_intercept:
            self._intercept_gradient(gb, gc)
            largest = max(_max_abs(gb), _max_abs(gc))
        else:
            gb = np.empty(0)
        mw, mv = kernels.diagonal_gradient(
            gW, gb, self.mean if self.fit_intercept else self.scale, self.scale, gV)
        return out, max(float(mw), float(mv), largest)

    def _intercept_gradient(self, gb, gc):
        """``gc = M_t gb``: the gradient with respect to the intercept variables."""
        if self.intercepts is None:
            gc[...] = gb
        else:
            self.intercepts.apply(gb, out=gc)


#: Features from which the blocked triangular kernels are used; below, the
#: products are small and BLAS's need no compilation.
_MIN_KERNEL_FEATURES = 64


def _times_lower(V, T, out, transposed=False):
    """``out[...] = V @ T`` (or ``V @ T.T``) for a lower triangular C-ordered ``T`` (d, d).

    ``V`` has a few rows (one per class), where BLAS runs far below its peak
    and does not skip the zero triangle: the numba backend's blocked
    kernels do both (:func:`sksparsemax.transforms._backend.kernels`).
    ``out`` (K, d), C-ordered and apart from ``V``, is a view into the packed
    vector the caller returns, so that no (K, d) temporary is made.
    """
    # For few features BLAS is as fast, and nothing gets compiled.
    kernels = _backend.kernels() if T.shape[0] >= _MIN_KERNEL_FEATURES else None
    if kernels is None:
        np.matmul(V, T.T if transposed else T, out=out)
        return
    V = np.ascontiguousarray(V, dtype=np.float64)
    if transposed:
        kernels.times_lower_transposed(V, T, out)
    else:
        kernels.times_lower(V, T, out)


def gram_preconditioner(X, n_classes, fit_intercept, l2, sample_weight=None):
    """A :class:`GramPreconditioner` for ``X`` and ``l2`` (see :func:`gram_preconditioner_path`)."""
    return gram_preconditioner_path(X, n_classes, fit_intercept, sample_weight)(l2, last=True)


def gram_preconditioner_path(X, n_classes, fit_intercept, sample_weight=None):
    """``(l2, last=False) -> GramPreconditioner`` for ``X``: full if affordable, else diagonal.

    The full Gram matrix is used when it and its factorisation cost at most
    :data:`MAX_SETUP_EVALUATIONS` evaluations of the objective (dense:
    ``n d^2 + d^3 / 3`` against ``4 n d K`` flops each; sparse:
    ``nnz^2 / n + d^3 / 3`` against ``4 nnz K``) and its two ``d x d``
    matrices take no more memory than ``X`` or :data:`MAX_DENSE_ENTRIES`
    entries; otherwise (many features, e.g. text) or if the factorisation
    fails, its diagonal: each feature scaled by its standard deviation. The
    moments are computed once, here, and each ``l2`` of a regularisation
    path costs one factorisation; the call with ``last=True`` (no call may
    follow it) factorises the moments' Gram matrix in place instead of a
    copy, so a fit holds a single ``d x d`` matrix from then on. The
    function returns None for a single feature.
    """
    nnz = X.nnz if sp.issparse(X) else None
    return preconditioner_path(
        X, X.shape, nnz, n_classes, fit_intercept,
        lambda diagonal: GramMoments(X, fit_intercept, sample_weight, diagonal),
    )


def preconditioner_path(X, shape, nnz, n_classes, fit_intercept, moments_of):
    """:func:`gram_preconditioner_path` given how to compute the moments.

    ``shape`` and ``nnz`` (None for dense data) choose between the full and
    the diagonal variant; ``moments_of(diagonal)`` returns the
    :class:`GramMoments` (in memory, or summed over the row blocks of a Dask
    fit: :mod:`._dask_fit`). ``X`` is only passed on to
    :class:`GramPreconditioner`, which reads its number of columns.
    """
    n, d = shape
    if d < 2:
        return lambda l2, last=False: None
    if nnz is not None:
        # The sparse Gram costs about nnz^2 / n; products with X 2 nnz K.
        nnz = float(nnz)
        setup = nnz * nnz / max(n, 1) + d**3 / 3.0
        per_evaluation = 4.0 * nnz * n_classes
    else:
        setup = n * d * d + d**3 / 3.0
        per_evaluation = 4.0 * n * d * n_classes
    size = nnz if nnz is not None else float(n) * d
    small = 2.0 * d * d <= max(size, MAX_DENSE_ENTRIES)
    full = None
    if small and setup <= MAX_SETUP_EVALUATIONS * per_evaluation:
        full = moments_of(False)
    diagonal = []  # the diagonal moments, computed on first use

    def at(l2, last=False):
        if full is not None:
            if full.consumed:
                raise ValueError("the path's last preconditioner (last=True) was built already")
            try:
                return GramPreconditioner(X, n_classes, fit_intercept, l2, moments=full,
                                          overwrite_moments=last)
            except (LinAlgError, ValueError):  # not positive definite, or not finite
                pass
        if not diagonal:
            diagonal.append(moments_of(True))
        return GramPreconditioner(X, n_classes, fit_intercept, l2, moments=diagonal[0])

    return at
