r"""Fitting on Dask collections: the objective as a map over row blocks and a sum.

The objective of a linear model is a weighted sum over the samples, so it
splits over row blocks :math:`B_1, \dots, B_m` of ``X`` exactly:

.. math::

    f(w) = \frac{1}{S} \sum_{b} S_b\, f_b(w) + \frac{\lambda}{2}\|W\|^2,
    \qquad S_b = \sum_{i \in B_b} s_i, \quad S = \sum_b S_b,

with :math:`f_b` the weighted mean loss of block :math:`b` (no penalty), and
likewise its gradient and Hessian-vector products. Each :math:`f_b` and its
gradient is computed on the worker that holds the block by the in-memory
:meth:`LinearModelLoss.loss_gradient <._linear_loss.LinearModelLoss.loss_gradient>`
(``l2_reg_strength=0``), scaled back by :math:`S_b`; the blocks' results are
summed by a tree reduction and only the (K, d) sum reaches the client, which
runs the solver (:mod:`._fit`) as for in-memory data. So every block is
computed by the same NumPy (or numba) code, and a Dask fit equals the
in-memory fit to rounding.

The data are validated, encoded (labels, class and sample weights, the
target) and persisted on the workers once, as one ``(X_b, target_b, s_b)``
tuple per row block (:class:`BlockedData`); label encoding (the unique
labels), the class counts of ``class_weight="balanced"``, the mean target of
the intercept-only start and the moments of the whitening
(:mod:`._preconditioner`) are blockwise reductions too. ``X`` is never
gathered on the client.

dask is imported here only, and only when a fit gets a Dask collection
(:func:`is_dask_collection` needs no dask import).
"""

import functools
import operator

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

from ._linear_loss import LinearModelLoss
from ._preconditioner import GramMoments, _weighted_gram, _weighted_moments, preconditioner_path

#: A tree reduction sums this many partial results per task.
_FAN_IN = 8


def is_dask_collection(obj):
    """Whether ``obj`` is a Dask array, DataFrame or Series (without importing dask)."""
    return hasattr(obj, "__dask_graph__") and type(obj).__module__.split(".")[0] in (
        "dask", "dask_expr",
    )


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is installed with the extra
        raise ImportError(
            "fitting on Dask collections needs dask: install it with "
            '`pip install "sksparsemax[dask]"`.'
        ) from None
    return dask, da


def _as_dask_array(obj, da):
    """A Dask DataFrame/Series as a dask array with known chunks; arrays as they are."""
    if hasattr(obj, "to_dask_array"):
        return obj.to_dask_array(lengths=True)
    if isinstance(obj, da.Array):
        if any(np.isnan(c) for c in obj.chunks[0]):
            obj = obj.compute_chunk_sizes()
        return obj
    return None


def _tree_sum(parts, delayed):
    """The sum of delayed partial results (numbers, arrays or tuples of them), as a tree."""
    if not parts:
        raise ValueError("the Dask collection has no row block.")
    while len(parts) > 1:
        parts = [
            delayed(_add)(*parts[i : i + _FAN_IN]) for i in range(0, len(parts), _FAN_IN)
        ]
    return parts[0]


def _add(*parts):
    if isinstance(parts[0], tuple):
        return tuple(functools.reduce(operator.add, items) for items in zip(*parts))
    return functools.reduce(operator.add, parts)


# -- worker side: one row block -----------------------------------------------
def _check_block_weight(sw, n, dtype):
    if sw is None:
        return None
    if np.isscalar(sw):
        sw = np.full(n, sw, dtype=dtype)
    sw = np.asarray(sw, dtype=dtype).reshape(-1)
    if sw.shape[0] != n:
        raise ValueError(f"sample_weight has {sw.shape[0]} entries in a block of {n} rows.")
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight must be finite.")
    if np.any(sw < 0):
        raise ValueError("Negative values in data passed to sample_weight.")
    return sw


