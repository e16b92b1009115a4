"""The mappings on any Array API compatible array (PyTorch, CuPy, JAX...).

NumPy arrays (and lists, scalars, pandas objects) never come here: the public
functions keep their NumPy fast path and only send an array of another library
to this module, after one type check (:func:`is_foreign`). Here the namespace
of the array is found with ``array_api_compat.array_namespace`` (an optional
dependency, imported on first use: ``pip install "sksparsemax[array]"``) and
the mappings are written with the functions of the 2023.12 revision of the
standard only, so the result is an array of the same library, on the same
device:

* sparsemax and top-k from a descending sort and a cumulative sum (the
  closed forms of Martins & Astudillo, 2016, and Sun et al., 2021);
* the entmax mappings in :mod:`._array_api_entmax` (and the other mappings
  of the entmax family in their own modules), with the helpers here;
* the Jacobian-vector products from their closed forms.

The policies are those of the NumPy path: float32 and float64 are kept, other
real (integer, boolean, float16...) dtypes become float64 (float32 on a
library or device without float64, such as JAX without ``jax_enable_x64``);
``-inf`` entries are masks; a slice with NaN or ``+inf``, or whose entries
are all ``-inf``, raises a ``ValueError`` that names it. Checking for those slices needs their
maxima on the host: one device-to-host synchronisation of a boolean per call
(more, one per step, for :func:`entmax_bisect`). The functions are therefore
not traceable by ``jax.jit`` (they run eagerly on JAX arrays).
"""

import numpy as np

from ._validation import _batch_index, checked_row_max, normalize_axis

# Top-level modules of the array libraries that array-api-compat supports
# without an ``__array_namespace__`` method on their arrays.
_FOREIGN_MODULES = frozenset({"torch", "cupy", "jax", "jaxlib", "dask", "sparse", "ndonnx"})
_NATIVE_TYPES = (list, tuple, int, float, bool, np.generic)


def is_foreign(x):
    """True if ``x`` is an array of a library other than NumPy.

    Lists, tuples, Python and NumPy scalars, NumPy arrays (and their
    subclasses) and objects that NumPy converts (pandas...) are not foreign:
    they take the NumPy path.
    """
    if isinstance(x, np.ndarray) or isinstance(x, _NATIVE_TYPES):
        return False
    if hasattr(x, "__array_namespace__"):
        return True
    return type(x).__module__.partition(".")[0] in _FOREIGN_MODULES


def any_foreign(p, v):
    """True if ``p`` or ``v`` is an array of a library other than NumPy.

    A pair of NumPy arrays (the usual case) costs two type checks.
    """
    if isinstance(p, np.ndarray) and isinstance(v, np.ndarray):
        return False
    return is_foreign(p) or is_foreign(v)


def _compat():
    try:
        import array_api_compat
    except ImportError:
        raise TypeError(
            "sksparsemax.transforms received an array that is not a NumPy array; "
            "non-NumPy arrays (PyTorch, CuPy, JAX, ...) need the optional "
            'dependency array-api-compat: `pip install "sksparsemax[array]"` '
            "(or convert the input with numpy.asarray)."
        ) from None
    return array_api_compat


def _namespace(*arrays):
    """``(xp, device, arrays)``: the namespace of the foreign arrays among
    ``arrays`` and all of them as arrays of that namespace on its device."""
    compat = _compat()
    foreign = [a for a in arrays if is_foreign(a)]
    if any(type(a).__module__.partition(".")[0] == "dask" for a in foreign):
        raise TypeError(
            "sksparsemax.transforms does not take dask arrays directly: apply "
            "the mapping chunk by chunk with "
            "sksparsemax.integrations.dask_transform (or dask.array.map_blocks "
            "after rechunking the distribution axis to a single chunk)."
        )
    try:
        xp = compat.array_namespace(*foreign)
    except TypeError as exc:
        raise TypeError(
            f"sksparsemax.transforms cannot handle these arrays: {exc}"
        ) from None
    dev = compat.device(foreign[0])
    out = []
    for a in arrays:
        if not is_foreign(a):
            a = xp.asarray(np.asarray(a), device=dev)
        out.append(a)
    return xp, dev, out


def _info(xp, x):
    """``(widest real floating dtype, index dtype)`` of ``xp`` on ``x``'s
    device: float64 and the default indexing dtype where available (JAX
    without ``jax_enable_x64`` has float32 and int32 only)."""
    try:
        info = xp.__array_namespace_info__()
        dev = _compat().device(x)
        floats = info.dtypes(device=dev, kind="real floating")
        index = info.default_dtypes(device=dev)["indexing"]
    except (AttributeError, TypeError, KeyError):  # an older library
        return xp.float64, xp.int64
    return (xp.float64 if "float64" in floats else xp.float32), index


