"""Linear classifiers with sparse probabilities, fitted by L-BFGS.

Drop-in relatives of :class:`sklearn.linear_model.LogisticRegression`: the
same ``C``, ``tol``, ``max_iter``, ``class_weight``, ``warm_start`` and
``verbose`` parameters, the same objective scaling (weighted mean loss plus
``||W||^2 / (2 C sum(sample_weight))``), dense, float32 and scipy.sparse input,
but probabilities with exact zeros.

=================================  ==========================================
:class:`FenchelYoungClassifier`    any loss of :mod:`sksparsemax.losses`, or
                                   one of your own
:class:`SparsemaxClassifier`       sparsemax loss (Martins & Astudillo, 2016)
:class:`SparseSoftmaxClassifier`   top-k sparse-softmax loss (Sun et al., 2021)
:class:`EntmaxClassifier`          alpha-entmax loss (Peters et al., 2019)
:class:`SparsemaxMultiLabel`       multi-label classification and label
                                   proportions (any loss)
:class:`MarginalMultiLabel`        multi-label classification with per-label
                                   marginal probabilities (any loss)
=================================  ==========================================

Each multi-class estimator and :class:`SparsemaxMultiLabel` has a
cross-validated counterpart (``SparsemaxClassifierCV``, ...), the relative of
:class:`~sklearn.linear_model.LogisticRegressionCV`: ``C`` (and ``alpha``,
``k``, ``scale`` or ``threshold``) chosen on warm-started regularisation
paths, folds in parallel.
"""

from ._classifiers import (
    EntmaxClassifier,
    FenchelYoungClassifier,
    SparsemaxClassifier,
    SparseSoftmaxClassifier,
)
from ._cv_estimators import (
    EntmaxClassifierCV,
    FenchelYoungClassifierCV,
    SparsemaxClassifierCV,
    SparsemaxMultiLabelCV,
    SparseSoftmaxClassifierCV,
)
from ._marginal import MarginalMultiLabel
from ._multilabel import SparsemaxMultiLabel

__all__ = [
    "EntmaxClassifier",
    "EntmaxClassifierCV",
    "FenchelYoungClassifier",
    "FenchelYoungClassifierCV",
    "MarginalMultiLabel",
    "SparseSoftmaxClassifier",
    "SparseSoftmaxClassifierCV",
    "SparsemaxClassifier",
    "SparsemaxClassifierCV",
    "SparsemaxMultiLabel",
    "SparsemaxMultiLabelCV",
]
