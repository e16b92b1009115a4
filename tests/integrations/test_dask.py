"""Dask: distributed model selection and blockwise prediction / mappings.

* ``GridSearchCV`` and ``cross_validate`` over every estimator run on a real
  ``dask.distributed.LocalCluster`` (2 worker processes, 1 thread each)
  through joblib's Dask backend; the task stream shows that the fits ran on
  the workers, and the results equal those of a local, sequential run.
* :mod:`sksparsemax.integrations`: the mappings, JVPs and the estimators'
  ``predict_proba``/``predict``/``decision_function`` applied blockwise to
  dask arrays (and dask DataFrames) equal the NumPy results exactly.

The cluster is module-scoped and always shut down; the blockwise tests
compute with the synchronous scheduler, except one that computes on the
cluster (so the estimator really travels to the worker processes).
"""

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_multilabel_classification
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.preprocessing import StandardScaler

from sksparsemax import (
    EntmaxClassifier,
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)
from sksparsemax import transforms as T

# The workers run the library's size rules (small fits take the NumPy path):
# the local fits they are compared with must run the same code.
pytestmark = pytest.mark.usefixtures("real_size_rules")

da = pytest.importorskip("dask.array", reason="dask[array] is not installed")
from sksparsemax.integrations import (  # noqa: E402
    dask_decision_function,
    dask_predict,
    dask_predict_proba,
    dask_transform,
)

SYNC = {"scheduler": "synchronous"}


def _assert_close(got, expected):
    """Equal labels, or floats within 4 units in the last place (so the same
    exact zeros): a block's row sums may round differently from the whole
    array's, since NumPy's reductions pick their summation order from the
    array's shape (e.g. softmax on axis 1 of a 3-D array)."""
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_array_max_ulp(got, expected, maxulp=4)
    else:
        np.testing.assert_array_equal(got, expected)


# --------------------------------------------------------------------------
# data and fitted models (small: the suite shares two cores)
# --------------------------------------------------------------------------
def _iris():
    X, y = load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _multilabel():
    X, Y = make_multilabel_classification(
        n_samples=90, n_features=5, n_classes=4, allow_unlabeled=False, random_state=0
    )
    return StandardScaler().fit_transform(X), Y


CASES = {
    "SparsemaxClassifier": (SparsemaxClassifier, {}, _iris),
    "SparseSoftmaxClassifier": (SparseSoftmaxClassifier, {"k": 2}, _iris),
    "EntmaxClassifier": (EntmaxClassifier, {"alpha": 1.5}, _iris),
    "SparsemaxMultiLabel": (SparsemaxMultiLabel, {}, _multilabel),
}


@pytest.fixture(scope="module")
def fitted():
    out = {}
    for name, (cls, params, data) in CASES.items():
        X, y = data()
        out[name] = (cls(max_iter=300, **params).fit(X, y), X)
    X, y = _iris()
    binary = y < 2
    out["binary"] = (SparsemaxClassifier().fit(X[binary], y[binary]), X[binary])
    return out


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed"
    )
    cluster = distributed.LocalCluster(
        processes=True,
        n_workers=2,
        threads_per_worker=1,
        dashboard_address=None,
        silence_logs=40,  # logging.ERROR
    )
    try:
        with distributed.Client(cluster) as c:
            yield c
    finally:
        cluster.close()


# --------------------------------------------------------------------------
# distributed model selection
# --------------------------------------------------------------------------
def _on_cluster(client, func):
    """Run ``func()`` under joblib's Dask backend; return its result and the
    workers that ran tasks meanwhile."""
    import joblib
    from distributed import get_task_stream

    with get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        result = func()
    return result, {task["worker"] for task in stream.data}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grid_search_on_a_cluster_equals_local(client, name):
    cls, params, data = CASES[name]
    X, y = data()
    grid = {"C": [0.1, 1.0, 10.0]}

    def search():
        return GridSearchCV(cls(max_iter=300, **params), grid, cv=3).fit(X, y)

    local = search()
    remote, workers = _on_cluster(client, search)
    assert workers, "no task ran on the cluster"
    assert workers <= set(client.scheduler_info()["workers"])
    assert remote.best_params_ == local.best_params_
    for key in ["mean_test_score", "rank_test_score"] + [
        f"split{i}_test_score" for i in range(3)
    ]:
        np.testing.assert_array_equal(remote.cv_results_[key], local.cv_results_[key])
    _assert_close(
        remote.best_estimator_.predict_proba(X), local.best_estimator_.predict_proba(X)
    )


