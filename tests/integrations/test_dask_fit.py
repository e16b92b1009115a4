"""Fitting on Dask collections (``sksparsemax/linear_model/_dask_fit.py``).

* The blockwise objective, gradient and Hessian-vector product equal the
  in-memory ones (to rounding) for every estimator, dense and sparse chunks,
  with sample weights; so do the fitted coefficients (to 1e-6, relative).
* Dask DataFrames, class weights, lazy predictions, a dask-ml scaler in a
  Pipeline.
* On a ``LocalCluster`` (2 worker processes, 1 thread, a memory limit): data
  larger than one worker's memory limit, generated lazily on the workers, are
  fitted while the client's traced peak memory stays far below the size of X.

Small data (the suite shares two cores); the blockwise tests compute with the
synchronous scheduler, the cluster tests on the cluster.
"""

import os
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from sksparsemax import (
    EntmaxClassifier,
    FenchelYoungClassifier,
    MarginalMultiLabel,
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)

dask = pytest.importorskip("dask", reason="dask is not installed")
da = pytest.importorskip("dask.array", reason="dask[array] is not installed")

N, D, K, CHUNK = 360, 6, 3, 90


@pytest.fixture(autouse=True)
def _synchronous(request):
    if "cluster" in request.fixturenames:
        yield
        return
    with dask.config.set(scheduler="synchronous"):
        yield


def _data(sparse):
    X, y = make_classification(N, D, n_informative=4, n_redundant=0, n_classes=K,
                               random_state=0)
    rng = np.random.default_rng(0)
    if sparse:
        X = X * (rng.uniform(size=X.shape) < 0.4)  # 60 % zeros
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0, y == 1]).astype(int)
    Y[Y.sum(axis=1) == 0, 0] = 1  # every row labelled
    return X, y, Y, rng.uniform(0.2, 3.0, N)


def _dask(X, sparse):
    dX = da.from_array(X, chunks=(CHUNK, D))
    if sparse:
        dX = dX.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))
        X = sp.csr_matrix(X)
    return X, dX


# name -> (estimator, uses Y, solver giving a deterministic path on its kinks)
ESTIMATORS = {
    "sparsemax": (lambda **kw: SparsemaxClassifier(**kw), False),
    "entmax": (lambda **kw: EntmaxClassifier(alpha=1.5, **kw), False),
    "sparse_softmax": (lambda **kw: SparseSoftmaxClassifier(k=2, **kw), False),
    "fenchel_young_softmax": (lambda **kw: FenchelYoungClassifier(loss="softmax", **kw),
                              False),
    "multilabel": (lambda **kw: SparsemaxMultiLabel(**kw), True),
    "marginal": (lambda **kw: MarginalMultiLabel(**kw), True),
}


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-12))


