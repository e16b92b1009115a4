"""Shared helpers of :mod:`sksparsemax.datasets`: reading (possibly gzipped) text
files and validating scalar parameters."""

import gzip
import numbers
import os
from importlib import resources

import numpy as np
from sklearn.utils import check_random_state

_GZIP_MAGIC = b"\x1f\x8b"


def _decode(raw, name):
    """Bytes -> str: gunzip when the bytes start with the gzip magic number, then
    decode as UTF-8 (falling back to Latin-1, which never fails)."""
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{name}: corrupt gzip data ({exc})") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _read_text(source):
    """Read a whole text file, gzipped or not.

    Parameters
    ----------
    source : str, os.PathLike or file object
        A path, or an open file object (text or binary).

    Returns
    -------
    text : str
    name : str
        The name to use in error messages (the path, or the file object's
        ``name`` attribute).
    """
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<file object>"))
        content = source.read()
        if isinstance(content, bytes):
            content = _decode(content, name)
        return content, name
    name = os.fspath(source)
    with open(name, "rb") as fh:
        raw = fh.read()
    return _decode(raw, name), name


def _read_package_data(filename):
    """Read a file of ``sksparsemax/datasets/data`` as text (gunzipped if needed)."""
    resource = resources.files(__package__).joinpath("data", filename)
    return _decode(resource.read_bytes(), f"sksparsemax/datasets/data/{filename}")


def _check_int(value, name, min_value):
    """Return ``value`` as an int if it is an integer >= ``min_value``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {min_value}, got {value!r}.")
    if value < min_value:
        raise ValueError(f"{name} must be an integer >= {min_value}, got {value!r}.")
    return int(value)


def _check_positive_real(value, name):
    """Return ``value`` as a float if it is a finite real number > 0."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive real number, got {value!r}.")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive real number, got {value!r}.")
    return float(value)


def _check_generator(random_state):
    """A :class:`numpy.random.Generator` from ``random_state``.

    A Generator is used as is; anything :func:`sklearn.utils.check_random_state`
    accepts (None, an int, a RandomState) seeds a new Generator from that
    RandomState, so that ``np.random.seed`` and RandomState instances keep their
    usual meaning.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    try:
        rs = check_random_state(random_state)
    except ValueError as exc:
        raise ValueError(
            "random_state must be None, an int, a numpy RandomState or a numpy "
            f"Generator, got {random_state!r}."
        ) from exc
    seed = rs.randint(0, 2**32, size=4, dtype=np.uint64)
    return np.random.default_rng(seed)