def test_cv_estimator_folds_on_a_cluster_equal_local(client):
    """The CV estimators' folds run as joblib tasks: on the cluster's workers."""
    from sksparsemax.linear_model import EntmaxClassifierCV

    X, y = _iris()

    def search():
        return EntmaxClassifierCV(alphas=(1.5, 2.0), Cs=4, cv=3, n_jobs=-1).fit(X, y)

    local = search()
    remote, workers = _on_cluster(client, search)
    assert workers, "no task ran on the cluster"
    assert remote.best_params_ == local.best_params_
    np.testing.assert_array_equal(remote.scores_, local.scores_)
    _assert_close(remote.coefs_paths_, local.coefs_paths_)
    _assert_close(remote.predict_proba(X), local.predict_proba(X))


def test_cross_validate_on_a_cluster_equals_local(client):
    X, y = _iris()
    cv = KFold(4, shuffle=True, random_state=0)

    def run():
        return cross_validate(
            SparseSoftmaxClassifier(k=2, max_iter=300),
            X,
            y,
            cv=cv,
            scoring=("accuracy", "f1_macro"),
            return_estimator=True,
        )

    local = run()
    remote, workers = _on_cluster(client, run)
    assert workers
    for key in ("test_accuracy", "test_f1_macro"):
        np.testing.assert_array_equal(remote[key], local[key])
    for a, b in zip(remote["estimator"], local["estimator"]):
        _assert_close(a.coef_, b.coef_)


def test_blockwise_prediction_computed_on_the_cluster(client, fitted):
    clf, X = fitted["EntmaxClassifier"]
    dX = da.from_array(X, chunks=(40, 4))
    proba = client.compute(dask_predict_proba(clf, dX)).result()
    _assert_close(proba, clf.predict_proba(X))
    z = np.random.default_rng(0).normal(size=(30, 6))
    p = client.compute(dask_transform("sparsemax", da.from_array(z, chunks=(7, 3)))).result()
    _assert_close(p, T.sparsemax(z))


# --------------------------------------------------------------------------
# blockwise mappings
# --------------------------------------------------------------------------
MAPPINGS = [
    ("softmax", {}),
    ("sparsemax", {}),
    ("sparse_softmax", {"k": 2}),
    ("entmax15", {}),
    ("entmax_bisect", {"alpha": 1.3}),
]


@pytest.mark.parametrize("name, kwargs", MAPPINGS, ids=[m[0] for m in MAPPINGS])
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dask_transform_equals_numpy(name, kwargs, axis, dtype):
    rng = np.random.default_rng(1)
    z = rng.normal(scale=2.0, size=(9, 8, 7)).astype(dtype)
    z[0, 0, :3] = -np.inf  # masks
    z[1, 2, 0] = -np.inf
    dz = da.from_array(z, chunks=(4, 3, 5))  # every axis split
    func = getattr(T, name)
    out = dask_transform(func, dz, axis=axis, **kwargs)
    assert isinstance(out, da.Array)
    assert out.dtype == dtype
    assert out.chunks[axis % 3] == (z.shape[axis],)  # the distribution axis is one chunk
    got = out.compute(**SYNC)
    expected = func(z, axis=axis, **kwargs)
    if name == "entmax_bisect":
        # An iterative root search, accurate to its tol (4 eps) rather than
        # to the last ulp: on the NumPy backend a block's sums round
        # differently from the whole array's and the iterates follow.
        np.testing.assert_array_equal(got == 0, expected == 0)
        np.testing.assert_allclose(got, expected, rtol=1e-12 if dtype == np.float64 else 1e-5)
    else:
        _assert_close(got, expected)
    assert got.dtype == dtype
    # by name too
    np.testing.assert_array_equal(
        dask_transform(name, dz, axis=axis, **kwargs).compute(**SYNC), got
    )


@pytest.mark.parametrize(
    "mapping, jvp, kwargs",
    [
        (T.softmax, T.softmax_jvp, {}),
        (T.sparsemax, T.sparsemax_jvp, {}),
        (T.entmax15, T.entmax_jvp, {"alpha": 1.5}),
    ],
    ids=["softmax", "sparsemax", "entmax"],
)
def test_dask_transform_of_a_jvp_equals_numpy(mapping, jvp, kwargs):
    rng = np.random.default_rng(2)
    p = mapping(rng.normal(size=(12, 6)))
    v = rng.normal(size=p.shape)
    # different chunkings of p and v are aligned; v may be a NumPy array
    out = dask_transform(jvp, da.from_array(p, chunks=(5, 2)), v, **kwargs)
    _assert_close(out.compute(**SYNC), jvp(p, v, **kwargs))