def _raw_block(X, y, sw, dtype):
    """A row block with ``X`` and the weights validated: ``(X_b, y_b, s_b)``."""
    X = check_array(X, accept_sparse="csr", dtype=dtype, ensure_min_samples=0)
    if sp.issparse(X):
        X = sp.csr_matrix(X)  # the layout of the compiled kernels
    return X, np.asarray(y), _check_block_weight(sw, X.shape[0], dtype)


def _block_labels(raw):
    return np.unique(raw[1])


def _union(*parts):
    return np.unique(np.concatenate(parts))


def _make_block(raw, encode, check_target, n_classes, dtype, class_weights):
    """The encoded block ``(X_b, target_b, s_b, n_dropped)`` of a raw block."""
    X, y, sw = raw
    target, keep = encode(y)
    if class_weights is not None:
        cw = class_weights.astype(dtype, copy=False)[target]
        sw = cw if sw is None else sw * cw
    n_dropped = 0
    if keep is not None:
        n_dropped = int(X.shape[0] - np.count_nonzero(keep))
        X, target = X[keep], target[keep]
        sw = None if sw is None else sw[keep]
    return X, check_target(target, X.shape[0], n_classes), sw, n_dropped


def _label_counts(raw, encode, n_classes):
    target, _ = encode(raw[1])
    return np.bincount(target, minlength=n_classes).astype(np.float64)


def _block_weight_sum(block):
    X, _, sw, _ = block
    return float(X.shape[0]) if sw is None else float(np.sum(sw, dtype=np.float64))


def _block_stats(block, n_classes):
    """``([rows, weight sum, nnz, sparse, rows dropped], weighted target sum (K,))``."""
    X, target, sw, n_dropped = block
    if X.shape[0] == 0:
        total = np.zeros(n_classes)
    elif target.is_indices:
        weights = None if sw is None else sw.astype(np.float64)
        total = np.bincount(target.indices, weights=weights, minlength=n_classes)
    else:
        P = target.proba
        total = P.sum(axis=0) if sw is None else sw.astype(np.float64) @ P
    sparse = sp.issparse(X)
    stats = [X.shape[0], _block_weight_sum(block), X.nnz if sparse else 0, sparse, n_dropped]
    return np.array(stats, dtype=np.float64), np.asarray(total, dtype=np.float64)


def _block_moments(block, diagonal):
    """Unnormalised weighted ``(X^T S X or s^T X**2, s^T X, sum(s))`` of a block.

    By the in-memory functions (which go through a dense block in slices,
    never copying it whole), times the block's weight sum.
    """
    X, _, sw, _ = block
    total = _block_weight_sum(block)
    d = X.shape[1]
    if total == 0:
        return np.zeros(d if diagonal else (d, d)), np.zeros(d), 0.0
    second, mean = (_weighted_moments if diagonal else _weighted_gram)(X, sw)
    return second * total, mean * total, total


def _block_call(block, base_loss, fit_intercept, method, coef, n_classes):
    """``S_b`` times a :class:`LinearModelLoss` method's result on a block (no penalty).

    ``method`` is ``"loss"``, ``"loss_gradient"`` or
    ``"loss_gradient_hessian_product"`` (the Hessian product function is then
    kept, scaled, with the persisted result).
    """
    X, target, sw, _ = block
    s = _block_weight_sum(block)
    n_coef = coef.shape[0]
    if s == 0:  # no weight in this block: no contribution
        zero = np.zeros(n_coef)
        return {"loss": 0.0, "loss_gradient": (0.0, zero),
                "loss_gradient_hessian_product": (0.0, zero, lambda v: zero)}[method]
    loss = LinearModelLoss(base_loss, fit_intercept)
    result = getattr(loss, method)(coef, X, target, n_classes, sw, 0.0)
    if method == "loss":
        return result * s
    if method == "loss_gradient":
        return result[0] * s, result[1] * s
    f, g, hessp = result
    return f * s, g * s, lambda v: hessp(v) * s


def _value_gradient(result):
    return result[0], result[1]


