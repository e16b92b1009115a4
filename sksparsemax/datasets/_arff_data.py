"""The data section of ARFF files: conversion of values, and the parsers of
blocks of rows used by :func:`._arff.parse_arff`.

A block of numbers goes through NumPy's C parsers (``np.loadtxt`` for dense
rows, ``np.fromstring`` for sparse ones), with no Python object per value;
a block with quotes or nominal names, or one holding an error to locate,
takes the token-by-token path. :class:`_Builder` collects the blocks.
"""

import re
import warnings

import numpy as np
import scipy.sparse as sp

from ._arff_tokens import split_quoted, split_values, unquote


class _Error(ValueError):
    """A ValueError carrying a line number (filled into the message later)."""

    def __init__(self, lineno, message):
        super().__init__(message)
        self.lineno = lineno
        self.message = message


def _fail(name, lineno, message):
    return ValueError(f"{name}, line {lineno}: {message}")



# ----------------------------------------------------------------------------- values


def _convert_cell(token, attribute):
    """Slow, exact conversion of one cell (used to locate errors)."""
    if token == "?":
        return np.nan
    if attribute.kind == "numeric":
        try:
            if "_" in token:  # float() accepts '1_000'; ARFF does not
                raise ValueError
            number = float(token)
        except ValueError:
            raise ValueError(
                f"value {token!r} of numeric attribute {attribute.name!r} is not a number"
            ) from None
        if not np.isfinite(number):  # 'inf', 'nan', or an overflow such as '1e400'
            raise ValueError(
                f"value {token!r} of numeric attribute {attribute.name!r} is not a finite "
                "number (a missing value is written '?')"
            )
        return number
    value = unquote(token)
    if value in attribute.codes:
        return attribute.codes[value]
    if attribute.kind == "nominal_numeric":
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None and number in attribute.codes.values():
            return number
    raise ValueError(
        f"value {token!r} of nominal attribute {attribute.name!r} is not one of "
        f"{{{','.join(attribute.values)}}}"
    )


def _parse_numbers(cells):
    """An array of str cells as float64 (``?`` is NaN); ValueError if one is not a number.

    NumPy, like ``float``, accepts ``1_000``; ARFF does not.
    """
    missing = cells == "?"
    if missing.any():
        cells = np.where(missing, "nan", cells)
    if np.char.find(cells, "_").max(initial=-1) >= 0:
        raise ValueError("'_' in a number")
    values = cells.astype(np.float64)
    if not (np.isfinite(values) | missing).all():
        raise ValueError("a number is not finite")
    return values


def _convert_column(tokens, attribute):
    """Vectorised conversion of a 1-D array of str tokens; None on any failure."""
    tokens = np.asarray(tokens, dtype=str)
    missing = tokens == "?"
    if attribute.kind == "nominal_string":
        codes = np.array([attribute.codes.get(unquote(t), np.nan) for t in tokens.tolist()])
        bad = np.isnan(codes) & ~missing
        return None if bad.any() else codes
    try:
        values = _parse_numbers(tokens)
    except ValueError:
        return None
    if attribute.kind == "nominal_numeric" and not (attribute.declares(values) | missing).all():
        return None
    return values


def _locate_error(tokens_by_row, columns, attributes, line_numbers, name):
    """Find the first cell that does not convert and raise an error for its line."""
    for row, tokens in enumerate(tokens_by_row):
        for col, token in zip(columns[row], tokens):
            try:
                _convert_cell(token, attributes[col])
            except ValueError as exc:
                raise _fail(name, int(line_numbers[row]), str(exc)) from None
    raise AssertionError("conversion failed but no bad cell was found")  # pragma: no cover


# ----------------------------------------------------------------------------- data
#
# The data section is read by blocks of whole lines (about _BLOCK_CHARS
# characters each), so that no Python object is made per value and the
# temporary memory is bounded by the block: a dense block of numbers (``?``
# allowed) goes through NumPy's C parser (np.loadtxt), a sparse block through
# np.fromstring; only a block that does not fit those (quotes, nominal names,
# an error to locate) takes the slower, token-by-token path. Dense rows are
# written into one preallocated float64 array; sparse blocks into arrays that
# are joined once at the end.