def test_dask_transform_errors():
    dz = da.zeros((4, 3), chunks=2)
    with pytest.raises(ValueError, match="unknown mapping 'sparsemax_threshold'"):
        dask_transform("sparsemax_threshold", dz)
    with pytest.raises(TypeError, match="callable or a mapping name"):
        dask_transform(3, dz)
    with pytest.raises(TypeError, match="at least one array"):
        dask_transform(T.sparsemax)
    with pytest.raises(ValueError, match="same shape"):
        dask_transform(T.sparsemax_jvp, dz, da.zeros((4, 2)))
    with pytest.raises(ValueError, match="out of bounds"):
        dask_transform(T.sparsemax, dz, axis=2)
    unknown = da.from_array(np.zeros((6, 3)), chunks=3)
    unknown = unknown[unknown[:, 0] > -1]  # unknown chunk sizes along axis 0
    with pytest.raises(ValueError, match="chunk sizes along axis 0 are unknown"):
        dask_transform(T.sparsemax, unknown, axis=0)
    # invalid scores raise the mapping's error when computed
    bad = da.from_array(np.array([[0.0, 1.0], [np.nan, 0.0]]), chunks=1)
    lazy = dask_transform(T.sparsemax, bad)
    with pytest.raises(ValueError, match="contains NaN"):
        lazy.compute(**SYNC)


# --------------------------------------------------------------------------
# blockwise estimators
# --------------------------------------------------------------------------
WRAPPERS = {
    "predict_proba": dask_predict_proba,
    "predict": dask_predict,
    "decision_function": dask_decision_function,
}


@pytest.mark.parametrize("method", sorted(WRAPPERS))
@pytest.mark.parametrize("name", sorted(CASES) + ["binary"])
def test_blockwise_estimator_methods_equal_numpy(fitted, name, method):
    clf, X = fitted[name]
    dX = da.from_array(X, chunks=(17, 2))  # features split too: rechunked
    out = WRAPPERS[method](clf, dX)
    assert isinstance(out, da.Array)
    expected = getattr(clf, method)(X)
    assert out.shape == expected.shape
    assert out.dtype == expected.dtype
    _assert_close(out.compute(**SYNC), expected)


def test_blockwise_prediction_keeps_float32_and_string_labels():
    X, y = _iris()
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    X32 = X.astype(np.float32)
    clf = SparsemaxClassifier(max_iter=300).fit(X32, labels)
    dX = da.from_array(X32, chunks=(50, 4))
    proba = dask_predict_proba(clf, dX)
    assert proba.dtype == np.float32
    _assert_close(proba.compute(**SYNC), clf.predict_proba(X32))
    np.testing.assert_array_equal(dask_predict(clf, dX).compute(**SYNC), clf.predict(X32))


def test_blockwise_prediction_on_a_dask_dataframe(fitted):
    dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed")
    import pandas as pd

    X, y = _iris()
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"], index=np.arange(100, 250))
    clf = SparsemaxClassifier(max_iter=300).fit(frame, y)
    ddf = dd.from_pandas(frame, npartitions=3)

    proba = dask_predict_proba(clf, ddf)
    assert isinstance(proba, dd.DataFrame)
    result = proba.compute(**SYNC)
    pd.testing.assert_index_equal(result.index, frame.index)
    assert list(result.columns) == list(clf.classes_)
    _assert_close(result.to_numpy(), clf.predict_proba(frame))

    pred = dask_predict(clf, ddf)
    assert isinstance(pred, dd.Series)
    result = pred.compute(**SYNC)
    pd.testing.assert_index_equal(result.index, frame.index)
    np.testing.assert_array_equal(result.to_numpy(), clf.predict(frame))

    scores = dask_decision_function(clf, ddf).compute(**SYNC)
    _assert_close(scores.to_numpy(), clf.decision_function(frame))


def test_blockwise_prediction_errors(fitted):
    X, _ = _iris()
    dX = da.from_array(X, chunks=50)
    with pytest.raises(NotFittedError):
        dask_predict_proba(SparsemaxClassifier(), dX)  # eager: no compute needed
    with pytest.raises(TypeError, match="dask array or a dask DataFrame"):
        dask_predict(fitted["SparsemaxClassifier"][0], X)
    with pytest.raises(ValueError, match="must be 2-D"):
        dask_predict(fitted["SparsemaxClassifier"][0], dX[:, 0])
    with pytest.raises(AttributeError, match="has no method 'transform'"):
        from sksparsemax.integrations._dask import _blockwise

        _blockwise(fitted["SparsemaxClassifier"][0], "transform", dX)