def _problems(name, sparse):
    make, multi = ESTIMATORS[name]
    X, y, Y, sw = _data(sparse)
    target = Y if multi else y
    X, dX = _dask(X, sparse)
    dt = da.from_array(target, chunks=(CHUNK,) + target.shape[1:])
    dsw = da.from_array(sw, chunks=CHUNK)
    local = make()._fit_problem(X, target, sw)
    blocked = make()._fit_problem(dX, dt, dsw)
    return local, blocked


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_blockwise_objective_equals_in_memory(name, sparse):
    local, blocked = _problems(name, sparse)
    assert blocked.X.shape == local.X.shape
    np.testing.assert_array_equal(blocked.classes, local.classes)
    assert blocked.sw_sum == pytest.approx(local.sw_sum, rel=1e-14)
    np.testing.assert_allclose(blocked.target_mean(), local.target_mean(), rtol=1e-13)
    n_classes = local.n_classes
    rng = np.random.default_rng(1)
    w = rng.normal(size=local.linear_loss.n_coef(n_classes, D))
    v = rng.normal(size=w.shape)
    l2 = 0.01
    args = lambda p: (p.X, p.target, n_classes, p.sample_weight, l2)  # noqa: E731
    f0, g0 = local.linear_loss.loss_gradient(w, *args(local))
    f1, g1 = blocked.linear_loss.loss_gradient(w, *args(blocked))
    assert f1 == pytest.approx(f0, rel=1e-12)
    np.testing.assert_allclose(g1, g0, rtol=1e-11, atol=1e-14)
    assert blocked.linear_loss.loss(w, *args(blocked)) == pytest.approx(f0, rel=1e-12)
    _, _, h0 = local.linear_loss.loss_gradient_hessian_product(w, *args(local))
    _, g2, h1 = blocked.linear_loss.loss_gradient_hessian_product(w, *args(blocked))
    np.testing.assert_allclose(g2, g0, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(h1(v), h0(v), rtol=1e-11, atol=1e-14)


def _fit_both(make, X, dX, target, dtarget, sw, dsw, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a loss with kinks may stop on a stall
        local = make(tol=1e-10, max_iter=1000, **params).fit(X, target, sample_weight=sw)
        dist = make(tol=1e-10, max_iter=1000, **params).fit(dX, dtarget, sample_weight=dsw)
    return local, dist


# The solvers' paths on the kinks of top-k (k < n_classes) depend on rounding:
# ties decide which side of a kink a step lands on, and both solvers stop on a
# stall near (not at) the optimum, so the coefficients of two fits differ by
# up to ~1e-3 however the objective is summed; its optimum value does not
# (test_top_k_reaches_the_same_objective).
SOLVERS = [(s, n) for s in ("lbfgs", "newton-cg") for n in sorted(ESTIMATORS)
           if n != "sparse_softmax"]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize(("solver", "name"), SOLVERS)
def test_dask_fit_equals_in_memory_fit(name, solver, sparse):
    make, multi = ESTIMATORS[name]
    X, y, Y, sw = _data(sparse)
    target = Y if multi else y
    X, dX = _dask(X, sparse)
    dtarget = da.from_array(target, chunks=(CHUNK,) + target.shape[1:])
    local, dist = _fit_both(make, X, dX, target, dtarget, sw, da.from_array(sw, chunks=CHUNK),
                            solver=solver)
    assert _rel(local.coef_, dist.coef_) < 1e-6
    assert _rel(local.intercept_, dist.intercept_) < 1e-6
    assert dist.coef_.dtype == local.coef_.dtype
    np.testing.assert_array_equal(dist.classes_, local.classes_)


@pytest.mark.parametrize("solver", ["lbfgs", "newton-cg"])
def test_top_k_reaches_the_same_objective(solver):
    """Where the solver's path is not reproducible (kinks), its optimum is."""
    X, y, _, sw = _data(False)
    X, dX = _dask(X, False)
    make = ESTIMATORS["sparse_softmax"][0]
    local, dist = _fit_both(make, X, dX, y, da.from_array(y, chunks=CHUNK), sw,
                            da.from_array(sw, chunks=CHUNK), solver=solver)
    problem = make()._fit_problem(X, y, sw)
    l2 = 1.0 / problem.sw_sum
    f = [problem.linear_loss.loss(problem.linear_loss.pack(m.coef_, m.intercept_), X,
                                  problem.target, K, sw, l2) for m in (local, dist)]
    assert f[1] == pytest.approx(f[0], rel=1e-7)
    assert _rel(local.coef_, dist.coef_) < 1e-2


def test_float32_blocks_give_float32_coefficients_and_warm_start():
    X, y, _, sw = _data(False)
    X = X.astype(np.float32)
    dX = da.from_array(X, chunks=(CHUNK, D))
    local, dist = _fit_both(SparsemaxClassifier, X, dX, y, da.from_array(y, chunks=CHUNK),
                            sw, da.from_array(sw, chunks=CHUNK))
    assert dist.coef_.dtype == np.float32
    assert _rel(local.coef_, dist.coef_) < 1e-4  # float32 scores: float32 rounding
    again = SparsemaxClassifier(warm_start=True, tol=1e-10, max_iter=1000)
    again.fit(X, y, sample_weight=sw)
    again.fit(dX, da.from_array(y, chunks=CHUNK), sample_weight=sw)
    assert again.n_iter_ <= 2  # started at the optimum
    assert _rel(local.coef_, again.coef_) < 1e-4


@pytest.mark.parametrize("class_weight", ["balanced", {0: 2.0, 1: 0.5, 2: 1.0}])
def test_class_weights_are_computed_blockwise(class_weight):
    X, y, _, sw = _data(False)
    y = np.where(y == 2, 1, y)[: N - 40]  # unbalanced
    y = np.concatenate([y, np.full(40, 2)])
    local, dist = _fit_both(SparsemaxClassifier, X, da.from_array(X, chunks=(CHUNK, D)),
                            y, da.from_array(y, chunks=CHUNK), sw,
                            da.from_array(sw, chunks=CHUNK), class_weight=class_weight)
    assert _rel(local.coef_, dist.coef_) < 1e-6


def test_string_labels_scalar_weight_and_numpy_y():
    X, y, _, _ = _data(False)
    labels = np.array(["ant", "bee", "cat"], dtype=object)[y]
    local, dist = _fit_both(SparsemaxClassifier, X, da.from_array(X, chunks=(CHUNK, D)),
                            labels, labels, 2.0, 2.0)
    np.testing.assert_array_equal(dist.classes_, ["ant", "bee", "cat"])
    assert _rel(local.coef_, dist.coef_) < 1e-6


def test_dask_dataframe_input_and_predictions():
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    X, y, _, sw = _data(False)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)])
    ddf = dd.from_pandas(df, npartitions=4)
    dy = dd.from_pandas(pd.Series(y), npartitions=4)
    dsw = dd.from_pandas(pd.Series(sw), npartitions=4)
    local, dist = _fit_both(SparsemaxClassifier, df, ddf, y, dy, sw, dsw)
    assert _rel(local.coef_, dist.coef_) < 1e-6
    np.testing.assert_array_equal(dist.feature_names_in_, df.columns)
    proba = dist.predict_proba(ddf)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), dist.predict_proba(df), atol=1e-15)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_predictions_on_dask_input_are_lazy_and_equal(sparse):
    X, y, Y, _ = _data(sparse)
    X, dX = _dask(X, sparse)
    clf = SparsemaxClassifier().fit(X, y)
    for method in ("predict", "predict_proba", "decision_function", "predict_log_proba"):
        out = getattr(clf, method)(dX)
        assert isinstance(out, da.Array), method
        np.testing.assert_array_equal(out.compute(), getattr(clf, method)(X))
    binary = SparsemaxClassifier().fit(X, y == 1).decision_function(dX)
    assert binary.shape == (N,)
    marginal = MarginalMultiLabel().fit(X, Y)
    lazy = marginal.predict_proba(dX)
    assert all(isinstance(p, da.Array) for p in lazy)
    for p, q in zip(lazy, marginal.predict_proba(X)):
        np.testing.assert_array_equal(p.compute(), q)
    multi = SparsemaxMultiLabel().fit(X, Y)
    np.testing.assert_array_equal(multi.predict(dX).compute(), multi.predict(X))


