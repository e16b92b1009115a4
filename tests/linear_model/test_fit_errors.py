"""Bad fits: refused with a clear error, and never damaging a fitted model."""

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

from sksparsemax import SparsemaxClassifier


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X[:300]), y[:300]


def test_negative_class_weight_is_refused_like_sample_weight(digits):
    X, y = digits
    y3 = y % 3
    with pytest.raises(ValueError, match=r"class_weight must be finite and non-negative.*class 0.*-0\.01"):
        SparsemaxClassifier(class_weight={0: -0.01, 1: 1, 2: 1}).fit(X, y3)
    with pytest.raises(ValueError, match=r"class 2 has weight inf"):
        SparsemaxClassifier(class_weight={0: 1, 1: 1, 2: np.inf}).fit(X, y3)
    # Zero weights are allowed (as for sample_weight): the class is ignored.
    SparsemaxClassifier(class_weight={0: 0.0, 1: 1, 2: 1}).fit(X, y3)


def test_a_failed_refit_leaves_the_previous_model():
    from sklearn.datasets import make_multilabel_classification

    from sksparsemax import SparsemaxMultiLabel

    X, Y = make_multilabel_classification(n_samples=60, n_classes=5, random_state=0)
    est = SparsemaxMultiLabel().fit(X, Y)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(est).items()}
    expected = est.predict(X)
    # Other features and a 1-D y of a single class: fails after the data
    # were validated and the target encoded (which set attributes).
    with pytest.raises(ValueError, match="at least 2 classes"):
        est.fit(X[:, :3], np.zeros(60))
    assert set(vars(est)) == set(before)
    for key, value in before.items():
        np.testing.assert_array_equal(vars(est)[key], value)
    np.testing.assert_array_equal(est.predict(X), expected)
    assert est.predict(X).shape == (60, 5)
    # A failure inside the solver's setup (all rows unlabelled) too.
    with pytest.raises(ValueError, match="no label"):
        est.fit(X, np.zeros_like(Y))
    np.testing.assert_array_equal(est.predict(X), expected)


def test_multilabel_classes_keep_the_column_names_of_a_dataframe():
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import make_multilabel_classification

    from sksparsemax import SparsemaxMultiLabel

    X, Y = make_multilabel_classification(
        n_samples=80, n_classes=4, allow_unlabeled=False, random_state=0
    )
    names = ["sports", "politics", "science", "arts"]
    est = SparsemaxMultiLabel().fit(X, pd.DataFrame(Y, columns=names))
    assert list(est.classes_) == names
    # The same model as on the bare array, which keeps 0..K-1.
    bare = SparsemaxMultiLabel().fit(X, Y)
    np.testing.assert_array_equal(bare.classes_, np.arange(4))
    np.testing.assert_array_equal(est.coef_, bare.coef_)
    np.testing.assert_array_equal(est.predict(X), bare.predict(X))
