"""The compiled linear kernels (numba backend) against references.

* ``LinearModelLoss.loss_gradient`` through the compiled kernels (sparsemax,
  softmax and top-k losses; dense and CSR ``X``) equals the objective of
  ``conftest.objective`` (plain NumPy, sorted closed-form sparsemax,
  max-shifted log-sum-exp, a stable argsort for the top k, its own packing)
  for every shape class of the
  kernels: rows not a multiple of the dense kernel's block of 4, an odd
  number of classes, one feature, weights (some zero), both target kinds,
  with and without intercept, float32 and float64 data; CSR data with
  empty rows, duplicate and explicit zero entries, 64-bit indices;
* it raises the loss's error on overflowing scores, like the BLAS path;
* it is used exactly where its gate says (CSC data are converted to CSR
  once per fit), and fits agree with the NumPy backend's on dense, CSR and
  CSC data (top-k fits: the same objective);
* the triangular products of the whitening equal NumPy's dense products,
  and the preconditioner gives the same map on both backends.
"""

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("numba")

from sksparsemax import (  # noqa: E402
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)
from sksparsemax.linear_model._linear_loss import LinearModelLoss  # noqa: E402
from sksparsemax.linear_model._preconditioner import (  # noqa: E402
    GramPreconditioner,
    _times_lower,
)
from sksparsemax.losses import _compiled  # noqa: E402
from sksparsemax.losses import (  # noqa: E402
    EntmaxLoss,
    SoftmaxLoss,
    SparsemaxLoss,
    SparseSoftmaxLoss,
    check_target,
)
from sksparsemax.transforms import backend  # noqa: E402


