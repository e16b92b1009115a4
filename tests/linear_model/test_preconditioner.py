"""The changes of variables that speed up L-BFGS: exact, and what they claim.

:class:`GramPreconditioner` (whitening by the Cholesky factor of the weighted,
centred, regularised Gram matrix) and :class:`RowSpaceReduction` (wide data
solved in the row space of X) must leave the objective and its minimiser
unchanged; the checks below use plain NumPy references and the independent
objective of ``conftest.py``.
"""

import contextlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from sksparsemax import SparsemaxClassifier, SparsemaxMultiLabel
from sksparsemax.linear_model import _lbfgs
from sksparsemax.linear_model._linear_loss import LinearModelLoss
from sksparsemax.linear_model._preconditioner import GramPreconditioner, gram_preconditioner
from sksparsemax.linear_model._row_space import RowSpaceReduction, row_space_reduction
from sksparsemax.linear_model._solver import minimize_lbfgs
from sksparsemax.losses import SparsemaxLoss, check_target
from sksparsemax.transforms import backend


def _data(n, d, sparse, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.5  # nonzero means
    X[:, 1] = X[:, 0] + 0.1 * X[:, 1]  # correlated columns
    if sparse:
        X[rng.random((n, d)) < 0.6] = 0
        return sp.csr_matrix(X), rng
    return X, rng


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_gram_preconditioner_whitens_and_is_a_linear_change_of_variables(
    sparse, fit_intercept, weighted
):
    n, d, K, l2 = 40, 7, 3, 0.05
    X, rng = _data(n, d, sparse)
    s = rng.integers(0, 4, n).astype(float) if weighted else None
    pre = GramPreconditioner(X, K, fit_intercept, l2, s)
    # L L^T is the weighted (centred) Gram plus l2, computed here directly;
    # the preconditioner keeps L^{-1} (lower triangular).
    Xd = X.toarray() if sparse else X
    w = np.ones(n) if s is None else s
    mu = w @ Xd / w.sum() if fit_intercept else np.zeros(d)
    Xc = Xd - mu
    G = (Xc * w[:, None]).T @ Xc / w.sum() + l2 * np.eye(d)
    assert np.array_equal(pre.L_inv, np.tril(pre.L_inv))
    L = np.linalg.inv(pre.L_inv)
    np.testing.assert_allclose(L @ L.T, G, rtol=1e-11, atol=1e-11)
    # coef is linear, variables its inverse, gradient its adjoint.
    n_coef = K * (d + int(fit_intercept))
    v, dv, g = rng.standard_normal((3, n_coef))
    np.testing.assert_allclose(pre.variables(pre.coef(v)), v, atol=1e-12)
    np.testing.assert_allclose(
        pre.coef(v + dv) - pre.coef(v), pre.coef(dv) - pre.coef(np.zeros(n_coef))
    )
    lhs = np.dot(pre.gradient(g), dv)
    rhs = np.dot(g, pre.coef(dv) - pre.coef(np.zeros(n_coef)))
    assert lhs == pytest.approx(rhs, rel=1e-12)


def test_diagonal_gram_uses_a_diagonal_scaling():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((50, 4))
    Q, _ = np.linalg.qr(A - A.mean(axis=0))  # orthonormal, centred columns
    X = Q * np.array([3.0, 1.0, 0.5, 2.0]) * np.sqrt(50)
    pre = GramPreconditioner(X, 2, True, 0.01)
    assert pre.L_inv is None
    np.testing.assert_allclose(pre.scale**2, np.array([9.0, 1.0, 0.25, 4.0]) + 0.01)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_row_space_reduction_gives_the_same_objective(sparse, fit_intercept, weighted):
    n, d, K, l2 = 12, 40, 4, 0.03
    X, rng = _data(n, d, sparse, seed=2)
    s = rng.integers(0, 3, n).astype(float) if weighted else None
    if s is not None:
        s[0] = 0.0  # a row of weight 0 is left out of the basis, not of the scores
    red = RowSpaceReduction(X, fit_intercept, s)
    assert red.n_reduced <= n
    y = rng.integers(0, K, n)
    target = check_target(y, n, K)
    lml = LinearModelLoss(SparsemaxLoss(), fit_intercept)
    v = rng.standard_normal(K * (red.n_reduced + int(fit_intercept)))
    W, b = red.expand(v, K)
    w = lml.pack(W, b)
    # The same scores on every row (weight 0 included) and the same penalty.
    Z_full = lml.raw_prediction(w, X, K)
    Z_red = lml.raw_prediction(v, red.features, K)
    np.testing.assert_allclose(Z_full, Z_red, atol=1e-10)
    V, _ = lml.weight_intercept(v, K)
    assert np.sum(W**2) == pytest.approx(np.sum(V**2), rel=1e-10)
    f_full = lml.loss(w, X, target, K, s, l2)
    f_red = lml.loss(v, red.features, target, K, s, l2)
    assert f_full == pytest.approx(f_red, rel=1e-12)
    # reduce() projects on the row space: a round trip from the reduced side.
    np.testing.assert_allclose(red.reduce(w, K), v, atol=1e-10)


@contextlib.contextmanager
def _plain_lbfgs():
    """Fits inside use plain L-BFGS: no preconditioner, no reduction."""
    import sksparsemax.linear_model._fit as base

    saved = base.row_space_reduction, base.gram_preconditioner_path
    base.row_space_reduction = lambda *a, **k: None
    base.gram_preconditioner_path = lambda *a, **k: (lambda l2, last=False: None)
    try:
        yield
    finally:
        base.row_space_reduction, base.gram_preconditioner_path = saved


def _plain_fit_value(est, X, y):
    """The coefficients reached by plain L-BFGS (no preconditioner, no reduction)."""
    with _plain_lbfgs(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = est.fit(X, y)
    return plain.coef_.copy(), plain.intercept_.copy()


@pytest.mark.parametrize("sparse", [False, True])
def test_wide_fit_matches_the_reference_minimiser(ref, sparse):
    # d >= 2n: fitted in the row space of X; the reference minimises the
    # objective over all d features with BFGS.
    X, rng = _data(30, 90, sparse, seed=3)
    y = rng.integers(0, 3, 30)
    assert row_space_reduction(X, 3, True) is not None
    C = 0.7
    clf = SparsemaxClassifier(C=C, tol=1e-10, max_iter=5000).fit(X, y)
    f_ref = ref.objective(ref.sparsemax_loss_grad, X, y, 3, C)
    theta_ref, value_ref = ref.fit_reference(f_ref)
    value = f_ref(f_ref.pack(clf.coef_, clf.intercept_))[0]
    assert value == pytest.approx(value_ref, rel=1e-7)
    W_ref, b_ref = f_ref.unpack(theta_ref)
    np.testing.assert_allclose(clf.coef_, W_ref, atol=1e-4)
    # and plain L-BFGS on the full problem lands on the same model
    W_plain, b_plain = _plain_fit_value(
        SparsemaxClassifier(C=C, tol=1e-10, max_iter=5000), X, y
    )
    np.testing.assert_allclose(clf.coef_, W_plain, atol=1e-4)
    np.testing.assert_allclose(clf.intercept_, b_plain, atol=1e-4)


def test_wide_multilabel_fit_matches_plain_lbfgs():
    X, rng = _data(25, 80, True, seed=4)
    Y = (rng.random((25, 5)) < 0.35).astype(int)
    Y[Y.sum(axis=1) == 0, 0] = 1
    s = rng.integers(1, 4, 25).astype(float)
    clf = SparsemaxMultiLabel(C=2.0, tol=1e-10, max_iter=5000).fit(X, Y, sample_weight=s)
    with _plain_lbfgs():
        plain = SparsemaxMultiLabel(C=2.0, tol=1e-10, max_iter=5000).fit(X, Y, sample_weight=s)
    np.testing.assert_allclose(clf.coef_, plain.coef_, atol=1e-4)
    np.testing.assert_allclose(clf.predict_proba(X), plain.predict_proba(X), atol=1e-4)


def test_the_gates():
    rng = np.random.default_rng(5)
    tall = rng.standard_normal((500, 20))
    assert gram_preconditioner(tall, 3, True, 1e-3) is not None
    assert row_space_reduction(tall, 3, True) is None  # d < 2n
    # Many features: the d x d Gram would cost more than the iterations it saves.
    # The diagonal only: each feature scaled by its standard deviation.
    wide_text = sp.random(2000, 20000, density=0.001, format="csr", random_state=0)
    diag = gram_preconditioner(wide_text, 5, True, 1e-3)
    assert diag.L_inv is None
    dense = wide_text.toarray()
    np.testing.assert_allclose(diag.scale, np.sqrt(dense.var(axis=0) + 1e-3), rtol=1e-10)
    np.testing.assert_allclose(diag.mean, dense.mean(axis=0), atol=1e-15)
    # ... and n^3 for the kernel too much as well: plain L-BFGS.
    assert row_space_reduction(wide_text, 5, True) is None
    small_wide = sp.random(50, 400, density=0.05, format="csr", random_state=0)
    assert row_space_reduction(small_wide, 5, True) is not None
    assert gram_preconditioner(tall[:, :1], 3, True, 1e-3) is None  # one feature
    # Memory: two d x d matrices at most the size of X (or 2**21 entries).
    import sksparsemax.linear_model._preconditioner as module

    saved = module.MAX_DENSE_ENTRIES
    module.MAX_DENSE_ENTRIES = 0
    try:
        assert gram_preconditioner(tall, 3, True, 1e-3).L_inv is not None  # 800 <= 10000
        assert gram_preconditioner(tall[:10], 40, True, 1e-3).L_inv is None  # 800 > 200
    finally:
        module.MAX_DENSE_ENTRIES = saved


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_diagonal_preconditioner_is_weighted(fit_intercept):
    X, rng = _data(60, 8, True, seed=8)
    s = rng.integers(0, 4, 60).astype(float)
    pre = GramPreconditioner(X, 2, fit_intercept, 0.02, s, diagonal=True)
    # Repeating the rows s times gives the same scaling.
    rep = sp.csr_matrix(np.repeat(X.toarray(), s.astype(int), axis=0))
    same = GramPreconditioner(rep, 2, fit_intercept, 0.02, diagonal=True)
    np.testing.assert_allclose(pre.scale, same.scale, rtol=1e-12)
    v, dv, g = rng.standard_normal((3, 2 * (8 + int(fit_intercept))))
    np.testing.assert_allclose(pre.variables(pre.coef(v)), v, atol=1e-12)
    zero = pre.coef(np.zeros_like(v))
    assert np.dot(pre.gradient(g), dv) == pytest.approx(np.dot(g, pre.coef(dv) - zero))


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("path", ["numpy", "fused"])
def test_gradient_and_max_is_the_chain_rule_and_both_maxima(fit_intercept, path, monkeypatch):
    """The fused pass of the numba backend and the NumPy operations agree."""
    if path == "fused":
        pytest.importorskip("numba")
        monkeypatch.setattr(_lbfgs, "MIN_FUSED_COEF", 0)
    X, rng = _data(80, 9, True, seed=3)
    pre = GramPreconditioner(X, 3, fit_intercept, 0.01, diagonal=True)
    g = rng.standard_normal(3 * (9 + int(fit_intercept)))
    g[4] = 50.0  # the largest |entry| of g_w ...
    with backend("numba" if path == "fused" else "numpy"):
        gv, gmax = pre.gradient_and_max(g)
        g_inf = g.copy()
        g_inf[2] = np.inf
        bad = pre.gradient_and_max(g_inf)[1]
    with backend("numpy"):
        ref = pre.gradient(g)
    np.testing.assert_allclose(gv, ref, rtol=1e-14, atol=1e-14)
    assert gmax == max(np.abs(g).max(), np.abs(gv).max())
    assert not bad <= 1e300  # an infinite entry never passes a stopping test


def test_preconditioned_lbfgs_stops_on_the_original_gradient():
    # A badly conditioned strictly convex quadratic in w: whitened, L-BFGS
    # converges in a couple of iterations, and the stop test is on grad_w.
    rng = np.random.default_rng(6)
    X = rng.standard_normal((200, 10)) * np.logspace(0, 3, 10)
    y = rng.integers(0, 3, 200)
    target = check_target(y, 200, 3)
    lml = LinearModelLoss(SparsemaxLoss(), True)
    w0 = lml.init_zero_coef(3, 10)
    args = (X, target, 3, None, 1e-3)
    pre = GramPreconditioner(X, 3, True, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        w_pre, f_pre, it_pre = minimize_lbfgs(
            lml.loss_gradient, w0, args, max_iter=1000, tol=1e-8, precondition=pre
        )
        w_plain, f_plain, it_plain = minimize_lbfgs(
            lml.loss_gradient, w0, args, max_iter=1000, tol=1e-8
        )
    # Whitened: converged (in w's gradient) in a few iterations; plain L-BFGS
    # on the same problem runs out of its 1000 iterations above it.
    grad = lml.loss_gradient(w_pre, *args)[1]
    assert np.max(np.abs(grad)) <= 1e-8  # the gradient in w ...
    assert np.max(np.abs(pre.gradient(grad))) <= 1e-8  # ... and in v
    assert it_pre < 20 < it_plain
    assert f_pre <= f_plain
    # Started at its own solution it stops at once, with 0 iterations.
    w_again, _, it_again = minimize_lbfgs(
        lml.loss_gradient, w_pre, args, max_iter=1000, tol=1e-3, precondition=pre
    )
    assert it_again == 0
    np.testing.assert_allclose(w_again, w_pre, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(120, 6), (15, 60)])
def test_warm_start_from_the_solution_does_not_move(shape):
    X, rng = _data(*shape, False, seed=7)
    y = rng.integers(0, 3, shape[0])
    clf = SparsemaxClassifier(tol=1e-6, max_iter=1000, warm_start=True).fit(X, y)
    coef = clf.coef_.copy()
    clf.set_params(tol=1e-2).fit(X, y)
    assert clf.n_iter_ == 0
    np.testing.assert_allclose(clf.coef_, coef, atol=1e-10)


@pytest.mark.parametrize("kind", ["dense", "weighted", "sparse"])
def test_a_path_factorises_the_same_gram_at_each_l2(kind):
    """gram_preconditioner_path computes the moments once: each l2 gets the
    preconditioner a fresh GramPreconditioner builds (the same factor, exactly)."""
    from sksparsemax.linear_model._preconditioner import gram_preconditioner_path

    rng = np.random.default_rng(7)
    X = rng.standard_normal((300, 12)) @ rng.standard_normal((12, 12))
    sw = rng.uniform(0.5, 2.0, 300) if kind == "weighted" else None
    if kind == "sparse":
        X = sp.random(400, 12, density=0.3, format="csr", random_state=1)
    at = gram_preconditioner_path(X, 4, True, sw)
    for l2 in (1e-6, 1e-3, 1.0):
        fresh = GramPreconditioner(X, 4, True, l2, sw)
        path = at(l2)
        assert (path.L_inv is None) == (fresh.L_inv is None)
        if fresh.L_inv is None:
            np.testing.assert_array_equal(path.scale, fresh.scale)
        else:
            np.testing.assert_array_equal(path.L_inv, fresh.L_inv)
        np.testing.assert_array_equal(path.mean, fresh.mean)


def test_preconditioner_keeps_one_d_by_d_matrix_and_the_path_its_moments_until_last():
    """The full whitening holds L^{-1} only; the last l2 of a path factorises
    the moments' Gram matrix in place (no copy), after which the path is spent."""
    import tracemalloc

    from sksparsemax.linear_model._preconditioner import GramMoments, gram_preconditioner_path

    rng = np.random.default_rng(3)
    d = 300
    X = rng.standard_normal((2000, d)) @ rng.standard_normal((d, d))
    matrix = 8 * d * d
    moments = GramMoments(X, True)
    tracemalloc.start()
    pre = GramPreconditioner(X, 4, True, 1e-3, moments=moments)  # a copy is factorised
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert pre.L_inv is not None and pre.L_inv.nbytes == matrix
    assert matrix <= held < 1.2 * matrix  # L^{-1}, not L as well
    assert peak < 1.2 * matrix  # the copy, then LAPACK works in place
    assert moments.G is not None and not moments.consumed
    tracemalloc.start()
    last = GramPreconditioner(X, 4, True, 1e-3, moments=moments, overwrite_moments=True)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.2 * matrix  # factorised in the moments' own matrix
    assert moments.consumed and moments.G is None
    np.testing.assert_allclose(last.L_inv, pre.L_inv, rtol=0, atol=1e-12 * np.abs(pre.L_inv).max())
    with pytest.raises(ValueError, match="factorised in place"):
        GramPreconditioner(X, 4, True, 1.0, moments=moments)
    at = gram_preconditioner_path(X, 20, True)  # 20 classes: the full Gram pays off
    first, final = at(1e-2), at(1e-3, last=True)
    assert first.L_inv is not None
    np.testing.assert_allclose(final.L_inv, pre.L_inv, rtol=0, atol=1e-12 * np.abs(pre.L_inv).max())
    with pytest.raises(ValueError, match="last=True"):
        at(1e-4)


@pytest.mark.parametrize("backend_name", ["numba", "numpy"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("d", [103, 200])
def test_whitening_maps_make_at_most_one_coefficient_sized_temporary(d, fit_intercept, backend_name):
    """``coef`` writes W = V L^{-1} into the vector it returns, ``gradient``
    forms g_W - g_b mu^T once and writes its product into its output: beyond
    the returned vector, at most one temporary as long as the coefficients
    (and values equal to the dense formulas)."""
    import tracemalloc

    rng = np.random.default_rng(d)
    K = 14
    X = rng.standard_normal((400, d)) @ rng.standard_normal((d, d))
    with backend(backend_name):
        pre = gram_preconditioner(X, K, fit_intercept, 1e-3)
        assert pre.L_inv is not None
        n_coef = K * (d + int(fit_intercept))
        v, g = rng.standard_normal(n_coef), rng.standard_normal(n_coef)
        pre.coef(v), pre.gradient(g)  # first calls: compilation, caches
        peaks = []
        for f, arg in ((pre.coef, v), (pre.gradient, g)):
            tracemalloc.start()
            result = f(arg)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            assert result.shape == (n_coef,)
    vector = 8 * n_coef
    small = 4096  # NumPy's and einsum's bookkeeping, whatever the size
    assert peaks[0] <= vector + small  # the returned vector only
    assert peaks[1] <= 2 * vector + small  # and R
    # The dense formulas: w = (V L^{-1}, c - W mu), g_v = ((g_W - g_b mu^T) L^{-T}, g_b).
    L_inv = pre.L_inv
    V = v[: K * d].reshape(K, d)
    W = V @ L_inv
    expected_w = np.concatenate([W.ravel(), v[K * d :] - W @ pre.mean]) if fit_intercept else W.ravel()
    np.testing.assert_allclose(pre.coef(v), expected_w, rtol=1e-12, atol=1e-12)
    GW = g[: K * d].reshape(K, d)
    if fit_intercept:
        GW = GW - np.outer(g[K * d :], pre.mean)
    expected_g = (GW @ L_inv.T).ravel()
    if fit_intercept:
        expected_g = np.concatenate([expected_g, g[K * d :]])
    np.testing.assert_allclose(pre.gradient(g), expected_g, rtol=1e-12, atol=1e-12)