def _apply(result, v):
    return result[2](v)


# -- client side ---------------------------------------------------------------
class BlockedData:
    """Validated training data persisted on the workers, one tuple per row block.

    Stands for ``X`` in the solver's calls (:mod:`._fit`): it has the
    ``shape`` and ``dtype`` of ``X``; the targets and sample weights live in
    the blocks, so the solver passes None for them.

    Attributes
    ----------
    blocks : list of dask.delayed.Delayed
        Persisted ``(X_b, target_b, s_b, n_dropped)`` per row block.
    shape : tuple of int
        ``(rows fitted, n_features)``.
    dtype : numpy.dtype
        The dtype of the blocks of ``X``.
    nnz : int or None
        Stored entries, for sparse blocks; None for dense ones.
    weight_sum : float
        The total sample weight ``S`` of the fitted rows.
    """

    is_blocked = True

    def __init__(self, blocks, shape, dtype, nnz, weight_sum):
        self.blocks, self.shape, self.dtype, self.nnz = blocks, shape, dtype, nnz
        self.weight_sum = weight_sum

    def _compute(self, parts):
        dask, _ = _dask()
        return dask.compute(_tree_sum(parts, dask.delayed))[0]

    def moments(self, fit_intercept, diagonal):
        """The :class:`GramMoments` of the blocks, summed blockwise."""
        dask, _ = _dask()
        second, mean, total = self._compute(
            [dask.delayed(_block_moments)(b, diagonal) for b in self.blocks]
        )
        return GramMoments.from_sums(second, mean, total, fit_intercept, diagonal)

    def preconditioner_path(self, n_classes, fit_intercept):
        """``(l2, last=False) -> GramPreconditioner``, chosen as for in-memory data."""
        return preconditioner_path(
            self, self.shape, self.nnz, n_classes, fit_intercept,
            lambda diagonal: self.moments(fit_intercept, diagonal),
        )


class DaskLinearLoss(LinearModelLoss):
    """:class:`LinearModelLoss` with each evaluation a blockwise map and a tree sum.

    Parameters
    ----------
    base_loss : loss object
        As for :class:`LinearModelLoss`.
    fit_intercept : bool
        Whether the packed coefficients end with K intercepts.

    Notes
    -----
    The packing of the coefficients is inherited. The objective's methods
    take a :class:`BlockedData` for ``X`` and ignore ``target`` and
    ``sample_weight`` (the blocks hold them); the weight sum ``S`` is that of
    the blocks. Each block is evaluated by a new :class:`LinearModelLoss` on
    its worker (no state is left behind on the workers between evaluations).
    """

    def adopt_buffer(self, other):
        """No score buffer is kept on the client: nothing to take over."""

    def _map(self, X, method, coef, n_classes):
        dask, _ = _dask()
        coef = dask.delayed(np.asarray(coef, dtype=np.float64), pure=True)
        return [
            dask.delayed(_block_call, pure=True)(
                b, self.base_loss, self.fit_intercept, method, coef, n_classes
            )
            for b in X.blocks
        ]

    def _finish(self, f, g, coef, n_classes, l2, S):
        weights, _ = self.weight_intercept(coef, n_classes)
        f = f / S + 0.5 * l2 * float(np.dot(weights.ravel(), weights.ravel()))
        if g is None:
            return f
        g = g / S
        g_W, _ = self.weight_intercept(g, n_classes)
        g_W += l2 * weights
        return f, g

    def loss(self, coef, X, target, n_classes, sample_weight=None, l2_reg_strength=0.0):
        """Value of the objective at ``coef`` (see :meth:`LinearModelLoss.loss`)."""
        f = X._compute(self._map(X, "loss", coef, n_classes))
        return self._finish(f, None, coef, n_classes, l2_reg_strength, X.weight_sum)

    def loss_gradient(self, coef, X, target, n_classes, sample_weight=None,
                      l2_reg_strength=0.0):
        """Value and gradient of the objective (see :meth:`LinearModelLoss.loss_gradient`)."""
        f, g = X._compute(self._map(X, "loss_gradient", coef, n_classes))
        return self._finish(f, g, coef, n_classes, l2_reg_strength, X.weight_sum)

    def loss_gradient_hessian_product(self, coef, X, target, n_classes,
                                      sample_weight=None, l2_reg_strength=0.0):
        """Value, gradient and a blockwise Hessian-vector product function.

        Each block's Hessian product function (with the probabilities it
        keeps) stays on its worker, persisted; ``hessp(v)`` maps it over the
        blocks and sums.
        """
        dask, _ = _dask()
        results = dask.persist(
            *self._map(X, "loss_gradient_hessian_product", coef, n_classes)
        )
        f, g = X._compute([dask.delayed(_value_gradient)(r) for r in results])
        S = X.weight_sum
        f, g = self._finish(f, g, coef, n_classes, l2_reg_strength, S)

        def hessp(v):
            v = np.asarray(v, dtype=np.float64)
            v_d = dask.delayed(v, pure=True)
            out = X._compute([dask.delayed(_apply)(r, v_d) for r in results]) / S
            out_W, _ = self.weight_intercept(out, n_classes)
            V_W, _ = self.weight_intercept(v, n_classes)
            out_W += l2_reg_strength * V_W
            return out

        return f, g, hessp


