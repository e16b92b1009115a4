"""Validation of loss targets: class indices or target distributions.

A loss target is either a vector of class indices ``y`` (n_samples,) or a
matrix ``Q`` (n_samples, n_classes) whose rows are probability distributions
(one-hot rows or label proportions). :func:`check_target` validates either
form once and returns a :class:`Target`, which every loss method accepts
without validating it again.
"""

import operator

import numpy as np

#: Default tolerance on ``|sum_j Q[i, j] - 1|`` for 64-bit (and integer) targets.
SUM_TOL = 1e-6
#: Default tolerance for float32 (or lower precision) targets.
SUM_TOL_FLOAT32 = 1e-4


class Target:
    """A validated loss target, as returned by :func:`check_target`.

    Losses accept a ``Target`` wherever they accept a raw target and never
    validate it again (only its shape is compared with the scores, which
    costs nothing). This is the fast path for solvers that evaluate a loss
    many times on the same target.

    Exactly one of ``indices`` and ``proba`` is set. Target matrices whose
    rows are all one-hot are stored as indices.

    Parameters
    ----------
    n_samples : int
        Number of samples (rows of the scores).
    n_classes : int
        Number of classes (columns of the scores).
    indices : ndarray of shape (n_samples,), dtype intp, optional
        Class indices in ``[0, n_classes)``.
    proba : ndarray of shape (n_samples, n_classes), dtype float64, optional
        Target distributions (non-negative rows summing to 1).

    Attributes
    ----------
    n_samples : int
        Number of samples.
    n_classes : int
        Number of classes.
    indices : ndarray or None
        Class indices, or None when the target is a distribution matrix.
    proba : ndarray or None
        Target distributions, or None when the target is stored as indices.

    See Also
    --------
    check_target : Validate a raw target and build a ``Target``.

    Examples
    --------
    >>> from sksparsemax.losses import check_target
    >>> t = check_target([[0.0, 1.0], [1.0, 0.0]], n_samples=2, n_classes=2)
    >>> t.is_indices, t.indices
    (True, array([1, 0]))
    """

    __slots__ = ("n_samples", "n_classes", "indices", "proba", "_cache")

    def __init__(self, n_samples, n_classes, *, indices=None, proba=None):
        if (indices is None) == (proba is None):
            raise ValueError("Exactly one of indices and proba must be given.")
        self.n_samples = int(n_samples)
        self.n_classes = int(n_classes)
        self.indices = indices
        self.proba = proba
        self._cache = {}

    @property
    def is_indices(self):
        """Whether the target is stored as class indices (bool)."""
        return self.indices is not None

    def __repr__(self):
        kind = "indices" if self.is_indices else "proba"
        return (
            f"Target({kind}, n_samples={self.n_samples}, "
            f"n_classes={self.n_classes})"
        )

    def cached(self, key, compute):
        """Return ``compute()``, computed once per ``key`` and then stored.

        Used for per-target constants of the losses (for example the entropy
        of the target distributions), which a solver would otherwise
        recompute on every iteration.

        Parameters
        ----------
        key : hashable
            Name of the quantity.
        compute : callable
            Function of no argument computing it.

        Returns
        -------
        object
            The stored value.
        """
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = compute()
            return value

    def proba_as(self, dtype):
        """Return :attr:`proba` cast to ``dtype`` (cached per dtype).

        Parameters
        ----------
        dtype : numpy dtype
            The requested dtype (float32 or float64).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The target distributions in ``dtype``.
        """
        dtype = np.dtype(dtype)
        if self.proba.dtype == dtype:
            return self.proba
        return self.cached(("proba", dtype.str), lambda: self.proba.astype(dtype))

    def positive(self):
        """Return the mask ``proba > 0`` and whether it is all True (cached).

        Returns
        -------
        mask : ndarray of bool, shape (n_samples, n_classes)
            Entries with positive target probability.
        all_positive : bool
            True when every entry is positive.
        """

        def compute():
            mask = self.proba > 0
            return mask, bool(mask.all())

        return self.cached("positive", compute)


