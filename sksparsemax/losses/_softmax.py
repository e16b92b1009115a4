"""The softmax cross-entropy loss (the dense reference)."""

import numpy as np

from ..transforms import softmax_jvp
from ._fenchel_young import FenchelYoungLoss


def softmax_conjugate(Zs, need_value=True):
    """Return ``(logsumexp(Zs), softmax(Zs))`` row-wise, from shifted scores.

    Every row of ``Zs`` has maximum 0, so ``exp`` cannot overflow and the
    sum is at least 1; ``-inf`` entries give ``exp = 0`` exactly.
    """
    P = np.exp(Zs)
    s = P.sum(axis=1)
    P /= s[:, None]
    return (np.log(s) if need_value else None), P


def softmax_conjugate_inplace(Zs):
    """Overwrite the shifted scores ``Zs`` with ``softmax(Zs)``; return the LSE."""
    np.exp(Zs, out=Zs)
    s = Zs.sum(axis=1)
    Zs /= s[:, None]
    return np.log(s)


def negative_entropy(P):
    r"""Row-wise :math:`\sum_j p_j \log p_j` (:math:`0 \log 0 = 0`)."""
    logP = np.log(P, where=P > 0, out=np.zeros_like(P))
    return np.einsum("ij,ij->i", P, logP)


class SoftmaxLoss(FenchelYoungLoss):
    r"""Softmax cross-entropy (multinomial logistic loss).

    .. math::

        L(z; q) = \log \sum_j e^{z_j} - q^\top z, \qquad
        \nabla_z L(z; q) = \operatorname{softmax}(z) - q.

    With a class index this is :math:`-\log \operatorname{softmax}(z)_y`;
    with label proportions it is the loss of the softmax baseline of
    Martins & Astudillo (2016), :math:`H(q) + \mathrm{KL}(q \,\|\,
    \operatorname{softmax}(z))` (its minimum over :math:`z` is the Shannon
    entropy :math:`H(q)`, not 0; :class:`EntmaxLoss` with ``alpha=1``
    subtracts it).

    See :class:`FenchelYoungLoss` for the methods, the target forms, the ``-inf``
    policy and the validation fast path.

    See Also
    --------
    softmax_loss : Functional form.
    SparseSoftmaxLoss : Top-k version; ``k = n_classes`` is this loss.

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From Softmax to Sparsemax:
       A Sparse Model of Attention and Multi-Label Classification", ICML 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.losses import SoftmaxLoss
    >>> loss = SoftmaxLoss()
    >>> loss.loss([[0.0, 0.0, 0.0, 0.0]], [2]), float(np.log(4.0))
    (array([1.386...]), 1.386...)
    >>> loss.gradient([[0.0, 0.0, 0.0, 0.0]], [2])
    array([[ 0.25,  0.25, -0.75,  0.25]])
    """

    name = "softmax"

    def omega(self, P):
        return negative_entropy(P)

    def jacobian_product(self, P, V):
        return softmax_jvp(P, V, axis=1)

    def _conjugate(self, Zs, need_value=True):
        return softmax_conjugate(Zs, need_value)

    def _conjugate_inplace(self, Zs):
        return softmax_conjugate_inplace(Zs)

    def _target_term(self, target):
        # Cross-entropy, the paper's softmax baseline: the Fenchel-Young loss
        # of the negative entropy minus the constant -H(q), so that its
        # minimum over z is H(q), as scikit-learn's log loss.
        return 0.0

    def _row_kernel(self):
        from ._softmax_numba import kernel

        return kernel, ()

    def _versus_zero(self, Z, Y=None):
        # The two-class rows (z, 0) of MarginalLoss, entrywise: the sigmoid,
        # and against (y, 1 - y) the binary cross-entropy log(1 + e^z) - y z.
        P = 0.5 * (1 + np.tanh(0.5 * Z))  # the logistic sigmoid, without overflow
        if Y is None:
            return P, None
        with np.errstate(invalid="ignore", over="ignore"):
            L = np.logaddexp(0, Z) - np.where(Y > 0, Y * Z, 0.0)
        return P, L


def softmax_loss(Z, y):
    r"""Per-sample softmax cross-entropy.

    .. math:: L(z; q) = \log \sum_j e^{z_j} - q^\top z

    with gradient :math:`\operatorname{softmax}(z) - q`.

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores (finite, or ``-inf`` to mask a class). float32 stays float32.
    y : array_like or Target
        Class indices (n_samples,) or target distributions (n_samples,
        n_classes) (see :func:`check_target`).

    Returns
    -------
    ndarray of shape (n_samples,)
        Losses; ``+inf`` where a class with positive target probability has
        score ``-inf``.

    See Also
    --------
    SoftmaxLoss : The loss object.

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From Softmax to Sparsemax:
       A Sparse Model of Attention and Multi-Label Classification", ICML 2016.

    Examples
    --------
    >>> from sksparsemax.losses import softmax_loss
    >>> softmax_loss([[0.0, 0.0], [0.0, float("-inf")]], [0, 0])
    array([0.693..., 0. ])
    """
    return SoftmaxLoss().loss(Z, y)
