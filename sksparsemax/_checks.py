"""Checks of the scalar parameters shared by every layer (``alpha``, ``k``).

The one home of these checks: the mappings, the losses, the estimators and
the continuous densities all validate ``alpha`` and ``k`` here, so that the
same bad value gets the same exception type and message everywhere. This
module imports NumPy only; every subpackage may import it.
"""

import numbers
import operator

import numpy as np


def check_alpha(alpha, name="alpha"):
    """Return ``alpha`` as a float, raising unless it is a finite real >= 1.

    Parameters
    ----------
    alpha : object
        The entmax (Tsallis) parameter to check.
    name : str, default="alpha"
        The parameter's name, for the message.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``alpha`` is not a real number (a bool, a string, an array...).
    ValueError
        If ``alpha`` is below 1, NaN or infinite.
    """
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"{name} must be a real number >= 1; got {alpha!r}.")
    value = float(alpha)
    if not (value >= 1 and np.isfinite(value)):
        raise ValueError(f"{name} must be a finite number >= 1; got {name}={value}.")
    return value


def check_k(k, name="k"):
    """Return ``k`` as an int, raising unless it is an integer >= 1.

    Parameters
    ----------
    k : object
        The number of kept scores to check.
    name : str, default="k"
        The parameter's name, for the message.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``k`` is not an integer (bools and floats are refused: ``True``
        is not a count, and ``2.7`` would be silently truncated).
    ValueError
        If ``k`` is below 1.
    """
    if isinstance(k, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer; got {k!r}.")
    try:
        value = operator.index(k)
    except TypeError:
        raise TypeError(f"{name} must be an integer; got {k!r}.") from None
    if value < 1:
        raise ValueError(f"{name} must be at least 1; got {name}={value}.")
    return value


def check_alpha_values(alpha, name="alpha"):
    """Return ``alpha`` as a float (a scalar) or a float64 array (an array).

    The entmax mappings and losses take one ``alpha`` or one per slice (as
    the ``entmax`` package does); this checks the values, the caller checks
    the shape against the scores.

    Parameters
    ----------
    alpha : object
        A real number >= 1, or an array-like of them (any array that
        :func:`numpy.asarray` converts, e.g. a list or a CPU tensor).
    name : str, default="alpha"
        The parameter's name, for the message.

    Returns
    -------
    float or ndarray
        A float for a scalar (or a 0-d array), a float64 array otherwise.

    Raises
    ------
    TypeError
        If ``alpha`` is neither a real number nor an array of real numbers.
    ValueError
        If a value is below 1, NaN or infinite (the message names the first).
    """
    if isinstance(alpha, (numbers.Number, str, bytes, np.generic)) or alpha is None:
        return check_alpha(alpha, name)
    try:
        values = np.asarray(alpha)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"{name} must be a real number >= 1 or an array of them; got {alpha!r}."
        ) from None
    if values.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must be a real number >= 1 or an array of them; got an "
            f"array of dtype {values.dtype}."
        )
    if values.ndim == 0:
        return check_alpha(values.item(), name)
    values = values.astype(np.float64)
    bad = ~(np.isfinite(values) & (values >= 1))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} must hold finite numbers >= 1; got {name}"
            f"[{', '.join(map(str, where))}]={values[where]}."
        )
    return values
