"""The fused vector passes of the linear models' L-BFGS against NumPy's operations."""

import numpy as np
import pytest

nv = pytest.importorskip("sksparsemax.transforms._numba_vectors", reason="needs numba")


@pytest.fixture
def vectors():
    rng = np.random.default_rng(0)
    return rng.standard_normal((4, 5003))  # not a multiple of any vector width


def test_direction_and_slope(vectors):
    d, g = vectors[0].copy(), vectors[1]
    ref = d - 0.7 * g
    slope = nv.direction_and_slope(d, g, 0.7)
    np.testing.assert_allclose(d, ref, rtol=1e-15, atol=1e-15)
    assert slope == pytest.approx(float(g @ ref), rel=1e-12)


def test_store_pair_writes_y_and_s_and_returns_their_products(vectors):
    g_new, g, d = vectors[:3]
    B = np.zeros((4, g.size))
    yy, yg, dd = nv.store_pair(g_new, g, d, 0.3, B[1], B[2])
    y = g_new - g
    np.testing.assert_array_equal(B[1], y)
    np.testing.assert_array_equal(B[2], 0.3 * d)
    assert not B[0].any() and not B[3].any()  # only the slot's rows
    assert yy == pytest.approx(float(y @ y), rel=1e-12)
    assert yg == pytest.approx(float(y @ g_new), rel=1e-12)
    assert dd == pytest.approx(float(d @ d), rel=1e-12)


def test_trial_point(vectors):
    x, d = vectors[:2]
    out = np.empty_like(x)
    nv.trial_point(x, d, 2.5, out)
    np.testing.assert_allclose(out, x + 2.5 * d, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("intercept", [True, False])
def test_diagonal_gradient(intercept):
    rng = np.random.default_rng(1)
    K, d = 3, 1001
    gW = rng.standard_normal((K, d))
    gb = rng.standard_normal(K) if intercept else np.empty(0)
    mean, scale = rng.standard_normal(d), rng.uniform(0.1, 3.0, d)
    gV = np.empty_like(gW)
    mw, mv = nv.diagonal_gradient(gW, gb, mean, scale, gV)
    ref = (gW - np.outer(gb, mean)) / scale if intercept else gW / scale
    np.testing.assert_allclose(gV, ref, rtol=1e-14, atol=1e-15)
    assert mw == np.abs(gW).max() and mv == np.abs(ref).max()
    for bad in (np.nan, np.inf, -np.inf):
        gW[1, 7] = bad
        assert np.isnan(nv.diagonal_gradient(gW, gb, mean, scale, gV)).all()