# Characters that a dense block of numbers holds: no letter but the exponent's
# (so no 'nan', 'inf', nominal name or quote), no '_'.
_NOT_NUMERIC = re.compile(r"[^0-9eE.+\-,\s?]")
_SPARSE_VALUE = r"\d+[ \t]+[0-9eE.+\-?]+\s*"
_SPARSE_ROW = re.compile(r"\{\s*(?:" + _SPARSE_VALUE + r"(?:,\s*" + _SPARSE_VALUE + r")*)?\}")


def _nominal_groups(attributes):
    """``[(columns, declared values)]``: the ``nominal_numeric`` attributes by value set."""
    groups = {}
    for j, attribute in enumerate(attributes):
        if attribute.kind == "nominal_numeric":
            key = tuple(sorted(attribute.codes.values()))
            groups.setdefault(key, []).append(j)
    return [(np.asarray(cols), np.asarray(key)) for key, cols in groups.items()]


def _declared(values, codes):
    return np.isin(values, codes) | np.isnan(values)


def _fast_dense(rows, attributes, groups):
    """A block of numeric rows by NumPy's C parser; None when that does not apply.

    ``?`` is read as NaN. None (the caller then takes the slow path, which
    also locates errors) for quotes, letters, a wrong number of values, a
    value that does not parse, overflows to infinity, or is not a declared
    nominal value.
    """
    joined = "\n".join(rows)
    if _NOT_NUMERIC.search(joined):
        return None
    missing = "?" in joined
    del joined
    if missing:
        rows = [r.replace("?", "nan") if "?" in r else r for r in rows]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            data = np.loadtxt(rows, delimiter=",", dtype=np.float64, comments=None, ndmin=2)
    except (ValueError, UserWarning):
        return None
    if data.shape != (len(rows), len(attributes)) or np.isinf(data).any():
        return None
    for cols, codes in groups:
        if not _declared(data[:, cols], codes).all():
            return None
    return data


def _parse_dense(rows, line_numbers, attributes, name):
    """Slow path of a dense block: tokens, then column-wise conversion."""
    n_attributes = len(attributes)
    try:
        tokens = [
            split_quoted(r) if ("'" in r or '"' in r) else r.split(",") for r in rows
        ]
    except ValueError as exc:  # unterminated quote: find the line
        for r, lineno in zip(rows, line_numbers):
            if "'" in r or '"' in r:
                try:
                    split_quoted(r)
                except ValueError:
                    raise _fail(name, int(lineno), str(exc)) from None
        raise  # pragma: no cover
    lengths = np.fromiter(map(len, tokens), dtype=np.intp, count=len(tokens))
    bad = np.flatnonzero(lengths != n_attributes)
    if bad.size:
        i = bad[0]
        raise _fail(
            name,
            int(line_numbers[i]),
            f"expected {n_attributes} comma-separated values, got {lengths[i]}",
        )
    cells = np.array(tokens, dtype=str).reshape(len(rows), n_attributes)
    del tokens
    if any((" " in r or "\t" in r) for r in rows):
        cells = np.char.strip(cells)
    data = np.empty(cells.shape, dtype=np.float64)
    numeric = [j for j, a in enumerate(attributes) if a.kind == "numeric"]
    if numeric:
        try:
            data[:, numeric] = _parse_numbers(cells[:, numeric])
        except ValueError:
            numeric_attrs = [attributes[j] for j in numeric]
            _locate_error(
                cells[:, numeric].tolist(),
                [range(len(numeric))] * len(rows),
                numeric_attrs,
                line_numbers,
                name,
            )
    for j, attribute in enumerate(attributes):
        if attribute.kind == "numeric":
            continue
        column = _convert_column(cells[:, j], attribute)
        if column is None:
            _locate_error(
                cells[:, j : j + 1].tolist(), [[j]] * len(rows), attributes, line_numbers, name
            )
        data[:, j] = column
    return data


def _parse_sparse_row(row, n_attributes):
    """Indices and value tokens of one ``{i v, ...}`` row (raises ValueError)."""
    if not row.endswith("}"):
        raise ValueError("sparse row does not end with '}' (instance weights are not supported)")
    inner = row[1:-1].strip()
    if not inner:
        return [], []
    entries = split_quoted(inner) if ("'" in inner or '"' in inner) else inner.split(",")
    indices, values = [], []
    for entry in entries:
        parts = entry.split(None, 1)
        if len(parts) != 2:
            raise ValueError(f"sparse entry {entry.strip()!r} is not 'index value'")
        try:
            index = int(parts[0])
        except ValueError:
            raise ValueError(f"sparse entry {entry.strip()!r}: index is not an integer") from None
        if not 0 <= index < n_attributes:
            raise ValueError(
                f"sparse entry {entry.strip()!r}: index {index} out of range "
                f"[0, {n_attributes - 1}]"
            )
        indices.append(index)
        values.append(parts[1].strip())
    if len(set(indices)) != len(indices):
        raise ValueError("repeated index in sparse row")
    return indices, values


