"""Integrations with the PyData ecosystem: Dask.

Blockwise (out-of-core, parallel) application of the mappings and of fitted
estimators to Dask collections. Each block is computed by the in-memory NumPy
code, so the results equal those on NumPy arrays. dask is an optional
dependency (``pip install "sksparsemax[dask]"``), imported on first use; a
dask DataFrame also needs ``dask[dataframe]``.

=================================  ==========================================
:func:`dask_transform`             a mapping or JVP of
                                   :mod:`sksparsemax.transforms` on dask
                                   arrays (``map_blocks``)
:func:`dask_predict_proba`         ``predict_proba`` of a fitted estimator
:func:`dask_predict`               ``predict``
:func:`dask_decision_function`     ``decision_function``
=================================  ==========================================

Distributed model selection needs no wrapper: the estimators are picklable
scikit-learn estimators, so ``GridSearchCV`` and ``cross_validate`` run on a
``dask.distributed`` cluster through joblib's Dask backend
(``with joblib.parallel_backend("dask"): search.fit(X, y)``).
"""

from ._dask import (
    dask_decision_function,
    dask_predict,
    dask_predict_proba,
    dask_transform,
)

__all__ = [
    "dask_decision_function",
    "dask_predict",
    "dask_predict_proba",
    "dask_transform",
]
