"""The speed and memory devices of the fit must not change what is fitted.

* LinearModelLoss's fast path (one reused score buffer, the loss gradient
  written over the scores) gives the values of the plain path, call after
  call, and allocates no (n, K) array besides its buffer once warmed up;
* sparse X with empty columns is fitted on its non-empty columns only, which
  must give the model of the full problem (0 weights on the empty columns);
* the fit starts at the intercept-only optimum (centred).
"""

import importlib.util
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import sksparsemax.linear_model._fit as base_module
from sksparsemax import transforms
from sksparsemax.linear_model import (
    EntmaxClassifier,
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)
from sksparsemax.linear_model._linear_loss import LinearModelLoss
from sksparsemax.losses import (
    EntmaxLoss,
    SoftmaxLoss,
    SparsemaxLoss,
    SparseSoftmaxLoss,
    check_target,
)

LOSSES = [SparsemaxLoss(), SoftmaxLoss(), EntmaxLoss(1.5), EntmaxLoss(1.3), SparseSoftmaxLoss(2)]


class _Plain:
    """Hides a loss behind duck typing: LinearModelLoss takes its plain path."""

    def __init__(self, loss):
        self.loss_object = loss

    def loss(self, Z, target):
        return self.loss_object.loss(Z, target)

    def loss_gradient(self, Z, target):
        return self.loss_object.loss_gradient(Z, target)


def _data(n=60, d=7, K=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    Q = rng.dirichlet(np.ones(K) * 0.5, size=n)
    sw = rng.uniform(0.2, 3.0, size=n)
    return X, y, Q, sw


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
@pytest.mark.parametrize("form", ["dense", "float32", "csr", "csc"])
@pytest.mark.parametrize("proportions", [False, True])
def test_fast_path_equals_plain_path_call_after_call(loss, form, proportions):
    X, y, Q, sw = _data()
    n, d = X.shape
    K = 4
    if form == "float32":
        X = X.astype(np.float32)
    elif form in ("csr", "csc"):
        X[np.abs(X) < 0.7] = 0
        X = sp.csr_matrix(X) if form == "csr" else sp.csc_matrix(X)
    target = check_target(Q if proportions else y, n, K)
    fast = LinearModelLoss(loss, True)
    plain = LinearModelLoss(_Plain(loss), True)
    rng = np.random.default_rng(1)
    for _ in range(3):  # the buffer is reused: every call must start afresh
        w = rng.normal(size=fast.n_coef(K, d))
        f, g = fast.loss_gradient(w, X, target, K, sw, 0.1)
        f_ref, g_ref = plain.loss_gradient(w, X, target, K, sw, 0.1)
        rtol = 1e-12 if X.dtype == np.float64 else 1e-6
        assert f == pytest.approx(f_ref, rel=rtol)
        # float32 products round each entry to about 1e-7 of the largest
        # terms summed into it (the one-pass sparsemax kernel of the numba
        # backend sums in float64): an absolute tolerance at that scale.
        atol = rtol * (1e-2 if X.dtype == np.float64 else np.max(np.abs(g_ref)))
        np.testing.assert_allclose(g, g_ref, rtol=rtol, atol=atol)
        assert g.dtype == np.float64 and g.shape == w.shape


_BACKENDS = ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else [])


@pytest.mark.parametrize("name", _BACKENDS)
@pytest.mark.parametrize("loss", [SoftmaxLoss(), SparsemaxLoss()], ids=repr)
def test_fast_path_allocates_no_score_sized_array(loss, name):
    """After the first call only (n,)- and (K, d)-sized arrays are allocated
    (and, for the NumPy sparsemax on wide rows, row blocks of at most 4 MiB)."""
    rng = np.random.default_rng(0)
    n, d, K = 50000, 5, 40
    X = rng.normal(size=(n, d))
    target = check_target(rng.integers(0, K, size=n), n, K)
    lml = LinearModelLoss(loss, True)
    w = rng.normal(size=lml.n_coef(K, d))
    with transforms.backend(name):
        lml.loss_gradient(w, X, target, K, None, 0.1)  # allocates the buffer
        tracemalloc.start()
        lml.loss_gradient(w, X, target, K, None, 0.1)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    score_array = n * K * 8
    assert peak < 0.6 * score_array, (peak, score_array)


