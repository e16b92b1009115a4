"""The budget sparsemax loss (``BudgetSparsemaxLoss``, ``budget_sparsemax_loss``).

Checked from its definition, :math:`L(z; q) = <p, z> - ||p||^2/2 +
||q_b||^2/2 - <z, q_b>` with ``p = budget_sparsemax(z)`` and the target rule
``q_b = projection of b q onto the capped simplex`` (written here by brute
force over the partitions, independently of the library's projection):
gradient ``p - q_b`` against central differences, convexity, non-negativity,
zero at the minimiser, the target rule, and a fit of
``FenchelYoungClassifier``.
"""

import itertools
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from sksparsemax.linear_model import FenchelYoungClassifier
from sksparsemax.losses import (
    BudgetSparsemaxLoss,
    SparsemaxLoss,
    budget_sparsemax_loss,
    check_target,
    get_loss,
    loss_names,
)
from sksparsemax.transforms import backend, budget_sparsemax

INF = np.inf


def capped_projection(x, b):
    """Projection of one row onto {0 <= p <= 1, sum p = b} (masks -inf), exactly."""
    idx = [i for i in range(len(x)) if np.isfinite(x[i])]
    xf = {i: Fraction(float(x[i])) for i in idx}
    b = Fraction(b)
    for labels in itertools.product((0, 1, 2), repeat=len(idx)):
        Z0 = [xf[i] for i, lab in zip(idx, labels) if lab == 0]
        F = [xf[i] for i, lab in zip(idx, labels) if lab == 1]
        C = [xf[i] for i, lab in zip(idx, labels) if lab == 2]
        if F:
            tau = (sum(F, Fraction(0)) + len(C) - b) / len(F)
            if not all(tau < v < tau + 1 for v in F):
                continue
        elif len(C) == b:
            tau = max(Z0) if Z0 else min(C) - 1
        else:
            continue
        if all(v <= tau for v in Z0) and all(v >= tau + 1 for v in C):
            out = np.zeros(len(x))
            for i in idx:
                out[i] = float(min(max(xf[i] - tau, Fraction(0)), Fraction(1)))
            return out
    raise AssertionError("no projection found")


def reference_loss(z, q, b):
    """The loss of one row from its definition (q a distribution summing to 1)."""
    qb = capped_projection(b * np.asarray(q, dtype=float), b)
    p = budget_sparsemax(z, b)
    return p @ z - 0.5 * p @ p + 0.5 * qb @ qb - z @ qb, p - qb


def _data(seed, n=40, K=5):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, K)) * rng.choice([0.3, 1.0, 3.0], size=(n, 1))
    return Z, rng.integers(K, size=n)


@pytest.mark.parametrize("b", [0.5, 1.0, 1.5, 2.0, 3.0, 5.0])
def test_value_and_gradient_match_the_definition(b):
    Z, y = _data(1)
    Q = np.eye(Z.shape[1])[y]
    Q[::3] = np.random.default_rng(2).dirichlet(np.ones(Z.shape[1]), size=Q[::3].shape[0])
    loss = BudgetSparsemaxLoss(budget=b)
    values, grad = loss.loss_gradient(Z, Q)
    for i in range(Z.shape[0]):
        v, g = reference_loss(Z[i], Q[i], b)
        assert values[i] == pytest.approx(v, abs=1e-12)
        np.testing.assert_allclose(grad[i], g, rtol=0, atol=1e-13)
    np.testing.assert_allclose(budget_sparsemax_loss(Z, Q, budget=b), values, atol=0)


def test_target_rule():
    loss = BudgetSparsemaxLoss(budget=2)
    Z = np.zeros((1, 5))
    # a class index: 1 on the class, (b - 1) / (K - 1) elsewhere
    g = loss.gradient(Z, [1])
    np.testing.assert_allclose(budget_sparsemax(Z, 2) - g, [[0.25, 1, 0.25, 0.25, 0.25]])
    # a b-hot row normalised to sum 1 becomes the b-hot row
    Q = np.array([[0.5, 0.0, 0.5, 0.0, 0.0]])
    np.testing.assert_allclose(budget_sparsemax(Z, 2) - loss.gradient(Z, Q), [[1, 0, 1, 0, 0]])
    assert loss.loss([[5.0, 0.0, 5.0, 0.0, 0.0]], Q)[0] == 0
    # masked classes with zero target are left out: the others share the budget
    Zm = np.array([[0.0, 0.0, -INF, 0.0]])
    P = budget_sparsemax(Zm, 2)
    np.testing.assert_allclose(P - loss.gradient(Zm, [0]), [[1, 0.5, 0, 0.5]])
    assert np.isfinite(loss.loss(Zm, [0])).all()
    # a masked class with positive target probability: +inf, as every loss
    assert loss.loss(Zm, [2])[0] == INF


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_gradient_central_differences(data):
    K = data.draw(st.integers(2, 6))
    b = data.draw(st.floats(0.3, float(K)))
    z = np.array(data.draw(st.lists(st.floats(-2, 2), min_size=K, max_size=K)))
    v = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=K, max_size=K)))
    y = data.draw(st.integers(0, K - 1))
    loss = BudgetSparsemaxLoss(budget=b)
    h = 1e-6
    fd = (loss.loss([z + h * v], [y])[0] - loss.loss([z - h * v], [y])[0]) / (2 * h)
    assert loss.gradient([z], [y])[0] @ v == pytest.approx(fd, abs=1e-6)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_convex_nonnegative_and_zero_at_the_minimiser(data):
    K = data.draw(st.integers(2, 6))
    b = data.draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 2.5, float(K)]).filter(lambda x: x <= K))
    rows = st.lists(st.floats(-3, 3), min_size=K, max_size=K)
    z1, z2 = np.array(data.draw(rows)), np.array(data.draw(rows))
    q = np.random.default_rng(data.draw(st.integers(0, 99))).dirichlet(np.ones(K))
    loss = BudgetSparsemaxLoss(budget=b)
    l1, l2, lm = loss.loss(np.stack([z1, z2, (z1 + z2) / 2]), np.stack([q, q, q]))
    assert lm <= (l1 + l2) / 2 + 1e-12
    assert min(l1, l2, lm) >= -1e-12
    qb = capped_projection(b * q, b)  # a fixed point of the mapping
    assert abs(loss.loss([qb], [q])[0]) <= 1e-12
    np.testing.assert_allclose(loss.gradient([qb], [q]), 0, atol=1e-12)


