"""The compiled kernels' size rules: small problems take the NumPy path.

Below ``MIN_FUSED_WORK`` multiply-adds per evaluation (and score matrices
below ``MIN_ROWS_ENTRIES`` entries, triangular products below
``_MIN_KERNEL_FEATURES`` features) the NumPy path is used even with numba
installed, so that a first fit on small data compiles nothing; above, the
kernels. Both give the same fit (checked against each other here); the
kernels' own correctness is tested in test_numba_linear.py.
"""

import numpy as np
import pytest

from sksparsemax import SparsemaxClassifier
from sksparsemax.linear_model import _preconditioner
from sksparsemax.linear_model._linear_loss import LinearModelLoss
from sksparsemax.losses import _compiled, get_loss

pytest.importorskip("numba")
from sksparsemax.transforms import backend  # noqa: E402


def test_small_dense_problems_take_the_numpy_path(real_size_rules):
    loss = LinearModelLoss(get_loss("sparsemax"), True)
    with backend("numba"):
        small = np.ones((1000, 20))  # 1000 * 20 * 5 = 1e5 < MIN_FUSED_WORK
        assert 1000 * 20 * 5 < _compiled.MIN_FUSED_WORK
        assert loss._compiled(small, 5) is None
        large = np.ones((5000, 20))
        assert 5000 * 20 * 5 >= _compiled.MIN_FUSED_WORK
        assert loss._compiled(large, 5) is not None
        compiled = get_loss("sparsemax").compiled(5)
        assert not compiled.applies_to_rows(np.ones((100, 5)))
        assert compiled.applies_to_rows(np.ones((_compiled.MIN_ROWS_ENTRIES // 5 + 1, 5)))
    assert _preconditioner._MIN_KERNEL_FEATURES > 20


def test_a_kernel_slow_to_compile_applies_from_larger_problems(real_size_rules):
    """1.5-entmax's kernel (compile weight 16): not for the main job's digits
    data (1257 x 64, 10 classes), dense or CSR; for 16 times the usual work."""
    import scipy.sparse as sp

    entmax = LinearModelLoss(get_loss("entmax", alpha=1.5), True)
    sparsemax = LinearModelLoss(get_loss("sparsemax"), True)
    weight = get_loss("entmax", alpha=1.5)._kernel_compile_weight
    assert weight == 16
    with backend("numba"):
        digits = np.ones((1257, 64))
        assert sparsemax._compiled(digits, 10) is not None
        assert entmax._compiled(digits, 10) is None
        assert entmax._compiled(sp.csr_matrix(digits), 10) is None
        n = weight * _compiled.MIN_FUSED_WORK // (64 * 10) + 1
        assert entmax._compiled(np.ones((n, 64)), 10) is not None
        assert entmax._compiled(sp.csr_matrix(np.ones((n, 64))), 10) is not None
        compiled = get_loss("entmax", alpha=1.5).compiled(10)
        rows = -(-_compiled.MIN_ROWS_ENTRIES * weight // 10)  # the smallest count that applies
        assert not compiled.applies_to_rows(np.ones((rows - 1, 10)))
        assert compiled.applies_to_rows(np.ones((rows, 10)))


def test_the_fit_is_the_same_either_side_of_the_rules(real_size_rules, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 20))
    y = np.argmax(X @ rng.standard_normal((20, 5)) + rng.gumbel(size=(1000, 5)), axis=1)
    with backend("numba"):
        numpy_path = SparsemaxClassifier(tol=1e-10, max_iter=500).fit(X, y)
        monkeypatch.setattr(_compiled, "MIN_FUSED_WORK", 0)
        monkeypatch.setattr(_compiled, "MIN_ROWS_ENTRIES", 0)
        monkeypatch.setattr(_preconditioner, "_MIN_KERNEL_FEATURES", 0)
        kernels = SparsemaxClassifier(tol=1e-10, max_iter=500).fit(X, y)
    np.testing.assert_allclose(numpy_path.coef_, kernels.coef_, rtol=0, atol=1e-7)