def _fast_sparse(rows, n_attributes, groups, index_dtype):
    """A block of ``{i v, ...}`` rows of numbers by np.fromstring; None when that
    does not apply (the slow path then runs, and locates errors).

    Returns ``(counts, indices, values)``: entries per row, and the entries,
    sorted by index within each row.
    """
    match = _SPARSE_ROW.fullmatch
    counts = np.zeros(len(rows), dtype=np.int64)
    inners = []
    for i, row in enumerate(rows):
        if match(row) is None:
            return None
        inner = row[1:-1].strip()
        if inner:
            counts[i] = inner.count(",") + 1
            inners.append(inner)
    total = int(counts.sum())
    if total == 0:
        return counts, np.empty(0, dtype=index_dtype), np.empty(0)
    joined = " ".join(inners).replace(",", " ")
    del inners
    if "?" in joined:
        joined = joined.replace("?", "nan")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            flat = np.fromstring(joined, dtype=np.float64, sep=" ")
    except (ValueError, DeprecationWarning):
        return None
    del joined
    if flat.size != 2 * total:
        return None
    positions = flat[0::2]
    if not (positions < n_attributes).all():  # the pattern admits digits only
        return None
    values = flat[1::2].copy()
    del flat
    if np.isinf(values).any():
        return None
    indices = positions.astype(index_dtype)
    del positions
    key = np.repeat(np.arange(len(rows), dtype=np.int64), counts) * n_attributes + indices
    steps = np.diff(key)
    if not (steps > 0).all():
        order = np.argsort(key, kind="stable")
        if (np.diff(key[order]) == 0).any():  # a repeated index
            return None
        indices, values = indices[order], values[order]
    del key, steps
    if groups:
        group_of = np.full(n_attributes, -1, dtype=np.intp)
        for g, (cols, _codes) in enumerate(groups):
            group_of[cols] = g
        group = group_of[indices]
        for g, (_cols, codes) in enumerate(groups):
            if not _declared(values[group == g], codes).all():
                return None
    return counts, indices, values


def _parse_sparse(rows, line_numbers, attributes, name, index_dtype):
    """Slow path of a block of a sparse file (any row may be dense)."""
    n_attributes = len(attributes)
    counts = np.zeros(len(rows), dtype=np.int64)
    all_indices, all_values = [], []
    for i, (row, lineno) in enumerate(zip(rows, line_numbers)):
        try:
            if row.startswith("{"):
                indices, values = _parse_sparse_row(row, n_attributes)
            else:
                values = split_values(row)
                if len(values) != n_attributes:
                    raise ValueError(
                        f"expected {n_attributes} comma-separated values, got {len(values)}"
                    )
                indices = list(range(n_attributes))
        except ValueError as exc:
            raise _fail(name, int(lineno), str(exc)) from None
        all_indices.extend(indices)
        all_values.extend(values)
        counts[i] = len(indices)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.asarray(all_indices, dtype=index_dtype)
    tokens = np.asarray(all_values, dtype=str)
    del all_indices, all_values
    values = np.empty(len(tokens), dtype=np.float64)
    if len(tokens):
        order = np.argsort(indices, kind="stable")
        bounds = np.searchsorted(indices[order], np.arange(n_attributes + 1))
        for j, attribute in enumerate(attributes):
            where = order[bounds[j] : bounds[j + 1]]
            if where.size == 0:
                continue
            column = _convert_column(tokens[where], attribute)
            if column is None:
                row_of = np.searchsorted(indptr, where, side="right") - 1
                for k, r in zip(where, row_of):
                    try:
                        _convert_cell(tokens[k], attribute)
                    except ValueError as exc:
                        raise _fail(name, int(line_numbers[r]), str(exc)) from None
            values[where] = column
    return counts, indices, values


