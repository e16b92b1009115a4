"""The sparsemax loss (Martins & Astudillo, 2016)."""

import numpy as np

from ..transforms import sparsemax_jvp
from ..transforms._sparsemax import shifted_sparsemax_inplace
from ._fenchel_young import FenchelYoungLoss


def sparsemax_conjugate(Zs, need_value=True):
    r"""Return ``(phi, P)`` for sparsemax from shifted scores ``Zs``.

    ``P = sparsemax(Zs)`` and ``phi = tau + ||P||^2 / 2``, which equals
    :math:`\tfrac12 \sum_{j \in S}(z_j^2 - \tau^2)` because
    :math:`z_j = p_j + \tau` on the support :math:`S` and
    :math:`\sum_j p_j = 1`. This form has no ``-inf * 0`` product. The rows
    were validated and shifted by the caller: the threshold is computed
    without doing either again.
    """
    P = Zs.copy()
    phi = sparsemax_conjugate_inplace(P, need_value)
    return phi, P


def sparsemax_conjugate_inplace(Zs, need_value=True):
    """Overwrite the shifted scores ``Zs`` with ``sparsemax(Zs)``; return phi.

    The arithmetic of :func:`sparsemax_conjugate`, with no (n, K) output
    array (nor a shifted copy for the threshold); ``phi`` is None unless
    ``need_value``.
    """
    tau = shifted_sparsemax_inplace(Zs)
    if not need_value:
        return None
    return tau + 0.5 * np.einsum("ij,ij->i", Zs, Zs)


def half_sq_norm(target):
    r"""The constant :math:`\tfrac12\|q\|^2` of a target (cached)."""
    if target.is_indices:
        return 0.5
    return target.cached(
        "half_sq_norm", lambda: 0.5 * np.einsum("ij,ij->i", target.proba, target.proba)
    )


class SparsemaxLoss(FenchelYoungLoss):
    r"""The sparsemax loss: convex, smooth, zero when sparsemax hits the target.

    With :math:`\tau(z)` and :math:`S(z)` the threshold and the support of
    :func:`~sksparsemax.transforms.sparsemax`,

    .. math::

        L(z; q) = -q^\top z + \tfrac12 \sum_{j \in S(z)} (z_j^2 - \tau(z)^2)
                  + \tfrac12 \|q\|^2,
        \qquad \nabla_z L(z; q) = \operatorname{sparsemax}(z) - q.

    With a class index :math:`y` (:math:`q = e_y`) this is the multi-class
    loss :math:`-z_y + \tfrac12\sum_{j\in S}(z_j^2 - \tau^2) + \tfrac12`;
    with label proportions :math:`q` it is the paper's multi-label loss.
    It is the Fenchel-Young loss of :math:`\Omega(p) = \tfrac12\|p\|^2`
    (the Gini entropy, up to a constant): :math:`L \ge 0`, with
    equality iff :math:`\operatorname{sparsemax}(z) = q`; for a class index,
    iff :math:`z_y \ge 1 + \max_{j \ne y} z_j`. With two classes and
    :math:`t = z_1 - z_2` it is the modified Huber loss of :math:`t`.

    See :class:`FenchelYoungLoss` for the methods, the target forms, the ``-inf``
    policy and the validation fast path.

    See Also
    --------
    sparsemax_loss : Functional form.
    EntmaxLoss : ``EntmaxLoss(2.0)`` is this loss.

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From Softmax to Sparsemax:
       A Sparse Model of Attention and Multi-Label Classification", ICML 2016.
    .. [2] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sksparsemax.losses import SparsemaxLoss
    >>> loss = SparsemaxLoss()
    >>> loss.loss([[1.0, 0.2, -1.0]], [0])
    array([0.01])
    >>> loss.gradient([[1.0, 0.2, -1.0]], [0])
    array([[-0.1,  0.1,  0. ]])
    >>> loss.predict_proba([[1.0, 0.2, -1.0]])
    array([[0.9, 0.1, 0. ]])
    """

    name = "sparsemax"

    def omega(self, P):
        return 0.5 * np.einsum("ij,ij->i", P, P)

    def jacobian_product(self, P, V):
        return sparsemax_jvp(P, V, axis=1)

    def _conjugate(self, Zs, need_value=True):
        return sparsemax_conjugate(Zs, need_value)

    def _conjugate_inplace(self, Zs):
        return sparsemax_conjugate_inplace(Zs)

    def _row_kernel(self):
        from ._sparsemax_numba import kernel

        return kernel, ()

    def _scores_for(self, p):
        # p is on the simplex, so sparsemax(p) = p (threshold 0). A class of
        # probability 0 gets -1, clearly below the threshold rather than on
        # it, so that it stays out of the support.
        p = np.array(p, dtype=np.float64)
        p[p <= 0] = -1.0
        return p

    def _target_term(self, target):
        return half_sq_norm(target)

    def _versus_zero(self, Z, Y=None):
        # The two-class rows (z, 0) of MarginalLoss, entrywise: p =
        # clip((z + 1) / 2, 0, 1), and against (y, 1 - y) the loss
        # Omega*(z) + y^2 - y - y z, Omega*(z) = 0, (z + 1)^2 / 4, z on
        # z <= -1, |z| <= 1, z >= 1 (the modified Huber loss).
        P = np.clip((Z + 1) * 0.5, 0, 1)
        if Y is None:
            return P, None
        with np.errstate(invalid="ignore", over="ignore"):
            conj = np.where(Z <= -1, 0.0, np.where(Z >= 1, Z, 0.25 * (Z + 1) ** 2))
            L = conj + Y * Y - Y - np.where(Y > 0, Y * Z, 0.0)
        return P, L


def sparsemax_loss(Z, y):
    r"""Per-sample sparsemax loss.

    .. math::

        L(z; q) = -q^\top z + \tfrac12 \sum_{j \in S(z)} (z_j^2 - \tau(z)^2)
                  + \tfrac12 \|q\|^2

    with :math:`\tau(z)`, :math:`S(z)` the threshold and the support of
    sparsemax; its gradient is :math:`\operatorname{sparsemax}(z) - q`
    (:meth:`SparsemaxLoss.gradient`).

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores (finite, or ``-inf`` to mask a class). float32 stays float32.
    y : array_like or Target
        Class indices (n_samples,) or target distributions (n_samples,
        n_classes): one-hot rows or label proportions (see
        :func:`check_target`).

    Returns
    -------
    ndarray of shape (n_samples,)
        Non-negative losses; ``+inf`` where a class with positive target
        probability has score ``-inf``.

    See Also
    --------
    SparsemaxLoss : The loss object (gradient, one-pass value and gradient).

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From Softmax to Sparsemax:
       A Sparse Model of Attention and Multi-Label Classification", ICML 2016.

    Examples
    --------
    >>> from sksparsemax.losses import sparsemax_loss
    >>> sparsemax_loss([[1.0, 0.2, -1.0], [1.0, 0.2, -1.0]], [0, 1])
    array([0.01, 0.81])
    >>> sparsemax_loss([[1.0, 0.2, -1.0]], [[0.9, 0.1, 0.0]])  # proportions
    array([0.])
    """
    return SparsemaxLoss().loss(Z, y)
