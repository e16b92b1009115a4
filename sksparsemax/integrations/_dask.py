"""Blockwise application of the mappings and of fitted estimators to Dask
collections.

The mappings act on each slice along one axis independently, and a fitted
linear model acts on each sample independently: both are embarrassingly
parallel once every slice (every sample) lies in a single block. The helpers
here rechunk accordingly and call :func:`dask.array.map_blocks` (or
``DataFrame.map_partitions``); each block is computed by the NumPy code of
:mod:`sksparsemax`, so the results are exactly those of NumPy. dask is an
optional dependency, imported on the first call.
"""

import functools
import warnings

import numpy as np

from ..transforms import (
    entmax15,
    entmax_bisect,
    entmax_jvp,
    softmax,
    softmax_jvp,
    sparse_softmax,
    sparse_softmax_jvp,
    sparsemax,
    sparsemax_jvp,
)
from ..transforms._validation import normalize_axis, result_float_dtype

# The mappings (and JVPs) of sksparsemax.transforms that keep the shape of
# their input, by name.
_MAPPINGS = {
    f.__name__: f
    for f in (
        softmax,
        sparsemax,
        sparse_softmax,
        entmax15,
        entmax_bisect,
        softmax_jvp,
        sparsemax_jvp,
        sparse_softmax_jvp,
        entmax_jvp,
    )
}


def _dask_array():
    try:
        import dask.array as da
    except ImportError:
        raise ImportError(
            "this function needs dask: install it with "
            '`pip install "sksparsemax[dask]"` (or `pip install "dask[array]"`).'
        ) from None
    return da


def _resolve_mapping(func):
    if isinstance(func, str):
        if func not in _MAPPINGS:
            raise ValueError(
                f"unknown mapping {func!r}; expected a callable or one of "
                f"{', '.join(map(repr, _MAPPINGS))}."
            )
        return _MAPPINGS[func]
    if not callable(func):
        raise TypeError(f"func must be a callable or a mapping name; got {func!r}.")
    return func


def dask_transform(func, *arrays, axis=-1, **kwargs):
    r"""Apply a mapping (or a Jacobian-vector product) to Dask arrays blockwise.

    The arrays are rechunked so that ``axis`` is a single chunk (every
    distribution lies in one block; the other axes keep their chunks) and
    ``func(*blocks, axis=axis, **kwargs)`` runs on each block with
    :func:`dask.array.map_blocks`. Since the mappings act on each slice along
    ``axis`` independently, the result equals ``func`` applied to the whole
    NumPy array, entry for entry. Nothing is computed until the result is.

    Parameters
    ----------
    func : callable or str
        A function of :mod:`sksparsemax.transforms` that returns an array of
        the shape of its input (``softmax``, ``sparsemax``,
        ``sparse_softmax``, ``entmax15``, ``entmax_bisect`` or a ``*_jvp``),
        or its name; any callable with an ``axis`` keyword and that property
        works.
    *arrays : dask.array.Array or array_like
        The array arguments of ``func``: the scores ``z`` for a mapping,
        ``p`` and ``v`` for a Jacobian-vector product. They must have the
        same shape; other array-likes are converted with
        :func:`dask.array.asarray`.
    axis : int, default=-1
        Axis along which the distributions lie.
    **kwargs : dict
        Further keyword arguments of ``func``, e.g. ``k=2`` for
        ``sparse_softmax`` or ``alpha=1.5`` for ``entmax_bisect``.

    Returns
    -------
    result : dask.array.Array
        Lazy array of the shape of the inputs; float32 if every input is
        float32, float64 otherwise (the dtype policy of the mappings).

    Raises
    ------
    ValueError
        If the arrays differ in shape, if the chunk sizes along ``axis`` are
        unknown, or if ``func`` is an unknown name. Invalid scores (NaN,
        ``+inf``, a slice of ``-inf`` only) raise the ``ValueError`` of the
        mapping when the result is computed.

    See Also
    --------
    dask_predict_proba : Blockwise predictions of a fitted estimator.

    Notes
    -----
    Memory: a block holds whole slices along ``axis``; if these are long,
    choose smaller chunks along the other axes (``z.rechunk({0: 1000})``).

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from sksparsemax.integrations import dask_transform
    >>> from sksparsemax.transforms import sparsemax
    >>> z = np.array([[1.0, 0.2, -1.0], [0.5, 0.5, 0.0], [3.0, 1.0, 2.5]])
    >>> dz = da.from_array(z, chunks=(2, 2))
    >>> p = dask_transform(sparsemax, dz)
    >>> p.compute()
    array([[0.9 , 0.1 , 0.  ],
           [0.5 , 0.5 , 0.  ],
           [0.75, 0.  , 0.25]])
    >>> bool((p.compute() == sparsemax(z)).all())
    True
    >>> dask_transform("sparse_softmax", dz, k=1).compute()[:, 0]
    array([1., 1., 1.])
    """
    da = _dask_array()
    func = _resolve_mapping(func)
    if not arrays:
        raise TypeError("dask_transform needs at least one array argument.")
    arrays = [a if isinstance(a, da.Array) else da.asarray(a) for a in arrays]
    shape = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != shape:
            raise ValueError(
                f"the arrays must have the same shape; got {shape} and {a.shape}."
            )
    ndim = len(shape)
    axis = normalize_axis(axis, ndim, "the arrays")
    if any(np.isnan(c) for a in arrays for c in a.chunks[axis]):
        raise ValueError(
            f"the chunk sizes along axis {axis} are unknown; compute them first "
            "(e.g. with `x.compute_chunk_sizes()`)."
        )
    first = arrays[0].rechunk({axis: -1})
    arrays = [first] + [a.rechunk(first.chunks) for a in arrays[1:]]
    dtype = result_float_dtype(*arrays)
    return da.map_blocks(
        functools.partial(func, axis=axis, **kwargs),
        *arrays,
        dtype=dtype,
        meta=np.empty((0,) * ndim, dtype=dtype),
    )