class _Builder:
    """Collects the parsed blocks: dense rows into one growing float64 array,
    until a sparse row shows; from then on, CSR pieces."""

    def __init__(self, attributes, name, capacity):
        self.attributes = attributes
        self.name = name
        self.n_attributes = len(attributes)
        self.capacity = max(int(capacity), 1)
        self.groups = _nominal_groups(attributes)
        self.numbers_only = not any(a.kind == "nominal_string" for a in attributes)
        self.index_dtype = np.int32 if self.n_attributes < 2**31 - 1 else np.int64
        self.dense = None
        self.n_rows = 0
        self.sparse = False
        self.counts = []  # entries per row of each sparse block
        self.indices = self.values = None  # preallocated CSR buffers
        self.nnz = 0
        self.line_numbers = []

    def add(self, rows, line_numbers, entries_left):
        """Parse a block; ``entries_left()`` bounds the entries of this and later blocks."""
        if not self.sparse and any(r.startswith("{") for r in rows):
            self._to_sparse(entries_left())
        if self.sparse:
            piece = None
            if self.numbers_only and all(r.startswith("{") for r in rows):
                piece = _fast_sparse(rows, self.n_attributes, self.groups, self.index_dtype)
            if piece is None:
                piece = _parse_sparse(
                    rows, line_numbers, self.attributes, self.name, self.index_dtype
                )
            self._add_sparse(*piece)
        else:
            block = _fast_dense(rows, self.attributes, self.groups) if self.numbers_only else None
            if block is None:
                block = _parse_dense(rows, line_numbers, self.attributes, self.name)
            self._add_dense(block)
        self.line_numbers.append(line_numbers)

    def _add_dense(self, block):
        if self.dense is None:
            self.dense = np.empty((max(self.capacity, len(block)), self.n_attributes))
        stop = self.n_rows + len(block)
        if stop > len(self.dense):  # more lines than counted ('\r' line ends)
            grown = np.empty((max(stop, 2 * len(self.dense)), self.n_attributes))
            grown[: self.n_rows] = self.dense[: self.n_rows]
            self.dense = grown
        self.dense[self.n_rows : stop] = block
        self.n_rows = stop

    def _add_sparse(self, counts, indices, values):
        stop = self.nnz + len(values)
        if stop > len(self.values):  # more entries than counted ('\r' line ends)
            size = max(stop, 2 * len(self.values))
            for attr in ("indices", "values"):
                grown = np.empty(size, dtype=getattr(self, attr).dtype)
                grown[: self.nnz] = getattr(self, attr)[: self.nnz]
                setattr(self, attr, grown)
        self.indices[self.nnz : stop] = indices
        self.values[self.nnz : stop] = values
        self.nnz = stop
        self.counts.append(counts)

    def _to_sparse(self, entries_left):
        for attribute in self.attributes:
            if attribute.kind == "nominal_numeric" and attribute.codes[attribute.values[0]] != 0:
                raise _fail(
                    self.name,
                    attribute.lineno,
                    f"nominal attribute {attribute.name!r}: in sparse data an omitted value "
                    f"means the first declared value {attribute.values[0]!r}, which is not 0; "
                    "this reader does not support that",
                )
        self.sparse = True
        part = sp.csr_matrix(self.dense[: self.n_rows]) if self.n_rows else None
        self.dense = None
        capacity = max(int(entries_left) + (part.nnz if part is not None else 0), 1)
        self.indices = np.empty(capacity, dtype=self.index_dtype)
        self.values = np.empty(capacity, dtype=np.float64)
        if part is not None:
            self._add_sparse(np.diff(part.indptr), part.indices, part.data)

    def finish(self):
        line_numbers = (
            np.concatenate(self.line_numbers) if self.line_numbers else np.empty(0, np.int64)
        )
        n_rows = len(line_numbers)
        if not self.sparse:
            data = self.dense
            if data is None:
                return np.empty((0, self.n_attributes)), False, line_numbers
            if len(data) != n_rows:
                data.resize((n_rows, self.n_attributes), refcheck=False)
            self.dense = None
            return data, False, line_numbers
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.concatenate(self.counts), out=indptr[1:])
        self.counts = []
        if indptr[-1] < 2**31 - 1 and self.index_dtype == np.int32:
            indptr = indptr.astype(np.int32)
        indices, values = self.indices, self.values
        self.indices = self.values = None
        if len(values) != self.nnz:
            indices.resize(self.nnz, refcheck=False)
            values.resize(self.nnz, refcheck=False)
        matrix = sp.csr_matrix(
            (values, indices, indptr), shape=(n_rows, self.n_attributes), copy=False
        )
        del values, indices, indptr
        matrix.sort_indices()
        return matrix, True, line_numbers
