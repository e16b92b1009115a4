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

from ..losses._targets import resolve_target
from ..transforms import _backend
from ..transforms._blocks import copy_transposed
from ._layout import CoefLayout


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
    :meth:`sksparsemax.losses.FenchelYoungLoss.hessian_product`), computed from
    the probabilities at ``w`` kept by the function: two products with
    ``X`` per call, no K×K or n×K×K array.

    Notes
    -----
    Fast path: with a loss of :mod:`sksparsemax.losses` (a
    :class:`~sksparsemax.losses.FenchelYoungLoss`), :meth:`loss_gradient` computes
    the scores into one (n, K) buffer that the object keeps and reuses from
    call to call (for dense ``X``), and the loss writes its gradient over the
    scores (``loss_gradient(Z, target, out=Z)``): an iteration allocates no
    (n, K) temporary beyond that buffer. Other loss objects (duck typing:
    ``loss`` and ``loss_gradient`` of raw scores) get a new gradient array.

    Compiled path: when the loss has a compiled kernel
    (:meth:`~sksparsemax.losses.FenchelYoungLoss.compiled`: the numba
    backend, a loss with a row kernel), :meth:`loss_gradient` runs it. With
    dense C-contiguous ``X`` and a few thousand weights it
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
        # A FenchelYoungLoss writes its gradient over the scores (out=);
        # another loss object (duck typing) returns a new array.
        self._in_place = hasattr(base_loss, "compiled")
        self._compiled_for = self._compiled_loss = None
        self._scores_buffer = None
        # Packed coefficients whose scores the buffer holds (set by loss(),
        # so that a Newton step accepted by a line search reuses them).
        self._scores_coef = None

    # -- packing -----------------------------------------------------------
    def layout(self, n_classes, n_features):
        """The :class:`CoefLayout` of ``n_classes`` x ``n_features`` weights."""
        return CoefLayout(n_classes, n_features, self.fit_intercept)

    def n_coef(self, n_classes, n_features):
        """Length of the packed coefficient vector."""
        return self.layout(n_classes, n_features).n_coef

    def init_zero_coef(self, n_classes, n_features):
        """Packed all-zero coefficients (float64)."""
        return self.layout(n_classes, n_features).zeros()

    def pack(self, weights, intercept=None):
        """Pack ``weights`` (K, d) and ``intercept`` (K,) into a float64 vector."""
        weights = np.asarray(weights, dtype=np.float64)
        return self.layout(*weights.shape).pack(weights, intercept)

    def weight_intercept(self, coef, n_classes):
        """Views of the weights (K, d) and the intercepts (K,) or None."""
        return CoefLayout.of(coef, n_classes, self.fit_intercept).split(coef)

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

    def _mean_loss(self, losses, sample_weight, sw_sum):
        """The (weighted) mean of the per-sample losses, summed in float64."""
        if sample_weight is None:
            return float(np.sum(losses, dtype=np.float64)) / sw_sum
        return float(np.dot(sample_weight.astype(np.float64, copy=False), losses)) / sw_sum

    @staticmethod
    def _row_scale(sample_weight, sw_sum, dtype):
        """The factor of each row's loss gradient: ``s_i / sum(s)`` (or a scalar)."""
        if sample_weight is None:
            return dtype.type(1.0 / sw_sum)
        return (sample_weight / sw_sum).astype(dtype, copy=False)[:, None]

    def _back_propagate(self, R, X, V, l2_reg_strength):
        """Packed ``(X^T R + l2 V, sum_i R_i)``: the chain rule through ``Z = X W^T + b``."""
        n_classes = R.shape[1]
        out = np.empty(self.n_coef(n_classes, X.shape[1]), dtype=np.float64)
        out_W, out_b = self.weight_intercept(out, n_classes)
        if sp.issparse(X):
            # CSR.T is CSC and vice versa, both fast with a dense R.
            copy_transposed(np.asarray(X.T @ R), out_W)
        elif R.dtype == X.dtype == np.float64:
            # R.T @ X straight into the packed weights: the product (and the
            # orientation) LogisticRegression's loss computes, one GEMM whose
            # K x d result needs no transposed copy.
            np.dot(R.T, X, out=out_W)
        else:
            out_W[...] = R.T @ X
        if l2_reg_strength != 0:
            out_W += l2_reg_strength * V
        if out_b is not None:
            out_b[...] = R.sum(axis=0, dtype=np.float64)
        return out

    def _scores_and_gradient(self, coef, X, target, n_classes):
        """Per-sample losses and loss gradients ``G`` (n, K) at ``coef``.

        For a :class:`~sksparsemax.losses.FenchelYoungLoss` the gradient
        overwrites the kept score buffer (no (n, K) temporary); scores that
        :meth:`loss` left for these coefficients are reused.
        """
        weights, intercept = self.weight_intercept(coef, n_classes)
        if not self._in_place:
            Z = self.raw_prediction(coef, X, n_classes)
            losses, G = self.base_loss.loss_gradient(Z, target)
            return losses, np.asarray(G, dtype=X.dtype)
        if self._scores_coef is not None and np.array_equal(self._scores_coef, coef):
            Z = self._scores_buffer
            self._scores_coef = None  # overwritten below
        else:
            Z = self._scores_into_buffer(weights, intercept, X)
        return self.base_loss.loss_gradient(Z, target, out=Z)

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
        if self._in_place:
            # Scores into the kept buffer (the loss does not overwrite them):
            # loss_gradient_hessian_product at the same coef reuses them.
            Z = self._scores_into_buffer(weights, intercept, X)
            self._scores_buffer = Z
            self._scores_coef = np.array(coef, dtype=np.float64, copy=True)
        else:
            Z = self.raw_prediction(coef, X, n_classes)
        losses = self.base_loss.loss(Z, target)
        sw_sum = self._weights_sum(sample_weight, X.shape[0])
        return self._mean_loss(losses, sample_weight, sw_sum) + self._penalty(
            weights, l2_reg_strength
        )

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
        scaled in place by the normalised sample weights (or runs the loss's
        compiled kernel, which does both in one or two passes over ``X``).

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
        compiled = self._compiled(X, n_classes)
        if compiled is not None:
            result = self._compiled_loss_gradient(
                compiled, coef, X, target, n_classes, sample_weight, l2_reg_strength
            )
            if result is not None:
                return result
        weights, _ = self.weight_intercept(coef, n_classes)
        losses, G = self._scores_and_gradient(coef, X, target, n_classes)
        sw_sum = self._weights_sum(sample_weight, X.shape[0])
        f = self._mean_loss(losses, sample_weight, sw_sum)
        G *= self._row_scale(sample_weight, sw_sum, G.dtype)
        f += self._penalty(weights, l2_reg_strength)
        return f, self._back_propagate(G, X, weights, l2_reg_strength)

    def prepare_data(self, X, n_classes):
        """``X`` in the layout of the loss's compiled kernel, if it has one.

        With a compiled kernel in effect, CSC ``X`` is converted to CSR once,
        before a fit: one copy of the nonzeros, as
        :class:`~sklearn.linear_model.LogisticRegression` also makes, for
        faster evaluations. Anything else is returned as it is.
        """
        if sp.issparse(X) and X.format == "csc":
            if self._compiled(X, n_classes, layout_free=True) is not None:
                return X.tocsr()
        return X

    def _compiled(self, X, n_classes, layout_free=False):
        """The loss's compiled kernels if they apply to ``X``, else None.

        None unless the loss has compiled kernels in effect (see
        :meth:`~sksparsemax.losses.FenchelYoungLoss.compiled`) for float
        ``X`` that is dense C-contiguous with a few thousand weights or CSR
        (``layout_free``: whatever the layout).
        """
        compiled_for = getattr(self.base_loss, "compiled", None)
        if compiled_for is None or X.dtype not in (np.float32, np.float64):
            return None
        # Asked once per fit (the backend in effect and the classes are part
        # of the key): a solver calls loss_gradient many times.
        key = (n_classes, _backend.numba_enabled())
        if self._compiled_for != key:
            self._compiled_for, self._compiled_loss = key, compiled_for(n_classes)
        compiled = self._compiled_loss
        if compiled is None:
            return None
        if layout_free or compiled.applies_to(X, n_classes):
            return compiled
        return None

    def _compiled_loss_gradient(
        self, compiled, coef, X, target, n_classes, sample_weight, l2_reg_strength
    ):
        """:meth:`loss_gradient` by the loss's compiled kernel.

        Returns None on scores that are not valid (NaN, ``+inf``: an
        overflow); the BLAS path, called next, then raises the loss's error.
        """
        n_samples = X.shape[0]
        weights, intercept = self.weight_intercept(coef, n_classes)
        target = resolve_target(target, n_samples, n_classes, True)
        sw_sum = self._weights_sum(sample_weight, n_samples)
        grad = np.empty_like(coef, dtype=np.float64)
        grad_W, grad_b = self.weight_intercept(grad, n_classes)
        if grad_b is None:
            grad_b = np.empty(n_classes)
        b = intercept if intercept is not None else np.zeros(n_classes)
        # The kernels add the loss's gradient to the penalty's, l2 * W.
        np.multiply(weights, l2_reg_strength, out=grad_W)
        value = compiled.linear(
            X, weights, b, target, sample_weight, 1.0 / sw_sum, grad_W, grad_b
        )
        if value is None:
            return None
        return value + self._penalty(weights, l2_reg_strength), grad

    def adopt_buffer(self, other):
        """Take over the score buffer of ``other`` (a fit's warm-up), so one is kept."""
        self._scores_buffer, other._scores_buffer = other._scores_buffer, None
        self._scores_coef = None

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
        (:meth:`sksparsemax.losses.FenchelYoungLoss.hessian_product`) per call. If
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
        n_samples = X.shape[0]
        weights, _ = self.weight_intercept(coef, n_classes)
        if self._in_place:
            target = resolve_target(target, n_samples, n_classes, True)
        losses, G = self._scores_and_gradient(coef, X, target, n_classes)
        P = self._probabilities(G, target, X)
        sw_sum = self._weights_sum(sample_weight, n_samples)
        scale = self._row_scale(sample_weight, sw_sum, G.dtype)
        G *= scale
        f = self._mean_loss(losses, sample_weight, sw_sum)
        f += self._penalty(weights, l2_reg_strength)
        grad = self._back_propagate(G, X, weights, l2_reg_strength)
        del G
        dtype = X.dtype

        def hessp(v):
            v = np.asarray(v, dtype=np.float64)
            V_w, v_b = self.weight_intercept(v, n_classes)
            U = safe_sparse_dot(X, V_w.astype(dtype, copy=False).T, dense_output=True)
            U = np.asarray(U, dtype=dtype)
            if v_b is not None:
                U += v_b.astype(dtype, copy=False)
            R = base_loss.hessian_product(P, U)
            del U
            if R.dtype != dtype:
                R = R.astype(dtype)
            R *= scale
            return self._back_propagate(R, X, V_w, l2_reg_strength)

        return f, grad, hessp

    def _probabilities(self, G, target, X):
        """The mapping ``P = G + Q`` from a loss gradient ``G = P - Q``.

        Exact where ``P = 0`` (then ``G = -Q``), never negative. For a loss
        that is not a FenchelYoungLoss, ``target`` is its raw target.
        """
        P = G.copy()
        if not self._in_place:
            target = resolve_target(target, G.shape[0], G.shape[1], True)
        map_target = getattr(self.base_loss, "_map_target", None)
        if map_target is not None:  # the target the loss compared with
            target = map_target(target)
        if target.is_indices:
            P[np.arange(G.shape[0]), target.indices] += 1
        else:
            P += target.proba_as(P.dtype)
        return P
