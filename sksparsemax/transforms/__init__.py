"""Sparse probability mappings and their Jacobian-vector products (NumPy).

Every mapping takes an array-like of any shape and works along ``axis``
(default -1); float32 stays float32, float64 stays float64 and integers
become float64. ``-inf`` scores are masks (probability exactly 0). A slice
that contains NaN or ``+inf``, or whose entries are all ``-inf``, raises a
``ValueError`` naming the first such slice. No Python loop runs over slices
and no K×K matrix is ever formed. A NumPy masked array is read with its
masked entries as ``-inf`` (masked classes get probability exactly 0); in
the JVPs masked entries count as 0. scipy.sparse inputs raise a
``TypeError``: densify them with ``.toarray()``.

=============================  ============================================
:func:`softmax`                dense reference
:func:`sparsemax`              Euclidean projection onto the simplex
:func:`sparsemax_threshold`    its threshold and support size
:func:`sparse_softmax`         softmax over the k largest scores
:func:`entmax15`               1.5-entmax, exact (sort-based)
:func:`entmax_bisect`          alpha-entmax for any alpha >= 1
:func:`normmax`                alpha-normmax (alpha-norm regulariser)
:func:`budget_sparsemax`       projection onto the capped simplex (sum b)
:func:`softmax_jvp`,           Jacobian-vector products, from the outputs
:func:`sparsemax_jvp`,         (the Jacobians are symmetric: JVP = VJP)
:func:`sparse_softmax_jvp`,
:func:`entmax_jvp`,
:func:`normmax_jvp`,
:func:`budget_sparsemax_jvp`
=============================  ============================================

Backends
--------
Each mapping has a vectorised NumPy implementation and, when the optional
dependency numba is installed (``pip install "sksparsemax[fast]"``), compiled
kernels that are several times faster and give the same results up to
rounding. The default ``"auto"`` uses numba when it is importable; force one
with :func:`set_backend` (``"auto"``, ``"numpy"`` or ``"numba"``), the
environment variable ``SKSPARSEMAX_BACKEND``, or temporarily with the context
manager :func:`backend`; :func:`get_backend` tells which one is in effect.
The Jacobian-vector products and :func:`softmax` are NumPy in both.

Array API
---------
Every mapping and Jacobian-vector product also accepts an array of another
library that follows the Python Array API standard (PyTorch tensors, CuPy,
JAX, array-api-strict...) and returns an array of the same library on the
same device, with the same dtype policy, ``-inf`` masks and errors. This
needs the optional dependency array-api-compat (``pip install
"sksparsemax[array]"``), imported only when such an array arrives; NumPy
input keeps the NumPy path above. The error checks need one device-to-host
synchronisation per call, so these functions run eagerly (not under
``jax.jit``). Dask arrays are not taken directly: see
:func:`sksparsemax.integrations.dask_transform`.
"""

from ._backend import backend, get_backend, set_backend
from ._budget import budget_sparsemax, budget_sparsemax_jvp
from ._entmax import entmax15, entmax_bisect, entmax_jvp
from ._normmax import normmax, normmax_jvp
from ._softmax import softmax, softmax_jvp
from ._sparse_softmax import sparse_softmax, sparse_softmax_jvp
from ._sparsemax import sparsemax, sparsemax_jvp, sparsemax_threshold

__all__ = [
    "backend",
    "budget_sparsemax",
    "budget_sparsemax_jvp",
    "entmax15",
    "entmax_bisect",
    "entmax_jvp",
    "get_backend",
    "normmax",
    "normmax_jvp",
    "set_backend",
    "softmax",
    "softmax_jvp",
    "sparse_softmax",
    "sparse_softmax_jvp",
    "sparsemax",
    "sparsemax_jvp",
    "sparsemax_threshold",
]