def _is_dask_frame(X):
    module = type(X).__module__
    return module.startswith("dask.dataframe") or module.startswith("dask_expr")


def _call(block, estimator, method):
    return getattr(estimator, method)(block)


def _to_pandas(out, index, columns, name):
    import pandas as pd

    if out.ndim == 1:
        return pd.Series(out, index=index, name=name)
    return pd.DataFrame(out, index=index, columns=columns)


def _call_frame(part, estimator, method, columns):
    out = getattr(estimator, method)(part)
    return _to_pandas(np.asarray(out), part.index, columns, method)


def _probe(estimator, method, X_one):
    """The method's output on one row: its dtype and trailing shape (also
    raises early if the estimator is not fitted or lacks the method)."""
    if not hasattr(estimator, method):
        raise AttributeError(f"{type(estimator).__name__} has no method {method!r}.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(getattr(estimator, method)(X_one))


def _blockwise(estimator, method, X):
    if _is_dask_frame(X):
        import pandas as pd

        columns = list(X.columns)
        probe = _probe(
            estimator, method, pd.DataFrame(np.zeros((1, len(columns))), columns=columns)
        )
        labels = getattr(estimator, "classes_", None)
        if probe.ndim == 2 and labels is not None and len(labels) == probe.shape[1]:
            out_columns = list(labels)
        else:
            out_columns = list(range(probe.shape[-1])) if probe.ndim == 2 else None
        meta = _to_pandas(probe[:0], X._meta.index[:0], out_columns, method)
        return X.map_partitions(
            _call_frame, estimator, method, out_columns, meta=meta
        )
    da = _dask_array()
    if not isinstance(X, da.Array):
        raise TypeError(
            "X must be a dask array or a dask DataFrame; got "
            f"{type(X).__name__} (call the estimator's method directly on "
            "in-memory data)."
        )
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
    X = X.rechunk({1: -1})
    probe = _probe(estimator, method, np.zeros((1, X.shape[1]), dtype=X.dtype))
    meta = np.empty((0,) * probe.ndim, dtype=probe.dtype)
    if probe.ndim == 1:
        return X.map_blocks(
            _call, estimator, method, drop_axis=1, dtype=probe.dtype, meta=meta
        )
    return X.map_blocks(
        _call,
        estimator,
        method,
        chunks=(X.chunks[0], (probe.shape[1],)),
        dtype=probe.dtype,
        meta=meta,
    )


def dask_predict_proba(estimator, X):
    """Compute class probabilities of a fitted estimator on Dask data, blockwise.

    ``estimator.predict_proba`` runs on each block of rows (each partition of
    a DataFrame), in parallel and out of core; the result equals
    ``estimator.predict_proba`` on the whole data in memory. The estimator is
    shipped with the task graph (to the workers of a distributed cluster).

    Parameters
    ----------
    estimator : estimator object
        A fitted estimator with a ``predict_proba`` method (any
        scikit-learn classifier, e.g. :class:`~sksparsemax.SparsemaxClassifier`).
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        The samples; a dask array is rechunked so that the features form a
        single chunk (the samples keep their chunks).

    Returns
    -------
    proba : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_classes)
        Lazy probabilities: a dask array for a dask array (row chunks of
        ``X``), a dask DataFrame with the index of ``X`` and the columns
        ``estimator.classes_`` for a dask DataFrame.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted (checked at once on one row of zeros).
    TypeError
        If ``X`` is not a dask collection.

    See Also
    --------
    dask_predict, dask_decision_function, dask_transform

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax import SparsemaxClassifier
    >>> from sksparsemax.integrations import dask_predict_proba
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), SparsemaxClassifier()).fit(X, y)
    >>> dX = da.from_array(X, chunks=(50, 4))
    >>> proba = dask_predict_proba(clf, dX)
    >>> proba
    dask.array<..., shape=(150, 3), dtype=float64, chunksize=(50, 3), ...>
    >>> bool((proba.compute() == clf.predict_proba(X)).all())
    True
    """
    return _blockwise(estimator, "predict_proba", X)


def dask_predict(estimator, X):
    """Predict with a fitted estimator on a Dask collection, blockwise.

    ``estimator.predict`` runs on each block of rows (each partition of a
    DataFrame); the result equals ``estimator.predict`` on the whole data in
    memory.

    Parameters
    ----------
    estimator : estimator object
        A fitted estimator with a ``predict`` method.
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        The samples; a dask array is rechunked so that the features form a
        single chunk (the samples keep their chunks).

    Returns
    -------
    y_pred : dask.array.Array, dask.dataframe.Series or dask.dataframe.DataFrame
        Lazy predictions, shape (n_samples,), or (n_samples, n_labels) for a
        multi-label model (:class:`~sksparsemax.SparsemaxMultiLabel`): a dask
        array for a dask array, a dask Series (or DataFrame) with the index
        of ``X`` for a dask DataFrame.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    TypeError
        If ``X`` is not a dask collection.

    See Also
    --------
    dask_predict_proba, dask_decision_function

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax import EntmaxClassifier
    >>> from sksparsemax.integrations import dask_predict
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), EntmaxClassifier(alpha=1.5))
    >>> clf = clf.fit(X, y)
    >>> y_pred = dask_predict(clf, da.from_array(X, chunks=40))
    >>> bool((y_pred.compute() == clf.predict(X)).all())
    True
    """
    return _blockwise(estimator, "predict", X)


def dask_decision_function(estimator, X):
    """Compute the decision function of a fitted estimator on Dask data, blockwise.

    ``estimator.decision_function`` runs on each block of rows (each
    partition of a DataFrame); the result equals it on the whole data in
    memory.

    Parameters
    ----------
    estimator : estimator object
        A fitted estimator with a ``decision_function`` method.
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        The samples; a dask array is rechunked so that the features form a
        single chunk (the samples keep their chunks).

    Returns
    -------
    scores : dask.array.Array, dask.dataframe.Series or dask.dataframe.DataFrame
        Lazy scores, shape (n_samples, n_classes) or (n_samples,) for a
        binary problem: a dask array for a dask array, a dask DataFrame (or
        Series) with the index of ``X`` for a dask DataFrame.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If the estimator is not fitted.
    TypeError
        If ``X`` is not a dask collection.

    See Also
    --------
    dask_predict_proba, dask_predict

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax import SparsemaxClassifier
    >>> from sksparsemax.integrations import dask_decision_function
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), SparsemaxClassifier()).fit(X, y)
    >>> scores = dask_decision_function(clf, da.from_array(X, chunks=40))
    >>> scores.shape
    (150, 3)
    >>> bool((scores.compute() == clf.decision_function(X)).all())
    True
    """
    return _blockwise(estimator, "decision_function", X)
