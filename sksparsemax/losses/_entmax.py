"""The alpha-entmax Fenchel-Young loss and the Tsallis entropy."""

import numpy as np

from .._checks import check_alpha, check_alpha_values
from ..transforms import entmax15, entmax_bisect, entmax_jvp
from ..transforms._validation import as_float_array, per_slice, to_rows
from ._fenchel_young import FenchelYoungLoss
from ._scores import masked_rowdot
from ._softmax import SoftmaxLoss
from ._sparsemax import SparsemaxLoss


def tsallis_rows(P, alpha):
    r"""Tsallis entropy of each row of the non-negative 2-D array ``P``.

    Computed as :math:`-\sum_{p_j > 0} p_j\,\mathrm{expm1}((\alpha-1)\log p_j)
    / (\alpha(\alpha-1))`, which equals :math:`(1 - \sum_j p_j^\alpha) /
    (\alpha(\alpha - 1))` on the simplex and stays accurate as
    :math:`\alpha \to 1`; ``alpha == 1`` is :math:`-\sum_j p_j \log p_j`.
    Zero entries contribute 0.
    """
    logP = np.log(P, where=P > 0, out=np.zeros_like(P))
    if np.ndim(alpha):
        return _tsallis_per_row(P, logP, alpha)
    if alpha == 1.0:
        # 0.0 - x rather than -x: a one-hot row gives +0.0, not -0.0.
        return np.subtract(0.0, np.einsum("ij,ij->i", P, logP), dtype=P.dtype)
    logP *= alpha - 1.0
    np.expm1(logP, out=logP)
    return np.subtract(
        0.0, np.einsum("ij,ij->i", P, logP) / (alpha * (alpha - 1.0)), dtype=P.dtype
    )


def _tsallis_per_row(P, logP, alpha):
    """:func:`tsallis_rows` with one alpha per row (``alpha`` of shape (n,)):
    the same formula, row by row, its Shannon limit where ``alpha - 1`` is 0."""
    a1 = alpha - 1.0
    shannon = a1 == 0.0
    E = np.expm1(a1[:, None] * logP)
    E[shannon] = logP[shannon]
    den = np.where(shannon, 1.0, alpha * np.where(shannon, 1.0, a1))
    return np.subtract(0.0, np.einsum("ij,ij->i", P, E) / den, dtype=P.dtype)


def tsallis_entropy(p, alpha, axis=-1):
    r"""Compute the Tsallis alpha-entropy (the Shannon entropy at alpha = 1).

    .. math::

        H^T_\alpha(p) = \frac{1 - \sum_j p_j^\alpha}{\alpha(\alpha - 1)}
        \ (\alpha > 1), \qquad
        H^T_1(p) = -\sum_j p_j \log p_j,

    with :math:`0 \log 0 = 0`. :math:`H^T_2(p) = (1 - \|p\|^2)/2` is the Gini
    entropy behind sparsemax; :math:`\alpha`-entmax maximises
    :math:`p^\top z + H^T_\alpha(p)` over the simplex. The value is
    continuous in :math:`\alpha` (computed with ``expm1`` so that it stays
    accurate near 1). The formula is applied as is: entries are not
    renormalised.

    Parameters
    ----------
    p : array_like
        Distributions along ``axis``: finite, non-negative entries (rows
        should sum to 1). float32 stays float32, integers become float64.
    alpha : float
        Entropy index, ``alpha >= 1``.
    axis : int, default=-1
        Axis along which the distributions lie.

    Returns
    -------
    float or ndarray
        Shape of ``p`` without ``axis`` (a NumPy scalar for 1-D ``p``).

    Raises
    ------
    ValueError
        If ``alpha < 1``, or if ``p`` has a NaN, infinite or negative entry
        (the message names the first such slice).

    See Also
    --------
    EntmaxLoss : The Fenchel-Young loss built on it.

    References
    ----------
    .. [1] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.
    .. [2] B. Peters, V. Niculae and A. F. T. Martins, "Sparse
       Sequence-to-Sequence Models", ACL 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.losses import tsallis_entropy
    >>> float(tsallis_entropy([0.5, 0.5], alpha=1)), float(np.log(2))
    (0.693..., 0.693...)
    >>> float(tsallis_entropy([0.5, 0.5, 0.0], alpha=2))  # (1 - 1/2) / 2
    0.25
    >>> tsallis_entropy([[1.0, 0.0], [0.25, 0.75]], alpha=1.5)
    array([0. , 0.3006...])
    """
    alpha = check_alpha(alpha)
    p = as_float_array(p, "p")
    P, shape, _ = to_rows(p, axis, "p")
    bad = ~(np.isfinite(P) & (P >= 0)).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"row {i}" if len(shape) <= 2 else (
            f"position {tuple(int(j) for j in np.unravel_index(i, shape[:-1]))}"
        )
        raise ValueError(
            f"p must have finite, non-negative entries; see {where}."
        )
    H = tsallis_rows(P, alpha).reshape(shape[:-1])
    return H[()]


