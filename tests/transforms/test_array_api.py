"""The mappings and JVPs on Array API arrays: array-api-strict, PyTorch, JAX.

Every function of :mod:`sksparsemax.transforms` must accept an array of any
Array API library and return an array of that library, on the same device,
equal to the NumPy result (the reference here is the library's own NumPy
path, with the NumPy backend, checked against independent references by the
other test modules). array-api-strict runs with ``api_version="2023.12"``, so
the implementation may use nothing newer than that revision of the standard.

The module-scoped fixture ``transforms_backend`` overrides the conftest's
(which runs every module once per computational backend): the Array API path
has no backend, and the NumPy reference is pinned to the NumPy backend.
JAX is a third case of every test where it is installed (with
``jax_enable_x64``); CI does not install it.
"""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from sksparsemax import transforms as T

compat = pytest.importorskip(
    "array_api_compat", reason="the Array API path needs array-api-compat"
)

INF = np.inf


@pytest.fixture(scope="module", autouse=True)
def transforms_backend():
    with T.backend("numpy") as name:
        yield name


def _strict():
    xs = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")
    return xs


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


# JAX is optional and not installed by CI: its cases exist only where it is
# installed (test_jax_cases_run_where_installed reports the skip once).
_JAX = importlib.util.find_spec("jax") is not None


@pytest.fixture(params=["array_api_strict", "torch"] + (["jax"] if _JAX else []))
def lib(request):
    """(to_lib, to_numpy, type of the library's arrays)."""
    if request.param == "array_api_strict":
        xs = _strict()
        with xs.ArrayAPIStrictFlags(api_version="2023.12"):
            yield (xs.asarray, lambda a: np.asarray(a), type(xs.asarray(0.0)))
    elif request.param == "torch":
        torch = _torch()
        yield (torch.asarray, lambda a: a.numpy(), torch.Tensor)
    else:
        import jax

        previous = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)  # float64, as NumPy
        try:
            yield (jax.numpy.asarray, lambda a: np.asarray(a), jax.Array)
        finally:
            jax.config.update("jax_enable_x64", previous)


def _scores(shape, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=1.5, size=shape)
    flat = z.reshape(-1, shape[-1])
    flat[0, 1] = -INF  # a mask
    flat[1, :3] = 0.7  # ties at the top
    flat[-1, :] = np.round(flat[-1, :])  # ties anywhere
    return z.astype(dtype)


MAPPINGS = {
    "softmax": T.softmax,
    "sparsemax": T.sparsemax,
    "sparse_softmax-k1": lambda z, axis=-1: T.sparse_softmax(z, 1, axis=axis),
    "sparse_softmax-k3": lambda z, axis=-1: T.sparse_softmax(z, 3, axis=axis),
    "sparse_softmax-kK": lambda z, axis=-1: T.sparse_softmax(z, 50, axis=axis),
    "entmax15": T.entmax15,
    "entmax_bisect-1.0": lambda z, axis=-1: T.entmax_bisect(z, 1.0, axis=axis),
    "entmax_bisect-1.3": lambda z, axis=-1: T.entmax_bisect(z, 1.3, axis=axis),
    "entmax_bisect-2.0": lambda z, axis=-1: T.entmax_bisect(z, 2.0, axis=axis),
    "entmax_bisect-3.0": lambda z, axis=-1: T.entmax_bisect(z, 3.0, axis=axis),
    # a capped search must stop at the same iterate as the NumPy path
    "entmax_bisect-1.7-3steps": lambda z, axis=-1: T.entmax_bisect(
        z, 1.7, axis=axis, max_iter=3
    ),
}


def _assert_same(out, ref, to_np, cls, x, rtol):
    assert isinstance(out, cls)
    assert compat.device(out) == compat.device(x)
    got = to_np(out)
    assert got.dtype == ref.dtype
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * 1e-3)
    np.testing.assert_array_equal(got == 0, ref == 0)  # the same exact zeros


@pytest.mark.parametrize("name", sorted(MAPPINGS))
@pytest.mark.parametrize(
    "shape, axis", [((6, 7), -1), ((6, 7), 0), ((3, 5, 4), 1)], ids=["last", "first", "3d"]
)
def test_mapping_equals_numpy(lib, name, shape, axis):
    to_lib, to_np, cls = lib
    f = MAPPINGS[name]
    z = _scores(shape)
    ref = f(z, axis=axis)
    x = to_lib(z)
    out = f(x, axis=axis)
    _assert_same(out, ref, to_np, cls, x, rtol=1e-13)
    assert np.all(to_np(out)[np.isneginf(z)] == 0.0)  # -inf masks get exactly 0


