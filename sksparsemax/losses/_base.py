"""The common machinery of the losses: scores, targets, value and gradient.

Every loss of this package has the Fenchel-Young form

.. math:: L(z; q) = \\phi(z) - q^\\top z + c(q), \\qquad
          \\nabla_z L(z; q) = \\hat p(z) - q,

where :math:`\\hat p` is the mapping (sparsemax, sparse-softmax, entmax,
softmax), :math:`\\phi` a convex function with gradient :math:`\\hat p` and
:math:`c(q)` a constant of the target. :class:`BaseLoss` implements
everything but :math:`\\phi`, :math:`\\hat p` and :math:`c`; a new loss is a
subclass with two small methods.
"""

import numpy as np

from ..transforms._validation import as_float_array, checked_row_max
from ._targets import resolve_target


def shifted_scores(Z):
    """Validate a score matrix and shift each row so that its maximum is 0.

    Every loss is invariant to adding a constant to a row (targets sum to
    1), so all computations use the shifted scores: huge scores lose no
    precision and ``exp`` never overflows.

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores: finite or ``-inf`` (masked classes).

    Returns
    -------
    Zs : ndarray of shape (n_samples, n_classes)
        ``Z - Z.max(axis=1, keepdims=True)``, float32 if ``Z`` is float32,
        float64 otherwise (a new array).
    """
    Z = as_float_array(Z, "Z")
    if Z.ndim != 2:
        raise ValueError(
            "Z must be a 2-D array of scores of shape (n_samples, n_classes); "
            f"got shape {Z.shape}."
        )
    if Z.shape[1] == 0:
        raise ValueError("Z has 0 columns: a loss needs at least one class.")
    zmax = checked_row_max(Z, Z.shape, "Z")
    with np.errstate(over="ignore"):  # finite - max may overflow to -inf: a mask
        return Z - zmax


def masked_rowdot(A, Zs, mask=None):
    """Row-wise ``sum_j A[i, j] * Zs[i, j]`` over ``mask`` (all entries if None).

    Entries outside ``mask`` (where ``A`` is 0 and ``Zs`` may be ``-inf``)
    contribute exactly 0 instead of ``0 * -inf = nan``.
    """
    if mask is not None:
        Zs = np.where(mask, Zs, 0)
    return np.einsum("ij,ij->i", A, Zs)