def _inputs(X, y, sample_weight, da):
    """``X`` (one column chunk), ``y`` and the weights as dask arrays with X's row chunks.

    In-memory ``y`` or ``sample_weight`` next to a Dask ``X`` are wrapped
    with X's row chunks; a scalar weight stays a scalar.
    """
    X = _as_dask_array(X, da)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    y = _aligned(y, "y", X, da)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if sample_weight is not None and not np.isscalar(sample_weight):
        sample_weight = _aligned(sample_weight, "sample_weight", X, da)
    return X, y, sample_weight


def _aligned(a, name, X, da):
    """``a`` as a dask array with the row chunks of ``X`` (in-memory ``a`` wrapped)."""
    rows = X.chunks[0]
    converted = _as_dask_array(a, da)
    if converted is None:
        converted = np.asarray(a)
    if converted.shape[0] != X.shape[0]:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"X has {X.shape[0]}, {name} has {converted.shape[0]}."
        )
    if not isinstance(converted, da.Array):
        return da.from_array(converted, chunks=(rows,) + converted.shape[1:])
    if converted.ndim > 1 and converted.numblocks[1] > 1:
        converted = converted.rechunk({1: -1})
    if converted.chunks[0] != rows:
        converted = converted.rechunk({0: rows})
    return converted


