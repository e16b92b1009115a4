"""Per-label marginal losses: each label against its absence (binary relevance)."""

import numpy as np

from ._registry import get_loss
from ._scores import check_out, check_scores
from ._targets import Target, check_target


def check_marginals(Y, n_samples, n_labels):
    """Validate per-label targets once: a matrix of values in ``[0, 1]``.

    Parameters
    ----------
    Y : array_like of shape (n_samples, n_labels)
        A binary indicator matrix, or the marginal probability of each label
        (entries in ``[0, 1]``; rows need not sum to anything).
    n_samples : int
        Number of samples (rows of the score matrix).
    n_labels : int
        Number of labels (columns of the score matrix).

    Returns
    -------
    Target
        ``Target(n_samples, n_labels, proba=Y)`` (a float64 C-ordered copy);
        :class:`MarginalLoss` accepts it without validating again.

    Raises
    ------
    ValueError
        If ``Y`` does not have shape (n_samples, n_labels), or has a
        non-finite entry or one outside ``[0, 1]`` (the message names it).

    Examples
    --------
    >>> from sksparsemax.losses import check_marginals
    >>> check_marginals([[1, 0], [0.25, 1]], 2, 2).proba
    array([[1.  , 0.  ],
           [0.25, 1.  ]])
    """
    if isinstance(Y, Target):
        if (Y.n_samples, Y.n_classes) != (n_samples, n_labels) or Y.proba is None:
            raise ValueError(
                f"the target is a Target of {Y.n_samples} x {Y.n_classes} "
                f"{'indices' if Y.proba is None else 'marginals'}; the scores "
                f"need marginals of shape ({n_samples}, {n_labels})."
            )
        return Y
    try:
        Q = np.array(Y, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise ValueError(
            "the per-label targets must be numbers in [0, 1]; got values that "
            "are not numbers."
        ) from None
    if Q.shape != (n_samples, n_labels):
        raise ValueError(
            f"the per-label targets must have shape ({n_samples}, {n_labels}) "
            f"(one value in [0, 1] per sample and label); got shape {Q.shape}."
        )
    bad = ~(np.isfinite(Q) & (Q >= 0) & (Q <= 1))
    if bad.any():
        i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), Q.shape)
        raise ValueError(
            "the per-label targets must be numbers in [0, 1] (a label's "
            f"marginal probability); Y[{i}, {j}] = {float(Q[i, j])!r}."
        )
    Q.flags.writeable = False
    return Target(n_samples, n_labels, proba=Q)


