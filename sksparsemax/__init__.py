"""sksparsemax: sparse probability mappings for scikit-learn users.

Softmax never returns an exact zero. Sparsemax (Martins & Astudillo, 2016),
top-k sparse-softmax (Sun et al., 2021) and alpha-entmax (Peters et al., 2019)
do. This package offers

- :mod:`sksparsemax.transforms`: the mappings themselves (NumPy) with
  Jacobian-vector products;
- :mod:`sksparsemax.losses`: their convex losses with gradients;
- scikit-learn estimators built on them;
- :mod:`sksparsemax.datasets` and :mod:`sksparsemax.continuous` (continuous
  entmax densities and attention).
"""

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
