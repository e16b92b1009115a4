"""Array handling shared by every mapping: dtype policy, axis handling and the
NaN / +inf / all -inf policy.  Pure NumPy (this layer never imports
scikit-learn)."""

import numbers
import operator
import sys

import numpy as np

from .._checks import check_k


def _special_input(z, name, masked_value):
    """``z`` (not a plain ndarray) made ready for :func:`numpy.asarray`.

    A NumPy masked array becomes a plain ndarray with its masked entries
    replaced by ``masked_value`` (for scores ``-inf``: masked entries get
    probability exactly 0); a ``scipy.sparse`` matrix or array is refused with
    a ``TypeError`` that says how to densify it. Anything else is returned
    unchanged.
    """
    if isinstance(z, np.ma.MaskedArray):
        data = as_float_array(np.ma.getdata(z), name)
        mask = np.ma.getmask(z)
        if mask is np.ma.nomask or not mask.any():
            return data
        return np.where(mask, data.dtype.type(masked_value), data)
    sparse = sys.modules.get("scipy.sparse")  # imported if z can be sparse at all
    if sparse is not None and sparse.issparse(z):
        raise TypeError(
            f"{name} is a scipy.sparse {type(z).__name__}, which is not supported "
            "(the result would be dense, and an implicit zero would be a value of "
            f"0, not a masked entry): pass {name}.toarray() instead (for scores, "
            "with -inf at the entries to mask)."
        )
    return z


def as_float_array(z, name="z", masked_value=-np.inf):
    """Return ``z`` as a float32 or float64 ndarray.

    float32 and float64 are kept; booleans, integers and other real floating
    types become float64; anything else is a ``TypeError`` naming ``name``.
    A NumPy masked array gives a plain ndarray whose masked entries are
    ``masked_value`` (default ``-inf``: a masked score is a masked class, with
    probability exactly 0); a ``scipy.sparse`` matrix is a ``TypeError``
    (densify it with ``.toarray()``).
    """
    if type(z) is not np.ndarray:
        z = _special_input(z, name, masked_value)
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


def pair_to_rows(p, v, axis, names=("p", "v"), check=True):
    """Validate an output/tangent pair of a JVP and view both as rows.

    Returns ``(P, V, shape, axis)`` with a common float dtype (float32 only if
    both are float32). Masked entries of NumPy masked arrays are 0. With
    ``check`` the values are checked (:func:`check_pair_values`); a JVP whose
    own reductions already reveal NaN and infinities passes ``check=False``
    and calls :func:`raise_bad_pair` itself.
    """
    p = as_float_array(p, names[0], masked_value=0.0)
    v = as_float_array(v, names[1], masked_value=0.0)
    check_same_shape(p, v, names)
    dtype = result_float_dtype(p, v)
    P, shape, axis = to_rows(p.astype(dtype, copy=False), axis, names[0])
    V, _, _ = to_rows(v.astype(dtype, copy=False), axis, names[1])
    if check:
        check_pair_values(P, V, shape, names)
    return P, V, shape, axis


def check_pair_values(P, V, shape, names=("p", "v")):
    """Raise a ``ValueError`` unless ``P`` is finite and non-negative and ``V`` finite.

    The fast path is three reductions without temporaries (a sum of each array,
    which NaN and infinities make non-finite, and the minimum of ``P``); only if
    one of them fails are the rows inspected, and the first offending row is
    named (an overflowing sum of finite entries raises nothing).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        ok = bool(np.isfinite(P.sum()) & np.isfinite(V.sum()) & (P.min(initial=0.0) >= 0))
    if not ok:
        raise_bad_pair(P, V, shape, names)


def raise_bad_pair(P, V, shape, names=("p", "v")):
    """Name the first row of ``P`` (then of ``V``) with a non-finite (or negative) entry.

    Raises nothing if there is none (a reduction that overflowed).
    """
    for A, name, is_p in ((P, names[0], True), (V, names[1], False)):
        checks = [
            (np.isnan(A), "contains NaN"),
            (np.isposinf(A), "contains +inf"),
            (np.isneginf(A), "contains -inf"),
        ]
        if is_p:
            checks.append((A < 0, "contains a negative entry"))
        rows = [m.any(axis=1) for m, _ in checks]
        bad = np.logical_or.reduce(rows)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            problem = next(msg for r, (_, msg) in zip(rows, checks) if r[row])
            hint = (
                "an output of the mapping is finite and non-negative"
                if is_p
                else "tangents must be finite"
            )
            raise ValueError(f"{name} {problem} at {_batch_index(row, shape)} ({hint}).")


def check_tol_max_iter(tol, max_iter):
    """``(tol, max_iter)`` of a root search, checked: ``tol`` a finite number
    > 0 (None: ``4 * eps`` of float64), ``max_iter`` an integer count (2.7
    or True would be silently truncated)."""
    if tol is None:
        tol = 4 * np.finfo(np.float64).eps
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (
        tol > 0 and np.isfinite(tol)
    ):
        raise ValueError(f"tol must be a finite positive number; got tol={tol!r}.")
    return float(tol), check_k(max_iter, name="max_iter")


def per_slice(values, rows_shape, axis, name="alpha"):
    """One parameter per slice of ``z`` along ``axis``.

    ``rows_shape`` and ``axis`` are those returned by :func:`to_rows`.
    ``values`` (an ndarray) has the batch shape (the shape of ``z`` without
    ``axis``), or is broadcastable to the shape of ``z`` with ``axis`` of
    length 1 (the ``entmax`` package's convention). Returns the float64
    values of the rows of :func:`to_rows`, shape ``(n_rows,)``.
    """
    shape = rows_shape[:axis] + rows_shape[-1:] + rows_shape[axis:-1]
    batch = shape[:axis] + shape[axis + 1 :]
    keep = shape[:axis] + (1,) + shape[axis + 1 :]
    if values.shape == batch:
        values = np.expand_dims(values, axis)
    try:
        values = np.broadcast_to(values, keep)
    except ValueError:
        raise ValueError(
            f"{name} of shape {values.shape} does not fit the scores of shape "
            f"{shape}: give one value per slice, an array of shape {batch} or "
            f"one broadcastable to {keep} (axis {axis} of length 1)."
        ) from None
    return np.moveaxis(values, axis, -1).reshape(-1).astype(np.float64)