class BaseLoss:
    r"""Base class of the losses: value and gradient with respect to scores.

    A loss compares scores ``Z`` (n_samples, n_classes) with a target, given
    as class indices (n_samples,) or as distributions (n_samples,
    n_classes); see :func:`check_target`. Every loss here has the form

    .. math:: L(z; q) = \phi(z) - q^\top z + c(q), \qquad
              \nabla_z L(z; q) = \hat p(z) - q,

    with :math:`\hat p` the loss's probability mapping
    (:meth:`predict_proba`). All methods compute from scores shifted by their
    row maximum (so a constant shift of a row changes nothing, even in
    float32), keep float32 as float32 and turn other inputs into float64.
    ``-inf`` scores are masks: on a class with zero target probability they
    contribute nothing; on a class with positive target probability the loss
    is ``+inf`` (the gradient stays :math:`\hat p(z) - q`, finite). NaN or
    ``+inf`` scores, or a row of only ``-inf``, raise a ``ValueError``.

    Validation and the fast path: each method validates ``target`` with
    :func:`check_target` unless it already is a :class:`Target` (returned by
    :func:`check_target`), which is used as is. Validate once before an
    optimisation loop and pass the ``Target`` on every iteration. Passing
    ``check=False`` with a raw target skips its validation altogether (the
    caller guarantees it is valid; invalid targets then give wrong results
    or an ``IndexError``).

    Subclasses implement ``_conjugate(Zs, need_value)``, returning
    :math:`(\phi(z), \hat p(z))` per row from shifted scores ``Zs``,
    ``_jacobian_product(P, V)``, the Jacobian-vector product of
    :math:`\hat p` from its output (the loss's Hessian, used by
    :meth:`hessian_product` and second-order solvers), and optionally
    ``_target_term(target)`` (default 0).

    See Also
    --------
    SparsemaxLoss : Sparsemax loss.
    SparseSoftmaxLoss : Top-k sparse-softmax loss.
    EntmaxLoss : Alpha-entmax Fenchel-Young loss.
    SoftmaxLoss : Softmax cross-entropy.

    References
    ----------
    .. [1] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sksparsemax.losses import SparsemaxLoss, check_target
    >>> loss = SparsemaxLoss()
    >>> Z = [[1.0, 0.2, -1.0], [0.0, 3.0, 0.0]]
    >>> target = check_target([0, 1], n_samples=2, n_classes=3)
    >>> values, grad = loss.loss_gradient(Z, target)
    >>> values
    array([0.01, 0.  ])
    >>> grad
    array([[-0.1,  0.1,  0. ],
           [ 0. ,  0. ,  0. ]])
    """

    def _conjugate(self, Zs, need_value=True):  # pragma: no cover - abstract
        """Return ``(phi, P)``: phi (n,) (None if not needed) and the mapping P (n, K).

        ``P`` must be a new array (the gradient is computed in place in it).
        """
        raise NotImplementedError

    def _target_term(self, target):
        """Constant ``c(q)`` of the loss: a scalar or an array (n_samples,)."""
        return 0.0

    def _jacobian_product(self, P, V):  # pragma: no cover - abstract
        """Row-wise ``J(P_i) V_i`` of the mapping, from its output ``P``.

        Subclasses return the Jacobian-vector product of their mapping
        (a function of :mod:`sksparsemax.transforms`) along ``axis=1``.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define the Jacobian of its "
            "mapping (_jacobian_product): no Hessian-vector product."
        )

    def _scores_for(self, p):
        """Scores ``z`` (K,) whose mapping is the distribution ``p`` (K,).

        Used to start a solver at the intercept-only optimum: with zero
        weights and intercepts ``b``, the mean loss is minimised where
        ``predict_proba(b)`` is the (weighted) mean target ``p``. The default
        is the softmax inverse ``log p``, with ``p`` clipped at ``1e-8`` (a
        class of zero mean target has its optimum at ``-inf``).
        """
        p = np.asarray(p, dtype=np.float64)
        return np.log(np.maximum(p, 1e-8))

    def _conjugate_inplace(self, Zs):
        """Overwrite the shifted scores ``Zs`` with ``P``; return ``phi`` (n,).

        The in-place counterpart of :meth:`_conjugate`, used by
        ``loss_gradient(..., out=...)``. This default calls
        :meth:`_conjugate` and copies ``P`` into ``Zs``; subclasses override it
        to compute the mapping in place without an (n, K) temporary.
        """
        phi, P = self._conjugate(Zs, need_value=True)
        np.copyto(Zs, P)
        return phi

    def _fused_loss_gradient(self, Z, target, out):
        """One-pass ``loss_gradient`` into ``out`` (a compiled kernel), or None.

        Called by ``loss_gradient(..., out=...)`` with validated float scores
        ``Z`` (2-D), a resolved :class:`Target` and a valid ``out`` (possibly
        ``Z``). A loss with a fused kernel for the backend in effect returns
        ``(losses, out)``; the default (None) uses the generic path:
        :meth:`_conjugate_inplace` on the shifted scores.
        """
        return None

    def _evaluate(self, Z, target, check, need_loss, need_grad):
        Zs = shifted_scores(Z)
        n, K = Zs.shape
        target = resolve_target(target, n, K, check)
        phi, P = self._conjugate(Zs, need_value=need_loss)
        losses = None
        if need_loss:
            if target.is_indices:
                qz = Zs[np.arange(n), target.indices]
            else:
                mask, all_positive = target.positive()
                qz = masked_rowdot(
                    target.proba_as(Zs.dtype), Zs, None if all_positive else mask
                )
            term = np.asarray(self._target_term(target), dtype=Zs.dtype)
            with np.errstate(over="ignore"):
                losses = phi - qz
            losses += term
        if need_grad:
            if target.is_indices:
                P[np.arange(n), target.indices] -= 1
            else:
                P -= target.proba_as(Zs.dtype)
        return losses, P

    def _evaluate_into(self, Z, target, check, out):
        """``loss_gradient`` with the gradient written into ``out`` (may be Z)."""
        Z = as_float_array(Z, "Z")
        if Z.ndim != 2:
            raise ValueError(
                "Z must be a 2-D array of scores of shape (n_samples, n_classes); "
                f"got shape {Z.shape}."
            )
        if Z.shape[1] == 0:
            raise ValueError("Z has 0 columns: a loss needs at least one class.")
        if not isinstance(out, np.ndarray) or out.shape != Z.shape or (
            out.dtype != Z.dtype
        ):
            raise ValueError(
                f"out must be an ndarray of shape {Z.shape} and dtype {Z.dtype} "
                "(the scores' shape and floating dtype)."
            )
        if not (out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("out must be a writeable C-contiguous array.")
        n, K = Z.shape
        target = resolve_target(target, n, K, check)
        fused = self._fused_loss_gradient(Z, target, out)
        if fused is not None:
            return fused
        zmax = checked_row_max(Z, Z.shape, "Z")
        with np.errstate(over="ignore"):  # finite - max may overflow to -inf: a mask
            np.subtract(Z, zmax, out=out)
        Zs = out
        del zmax
        # q^T z must be taken before Zs is overwritten by the mapping.
        if target.is_indices:
            qz = Zs[np.arange(n), target.indices]
        else:
            Q = target.proba_as(Zs.dtype)
            qz = np.einsum("ij,ij->i", Q, Zs)
            bad = ~np.isfinite(qz)
            if bad.any():  # -inf masks where q = 0: 0 * -inf must count as 0
                mask = target.positive()[0]
                qz[bad] = masked_rowdot(Q[bad], Zs[bad], mask[bad])
        phi = self._conjugate_inplace(Zs)
        P = Zs
        term = np.asarray(self._target_term(target), dtype=P.dtype)
        with np.errstate(over="ignore"):
            losses = phi - qz
        losses += term
        if target.is_indices:
            P[np.arange(n), target.indices] -= 1
        else:
            P -= target.proba_as(P.dtype)
        return losses, P

    def loss(self, Z, target, *, check=True):
        """Per-sample losses.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_classes)
            Scores (finite, or ``-inf`` to mask a class).
        target : array_like or Target
            Class indices (n_samples,) or distributions (n_samples,
            n_classes), or a :class:`Target` from :func:`check_target`.
        check : bool, default=True
            Validate a raw ``target``. False skips its validation (see the
            class docstring); a :class:`Target` is never validated again.

        Returns
        -------
        ndarray of shape (n_samples,)
            Loss of each sample, float32 if ``Z`` is float32, else float64.

        See Also
        --------
        loss_gradient : The losses and their gradients in one pass.

        Examples
        --------
        >>> from sksparsemax.losses import SparsemaxLoss
        >>> SparsemaxLoss().loss([[1.0, 0.2, -1.0], [0.0, 0.0, 0.0]], [0, 2])
        array([0.01      , 0.33333333])
        """
        return self._evaluate(Z, target, check, True, False)[0]

    def gradient(self, Z, target, *, check=True):
        """Gradient of each sample's loss with respect to its scores.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_classes)
            Scores (finite, or ``-inf`` to mask a class).
        target : array_like or Target
            Class indices (n_samples,) or distributions (n_samples,
            n_classes), or a :class:`Target` from :func:`check_target`.
        check : bool, default=True
            Validate a raw ``target`` (see :meth:`loss`).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Row ``i`` is the gradient of ``loss_i`` with respect to ``Z[i]``
            (not averaged): ``predict_proba(Z) - Q``.

        See Also
        --------
        loss_gradient : The losses and their gradients in one pass.

        Examples
        --------
        >>> from sksparsemax.losses import SparsemaxLoss
        >>> SparsemaxLoss().gradient([[1.0, 0.2, -1.0]], [[0.5, 0.5, 0.0]])
        array([[ 0.4, -0.4,  0. ]])
        """
        return self._evaluate(Z, target, check, False, True)[1]

    def loss_gradient(self, Z, target, *, check=True, out=None):
        """Per-sample losses and their gradients, in one pass.

        The mapping is evaluated once and the gradient is built in place
        from it; with class indices no one-hot matrix is formed.

        With ``out`` (the fast path of a solver) the gradient is written into
        ``out``, which may be ``Z`` itself: the scores are then overwritten
        and no (n_samples, n_classes) temporary is allocated by the common
        losses, so a solver can reuse one buffer across iterations.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_classes)
            Scores (finite, or ``-inf`` to mask a class).
        target : array_like or Target
            Class indices (n_samples,) or distributions (n_samples,
            n_classes), or a :class:`Target` from :func:`check_target`.
        check : bool, default=True
            Validate a raw ``target`` (see :meth:`loss`).
        out : ndarray of shape (n_samples, n_classes), default=None
            Where to write the gradient: a writeable C-contiguous array of the
            floating dtype of the scores (float32 for float32 ``Z``, float64
            otherwise), possibly ``Z`` itself (then overwritten). None
            allocates a new array and leaves ``Z`` untouched.

        Returns
        -------
        losses : ndarray of shape (n_samples,)
            As returned by :meth:`loss`.
        gradient : ndarray of shape (n_samples, n_classes)
            As returned by :meth:`gradient` (``out`` itself when given).

        See Also
        --------
        check_target : Validate the target once, before a loop of calls.

        Examples
        --------
        >>> from sksparsemax.losses import SoftmaxLoss, check_target
        >>> target = check_target([1], n_samples=1, n_classes=2)
        >>> values, grad = SoftmaxLoss().loss_gradient([[0.0, 0.0]], target)
        >>> values, grad
        (array([0.693...]), array([[ 0.5, -0.5]]))
        >>> import numpy as np
        >>> Z = np.array([[0.0, 0.0]])
        >>> _, grad = SoftmaxLoss().loss_gradient(Z, target, out=Z)  # in place
        >>> grad is Z, Z
        (True, array([[ 0.5, -0.5]]))
        """
        if out is not None:
            return self._evaluate_into(Z, target, check, out)
        return self._evaluate(Z, target, check, True, True)

    def hessian_product(self, P, V):
        r"""Hessian of each sample's loss with respect to its scores, times ``V``.

        The Hessian of :math:`L(z; q) = \phi(z) - q^\top z + c(q)` with
        respect to :math:`z` is the Jacobian :math:`J(z)` of the mapping
        :math:`\hat p` (:math:`\nabla_z L = \hat p(z) - q`); it does not
        depend on the target. It is computed from the probabilities
        ``P = predict_proba(Z)`` by the mapping's Jacobian-vector product of
        :mod:`sksparsemax.transforms`; no K×K matrix is formed. :math:`J`
        is symmetric, so this is also the vector-Hessian product. For the
        piecewise-smooth losses (sparsemax, entmax with ``alpha > 1``,
        top-k) this is the Hessian away from kinks, where the support
        changes, and a generalized Hessian on them (the one of the support
        of ``P``), which is what a second-order solver needs.

        Parameters
        ----------
        P : array_like of shape (n_samples, n_classes)
            Probabilities ``predict_proba(Z)`` at the scores ``Z``.
        V : array_like of shape (n_samples, n_classes)
            Directions in score space, one per sample.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Row ``i`` is :math:`J(z_i)\, v_i`; float32 if both ``P`` and
            ``V`` are float32, else float64.

        See Also
        --------
        sksparsemax.transforms.sparsemax_jvp : The sparsemax case.

        Examples
        --------
        >>> from sksparsemax.losses import SparsemaxLoss
        >>> loss = SparsemaxLoss()
        >>> P = loss.predict_proba([[1.0, 0.2, -1.0]])
        >>> loss.hessian_product(P, [[1.0, 0.0, 5.0]])
        array([[ 0.5, -0.5,  0. ]])
        """
        return self._jacobian_product(P, V)

    def predict_proba(self, Z):
        """The loss's probability mapping applied to each row of ``Z``.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_classes)
            Scores (finite, or ``-inf`` to mask a class).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows on the probability simplex (the gradient of :math:`\\phi`).

        See Also
        --------
        sksparsemax.transforms : The mappings, for arrays of any shape.

        Examples
        --------
        >>> from sksparsemax.losses import SparseSoftmaxLoss
        >>> SparseSoftmaxLoss(k=1).predict_proba([[0.3, 2.0, 1.0]])
        array([[0., 1., 0.]])
        """
        return self._conjugate(shifted_scores(Z), need_value=False)[1]

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self._repr_params().items())
        return f"{type(self).__name__}({params})"

    def _repr_params(self):
        return {}
