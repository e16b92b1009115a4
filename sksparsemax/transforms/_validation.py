"""Array handling shared by every mapping: dtype policy, axis handling and the
NaN / +inf / all -inf policy.  Pure NumPy (this layer never imports
scikit-learn)."""

import operator

import numpy as np


def as_float_array(z, name="z"):
    """Return ``z`` as a float32 or float64 ndarray.

    float32 and float64 are kept; booleans, integers and other real floating
    types become float64; anything else is a ``TypeError`` naming ``name``.
    """
    z = np.asarray(z)
    if z.dtype in (np.float32, np.float64):
        return z
    if z.dtype.kind in "biuf":
        return z.astype(np.float64)
    raise TypeError(
        f"{name} must be an array of real numbers; got dtype {z.dtype}."
    )


def normalize_axis(axis, ndim, name="z"):
    """Return a non-negative axis index, with an error naming the array."""
    if ndim == 0:
        raise ValueError(f"{name} must have at least one dimension; got a scalar.")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer; got {axis!r}.") from None
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"axis {axis} is out of bounds for {name} with {ndim} dimension(s)."
        )
    return axis % ndim


def to_rows(z, axis, name="z"):
    """View ``z`` as a 2-D array of rows along ``axis``.

    Returns ``(Z, shape, axis)``: ``Z`` has shape ``(n_rows, K)`` (a view when
    ``axis`` is the last axis of a C-contiguous array, a copy otherwise);
    ``shape`` and ``axis`` undo the transformation in :func:`from_rows`.
    """
    axis = normalize_axis(axis, z.ndim, name)
    if z.shape[axis] == 0:
        raise ValueError(
            f"{name} has length 0 along axis {axis}: a distribution needs at "
            "least one entry."
        )
    moved = np.moveaxis(z, axis, -1)
    return moved.reshape(-1, moved.shape[-1]), moved.shape, axis


def from_rows(rows, shape, axis):
    """Inverse of :func:`to_rows` for an array with the same number of rows."""
    return np.moveaxis(rows.reshape(shape), -1, axis)


def batch_from_rows(values, shape):
    """Reshape per-row values (n_rows,) to the batch shape (``shape[:-1]``)."""
    return values.reshape(shape[:-1])


def _batch_index(row, shape):
    """Human-readable position of flat row ``row`` in the batch shape."""
    batch = shape[:-1]
    if len(batch) <= 1:
        return f"row {row}"
    return f"position {tuple(int(i) for i in np.unravel_index(row, batch))}"


def checked_row_max(Z, shape, name="z", zmax=None):
    """Row maxima of the 2-D ``Z``, raising on NaN, +inf and all -inf rows.

    This is the single place that implements the library's policy for invalid
    scores: ``-inf`` entries are masks (probability exactly 0); a NaN or a
    ``+inf`` entry, or a row whose entries are all ``-inf``, has no meaningful
    distribution and raises a ``ValueError`` that names the first bad row.
    The check costs nothing extra: the row maxima are needed anyway (NaN
    propagates through ``max``); pass them as ``zmax`` if already computed.
    """
    if zmax is None:
        zmax = Z.max(axis=1, keepdims=True)
    else:
        zmax = zmax.reshape(-1, 1)
    if not np.isfinite(zmax).all():
        flat = zmax.ravel()
        bad = int(np.flatnonzero(~np.isfinite(flat))[0])
        where = _batch_index(bad, shape)
        if np.isnan(flat[bad]):
            problem = "contains NaN"
        elif flat[bad] > 0:
            problem = "contains +inf (scores must be finite, or -inf to mask an entry)"
        else:
            problem = "has every entry equal to -inf (nothing left to put probability on)"
        raise ValueError(f"{name} {problem} at {where}.")
    return zmax


def raise_invalid_row(Z, shape, name, zmax, bad):
    """Raise the error of :func:`checked_row_max` for a compiled kernel.

    The kernels of the numba backend store the row maxima in ``zmax`` up to
    and including the first invalid row ``bad`` (-1 if there is none) and
    stop there; this raises the same ``ValueError`` as the NumPy path.
    """
    if bad >= 0:
        zmax = zmax.copy()
        zmax[bad + 1 :] = 0
        checked_row_max(Z, shape, name, zmax)


def compiled_rows(kernel, Z, shape, *params, name="z"):
    """Run a row kernel of the numba backend on the rows ``Z``; return its output.

    ``kernel(Z, *params, out, zmax)`` writes ``out`` (shape and dtype of
    ``Z``) and the row maxima, and returns its first invalid row or -1,
    which is raised with the NumPy path's error (:func:`raise_invalid_row`).
    """
    Z = np.ascontiguousarray(Z)
    out = np.empty_like(Z)
    zmax = np.empty(Z.shape[0], Z.dtype)
    bad = kernel(Z, *params, out, zmax)
    raise_invalid_row(Z, shape, name, zmax, bad)
    return out


def check_same_shape(p, v, names=("p", "v")):
    """Raise a ``ValueError`` unless ``p`` and ``v`` have the same shape."""
    if p.shape != v.shape:
        raise ValueError(
            f"{names[0]} and {names[1]} must have the same shape; got "
            f"{p.shape} and {v.shape}."
        )


def result_float_dtype(*arrays):
    """float32 if every array is float32, float64 otherwise."""
    if all(a.dtype == np.float32 for a in arrays):
        return np.float32
    return np.float64


def pair_to_rows(p, v, axis, names=("p", "v")):
    """Validate an output/tangent pair of a JVP and view both as rows.

    Returns ``(P, V, shape, axis)`` with a common float dtype (float32 only if
    both are float32).
    """
    p = as_float_array(p, names[0])
    v = as_float_array(v, names[1])
    check_same_shape(p, v, names)
    dtype = result_float_dtype(p, v)
    P, shape, axis = to_rows(p.astype(dtype, copy=False), axis, names[0])
    V, _, _ = to_rows(v.astype(dtype, copy=False), axis, names[1])
    return P, V, shape, axis
