"""Non-conformity scores whose sublevel sets are the supports of sparse mappings.

For scores ``z`` and a temperature ``T > 0``, label ``y`` is in the support
of ``alpha``-entmax(z / T) iff ``s_alpha(z, y) < T`` (MATH.md section 7), with

    s_alpha(z, y) = (alpha - 1) * || (z - z_y)_+ ||_{1 / (alpha - 1)},

which is ``sum_j (z_j - z_y)_+`` for sparsemax (``alpha = 2``). The score
depends on ``z`` only through the labels ranked above ``y``, so it is
non-decreasing along the sorted scores: every set ``{y : s(z, y) <= T}`` is a
top-k set. The functions here keep that structure *exactly* in floating
point (tied scores get bit-identical non-conformity scores, and the scores
never decrease along the ranking), because the prediction sets are read off
them and the calibration counts them.

One class per score (special values are classes, not ``alpha ==`` branches):
``_SparsemaxScore`` (O(n K log K), the cumulative-sum recurrence),
``_EntmaxScore`` (any ``alpha > 1``; O(n K^2) time, O(n K) memory: one pass
per rank, vectorised over the samples) and ``_SoftmaxScore`` (the LAC score
``1 - softmax(z)_y``, for comparison: its sets are not supports of a mapping).
"""

import numpy as np

from .._checks import check_alpha
from ..transforms import entmax_bisect, softmax, sparsemax

__all__ = ["nonconformity_scores"]

_TINY = np.finfo(np.float64).tiny
_CLIP = 1e300  # the most negative (scaled) score of a label of the set


