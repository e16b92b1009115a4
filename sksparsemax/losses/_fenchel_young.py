"""The extension point of the losses: :class:`FenchelYoungLoss`.

Every loss of this package is a Fenchel-Young loss (Blondel, Martins &
Niculae, 2020): with a regulariser :math:`\\Omega` on the simplex and its
mapping :math:`\\hat p(z) = \\arg\\max_{p} \\langle p, z\\rangle - \\Omega(p)`,

.. math:: L(z; q) = \\Omega^*(z) + \\Omega(q) - \\langle z, q\\rangle, \\qquad
          \\Omega^*(z) = \\langle \\hat p, z\\rangle - \\Omega(\\hat p), \\qquad
          \\nabla_z L(z; q) = \\hat p(z) - q.

A subclass defines the mapping (``predict_proba``) and the regulariser
(``omega``); this module derives everything else: values, gradients, row
shifting, ``-inf`` masks, both target forms, float32 and the errors.
"""

import numpy as np

from ..transforms import _backend
from ._scores import evaluate, masked_rowdot, shifted_scores


class FenchelYoungLoss:
    r"""Base class of the losses, and the way to add one: a Fenchel-Young loss.

    A loss compares scores ``Z`` (n_samples, n_classes) with a target, given
    as class indices (n_samples,) or as distributions (n_samples,
    n_classes); see :func:`check_target`. With a regulariser
    :math:`\Omega` and its mapping :math:`\hat p(z) = \arg\max_{p \in
    \Delta} \langle p, z\rangle - \Omega(p)`,

    .. math::

        L(z; q) = \Omega^*(z) + \Omega(q) - \langle z, q\rangle, \qquad
        \Omega^*(z) = \langle \hat p(z), z\rangle - \Omega(\hat p(z)),
        \qquad \nabla_z L(z; q) = \hat p(z) - q.

    :math:`L \ge 0` is convex in :math:`z`, zero iff :math:`\hat p(z) = q`.

    **Writing a loss.** A subclass defines two methods:

    - ``predict_proba(Z)``: the mapping, rows of a 2-D float score array to
      distributions (same shape and dtype); when the base class calls it,
      each row is shifted so that its maximum is 0 and may hold ``-inf``
      (masked classes, which must get probability 0);
    - ``omega(P)``: the regulariser :math:`\Omega` of each row of ``P``,
      shape (n_samples,).

    and may define ``jacobian_product(P, V)``, the product of the mapping's
    Jacobian at ``P = predict_proba(Z)`` with each row of ``V`` (needed only
    by ``solver="newton-cg"``, through :meth:`hessian_product`), and
    ``is_smooth(n_classes)`` (False for a loss with kinks, such as top-k:
    the estimators then add the safeguards of :ref:`solver_policy`). The
    base class derives the value, the gradient, the shift of each row by
    its maximum (a constant shift changes nothing), ``-inf`` masks (a class
    with zero target probability contributes nothing; one with positive
    target probability makes the loss ``+inf``), both target forms,
    float32 (kept as float32; others become float64) and the errors (NaN or
    ``+inf`` scores, or a row of only ``-inf``, raise a ``ValueError``).
    The user guide's "Writing your own loss" shows a complete example.

    The shipped losses also override private hooks with closed forms
    (``_conjugate``: :math:`(\Omega^*, \hat p)` in one pass, in place
    variants; ``_row_kernel``: a compiled row kernel, see
    ``losses/_numba_engine.py``): the same values, faster.

    Validation: each method checks ``target`` with :func:`check_target`
    unless it is a :class:`Target` (validate once before a solver loop);
    ``check=False`` skips the check of a raw target (an invalid one then
    gives wrong results or an ``IndexError``).

    Attributes
    ----------
    name : str or None
        The name the estimators accept for the loss (``loss="sparsemax"``),
        for the shipped losses; None for others, which are passed as
        instances.

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
    Sparsemax with a temperature ``t``, :math:`\Omega(p) = \tfrac t2
    \|p\|^2`, whose mapping is ``sparsemax(z / t)``:

    >>> import numpy as np
    >>> from sksparsemax.losses import FenchelYoungLoss
    >>> from sksparsemax.transforms import sparsemax
    >>> class TemperedSparsemaxLoss(FenchelYoungLoss):
    ...     def __init__(self, t=2.0):
    ...         self.t = t
    ...     def predict_proba(self, Z):
    ...         return sparsemax(np.asarray(Z) / self.t, axis=1)
    ...     def omega(self, P):
    ...         return 0.5 * self.t * np.einsum("ij,ij->i", P, P)
    >>> loss = TemperedSparsemaxLoss(t=2.0)
    >>> loss.loss([[1.0, 0.2, -1.0]], [0])
    array([0.18])
    >>> loss.gradient([[1.0, 0.2, -1.0]], [0])
    array([[-0.3,  0.3,  0. ]])
    """

    name = None

    #: A constant added to a row of scores changes nothing (solvers may centre intercepts).
    shift_invariant = True
    #: The sum of every row of the mapping (classifiers divide ``predict_proba`` by it).
    row_sum = 1.0

    #: The shipped losses by name (see :func:`get_loss`).
    _registry = {}

    _DOCUMENTED = ("predict_proba", "omega", "jacobian_product", "is_smooth")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name") is not None:
            FenchelYoungLoss._registry[cls.name] = cls
        # A subclass's methods say what the base class's say (the contract),
        # unless they document themselves.
        for method in cls._DOCUMENTED:
            func = cls.__dict__.get(method)
            if func is not None and not func.__doc__:
                func.__doc__ = getattr(FenchelYoungLoss, method).__doc__

    # -- what a subclass defines -------------------------------------------
    def predict_proba(self, Z):
        """The loss's probability mapping applied to each row of ``Z``.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_classes)
            Scores (finite, or ``-inf`` to mask a class).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows on the probability simplex (the gradient of
            :math:`\\Omega^*`).

        Examples
        --------
        >>> from sksparsemax.losses import SparseSoftmaxLoss
        >>> SparseSoftmaxLoss(k=1).predict_proba([[0.3, 2.0, 1.0]])
        array([[0., 1., 0.]])
        """
        if type(self)._conjugate is FenchelYoungLoss._conjugate:
            raise NotImplementedError(
                f"{type(self).__name__} must define predict_proba(Z), its mapping."
            )
        # A loss with a closed-form conjugate: its mapping, from the scores
        # checked and shifted once.
        return self._conjugate(shifted_scores(Z), need_value=False)[1]

    def omega(self, P):  # pragma: no cover - abstract
        """The regulariser :math:`\\Omega` of each row of ``P``.

        Parameters
        ----------
        P : ndarray of shape (n_samples, n_classes)
            Distributions (rows on the simplex).

        Returns
        -------
        ndarray of shape (n_samples,)
            :math:`\\Omega(p_i)` for each row ``p_i``.

        Examples
        --------
        >>> from sksparsemax.losses import SparsemaxLoss
        >>> SparsemaxLoss().omega([[0.5, 0.5, 0.0]])  # ||p||^2 / 2
        array([0.25])
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define omega(P), its regulariser."
        )

    def jacobian_product(self, P, V):
        """Row-wise product of the mapping's Jacobian at ``P`` with ``V``.

        Parameters
        ----------
        P : ndarray of shape (n_samples, n_classes)
            The mapping's output ``predict_proba(Z)``.
        V : ndarray of shape (n_samples, n_classes)
            Directions in score space.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Row ``i`` is :math:`J(p_i)\\, v_i`.

        Examples
        --------
        >>> from sksparsemax.losses import SparsemaxLoss
        >>> SparsemaxLoss().jacobian_product([[0.9, 0.1, 0.0]], [[1.0, 0.0, 5.0]])
        array([[ 0.5, -0.5,  0. ]])
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define jacobian_product(P, V), "
            "the Jacobian of its mapping: no Hessian-vector product (use "
            'solver="lbfgs").'
        )

    def is_smooth(self, n_classes):
        """Whether the loss is differentiable everywhere for ``n_classes`` classes.

        Parameters
        ----------
        n_classes : int
            The number of classes of the scores.

        Returns
        -------
        bool
            True by default; False for a loss with kinks at its minimiser
            (the top-k loss for ``k < n_classes``).

        Examples
        --------
        >>> from sksparsemax.losses import SparseSoftmaxLoss
        >>> SparseSoftmaxLoss(k=2).is_smooth(3), SparseSoftmaxLoss(k=3).is_smooth(3)
        (False, True)
        """
        return True

    # -- hooks with generic defaults ---------------------------------------
    def _conjugate(self, Zs, need_value=True):
        r"""Return ``(phi, P)`` from shifted scores: :math:`\Omega^*` per row and the mapping.

        ``P`` must be a new array (the gradient is computed in place in
        it); ``phi`` is None when not needed. The default calls
        :meth:`predict_proba` and :meth:`omega`.
        """
        P = np.array(self.predict_proba(Zs), dtype=Zs.dtype)
        if P.shape != Zs.shape:
            raise ValueError(
                f"{type(self).__name__}.predict_proba returned shape {P.shape} "
                f"for scores of shape {Zs.shape}."
            )
        phi = None
        if need_value:
            omega = np.asarray(self.omega(P), dtype=Zs.dtype)
            phi = masked_rowdot(P, Zs, P > 0) - omega
        return phi, P

    def _conjugate_inplace(self, Zs):
        """Overwrite the shifted scores ``Zs`` with ``P``; return ``phi`` (n,).

        The in-place counterpart of :meth:`_conjugate`, used by
        ``loss_gradient(..., out=...)``; subclasses override it to compute
        the mapping without an (n, K) temporary.
        """
        phi, P = self._conjugate(Zs, need_value=True)
        np.copyto(Zs, P)
        return phi

    def _map_target(self, target, Z=None):
        """The target the scores are compared with: ``target`` itself by default.

        A loss whose regulariser lives off the simplex maps the checked
        :class:`Target` into its set (budget: the capped simplex). ``Z``, the
        checked scores, tells which classes are masked; None: none are.
        """
        return target

    def _target_term(self, target):
        r""":math:`\Omega(q)` of a target: a scalar or an array (n_samples,), cached.

        For class indices, :math:`\Omega(e_y)`, from the regulariser of the
        ``n_classes`` one-hot rows.
        """
        if target.is_indices:
            def of_classes():
                return np.asarray(self.omega(np.eye(target.n_classes)), np.float64)

            return target.cached(("omega", self), of_classes)[target.indices]
        return target.cached(
            ("omega", self),
            lambda: np.asarray(self.omega(target.proba), np.float64),
        )

    def _scores_for(self, p):
        """Scores ``z`` (K,) whose mapping is the distribution ``p`` (K,).

        Used to start a solver at the intercept-only optimum: with zero
        weights and intercepts ``b``, the mean loss is minimised where
        ``predict_proba(b)`` is the (weighted) mean target ``p``. The default
        is the softmax inverse ``log p``, with ``p`` clipped at ``1e-8`` (a
        class of zero mean target has its optimum at ``-inf``): a starting
        point only.
        """
        p = np.asarray(p, dtype=np.float64)
        return np.log(np.maximum(p, 1e-8))

    def _row_kernel(self):
        """``(kernel, params)``: the loss's compiled kernel, or None.

        Called only when the numba backend is in effect. ``kernel(task,
        params)`` is a compiled entry point that hands the loss's row kernel
        to the drivers of ``_numba_engine``, ``params`` a float64 array of
        its parameters. The default (None) keeps the NumPy path.
        """
        return None

    def compiled(self, n_classes):
        """The loss's compiled kernels for ``n_classes`` classes, or None.

        Parameters
        ----------
        n_classes : int
            The number of classes of the scores (a loss may pick its kernel
            by it: top-k with ``k >= n_classes`` is the softmax).

        Returns
        -------
        CompiledLoss or None
            None unless the numba backend is in effect and the loss has a
            compiled row kernel (for ``n_classes``).

        Examples
        --------
        >>> from sksparsemax.losses import EntmaxLoss
        >>> from sksparsemax.transforms import backend
        >>> with backend("numpy"):
        ...     EntmaxLoss(2.0).compiled(3) is None
        True
        """
        if not _backend.numba_enabled():
            return None
        found = self._row_kernel_for(n_classes)
        if found is None:
            return None
        from ._compiled import CompiledLoss

        return CompiledLoss(self, *found)

    def _row_kernel_for(self, n_classes):
        """:meth:`_row_kernel` for ``n_classes`` (the top-k loss picks by ``k``)."""
        return self._row_kernel()

    # -- evaluation ----------------------------------------------------------
    def _evaluate(self, Z, target, check, need_loss, need_grad, out=None):
        return evaluate(self, Z, target, check, need_loss, need_grad, out)

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
        return self._evaluate(Z, target, check, True, True, out)

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
        return self.jacobian_product(P, V)

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self._repr_params().items())
        return f"{type(self).__name__}({params})"

    def _repr_params(self):
        return {}


#: The former name of :class:`FenchelYoungLoss`.
BaseLoss = FenchelYoungLoss
