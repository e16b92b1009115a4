"""The budget sparsemax (capped simplex) Fenchel-Young loss."""

import numpy as np

from ..transforms import budget_sparsemax, budget_sparsemax_jvp
from ..transforms._budget import check_budget
from ._fenchel_young import FenchelYoungLoss
from ._targets import Target


def _checked_budget(budget):
    b = check_budget(budget)
    if b.ndim != 0:
        raise ValueError(
            f"budget must be a single number for the loss; got an array of shape {b.shape}."
        )
    return float(b)


def _dense(target):
    """The target distributions (n, K) as float64, one-hot rows for class indices."""
    if not target.is_indices:
        return target.proba
    Q = np.zeros((target.n_samples, target.n_classes))
    Q[np.arange(target.n_samples), target.indices] = 1.0
    return Q


def project_target(target, budget, excluded=None):
    r"""Map a checked target into the capped simplex :math:`C_b`: a new :class:`Target`.

    The rule: :math:`q_b = \Pi_{C_b}(b\,q)`, the Euclidean projection of the
    target scaled to the budget, computed by :func:`budget_sparsemax` (which
    is that projection). A target with :math:`b\,q \in C_b` (every
    :math:`q_i \le 1/b`: a b-hot multi-label row normalised to sum 1, such as
    ``[0.5, 0.5, 0]`` for ``b = 2``) becomes :math:`b\,q` (the b-hot row);
    a class index (one-hot :math:`q = e_y`) becomes 1 on the class and
    :math:`(b - 1)/(K' - 1)` on each of the other :math:`K'` usable classes.
    ``excluded`` (n, K), optional: the classes masked in the scores
    (``-inf``) with zero target probability, left out of the projection (they
    get 0). A masked class with positive target probability stays in, and
    the loss is then ``+inf``, as for every loss.
    """
    Q = budget * _dense(target)
    usable = target.n_classes
    if excluded is not None:
        Q = np.where(excluded, -np.inf, Q)
        usable = target.n_classes - np.count_nonzero(excluded, axis=1)
    bad = np.flatnonzero(np.broadcast_to(budget > usable, (target.n_samples,)))
    if bad.size:
        row = int(bad[0])
        count = usable if np.ndim(usable) == 0 else int(usable[row])
        raise ValueError(
            f"budget={budget:g} exceeds the number of classes that row {row} can "
            f"use ({count}): the budget loss needs 0 < budget <= n_classes "
            "(classes masked with -inf scores and zero target excluded)."
        )
    if target.n_samples == 0:
        return Target(0, target.n_classes, proba=np.zeros((0, target.n_classes)))
    return Target(target.n_samples, target.n_classes,
                  proba=budget_sparsemax(Q, budget, axis=1))


