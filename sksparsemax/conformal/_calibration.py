"""The split-conformal calibration rule: one order statistic of the scores.

With calibration scores ``s_1 .. s_n`` and a target coverage ``1 - eps``,
``T = s_(k)``, the ``k``-th smallest, ``k = ceil((n + 1)(1 - eps))``, and
``T = inf`` when ``k > n``. For an exchangeable test point,
``P(s_test <= T) >= k / (n + 1) >= 1 - eps``: the rank of ``s_test`` among
the ``n + 1`` scores is uniform (ties broken at random), and
``s_test <= s_(k)`` whenever that rank is at most ``k``. Ties only add to the
left side, so the lower bound holds for any score distribution; the upper
bound, ``P = k / (n + 1) < 1 - eps + 1 / (n + 1)``, needs scores without ties
(see the user guide: the sparsemax score is exactly 0 for the top label).
"""

import math
import numbers
import warnings
from fractions import Fraction

import numpy as np

__all__ = ["conformal_quantile"]


def check_coverage(coverage, name="coverage"):
    """``coverage`` as a float in (0, 1), or a clear error naming it."""
    if isinstance(coverage, (bool, np.bool_)) or not isinstance(coverage, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1); got {coverage!r}.")
    value = float(coverage)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1; got {name}={value}.")
    return value


def quantile_rank(n, coverage):
    """``k = ceil((n + 1) * coverage)``, in exact arithmetic.

    ``coverage`` is read as the decimal it prints as (0.9 is 9/10, not the
    binary double just above it), so ``(n + 1) * coverage`` that is an
    integer in decimal is not pushed to the next one by rounding.
    """
    return math.ceil((n + 1) * Fraction(repr(float(coverage))))


def conformal_quantile(scores, coverage=0.9, *, warn=True):
    r"""Compute the split-conformal threshold of calibration scores.

    .. math::

        \hat T = s_{(k)}, \qquad k = \lceil (n + 1)(1 - \varepsilon) \rceil,

    the :math:`k`-th smallest of the :math:`n` scores, for the coverage
    :math:`1 - \varepsilon`; :math:`\hat T = +\infty` when :math:`k > n`
    (fewer than :math:`1/\varepsilon - 1` scores: every label is then in the
    set). For an exchangeable test point
    :math:`P(s_{\text{test}} \le \hat T) \ge k/(n + 1) \ge 1 - \varepsilon`,
    for any distribution of the scores; without ties it is exactly
    :math:`k/(n + 1) < 1 - \varepsilon + 1/(n + 1)`.

    Parameters
    ----------
    scores : array_like of shape (n,)
        The scores of the calibration points' true labels (``+inf`` allowed:
        a masked true label).
    coverage : float, default=0.9
        The target coverage :math:`1 - \varepsilon`, in (0, 1).
    warn : bool, default=True
        Whether to warn (``UserWarning``) when the threshold is infinite.

    Returns
    -------
    T : float
        The threshold (``inf`` if there are too few scores).

    Raises
    ------
    ValueError
        If ``scores`` is not 1-D or holds NaN, or ``coverage`` is not in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.conformal import conformal_quantile
    >>> conformal_quantile(np.arange(1.0, 10.0), coverage=0.8)  # k = ceil(10 * 0.8)
    8.0
    >>> conformal_quantile(np.arange(1.0, 10.0), coverage=0.95, warn=False)
    inf
    """
    coverage = check_coverage(coverage)
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"scores must be 1-D; got shape {s.shape}.")
    if np.isnan(s).any():
        raise ValueError("scores contains NaN.")
    n = s.shape[0]
    k = quantile_rank(n, coverage)
    if k > n:
        if warn:
            warnings.warn(
                f"{n} calibration scores are too few for coverage={coverage}: the "
                f"threshold needs the {k}-th smallest (at least {k - 1} scores), so it "
                "is infinite and every label is in every prediction set.",
                UserWarning,
                stacklevel=2,
            )
        return np.inf
    return float(np.partition(s, k - 1)[k - 1])


def class_quantiles(scores, y, n_classes, coverage):
    """Mondrian thresholds: ``conformal_quantile`` of each class's own scores.

    ``y`` holds class indices; a class with too few calibration points gets
    ``inf`` (one warning names them all).
    """
    T = np.empty(n_classes)
    few = []
    for c in range(n_classes):  # a loop over the classes, not the samples
        T[c] = conformal_quantile(scores[y == c], coverage, warn=False)
        if T[c] == np.inf:
            few.append(c)
    if few:
        warnings.warn(
            f"classes {few} (indices) have too few calibration points for "
            f"coverage={coverage}: their thresholds are infinite (these labels are "
            "in every prediction set).",
            UserWarning,
            stacklevel=3,
        )
    return T