def _checked_scores(Z, name="Z"):
    """``Z`` as a 2-D float64 array, refusing NaN, ``+inf`` and all-``-inf`` rows."""
    Z = np.asarray(Z)
    if Z.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_classes); got shape {Z.shape}.")
    if not (np.issubdtype(Z.dtype, np.floating) or np.issubdtype(Z.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers; got dtype {Z.dtype}.")
    # float64 throughout: float32 decision values are read exactly, and the
    # scores (sums of many gaps) keep 53 bits.
    Z = Z.astype(np.float64, copy=False)
    bad = np.isnan(Z) | (Z == np.inf)
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise ValueError(f"{name} contains NaN or +inf (first in row {row}).")
    if Z.shape[1] and (Z == -np.inf).all(axis=1).any():
        row = int(np.flatnonzero((Z == -np.inf).all(axis=1))[0])
        raise ValueError(f"{name} has a row whose scores are all -inf (row {row}).")
    return Z


def _sorted_desc(Z):
    """(order, sorted scores) along each row, largest first (a stable sort)."""
    order = np.argsort(-Z, axis=1, kind="stable")
    return order, np.take_along_axis(Z, order, axis=1)


def _unsort(S_sorted, order):
    S = np.empty_like(S_sorted)
    np.put_along_axis(S, order, S_sorted, axis=1)
    return S


def _first_of_tie(Zs):
    """For each sorted position, the first position holding the same value."""
    n, K = Zs.shape
    new = np.ones((n, K), dtype=bool)
    new[:, 1:] = Zs[:, 1:] != Zs[:, :-1]
    idx = np.where(new, np.arange(K), 0)
    return np.maximum.accumulate(idx, axis=1)


class _SparsemaxScore:
    """``s(z, y) = sum_j (z_j - z_y)_+``; the support of sparsemax(z / T) is ``s < T``."""

    name = "sparsemax"

    def scores(self, Z):
        # Along the sorted scores v_1 >= ... >= v_K, with gaps d_r = v_{r-1} - v_r,
        # s_r = sum_{j<r} (v_j - v_r) = s_{r-1} + (r - 1) d_r: a cumulative sum of
        # non-negative terms (no cancellation, non-decreasing in r, and a tie
        # has d_r = 0 exactly, hence the same score as the label above it).
        order, Zs = _sorted_desc(Z)
        K = Z.shape[1]
        S = np.zeros_like(Zs)
        # -inf - (-inf) = NaN is masked below; a margin beyond the float
        # range is +inf (a label no finite temperature admits).
        with np.errstate(invalid="ignore", over="ignore"):
            gaps = Zs[:, :-1] - Zs[:, 1:]
            S[:, 1:] = np.cumsum(np.arange(1, K) * gaps, axis=1)
        S[Zs == -np.inf] = np.inf
        return _unsort(S, order)

    temperature_family = True

    def mapping(self, Zc):
        return sparsemax(Zc)


class _EntmaxScore:
    """``s(z, y) = (alpha - 1) ||(z - z_y)_+||_{1/(alpha - 1)}`` for ``alpha > 1``."""

    name = "entmax"

    def __init__(self, alpha):
        self.alpha = alpha
        self.power = 1.0 / (alpha - 1.0)

    def scores(self, Z):
        order, Zs = _sorted_desc(Z)
        n, K = Zs.shape
        S = np.zeros_like(Zs)
        p = self.power
        for r in range(1, K):  # a loop over the ranks, vectorised over samples
            v = Zs[:, r : r + 1]
            with np.errstate(invalid="ignore", over="ignore"):
                D = Zs[:, :r] - v  # >= 0, the gaps to the labels ranked above
                top = D[:, :1]  # the largest gap scales the norm (no overflow)
                safe = np.where(top > 0, top, 1.0)
                norm = top[:, 0] * np.sum((D / safe) ** p, axis=1) ** (1.0 / p)
            S[:, r] = np.where(top[:, 0] > 0, norm, 0.0)
        S *= self.alpha - 1.0
        # Exactness: tied labels share the score of the first of their tie
        # (sums with extra zero terms may round differently), and rounding
        # cannot make the score decrease along the ranking.
        S = np.take_along_axis(S, _first_of_tie(Zs), axis=1)
        S = np.maximum.accumulate(S, axis=1)
        S[Zs == -np.inf] = np.inf
        return _unsort(S, order)

    temperature_family = True

    def mapping(self, Zc):
        return entmax_bisect(Zc, alpha=self.alpha)


class _SoftmaxScore:
    """The LAC score ``1 - softmax(z)_y`` (Sadinle et al., 2019)."""

    name = "softmax"

    def scores(self, Z):
        return 1.0 - softmax(Z)

    # Not a temperature family: the set's distribution is softmax(z)
    # restricted to the set and renormalised.
    temperature_family = False

    def mapping(self, Zc):
        return softmax(Zc)


def get_score(mapping, alpha):
    """The score object of ``mapping`` ("sparsemax", "entmax" or "softmax")."""
    if mapping == "sparsemax":
        return _SparsemaxScore()
    if mapping == "softmax":
        return _SoftmaxScore()
    if mapping == "entmax":
        alpha = check_alpha(alpha, name="alpha")
        if alpha <= 1.0:
            raise ValueError(
                f"alpha must be > 1 for mapping='entmax' (alpha=1 is softmax: use "
                f"mapping='softmax'); got alpha={alpha}."
            )
        return _EntmaxScore(alpha)
    raise ValueError(
        f"mapping must be 'sparsemax', 'entmax' or 'softmax'; got mapping={mapping!r}."
    )


def nonconformity_scores(Z, *, mapping="sparsemax", alpha=1.5):
    r"""Compute the non-conformity score of every label, for every sample.

    For sparsemax and :math:`\alpha`-entmax the score of label :math:`y` is
    the smallest temperature at which :math:`y` enters the support of the
    mapping of :math:`z / T`:

    .. math::

        s_\alpha(z, y) = (\alpha - 1)\,
        \bigl\| (z - z_y \mathbf{1})_+ \bigr\|_{1/(\alpha - 1)},
        \qquad y \in \operatorname{supp}\, \alpha\text{-entmax}(z / T)
        \iff s_\alpha(z, y) < T,

    so that :math:`s_2(z, y) = \sum_j (z_j - z_y)_+` (sparsemax). The
    ``"softmax"`` score is the LAC score :math:`1 - \operatorname{softmax}(z)_y`.
    Ties get identical scores and the scores never decrease along the ranking
    of :math:`z` (exactly, in floating point), so every sublevel set is a top-k
    set. ``-inf`` entries of ``Z`` (masked labels) get the score ``+inf``
    (``1`` for softmax).

    Parameters
    ----------
    Z : array_like of shape (n_samples, n_classes)
        Scores of a classifier (a decision function, or log-probabilities).
        Read as float64.
    mapping : {"sparsemax", "entmax", "softmax"}, default="sparsemax"
        The mapping whose supports are the score's sublevel sets
        (``"softmax"``: the LAC score).
    alpha : float, default=1.5
        The entmax parameter, ``alpha > 1``; used only with
        ``mapping="entmax"`` (``alpha=2`` is sparsemax).

    Returns
    -------
    S : ndarray of shape (n_samples, n_classes)
        The score of each label (float64, non-negative).

    Raises
    ------
    ValueError
        If ``Z`` is not 2-D, holds NaN or ``+inf``, or has a row of ``-inf``
        only; or if ``mapping`` or ``alpha`` is not valid.

    Examples
    --------
    >>> from sksparsemax.conformal import nonconformity_scores
    >>> nonconformity_scores([[2.0, 1.0, 0.5]])
    array([[0., 1., 2.]])
    >>> nonconformity_scores([[2.0, 1.0, 0.5]], mapping="entmax", alpha=1.5)
    array([[0.        , 0.5       , 0.79056942]])
    """
    scorer = get_score(mapping, alpha)
    return scorer.scores(_checked_scores(Z))


def set_distribution(scorer, Z, in_set, T):
    """The distribution of each row whose support is exactly ``in_set``.

    ``scorer.mapping`` of ``Z / T`` restricted to the set (the other labels
    masked with ``-inf``), ``T`` one temperature per row. For the sparse
    scores the limits ``T -> 0`` (the set is then the labels tied at the top)
    and ``T = inf`` are the uniform distribution over the set; the softmax
    score ignores ``T`` (softmax renormalised over the set). A label of the
    set on the boundary (``s = T``) has probability ``0+`` in the limit from
    above: it is returned as the smallest positive normal float, so that the
    support is the set, bit for bit. A row with an empty set (possible only
    for the softmax score) has no distribution on it: it gets the one-hot
    vector of its top score, so that every row sums to one.
    """
    n, K = Z.shape
    P = np.zeros((n, K))
    T = np.broadcast_to(np.asarray(T, dtype=np.float64), (n,))
    rows = in_set.any(axis=1)
    if scorer.temperature_family:
        uniform = rows & ((T == 0) | (T == np.inf))
        counts = np.maximum(in_set.sum(axis=1, keepdims=True), 1)
        P[uniform] = (in_set / counts)[uniform]
        rows &= ~uniform
    if rows.any():
        mask = in_set[rows]
        Zc = np.where(mask, Z[rows], -np.inf)
        # Centred on the row maximum (a small T cannot overflow z / T), and
        # clipped so that no label of the set becomes a -inf mask.
        Zc = Zc - Zc.max(axis=1, keepdims=True)
        if scorer.temperature_family:
            with np.errstate(over="ignore", under="ignore"):
                Zc = Zc / T[rows][:, None]
        Zc = np.where(mask, np.maximum(Zc, -_CLIP), -np.inf)
        P[rows] = scorer.mapping(Zc)
    P = np.where(in_set, np.maximum(P, _TINY), 0.0)
    empty = ~in_set.any(axis=1)
    if empty.any():
        P[empty, np.argmax(Z[empty], axis=1)] = 1.0
    return P