class MarginalLoss:
    r"""Per-label loss: each label's score against the score 0 of its absence.

    For scores :math:`z \in \mathbb{R}^L` (one per label) and per-label
    targets :math:`y \in [0, 1]^L` (an indicator row, or marginal
    probabilities), with a two-class Fenchel-Young loss :math:`\ell` (the
    ``base``),

    .. math::

        L(z; y) = \sum_{j=1}^{L} \ell\big((z_j, 0);\, (y_j, 1 - y_j)\big),
        \qquad \hat p_j(z) = \hat p_\ell\big((z_j, 0)\big)_1,
        \qquad \nabla_z L = \hat p(z) - y.

    :math:`\hat p(z) \in [0, 1]^L` are the labels' marginal probabilities:
    a Fenchel-Young loss on the unit cube (Blondel, Martins and Niculae,
    2020), the product of one two-class simplex per label. With
    ``"sparsemax"``, :math:`\hat p_j = \operatorname{clip}((z_j + 1)/2, 0,
    1)` has exact 0s and 1s and :math:`\ell` is the modified Huber loss of
    :math:`y_j` against :math:`z_j`; with ``"softmax"``, :math:`\hat p_j` is
    the logistic sigmoid and :math:`L` the one-vs-rest logistic loss. A
    label is likelier present than absent iff :math:`z_j > 0`.

    Unlike a :class:`FenchelYoungLoss`, the loss is not invariant to adding
    a constant to a row of scores (``shift_invariant`` is False): each score
    is compared with the fixed score 0.

    Parameters
    ----------
    base : str or FenchelYoungLoss, default="sparsemax"
        The two-class loss :math:`\ell` (a name of
        :func:`~sksparsemax.losses.loss_names` or an instance).

    Attributes
    ----------
    base : FenchelYoungLoss
        The two-class loss.

    See Also
    --------
    check_marginals : Validate the targets once.
    sksparsemax.linear_model.MarginalMultiLabel : The estimator built on it.

    References
    ----------
    .. [1] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sksparsemax.losses import MarginalLoss
    >>> loss = MarginalLoss("sparsemax")
    >>> loss.predict_proba([[-3.0, 0.0, 0.5, 2.0]])
    array([[0.  , 0.5 , 0.75, 1.  ]])
    >>> loss.loss([[-3.0, 0.0, 0.5, 2.0]], [[0, 1, 1, 1]])  # (1/4 + 1/16)
    array([0.3125])
    """

    shift_invariant = False

    def __init__(self, base="sparsemax"):
        self.base = get_loss(base)
        # A label's probability and its absence's must sum to one (a loss
        # whose rows sum to a budget b > 1 has no two-class meaning).
        pair = self.base.predict_proba(np.array([[0.25, 0.0]]))
        if not abs(float(pair.sum()) - 1.0) <= 1e-9:
            raise ValueError(
                f"MarginalLoss needs a loss that maps two scores to two "
                f"probabilities summing to one; {self.base!r} maps (0.25, 0) "
                f"to {pair.ravel().tolist()}."
            )

    # -- the two-class rows -------------------------------------------------
    def _closed_form(self):
        """The base's entrywise closed form of the rows ``(z, 0)``, or None.

        A shipped loss may define ``_versus_zero(Z, Y=None)`` -> ``(P, L)``
        (the first probability of each row ``(z, 0)`` and, given ``Y``, the
        loss against ``(y, 1 - y)``): the same values as the generic path
        with one pass over ``Z`` instead of an (n * L, 2) problem. Only a
        method of the base's own class counts: a subclass that changes the
        mapping or the regulariser must not inherit it.
        """
        return type(self.base).__dict__.get("_versus_zero")

    @staticmethod
    def _pairs(Z):
        """Rows ``(z_ij, 0)`` of shape (n * L, 2), in the dtype of ``Z``."""
        S = np.zeros(Z.shape + (2,), dtype=Z.dtype)
        S[..., 0] = Z
        return S.reshape(-1, 2)

    def _binary_target(self, target):
        """The two-class target ``(y_ij, 1 - y_ij)`` of every pair, built once."""
        def build():
            Y = target.proba
            return check_target(np.stack([Y, 1.0 - Y], axis=-1).reshape(-1, 2),
                                Y.size, 2)

        return target.cached("pairs", build)

    @staticmethod
    def _scores(Z):
        Z = check_scores(Z)
        bad = np.isnan(Z) | (Z == np.inf)
        if bad.any():
            i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), Z.shape)
            raise ValueError(
                f"Z must be finite or -inf (a label that is surely absent); "
                f"Z[{i}, {j}] = {float(Z[i, j])!r}."
            )
        return Z

    # -- the loss interface of the estimators -------------------------------
    def predict_proba(self, Z):
        """Marginal probability of each label, in ``[0, 1]``.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_labels)
            Scores (finite, or ``-inf`` for a label that is surely absent).

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            :math:`\\hat p(z)`, float32 if ``Z`` is float32.
        """
        Z = self._scores(Z)
        closed = self._closed_form()
        if closed is not None:
            return closed(self.base, Z)[0].astype(Z.dtype, copy=False)
        P = self.base.predict_proba(self._pairs(Z))[:, 0]
        return np.ascontiguousarray(P.reshape(Z.shape), dtype=Z.dtype)

    def loss_gradient(self, Z, target, *, check=True, out=None):
        """Per-sample losses and their gradients ``predict_proba(Z) - Y``.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_labels)
            Scores.
        target : array_like or Target
            Per-label targets in ``[0, 1]`` (see :func:`check_marginals`).
        check : bool, default=True
            Unused: a raw target is always validated (a :class:`Target` from
            :func:`check_marginals` never again).
        out : ndarray, default=None
            Where to write the gradient (may be ``Z`` itself), as for
            :meth:`FenchelYoungLoss.loss_gradient`.

        Returns
        -------
        losses : ndarray of shape (n_samples,)
            The sum over labels of each sample's two-class losses.
        gradient : ndarray of shape (n_samples, n_labels)
            ``predict_proba(Z) - Y`` (``out`` itself when given).
        """
        Z = self._scores(Z)
        target = check_marginals(target, *Z.shape)
        if out is not None:
            check_out(out, Z)
        closed = self._closed_form()
        if closed is not None:
            P, L = closed(self.base, Z, target.proba)
            losses = L.sum(axis=1).astype(Z.dtype, copy=False)
            grad = (P - target.proba).astype(Z.dtype, copy=False)
        else:
            losses, G = self.base.loss_gradient(self._pairs(Z), self._binary_target(target))
            losses = losses.reshape(Z.shape).sum(axis=1)
            grad = G[:, 0].reshape(Z.shape)
        if out is None:
            return losses, np.ascontiguousarray(grad)
        out[...] = grad
        return losses, out

    def loss(self, Z, target, *, check=True):
        """Per-sample losses, summed over the labels (see :meth:`loss_gradient`).

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_labels)
            Scores.
        target : array_like or Target
            Per-label targets in ``[0, 1]``.
        check : bool, default=True
            Unused (see :meth:`loss_gradient`).

        Returns
        -------
        ndarray of shape (n_samples,)
            The sum over labels of each sample's two-class losses.
        """
        Z = self._scores(Z)
        target = check_marginals(target, *Z.shape)
        closed = self._closed_form()
        if closed is not None:
            return closed(self.base, Z, target.proba)[1].sum(axis=1).astype(Z.dtype, copy=False)
        values = self.base.loss(self._pairs(Z), self._binary_target(target))
        return values.reshape(Z.shape).sum(axis=1)

    def gradient(self, Z, target, *, check=True):
        """Gradient of each sample's loss, ``predict_proba(Z) - Y``.

        Parameters
        ----------
        Z : array_like of shape (n_samples, n_labels)
            Scores.
        target : array_like or Target
            Per-label targets in ``[0, 1]``.
        check : bool, default=True
            Unused (see :meth:`loss_gradient`).

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            Row ``i`` is the gradient of ``loss_i`` with respect to ``Z[i]``.
        """
        return self.loss_gradient(Z, target)[1]

    def hessian_product(self, P, V):
        """Hessian of each sample's loss times ``V``, from the marginals ``P``.

        The Hessian is diagonal: label ``j``'s entry is the two-class
        mapping's Jacobian at ``(p_j, 1 - p_j)`` applied to ``(v_j, 0)``,
        first entry (for sparsemax, ``v_j / 2`` where ``0 < p_j < 1``).

        Parameters
        ----------
        P : array_like of shape (n_samples, n_labels)
            Marginals, ``predict_proba(Z)``.
        V : array_like of shape (n_samples, n_labels)
            Directions.

        Returns
        -------
        ndarray of shape (n_samples, n_labels)
            The Hessian (diagonal) of each sample's loss times its row of ``V``.
        """
        P = np.asarray(P)
        V = np.asarray(V)
        Pb = np.stack([P, 1 - P], axis=-1).reshape(-1, 2)
        R = self.base.hessian_product(Pb, self._pairs(V))[:, 0]
        return R.reshape(P.shape)

    def is_smooth(self, n_labels):
        """Whether the loss is differentiable everywhere (that of the two-class loss).

        Parameters
        ----------
        n_labels : int
            Number of labels (unused: the labels are separate two-class problems).

        Returns
        -------
        bool
            ``base.is_smooth(2)``.
        """
        return self.base.is_smooth(2)

    def compiled(self, n_labels):
        """No compiled kernel: the two-class loss runs its own.

        Parameters
        ----------
        n_labels : int
            Number of labels (unused).

        Returns
        -------
        None
            The estimators then call :meth:`loss_gradient`.
        """
        return None

    def _scores_for(self, p):
        """Scores whose marginals are ``p`` (L,): the two-class inverse."""
        p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
        return np.array([np.subtract(*self.base._scores_for(np.array([q, 1 - q])))
                         for q in p])

    def _warmup_loss(self):
        """The smooth loss a solver warms up on for a two-class loss with kinks."""
        return MarginalLoss("softmax")

    def __repr__(self):
        return f"MarginalLoss({self.base!r})"