def dask_fit_problem(estimator, X, y, sample_weight):
    """What :meth:`_fit_problem` builds, for Dask collections.

    ``X``, ``y`` and the weights are validated and persisted once (one pass
    over a lazily generated ``X``), then encoded in place on the workers.
    Returns ``(linear_loss, blocked_X, classes, sw_sum, mean_target)``:
    a :class:`DaskLinearLoss`, the persisted :class:`BlockedData`, the
    classes, the total weight and the weighted mean target (K,).
    """
    dask, da = _dask()
    delayed = dask.delayed
    columns = getattr(X, "columns", None)
    label_columns = getattr(y, "columns", None)
    X, y, sample_weight = _inputs(X, y, sample_weight, da)
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    _set_feature_attributes(estimator, X.shape[1], columns)
    if sample_weight is None or np.isscalar(sample_weight):
        sw_blocks = [sample_weight] * X.numblocks[0]  # a scalar: broadcast per block
    else:
        sw_blocks = list(sample_weight.to_delayed().ravel())
    raw = dask.persist(*[
        delayed(_raw_block)(xb, yb, sb, dtype)
        for xb, yb, sb in zip(X.to_delayed()[:, 0], y.to_delayed().ravel(), sw_blocks)
    ])

    unique = functools.partial(_unique_labels, raw, dask)
    classes, encode = estimator._encode_target_blocks(y, unique, label_columns)
    n_classes = classes.shape[0]
    estimator._check_params_vs_data(n_classes)
    counts = None
    if getattr(estimator, "class_weight", None) is not None:
        counts = dask.compute(_tree_sum(
            [delayed(_label_counts)(b, encode, n_classes) for b in raw], delayed
        ))[0]
    cw = estimator._class_weights(classes, counts)
    check_target = estimator._check_target
    blocks = list(dask.persist(*[
        delayed(_make_block)(b, encode, check_target, n_classes, dtype, cw) for b in raw
    ]))
    del raw  # the encoded blocks share X's blocks: no copy stays behind
    stats, target_sum = dask.compute(_tree_sum(
        [delayed(_block_stats)(b, n_classes) for b in blocks], delayed
    ))[0]
    n_rows, sw_sum, nnz, n_sparse, n_dropped = stats
    estimator._report_dropped(int(n_dropped), int(n_rows + n_dropped))
    if not sw_sum > 0:
        raise ValueError(
            "The sample weights (times the class weights) sum to zero: no sample to fit."
        )
    data = BlockedData(blocks, (int(n_rows), X.shape[1]), np.dtype(dtype),
                       int(nnz) if n_sparse else None, float(sw_sum))
    linear_loss = DaskLinearLoss(estimator._make_loss(n_classes), estimator.fit_intercept)
    return linear_loss, data, classes, float(sw_sum), target_sum / sw_sum


def _unique_labels(raw, dask):
    """The sorted unique labels of the raw blocks: a blockwise union, as a tree."""
    parts = [dask.delayed(_block_labels)(b) for b in raw]
    while len(parts) > 1:
        parts = [dask.delayed(_union)(*parts[i : i + _FAN_IN])
                 for i in range(0, len(parts), _FAN_IN)]
    return dask.compute(parts[0])[0]


def _set_feature_attributes(estimator, n_features, columns):
    """``n_features_in_`` and (string column names) ``feature_names_in_``, as validate_data."""
    estimator.n_features_in_ = n_features
    names = None if columns is None else np.asarray(list(columns), dtype=object)
    if names is not None and all(isinstance(c, str) for c in names):
        estimator.feature_names_in_ = names
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_


def blockwise(method):
    """Decorator: a predicting method, on a Dask collection, returns a lazy result.

    The method runs on each row block (each partition) of ``X``, through
    :mod:`sksparsemax.integrations`'s blockwise helpers' logic: a dask array
    for a dask array, a dask DataFrame or Series for a dask DataFrame.
    """

    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        if is_dask_collection(X):
            return map_method(self, method.__name__, X)
        return method(self, X, *args, **kwargs)

    return wrapper


def map_method(estimator, name, X):
    """``estimator.<name>`` mapped lazily over the row blocks of a Dask ``X``.

    A dask DataFrame's partitions reach the method as pandas frames (its
    column names checked as in memory); the result is a dask array with
    X's row chunks.
    """
    _dask()
    columns = getattr(X, "columns", None)
    if columns is not None:
        columns = list(columns)
        X = X.to_dask_array(lengths=True)
    else:
        X = _as_dask_array(X, _dask()[1])
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    call = functools.partial(_call, estimator, name, columns)
    probe = np.asarray(call(np.zeros((1, X.shape[1]), dtype=X.dtype)))
    meta = np.empty((0,) * probe.ndim, dtype=probe.dtype)
    if probe.ndim == 1:
        return X.map_blocks(call, drop_axis=1, dtype=probe.dtype, meta=meta)
    return X.map_blocks(call, chunks=(X.chunks[0], (probe.shape[1],)),
                        dtype=probe.dtype, meta=meta)


def _call(estimator, name, columns, block):
    """The in-memory method on one block (a pandas frame with ``columns``)."""
    if columns is not None:
        import pandas as pd

        block = pd.DataFrame(block, columns=columns)
    return getattr(estimator, name)(block)