def test_budget_one_is_the_sparsemax_loss():
    Z, y = _data(3)
    np.testing.assert_allclose(BudgetSparsemaxLoss(1).loss(Z, y), SparsemaxLoss().loss(Z, y),
                               rtol=0, atol=1e-13)


def test_in_place_float32_target_object_and_registry():
    Z, y = _data(4)
    loss = get_loss("budget_sparsemax", budget=2.5)
    assert isinstance(loss, BudgetSparsemaxLoss) and "budget_sparsemax" in loss_names()
    assert repr(loss) == "BudgetSparsemaxLoss(budget=2.5)"
    target = check_target(y, *Z.shape)
    values, grad = loss.loss_gradient(Z, target)
    buf = Z.copy()
    values2, out = loss.loss_gradient(buf, target, out=buf)
    assert out is buf
    np.testing.assert_array_equal(values2, values)
    np.testing.assert_array_equal(out, grad)
    v32, g32 = loss.loss_gradient(Z.astype(np.float32), y)
    assert v32.dtype == np.float32 and g32.dtype == np.float32
    np.testing.assert_allclose(v32, values, atol=1e-5)
    P = loss.predict_proba(Z)
    np.testing.assert_allclose(P.sum(axis=1), 2.5, atol=1e-13)


def test_errors():
    with pytest.raises(ValueError, match="budget must be a finite number > 0"):
        BudgetSparsemaxLoss(budget=0)
    with pytest.raises(ValueError, match="budget must be a single number for the loss"):
        BudgetSparsemaxLoss(budget=[1.0, 2.0])
    with pytest.raises(TypeError, match="budget must be a real number"):
        BudgetSparsemaxLoss(budget="2")
    loss = BudgetSparsemaxLoss(budget=3)
    with pytest.raises(ValueError, match=r"budget=3 exceeds the number of classes that row 0 "
                                         r"can use \(2\)"):
        loss.loss(np.zeros((1, 2)), [0])
    with pytest.raises(ValueError, match=r"row 1 can use \(2\)"):
        loss.loss(np.array([[0.0, 0.0, 0.0], [0.0, -INF, 0.0]]), [0, 0])
    with pytest.raises(ValueError, match="Z contains NaN"):
        loss.loss(np.array([[0.0, np.nan, 0.0]]), [0])


@pytest.mark.parametrize("name", ["numpy", "numba"])
def test_fit_fenchel_young_classifier(name):
    if name == "numba":
        pytest.importorskip("numba")
    X, y = make_classification(300, 8, n_informative=6, n_classes=5, random_state=0)
    with backend(name), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = FenchelYoungClassifier(loss=BudgetSparsemaxLoss(budget=2)).fit(X, y)
        P = clf.predict_proba(X)
    # the loss's rows sum to the budget; the classifier divides by it, so
    # that predict_proba rows are distributions (capped at 1 / budget)
    Pb = clf._make_loss(5).predict_proba(clf.decision_function(X))
    np.testing.assert_allclose(Pb.sum(axis=1), 2.0, atol=1e-12)
    np.testing.assert_allclose(P, Pb / 2.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.all((P >= 0) & (P <= 0.5))
    top2 = np.argsort(-P, axis=1, kind="stable")[:, :2]
    assert np.mean((top2 == y[:, None]).any(axis=1)) > 0.7
    assert clf.score(X, y) > 0.5
    # the fitted objective is at a minimum: the mean gradient of the
    # intercepts (sum over samples of p - q_b) vanishes
    G = clf._make_loss(5).gradient(clf.decision_function(X), y)
    np.testing.assert_allclose(G.mean(axis=0), 0, atol=1e-3)
    # newton-cg minimises the same objective (its Hessian products use the
    # target mapped into the capped simplex)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = FenchelYoungClassifier(loss=BudgetSparsemaxLoss(budget=2), tol=1e-8,
                                   max_iter=500).fit(X, y)
        b = FenchelYoungClassifier(loss=BudgetSparsemaxLoss(budget=2), tol=1e-8,
                                   max_iter=500, solver="newton-cg").fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-4)
