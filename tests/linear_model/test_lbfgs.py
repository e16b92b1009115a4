"""The library's L-BFGS (``linear_model._lbfgs``) against independent references.

- scipy's L-BFGS-B on the same objectives: same minimiser, comparable work;
- the two-loop recursion (Nocedal and Wright, Algorithm 7.4), written here,
  for the direction of the compact form;
- the explicit Gram matrix of the stored pairs, for the one updated without
  touching them;
- the explicit gradients and iterates of a run, for the kink certificate,
  and a brute-force search over supports for its small QP.
"""

import contextlib
import importlib.util
import itertools

import numpy as np
import pytest
from scipy.optimize import minimize, rosen, rosen_der
from scipy.special import logsumexp

from sksparsemax.linear_model import _lbfgs
from sksparsemax.linear_model._lbfgs import lbfgs
from sksparsemax.transforms import backend


def _logistic(seed=0, n=400, d=20, K=4, l2=1e-2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 3.0, size=d)
    Y = np.eye(K)[rng.integers(0, K, n)]

    def f(w):
        W = w.reshape(d, K)
        Z = X @ W
        L = logsumexp(Z, axis=1)
        P = np.exp(Z - L[:, None])
        return (L - (Z * Y).sum(1)).mean() + 0.5 * l2 * w @ w, (X.T @ (P - Y) / n).ravel() + l2 * w

    return f, d * K


@pytest.mark.parametrize("n", [2, 10, 40])
def test_rosenbrock_as_lbfgsb(n):
    x0 = np.random.default_rng(n).normal(size=n)
    fun = lambda x: (rosen(x), rosen_der(x))  # noqa: E731
    ours = lbfgs(fun, x0, max_iter=10000, gtol=1e-9, ftol=0.0)
    ref = minimize(fun, x0, jac=True, method="L-BFGS-B",
                   options=dict(maxiter=10000, gtol=1e-9, ftol=0.0))
    assert ours.status == 0 and ref.status == 0
    np.testing.assert_allclose(ours.x, np.ones(n), atol=1e-7)
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-7)
    assert ours.nit <= 1.5 * ref.nit + 5
    assert ours.nfev <= 1.5 * ref.nfev + 5
    assert np.max(np.abs(ours.jac)) <= 1e-9


@pytest.mark.parametrize("seed", [0, 1])
def test_logistic_as_lbfgsb(seed):
    f, n = _logistic(seed)
    ours = lbfgs(f, np.zeros(n), max_iter=1000, gtol=1e-10, ftol=64 * np.finfo(float).eps)
    ref = minimize(f, np.zeros(n), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=1000, gtol=1e-10, ftol=64 * np.finfo(float).eps))
    assert ours.status == 0
    assert abs(ours.fun - ref.fun) <= 1e-12 * abs(ref.fun)
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-6)
    assert ours.nit <= 1.5 * ref.nit + 5


def _two_loop(g, S, Y):
    """-H g by the two-loop recursion, pairs oldest first."""
    q = g.copy()
    alphas = []
    for s, y in zip(S[::-1], Y[::-1]):
        a = (s @ q) / (s @ y)
        alphas.append(a)
        q -= a * y
    r = (S[-1] @ Y[-1]) / (Y[-1] @ Y[-1]) * q
    for (s, y), a in zip(zip(S, Y), alphas[::-1]):
        b = (y @ r) / (s @ y)
        r += (a - b) * s
    return -r


HAS_NUMBA = importlib.util.find_spec("numba") is not None
PATHS = ["numpy", pytest.param("fused", marks=pytest.mark.skipif(
    not HAS_NUMBA, reason="the fused passes need numba"))]


@contextlib.contextmanager
def _path(mp, name):
    """The NumPy operations, or the numba backend's fused passes at every size."""
    if name == "numpy":
        with backend("numpy"):
            yield
        return
    mp.setattr(_lbfgs, "MIN_FUSED_COEF", 0)
    with backend("numba"):
        yield


