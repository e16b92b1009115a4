"""A loss of linear scores: packs the weights, adds the L2 penalty.

This is the layer between a loss of raw scores (:mod:`sksparsemax.losses`) and
the solver: it maps a flat vector of coefficients to the raw scores
``Z = X W^T + b`` of every sample and back-propagates the loss gradient
``dL/dZ`` to the coefficients, in the manner of scikit-learn's
``sklearn.linear_model._linear_loss.LinearModelLoss``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot

from ..losses import BaseLoss, SoftmaxLoss, SparsemaxLoss, SparseSoftmaxLoss
from ..losses._sparsemax import kernel_target
from ..losses._targets import resolve_target
from ..transforms import get_backend

# The one-pass kernel (numba backend, dense X) keeps the K x d gradient in the
# CPU's caches: beyond this many coefficients BLAS is faster. (The CSR kernel
# has no such limit: scipy's sparse products are no faster than it.)
MAX_FUSED_COEF = 2**14

# The losses with compiled kernels in ._numba_linear, by the prefix of their
# names: "<prefix>_linear_loss_gradient" (dense X) and
# "<prefix>_csr_linear_loss_gradient" (CSR X). Looked up by name: numba is
# only imported when a kernel is used.
_COMPILED_LOSSES = {
    SparsemaxLoss: "sparsemax",
    SoftmaxLoss: "softmax",
    SparseSoftmaxLoss: "sparse_softmax",
}


class LinearModelLoss:
    r"""Objective of a multi-class linear model with an L2 penalty.

    The coefficients are packed into one flat float64 vector ``w`` of length
    ``K*d`` (``fit_intercept=False``) or ``K*d + K``: first the weights
    ``W`` of shape (K, d) in C order (one row per class), then the
    intercepts ``b`` of shape (K,). The raw scores are
    ``Z = X @ W.T + b`` (shape (n, K)) and the objective is

    .. math::

        f(w) = \frac{1}{\sum_i s_i} \sum_{i=1}^n s_i\, L(Z_i; t_i)
               + \frac{\lambda}{2} \|W\|_F^2,

    with sample weights :math:`s_i` (all ones when ``sample_weight`` is
    None), targets :math:`t_i` and ``l2_reg_strength`` :math:`\lambda`; the
    intercepts are not penalised. Estimators pass
    :math:`\lambda = 1 / (C \sum_i s_i)`, so that ``C`` means what it means
    for :class:`~sklearn.linear_model.LogisticRegression`.

    ``X`` may be a dense array or a scipy.sparse CSR/CSC matrix; it is never
    densified or copied. The scores, the loss gradient ``dL/dZ`` and the
    products with ``X`` are computed in the dtype of ``X`` (float32 stays
    float32); the objective is summed and the gradient returned in float64,
    which is what L-BFGS works in.

    Parameters
    ----------
    base_loss : loss object
        A loss of raw scores with ``loss(Z, target)``, ``gradient(Z, target)``
        and ``loss_gradient(Z, target)`` returning per-sample losses of shape
        (n,) and/or the gradient with respect to ``Z`` of shape (n, K), such as
        :class:`sksparsemax.losses.SparsemaxLoss`.
    fit_intercept : bool
        Whether ``w`` ends with K intercepts.

    Second order: :meth:`loss_gradient_hessian_product` (and
    :meth:`gradient_hessian_product`) also return a function that multiplies
    a packed direction ``v = (V_W, v_b)`` by the Hessian of the objective,

    .. math::

        H v = \operatorname{pack}\Big(X^\top R + \lambda V_W,\;
              \textstyle\sum_i R_i\Big), \qquad
        R_i = \frac{s_i}{\sum_j s_j} J_i\,(V_W x_i + v_b),

    with :math:`J_i` the Jacobian of the mapping at the scores of sample
    :math:`i` (the Hessian of its loss, see
    :meth:`sksparsemax.losses.BaseLoss.hessian_product`), computed from
    the probabilities at ``w`` kept by the function: two products with
    ``X`` per call, no K×K or n×K×K array.

    Notes
    -----
    Fast path: with a loss of :mod:`sksparsemax.losses` (a
    :class:`~sksparsemax.losses.BaseLoss`), :meth:`loss_gradient` computes
    the scores into one (n, K) buffer that the object keeps and reuses from
    call to call (for dense ``X``), and the loss writes its gradient over the
    scores (``loss_gradient(Z, target, out=Z)``): an iteration allocates no
    (n, K) temporary beyond that buffer. Other loss objects (duck typing:
    ``loss`` and ``loss_gradient`` of raw scores) get a new gradient array.

    Compiled path: for :class:`~sksparsemax.losses.SparsemaxLoss`,
    :class:`~sksparsemax.losses.SoftmaxLoss` and
    :class:`~sksparsemax.losses.SparseSoftmaxLoss` on the numba backend,
    :meth:`loss_gradient` runs a kernel of :mod:`._numba_linear`. With
    dense C-contiguous ``X`` and at most :data:`MAX_FUSED_COEF` weights it
    makes one pass over the rows of ``X``: scores, loss and gradient
    together, no (n, K) array at all. With CSR ``X`` it makes two: scores,
    loss and loss gradient row by row, then the gradient's outer products.
    Either way, (sparsemax) no work goes into the outer products of the rows
    whose loss gradient is zero. Both equal the other paths to rounding
    (float64 sums, also for float32 ``X``). CSC ``X`` takes the scipy path
    (the estimators convert it to CSR first: :meth:`prepare_data`).
    """

    def __init__(self, base_loss, fit_intercept):
        self.base_loss = base_loss
        self.fit_intercept = fit_intercept
        self._scores_buffer = None
        # Packed coefficients whose scores the buffer holds (set by loss(),
        # so that a Newton step accepted by a line search reuses them).
        self._scores_coef = None

    # -- packing -----------------------------------------------------------
    def n_coef(self, n_classes, n_features):
        """Length of the packed coefficient vector."""
        return n_classes * (n_features + int(self.fit_intercept))

    def init_zero_coef(self, n_classes, n_features):
        """Packed all-zero coefficients (float64)."""
        return np.zeros(self.n_coef(n_classes, n_features), dtype=np.float64)

    def pack(self, weights, intercept=None):
        """Pack ``weights`` (K, d) and ``intercept`` (K,) into a float64 vector."""
        weights = np.asarray(weights, dtype=np.float64)
        parts = [weights.ravel()]
        if self.fit_intercept:
            K = weights.shape[0]
            b = np.zeros(K) if intercept is None else intercept
            parts.append(np.asarray(b, dtype=np.float64).ravel())
        return np.concatenate(parts)

    def weight_intercept(self, coef, n_classes):
        """Views of the weights (K, d) and the intercepts (K,) or None."""
        if self.fit_intercept:
            weights = coef[:-n_classes].reshape(n_classes, -1)
            intercept = coef[-n_classes:]
        else:
            weights = coef.reshape(n_classes, -1)
            intercept = None
        return weights, intercept

    def raw_prediction(self, coef, X, n_classes):
        """Raw scores ``Z = X @ W.T + b`` of shape (n, K), in the dtype of X."""
        weights, intercept = self.weight_intercept(coef, n_classes)
        dtype = X.dtype
        Z = safe_sparse_dot(X, weights.astype(dtype, copy=False).T, dense_output=True)
        Z = np.asarray(Z)
        if Z.dtype != dtype:  # safe_sparse_dot may upcast
            Z = Z.astype(dtype)
        if intercept is not None:
            Z += intercept.astype(dtype, copy=False)
        return Z

    # -- objective ---------------------------------------------------------
    @staticmethod
    def _weights_sum(sample_weight, n_samples):
        if sample_weight is None:
            return float(n_samples)
        return float(np.sum(sample_weight, dtype=np.float64))

    def _penalty(self, weights, l2_reg_strength):
        if l2_reg_strength == 0:
            return 0.0
        flat = weights.ravel()
        return 0.5 * l2_reg_strength * float(np.dot(flat, flat))

    def loss(self, coef, X, target, n_classes, sample_weight=None, l2_reg_strength=0.0):
        """Value of the objective at ``coef`` (a float).

        Parameters
        ----------
        coef : ndarray of shape (n_coef,)
            Packed coefficients.
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        target : ndarray
            Class indices (n_samples,) or target distributions
            (n_samples, n_classes), as the base loss expects.
        n_classes : int
        sample_weight : ndarray of shape (n_samples,), default=None
        l2_reg_strength : float, default=0.0

        Returns
        -------
        loss : float
        """
        weights, intercept = self.weight_intercept(coef, n_classes)
        if isinstance(self.base_loss, BaseLoss):
            # Scores into the kept buffer (the loss does not overwrite them):
            # loss_gradient_hessian_product at the same coef reuses them.
            Z = self._scores_into_buffer(weights, intercept, X)
            self._scores_buffer = Z
            self._scores_coef = np.array(coef, dtype=np.float64, copy=True)
        else:
            Z = self.raw_prediction(coef, X, n_classes)
        losses = self.base_loss.loss(Z, target)
        sw_sum = self._weights_sum(sample_weight, X.shape[0])
        if sample_weight is None:
            f = float(np.sum(losses, dtype=np.float64))
        else:
            f = float(np.dot(sample_weight.astype(np.float64, copy=False), losses))
        return f / sw_sum + self._penalty(weights, l2_reg_strength)

    def gradient(self, coef, X, target, n_classes, sample_weight=None, l2_reg_strength=0.0):
        """Gradient of the objective at ``coef`` (float64, like ``coef``)."""
        return self.loss_gradient(
            coef, X, target, n_classes, sample_weight, l2_reg_strength
        )[1]

    def loss_gradient(
        self, coef, X, target, n_classes, sample_weight=None, l2_reg_strength=0.0
    ):
        """Value and gradient of the objective at ``coef``.

        This is the function the solver calls; it computes ``X @ W.T`` once
        and ``G.T @ X`` once, with ``G`` the per-sample loss gradients
        scaled in place by the normalised sample weights.

        Parameters
        ----------
        coef : ndarray of shape (n_coef,)
            Packed coefficients (float64).
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        target : ndarray
            Class indices (n_samples,) or target distributions
            (n_samples, n_classes).
        n_classes : int
        sample_weight : ndarray of shape (n_samples,), default=None
        l2_reg_strength : float, default=0.0

        Returns
        -------
        loss : float
        gradient : ndarray of shape (n_coef,), float64
        """
        n_samples, n_features = X.shape
        weights, intercept = self.weight_intercept(coef, n_classes)
        kernel = self._compiled_kernel(X, n_classes)
        if kernel is not None:
            result = self._compiled_loss_gradient(
                kernel, coef, X, target, n_classes, sample_weight, l2_reg_strength
            )
            if result is not None:
                return result
        if isinstance(self.base_loss, BaseLoss):
            Z = self._scores_into_buffer(weights, intercept, X)
            # The gradient overwrites the scores: no (n, K) temporary.
            losses, G = self.base_loss.loss_gradient(Z, target, out=Z)
        else:
            Z = self.raw_prediction(coef, X, n_classes)
            losses, G = self.base_loss.loss_gradient(Z, target)
            if G.dtype != X.dtype:  # keep the products with X in the dtype of X
                G = G.astype(X.dtype)
        del Z
        sw_sum = self._weights_sum(sample_weight, n_samples)
        if sample_weight is None:
            f = float(np.sum(losses, dtype=np.float64)) / sw_sum
            G *= G.dtype.type(1.0 / sw_sum)
        else:
            f = float(np.dot(sample_weight.astype(np.float64, copy=False), losses)) / sw_sum
            G *= (sample_weight / sw_sum).astype(G.dtype, copy=False)[:, None]
        f += self._penalty(weights, l2_reg_strength)

        grad = np.empty_like(coef, dtype=np.float64)
        n_w = n_classes * n_features
        grad_w = grad[:n_w].reshape(n_classes, n_features)
        # (X.T @ G).T: one BLAS GEMM for dense X (numpy's G.T @ X takes a
        # far slower path for the transposed C-ordered G); CSR.T is CSC and
        # vice versa, both fast with a dense G.
        grad_w[...] = (X.T @ G).T
        if l2_reg_strength != 0:
            grad_w += l2_reg_strength * weights
        if self.fit_intercept:
            grad[n_w:] = G.sum(axis=0, dtype=np.float64)
        return f, grad

    def prepare_data(self, X):
        """``X`` in the layout of the loss's compiled kernel, if it has one.

        With a compiled CSR kernel in effect (numba backend; the sparsemax,
        softmax or top-k loss), CSC ``X`` is converted to CSR once, before a
        fit: one copy of the nonzeros, as
        :class:`~sklearn.linear_model.LogisticRegression` also makes, for
        faster evaluations. Anything else is returned as it is.
        """
        if sp.issparse(X) and X.format == "csc" and self._kernel_prefix(X) is not None:
            return X.tocsr()
        return X

    def _kernel_prefix(self, X):
        """The name prefix of the loss's compiled kernels for ``X``'s dtype, or None.

        None unless the loss has compiled kernels, ``X`` is float32/float64
        and the numba backend is in effect.
        """
        prefix = _COMPILED_LOSSES.get(type(self.base_loss))
        if (
            prefix is None
            or X.dtype not in (np.float32, np.float64)
            or get_backend() != "numba"
        ):
            return None
        return prefix

    def _compiled_kernel(self, X, n_classes):
        """``(name, k)`` of the compiled ``loss_gradient`` kernel for ``X``, or None.

        Used for the sparsemax, softmax and top-k losses on the numba
        backend, with dense C-contiguous ``X`` and at most
        :data:`MAX_FUSED_COEF` weights or with CSR ``X`` (see
        :mod:`._numba_linear`); None otherwise (the BLAS and scipy.sparse
        path). ``k`` is the top-k loss's (0 for the others; the softmax
        kernel for ``k >= n_classes``).
        """
        loss = self.base_loss
        prefix = self._kernel_prefix(X)
        if prefix is None:
            return None
        k = 0
        if isinstance(loss, SparseSoftmaxLoss):
            if loss.k >= n_classes:
                prefix = "softmax"
            else:
                k = loss.k
        if isinstance(X, np.ndarray):
            if X.flags.c_contiguous and n_classes * X.shape[1] <= MAX_FUSED_COEF:
                return f"{prefix}_linear_loss_gradient", k
        elif sp.issparse(X) and X.format == "csr":
            return f"{prefix}_csr_linear_loss_gradient", k
        return None

    def _compiled_loss_gradient(
        self, kernel, coef, X, target, n_classes, sample_weight, l2_reg_strength
    ):
        """:meth:`loss_gradient` by the compiled ``kernel`` (``(name, k)``).

        Returns None on scores that are not valid (NaN, ``+inf``: an
        overflow); the BLAS path, called next, then raises the loss's error.
        """
        name, k = kernel
        n_samples, n_features = X.shape
        weights, intercept = self.weight_intercept(coef, n_classes)
        target = resolve_target(target, n_samples, n_classes, True)
        y, Q, half = kernel_target(target, np.float64)
        sw_sum = self._weights_sum(sample_weight, n_samples)
        row_weights = (
            np.empty(0)
            if sample_weight is None
            else np.ascontiguousarray(sample_weight, dtype=np.float64)
        )
        grad = np.empty_like(coef, dtype=np.float64)
        n_w = n_classes * n_features
        grad_W = grad[:n_w].reshape(n_classes, n_features)
        grad_b = grad[n_w:] if self.fit_intercept else np.empty(n_classes)
        b = intercept if intercept is not None else np.zeros(n_classes)
        b = np.ascontiguousarray(b, dtype=np.float64)
        from . import _numba_linear

        kernel = getattr(_numba_linear, name)
        # The kernels add the loss's gradient to the penalty's, l2 * W.
        if sp.issparse(X):
            # The kernel gathers and scatters whole rows of W.T: (d, K) arrays.
            Wt = np.ascontiguousarray(weights.T, dtype=np.float64)
            grad_Wt = np.multiply(Wt, l2_reg_strength)
            value, bad = kernel(
                X.data, X.indices, X.indptr, Wt, b,
                y, Q, half, k, row_weights, 1.0 / sw_sum, grad_Wt, grad_b,
            )
            grad_W[...] = grad_Wt.T
        else:
            np.multiply(weights, l2_reg_strength, out=grad_W)
            value, bad = kernel(
                X, np.ascontiguousarray(weights, dtype=np.float64), b,
                y, Q, half, k, row_weights, 1.0 / sw_sum, grad_W, grad_b,
            )
        if bad >= 0:
            return None
        return float(value) + self._penalty(weights, l2_reg_strength), grad

    def _scores_into_buffer(self, weights, intercept, X):
        """Scores ``X @ W.T + b`` in a C-contiguous (n, K) array of X's dtype.

        For dense ``X`` the array is a buffer kept between calls (the scores,
        then the loss gradient, live in it), so a solver's iterations do not
        allocate it again; sparse products return a new array (scipy.sparse
        has no ``out=``).
        """
        self._scores_coef = None  # the buffer is about to change
        dtype = X.dtype
        Wt = weights.astype(dtype, copy=False).T
        if sp.issparse(X):
            Z = np.ascontiguousarray(safe_sparse_dot(X, Wt, dense_output=True), dtype=dtype)
        else:
            shape = (X.shape[0], weights.shape[0])
            Z = self._scores_buffer
            if Z is None or Z.shape != shape or Z.dtype != dtype:
                Z = self._scores_buffer = np.empty(shape, dtype=dtype)
            np.dot(X, Wt, out=Z)
        if intercept is not None:
            Z += intercept.astype(dtype, copy=False)
        return Z

    # -- second order --------------------------------------------------------
    def gradient_hessian_product(
        self, coef, X, target, n_classes, sample_weight=None, l2_reg_strength=0.0
    ):
        """Gradient of the objective and its Hessian-vector product function.

        See :meth:`loss_gradient_hessian_product` (this drops the value).

        Returns
        -------
        gradient : ndarray of shape (n_coef,), float64
        hessp : callable
            ``hessp(v)`` returns the Hessian at ``coef`` times the packed
            direction ``v`` (n_coef,), float64.
        """
        return self.loss_gradient_hessian_product(
            coef, X, target, n_classes, sample_weight, l2_reg_strength
        )[1:]

    def loss_gradient_hessian_product(
        self, coef, X, target, n_classes, sample_weight=None, l2_reg_strength=0.0
    ):
        """Value, gradient and Hessian-vector product function of the objective.

        The probabilities ``P`` (n, K) at ``coef`` are computed once, with
        the gradient, and kept by the returned function, which then costs
        two products with ``X`` (``X @ V_W.T`` and ``X.T @ R``) and one
        Jacobian-vector product of the loss's mapping
        (:meth:`sksparsemax.losses.BaseLoss.hessian_product`) per call. If
        :meth:`loss` was last called at the same ``coef`` (a line search
        trial), its scores are reused.

        For the piecewise-smooth losses (sparsemax, entmax with
        ``alpha > 1``, top-k) this is the generalized Hessian of the
        support of ``P``: the Hessian away from kinks.

        Parameters
        ----------
        coef : ndarray of shape (n_coef,)
            Packed coefficients (float64).
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        target : ndarray or Target
            Class indices (n_samples,) or target distributions
            (n_samples, n_classes).
        n_classes : int
        sample_weight : ndarray of shape (n_samples,), default=None
        l2_reg_strength : float, default=0.0

        Returns
        -------
        loss : float
        gradient : ndarray of shape (n_coef,), float64
        hessp : callable
            ``hessp(v)`` -> Hessian times ``v`` (n_coef,), float64.
        """
        base_loss = self.base_loss
        if not hasattr(base_loss, "hessian_product"):
            raise TypeError(
                f"The loss {base_loss!r} has no hessian_product(P, V): "
                "second-order solvers need it."
            )
        n_samples, n_features = X.shape
        weights, intercept = self.weight_intercept(coef, n_classes)
        if isinstance(base_loss, BaseLoss):
            target = resolve_target(target, n_samples, n_classes, True)
            if self._scores_coef is not None and np.array_equal(self._scores_coef, coef):
                Z = self._scores_buffer
                self._scores_coef = None  # overwritten below
            else:
                Z = self._scores_into_buffer(weights, intercept, X)
            losses, G = base_loss.loss_gradient(Z, target, out=Z)
            # P = G + Q: exact where P = 0 (then G = -Q), never negative.
            P = G.copy()
            if target.is_indices:
                P[np.arange(n_samples), target.indices] += 1
            else:
                P += target.proba_as(P.dtype)
        else:
            Z = self.raw_prediction(coef, X, n_classes)
            P = np.asarray(base_loss.predict_proba(Z), dtype=X.dtype)
            losses, G = base_loss.loss_gradient(Z, target)
            G = np.asarray(G, dtype=X.dtype)
        del Z
        sw_sum = self._weights_sum(sample_weight, n_samples)
        if sample_weight is None:
            scale = G.dtype.type(1.0 / sw_sum)
            f = float(np.sum(losses, dtype=np.float64)) / sw_sum
        else:
            scale = (sample_weight / sw_sum).astype(G.dtype, copy=False)[:, None]
            f = float(np.dot(sample_weight.astype(np.float64, copy=False), losses)) / sw_sum
        G *= scale
        f += self._penalty(weights, l2_reg_strength)

        n_w = n_classes * n_features
        grad = np.empty_like(coef, dtype=np.float64)
        grad_w = grad[:n_w].reshape(n_classes, n_features)
        grad_w[...] = (X.T @ G).T
        if l2_reg_strength != 0:
            grad_w += l2_reg_strength * weights
        if self.fit_intercept:
            grad[n_w:] = G.sum(axis=0, dtype=np.float64)
        del G
        fit_intercept = self.fit_intercept
        dtype = X.dtype

        def hessp(v):
            v = np.asarray(v, dtype=np.float64)
            V_w, v_b = self.weight_intercept(v, n_classes)
            U = safe_sparse_dot(X, V_w.astype(dtype, copy=False).T, dense_output=True)
            U = np.asarray(U, dtype=dtype)
            if fit_intercept:
                U += v_b.astype(dtype, copy=False)
            R = base_loss.hessian_product(P, U)
            del U
            if R.dtype != dtype:
                R = R.astype(dtype)
            R *= scale
            out = np.empty(v.shape[0], dtype=np.float64)
            out_w = out[:n_w].reshape(n_classes, n_features)
            out_w[...] = (X.T @ R).T
            if l2_reg_strength != 0:
                out_w += l2_reg_strength * V_w
            if fit_intercept:
                out[n_w:] = R.sum(axis=0, dtype=np.float64)
            return out

        return f, grad, hessp
