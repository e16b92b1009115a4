"""A loss the library does not ship, written in this one file, fitted by the estimators.

Sparsemax with a temperature ``t``: the regulariser
``Omega(p) = t / 2 (||p||^2 - 1)`` on the simplex, whose mapping is the
Euclidean projection of ``z / t`` (written here with its own sort, not the
library's). Subclassing :class:`FenchelYoungLoss` with ``predict_proba`` and
``omega`` is all it takes: :class:`FenchelYoungClassifier` and
:class:`SparsemaxMultiLabel` fit it, and the fitted objective equals the one
``scipy.optimize.minimize`` reaches on the documented objective

    1/n sum_i L(W x_i + b; q_i) + ||W||^2 / (2 C n),
    L(z; q) = <p, z> - Omega(p) + Omega(q) - <z, q>,  p = mapping(z),

computed here from the two methods alone, with its gradient ``X^T (P - Q)``.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from sksparsemax import FenchelYoungClassifier, SparsemaxMultiLabel
from sksparsemax.losses import FenchelYoungLoss


class TemperedSparsemaxLoss(FenchelYoungLoss):
    """Sparsemax with temperature ``t``: Omega(p) = t/2 (||p||^2 - 1)."""

    def __init__(self, t=2.0):
        self.t = t

    def predict_proba(self, Z):
        U = np.asarray(Z, dtype=np.float64) / self.t
        # Sort-based projection onto the simplex (Held et al.; Duchi et al.).
        S = -np.sort(-U, axis=1)
        cumsum = np.cumsum(S, axis=1) - 1.0
        ks = np.arange(1, U.shape[1] + 1)
        with np.errstate(invalid="ignore"):  # -inf masks: inf - inf
            support = S * ks > cumsum
        size = support.sum(axis=1)
        tau = cumsum[np.arange(U.shape[0]), size - 1] / size
        return np.maximum(U - tau[:, None], 0.0)

    def omega(self, P):
        return 0.5 * self.t * (np.einsum("ij,ij->i", P, P) - 1.0)


def _reference_objective(loss, X, Q, C, fit_intercept):
    """The documented objective and its gradient, from predict_proba and omega only."""
    n, d = X.shape
    K = Q.shape[1]
    omega_q = loss.omega(Q)

    def fun(theta):
        W = theta[: K * d].reshape(K, d)
        b = theta[K * d :] if fit_intercept else np.zeros(K)
        Z = np.asarray(X @ W.T) + b
        P = loss.predict_proba(Z)
        values = np.einsum("ij,ij->i", P, Z) - loss.omega(P) + omega_q
        values -= np.einsum("ij,ij->i", Q, Z)
        G = (P - Q) / n
        grad_W = np.asarray(X.T @ G).T + W / (C * n)
        f = values.mean() + 0.5 * np.sum(W * W) / (C * n)
        grad = [grad_W.ravel()] + ([G.sum(axis=0)] if fit_intercept else [])
        return f, np.concatenate(grad)

    return fun


def _problem(sparse, seed=0, n=120, d=6, K=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(K, d))
    y = np.argmax(X @ W.T + rng.gumbel(size=(n, K)), axis=1)
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    return X, y


def _theta(est, fit_intercept):
    parts = [est.coef_.astype(np.float64).ravel()]
    if fit_intercept:
        parts.append(est.intercept_.astype(np.float64))
    return np.concatenate(parts)


def _scipy_optimum(fun, n_theta):
    result = minimize(
        fun, np.zeros(n_theta), jac=True, method="L-BFGS-B",
        options={"maxiter": 20000, "gtol": 1e-12, "ftol": 1e-15, "maxcor": 30},
    )
    return result.fun


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("solver", ["lbfgs", "newton-cg"])
def test_fenchel_young_classifier_fits_a_user_loss(sparse, fit_intercept, solver):
    X, y = _problem(sparse)
    loss = TemperedSparsemaxLoss(t=2.0)
    if solver == "newton-cg":
        # The user loss has no jacobian_product: newton-cg says so.
        clf = FenchelYoungClassifier(loss=loss, solver=solver)
        with pytest.raises(NotImplementedError, match="jacobian_product"):
            clf.fit(X, y)
        return
    C = 0.5
    clf = FenchelYoungClassifier(
        loss=loss, C=C, fit_intercept=fit_intercept, tol=1e-10, max_iter=5000
    ).fit(X, y)
    Q = np.eye(4)[y]
    fun = _reference_objective(loss, X, Q, C, fit_intercept)
    ours = fun(_theta(clf, fit_intercept))[0]
    best = _scipy_optimum(fun, 4 * X.shape[1] + 4 * int(fit_intercept))
    assert ours == pytest.approx(best, rel=1e-6)
    # predict_proba is the loss's own mapping: exact zeros, rows on the simplex.
    P = clf.predict_proba(X)
    Z = np.asarray(X @ clf.coef_.T) + clf.intercept_
    np.testing.assert_allclose(P, loss.predict_proba(Z), atol=1e-12)
    assert (P == 0).any()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_multilabel_fits_a_user_loss_on_proportions(sparse):
    X, _ = _problem(sparse, seed=3)
    rng = np.random.default_rng(4)
    n, K = X.shape[0], 5
    Y = (rng.random((n, K)) < 0.35).astype(int)
    Y[np.arange(n), rng.integers(0, K, n)] = 1  # every row has a label
    loss = TemperedSparsemaxLoss(t=0.5)
    C = 2.0
    est = SparsemaxMultiLabel(C=C, loss=loss, tol=1e-10, max_iter=5000).fit(X, Y)
    Q = Y / Y.sum(axis=1, keepdims=True)
    fun = _reference_objective(loss, X, Q, C, True)
    ours = fun(_theta(est, True))[0]
    best = _scipy_optimum(fun, K * X.shape[1] + K)
    assert ours == pytest.approx(best, rel=1e-6)
    # The prediction rule reads the loss's mapping: the support, never empty.
    pred = est.predict(X)
    P = est.predict_proba(X)
    np.testing.assert_array_equal(pred.astype(bool) | (P == P.max(axis=1, keepdims=True)),
                                  pred.astype(bool))
    np.testing.assert_array_equal(pred, (P > 0) | (P == P.max(axis=1, keepdims=True)))


def test_the_user_loss_is_the_shipped_one_at_temperature_one():
    """At t = 1 the loss is the sparsemax loss: same values and gradients."""
    from sksparsemax.losses import SparsemaxLoss

    rng = np.random.default_rng(0)
    Z = rng.normal(scale=2.0, size=(50, 6))
    Z[0, 2] = -np.inf  # a masked class
    y = rng.integers(0, 6, 50)
    y[0] = 0
    ours = TemperedSparsemaxLoss(t=1.0).loss_gradient(Z, y)
    shipped = SparsemaxLoss().loss_gradient(Z, y)
    np.testing.assert_allclose(ours[0], shipped[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours[1], shipped[1], atol=1e-12)