def test_unlabelled_rows_are_counted_over_all_blocks():
    X, _, Y, _ = _data(False)
    Y = Y.copy()
    Y[:CHUNK] = 0  # a whole block without labels: left out, not an error
    dX, dY = da.from_array(X, chunks=(CHUNK, D)), da.from_array(Y, chunks=(CHUNK, 3))
    with pytest.warns(UserWarning, match=f"{CHUNK} of {N} rows of Y have no label"):
        dist = SparsemaxMultiLabel(tol=1e-10).fit(dX, dY)
    with pytest.warns(UserWarning):
        local = SparsemaxMultiLabel(tol=1e-10).fit(X, Y)
    assert _rel(local.coef_, dist.coef_) < 1e-6
    with pytest.raises(ValueError, match="no label at all"):
        SparsemaxMultiLabel().fit(dX, da.zeros_like(dY))


def test_invalid_dask_input_raises_the_in_memory_errors():
    X, y, _, sw = _data(False)
    dX, dy = da.from_array(X, chunks=(CHUNK, D)), da.from_array(y, chunks=CHUNK)
    with pytest.raises(ValueError, match="Negative values"):
        SparsemaxClassifier().fit(dX, dy, sample_weight=da.from_array(-sw, chunks=CHUNK))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        SparsemaxClassifier().fit(dX, dy[:-1])
    with pytest.raises(ValueError, match="at least 2 classes"):
        SparsemaxClassifier().fit(dX, da.zeros_like(dy))
    with pytest.raises(ValueError, match="sum to zero"):
        SparsemaxClassifier().fit(dX, dy, sample_weight=da.zeros_like(dy, dtype=float))
    clf = SparsemaxClassifier()
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(da.where(dX > 2, np.nan, dX), dy)
    assert not hasattr(clf, "coef_")  # a failed fit leaves no fitted attribute