def _problem(n, d, K, proportions, weighted, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if proportions:
        Q = rng.random((n, K)) * (rng.random((n, K)) < 0.6)
        Q[:, 0] += 0.05  # every row has a label
        Q /= Q.sum(axis=1, keepdims=True)
        raw = Q
    else:
        raw = rng.integers(0, K, size=n)
    sw = None
    if weighted:
        sw = rng.uniform(0.2, 3.0, size=n)
        sw[::3] = 0.0
        sw[0] = 1.0
    return X, raw, sw


def _assert_compiled_equals_reference(lml, w, X_fit, target, K, sw, l2, f_ref):
    """The compiled kernel's objective and gradient at ``w`` equal ``f_ref``'s."""
    with backend("numba"):
        assert lml._compiled(X_fit, K) is not None
        value, grad = lml.loss_gradient(w, X_fit, target, K, sw, l2)
    W, b = lml.weight_intercept(w, K)
    value_ref, grad_ref = f_ref(f_ref.pack(W, b))
    gW_ref, gb_ref = f_ref.unpack(grad_ref)
    gW, gb = lml.weight_intercept(grad, K)
    assert value == pytest.approx(value_ref, rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-13)


# The losses with compiled kernels: (the loss, its reference in conftest).
LOSSES = {
    "sparsemax": (SparsemaxLoss, lambda ref: ref.sparsemax_loss_grad),
    "softmax": (SoftmaxLoss, lambda ref: ref.softmax_loss_grad),
    # k=2 is the softmax for K=2, a genuine top-k loss for K >= 3.
    "top2": (lambda: SparseSoftmaxLoss(2), lambda ref: ref.make_topk_loss_grad(2)),
    "top3": (lambda: SparseSoftmaxLoss(3), lambda ref: ref.make_topk_loss_grad(3)),
    "entmax15": (lambda: EntmaxLoss(1.5), lambda ref: ref.entmax15_loss_grad),
}

# The layouts of X with a compiled kernel: dense C-contiguous, and CSR.
LAYOUTS = {"dense": np.ascontiguousarray, "csr": sp.csr_matrix}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("loss_name", LOSSES)
@pytest.mark.parametrize("n", [1, 3, 4, 5, 38])
@pytest.mark.parametrize("d, K", [(1, 2), (7, 3), (6, 4), (5, 5)])
@pytest.mark.parametrize("proportions", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_compiled_kernel_equals_reference_objective(
    ref, layout, loss_name, n, d, K, proportions, weighted, fit_intercept
):
    loss, reference = LOSSES[loss_name]
    X, raw, sw = _problem(n, d, K, proportions, weighted, seed=n + d + K)
    if layout == "csr":
        X[np.abs(X) < 0.6] = 0.0  # about half the entries (and some rows) empty
    C = 0.7
    target = check_target(raw, n, K)
    lml = LinearModelLoss(loss(), fit_intercept)
    rng = np.random.default_rng(1)
    f_ref = ref.objective(
        reference(ref), X, raw, K, C, sample_weight=sw,
        fit_intercept=fit_intercept,
    )
    l2 = 1.0 / (C * (n if sw is None else sw.sum()))
    X_fit = LAYOUTS[layout](X)
    with backend("numba"):
        assert lml._compiled(X_fit, K) is not None
        for scale in (0.3, 3.0):  # small scores (large supports), large ones
            w = scale * rng.normal(size=lml.n_coef(K, d))
            value, grad = lml.loss_gradient(w, X_fit, target, K, sw, l2)
            W, b = lml.weight_intercept(w, K)
            value_ref, grad_ref = f_ref(f_ref.pack(W, b if fit_intercept else None))
            gW_ref, gb_ref = f_ref.unpack(grad_ref)
            gW, gb = lml.weight_intercept(grad, K)
            assert value == pytest.approx(value_ref, rel=1e-12, abs=1e-14)
            np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-14)
            if fit_intercept:
                np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("loss_name", LOSSES)
@pytest.mark.parametrize("proportions", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_dense_kernel_rows_with_few_nonzero_classes(ref, loss_name, proportions, weighted):
    # With many classes, the dense kernel queues the rows whose loss gradient
    # has at most a quarter of its classes nonzero per class, and adds the
    # others in blocks of 4 rows: scores of mixed scales give both kinds of
    # rows, and 203 rows leave every class queue partly filled at the end.
    n, d, K = 203, 13, 20
    loss, reference = LOSSES[loss_name]
    X, raw, sw = _problem(n, d, K, proportions, weighted, seed=K)
    if proportions:  # sparse label proportions, as in multi-label data
        raw = raw * (np.random.default_rng(2).random((n, K)) < 0.15)
        raw[:, 0] += 0.05
        raw /= raw.sum(axis=1, keepdims=True)
    X *= np.where(np.arange(n) % 3 == 0, 0.05, 3.0)[:, None]  # small and large scores
    C = 0.7
    target = check_target(raw, n, K)
    lml = LinearModelLoss(loss(), True)
    f_ref = ref.objective(reference(ref), X, raw, K, C, sample_weight=sw)
    l2 = 1.0 / (C * (n if sw is None else sw.sum()))
    w = np.random.default_rng(3).normal(size=lml.n_coef(K, d))
    _assert_compiled_equals_reference(lml, w, X, target, K, sw, l2, f_ref)
    W, b = lml.weight_intercept(w, K)
    # The queued rows occur (and, with label proportions, the others too):
    # the nonzero counts of the reference's per-sample gradients, on the
    # rows with a nonzero weight.
    _, G = reference(ref)(X @ W.T + b, raw)
    nnz = np.count_nonzero(G, axis=1)[sw != 0 if sw is not None else slice(None)]
    if loss_name != "softmax":  # softmax: every class nonzero
        assert np.any((4 * nnz <= K) & (nnz > 0))
    if proportions:
        assert np.any(4 * nnz > K)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("loss_name", LOSSES)
@pytest.mark.parametrize("proportions", [False, True])
def test_compiled_kernel_float32_sums_in_float64(layout, loss_name, proportions):
    """float32 X is read as it is and summed in float64: equal, to float64
    rounding, to the float64 path on the same (exactly representable) data."""
    X, raw, sw = _problem(53, 9, 5, proportions, True, seed=4)
    X[::4, 2:] = 0.0
    X32 = LAYOUTS[layout](X.astype(np.float32))
    target = check_target(raw, 53, 5)
    lml = LinearModelLoss(LOSSES[loss_name][0](), True)
    w = np.random.default_rng(2).normal(size=lml.n_coef(5, 9))
    with backend("numba"):
        assert lml._compiled(X32, 5) is not None
        f32, g32 = lml.loss_gradient(w, X32, target, 5, sw, 0.01)
    with backend("numpy"):
        f64, g64 = lml.loss_gradient(w, X32.astype(np.float64), target, 5, sw, 0.01)
    assert g32.dtype == np.float64
    assert f32 == pytest.approx(f64, rel=1e-12)
    np.testing.assert_allclose(g32, g64, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("loss_name", LOSSES)
def test_compiled_kernel_overflow_raises_the_loss_error(layout, loss_name):
    X, raw, _ = _problem(9, 3, 3, False, False)
    X = LAYOUTS[layout](np.abs(X) + 1.0)  # every score overflows
    target = check_target(raw, 9, 3)
    lml = LinearModelLoss(LOSSES[loss_name][0](), True)
    w = np.full(lml.n_coef(3, 3), 1e308)
    messages = []
    for name in ("numba", "numpy"):
        with backend(name), np.errstate(over="ignore"):
            with pytest.raises(ValueError, match=r"\+inf") as info:
                lml.loss_gradient(w, X, target, 3, None, 0.1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("K, k", [(20, 3), (20, 5), (24, 8), (25, 5), (20, 9)])
@pytest.mark.parametrize("proportions", [False, True])
def test_top_k_block_kernel_with_ties_across_blocks(ref, layout, K, k, proportions):
    # The top-k loss's linear kernels take blocks of 32 rows by columns (at
    # most 24 classes, k <= 8) and leave a row with more than k scores at
    # least its k-th largest to the row kernel, which keeps the lowest
    # indices; integer scores tie often. 70 rows: two full blocks and a
    # partial one. (25, 5) and (20, 9) are computed row by row.
    n, d = 70, 4
    rng = np.random.default_rng(K + k)
    X = rng.integers(-1, 2, size=(n, d)).astype(float)
    _, raw, sw = _problem(n, d, K, proportions, True, seed=k)
    lml = LinearModelLoss(SparseSoftmaxLoss(k), True)
    w = np.zeros(lml.n_coef(K, d))
    W, b = lml.weight_intercept(w, K)
    W[...] = rng.integers(-2, 3, size=(K, d))
    b[...] = rng.integers(-1, 2, size=K)
    Z = X @ W.T + b
    kth = -np.sort(-Z, axis=1)[:, k - 1]
    at_least = np.count_nonzero(Z >= kth[:, None], axis=1)
    assert np.any(at_least > k) and np.any(at_least == k)  # both kinds of rows
    target = check_target(raw, n, K)
    C = 0.7
    f_ref = ref.objective(ref.make_topk_loss_grad(k), X, raw, K, C, sample_weight=sw)
    l2 = 1.0 / (C * sw.sum())
    _assert_compiled_equals_reference(lml, w, LAYOUTS[layout](X), target, K, sw, l2, f_ref)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("loss_name", LOSSES)
@pytest.mark.parametrize("K", [3, 20])
@pytest.mark.parametrize("bad_row", [0, 31, 32, 45, 69])
def test_compiled_kernel_finds_an_invalid_row_in_any_block(layout, loss_name, K, bad_row):
    # The linear kernels compute blocks of 32 rows: one overflowing row, in
    # the first, middle or last row of a block, gives the loss's error (the
    # NumPy path's message, which names the row), not a value.
    n, d = 70, 3
    X, raw, _ = _problem(n, d, K, False, False)
    # Only this row's scores overflow (to +inf), with the weights below.
    X[bad_row] = 1e300 * (np.abs(X[bad_row]) + 1.0)
    target = check_target(raw, n, K)
    lml = LinearModelLoss(LOSSES[loss_name][0](), True)
    w = np.zeros(lml.n_coef(K, d))
    W, _ = lml.weight_intercept(w, K)
    W[...] = 1e10
    X_fit = LAYOUTS[layout](X)
    messages = []
    for name in ("numba", "numpy"):
        with backend(name), np.errstate(over="ignore"):
            if name == "numba":
                assert lml._compiled(X_fit, K) is not None
            with pytest.raises(ValueError, match=rf"\+inf.*row {bad_row}\b|row {bad_row}\b.*\+inf") as info:
                lml.loss_gradient(w, X_fit, target, K, None, 0.1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _kernel_of(lml, X, K):
    """The compiled entry point and parameters used for ``X``, or None."""
    compiled = lml._compiled(X, K)
    return None if compiled is None else (compiled.kernel, tuple(compiled.params))


def test_compiled_kernel_gate(monkeypatch):
    from sksparsemax.losses import _softmax_numba, _sparse_softmax_numba, _sparsemax_numba

    X = np.random.default_rng(0).normal(size=(20, 6))
    sparsemax = LinearModelLoss(SparsemaxLoss(), True)
    with backend("numba"):
        assert _kernel_of(sparsemax, X, 4) == (_sparsemax_numba.kernel, ())
        assert _kernel_of(sparsemax, sp.csr_matrix(X), 4) == (_sparsemax_numba.kernel, ())
        # The top-k loss: its own kernel for k < K, the softmax's for k >= K.
        top3 = LinearModelLoss(SparseSoftmaxLoss(3), True)
        assert _kernel_of(top3, X, 4) == (_sparse_softmax_numba.kernel, (3.0,))
        assert _kernel_of(top3, sp.csr_matrix(X), 4) == (_sparse_softmax_numba.kernel, (3.0,))
        assert _kernel_of(top3, X, 3) == (_softmax_numba.kernel, ())
        assert _kernel_of(sparsemax, sp.csc_matrix(X), 4) is None  # scipy's
        assert _kernel_of(sparsemax, np.asfortranarray(X), 4) is None
        assert _kernel_of(LinearModelLoss(SoftmaxLoss(), True), X, 4) is not None
        # 1.5-entmax (sort-based) has its kernel; other alphas bisect in NumPy.
        from sksparsemax.losses import _entmax_numba

        assert _kernel_of(LinearModelLoss(EntmaxLoss(1.5), True), X, 4) == (
            _entmax_numba.kernel, ())
        assert _kernel_of(LinearModelLoss(EntmaxLoss(1.7), True), X, 4) is None
        # alpha = 2 and 1 are the sparsemax and softmax losses, kernels included.
        assert _kernel_of(LinearModelLoss(EntmaxLoss(2.0), True), X, 4) == (
            _sparsemax_numba.kernel, ()
        )
        monkeypatch.setattr(_compiled, "MAX_FUSED_COEF", 23)
        assert _kernel_of(sparsemax, X, 4) is None  # 24 weights
        # No size limit for CSR X.
        assert _kernel_of(sparsemax, sp.csr_matrix(X), 4) is not None
        # A fit converts CSC X to CSR (once) for the CSR kernel ...
        csc = sp.csc_matrix(X)
        prepared = sparsemax.prepare_data(csc, 4)
        assert prepared.format == "csr"
        np.testing.assert_array_equal(prepared.toarray(), X)
        # ... and leaves everything else alone.
        assert LinearModelLoss(EntmaxLoss(1.7), True).prepare_data(csc, 4) is csc
        for other in (X, sp.csr_matrix(X)):
            assert sparsemax.prepare_data(other, 4) is other
    with backend("numpy"):
        assert _kernel_of(sparsemax, X, 4) is None
        assert _kernel_of(sparsemax, sp.csr_matrix(X), 4) is None
        assert sparsemax.prepare_data(csc, 4) is csc


@pytest.mark.parametrize("loss_name", LOSSES)
def test_csr_kernel_reads_any_csr_matrix(ref, loss_name):
    """Unsorted column indices, duplicate entries (summed, as scipy does),
    explicit zeros, empty rows and 64-bit indices give the objective of the
    dense matrix they stand for."""
    rng = np.random.default_rng(3)
    n, d, K = 30, 8, 4
    rows = np.repeat(np.arange(n), 5)
    rows = rows[rows % 7 != 3]  # some empty rows
    cols = rng.integers(0, d, size=rows.size)  # duplicates within a row
    vals = rng.normal(size=rows.size)
    vals[::6] = 0.0  # explicit zeros
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))  # not summed yet
    order = rng.permutation(X.indptr[-1])
    for i in range(n):  # shuffle the entries within each row
        lo, hi = X.indptr[i], X.indptr[i + 1]
        seg = lo + np.argsort(order[lo:hi])
        X.indices[lo:hi], X.data[lo:hi] = X.indices[seg], X.data[seg]
    X.has_sorted_indices = False
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    dense = X.toarray()
    y = rng.integers(0, K, size=n)
    loss, reference = LOSSES[loss_name]
    lml = LinearModelLoss(loss(), True)
    w = rng.normal(size=lml.n_coef(K, d))
    with backend("numba"):
        assert lml._compiled(X, K) is not None
        value, grad = lml.loss_gradient(w, X, check_target(y, n, K), K, None, 0.1)
    f_ref = ref.objective(reference(ref), dense, y, K, 1.0 / (0.1 * n))
    W, b = lml.weight_intercept(w, K)
    value_ref, grad_ref = f_ref(f_ref.pack(W, b))
    gW_ref, gb_ref = f_ref.unpack(grad_ref)
    gW, gb = lml.weight_intercept(grad, K)
    assert value == pytest.approx(value_ref, rel=1e-12)
    np.testing.assert_allclose(gW, gW_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "est",
    [SparsemaxClassifier(tol=1e-10, max_iter=2000),
     SparsemaxMultiLabel(tol=1e-10, max_iter=2000),
     SparsemaxMultiLabel(loss="softmax", tol=1e-10, max_iter=2000)],
    ids=["SparsemaxClassifier", "SparsemaxMultiLabel", "SparsemaxMultiLabel-softmax"],
)
@pytest.mark.parametrize("layout", ["dense", "csr", "csc"])
def test_fits_agree_on_both_backends(est, layout):
    X, y, sw = _fit_data(isinstance(est, SparsemaxMultiLabel), layout)
    fits = []
    for name in ("numba", "numpy"):
        with backend(name):
            fits.append(est.fit(X, y, sample_weight=sw))
            fits[-1] = (fits[-1].coef_.copy(), fits[-1].intercept_.copy())
    np.testing.assert_allclose(fits[0][0], fits[1][0], atol=1e-7)
    np.testing.assert_allclose(fits[0][1], fits[1][1], atol=1e-7)


def _fit_data(multilabel, layout):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 12))
    X[:, 1] += 0.8 * X[:, 0]  # correlated: the full whitening is used
    if multilabel:
        y = (X[:, :5] + rng.normal(size=(150, 5)) > 0.5).astype(int)
        y[y.sum(axis=1) == 0, 0] = 1
    else:
        y = np.argmax(X[:, :4] + rng.normal(size=(150, 4)), axis=1)
    sw = rng.uniform(0.5, 2.0, size=150)
    if layout != "dense":
        X[np.abs(X) < 0.5] = 0.0  # about 40% zeros
        X = sp.csr_matrix(X) if layout == "csr" else sp.csc_matrix(X)
    return X, y, sw


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_top_k_fits_agree_on_both_backends(layout):
    """The top-k minimiser lies on kinks, where L-BFGS ends when its line
    search fails or the objective stalls: the two backends' fits (rounded
    differently) reach the same objective to that accuracy (measured: 1.6e-7
    relative apart on the CSR data), not the same coefficients."""
    X, y, sw = _fit_data(False, layout)
    est = SparseSoftmaxClassifier(k=2, tol=1e-10, max_iter=2000)
    lml = LinearModelLoss(SparseSoftmaxLoss(2), True)
    target = check_target(y, 150, 4)
    values = []
    for name in ("numba", "numpy"):
        with backend(name):
            fit = est.fit(X, y, sample_weight=sw)
        w = lml.pack(fit.coef_, fit.intercept_)
        with backend("numpy"):
            values.append(lml.loss(w, X, target, 4, sw, 1.0 / sw.sum()))
    assert values[0] == pytest.approx(values[1], rel=1e-5)


@pytest.mark.parametrize("backend_name", ["numba", "numpy"])
@pytest.mark.parametrize("d", [1, 3, 4, 5, 9, 34, 64, 71, 130])
@pytest.mark.parametrize("K", [1, 2, 3, 6])
def test_triangular_products_equal_dense_products(d, K, backend_name):
    # The suite lifts the size rule (tests/conftest.py), so the numba backend
    # runs its blocked kernels at every d here (130: several row blocks and a
    # remainder); the NumPy backend takes BLAS. Both write into a given
    # (K, d) view of a longer vector.
    rng = np.random.default_rng(d * 10 + K)
    T = np.tril(rng.normal(size=(d, d)))
    V = rng.normal(size=(K, d))
    for transposed, expected in ((False, V @ T), (True, V @ T.T)):
        packed = np.full(K * d + 2, np.nan)
        out = packed[: K * d].reshape(K, d)
        with backend(backend_name):
            _times_lower(V, T, out, transposed=transposed)
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
        assert np.isnan(packed[K * d :]).all()


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_preconditioner_same_map_on_both_backends(fit_intercept):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 11)) @ rng.normal(size=(11, 11))  # correlated
    K = 3
    maps = []
    for name in ("numba", "numpy"):
        with backend(name):
            pre = GramPreconditioner(X, K, fit_intercept, 1e-2)
        assert pre.L_inv is not None
        n_coef = K * (11 + int(fit_intercept))
        v = np.random.default_rng(1).normal(size=n_coef)
        g = np.random.default_rng(2).normal(size=n_coef)
        maps.append((pre.coef(v), pre.gradient(g), pre.variables(pre.coef(v))))
        np.testing.assert_allclose(maps[-1][2], v, rtol=1e-9, atol=1e-9)
    for a, b in zip(maps[0], maps[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