def _neg_tsallis(target, alpha, key=None):
    """The constant ``-H_alpha(q)`` of a target, cached per ``key`` (``alpha``
    by default; an array of alphas is not hashable: its loss is the key)."""
    if target.is_indices:
        return 0.0
    return target.cached(
        ("neg_tsallis", alpha if key is None else key),
        lambda: -tsallis_rows(target.proba, alpha),
    )


class EntmaxLoss(FenchelYoungLoss):
    r"""The alpha-entmax (Fenchel-Young) loss, for any alpha >= 1.

    With :math:`p = \operatorname{entmax}_\alpha(z)` and :math:`H^T_\alpha`
    the Tsallis entropy (:func:`tsallis_entropy`),

    .. math::

        L_\alpha(z; q) = (p - q)^\top z + H^T_\alpha(p) - H^T_\alpha(q),
        \qquad \nabla_z L_\alpha(z; q) = p - q.

    It is convex and smooth in :math:`z`, :math:`L \ge 0` with equality iff
    :math:`p = q`. Special cases are computed by their own exact algorithm:

    - ``alpha = 1``: :math:`p` is the softmax and :math:`L = \log\sum_j
      e^{z_j} - q^\top z - H(q) = \mathrm{KL}(q\,\|\,p)`, the softmax
      cross-entropy (:class:`SoftmaxLoss`) minus the Shannon entropy of
      :math:`q` (which is 0 for class indices);
    - ``alpha = 1.5``: :func:`~sksparsemax.transforms.entmax15` (exact,
      Newton steps on the threshold, checked against the closed form);
    - ``alpha = 2``: sparsemax; the loss equals :class:`SparsemaxLoss`;
    - any other alpha: :func:`~sksparsemax.transforms.entmax_bisect`
      (root search to float64 precision).

    The exact case is chosen once, when the loss is built: every method
    then delegates to it.

    See :class:`FenchelYoungLoss` for the methods, the target forms, the ``-inf``
    policy and the validation fast path.

    With an array ``alpha`` (one value per sample), row ``i`` of the scores
    gets the loss at ``alpha[i]`` (the mapping and the entropy of that
    alpha, through :func:`~sksparsemax.transforms.entmax_bisect`); the
    scores must then have one row per value.

    Parameters
    ----------
    alpha : float or array_like, default=1.5
        Entmax parameter, ``alpha >= 1``, or one per sample: an array of
        shape (n_samples,) or (n_samples, 1).

    Attributes
    ----------
    alpha : float or ndarray
        Entmax parameter(s).

    See Also
    --------
    entmax_loss : Functional form.
    tsallis_entropy : The regulariser.

    References
    ----------
    .. [1] B. Peters, V. Niculae and A. F. T. Martins, "Sparse
       Sequence-to-Sequence Models", ACL 2019.
    .. [2] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sksparsemax.losses import EntmaxLoss
    >>> loss = EntmaxLoss(alpha=1.5)
    >>> loss.predict_proba([[0.0, 0.0], [3.0, 0.0]])
    array([[0.5, 0.5],
           [1. , 0. ]])
    >>> loss.loss([[0.0, 0.0], [3.0, 0.0]], [0, 0])  # (1 - 2 * 0.5**1.5) / 0.75
    array([0.3905..., 0. ])
    """

    name = "entmax"

    def __init__(self, alpha=1.5):
        self.alpha = check_alpha_values(alpha)
        if isinstance(self.alpha, np.ndarray):
            self._case = _PerSampleTsallisLoss(self.alpha)
            return
        exact = _EXACT_CASES.get(self.alpha)
        self._case = exact() if exact is not None else _TsallisLoss(self.alpha)

    def omega(self, P):
        return self._case.omega(P)

    def jacobian_product(self, P, V):
        return self._case.jacobian_product(P, V)

    def _conjugate(self, Zs, need_value=True):
        return self._case._conjugate(Zs, need_value)

    def _conjugate_inplace(self, Zs):
        return self._case._conjugate_inplace(Zs)

    def _target_term(self, target):
        return self._case._target_term(target)

    def _scores_for(self, p):
        return self._case._scores_for(p)

    def _row_kernel_for(self, n_classes):
        return self._case._row_kernel_for(n_classes)

    @property
    def _kernel_compile_weight(self):
        return getattr(self._case, "_kernel_compile_weight", 1)

    def _repr_params(self):
        return {"alpha": self.alpha}


