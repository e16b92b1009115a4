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