@pytest.mark.parametrize("name", sorted(MAPPINGS))
def test_float32_is_kept(lib, name):
    to_lib, to_np, cls = lib
    f = MAPPINGS[name]
    z = _scores((8, 6), seed=1, dtype=np.float32)
    ref = f(z)
    assert ref.dtype == np.float32
    x = to_lib(z)
    _assert_same(f(x), ref, to_np, cls, x, rtol=2e-6)


def test_integers_become_float64(lib):
    to_lib, to_np, cls = lib
    z = np.array([[3, 1, 0], [2, 2, -5]])
    for f in (T.softmax, T.sparsemax, T.entmax15):
        out = f(to_lib(z))
        assert isinstance(out, cls)
        np.testing.assert_allclose(to_np(out), f(z), rtol=1e-15)
        assert to_np(out).dtype == np.float64


@pytest.mark.parametrize("axis", [-1, 0])
def test_sparsemax_threshold_equals_numpy(lib, axis):
    to_lib, to_np, cls = lib
    z = _scores((5, 9), seed=2)
    tau_ref, size_ref = T.sparsemax_threshold(z, axis=axis)
    tau, size = T.sparsemax_threshold(to_lib(z), axis=axis)
    assert isinstance(tau, cls) and isinstance(size, cls)
    np.testing.assert_allclose(to_np(tau), tau_ref, rtol=1e-13)
    np.testing.assert_array_equal(to_np(size), size_ref)
    assert np.issubdtype(to_np(size).dtype, np.integer)
    # one slice: 0-d results, as with NumPy
    tau1, size1 = T.sparsemax_threshold(to_lib(np.array([1.0, 0.2, -1.0])))
    assert tuple(tau1.shape) == () and int(size1) == 2
    assert float(tau1) == pytest.approx(0.1)


JVPS = {
    "softmax": (T.softmax, T.softmax_jvp),
    "sparse_softmax": (lambda z, axis=-1: T.sparse_softmax(z, 3, axis=axis),
                       T.sparse_softmax_jvp),
    "sparsemax": (T.sparsemax, T.sparsemax_jvp),
    "entmax15": (T.entmax15, lambda p, v, axis=-1: T.entmax_jvp(p, v, 1.5, axis=axis)),
    "entmax-1.2": (lambda z, axis=-1: T.entmax_bisect(z, 1.2, axis=axis),
                   lambda p, v, axis=-1: T.entmax_jvp(p, v, 1.2, axis=axis)),
    "entmax-2.5": (lambda z, axis=-1: T.entmax_bisect(z, 2.5, axis=axis),
                   lambda p, v, axis=-1: T.entmax_jvp(p, v, 2.5, axis=axis)),
}


@pytest.mark.parametrize("name", sorted(JVPS))
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jvp_equals_numpy(lib, name, axis, dtype):
    to_lib, to_np, cls = lib
    mapping, jvp = JVPS[name]
    p = mapping(_scores((6, 7), seed=3, dtype=dtype), axis=axis)
    v = np.random.default_rng(4).normal(size=p.shape).astype(dtype)
    ref = jvp(p, v, axis=axis)
    assert ref.dtype == dtype
    x = to_lib(p)
    out = jvp(x, to_lib(v), axis=axis)
    _assert_same(out, ref, to_np, cls, x, rtol=1e-12 if dtype == np.float64 else 2e-5)


def test_jvp_mixed_dtypes_and_shapes(lib):
    to_lib, to_np, cls = lib
    p = T.sparsemax(_scores((4, 5), seed=5))
    v = np.random.default_rng(6).normal(size=p.shape)
    out = T.sparsemax_jvp(to_lib(p.astype(np.float32)), to_lib(v))
    ref = T.sparsemax_jvp(p.astype(np.float32), v)
    assert ref.dtype == np.float64
    _assert_same(out, ref, to_np, cls, to_lib(p), rtol=1e-12)
    # a NumPy tangent next to a library array is converted to the library
    out = T.softmax_jvp(to_lib(p), v)
    assert isinstance(out, cls)
    np.testing.assert_allclose(to_np(out), T.softmax_jvp(p, v), rtol=1e-13)
    with pytest.raises(ValueError, match=r"p and v must have the same shape"):
        T.entmax_jvp(to_lib(p), to_lib(v[:, :3]), 1.5)


