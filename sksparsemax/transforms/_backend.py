"""Choice of the computational backend: pure NumPy or compiled numba kernels.

The mappings have two implementations with the same results (to rounding):
vectorised NumPy (always available) and compiled row kernels
(:mod:`._numba_kernels`, used only if :mod:`numba` is installed, e.g. with
``pip install "sksparsemax[fast]"``). The setting is one of

``"auto"`` (default)
    numba when it is importable, NumPy otherwise;
``"numpy"``
    always the NumPy path;
``"numba"``
    always the numba kernels (an ``ImportError`` if numba is missing).

It is read from the environment variable ``SKSPARSEMAX_BACKEND`` at import
time, changed globally with :func:`set_backend` and temporarily (for the
current thread or task) with the context manager :func:`backend`.
"""

import contextlib
import contextvars
import importlib.util
import os

_CHOICES = ("auto", "numpy", "numba")
_ENV = "SKSPARSEMAX_BACKEND"

_kernels = None  # the imported _numba_kernels module, once needed
_numba_found = None  # cached result of the import probe


def _check_name(name, source="backend"):
    if not isinstance(name, str) or name.lower() not in _CHOICES:
        raise ValueError(
            f"{source} must be one of {', '.join(map(repr, _CHOICES))}; got {name!r}."
        )
    return name.lower()


def _numba_available():
    global _numba_found
    if _numba_found is None:
        _numba_found = importlib.util.find_spec("numba") is not None
    return _numba_found


def _require_numba():
    if not _numba_available():
        raise ImportError(
            "the 'numba' backend needs numba, which is not installed; install it "
            'with `pip install "sksparsemax[fast]"` (or `pip install numba`), '
            "or use the 'numpy' backend."
        )


def _checked_choice(name):
    """``name`` as a setting, raising if it is invalid or needs a missing numba."""
    name = _check_name(name)
    if name == "numba":
        _require_numba()
    return name


def _initial_setting():
    value = os.environ.get(_ENV, "").strip()
    if not value:
        return "auto"
    return _check_name(value, f"the environment variable {_ENV}")


_global_setting = _initial_setting()
_local_setting = contextvars.ContextVar("sksparsemax_backend", default=None)


def _setting():
    local = _local_setting.get()
    return _global_setting if local is None else local


def get_backend():
    """Return the backend the mappings use now: ``"numpy"`` or ``"numba"``.

    The setting ``"auto"`` resolves to ``"numba"`` when numba is installed
    and to ``"numpy"`` otherwise.

    Returns
    -------
    name : {"numpy", "numba"}
        The backend in effect.

    See Also
    --------
    set_backend, backend

    Examples
    --------
    >>> from sksparsemax.transforms import backend, get_backend
    >>> with backend("numpy"):
    ...     get_backend()
    'numpy'
    """
    setting = _setting()
    if setting == "auto":
        return "numba" if _numba_available() else "numpy"
    return setting


def set_backend(name):
    """Choose the backend of the mappings for the whole process.

    The two backends give the same results up to rounding (a few units in
    the last place). The compiled kernels are faster (several times, on
    every shape); their first use in a fresh environment compiles them, a
    few seconds that are then cached on disk.

    Parameters
    ----------
    name : {"auto", "numpy", "numba"}
        ``"auto"`` (the default, also settable with the environment variable
        ``SKSPARSEMAX_BACKEND``) uses numba when it is installed, NumPy
        otherwise; ``"numpy"`` forces the pure NumPy path; ``"numba"`` forces
        the compiled kernels. Inside a :func:`backend` block, the block's
        choice takes precedence until it exits.

    Returns
    -------
    previous : str
        The previous global setting (to restore it later).

    Raises
    ------
    ValueError
        If ``name`` is not one of the three choices.
    ImportError
        If ``name`` is ``"numba"`` and numba is not installed.

    See Also
    --------
    backend : Temporary choice, as a context manager.
    get_backend : The backend in effect.

    Examples
    --------
    >>> from sksparsemax.transforms import set_backend, get_backend
    >>> previous = set_backend("numpy")
    >>> get_backend()
    'numpy'
    >>> _ = set_backend(previous)
    """
    global _global_setting
    name = _checked_choice(name)
    previous, _global_setting = _global_setting, name
    return previous


@contextlib.contextmanager
def backend(name):
    """Context manager: use backend ``name`` inside the ``with`` block.

    The choice is local to the current thread (or asyncio task) and is
    undone on exit, also on an exception.

    Parameters
    ----------
    name : {"auto", "numpy", "numba"}
        See :func:`set_backend`.

    Yields
    ------
    name : {"numpy", "numba"}
        The backend in effect inside the block.

    Raises
    ------
    ValueError
        If ``name`` is not one of the three choices.
    ImportError
        If ``name`` is ``"numba"`` and numba is not installed.

    See Also
    --------
    set_backend, get_backend

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.transforms import backend, sparsemax
    >>> with backend("numpy"):
    ...     p = sparsemax([1.0, 0.2, -1.0])
    >>> p
    array([0.9, 0.1, 0. ])
    """
    name = _checked_choice(name)
    token = _local_setting.set(name)
    try:
        yield get_backend()
    finally:
        _local_setting.reset(token)


def numba_enabled():
    """Whether the numba backend is in effect: the one test of every layer.

    The compiled paths of the mappings, the losses and the linear models all
    ask this function, so that one setting switches them together.
    """
    return get_backend() == "numba"


def kernels():
    """The compiled kernels module if the numba backend is in effect, else None."""
    global _kernels
    if not numba_enabled():
        return None
    if _kernels is None:
        from . import _numba_kernels

        _kernels = _numba_kernels
    return _kernels
