"""The top-k sparse-softmax loss (Sun et al., 2021)."""

import numpy as np

from .._checks import check_k
from ..transforms import sparse_softmax, sparse_softmax_jvp
from ..transforms._sparse_softmax import top_k_mask
from ._fenchel_young import FenchelYoungLoss
from ._softmax import SoftmaxLoss, negative_entropy, softmax_conjugate, softmax_conjugate_inplace


def sparse_softmax_conjugate(Zs, k, need_value=True):
    """Return ``(LSE of the top k, sparse_softmax(Zs, k))`` from shifted scores.

    Ties at the k-th largest score keep the lowest indices, as
    :func:`~sksparsemax.transforms.sparse_softmax` does. ``k >= K`` is the
    softmax.
    """
    if k >= Zs.shape[1]:
        return softmax_conjugate(Zs, need_value)
    mask = top_k_mask(Zs, k)
    P = np.exp(Zs, where=mask, out=np.zeros_like(Zs))
    s = P.sum(axis=1)
    P /= s[:, None]
    return (np.log(s) if need_value else None), P


def sparse_softmax_conjugate_inplace(Zs, k):
    """Overwrite the shifted scores ``Zs`` with ``sparse_softmax(Zs, k)``.

    Returns the log-sum-exp of the top k. The mapping comes from
    :func:`~sksparsemax.transforms.sparse_softmax` (one (n, K) array, no
    index or mask temporaries with the numba backend); since every row of
    ``Zs`` has maximum 0 and the maximum is always kept,
    ``p_max = 1 / sum_{top k} exp(z)``, so the LSE is ``-log(p_max)``.
    """
    if k >= Zs.shape[1]:
        return softmax_conjugate_inplace(Zs)
    P = sparse_softmax(Zs, k, axis=1)
    phi = -np.log(P.max(axis=1))
    np.copyto(Zs, P)
    return phi


class SparseSoftmaxLoss(FenchelYoungLoss):
    r"""Top-k sparse-softmax loss of Sun et al. (2021).

    With :math:`\Omega_k(z)` the indices of the :math:`k` largest scores,

    .. math::

        L_k(z; q) = \log \sum_{j \in \Omega_k(z)} e^{z_j} - q^\top z,
        \qquad \nabla_z L_k(z; q) = \operatorname{sparse\_softmax}_k(z) - q

    (the gradient holds away from ties at the k-th score; at a tie the lowest
    indices are kept, which gives one of the subgradients). As in the
    method's reference code, the target is not forced into
    :math:`\Omega_k(z)`. The log-sum-exp of the top :math:`k` is the maximum
    of :math:`\log\sum_{j\in S} e^{z_j}` over the subsets :math:`S` of size
    :math:`k`, so :math:`L_k` is convex and piecewise smooth;
    :math:`L_1 \le L_2 \le \dots \le L_K`, and :math:`L_K` (or any
    :math:`k \ge K`) is the softmax cross-entropy. ``k = 1`` gives
    :math:`\max_j z_j - q^\top z`, allowed here (an estimator should require
    ``k >= 2``).

    See :class:`FenchelYoungLoss` for the methods, the target forms, the ``-inf``
    policy and the validation fast path.

    Parameters
    ----------
    k : int, default=5
        Number of scores kept, ``k >= 1``.

    Attributes
    ----------
    k : int
        Number of scores kept.

    See Also
    --------
    sparse_softmax_loss : Functional form.
    SoftmaxLoss : ``k = n_classes``.

    References
    ----------
    .. [1] J. Sun, Z. Yang, Y. Lu, J. Su and Y. Zhang, "Sparse-softmax: A
       Simpler and Faster Alternative Softmax Transformation",
       arXiv:2112.12433, 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.losses import SparseSoftmaxLoss
    >>> loss = SparseSoftmaxLoss(k=2)
    >>> Z = [[np.log(3.0), 0.0, -1.0]]
    >>> loss.loss(Z, [1]), float(np.log(4.0))
    (array([1.386...]), 1.386...)
    >>> loss.gradient(Z, [1])
    array([[ 0.75, -0.75,  0.  ]])
    """

    name = "sparse_softmax"

    def __init__(self, k=5):
        self.k = check_k(k)

    def omega(self, P):
        # At P = sparse_softmax(z), <P, z> - sum P log P is the log-sum-exp of
        # the top k: the value of the loss's conjugate, as the base class needs.
        return negative_entropy(P)

    def jacobian_product(self, P, V):
        return sparse_softmax_jvp(P, V, axis=1)

    def is_smooth(self, n_classes):
        # Kinks where the k-th and (k+1)-th scores tie; none for k >= K.
        return self.k >= n_classes

    def _conjugate(self, Zs, need_value=True):
        return sparse_softmax_conjugate(Zs, self.k, need_value)

    def _conjugate_inplace(self, Zs):
        return sparse_softmax_conjugate_inplace(Zs, self.k)

    def _target_term(self, target):
        # As in the method's reference code, a cross-entropy: no -H(q).
        return 0.0

    def _row_kernel_for(self, n_classes):
        if self.k >= n_classes:  # the softmax, with its own kernel
            return SoftmaxLoss()._row_kernel()
        from ._sparse_softmax_numba import kernel

        return kernel, (self.k,)

    def _repr_params(self):
        return {"k": self.k}


def sparse_softmax_loss(Z, y, k):
    r"""Per-sample top-k sparse-softmax loss.

    .. math:: L_k(z; q) = \log \sum_{j \in \Omega_k(z)} e^{z_j} - q^\top z

    with :math:`\Omega_k(z)` the indices of the :math:`k` largest scores
    (ties: lowest indices first); see :class:`SparseSoftmaxLoss`.

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores (finite, or ``-inf`` to mask a class). float32 stays float32.
    y : array_like or Target
        Class indices (n_samples,) or target distributions (n_samples,
        n_classes) (see :func:`check_target`).
    k : int
        Number of scores kept, ``k >= 1``; ``k >= n_classes`` is the softmax
        cross-entropy.

    Returns
    -------
    ndarray of shape (n_samples,)
        Non-negative losses; ``+inf`` where a class with positive target
        probability has score ``-inf``.

    See Also
    --------
    SparseSoftmaxLoss : The loss object.

    References
    ----------
    .. [1] J. Sun, Z. Yang, Y. Lu, J. Su and Y. Zhang, "Sparse-softmax: A
       Simpler and Faster Alternative Softmax Transformation",
       arXiv:2112.12433, 2021.

    Examples
    --------
    >>> from sksparsemax.losses import sparse_softmax_loss
    >>> Z = [[2.0, 1.0, 0.0]]
    >>> sparse_softmax_loss(Z, [0], k=1)
    array([0.])
    >>> sparse_softmax_loss(Z, [2], k=1)
    array([2.])
    """
    return SparseSoftmaxLoss(k).loss(Z, y)