@pytest.mark.parametrize("K", [7, 30])
def test_numpy_sparsemax_in_place_in_row_blocks(monkeypatch, K):
    """The losses' NumPy sparsemax in place (in row blocks on wide rows) equals the mapping."""
    from sksparsemax.transforms import _sparsemax as module

    rng = np.random.default_rng(3)
    Z = rng.normal(size=(103, K)) * 3
    Z[::5, 2] = -np.inf  # masks
    Z[::7] *= 0.05  # rows whose every entry is a candidate
    ref = transforms.sparsemax(Z, axis=1)
    tau_ref = transforms.sparsemax_threshold(Z, axis=1)[0]
    for rows in (1, 3, 103):  # one row, 3 rows, all rows per block
        monkeypatch.setattr(module, "_INPLACE_BLOCK_ENTRIES", rows * K)
        with transforms.backend("numpy"):
            zmax = Z.max(axis=1, keepdims=True)
            P = Z - zmax
            tau = module.shifted_sparsemax_inplace(P)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_allclose(P, ref, rtol=0, atol=1e-15)
        np.testing.assert_allclose(tau + zmax[:, 0], tau_ref, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(P, np.maximum(Z - zmax - tau[:, None], 0))


def _sparse_with_empty_columns(seed=0, n=80, d=40, K=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.7] = 0
    X[:, ::4] = 0  # a quarter of the columns empty
    y = rng.integers(0, K, size=n)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize(
    "est",
    [SparsemaxClassifier(), EntmaxClassifier(alpha=1.5), EntmaxClassifier(alpha=1.0),
     SparsemaxMultiLabel()],
    ids=repr,
)
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_empty_columns_are_left_out_exactly(est, fmt, monkeypatch):
    # (Not the top-k loss: non-smooth, L-BFGS stops ~1e-3 off its optimum.)
    X, y = _sparse_with_empty_columns()
    if isinstance(est, SparsemaxMultiLabel):
        Y = np.random.default_rng(1).random((X.shape[0], 5)) < 0.4
        Y[Y.sum(axis=1) == 0, 0] = True
        y = Y.astype(int)
    X = X.asformat(fmt)
    est = est.set_params(tol=1e-9, max_iter=3000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reduced = est.fit(X, y)
        coef, intercept = reduced.coef_.copy(), reduced.intercept_.copy()
        monkeypatch.setattr(base_module, "_MIN_EMPTY_FRACTION", 2.0)  # never reduce
        assert base_module._active_features(X) is None
        full = est.fit(X, y)
    assert np.all(coef[:, ::4] == 0)
    np.testing.assert_allclose(coef, full.coef_, atol=1e-5)
    np.testing.assert_allclose(intercept, full.intercept_, atol=1e-5)


def test_active_features_threshold():
    X, _ = _sparse_with_empty_columns()
    active = base_module._active_features(X)
    assert active.shape == (40,) and not active[::4].any() and active[1::4].all()
    assert base_module._active_features(X.toarray()) is None  # dense: never copied
    X_full = sp.csr_matrix(np.ones((3, 40)))
    assert base_module._active_features(X_full) is None


def test_warm_start_with_now_empty_columns():
    """A warm start whose previous weights sit on now-empty columns."""
    X, y = _sparse_with_empty_columns()
    dense = X.toarray()
    dense[:, ::4] = np.random.default_rng(3).normal(size=(X.shape[0], 10))
    clf = SparsemaxClassifier(warm_start=True, tol=1e-9, max_iter=3000).fit(dense, y)
    assert np.all(clf.coef_[:, ::4] != 0)
    clf.fit(X, y)
    cold = SparsemaxClassifier(tol=1e-9, max_iter=3000).fit(X, y)
    assert np.all(clf.coef_[:, ::4] == 0)
    np.testing.assert_allclose(clf.coef_, cold.coef_, atol=1e-5)


@pytest.mark.parametrize(
    "est, mapping",
    [
        (SparsemaxClassifier(), SparsemaxLoss()),
        (EntmaxClassifier(alpha=1.5), EntmaxLoss(1.5)),
        (EntmaxClassifier(alpha=1.0), SoftmaxLoss()),
        (SparseSoftmaxClassifier(k=10), SoftmaxLoss()),
    ],
    ids=repr,
)
def test_start_is_the_centred_intercept_only_optimum(est, mapping):
    """One iteration from the start moves nothing when X carries no signal."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2, 3], [10, 20, 30, 40])
    sw = rng.uniform(0.5, 2.0, size=y.size)
    X = np.zeros((y.size, 2))  # the intercept-only model is the model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = est.set_params(max_iter=1).fit(X, y, sample_weight=sw)
    mean_target = np.bincount(y, weights=sw) / sw.sum()
    P = mapping.predict_proba(clf.intercept_[None, :])[0]
    np.testing.assert_allclose(P, mean_target, atol=1e-8)
    assert clf.intercept_.sum() == pytest.approx(0, abs=1e-12)


def test_multilabel_absent_label_starts_outside_the_support():
    """A label no training sample has starts (and stays) out of the support."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    Y = (rng.random((60, 4)) < 0.5).astype(int)
    Y[:, 2] = 0
    Y[Y.sum(axis=1) == 0, 0] = 1
    clf = SparsemaxMultiLabel().fit(X, Y)
    assert np.all(clf.predict_proba(X)[:, 2] == 0)
    assert np.all(clf.predict(X)[:, 2] == 0)
    assert np.all(clf.decision_function(X)[:, 2] < 0)
