"""Kinds of input beyond plain arrays: scipy.sparse matrices (refused, with how to
densify), NumPy masked arrays (masked entries are -inf scores, 0 in the JVPs),
and the value checks of the JVPs' output/tangent pair (NaN, infinities,
negative probabilities)."""

import numpy as np
import pytest
import scipy.sparse as sp

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

MAPPINGS = {
    "softmax": lambda z, axis=-1: softmax(z, axis=axis),
    "sparsemax": lambda z, axis=-1: sparsemax(z, axis=axis),
    "sparsemax_threshold": lambda z, axis=-1: sparsemax_threshold(z, axis=axis)[0],
    "sparse_softmax_k2": lambda z, axis=-1: sparse_softmax(z, 2, axis=axis),
    "entmax15": lambda z, axis=-1: entmax15(z, axis=axis),
    "entmax_bisect_1.5": lambda z, axis=-1: entmax_bisect(z, 1.5, axis=axis),
    "entmax_bisect_3": lambda z, axis=-1: entmax_bisect(z, 3.0, axis=axis),
}

JVPS = {
    "sparsemax_jvp": (sparsemax, sparsemax_jvp),
    "softmax_jvp": (softmax, softmax_jvp),
    "sparse_softmax_jvp": (lambda z, axis=-1: sparse_softmax(z, 2, axis=axis), sparse_softmax_jvp),
    "entmax_jvp_1.5": (entmax15, lambda p, v, axis=-1: entmax_jvp(p, v, 1.5, axis=axis)),
    "entmax_jvp_3": (
        lambda z, axis=-1: entmax_bisect(z, 3.0, axis=axis),
        lambda p, v, axis=-1: entmax_jvp(p, v, 3.0, axis=axis),
    ),
}

SPARSE_KINDS = [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array]

Z = np.array([[0.3, 1.2, -0.5, 0.9], [2.0, 0.1, 0.4, -1.0], [0.0, 0.0, 0.5, 0.2]])
MASK = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 1]], dtype=bool)


# ---------------------------------------------------------------------------
# scipy.sparse: refused with a TypeError that says how to densify
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", SPARSE_KINDS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("name", list(MAPPINGS))
def test_sparse_scores_are_refused_with_how_to_densify(name, kind):
    with pytest.raises(TypeError, match=r"z is a scipy\.sparse .*not supported.*z\.toarray\(\)"):
        MAPPINGS[name](kind(Z))
    # the advice works
    # (a csc matrix densifies in Fortran order: equal to rounding)
    np.testing.assert_allclose(MAPPINGS[name](kind(Z).toarray()), MAPPINGS[name](Z), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", list(JVPS))
def test_sparse_jvp_arguments_are_refused(name):
    fwd, jvp = JVPS[name]
    p = fwd(Z)
    v = np.ones_like(Z)
    with pytest.raises(TypeError, match=r"p is a scipy\.sparse .*p\.toarray\(\)"):
        jvp(sp.csr_matrix(p), v)
    with pytest.raises(TypeError, match=r"v is a scipy\.sparse .*v\.toarray\(\)"):
        jvp(p, sp.csr_matrix(v))


# ---------------------------------------------------------------------------
# masked arrays: masked scores are -inf (probability exactly 0)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("name", list(MAPPINGS))
def test_masked_scores_are_minus_inf(name, dtype):
    f = MAPPINGS[name]
    data = (Z * 10).astype(dtype)
    zm = np.ma.array(data, mask=MASK)
    expected = f(np.where(MASK, -np.inf, data.astype(np.result_type(dtype, np.float32))))
    out = f(zm)
    assert type(out) is np.ndarray  # a plain array, not a masked one
    np.testing.assert_array_equal(out, expected)
    if name != "sparsemax_threshold":
        assert np.all(out[MASK] == 0)
        np.testing.assert_allclose(out.sum(axis=-1), 1, rtol=1e-6)
        # along another axis too
        np.testing.assert_array_equal(f(zm.T, axis=0), expected.T)
    # the caller's masked array is not modified
    np.testing.assert_array_equal(zm.data, data)
    np.testing.assert_array_equal(zm.mask, MASK)


@pytest.mark.parametrize("name", list(MAPPINGS))
def test_masked_array_without_masked_entries_equals_its_data(name):
    f = MAPPINGS[name]
    np.testing.assert_array_equal(f(np.ma.array(Z)), f(Z))
    np.testing.assert_array_equal(f(np.ma.array(Z, mask=np.zeros_like(MASK))), f(Z))
    # masked data may hold NaN: it is masked, so it is no error
    bad = Z.copy()
    bad[MASK] = np.nan
    np.testing.assert_array_equal(f(np.ma.array(bad, mask=MASK)), f(np.where(MASK, -np.inf, Z)))


@pytest.mark.parametrize("name", list(MAPPINGS))
def test_fully_masked_row_raises_like_all_minus_inf(name):
    mask = np.zeros_like(MASK)
    mask[1] = True
    with pytest.raises(ValueError, match=r"-inf.*\brow 1\b"):
        MAPPINGS[name](np.ma.array(Z, mask=mask))


@pytest.mark.parametrize("name", list(JVPS))
def test_masked_jvp_entries_count_as_zero(name):
    fwd, jvp = JVPS[name]
    p = fwd(np.where(MASK, -np.inf, Z))
    v = np.arange(Z.size, dtype=float).reshape(Z.shape)
    expected = jvp(p, np.where(MASK, 0.0, v))
    out = jvp(np.ma.array(p, mask=MASK), np.ma.array(v, mask=MASK))
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, expected)
    # NaN under the mask of v is no error
    v_nan = np.where(MASK, np.nan, v)
    np.testing.assert_array_equal(jvp(p, np.ma.array(v_nan, mask=MASK)), expected)