def _float(xp, x, name):
    """``x`` with the dtype policy of the library: float32 and float64 kept,
    other real dtypes (booleans, integers, other floats) become float64 (or
    float32 where the library or the device has no float64)."""
    dt = x.dtype
    if dt == xp.float32 or dt == xp.float64:
        return x
    if xp.isdtype(dt, ("bool", "integral", "real floating")):
        return xp.astype(x, _info(xp, x)[0])
    raise TypeError(f"{name} must be an array of real numbers; got dtype {dt}.")


def _last_axis(xp, x, axis, name):
    """``(x with axis moved last, axis)``, with the NumPy path's checks."""
    axis = normalize_axis(axis, x.ndim, name)
    if x.shape[axis] == 0:
        raise ValueError(
            f"{name} has length 0 along axis {axis}: a distribution needs at "
            "least one entry."
        )
    if axis != x.ndim - 1:
        x = xp.moveaxis(x, axis, -1)
    return x, axis


def _restore(xp, x, axis):
    return x if axis == x.ndim - 1 else xp.moveaxis(x, -1, axis)


def _checked_max(xp, Z, name):
    """Maxima along the last axis (keepdims), raising like the NumPy path.

    One host synchronisation: ``bool(all(isfinite(max)))``. On failure, the
    first offending slice is located on the device and the error is raised
    by the NumPy path's :func:`checked_row_max` (same message).
    """
    zmax = xp.max(Z, axis=-1, keepdims=True)
    ok = xp.isfinite(zmax)
    if not bool(xp.all(ok)):
        flat_ok = xp.reshape(ok, (-1,))
        bad = int(xp.argmin(xp.astype(flat_ok, xp.int32)))
        value = float(xp.reshape(zmax, (-1,))[bad])
        host = np.zeros(flat_ok.shape[0])
        host[bad] = value
        checked_row_max(None, tuple(Z.shape), name, host)
    return zmax


def _zero(xp, x):
    return xp.zeros((), dtype=x.dtype, device=_compat().device(x))


def _arange1(xp, K, like):
    """``[1, 2, ..., K]`` with the dtype and device of ``like``."""
    return xp.arange(1, K + 1, dtype=like.dtype, device=_compat().device(like))


def _prepare(z, axis, name="z"):
    xp, _, (z,) = _namespace(z)
    z = _float(xp, z, name)
    Z, axis = _last_axis(xp, z, axis, name)
    return xp, Z, axis


def _prepare_pair(p, v, axis, names=("p", "v")):
    xp, _, (p, v) = _namespace(p, v)
    p = _float(xp, p, names[0])
    v = _float(xp, v, names[1])
    if tuple(p.shape) != tuple(v.shape):
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same shape; got "
            f"{tuple(p.shape)} and {tuple(v.shape)}."
        )
    both32 = p.dtype == xp.float32 and v.dtype == xp.float32
    dt = xp.float32 if both32 else _info(xp, p)[0]
    P, axis_ = _last_axis(xp, xp.astype(p, dt), axis, names[0])
    V, _ = _last_axis(xp, xp.astype(v, dt), axis, names[1])
    _check_pair(xp, P, V, names)
    return xp, P, V, axis_


def _check_pair(xp, P, V, names):
    """The NumPy path's :func:`check_pair_values`: ``P`` finite and non-negative,
    ``V`` finite. One host synchronisation; on failure the first offending
    slice is located on the device and named as the NumPy path does."""
    ok = xp.isfinite(xp.sum(P)) & xp.isfinite(xp.sum(V))
    if 0 not in tuple(P.shape):
        ok = ok & (xp.min(P) >= 0)
    if bool(ok):
        return
    shape = tuple(P.shape)
    K = shape[-1]
    for A, name, is_p in ((P, names[0], True), (V, names[1], False)):
        R = xp.reshape(A, (-1, K))
        bad = ~xp.isfinite(R)
        if is_p:
            bad = bad | (R < 0)
        rows = xp.any(bad, axis=-1)
        if not bool(xp.any(rows)):
            continue
        row = int(xp.argmax(xp.astype(rows, xp.int32)))
        r = R[row, ...]
        if bool(xp.any(xp.isnan(r))):
            problem = "contains NaN"
        elif bool(xp.any(r == float("inf"))):
            problem = "contains +inf"
        elif bool(xp.any(r == -float("inf"))):
            problem = "contains -inf"
        else:
            problem = "contains a negative entry"
        hint = (
            "an output of the mapping is finite and non-negative"
            if is_p
            else "tangents must be finite"
        )
        raise ValueError(f"{name} {problem} at {_batch_index(row, shape)} ({hint}).")


# --------------------------------------------------------------------------
# softmax
# --------------------------------------------------------------------------
def _softmax_last(xp, Z, name="z"):
    zmax = _checked_max(xp, Z, name)
    E = xp.exp(Z - zmax)
    return E / xp.sum(E, axis=-1, keepdims=True)


