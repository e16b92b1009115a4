"""The alpha-normmax Fenchel-Young loss (``NormmaxLoss``, ``normmax_loss``).

Reference: the ``entmax`` package's ``NormmaxBisectLoss`` (torch, float64,
200 bisection steps), whose value is ``1 - ||p||_alpha + <p - e_y, z>``.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from sksparsemax.linear_model import FenchelYoungClassifier
from sksparsemax.losses import NormmaxLoss, get_loss, loss_names, normmax_loss
from sksparsemax.transforms import backend, normmax, normmax_jvp

try:  # the reference implementation (PyTorch): only the comparisons need it
    import entmax
    import torch
except ImportError:
    entmax = torch = None
needs_entmax = pytest.mark.skipif(
    entmax is None, reason="the entmax package (PyTorch) is not installed"
)

ALPHAS = [1.1, 1.5, 2.0, 3.0, 5.0]


def _scores(seed, n=50, K=6):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, K)) * rng.choice([0.3, 1.0, 3.0], size=(n, 1))
    return Z, rng.integers(K, size=n)


@needs_entmax
@pytest.mark.parametrize("alpha", ALPHAS)
def test_value_matches_entmax_package(alpha):
    Z, y = _scores(1)
    ref = entmax.NormmaxBisectLoss(alpha=alpha, n_iter=200, reduction="none")(
        torch.tensor(Z), torch.tensor(y)).detach().numpy()
    np.testing.assert_allclose(NormmaxLoss(alpha).loss(Z, y), ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(normmax_loss(Z, y, alpha=alpha), ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_gradient_is_p_minus_q_and_finite_differences(alpha):
    Z, y = _scores(2, n=20)
    loss = NormmaxLoss(alpha)
    values, G = loss.loss_gradient(Z, y)
    np.testing.assert_array_equal(values, loss.loss(Z, y))
    expected = normmax(Z, alpha, axis=1)
    expected[np.arange(len(y)), y] -= 1
    np.testing.assert_allclose(G, expected, rtol=0, atol=1e-15)
    rng = np.random.default_rng(3)
    V = rng.standard_normal(Z.shape)
    h = 1e-6
    fd = (loss.loss(Z + h * V, y) - loss.loss(Z - h * V, y)) / (2 * h)
    np.testing.assert_allclose(fd, np.sum(G * V, axis=1), rtol=1e-6, atol=1e-8)
    # Proportions as targets: the same gradient form.
    Q = rng.dirichlet(np.ones(Z.shape[1]), size=len(y))
    np.testing.assert_allclose(loss.gradient(Z, Q), normmax(Z, alpha, axis=1) - Q, atol=1e-15)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_convex_nonnegative_and_zero_at_the_target(alpha):
    loss = NormmaxLoss(alpha)
    rng = np.random.default_rng(4)
    for _ in range(20):
        Z1, Z2 = rng.standard_normal((2, 30, 5)) * rng.choice([0.3, 1.0, 3.0])
        y = rng.integers(5, size=30)
        mid = loss.loss((Z1 + Z2) / 2, y)
        assert np.all(mid <= (loss.loss(Z1, y) + loss.loss(Z2, y)) / 2 + 1e-12)
        assert np.all(loss.loss(Z1, y) >= -1e-15)  # 0 up to rounding
        Q = rng.dirichlet(np.ones(5), size=30)
        assert np.all(loss.loss(Z1, Q) >= -1e-15)
    # A confident correct prediction (a one-hot mapping on the target): 0.
    Z = np.array([[5.0, 0.0, -1.0], [0.0, 3.0, 1.0]])
    np.testing.assert_array_equal(loss.loss(Z, [0, 1]), [0.0, 0.0])
    # The scores whose mapping is the target distribution: 0 as well.
    q = np.array([0.5, 0.3, 0.2, 0.0])
    z = loss._scores_for(q)
    np.testing.assert_allclose(loss.predict_proba(z[None])[0], q, atol=1e-15)
    assert abs(loss.loss(z[None], q[None])[0]) < 1e-15


def test_omega_is_the_norm_minus_one():
    loss = NormmaxLoss(3.0)
    P = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    np.testing.assert_allclose(loss.omega(P), np.sum(P**3, 1) ** (1 / 3) - 1, rtol=1e-15)
    # no underflow for a large alpha
    big = NormmaxLoss(500.0).omega(np.array([[0.1, 0.1, 0.8]]))
    np.testing.assert_allclose(big, [0.8 - 1.0], rtol=1e-12)


def test_masks_float32_and_hessian_product():
    loss = NormmaxLoss(2.5)
    Z = np.array([[1.0, -np.inf, 0.5], [0.0, 0.2, -np.inf]])
    values = loss.loss(Z, [0, 2])
    assert np.isfinite(values[0]) and values[1] == np.inf
    assert loss.gradient(Z, [0, 0])[0, 1] == 0
    Z32 = np.random.default_rng(5).standard_normal((10, 4)).astype(np.float32)
    y = np.arange(10) % 4
    assert loss.loss(Z32, y).dtype == np.float32
    np.testing.assert_allclose(loss.loss(Z32, y), loss.loss(Z32.astype(np.float64), y),
                               rtol=1e-5, atol=1e-6)
    P = loss.predict_proba(Z32.astype(np.float64))
    V = np.ones_like(P)
    np.testing.assert_array_equal(loss.hessian_product(P, V), normmax_jvp(P, V, 2.5, axis=1))


def test_registry_repr_and_errors():
    assert "normmax" in loss_names()
    assert repr(get_loss("normmax", alpha=3)) == "NormmaxLoss(alpha=3.0)"
    assert NormmaxLoss().alpha == 2.0
    with pytest.raises(ValueError, match=r"alpha must be > 1 for normmax"):
        NormmaxLoss(alpha=1.0)
    with pytest.raises(ValueError, match=r"alpha must be a finite number >= 1"):
        normmax_loss([[0.0, 1.0]], [0], alpha=0.3)
    with pytest.raises(ValueError, match=r"Z contains NaN at row 0"):
        NormmaxLoss().loss([[np.nan, 1.0]], [0])


@pytest.mark.parametrize("name", ["numpy", "numba"])
@pytest.mark.parametrize("loss", ["normmax", NormmaxLoss(alpha=3)], ids=repr)
def test_classifier_fits_iris(name, loss):
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with backend(name), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = FenchelYoungClassifier(loss=loss).fit(X, y)
        P = clf.predict_proba(X)
    assert clf.score(X, y) > 0.9
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert np.count_nonzero(P == 0) > 0.2 * P.size  # sparse, with exact zeros
    expected = get_loss(loss).predict_proba(clf.decision_function(X))
    np.testing.assert_allclose(P, expected, atol=1e-12)


def test_classifier_newton_cg_uses_the_jacobian():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = FenchelYoungClassifier(loss="normmax", solver="newton-cg").fit(X, y)
        b = FenchelYoungClassifier(loss="normmax", solver="lbfgs", tol=1e-8,
                                   max_iter=1000).fit(X, y)
    assert a.score(X, y) > 0.9
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-3)