class BudgetSparsemaxLoss(FenchelYoungLoss):
    r"""The budget sparsemax loss: the Fenchel-Young loss of the capped simplex.

    With :math:`\Omega(p) = \tfrac12\|p\|^2` restricted to :math:`C_b = \{p
    : 0 \le p_i \le 1, \sum_i p_i = b\}`, the mapping is
    :func:`~sksparsemax.transforms.budget_sparsemax` and

    .. math::

        L(z; q) = \langle \hat p, z\rangle - \tfrac12\|\hat p\|^2
                  + \tfrac12\|q_b\|^2 - \langle z, q_b\rangle, \qquad
        \nabla_z L = \hat p(z) - q_b, \qquad
        \hat p = \operatorname{budget\_sparsemax}_b(z).

    **Targets.** The loss is bounded below only for targets in :math:`C_b`
    (adding :math:`c \mathbf 1` to :math:`z` changes it by :math:`c\,(b -
    \sum_i q_i)`), but a target here is a class index or a distribution
    (summing to 1). It is therefore mapped to :math:`q_b = \Pi_{C_b}(b\,q)`,
    the Euclidean projection of the target scaled to the budget: a class
    index :math:`y` gives 1 on :math:`y` and :math:`(b-1)/(K-1)` on every
    other class; a distribution with all :math:`q_i \le 1/b` (a b-hot
    multi-label row, normalised to sum 1) gives :math:`b\,q`, unchanged up
    to the scale. Classes masked in the scores (``-inf``) with zero target
    probability are left out of the projection (they get 0, the others share
    the budget); a masked class with positive target probability makes the
    loss ``+inf``. Then :math:`L \ge 0`, with equality iff
    :math:`\hat p(z) = q_b`, and :math:`L` is convex and differentiable in
    :math:`z` (its gradient is Lipschitz).

    :meth:`predict_proba` returns rows in :math:`C_b`: they sum to ``budget``,
    not 1 (marginal inclusion probabilities of a soft b-subset);
    ``row_sum`` is ``budget``, and a classifier's ``predict_proba`` divides
    by it (a distribution with exact zeros, capped at ``1 / budget``).

    Parameters
    ----------
    budget : float, default=2.0
        The sum :math:`b` of every row, ``0 < budget <= n_classes``;
        ``budget = 1`` is the sparsemax loss.

    See Also
    --------
    budget_sparsemax_loss : Functional form.
    SparsemaxLoss : ``budget = 1``.

    References
    ----------
    .. [1] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sksparsemax.losses import BudgetSparsemaxLoss
    >>> loss = BudgetSparsemaxLoss(budget=2)
    >>> loss.predict_proba([[1.0, 0.6, 0.2]])
    array([[1. , 0.7, 0.3]])
    >>> loss.gradient([[1.0, 0.6, 0.2]], [0])  # target [1, 0.5, 0.5]
    array([[ 0. ,  0.2, -0.2]])
    >>> loss.loss([[1.0, 0.5, 0.5]], [0])  # zero at the mapped target
    array([0.])
    """

    name = "budget_sparsemax"

    def __init__(self, budget=2.0):
        self.budget = _checked_budget(budget)

    def predict_proba(self, Z):
        return budget_sparsemax(np.asarray(Z), self.budget, axis=1)

    def omega(self, P):
        return 0.5 * np.einsum("ij,ij->i", P, P)

    @property
    def row_sum(self):
        """The sum of every row of the mapping: ``budget`` (float)."""
        return self.budget

    def jacobian_product(self, P, V):
        return budget_sparsemax_jvp(P, V, axis=1)

    def _map_target(self, target, Z=None):
        # The target mapped into C_b (see the class docstring); without
        # masks the mapped target is cached on the Target, so a solver that
        # passes one Target maps it once.
        masked = None if Z is None else Z == -np.inf
        if masked is not None and masked.any():
            excluded = masked & (_dense(target) == 0)
            return project_target(target, self.budget, excluded)
        return target.cached(
            ("budget_target", self.budget),
            lambda: project_target(target, self.budget),
        )

    def _scores_for(self, p):
        # The mean target mapped into C_b is a fixed point of the mapping
        # (threshold 0); classes at 0 get -1 and classes at 1 get 2, away
        # from the kinks, so that they stay saturated.
        p = np.asarray(p, dtype=np.float64)
        q = budget_sparsemax(self.budget * p, min(self.budget, p.size))
        q[q <= 0] = -1.0
        q[q >= 1] = 2.0
        return q

    def _repr_params(self):
        return {"budget": self.budget}


def budget_sparsemax_loss(Z, target, budget=2.0):
    r"""Per-sample budget sparsemax loss.

    .. math::

        L(z; q) = \langle \hat p, z\rangle - \tfrac12\|\hat p\|^2
                  + \tfrac12\|q_b\|^2 - \langle z, q_b\rangle,
        \qquad \hat p = \operatorname{budget\_sparsemax}_b(z),

    with the target mapped into the capped simplex, :math:`q_b =
    \Pi_{C_b}(b\,q)` (see :class:`BudgetSparsemaxLoss`); the gradient is
    :math:`\hat p(z) - q_b`.

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores (finite, or ``-inf`` to mask a class). float32 stays float32.
    target : array_like or Target
        Class indices (n_samples,) or target distributions (n_samples,
        n_classes) (see :func:`check_target`).
    budget : float, default=2.0
        The sum of every row of the mapping, ``0 < budget <= n_classes``.

    Returns
    -------
    ndarray of shape (n_samples,)
        Non-negative losses.

    See Also
    --------
    BudgetSparsemaxLoss : The loss object.

    Examples
    --------
    >>> from sksparsemax.losses import budget_sparsemax_loss
    >>> budget_sparsemax_loss([[1.0, 0.6, 0.2], [1.0, 0.5, 0.5]], [0, 0])
    array([0.04, 0.  ])
    """
    return BudgetSparsemaxLoss(budget).loss(Z, target)