def test_pipeline_with_dask_ml_scaler():
    preprocessing = pytest.importorskip("dask_ml.preprocessing")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, _, _ = _data(False)
    X = X * 10 + 3
    dX, dy = da.from_array(X, chunks=(CHUNK, D)), da.from_array(y, chunks=CHUNK)
    pipe = make_pipeline(preprocessing.StandardScaler(), SparsemaxClassifier(tol=1e-10))
    pipe.fit(dX, dy)
    local = make_pipeline(StandardScaler(), SparsemaxClassifier(tol=1e-10)).fit(X, y)
    assert _rel(local[-1].coef_, pipe[-1].coef_) < 1e-6
    pred = pipe.predict(dX)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), local.predict(X))


# --------------------------------------------------------------------------
# on a LocalCluster with a memory limit
# --------------------------------------------------------------------------
#: Each worker may use this much memory; the big test's X is larger (each
#: worker then holds half of X, next to its own libraries and temporaries).
MEMORY_LIMIT = 2_000_000_000


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    # No spilling to disk: the workers hold the persisted blocks in memory
    # (pausing only near the limit), so the test shows that they fit there.
    config = {"distributed.worker.memory.target": False,
              "distributed.worker.memory.spill": False,
              "distributed.worker.memory.pause": 0.9}
    # The workers compute on the NumPy backend (they read the variable when
    # they import sksparsemax): on a cold numba cache (a fresh CI machine)
    # each worker would compile the kernels, and the compiler's memory, not
    # the data's, would decide whether the memory test passes.
    saved = os.environ.get("SKSPARSEMAX_BACKEND")
    os.environ["SKSPARSEMAX_BACKEND"] = "numpy"
    try:
        with dask.config.set(config):
            local_cluster = distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, memory_limit=MEMORY_LIMIT,
                processes=True, dashboard_address=":0", silence_logs=40,
            )
    finally:
        if saved is None:
            del os.environ["SKSPARSEMAX_BACKEND"]
        else:
            os.environ["SKSPARSEMAX_BACKEND"] = saved
    try:
        with distributed.Client(local_cluster) as client:
            yield client
    finally:
        local_cluster.close()


def test_newton_cg_on_a_cluster_equals_in_memory(cluster):
    X, y, _, sw = _data(True)
    X, dX = _dask(X, True)
    local, dist = _fit_both(SparsemaxClassifier, X, dX, y, da.from_array(y, chunks=CHUNK),
                            sw, da.from_array(sw, chunks=CHUNK), solver="newton-cg")
    assert _rel(local.coef_, dist.coef_) < 1e-6


def test_fit_data_larger_than_a_workers_memory(cluster):
    n, d = 6_500_000, 40  # 2.08 GB of float64: more than one worker may hold
    rows = 250_000
    workers = set(cluster.scheduler_info()["workers"])
    X = da.random.RandomState(0).standard_normal(size=(n, d), chunks=(rows, d))
    assert X.nbytes > MEMORY_LIMIT
    w = np.linspace(-1.0, 1.0, d)
    y = (X @ w > 0).astype(np.int64) + (X[:, 0] > 1.0)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # max_iter reached: a short fit
            clf = SparsemaxClassifier(max_iter=4).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert clf.coef_.shape == (3, d) and clf.n_iter_ >= 1
    # No worker ran out of memory (a restarted worker has a new address, and
    # its lost blocks would have been recomputed, not held).
    assert set(cluster.scheduler_info()["workers"]) == workers
    # The client holds coefficients and (d x d) moments, never a block of X.
    assert peak < X.nbytes / 50, (peak, X.nbytes)
    # Predictions stay lazy and run on the cluster too.
    accuracy = float((clf.predict(X[:rows]) == y[:rows]).mean().compute())
    assert accuracy > 0.6  # chance: about 0.4


def test_cv_estimators_refuse_dask_input_and_predict_blockwise():
    """A CV estimator's folds are in-memory fits: Dask input is refused with the
    way out, never gathered; a fitted one predicts on Dask input lazily."""
    from sksparsemax.linear_model import SparsemaxClassifierCV

    X, y, _, _ = _data(False)
    dX, dy = da.from_array(X, chunks=(CHUNK, D)), da.from_array(y, chunks=CHUNK)
    with pytest.raises(TypeError, match="does not fit on Dask collections.*plain estimator"):
        SparsemaxClassifierCV(Cs=2).fit(dX, dy)
    cv = SparsemaxClassifierCV(Cs=2, cv=3).fit(X, y)
    proba = cv.predict_proba(dX)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), cv.predict_proba(X), rtol=1e-12, atol=1e-15)
