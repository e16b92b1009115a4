"""Edge cases of every mapping: masks, extreme scores, the invalid-input policy,
shapes and axes, memory layouts, dtypes, argument validation, and inputs never
modified in place."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sksparsemax.transforms import (
    entmax15,
    entmax_bisect,
    entmax_jvp,
    softmax,
    softmax_jvp,
    sparse_softmax,
    sparse_softmax_jvp,
    sparsemax,
    sparsemax_jvp,
    sparsemax_threshold,
)

PROPS = settings(max_examples=25, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])

# name -> f(z, axis)
MAPPINGS = {
    "softmax": lambda z, axis=-1: softmax(z, axis=axis),
    "sparsemax": lambda z, axis=-1: sparsemax(z, axis=axis),
    "sparse_softmax_k1": lambda z, axis=-1: sparse_softmax(z, 1, axis=axis),
    "sparse_softmax_k2": lambda z, axis=-1: sparse_softmax(z, 2, axis=axis),
    "sparse_softmax_k50": lambda z, axis=-1: sparse_softmax(z, 50, axis=axis),
    "entmax15": lambda z, axis=-1: entmax15(z, axis=axis),
    "entmax_bisect_1": lambda z, axis=-1: entmax_bisect(z, 1.0, axis=axis),
    "entmax_bisect_1.5": lambda z, axis=-1: entmax_bisect(z, 1.5, axis=axis),
    "entmax_bisect_2": lambda z, axis=-1: entmax_bisect(z, 2.0, axis=axis),
    "entmax_bisect_3": lambda z, axis=-1: entmax_bisect(z, 3.0, axis=axis),
}
NAMES = list(MAPPINGS)

# name -> (mapping, jvp(p, v, axis))
JVPS = {
    "sparsemax_jvp": (sparsemax, lambda p, v, axis=-1: sparsemax_jvp(p, v, axis=axis)),
    "softmax_jvp": (softmax, lambda p, v, axis=-1: softmax_jvp(p, v, axis=axis)),
    "sparse_softmax_jvp": (
        lambda z, axis=-1: sparse_softmax(z, 2, axis=axis),
        lambda p, v, axis=-1: sparse_softmax_jvp(p, v, axis=axis),
    ),
    "entmax_jvp_1.5": (entmax15, lambda p, v, axis=-1: entmax_jvp(p, v, 1.5, axis=axis)),
    "entmax_jvp_3": (
        lambda z, axis=-1: entmax_bisect(z, 3.0, axis=axis),
        lambda p, v, axis=-1: entmax_jvp(p, v, 3.0, axis=axis),
    ),
}


def _threshold_tau(z, axis=-1):
    return sparsemax_threshold(z, axis=axis)[0]


def _threshold_size(z, axis=-1):
    return sparsemax_threshold(z, axis=axis)[1]


# every public entry point taking scores, for the validation tests
SCORE_FUNCS = dict(MAPPINGS, sparsemax_threshold=_threshold_tau)


def _no_warnings(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return f(*args, **kwargs)


# ---------------------------------------------------------------------------
# Known values
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_constant_row_is_uniform(name):
    f = MAPPINGS[name]
    p = f(np.array([1.0, 1.0, 1.0]))
    if name == "sparse_softmax_k1":
        expected = [1.0, 0.0, 0.0]  # tie: lowest index wins
    elif name == "sparse_softmax_k2":
        expected = [0.5, 0.5, 0.0]
    else:
        expected = [1 / 3] * 3
    np.testing.assert_allclose(p, expected, rtol=0, atol=1e-15)
    # a longer constant row, and a constant batch
    if not name.startswith("sparse_softmax_k") or name == "sparse_softmax_k50":
        np.testing.assert_allclose(f(np.full((3, 7), -2.5)), 1 / 7, rtol=0, atol=1e-15)


def test_threshold_of_constant_row():
    # z = c 1: full support, tau = (K c - 1)/K = c - 1/K
    tau, size = sparsemax_threshold(np.full(4, 2.0))
    assert size == 4
    np.testing.assert_allclose(tau, 2.0 - 0.25, rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------
# Masks
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data())
def test_neg_inf_is_a_mask(ref, data, name):
    """Masked entries get exactly 0; the rest is the mapping of the unmasked entries alone."""
    f = MAPPINGS[name]
    z = data.draw(ref.score_vectors(min_size=2, kinds=("moderate", "ties", "grid", "offset"),
                                    masks=True))
    masked = np.isneginf(z)
    p = _no_warnings(f, z)
    assert np.all(p[masked] == 0.0)
    # For alpha > 2, p = x^(1/(alpha-1)) is ill-conditioned at the edge of the
    # support (dp/dtau = 1/(2p) at alpha = 3): an ulp on tau moves a small p by
    # more than 1e-12 relative.
    rtol = 1e-9 if name == "entmax_bisect_3" else 1e-12
    np.testing.assert_allclose(p[~masked], f(z[~masked]), rtol=rtol, atol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_mask_in_batch_and_float32(name):
    f = MAPPINGS[name]
    z = np.array([[0.3, -np.inf, 0.1, -np.inf], [-np.inf, -np.inf, -np.inf, 5.0]])
    for dtype in (np.float64, np.float32):
        p = _no_warnings(f, z.astype(dtype))
        assert p.dtype == dtype
        assert np.all(p[np.isneginf(z)] == 0.0)
        np.testing.assert_allclose(p[0, [0, 2]], f(np.array([0.3, 0.1], dtype)), atol=1e-7)
        np.testing.assert_array_equal(p[1], [0, 0, 0, 1])


# ---------------------------------------------------------------------------
# Extreme scores
# ---------------------------------------------------------------------------
F64_MAX = np.finfo(np.float64).max
F32_MAX = np.finfo(np.float32).max


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "dtype, big", [(np.float64, 1e300), (np.float64, F64_MAX), (np.float32, 3e38),
                   (np.float32, F32_MAX)],
    ids=["f64-1e300", "f64-max", "f32-3e38", "f32-max"],
)
def test_huge_scores(name, dtype, big):
    """Scores that differ by ~1e300 (or overflow when subtracted) behave like masks:
    f([M, M, 1, -3, -M]) == f([0, 0, -inf, -inf, -inf]) since every gap is
    astronomically larger than any threshold; no NaN and no RuntimeWarning."""
    f = MAPPINGS[name]
    z = np.array([[big, big, 1.0, -3.0, -big],
                  [-big, -big, -big, -big, -big],
                  [-big, 0.0, -big, 1.0, big]], dtype=dtype)
    like = np.array([[0, 0, -np.inf, -np.inf, -np.inf],
                     [0, 0, 0, 0, 0],
                     [-np.inf, -np.inf, -np.inf, -np.inf, 0]], dtype=dtype)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = f(z)
    assert p.dtype == dtype
    assert not np.any(np.isnan(p))
    np.testing.assert_allclose(p, f(like), rtol=0, atol=1e-7 if dtype == np.float32 else 1e-15)
    runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not runtime, f"RuntimeWarning(s) emitted: {runtime}"


def test_huge_scores_threshold():
    tau, size = _no_warnings(sparsemax_threshold, np.array([1e300, 1e300, 0.0, -1e300]))
    assert size == 2 and np.isfinite(tau)
    np.testing.assert_allclose(tau, 1e300, rtol=1e-15)
    tau, size = _no_warnings(sparsemax_threshold, np.array([3e38, -3e38], np.float32))
    assert size == 1 and tau.dtype == np.float32 and np.isfinite(tau)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "dtype, shift", [(np.float32, 1e6), (np.float32, -1e6), (np.float32, 1e8),
                     (np.float32, -1e8), (np.float64, 1e8), (np.float64, 1e15)],
)
def test_constant_shift(name, dtype, shift):
    """z + c (exactly representable) gives the same result as z, without warnings."""
    f = MAPPINGS[name]
    step = 8.0 if abs(shift) >= 1e8 and dtype == np.float32 else 0.125
    z = np.array([[0.0, 0.0, -1.0, -2.0], [1.0, 3.0, 2.0, 0.0], [0.0, 0.5, -0.5, 0.25]])
    z = np.round(z / 0.125) * step  # on a grid the shift keeps exactly
    z = z.astype(dtype)
    zc = (z + dtype(shift)).astype(dtype)
    assert np.array_equal(zc - dtype(shift), z)
    p = _no_warnings(f, zc)
    assert p.dtype == dtype
    assert not np.any(np.isnan(p))
    np.testing.assert_allclose(p, f(z), rtol=0, atol=1e-6 if dtype == np.float32 else 1e-12)


# ---------------------------------------------------------------------------
# Invalid scores: NaN, +inf, all -inf
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SCORE_FUNCS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_invalid_scores_raise_naming_problem_and_row(name, dtype):
    f = SCORE_FUNCS[name]
    base = np.zeros((4, 3), dtype=dtype)

    z = base.copy()
    z[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"NaN.*\brow 2\b"):
        f(z)

    z = base.copy()
    z[1, 0] = np.inf
    with pytest.raises(ValueError, match=r"\+inf.*\brow 1\b"):
        f(z)

    z = base.copy()
    z[3] = -np.inf
    with pytest.raises(ValueError, match=r"-inf.*\brow 3\b"):
        f(z)

    # the first offending row is the one named
    z = base.copy()
    z[3, 0] = np.nan
    z[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"\+inf.*\brow 1\b"):
        f(z)

    # 1-D input: row 0
    with pytest.raises(ValueError, match=r"NaN.*\brow 0\b"):
        f(np.array([0.0, np.nan], dtype=dtype))
    with pytest.raises(ValueError, match=r"-inf"):
        f(np.array([-np.inf], dtype=dtype))

    # N-D input: the position in the batch
    z = np.zeros((2, 3, 4), dtype=dtype)
    z[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN.*position \(1, 2\)"):
        f(z)


# ---------------------------------------------------------------------------
# Shapes and axes
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_single_class(name):
    f = MAPPINGS[name]
    for z in ([3.0], [-1e300], np.array([[2.0], [-7.0]]), np.array([1.5], np.float32)):
        p = _no_warnings(f, z)
        assert p.shape == np.shape(z)
        np.testing.assert_array_equal(p, 1.0)


def test_single_class_threshold():
    tau, size = sparsemax_threshold([[2.0], [-7.0]])
    np.testing.assert_allclose(tau, [1.0, -8.0])  # tau = z - 1
    np.testing.assert_array_equal(size, [1, 1])


@pytest.mark.parametrize("name", list(SCORE_FUNCS) + ["sparsemax_threshold_size"])
def test_axes_match_moving_the_axis_by_hand(name):
    f = _threshold_size if name == "sparsemax_threshold_size" else SCORE_FUNCS[name]
    reduces = name.startswith("sparsemax_threshold")
    rng = np.random.default_rng(1)
    z = rng.normal(scale=1.5, size=(3, 4, 5))
    for axis in (0, 1, 2, -1, -2, -3):
        moved = np.moveaxis(z, axis, -1)
        expected = f(moved)
        if not reduces:
            expected = np.moveaxis(expected, -1, axis)
        got = f(z, axis=axis)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)
    # 2-D, axis=0 is column-wise
    z2 = rng.normal(size=(6, 3))
    got = f(z2, axis=0)
    expected = f(z2.T)
    if not reduces:
        expected = expected.T
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)
    # default axis is the last one
    np.testing.assert_array_equal(f(z), f(z, axis=-1))


@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_axes_match_moving_the_axis_by_hand(name):
    mapping, jvp = JVPS[name]
    rng = np.random.default_rng(2)
    z = rng.normal(size=(3, 4, 5))
    v = rng.normal(size=(3, 4, 5))
    for axis in (0, 1, -1, -3):
        p = mapping(z, axis=axis)
        expected = np.moveaxis(
            jvp(np.moveaxis(p, axis, -1), np.moveaxis(v, axis, -1)), -1, axis
        )
        np.testing.assert_allclose(jvp(p, v, axis=axis), expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_one_d_and_size_one_batch_dims(name):
    f = MAPPINGS[name]
    z = np.array([0.4, -0.3, 1.2, 0.9])
    p = f(z)
    assert p.shape == (4,)
    for shape, axis in [((1, 4), -1), ((1, 1, 4), -1), ((4, 1), 0), ((1, 4, 1), 1),
                        ((1, 4, 1), -2)]:
        zz = z.reshape(shape)
        pp = f(zz, axis=axis)
        assert pp.shape == shape
        np.testing.assert_allclose(pp.ravel(), p, rtol=0, atol=1e-13)


def test_threshold_shapes():
    z = np.random.default_rng(0).normal(size=(2, 3, 4))
    tau, size = sparsemax_threshold(z, axis=1)
    assert tau.shape == (2, 4) and size.shape == (2, 4)
    tau, size = sparsemax_threshold(z[0, 0])
    assert tau.shape == () and size.shape == ()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_empty_batch(name, dtype):
    f = MAPPINGS[name]
    for shape, axis in [((0, 4), -1), ((0, 4), 1), ((2, 0, 3), -1), ((3, 0), 0)]:
        z = np.empty(shape, dtype=dtype)
        p = _no_warnings(f, z, axis=axis)
        assert p.shape == shape and p.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_empty_batch_threshold_and_jvp(dtype):
    for K in (4, 30):  # the dense and the flat NumPy paths
        tau, size = sparsemax_threshold(np.empty((0, K), dtype=dtype))
        assert tau.shape == (0,) and size.shape == (0,) and tau.dtype == dtype
    for name, (_, jvp) in JVPS.items():
        out = jvp(np.empty((0, 4), dtype), np.empty((0, 4), dtype))
        assert out.shape == (0, 4) and out.dtype == dtype, name


@pytest.mark.parametrize("name", list(SCORE_FUNCS))
def test_length_zero_distribution_axis_raises(name):
    f = SCORE_FUNCS[name]
    for shape, axis in [((0,), -1), ((3, 0), -1), ((0, 4), 0), ((2, 0, 3), 1)]:
        with pytest.raises(ValueError, match="length 0"):
            f(np.empty(shape), axis=axis)


@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_length_zero_axis_raises(name):
    _, jvp = JVPS[name]
    with pytest.raises(ValueError, match="length 0"):
        jvp(np.empty((3, 0)), np.empty((3, 0)))


@pytest.mark.parametrize("name", list(SCORE_FUNCS))
def test_scalar_input_raises(name):
    with pytest.raises(ValueError, match="dimension"):
        SCORE_FUNCS[name](np.float64(1.0))


@pytest.mark.parametrize("name", list(SCORE_FUNCS))
def test_out_of_range_axis_raises(name):
    f = SCORE_FUNCS[name]
    z = np.zeros((2, 3))
    for axis in (2, -3, 10):
        with pytest.raises(ValueError, match="out of bounds"):
            f(z, axis=axis)
    with pytest.raises(ValueError, match="out of bounds"):
        f([1.0, 2.0], axis=1)


@pytest.mark.parametrize("name", list(SCORE_FUNCS))
def test_non_integer_axis_raises(name):
    """NumPy rejects a float axis; silently truncating 1.5 to 1 would hide a bug."""
    f = SCORE_FUNCS[name]
    with pytest.raises(TypeError, match="axis"):
        f(np.zeros((2, 3)), axis=1.5)
    with pytest.raises(TypeError, match="axis"):
        f(np.zeros((2, 3)), axis=None)


@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_out_of_range_axis_raises(name):
    _, jvp = JVPS[name]
    with pytest.raises(ValueError, match="out of bounds"):
        jvp(np.full((2, 3), 1 / 3), np.zeros((2, 3)), axis=2)


# ---------------------------------------------------------------------------
# Memory layouts and dtypes
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(SCORE_FUNCS))
def test_non_contiguous_and_fortran(name):
    f = SCORE_FUNCS[name]
    rng = np.random.default_rng(4)
    big = rng.normal(size=(8, 12))
    views = [big[::2, ::3], big[:, ::-1], big[1:7, 2:11:2].T, np.asfortranarray(big),
             np.asfortranarray(big.astype(np.float32))]
    for z in views:
        assert not z.flags.c_contiguous
        c = np.ascontiguousarray(z)
        # the summation order may differ with the layout: allow rounding
        atol = 1e-6 if z.dtype == np.float32 else 1e-13
        for axis in (-1, 0):
            got = f(z, axis=axis)
            np.testing.assert_allclose(got, f(c, axis=axis), rtol=0, atol=atol)
            assert got.dtype == z.dtype


@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_non_contiguous_and_fortran(name):
    mapping, jvp = JVPS[name]
    rng = np.random.default_rng(5)
    z = rng.normal(size=(6, 10))
    v = rng.normal(size=(6, 10))
    p = mapping(z)
    for sl in (np.s_[::2, ::2], np.s_[:, ::-1]):
        pp = mapping(z[sl])
        got = jvp(pp, v[sl])
        np.testing.assert_allclose(
            got, jvp(np.ascontiguousarray(pp), np.ascontiguousarray(v[sl])), atol=1e-13
        )
    np.testing.assert_allclose(jvp(np.asfortranarray(p), np.asfortranarray(v)), jvp(p, v),
                               atol=1e-13)


@pytest.mark.parametrize("name", list(SCORE_FUNCS))
def test_integer_boolean_list_inputs_give_float64(name):
    f = SCORE_FUNCS[name]
    cases = [
        (np.array([[1, 2, 3], [0, 0, -1]], dtype=np.int64), [[1.0, 2.0, 3.0], [0.0, 0.0, -1.0]]),
        (np.array([1, 0, 3], dtype=np.int32), [1.0, 0.0, 3.0]),
        (np.array([3, 1, 2], dtype=np.uint8), [3.0, 1.0, 2.0]),
        (np.array([True, False, True]), [1.0, 0.0, 1.0]),
        ([0.5, -1, 2], [0.5, -1.0, 2.0]),
        ([[1, 2], [3, 3]], [[1.0, 2.0], [3.0, 3.0]]),
        (np.array([0.5, 0.25, -1.0], dtype=np.float16), [0.5, 0.25, -1.0]),
    ]
    for z, as_float in cases:
        got = f(z)
        assert got.dtype == np.float64, (z, got.dtype)
        np.testing.assert_array_equal(got, f(np.array(as_float, dtype=np.float64)))


@pytest.mark.parametrize("name", list(SCORE_FUNCS))
def test_non_real_input_raises(name):
    with pytest.raises(TypeError, match="real"):
        SCORE_FUNCS[name](np.array([1 + 1j, 2.0]))
    with pytest.raises(TypeError, match="real"):
        SCORE_FUNCS[name](np.array(["a", "b"]))


# ---------------------------------------------------------------------------
# Argument validation
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, -1])
def test_bad_k_value_raises(k):
    with pytest.raises(ValueError, match=r"k must be at least 1.*" + str(k)):
        sparse_softmax([1.0, 2.0, 3.0], k)


@pytest.mark.parametrize("k", [2.5, 2.0, "2", None])
def test_bad_k_type_raises(k):
    with pytest.raises(TypeError, match="k must be an integer"):
        sparse_softmax([1.0, 2.0, 3.0], k)


@pytest.mark.parametrize("k", [True, False, np.True_])
def test_bool_k_raises(k):
    # A bool is not a count: k=True is refused, not read as k=1 (the same
    # check as the losses and estimators, sksparsemax._checks.check_k).
    with pytest.raises(TypeError, match="k must be an integer"):
        sparse_softmax([1.0, 2.0, 3.0], k)
    with pytest.raises(TypeError, match="k must be an integer"):
        sparse_softmax(np.zeros((2, 3)), k=k, axis=0)


@pytest.mark.parametrize("alpha", [0.5, 0.999, -1.0, np.nan, np.inf])
def test_bad_alpha_value_raises(alpha):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect([1.0, 2.0], alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        entmax_jvp([0.5, 0.5], [1.0, 0.0], alpha)


@pytest.mark.parametrize("alpha", ["x", None, True, {"alpha": 2.0}, [1.5, None]])
def test_bad_alpha_type_raises(alpha):
    with pytest.raises(TypeError, match="alpha"):
        entmax_bisect([1.0, 2.0], alpha=alpha)
    with pytest.raises(TypeError, match="alpha"):
        entmax_jvp([0.5, 0.5], [1.0, 0.0], alpha)


def test_a_list_alpha_is_one_alpha_per_slice():
    # A list is an array of alphas (one per slice, as in the entmax package):
    # [2.0] for a single slice is alpha = 2.
    np.testing.assert_array_equal(entmax_bisect([1.0, 2.0], alpha=[2.0]),
                                  entmax_bisect([1.0, 2.0], alpha=2.0))
    with pytest.raises(ValueError, match=r"alpha of shape \(2,\) does not fit"):
        entmax_bisect([1.0, 2.0], alpha=[2.0, 1.5])


@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_mismatched_shapes_raise(name):
    _, jvp = JVPS[name]
    p = np.full((2, 3), 1 / 3)
    for v in (np.zeros(3), np.zeros((2, 4)), np.zeros((3, 2)), np.zeros((1, 2, 3))):
        with pytest.raises(ValueError, match="same shape"):
            jvp(p, v)


# ---------------------------------------------------------------------------
# Inputs are never modified
# ---------------------------------------------------------------------------
def _score_calls(axis):
    return {
        "softmax": lambda z: softmax(z, axis=axis),
        "sparsemax": lambda z: sparsemax(z, axis=axis),
        "sparsemax_threshold": lambda z: sparsemax_threshold(z, axis=axis),
        "sparse_softmax_k2": lambda z: sparse_softmax(z, 2, axis=axis),
        "sparse_softmax_kK": lambda z: sparse_softmax(z, 100, axis=axis),
        "entmax15": lambda z: entmax15(z, axis=axis),
        "entmax_bisect_1": lambda z: entmax_bisect(z, 1.0, axis=axis),
        "entmax_bisect_1.5": lambda z: entmax_bisect(z, 1.5, axis=axis),
        "entmax_bisect_3": lambda z: entmax_bisect(z, 3.0, axis=axis),
    }


def _jvp_calls(axis):
    return {
        "sparsemax_jvp": lambda p, v: sparsemax_jvp(p, v, axis=axis),
        "softmax_jvp": lambda p, v: softmax_jvp(p, v, axis=axis),
        "sparse_softmax_jvp": lambda p, v: sparse_softmax_jvp(p, v, axis=axis),
        "entmax_jvp_1.5": lambda p, v: entmax_jvp(p, v, 1.5, axis=axis),
        "entmax_jvp_3": lambda p, v: entmax_jvp(p, v, 3.0, axis=axis),
    }


def _layout(a, layout):
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "strided":
        big = np.zeros((a.shape[0] * 2, a.shape[1] * 3), dtype=a.dtype)
        big[::2, ::3] = a
        return big[::2, ::3]
    if layout == "float32":
        return a.astype(np.float32)
    return a


@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "float32", "masked"])
def test_inputs_not_modified(layout, axis):
    rng = np.random.default_rng(6)
    z = rng.normal(size=(5, 6))
    if layout == "masked":
        z[z < -0.5] = -np.inf
        z[0, :] = 0.0
        z[:, 0] = 0.0
    z = _layout(z, layout)
    v = _layout(rng.normal(size=(5, 6)), layout)
    z0, v0 = z.copy(), v.copy()
    for name, call in _score_calls(axis).items():
        out = call(z)
        for o in out if isinstance(out, tuple) else (out,):
            assert not np.shares_memory(o, z), name
        assert np.array_equal(z, z0), name
    # the JVPs take an output p (with exact zeros) and a tangent v
    p = _layout(sparsemax(z0, axis=axis), layout)
    p0 = p.copy()
    for name, call in _jvp_calls(axis).items():
        out = call(p, v)
        assert not np.shares_memory(out, p) and not np.shares_memory(out, v), name
        assert np.array_equal(p, p0), name
        assert np.array_equal(v, v0), name