class _ShannonLoss(SoftmaxLoss):
    """``EntmaxLoss(1)``: the softmax cross-entropy minus ``H(q)``, i.e. KL(q || p)."""

    def _target_term(self, target):
        return _neg_tsallis(target, 1.0)


class _TsallisLoss(FenchelYoungLoss):
    """``EntmaxLoss(alpha)`` for ``alpha`` other than 1 and 2: Tsallis regulariser."""

    def __init__(self, alpha):
        self.alpha = alpha
        # 1.5-entmax has an exact closed-form algorithm; other alphas bisect.
        self._sort_based = alpha in _SORT_BASED

    def _mapping(self, Zs):
        if self._sort_based:
            return entmax15(Zs, axis=1)
        return entmax_bisect(Zs, self.alpha, axis=1)

    def omega(self, P):
        return -tsallis_rows(P, self.alpha)

    def jacobian_product(self, P, V):
        return entmax_jvp(P, V, self.alpha, axis=1)

    def _conjugate(self, Zs, need_value=True):
        P = self._mapping(Zs)
        phi = None
        if need_value:
            phi = masked_rowdot(P, Zs, P > 0) + tsallis_rows(P, self.alpha)
        return phi, P

    def _conjugate_inplace(self, Zs):
        # Same values as _conjugate, with the shifted scores' buffer reused as
        # scratch for the entropy: one (n, K) array (P) besides Zs.
        alpha = self.alpha
        P = self._mapping(Zs)
        pz = np.einsum("ij,ij->i", P, Zs)
        bad = ~np.isfinite(pz)
        if bad.any():  # -inf masks outside the support: 0 * -inf counts as 0
            pz[bad] = masked_rowdot(P[bad], Zs[bad], P[bad] > 0)
        # Tsallis entropy as in tsallis_rows: -sum_{p > 0} p expm1((a-1) log p)
        # / (a (a-1)); entries p = 0 give expm1(-inf) * 0 = 0, so no mask.
        with np.errstate(divide="ignore"):
            np.log(P, out=Zs)
        Zs *= alpha - 1.0
        np.expm1(Zs, out=Zs)
        H = np.subtract(
            0.0, np.einsum("ij,ij->i", P, Zs) / (alpha * (alpha - 1.0)), dtype=P.dtype
        )
        np.copyto(Zs, P)
        return pz + H

    def _target_term(self, target):
        return _neg_tsallis(target, self.alpha)

    #: Its kernel (Newton steps on the threshold, certified by counting,
    #: inlined in each driver) compiles for longer than the sparsemax
    #: loss's: it applies from 16
    #: times the size rules of the others (``losses/_compiled.py``), where
    #: fits last long enough to repay it, so that the main job's data and
    #: small first fits compile nothing.
    _kernel_compile_weight = 16

    def _row_kernel(self):
        # The exact closed-form 1.5-entmax has a compiled row kernel; the
        # bisection of other alphas keeps the NumPy path.
        if not self._sort_based:
            return None
        from ._entmax_numba import kernel

        return kernel, ()

    def _scores_for(self, p):
        # entmax_alpha(z)_i = [(alpha - 1) z_i - tau]_+^(1 / (alpha - 1)):
        # z = p^(alpha - 1) / (alpha - 1) gives p with tau = 0. A class of
        # probability 0 gets -1 / (alpha - 1), below the threshold rather
        # than on it.
        a1 = self.alpha - 1.0
        p = np.asarray(p, dtype=np.float64)
        return np.where(p > 0, p, 0.0) ** a1 / a1 - (p <= 0) / a1


