"""Conformal prediction sets that are the supports of sparse mappings.

Sparsemax and entmax return *sets*: the labels with nonzero probability.
Calibrating the temperature of the mapping on held-out data is split
conformal prediction (Campos, Cálem, Sklaviadis, Figueiredo & Martins,
"Sparse Activations as Conformal Predictors", AISTATS 2025): the support of
:math:`\\alpha\\text{-entmax}(z(x) / \\hat T)` contains the true label with
probability at least the chosen coverage, for any model and any
(exchangeable) data.

=====================================  =======================================
:class:`SparseConformalClassifier`     meta-estimator: calibrates
                                       :math:`\\hat T` around any classifier
:func:`nonconformity_scores`           the sparsemax, entmax and softmax (LAC)
                                       scores of every label
:func:`conformal_quantile`             the calibration rule (an order
                                       statistic)
=====================================  =======================================
"""

from ._calibration import conformal_quantile
from ._classifier import SparseConformalClassifier
from ._scores import nonconformity_scores

__all__ = ["SparseConformalClassifier", "conformal_quantile", "nonconformity_scores"]