def _check_size(value, name, minimum):
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer; got {value!r}.") from None
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}; got {value}.")
    return value


def _read_only(a):
    a.setflags(write=False)
    return a


def _as_numeric(target):
    t = np.asarray(target)
    if t.dtype.kind == "O":
        try:
            t = t.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                "target must contain numbers (class indices or probabilities); "
                "got an object array that cannot be converted to float."
            ) from None
    if t.dtype.kind not in "biuf":
        raise ValueError(
            "target must contain numbers (class indices or probabilities); "
            f"got dtype {t.dtype}."
        )
    return t


def _check_indices(y, n_samples, n_classes):
    if y.shape[0] != n_samples:
        raise ValueError(
            f"target has {y.shape[0]} class indices but the scores have "
            f"{n_samples} rows (n_samples)."
        )
    if y.dtype.kind == "f":
        bad = ~np.isfinite(y)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "NaN" if np.isnan(y[i]) else f"the non-finite value {y[i].item()}"
            raise ValueError(f"target contains {what} at position {i}.")
        bad = y != np.round(y)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"target contains the non-integer value {y[i].item()!r} at position {i}; "
                "class indices must be integers."
            )
    bad = (y < 0) | (y >= n_classes)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = y[i].item()
        if isinstance(value, float):
            value = int(value)
        raise ValueError(
            f"target contains the class index {value} at position {i}, outside "
            f"[0, {n_classes}) (n_classes={n_classes})."
        )
    return Target(n_samples, n_classes, indices=_read_only(y.astype(np.intp)))


def _check_proba(Q, n_samples, n_classes, tol):
    if Q.shape != (n_samples, n_classes):
        if Q.shape[0] != n_samples:
            problem = f"{Q.shape[0]} rows but the scores have {n_samples} (n_samples)"
        else:
            problem = (
                f"{Q.shape[1]} columns but the scores have {n_classes} (n_classes)"
            )
        hint = ""
        if Q.shape[1] == 1:
            hint = " For class indices pass a 1-D array (e.g. y.ravel())."
        raise ValueError(f"target matrix of shape {Q.shape} has {problem}.{hint}")
    if tol is None:
        low_precision = Q.dtype.kind == "f" and Q.dtype.itemsize < 8
        tol = SUM_TOL_FLOAT32 if low_precision else SUM_TOL
    elif not tol >= 0:
        raise ValueError(f"tol must be a non-negative number; got tol={tol!r}.")
    Q = np.array(Q, dtype=np.float64)  # a private copy
    if n_samples == 0:
        return Target(n_samples, n_classes, proba=_read_only(Q))
    rows_bad = ~np.isfinite(Q).all(axis=1)
    if rows_bad.any():
        i = int(np.flatnonzero(rows_bad)[0])
        what = "NaN" if np.isnan(Q[i]).any() else "an infinite value"
        raise ValueError(f"target contains {what} in row {i}.")
    rows_bad = (Q < 0).any(axis=1)
    if rows_bad.any():
        i = int(np.flatnonzero(rows_bad)[0])
        j = int(np.flatnonzero(Q[i] < 0)[0])
        raise ValueError(
            f"target row {i} has the negative proportion {Q[i, j]:.10g} (column {j}); "
            "target distributions must be non-negative."
        )
    sums = Q.sum(axis=1)
    rows_bad = np.abs(sums - 1) > tol
    if rows_bad.any():
        i = int(np.flatnonzero(rows_bad)[0])
        raise ValueError(
            f"target row {i} sums to {sums[i]:.10g}, not 1 (tolerance {tol:g}); "
            "target distributions must sum to 1."
        )
    if np.all((Q == 0) | (Q == 1)):  # every row one-hot: store the indices
        return Target(
            n_samples, n_classes, indices=_read_only(np.argmax(Q, axis=1).astype(np.intp))
        )
    Q /= sums[:, None]
    return Target(n_samples, n_classes, proba=_read_only(Q))


