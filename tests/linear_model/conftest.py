"""Independent references for the tests of :mod:`sksparsemax.linear_model`.

Nothing here calls the library. The losses are written straight from
``shared/reference/MATH.md`` (§1–§4) with plain NumPy and sorting:

* softmax cross-entropy ``logsumexp(z) - q.z`` (max-shifted);
* sparsemax from the sorted closed form, and the sparsemax loss
  ``-q.z + 1/2 sum_{j in S} (z_j^2 - tau^2) + 1/2 ||q||^2``;
* the top-k sparse-softmax loss ``logsumexp(top k of z) - q.z`` by sorting.

``objective`` builds the estimators' objective, the weighted mean loss plus
``||W||^2 / (2 C sum(s))``, with its own packing of the coefficients, and
``fit_reference`` minimises it with ``scipy.optimize.minimize`` (BFGS, tight
tolerance). They reach the tests through the session fixture ``ref``.
"""

import types

import numpy as np
import pytest
from scipy.optimize import minimize


def _as_dist(target, K):
    target = np.asarray(target)
    if target.ndim == 1:
        Q = np.zeros((target.shape[0], K))
        Q[np.arange(target.shape[0]), target] = 1.0
        return Q
    return np.asarray(target, dtype=float)


def softmax_loss_grad(Z, target):
    Z = np.asarray(Z, dtype=float)
    Q = _as_dist(target, Z.shape[1])
    m = Z.max(axis=1, keepdims=True)
    E = np.exp(Z - m)
    s = E.sum(axis=1, keepdims=True)
    lse = (np.log(s) + m)[:, 0]
    return lse - np.sum(Q * Z, axis=1), E / s - Q


def sparsemax_ref(Z):
    """Sparsemax by the sorted closed form (Martins & Astudillo, 2016)."""
    Z = np.atleast_2d(np.asarray(Z, dtype=float))
    n, K = Z.shape
    Zsort = -np.sort(-Z, axis=1)
    cums = np.cumsum(Zsort, axis=1)
    ks = np.arange(1, K + 1)
    cond = 1 + ks * Zsort > cums
    kz = K - np.argmax(cond[:, ::-1], axis=1)  # largest k satisfying cond
    tau = (cums[np.arange(n), kz - 1] - 1) / kz
    return np.maximum(Z - tau[:, None], 0), tau


def sparsemax_loss_grad(Z, target):
    Z = np.asarray(Z, dtype=float)
    Q = _as_dist(target, Z.shape[1])
    P, tau = sparsemax_ref(Z)
    S = P > 0
    half = 0.5 * np.sum(np.where(S, Z**2 - tau[:, None] ** 2, 0.0), axis=1)
    loss = -np.sum(Q * Z, axis=1) + half + 0.5 * np.sum(Q**2, axis=1)
    return loss, P - Q


def entmax15_loss_grad(Z, target):
    """The 1.5-entmax loss by bisection on its threshold (not the sort-based rule).

    ``p = [z/2 - tau]_+^2`` with ``sum p = 1``: ``tau`` lies in ``[max z/2 -
    1, max z/2]``, where the sum decreases from at least 1 to 0; 200 halvings
    pin it to rounding. The loss is ``(<p, z> + H(p)) - (<q, z> + H(q))`` with
    the Tsallis entropy ``H(p) = (1 - sum p^1.5) / 0.75``.
    """
    Z = np.asarray(Z, dtype=float)
    Q = _as_dist(target, Z.shape[1])
    U = Z / 2
    hi = U.max(axis=1)
    lo = hi - 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        total = np.sum(np.maximum(U - mid[:, None], 0.0) ** 2, axis=1)
        lo, hi = np.where(total >= 1, mid, lo), np.where(total >= 1, hi, mid)
    P = np.maximum(U - lo[:, None], 0.0) ** 2
    P /= P.sum(axis=1, keepdims=True)

    def entropy(A):
        return (1.0 - np.sum(A**1.5, axis=1)) / 0.75

    loss = np.sum(P * Z, axis=1) + entropy(P) - np.sum(Q * Z, axis=1) - entropy(Q)
    return loss, P - Q


def make_topk_loss_grad(k):
    def topk_loss_grad(Z, target):
        Z = np.asarray(Z, dtype=float)
        n, K = Z.shape
        Q = _as_dist(target, K)
        order = np.argsort(-Z, axis=1, kind="stable")[:, :k]
        mask = np.zeros_like(Z, dtype=bool)
        mask[np.arange(n)[:, None], order] = True
        m = Z.max(axis=1, keepdims=True)
        E = np.where(mask, np.exp(Z - m), 0.0)
        s = E.sum(axis=1, keepdims=True)
        lse = (np.log(s) + m)[:, 0]
        return lse - np.sum(Q * Z, axis=1), E / s - Q

    return topk_loss_grad


def objective(loss_grad, X, target, K, C, sample_weight=None, fit_intercept=True):
    """Return f(theta) -> (value, grad) with theta = [b (K), W (K*d) in F order].

    A packing different from the library's on purpose.
    """
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=float)
    n, d = X.shape
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
    S = s.sum()

    def unpack(theta):
        if fit_intercept:
            b, W = theta[:K], theta[K:].reshape((K, d), order="F")
        else:
            b, W = np.zeros(K), theta.reshape((K, d), order="F")
        return W, b

    def f(theta):
        W, b = unpack(theta)
        Z = X @ W.T + b
        loss, G = loss_grad(Z, target)
        value = np.dot(s, loss) / S + 0.5 / (C * S) * np.sum(W * W)
        Gs = G * (s / S)[:, None]
        gW = Gs.T @ X + W / (C * S)
        gb = Gs.sum(axis=0)
        parts = ([gb] if fit_intercept else []) + [gW.ravel(order="F")]
        return value, np.concatenate(parts)

    def pack(W, b):
        parts = ([np.asarray(b, float)] if fit_intercept else []) + [
            np.asarray(W, float).ravel(order="F")
        ]
        return np.concatenate(parts)

    f.unpack, f.pack, f.n_theta = unpack, pack, K * (d + int(fit_intercept))
    return f


def fit_reference(f, theta0=None):
    """Minimise f (value, grad) by BFGS to a tight tolerance."""
    theta0 = np.zeros(f.n_theta) if theta0 is None else theta0
    res = minimize(f, theta0, jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 20000})
    return res.x, res.fun


@pytest.fixture(scope="session")
def ref():
    return types.SimpleNamespace(
        softmax_loss_grad=softmax_loss_grad,
        sparsemax=sparsemax_ref,
        sparsemax_loss_grad=sparsemax_loss_grad,
        make_topk_loss_grad=make_topk_loss_grad,
        entmax15_loss_grad=entmax15_loss_grad,
        objective=objective,
        fit_reference=fit_reference,
    )
