"""Safe persistence with skops.io, and pickle.

Every fitted estimator (several configurations each: string labels, float32,
pandas feature names, class weights, a multi-label fit) is dumped to a file
with ``skops.io.dump`` and loaded back; the loaded model predicts exactly what
the original does. ``skops.io.get_untrusted_types`` must list only the
library's own estimator classes: nothing else (loss objects, NumPy
internals, builtins) needs the user's approval. Loading without trusting
them must fail, loading with ``trusted=`` that list must succeed.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris, make_multilabel_classification
from sklearn.preprocessing import StandardScaler

from sksparsemax import (
    EntmaxClassifier,
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)

OWN_CLASSES = {
    f"{cls.__module__}.{cls.__qualname__}"
    for cls in (EntmaxClassifier, SparsemaxClassifier, SparsemaxMultiLabel,
                SparseSoftmaxClassifier)
}


def _iris(as_frame=False, labels=False, dtype=np.float64):
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X).astype(dtype)
    if as_frame:
        X = pd.DataFrame(X, columns=["sepal_l", "sepal_w", "petal_l", "petal_w"])
    if labels:
        y = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    return X, y


def _multilabel():
    X, Y = make_multilabel_classification(
        n_samples=80, n_features=5, n_classes=4, allow_unlabeled=False, random_state=0
    )
    return StandardScaler().fit_transform(X), Y


CASES = {
    "sparsemax": lambda: (SparsemaxClassifier(max_iter=300), _iris()),
    "sparsemax-strings-frame-weights": lambda: (
        SparsemaxClassifier(class_weight={"setosa": 2.0, "versicolor": 1.0,
                                          "virginica": 0.5}, max_iter=300),
        _iris(as_frame=True, labels=True),
    ),
    "sparsemax-float32-balanced": lambda: (
        SparsemaxClassifier(class_weight="balanced", max_iter=300),
        _iris(dtype=np.float32),
    ),
    "sparse_softmax": lambda: (SparseSoftmaxClassifier(k=2, max_iter=300), _iris(labels=True)),
    "entmax": lambda: (EntmaxClassifier(alpha=1.3, max_iter=300), _iris(as_frame=True)),
    "entmax-no-intercept": lambda: (
        EntmaxClassifier(alpha=1.7, fit_intercept=False, max_iter=300), _iris()
    ),
    "multilabel": lambda: (SparsemaxMultiLabel(max_iter=300), _multilabel()),
    "multilabel-softmax": lambda: (
        SparsemaxMultiLabel(loss="softmax", threshold=0.2, max_iter=300), _multilabel()
    ),
    "multilabel-1d": lambda: (SparsemaxMultiLabel(max_iter=300), _iris()),
}


@pytest.fixture(params=sorted(CASES))
def fitted(request):
    est, (X, y) = CASES[request.param]()
    return est.fit(X, y), X


def _assert_same_predictions(a, b, X):
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.get_params() == b.get_params()


def test_skops_round_trip_trusts_only_our_estimators(fitted, tmp_path):
    sio = pytest.importorskip("skops.io", reason="skops is not installed")
    est, X = fitted
    path = tmp_path / "model.skops"
    sio.dump(est, path)

    untrusted = sio.get_untrusted_types(file=path)
    assert untrusted == [f"{type(est).__module__}.{type(est).__qualname__}"]
    assert set(untrusted) <= OWN_CLASSES

    with pytest.raises(sio.exceptions.UntrustedTypesFoundException):
        sio.load(path)  # nothing trusted: refused
    loaded = sio.load(path, trusted=untrusted)
    assert type(loaded) is type(est)
    _assert_same_predictions(est, loaded, X)
    if hasattr(est, "feature_names_in_"):
        np.testing.assert_array_equal(loaded.feature_names_in_, est.feature_names_in_)


def test_skops_bytes_round_trip():
    sio = pytest.importorskip("skops.io", reason="skops is not installed")
    est, (X, y) = CASES["sparse_softmax"]()
    est.fit(X, y)
    data = sio.dumps(est)
    loaded = sio.loads(data, trusted=sio.get_untrusted_types(data=data))
    _assert_same_predictions(est, loaded, X)


def test_pickle_round_trip(fitted):
    est, X = fitted
    loaded = pickle.loads(pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL))
    _assert_same_predictions(est, loaded, X)


def test_unfitted_estimators_round_trip():
    sio = pytest.importorskip("skops.io", reason="skops is not installed")
    for cls in (EntmaxClassifier, SparsemaxClassifier, SparsemaxMultiLabel,
                SparseSoftmaxClassifier):
        est = cls(C=0.5)
        data = sio.dumps(est)
        assert sio.get_untrusted_types(data=data) == [f"{cls.__module__}.{cls.__qualname__}"]
        assert sio.loads(data, trusted=[f"{cls.__module__}.{cls.__qualname__}"]).get_params() \
            == est.get_params()