BAD = {
    "nan": ([[0.0, 1.0], [np.nan, 0.0]], "contains NaN at row 1"),
    "+inf": ([[0.0, INF], [1.0, 0.0]], r"contains \+inf .* at row 0"),
    "all -inf": ([[0.0, 1.0], [1.0, 0.0], [-INF, -INF]], "every entry equal to -inf .* at row 2"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("name", ["softmax", "sparsemax", "sparse_softmax-k1",
                                  "entmax15", "entmax_bisect-1.3"])
def test_invalid_scores_raise_like_numpy(lib, case, name):
    to_lib, _, _ = lib
    f = MAPPINGS[name]
    z, message = BAD[case]
    z = np.asarray(z)
    with pytest.raises(ValueError, match=message) as numpy_error:
        f(z)
    with pytest.raises(ValueError, match=message) as lib_error:
        f(to_lib(z))
    assert str(lib_error.value) == str(numpy_error.value)


def test_invalid_position_in_a_batch(lib):
    to_lib, _, _ = lib
    z = np.zeros((2, 3, 4))
    z[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=r"z contains NaN at position \(1, 2\)\."):
        T.sparsemax(to_lib(z))
    # along axis 0 the slices are indexed by the remaining axes (3, 4)
    with pytest.raises(ValueError, match=r"z contains NaN at position \(2, 0\)\."):
        T.entmax15(to_lib(z), axis=0)


def test_shape_and_parameter_errors(lib):
    to_lib, _, _ = lib
    with pytest.raises(ValueError, match="length 0 along axis 1"):
        T.sparsemax(to_lib(np.zeros((3, 0))))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        T.softmax(to_lib(np.zeros((3, 2))), axis=2)
    with pytest.raises(ValueError, match="at least one dimension"):
        T.entmax15(to_lib(np.float64(1.0)))
    with pytest.raises(ValueError, match="k must be at least 1"):
        T.sparse_softmax(to_lib(np.zeros(3)), 0)
    with pytest.raises(ValueError, match="alpha must be a finite number >= 1"):
        T.entmax_bisect(to_lib(np.zeros(3)), 0.5)


def test_complex_input_is_a_type_error():
    torch = _torch()
    with pytest.raises(TypeError, match="array of real numbers"):
        T.sparsemax(torch.zeros(3, dtype=torch.complex64))


def test_torch_half_precision_follows_the_dtype_policy():
    torch = _torch()
    out = T.sparsemax(torch.tensor([1.0, 0.2, -1.0], dtype=torch.float16))
    assert out.dtype == torch.float64  # like NumPy: float16 becomes float64
    np.testing.assert_allclose(out.numpy(), T.sparsemax(np.float16([1.0, 0.2, -1.0])))


def test_missing_array_api_compat_is_a_type_error(lib, monkeypatch):
    to_lib, _, _ = lib
    x = to_lib(np.array([1.0, 0.0]))
    monkeypatch.setitem(sys.modules, "array_api_compat", None)  # import fails
    with pytest.raises(TypeError, match=r'pip install "sksparsemax\[array\]"'):
        T.sparsemax(x)
    # NumPy input does not need it
    np.testing.assert_allclose(T.sparsemax(np.array([1.0, 0.0])), [1.0, 0.0])


def test_numpy_input_never_imports_array_api_compat():
    code = (
        "import sys, numpy as np, pandas as pd\n"
        "import sksparsemax.transforms as T\n"
        "T.sparsemax(np.ones((2, 3))); T.softmax([1.0, 2.0]); T.entmax15((1, 2))\n"
        "T.sparsemax_jvp(np.ones(2) / 2, [1.0, 0.0])\n"
        "out = T.sparse_softmax(pd.DataFrame([[1.0, 2.0, 3.0]]), 2)\n"
        "assert type(out) is np.ndarray, type(out)\n"
        "sys.exit(1 if 'array_api_compat' in sys.modules else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_dask_arrays_are_sent_to_the_integration():
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    with pytest.raises(TypeError, match="sksparsemax.integrations.dask_transform"):
        T.sparsemax(da.ones((4, 3)))


def test_jax_cases_run_where_installed():
    pytest.importorskip("jax", reason="JAX is not installed: its cases are left out")
    assert _JAX