def check_target(target, n_samples, n_classes, *, tol=None):
    """Validate a loss target once and return its normalised form.

    A target is either

    - class indices ``y`` of shape (n_samples,): integers in
      ``[0, n_classes)`` (floats with integral values are accepted), or
    - a matrix ``Q`` of shape (n_samples, n_classes) whose rows are
      distributions: one-hot rows, or label proportions (non-negative rows
      that sum to 1 within ``tol``).

    Rows of ``Q`` are divided by their sums, so they sum to 1 up to rounding.
    A ``Q`` whose rows are all one-hot is stored as class indices (the losses
    are then computed without any dense one-hot matrix).

    Every loss method accepts the returned :class:`Target` and does not
    validate it again; pass it when evaluating a loss many times on the same
    target (for example inside an L-BFGS loop).

    Parameters
    ----------
    target : array_like of shape (n_samples,) or (n_samples, n_classes)
        Class indices or target distributions. A :class:`Target` is
        returned unchanged after checking its shape.
    n_samples : int
        Number of samples (rows of the score matrix).
    n_classes : int
        Number of classes (columns of the score matrix).
    tol : float, optional
        Tolerance on ``|sum_j Q[i, j] - 1|``. Default ``1e-6``, or ``1e-4``
        when ``Q`` is float32 (or of lower precision).

    Returns
    -------
    Target
        The validated target (private read-only copies of the data).

    Raises
    ------
    ValueError
        If the shape does not match ``(n_samples,)`` or
        ``(n_samples, n_classes)`` (the message says which dimension), if a
        class index is out of range, non-integer or NaN (the message names
        the value and its position), or if a row of ``Q`` contains NaN or
        infinity, a negative entry, or does not sum to 1 within ``tol`` (the
        message names the row, and the value or the sum).

    See Also
    --------
    Target : The normalised representation.

    Examples
    --------
    >>> from sksparsemax.losses import check_target
    >>> check_target([2, 0], n_samples=2, n_classes=3)
    Target(indices, n_samples=2, n_classes=3)
    >>> t = check_target([[0.5, 0.5, 0.0]], n_samples=1, n_classes=3)
    >>> t.proba
    array([[0.5, 0.5, 0. ]])
    >>> check_target([[0.5, 0.6, 0.0]], n_samples=1, n_classes=3)
    Traceback (most recent call last):
    ...
    ValueError: target row 0 sums to 1.1, not 1 (tolerance 1e-06); ...
    """
    n_samples = _check_size(n_samples, "n_samples", 0)
    n_classes = _check_size(n_classes, "n_classes", 1)
    if isinstance(target, Target):
        if (target.n_samples, target.n_classes) != (n_samples, n_classes):
            raise ValueError(
                f"target was checked for {target.n_samples} samples and "
                f"{target.n_classes} classes but the scores have shape "
                f"({n_samples}, {n_classes})."
            )
        return target
    t = _as_numeric(target)
    if t.ndim == 1:
        return _check_indices(t, n_samples, n_classes)
    if t.ndim == 2:
        return _check_proba(t, n_samples, n_classes, tol)
    raise ValueError(
        "target must be class indices of shape (n_samples,) or a distribution "
        f"matrix of shape (n_samples, n_classes); got an array of shape {t.shape}."
    )


def resolve_target(target, n_samples, n_classes, check):
    """Return a :class:`Target`, validated unless ``check`` is False.

    With ``check=False`` a raw target is wrapped as is: 1-D arrays are taken
    as class indices, 2-D arrays as distributions, with no validation, no
    normalisation and no one-hot compression. A :class:`Target` is never
    validated again (only its shape is compared).
    """
    if check or isinstance(target, Target):
        return check_target(target, n_samples, n_classes)
    t = np.asarray(target)
    if t.ndim == 1:
        return Target(n_samples, n_classes, indices=t.astype(np.intp, copy=False))
    return Target(n_samples, n_classes, proba=t.astype(np.float64, copy=False))
