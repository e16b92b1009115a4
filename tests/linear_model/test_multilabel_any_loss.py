"""SparsemaxMultiLabel with every loss of the library (by name or instance).

The fit is checked by its first-order optimality condition, computed here
from the loss's public gradient (itself checked against finite differences
in tests/losses): at the returned coefficients the gradient of
``mean_i L(W x_i + b; q_i) + ||W||^2 / (2 C n)`` vanishes. The prediction
rule is checked against its definition: the labels whose proportion
``predict_proba(scale * z)`` exceeds the threshold, and the top label.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_multilabel_classification
from sklearn.preprocessing import StandardScaler

from sksparsemax.linear_model import SparsemaxMultiLabel
from sksparsemax.linear_model._multilabel import label_proportions
from sksparsemax.losses import EntmaxLoss, FenchelYoungLoss, get_loss, loss_names


class _TemperedSparsemax(FenchelYoungLoss):
    """A user's loss: sparsemax of z / t (Omega = t/2 ||p||^2)."""

    def __init__(self, t=2.0):
        self.t = t

    def predict_proba(self, Z):
        from sksparsemax.transforms import sparsemax

        return sparsemax(np.asarray(Z) / self.t, axis=1)

    def omega(self, P):
        return 0.5 * self.t * np.einsum("ij,ij->i", P, P)


def _losses():
    cases = [(name, name) for name in loss_names()]
    cases += [("entmax-1.3", EntmaxLoss(alpha=1.3)), ("user", _TemperedSparsemax(2.0))]
    if "normmax" in loss_names():
        cases.append(("normmax-3", get_loss("normmax", alpha=3.0)))
    if "budget_sparsemax" in loss_names():
        cases.append(("budget-1.5", get_loss("budget_sparsemax", budget=1.5)))
    return cases


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(
        n_samples=150, n_features=6, n_classes=5, allow_unlabeled=False, random_state=1
    )
    return StandardScaler().fit_transform(X), Y


@pytest.mark.parametrize("name, loss", _losses(), ids=[c[0] for c in _losses()])
def test_fit_is_optimal_and_the_rule_holds(data, name, loss):
    X, Y = data
    C = 0.7
    est = SparsemaxMultiLabel(C=C, loss=loss, tol=1e-9, max_iter=3000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kinked losses may stop on the stall rule
        est.fit(X, Y)
    Q, _ = label_proportions(Y)
    n = X.shape[0]
    Z = X @ est.coef_.T + est.intercept_
    base = get_loss(loss)
    G = base.gradient(Z, Q)
    grad_W = G.T @ X / n + est.coef_ / (C * n)
    grad_b = G.mean(axis=0)
    smooth = base.is_smooth(Y.shape[1])
    assert np.abs(grad_W).max() <= (1e-6 if smooth else 1e-3), name
    assert np.abs(grad_b).max() <= (1e-6 if smooth else 1e-3), name
    # predict_proba is the loss's mapping of the scores, as proportions
    # (budget sparsemax's rows sum to the budget: divided by it)
    np.testing.assert_allclose(est.predict_proba(X), base.predict_proba(Z) / base.row_sum,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # the prediction rule, from its definition
    for scale, threshold in [(1.0, None), (2.0, 0.1)]:
        est.set_params(scale=scale, threshold=threshold)
        if name == "softmax":
            P, thr = base.predict_proba(Z), (1 / Y.shape[1] if threshold is None else threshold)
        else:
            # the threshold applies to proportions (what predict_proba returns)
            P = base.predict_proba(scale * Z) / base.row_sum
            thr = threshold or 0.0
        expected = P > thr
        expected[np.arange(n), np.argmax(Z, axis=1)] = True
        np.testing.assert_array_equal(est.predict(X), expected.astype(int), err_msg=name)


def test_every_registered_name_is_accepted():
    for name in loss_names():
        assert SparsemaxMultiLabel(loss=name).get_params()["loss"] == name
    with pytest.raises(ValueError, match="loss"):
        SparsemaxMultiLabel(loss="hinge").fit(np.zeros((4, 2)), np.eye(4, 2))