def softmax(z, axis=-1):
    xp, Z, axis = _prepare(z, axis)
    return _restore(xp, _softmax_last(xp, Z), axis)


def _softmax_jvp_last(xp, P, V):
    PV = P * V
    return PV - P * xp.sum(PV, axis=-1, keepdims=True)


def softmax_jvp(p, v, axis=-1):
    xp, P, V, axis = _prepare_pair(p, v, axis)
    return _restore(xp, _softmax_jvp_last(xp, P, V), axis)


# --------------------------------------------------------------------------
# sparsemax
# --------------------------------------------------------------------------
def _sparsemax_parts(xp, Z, name="z"):
    """``(U, zmax, tau, size)``: shifted scores ``U = Z - max``, the threshold
    in shifted units and the support size (float), both with keepdims.

    Sorted closed form: with ``u`` sorted in decreasing order and ``c_k`` its
    cumulative sums, the support size is the number of ``k`` with
    ``1 + k u_(k) > c_k``, and ``tau = (c_size - 1) / size``.
    """
    zmax = _checked_max(xp, Z, name)
    U = Z - zmax
    # Entries <= -1 are never in the support (tau >= max u - 1 = -1):
    # clipping them at -2 keeps the sums finite and changes no result.
    srt = xp.sort(xp.clip(U, min=-2.0), axis=-1, descending=True)
    rho = _arange1(xp, Z.shape[-1], Z)
    inside = (1 + rho * srt) > xp.cumulative_sum(srt, axis=-1)
    zero = _zero(xp, srt)
    size = xp.sum(xp.astype(inside, srt.dtype), axis=-1, keepdims=True)
    tau = (xp.sum(xp.where(inside, srt, zero), axis=-1, keepdims=True) - 1) / size
    return U, zmax, tau, size


def sparsemax(z, axis=-1):
    xp, Z, axis = _prepare(z, axis)
    U, _, tau, _ = _sparsemax_parts(xp, Z)
    return _restore(xp, xp.clip(U - tau, min=0.0), axis)


def sparsemax_threshold(z, axis=-1):
    xp, Z, _ = _prepare(z, axis)
    _, zmax, tau, size = _sparsemax_parts(xp, Z)
    return (tau + zmax)[..., 0], xp.astype(size[..., 0], _info(xp, Z)[1])


def sparsemax_jvp(p, v, axis=-1):
    xp, P, V, axis = _prepare_pair(p, v, axis)
    mask = P > 0
    zero = _zero(xp, V)
    count = xp.sum(xp.astype(mask, V.dtype), axis=-1, keepdims=True)
    mean = xp.sum(xp.where(mask, V, zero), axis=-1, keepdims=True) / count
    return _restore(xp, xp.where(mask, V - mean, zero), axis)


# --------------------------------------------------------------------------
# top-k sparse-softmax
# --------------------------------------------------------------------------
def sparse_softmax(z, k, axis=-1):
    """``k`` already validated (an int >= 1)."""
    xp, Z, axis = _prepare(z, axis)
    K = Z.shape[-1]
    if k >= K:
        return _restore(xp, _softmax_last(xp, Z), axis)
    zmax = _checked_max(xp, Z, "z")
    srt = xp.sort(Z, axis=-1, descending=True)
    kth = srt[..., k - 1 : k]
    mask = Z > kth
    ties = Z == kth
    index = _info(xp, Z)[1]
    missing = k - xp.sum(xp.astype(mask, index), axis=-1, keepdims=True)
    # Keep the first `missing` tied entries of each slice (lowest index wins).
    mask = mask | (ties & (xp.cumulative_sum(xp.astype(ties, index), axis=-1) <= missing))
    zero = _zero(xp, Z)
    E = xp.where(mask, xp.exp(Z - zmax), zero)
    return _restore(xp, E / xp.sum(E, axis=-1, keepdims=True), axis)


# --------------------------------------------------------------------------
# helpers shared by the entmax-family modules (_array_api_entmax, ...)
# --------------------------------------------------------------------------
def _pick(xp, Y, index):
    """``Y[..., index]`` per slice (``index`` with keepdims): a one-hot sum,
    as ``take_along_axis`` is not in the 2023.12 standard."""
    cols = xp.arange(Y.shape[-1], dtype=index.dtype, device=_compat().device(Y))
    return xp.sum(xp.where(cols == index, Y, _zero(xp, Y)), axis=-1, keepdims=True)


def _power_where(xp, D, pos, e):
    """``D ** e`` where ``pos``, 0 elsewhere (no NaN from a negative base)."""
    one = xp.ones((), dtype=D.dtype, device=_compat().device(D))
    return xp.where(pos, xp.where(pos, D, one) ** e, _zero(xp, D))