class _PerSampleTsallisLoss(FenchelYoungLoss):
    """``EntmaxLoss(alpha)`` with one alpha per sample (row of the scores).

    The mapping is :func:`~sksparsemax.transforms.entmax_bisect` with the
    rows' alphas (each row exactly as a call at its own alpha), the
    regulariser the rows' Tsallis entropies; the scores must have one row
    per value of ``alpha``.
    """

    def __init__(self, alpha):
        self.alpha = alpha

    def _alphas(self, Z):
        return per_slice(self.alpha, np.shape(Z), 1)

    def _conjugate(self, Zs, need_value=True):
        alphas = self._alphas(Zs)
        P = entmax_bisect(Zs, alphas, axis=1)
        phi = None
        if need_value:
            phi = masked_rowdot(P, Zs, P > 0) + tsallis_rows(P, alphas)
        return phi, P

    def omega(self, P):
        return -tsallis_rows(np.asarray(P, dtype=np.float64), self._alphas(P))

    def jacobian_product(self, P, V):
        return entmax_jvp(P, V, self._alphas(P), axis=1)

    def _target_term(self, target):
        if target.is_indices:  # H_alpha(one-hot) = 0 for every alpha
            return 0.0
        return _neg_tsallis(target, self._alphas(target.proba), key=self)


#: The alphas whose loss is another shipped loss (exact closed forms and
#: compiled kernels): Shannon (softmax) and Gini (sparsemax).
_EXACT_CASES = {1.0: _ShannonLoss, 2.0: SparsemaxLoss}

#: The alphas with an exact closed-form mapping (entmax15).
_SORT_BASED = {1.5}


def entmax_loss(Z, y, alpha=1.5):
    r"""Per-sample alpha-entmax (Fenchel-Young) loss.

    .. math::

        L_\alpha(z; q) = (p - q)^\top z + H^T_\alpha(p) - H^T_\alpha(q),
        \qquad p = \operatorname{entmax}_\alpha(z),

    with gradient :math:`p - q`; ``alpha = 2`` is the sparsemax loss and
    ``alpha = 1`` the softmax cross-entropy minus the entropy of the target
    (see :class:`EntmaxLoss`).

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores (finite, or ``-inf`` to mask a class). float32 stays float32.
    y : array_like or Target
        Class indices (n_samples,) or target distributions (n_samples,
        n_classes) (see :func:`check_target`).
    alpha : float or array_like, default=1.5
        Entmax parameter, ``alpha >= 1``, or one per sample (shape
        (n_samples,) or (n_samples, 1)).

    Returns
    -------
    ndarray of shape (n_samples,)
        Non-negative losses; ``+inf`` where a class with positive target
        probability has score ``-inf``.

    See Also
    --------
    EntmaxLoss : The loss object.

    References
    ----------
    .. [1] B. Peters, V. Niculae and A. F. T. Martins, "Sparse
       Sequence-to-Sequence Models", ACL 2019.
    .. [2] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sksparsemax.losses import entmax_loss, sparsemax_loss
    >>> Z = [[1.0, 0.2, -1.0]]
    >>> entmax_loss(Z, [0], alpha=2.0), sparsemax_loss(Z, [0])
    (array([0.01]), array([0.01]))
    >>> entmax_loss(Z, [0], alpha=1.5)
    array([0.1013...])
    """
    return EntmaxLoss(alpha).loss(Z, y)
