"""sksparsemax: sparse probability mappings for scikit-learn users.

Softmax never returns an exact zero. Sparsemax (Martins & Astudillo, 2016),
top-k sparse-softmax (Sun et al., 2021) and alpha-entmax (Peters et al., 2019)
do. This package offers

- :mod:`sksparsemax.transforms`: the mappings themselves (NumPy) with
  Jacobian-vector products;
- :mod:`sksparsemax.losses`: their convex losses with gradients;
- the scikit-learn estimators :class:`FenchelYoungClassifier` (any loss,
  including one you write), :class:`SparsemaxClassifier`,
  :class:`SparseSoftmaxClassifier`, :class:`EntmaxClassifier`,
  :class:`SparsemaxMultiLabel` (label proportions) and
  :class:`MarginalMultiLabel` (per-label marginals), defined in
  :mod:`sksparsemax.linear_model`, and their cross-validated counterparts
  (:class:`SparsemaxClassifierCV`, ...: ``C`` chosen on warm-started
  regularisation paths);
- :mod:`sksparsemax.conformal`: prediction sets with guaranteed coverage,
  the supports of sparsemax and entmax at a calibrated temperature
  (:class:`~sksparsemax.conformal.SparseConformalClassifier`);
- :mod:`sksparsemax.datasets` and :mod:`sksparsemax.continuous` (continuous
  entmax densities and attention).

The estimators are loaded lazily, so ``import sksparsemax.transforms`` does
not import scikit-learn.
"""

import importlib

__version__ = "0.1.0.dev0"

_ESTIMATORS = (
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
)
_SUBMODULES = (
    "conformal",
    "continuous",
    "datasets",
    "integrations",
    "linear_model",
    "losses",
    "transforms",
)

__all__ = [*_ESTIMATORS, *_SUBMODULES, "__version__"]


def __getattr__(name):
    if name in _ESTIMATORS:
        return getattr(importlib.import_module(".linear_model", __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