@pytest.mark.parametrize("path", PATHS)
def test_compact_direction_and_vector_free_gram(path):
    """Every direction equals the two-loop one; the Gram matrix equals B B^T."""
    f, n = _logistic(2)
    checked = []
    original = _lbfgs._Pairs.direction

    def direction(self, g, Bg):
        d, Bd, slope = original(self, g, Bg)
        assert slope == pytest.approx(float(g @ d), rel=1e-12)
        assert (self.kernels is not None) == (path == "fused")
        rows = self.rows
        if rows:
            B = self.B[:rows]
            np.testing.assert_allclose(self.G[:rows, :rows], B @ B.T, rtol=1e-9, atol=1e-13)
            np.testing.assert_allclose(Bg, B @ g, rtol=1e-9, atol=1e-13)
            np.testing.assert_allclose(Bd, B @ d, rtol=1e-8, atol=1e-12)
            slots = self.order
            S = np.array([self.B[2 * j] for j in slots])
            Y = np.array([self.B[2 * j + 1] for j in slots])
            np.testing.assert_allclose(d, _two_loop(g, S, Y), rtol=1e-8, atol=1e-12)
            checked.append(len(slots))
        return d, Bd, slope

    with pytest.MonkeyPatch.context() as mp, _path(mp, path):
        mp.setattr(_lbfgs._Pairs, "direction", direction)
        res = lbfgs(f, np.zeros(n), max_iter=60, gtol=1e-12, ftol=0.0, m=5)
    assert res.nit > 10
    assert max(checked) == 5  # the circular store was full and wrapped round


@pytest.mark.skipif(not HAS_NUMBA, reason="the fused passes need numba")
def test_fused_passes_take_the_numpy_iterations():
    """The fused passes change the rounding only: same minimiser, same work."""
    f, n = _logistic(4)
    runs = {}
    for path in ("numpy", "fused"):
        with pytest.MonkeyPatch.context() as mp, _path(mp, path):
            runs[path] = lbfgs(f, np.zeros(n), max_iter=1000, gtol=1e-10,
                               ftol=64 * np.finfo(float).eps)
    a, b = runs["numpy"], runs["fused"]
    assert a.status == b.status == 0
    assert abs(a.nit - b.nit) <= 2
    np.testing.assert_allclose(b.x, a.x, atol=1e-7)
    assert abs(a.fun - b.fun) <= 1e-13 * abs(a.fun)


def test_gtol_none_leaves_the_gradient_test_to_the_callback():
    f, n = _logistic(3)
    seen = []

    def callback(result):
        seen.append(result.fun)
        if len(seen) == 4:
            raise StopIteration

    res = lbfgs(f, np.zeros(n), max_iter=50, gtol=None, ftol=0.0, callback=callback)
    assert res.nit == 4 and res.status == 0 and res.message == "stopped by the callback"
    # At a zero gradient gtol=0 stops at once by the gradient test; None never
    # applies that test.
    quadratic = lambda x: (float(x @ x), 2 * x)  # noqa: E731
    res0 = lbfgs(quadratic, np.zeros(3), max_iter=5, gtol=0.0, ftol=0.0)
    assert res0.nit == 0 and res0.message == "max |gradient| <= gtol"
    res0 = lbfgs(quadratic, np.zeros(3), max_iter=5, gtol=None, ftol=0.0)
    assert res0.message != "max |gradient| <= gtol"


def test_stopping_rules_and_status():
    f, n = _logistic(3)
    res = lbfgs(f, np.zeros(n), max_iter=3, gtol=1e-12, ftol=0.0)
    assert (res.status, res.nit) == (1, 3)

    calls = []

    def callback(intermediate):
        calls.append(intermediate.fun)
        if len(calls) == 4:
            raise StopIteration

    res = lbfgs(f, np.zeros(n), max_iter=100, gtol=1e-12, ftol=0.0, callback=callback)
    assert (res.status, res.nit, len(calls)) == (0, 4, 4)
    assert calls == sorted(calls, reverse=True)  # every step decreases f

    # Started at the minimiser: no iteration.
    done = lbfgs(f, np.zeros(n), max_iter=1000, gtol=1e-8, ftol=0.0)
    again = lbfgs(f, done.x, max_iter=1000, gtol=1e-8, ftol=0.0, initial=f(done.x))
    assert (again.status, again.nit, again.nfev) == (0, 0, 0)

    # A wrong gradient: no step satisfies the Wolfe conditions.
    bad = lambda x: (float(x @ x), -x)  # noqa: E731
    res = lbfgs(bad, np.ones(3), max_iter=100, gtol=1e-8, ftol=0.0)
    assert res.status == 2


