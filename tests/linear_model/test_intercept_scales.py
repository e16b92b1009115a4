"""The intercepts' scales in L-BFGS's change of variables.

:func:`intercept_scales` is checked against the softmax Hessian's diagonal
computed here, :meth:`GramPreconditioner.scale_intercepts` as a linear
change of variables (inverse, adjoint, the stopping rule's maxima, on the
NumPy and the fused path), and a fit with scaled intercepts against the
same fit without them: the change of variables moves the path, never the
minimiser.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from sksparsemax import EntmaxClassifier, SparsemaxMultiLabel
from sksparsemax.linear_model import _fit, _lbfgs
from sksparsemax.linear_model._multilabel import label_proportions
from sksparsemax.linear_model._intercept_scaling import (
    MAX_INTERCEPT_SCALE,
    InterceptScaling,
    intercept_scales,
)
from sksparsemax.linear_model._preconditioner import GramPreconditioner
from sksparsemax.losses import FenchelYoungLoss, get_loss
from sksparsemax.transforms import backend


def test_scales_follow_the_softmax_curvature():
    p = np.array([0.5, 0.3, 0.15, 0.05, 1e-9])
    h = p * (1 - p)  # the diagonal of diag(p) - p p^T
    expected = np.minimum(np.maximum(1.0, np.sqrt(h.mean() / h)), MAX_INTERCEPT_SCALE)
    t = intercept_scales(get_loss("softmax"), p)
    np.testing.assert_allclose(t, expected, rtol=1e-12)
    # Steeper than the mean: 1; flatter: larger; a class of probability
    # ~0: capped.
    assert np.all(t[:3] == 1.0) and h[2] >= h.mean() > h[3]
    assert 1.0 < t[3] < MAX_INTERCEPT_SCALE == t[4]


def test_no_scales_where_the_curvature_is_the_same_for_every_class():
    assert intercept_scales(get_loss("softmax"), np.full(4, 0.25)) is None
    # Sparsemax's Hessian is I - 1 1^T / |S| on a full support; a class
    # outside the support has none, and keeps its scale.
    assert intercept_scales(get_loss("sparsemax"), np.array([0.6, 0.3, 0.1])) is None
    assert intercept_scales(get_loss("sparsemax"), np.array([0.6, 0.4, 0.0])) is None


def test_no_scales_without_a_jacobian():
    class Tempered(FenchelYoungLoss):
        def predict_proba(self, Z):
            E = np.exp(Z - Z.max(axis=1, keepdims=True))
            return E / E.sum(axis=1, keepdims=True)

        def omega(self, P):
            return np.sum(P * np.log(np.where(P > 0, P, 1)), axis=1)

    assert intercept_scales(Tempered(), np.array([0.9, 0.05, 0.05])) is None


def _data(n, d, sparse, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.5
    X[:, 1] = X[:, 0] + 0.1 * X[:, 1]
    if sparse:
        X[rng.random((n, d)) < 0.6] = 0
        return sp.csr_matrix(X), rng
    return X, rng


def test_intercept_map_is_symmetric_positive_definite_and_keeps_the_sum():
    t = np.array([1.0, 3.0, 1.5, 10.0])
    for keep_sum in (True, False):
        scaling = InterceptScaling(t, keep_sum)
        M = np.column_stack([scaling.apply(e, np.empty(4)) for e in np.eye(4)])
        np.testing.assert_allclose(M, M.T, atol=1e-14)
        assert np.linalg.eigvalsh(M).min() > 0
        M_inv = np.column_stack([scaling.solve(e, np.empty(4)) for e in np.eye(4)])
        np.testing.assert_allclose(M @ M_inv, np.eye(4), atol=1e-13)
        if keep_sum:  # 1 is an eigenvector: the sum moves as without scales
            np.testing.assert_allclose(M @ np.ones(4), np.ones(4), atol=1e-14)
            # On the differences, the scales: Pi D_t Pi.
            Pi = np.eye(4) - 1 / 4
            np.testing.assert_allclose(M, Pi @ np.diag(t) @ Pi + 1 / 4, atol=1e-14)
        else:
            np.testing.assert_allclose(M, np.diag(t), atol=1e-14)


@pytest.mark.parametrize("keep_sum", [True, False])
@pytest.mark.parametrize("diagonal, path", [(False, "numpy"), (True, "numpy"), (True, "fused")])
def test_scaled_intercepts_are_a_linear_change_of_variables(diagonal, path, keep_sum,
                                                            monkeypatch):
    if path == "fused":  # numba's one pass of the diagonal variant
        pytest.importorskip("numba")
        monkeypatch.setattr(_lbfgs, "MIN_FUSED_COEF", 0)
    n, d, K = 60, 6, 4
    X, rng = _data(n, d, diagonal, seed=5)
    pre = GramPreconditioner(X, K, True, 0.02, diagonal=diagonal)
    plain = GramPreconditioner(X, K, True, 0.02, diagonal=diagonal)
    t = np.array([1.0, 3.0, 1.5, 10.0])
    pre.scale_intercepts(t, keep_sum)
    M = np.column_stack([pre.intercepts.apply(e, np.empty(K)) for e in np.eye(K)])
    n_coef = K * (d + 1)
    v, dv, g = rng.standard_normal((3, n_coef))
    np.testing.assert_allclose(pre.variables(pre.coef(v)), v, atol=1e-12)
    # b = M_t c - W mu: the weights as without the scales, the intercepts mapped.
    mapped_v = v.copy()
    mapped_v[-K:] = M @ v[-K:]
    np.testing.assert_allclose(pre.coef(v), plain.coef(mapped_v), atol=1e-12)
    zero = pre.coef(np.zeros(n_coef))
    with backend("numba" if path == "fused" else "numpy"):
        gv, gmax = pre.gradient_and_max(g)
    assert np.dot(gv, dv) == pytest.approx(np.dot(g, pre.coef(dv) - zero), rel=1e-12)
    np.testing.assert_allclose(gv[-K:], M @ g[-K:], atol=1e-13)
    assert gmax == max(np.abs(g).max(), np.abs(gv).max())


def test_no_scales_without_intercepts():
    X, _ = _data(30, 4, False)
    pre = GramPreconditioner(X, 3, False, 0.1)
    pre.scale_intercepts(np.array([1.0, 2.0, 3.0]), True)
    assert pre.intercepts is None


def _rare_labels(seed=0):
    rng = np.random.default_rng(seed)
    n, d, K = 300, 12, 8
    X = rng.standard_normal((n, d))
    Y = (X[:, :K] + 0.8 * rng.standard_normal((n, K)) > 0.3).astype(float)
    Y[:, 5][np.flatnonzero(Y[:, 5])[3:]] = 0  # a label of 3 samples
    Y[:, 6][np.flatnonzero(Y[:, 6])[1:]] = 0  # a label of 1 sample
    Y[Y.sum(axis=1) == 0, 0] = 1  # every sample has a label
    return X, Y


@pytest.mark.parametrize("make", [
    lambda: (SparsemaxMultiLabel(loss="softmax", C=10.0, tol=1e-10, max_iter=3000),
             *_rare_labels()),
    lambda: (EntmaxClassifier(C=10.0, tol=1e-10, max_iter=3000), *_imbalanced()),
], ids=["softmax multi-label", "1.5-entmax imbalanced"])
def test_scaled_fit_reaches_the_same_minimiser(make, monkeypatch):
    est, X, y = make()
    used = []

    def spy(loss, p):
        t = intercept_scales(loss, p)
        used.append(t)
        return t

    monkeypatch.setattr(_fit, "intercept_scales", spy)
    scaled = est.fit(X, y)
    assert used and used[0] is not None and used[0].max() > 2  # the scales were used
    coef, intercept = scaled.coef_.copy(), scaled.intercept_.copy()
    f_scaled = _objective(scaled, X, y)
    monkeypatch.setattr(_fit, "intercept_scales", lambda loss, p: None)
    plain = est.fit(X, y)
    # The same minimiser: the same objective (the scaled fit's no higher)
    # and the same coefficients, to the flat directions' precision.
    f_plain = _objective(plain, X, y)
    assert f_scaled <= f_plain + 1e-13 * abs(f_plain)
    assert f_plain - f_scaled <= 1e-9 * abs(f_plain)
    np.testing.assert_allclose(coef, plain.coef_, atol=1e-4)
    np.testing.assert_allclose(intercept, plain.intercept_, atol=1e-4)


def _objective(est, X, y):
    """Mean loss plus ``||W||^2 / (2 C n)``, computed here from the fitted model."""
    K = len(est.classes_)
    Z = X @ est.coef_.T + est.intercept_
    target = label_proportions(y)[0] if y.ndim == 2 else y
    loss = est._make_loss(K).loss(Z, target)
    return loss.mean() + np.sum(est.coef_**2) / (2 * est.C * X.shape[0])


def _imbalanced(seed=1):
    rng = np.random.default_rng(seed)
    counts = [400, 200, 60, 6, 2]
    y = np.repeat(np.arange(len(counts)), counts)
    X = rng.standard_normal((y.size, 5)) + 0.7 * np.eye(len(counts))[y, :5]
    return X, y
