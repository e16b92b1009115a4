"""Convex losses of the sparse mappings, with gradients w.r.t. the scores.

Every loss compares a score matrix ``Z`` (n_samples, n_classes) with a
target given either as class indices ``y`` (n_samples,) or as a matrix ``Q``
(n_samples, n_classes) of target distributions (one-hot rows or label
proportions), and has the Fenchel-Young form

.. math:: L(z; q) = \\phi(z) - q^\\top z + c(q), \\qquad
          \\nabla_z L = \\hat p(z) - q,

with :math:`\\hat p` the mapping of :mod:`sksparsemax.transforms`. A new
loss is one subclass of :class:`FenchelYoungLoss` (its mapping and its
regulariser); the estimators take it as ``FenchelYoungClassifier(loss=...)``.
Computations use scores shifted by their row maximum; float32 stays
float32; ``-inf`` scores mask classes (``+inf`` loss if the target puts
probability on a masked class). This layer imports NumPy and
:mod:`sksparsemax.transforms` only.

==============================  ============================================
:func:`sparsemax_loss`,         sparsemax loss (Martins & Astudillo, 2016),
:class:`SparsemaxLoss`          multi-class and multi-label
:func:`sparse_softmax_loss`,    top-k sparse-softmax loss (Sun et al., 2021)
:class:`SparseSoftmaxLoss`
:func:`entmax_loss`,            alpha-entmax Fenchel-Young loss
:class:`EntmaxLoss`             (Peters et al., 2019; Blondel et al., 2020)
:func:`normmax_loss`,           alpha-normmax Fenchel-Young loss
:class:`NormmaxLoss`            (regulariser :math:`\\|p\\|_\\alpha - 1`)
:func:`budget_sparsemax_loss`,  budget sparsemax loss (capped simplex,
:class:`BudgetSparsemaxLoss`    rows sum to ``budget``)
:func:`softmax_loss`,           softmax cross-entropy
:class:`SoftmaxLoss`
:func:`tsallis_entropy`         Tsallis / Shannon entropy
:func:`check_target`,           validate a target once (solver fast path)
:class:`Target`
:class:`FenchelYoungLoss`       base class: a new loss is one subclass
:class:`MarginalLoss`,          per-label (multi-label) losses: each label
:func:`check_marginals`         against its absence, with any loss above
:func:`get_loss`                a loss from its name (or an instance)
==============================  ============================================

Loss objects offer ``loss(Z, target)`` (n_samples,), ``gradient(Z,
target)`` (n_samples, n_classes), ``loss_gradient(Z, target)`` (both, one
pass) and ``predict_proba(Z)``; the functions return per-sample losses.
"""

from ._budget import BudgetSparsemaxLoss, budget_sparsemax_loss
from ._entmax import EntmaxLoss, entmax_loss, tsallis_entropy
from ._normmax import NormmaxLoss, normmax_loss
from ._softmax import SoftmaxLoss, softmax_loss
from ._sparse_softmax import SparseSoftmaxLoss, sparse_softmax_loss
from ._sparsemax import SparsemaxLoss, sparsemax_loss
from ._fenchel_young import BaseLoss, FenchelYoungLoss  # noqa: F401 (BaseLoss: the former name)
from ._marginal import MarginalLoss, check_marginals
from ._registry import get_loss, loss_names
from ._targets import Target, check_target

__all__ = [
    "BudgetSparsemaxLoss",
    "EntmaxLoss",
    "FenchelYoungLoss",
    "MarginalLoss",
    "NormmaxLoss",
    "SoftmaxLoss",
    "SparseSoftmaxLoss",
    "SparsemaxLoss",
    "Target",
    "budget_sparsemax_loss",
    "check_marginals",
    "check_target",
    "entmax_loss",
    "get_loss",
    "loss_names",
    "normmax_loss",
    "softmax_loss",
    "sparse_softmax_loss",
    "sparsemax_loss",
    "tsallis_entropy",
]