def test_min_norm_in_simplex_against_brute_force():
    """The exact QP solution: the best over all supports of the KKT solutions."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = int(rng.integers(2, 7))
        A = rng.normal(size=(8, p)) + rng.normal(size=(8, 1))
        Q = A.T @ A
        lam = _lbfgs._min_norm_in_simplex(Q)
        assert lam.min() >= 0 and abs(lam.sum() - 1) < 1e-12
        best = np.inf
        for r in range(1, p + 1):
            for support in itertools.combinations(range(p), r):
                idx = list(support)
                # min l^T Q_SS l with sum l = 1: l ~ Q_SS^{-1} 1, if nonnegative
                try:
                    u = np.linalg.solve(Q[np.ix_(idx, idx)], np.ones(r))
                except np.linalg.LinAlgError:
                    continue
                if u.sum() <= 0 or (u < -1e-12).any():
                    continue
                full = np.zeros(p)
                full[idx] = u / u.sum()
                best = min(best, full @ Q @ full)
        assert lam @ Q @ lam <= best * (1 + 1e-9) + 1e-15


def _piecewise(seed=0, n=30, m=60, mu=1.0):
    """A convex objective with kinks at its minimiser: sum of |a_i x - b_i| + mu/2 |x|^2."""
    rng = np.random.default_rng(seed)
    A, b = rng.normal(size=(m, n)), rng.normal(size=m)

    def f(x):
        r = A @ x - b
        return np.abs(r).sum() / m + 0.5 * mu * x @ x, A.T @ np.sign(r) / m + mu * x

    return f, n


def test_kink_certificate_is_what_the_explicit_gradients_give():
    """Q (the Gram matrix of the gradients) and the eps_j from the pairs alone
    equal those computed from the stored gradients and iterates."""
    f, n = _piecewise()
    xs, gs, fs = [], [], []

    def callback(intermediate):
        value, grad = f(intermediate.x)
        xs.append(intermediate.x.copy())
        gs.append(grad)
        fs.append(value)

    seen = []
    original = _lbfgs._Pairs.kink_certificate

    def certificate(self, g, value, Bg, tol):
        J = self.n_chain
        if J >= 2 and len(gs) > J:
            G = np.array(gs[-(J + 1):])
            X = np.array(xs[-(J + 1):])
            F = np.array(fs[-(J + 1):])
            Q = G @ G.T
            eps = F[-1] - F - np.einsum("ij,ij->i", G, X[-1] - X)
            lam = _lbfgs._min_norm_in_simplex(Q)
            v = lam @ G
            passes = np.max(np.abs(v)) <= tol and lam @ np.maximum(eps, 0) <= tol * abs(value)
            got = original(self, g, value, Bg, tol)
            seen.append((got, passes, np.max(np.abs(v))))
            return got
        return original(self, g, value, Bg, tol)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_lbfgs._Pairs, "kink_certificate", certificate)
        lbfgs(f, np.zeros(n), max_iter=200, gtol=0.0, ftol=0.0, callback=callback,
              kink_tol=1e-3)
    assert len(seen) > 20
    for got, passes, vmax in seen:
        if abs(vmax - 1e-3) > 1e-9:  # not at the decision boundary
            assert got == passes


def test_kink_certificate_stops_near_the_optimum():
    """On a separable kinked objective with a known minimiser, the certified
    stop is within the certified accuracy and much earlier than max_iter."""
    rng = np.random.default_rng(1)
    c = rng.uniform(-0.5, 0.5, size=5)  # |c| < 1: the minimiser x = c is a kink

    def f(x):
        return np.abs(x - c).sum() + 0.5 * x @ x, np.sign(x - c) + x

    f_star = f(c)[0]
    res = lbfgs(f, np.zeros(5), max_iter=2000, gtol=1e-12, ftol=0.0, kink_tol=1e-3)
    assert res.status == 0 and "convex combination" in res.message
    assert res.nit < 2000
    # With v an eps-subgradient: f(x) - f* <= |v|_2 |x - x*| + eps, all small.
    assert res.fun - f_star <= 1e-2 * f_star
