"""The alpha-normmax Fenchel-Young loss."""

import numpy as np

from ..transforms import normmax, normmax_jvp
from ..transforms._normmax import check_normmax_alpha, norm_rows
from ._fenchel_young import FenchelYoungLoss


class NormmaxLoss(FenchelYoungLoss):
    r"""The alpha-normmax (Fenchel-Young) loss, for any alpha > 1.

    The regulariser is the alpha-norm shifted to vanish at the vertices,
    :math:`\Omega(p) = \|p\|_\alpha - 1`; its mapping is
    :func:`~sksparsemax.transforms.normmax`. With :math:`p =
    \operatorname{normmax}_\alpha(z)`,

    .. math::

        L_\alpha(z; q) = (p - q)^\top z - \|p\|_\alpha + \|q\|_\alpha,
        \qquad \nabla_z L_\alpha(z; q) = p - q.

    For a class index :math:`y` (:math:`\|e_y\|_\alpha = 1`) this is
    :math:`1 - \|p\|_\alpha + (p - e_y)^\top z`, the loss of the ``entmax``
    package's ``NormmaxBisectLoss``. It is convex in :math:`z`, :math:`L \ge
    0` with equality iff :math:`p = q` (so 0 at a confident correct
    prediction, where :math:`p` is one-hot on the target). The norms are
    computed as :math:`\max_j p_j\, \|p / \max_j p_j\|_\alpha`, without
    underflow for large ``alpha``.

    See :class:`FenchelYoungLoss` for the methods, the target forms, the
    ``-inf`` policy and the validation fast path.

    Parameters
    ----------
    alpha : float, default=2.0
        Norm index, ``alpha > 1`` (``alpha = 1`` is refused: the 1-norm is
        constant on the simplex).

    Attributes
    ----------
    alpha : float
        Norm index.

    See Also
    --------
    normmax_loss : Functional form.
    EntmaxLoss : The Tsallis-regularised counterpart.

    References
    ----------
    .. [1] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.
    .. [2] A. F. T. Martins, M. Treviso, A. Farinhas, P. M. Q. Aguiar,
       M. A. T. Figueiredo, M. Blondel and V. Niculae, "Sparse Continuous
       Distributions and Fenchel-Young Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> from sksparsemax.losses import NormmaxLoss
    >>> loss = NormmaxLoss(alpha=2.0)
    >>> loss.predict_proba([[0.0, 0.0], [3.0, 0.0]])
    array([[0.5, 0.5],
           [1. , 0. ]])
    >>> loss.loss([[0.0, 0.0], [3.0, 0.0]], [0, 0])  # 1 - sqrt(1/2), 0
    array([0.2928..., 0. ])
    """

    name = "normmax"

    def __init__(self, alpha=2.0):
        self.alpha = check_normmax_alpha(alpha)

    def predict_proba(self, Z):
        return normmax(Z, self.alpha, axis=1)

    def omega(self, P):
        P = np.asarray(P, dtype=np.float64)
        return norm_rows(P, self.alpha) - 1.0

    def jacobian_product(self, P, V):
        return normmax_jvp(P, V, self.alpha, axis=1)

    def _scores_for(self, p):
        # normmax(z)_j is proportional to [z_j - tau]_+^(1/(alpha-1)):
        # z_j = (p_j / ||p||_alpha)^(alpha-1) gives p with tau = 0; a class
        # of probability 0 gets -1, below the threshold rather than on it.
        p = np.asarray(p, dtype=np.float64)
        pos = p > 0
        q = np.where(pos, p, 0.0) / norm_rows(p[None, :], self.alpha)[0]
        return np.where(pos, q ** (self.alpha - 1.0), -1.0)

    def _repr_params(self):
        return {"alpha": self.alpha}


def normmax_loss(Z, target, alpha=2.0):
    r"""Per-sample alpha-normmax (Fenchel-Young) loss.

    .. math::

        L_\alpha(z; q) = (p - q)^\top z - \|p\|_\alpha + \|q\|_\alpha,
        \qquad p = \operatorname{normmax}_\alpha(z),

    with gradient :math:`p - q` (see :class:`NormmaxLoss`).

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores (finite, or ``-inf`` to mask a class). float32 stays float32.
    target : array_like or Target
        Class indices (n_samples,) or target distributions (n_samples,
        n_classes) (see :func:`check_target`).
    alpha : float, default=2.0
        Norm index, ``alpha > 1``.

    Returns
    -------
    ndarray of shape (n_samples,)
        Non-negative losses; ``+inf`` where a class with positive target
        probability has score ``-inf``.

    See Also
    --------
    NormmaxLoss : The loss object.

    Examples
    --------
    >>> from sksparsemax.losses import normmax_loss
    >>> normmax_loss([[1.0, 0.2, -1.0]], [0])
    array([0.0169...])
    """
    return NormmaxLoss(alpha).loss(Z, target)
