"""SparseSoftmaxClassifier (k < n_classes) stops when its objective stalls.

The top-k loss is not differentiable at ties of the k-th and (k+1)-th
scores and its minimiser usually lies on such a kink, so the gradient
criterion may never be met. The fit must still end, without a
ConvergenceWarning, close to the optimum of the objective.
"""

import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from sksparsemax import SparseSoftmaxClassifier


def _packed(clf, f):
    return f.pack(clf.coef_, clf.intercept_)


def test_stalled_fit_ends_early_near_the_optimum(ref):
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X[:600])
    y = y[:600]
    K, C, k = 10, 1.0, 3
    f = ref.objective(ref.make_topk_loss_grad(k), X, y, K, C)

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        clf = SparseSoftmaxClassifier(k=k, C=C, max_iter=1000).fit(X, y)
    assert clf.n_iter_ < 1000
    value = f(_packed(clf, f))[0]

    # A much longer run of the same solver (tol tiny: neither criterion
    # stops it before max_iter) bounds the optimum from above.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        long_run = SparseSoftmaxClassifier(k=k, C=C, tol=1e-12, max_iter=1500).fit(X, y)
    best = f(_packed(long_run, f))[0]
    assert long_run.n_iter_ > clf.n_iter_
    assert best <= value
    assert value - best <= 1e-3 * best
    assert np.mean(clf.predict(X) == long_run.predict(X)) > 0.98


def test_smooth_losses_do_not_use_the_stall_rule():
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X[:300])
    y = y[:300]
    # k >= n_classes is the softmax loss: only the gradient criterion applies,
    # so a tiny tol with few iterations must still warn.
    clf = SparseSoftmaxClassifier(k=10, tol=1e-12, max_iter=15)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
