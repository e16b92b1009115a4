"""FenchelYoungClassifier: the named classifiers are it with their loss fixed.

The same data, parameters and loss give the same fit, bit for bit: the named
classifiers add nothing to the solver, and a loss instance with kinks (top-k)
gets the same solver safeguards as SparseSoftmaxClassifier.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from sksparsemax import (
    EntmaxClassifier,
    FenchelYoungClassifier,
    SparsemaxClassifier,
    SparseSoftmaxClassifier,
)
from sksparsemax.losses import EntmaxLoss, SparseSoftmaxLoss, get_loss


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X[:400]), y[:400]


@pytest.mark.parametrize(
    "named, loss",
    [
        (SparsemaxClassifier(), "sparsemax"),
        (EntmaxClassifier(alpha=1.5), EntmaxLoss(1.5)),
        (EntmaxClassifier(alpha=1.3), EntmaxLoss(1.3)),
        (SparseSoftmaxClassifier(k=3), SparseSoftmaxLoss(3)),
        (SparseSoftmaxClassifier(k=3, solver="newton-cg"), SparseSoftmaxLoss(3)),
    ],
    ids=repr,
)
def test_named_classifier_is_the_generic_one(digits, named, loss):
    X, y = digits
    generic = FenchelYoungClassifier(loss=loss, solver=named.solver).fit(X, y)
    named.fit(X, y)
    np.testing.assert_array_equal(generic.coef_, named.coef_)
    np.testing.assert_array_equal(generic.intercept_, named.intercept_)
    assert generic.n_iter_ == named.n_iter_
    np.testing.assert_array_equal(generic.predict_proba(X), named.predict_proba(X))


def test_loss_names_and_errors(digits):
    X, y = digits
    for name in ("sparsemax", "softmax", "entmax", "sparse_softmax"):
        clf = FenchelYoungClassifier(loss=name, max_iter=20)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X[:100], y[:100])
        # predict_proba is the named loss's mapping of the scores.
        P = clf.predict_proba(X[:5])
        expected = get_loss(name).predict_proba(clf.decision_function(X[:5]))
        np.testing.assert_allclose(P, expected)
    with pytest.raises(ValueError, match="loss"):
        FenchelYoungClassifier(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="loss must be one of"):
        get_loss("hinge")