# ---------------------------------------------------------------------------
# JVP pairs: NaN / inf tangents and invalid probabilities raise, naming the row
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_rejects_non_finite_tangents_naming_the_row(name, dtype):
    fwd, jvp = JVPS[name]
    p = fwd(Z.astype(dtype))
    v = np.ones_like(p)
    for value, text in [(np.nan, "NaN"), (np.inf, r"\+inf"), (-np.inf, "-inf")]:
        for col in (0, 2):  # on and off the support
            bad = v.copy()
            bad[1, col] = value
            with pytest.raises(ValueError, match=rf"^v contains {text} at row 1\b"):
                jvp(p, bad)
    # the first offending row is named
    bad = v.copy()
    bad[2, 0] = np.nan
    bad[1, 3] = np.inf
    with pytest.raises(ValueError, match=r"v contains \+inf at row 1\b"):
        jvp(p, bad)
    # 1-D and N-D inputs
    with pytest.raises(ValueError, match=r"v contains NaN at row 0\b"):
        jvp(p[0], np.array([0.0, np.nan, 0.0, 0.0], dtype=dtype))
    p3 = fwd(np.stack([Z, Z]).astype(dtype))
    v3 = np.ones_like(p3)
    v3[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"v contains NaN at position \(1, 2\)"):
        jvp(p3, v3)
    # along another axis
    with pytest.raises(ValueError, match=r"v contains NaN at position \(1, 2\)"):
        jvp(np.moveaxis(p3, -1, 0), np.moveaxis(v3, -1, 0), axis=0)


@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_rejects_invalid_probabilities(name):
    fwd, jvp = JVPS[name]
    p = fwd(Z)
    v = np.ones_like(p)
    for value, text in [(np.nan, "NaN"), (np.inf, r"\+inf"), (-np.inf, "-inf"), (-0.25, "a negative entry")]:
        bad = p.copy()
        bad[2, 1] = value
        with pytest.raises(ValueError, match=rf"^p contains {text} at row 2\b.*non-negative"):
            jvp(bad, v)
    # p is checked before v
    bad_p, bad_v = p.copy(), v.copy()
    bad_p[2, 0] = np.nan
    bad_v[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^p contains NaN at row 2"):
        jvp(bad_p, bad_v)


@pytest.mark.parametrize("name", list(JVPS))
def test_jvp_valid_extremes_still_pass(name):
    fwd, jvp = JVPS[name]
    p = fwd(Z)
    # huge finite tangents whose sum overflows are valid
    v = np.full_like(p, np.finfo(np.float64).max / 2)
    with np.errstate(over="ignore", invalid="ignore"):
        jvp(p, v)
    # an empty batch
    assert jvp(np.zeros((0, 4)), np.zeros((0, 4))).shape == (0, 4)


def test_jvp_checks_apply_to_foreign_arrays():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    p = torch.tensor(sparsemax(Z))
    v = torch.ones_like(p)
    v[1, 2] = float("nan")
    for jvp in (sparsemax_jvp, softmax_jvp, lambda p, v: entmax_jvp(p, v, 1.5)):
        with pytest.raises(ValueError, match=r"^v contains NaN at row 1\b"):
            jvp(p, v)
    q = p.clone()
    q[0, 0] = -1.0
    with pytest.raises(ValueError, match=r"^p contains a negative entry at row 0\b"):
        sparsemax_jvp(q, torch.ones_like(p))
