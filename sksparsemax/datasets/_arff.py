"""A small, fast reader for dense and sparse ARFF files (Weka's format).

:func:`scipy.io.arff.loadarff` cannot read sparse ARFF (``{index value, ...}``
rows), which MULAN uses for its text data sets, hence this parser. It supports
what numeric (multi-label) data sets need:

* ``@relation``, ``@attribute`` and ``@data`` keywords in any case; ``%`` comment
  lines and blank lines anywhere;
* attribute names bare or quoted (``'...'`` or ``"..."``, with backslash escapes);
* ``numeric``, ``real`` and ``integer`` attributes (read as float64);
* nominal attributes ``{v1, v2, ...}``: when every declared value is a number, a
  value is stored as that number (so ``{0,1}`` gives 0.0 and 1.0); otherwise it is
  stored as the 0-based index of the value in the declaration (Weka's internal
  code). Values not among the declared ones are errors;
* dense rows ``v1,v2,...`` and sparse rows ``{i v, j v, ...}`` (0-based attribute
  indices; omitted entries are 0), possibly mixed in one file;
* ``?`` (missing value), read as NaN.

``string``, ``date`` and ``relational`` attributes and instance weights are not
supported (ValueError). Every error is a :class:`ValueError` whose message names
the file and the line.

The dense data block is tokenised with ``str.split`` per line and converted by
NumPy in one call; a slow, cell-by-cell pass only runs to locate the line of an
error.
"""

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ._arff_tokens import read_name, split_quoted, split_values, unquote

_NUMERIC_TYPES = ("numeric", "real", "integer")
_UNSUPPORTED_TYPES = ("string", "date", "relational")


@dataclass
class _Attribute:
    """One ``@attribute`` declaration.

    ``kind`` is ``"numeric"``, ``"nominal_numeric"`` (nominal whose declared
    values are all numbers; ``codes`` holds them as floats) or
    ``"nominal_string"`` (``codes`` maps each declared value to its index).
    """

    name: str
    kind: str
    values: tuple = ()
    codes: dict = field(default_factory=dict)
    lineno: int = 0

    def declares(self, values):
        """Which of the float ``values`` are declared values (``nominal_numeric``)."""
        return np.isin(values, np.fromiter(self.codes.values(), dtype=np.float64))


@dataclass
class ArffData:
    """The content of an ARFF file.

    Attributes
    ----------
    relation : str
    attributes : list of _Attribute
    data : ndarray of shape (n_rows, n_attributes) or scipy.sparse.csr_matrix
        float64; CSR when at least one data row is sparse.
    sparse : bool
    line_numbers : ndarray of int of shape (n_rows,)
        The 1-based line number of each data row in the file.
    name : str
        The file name used in messages.
    """

    relation: str
    attributes: list
    data: object
    sparse: bool
    line_numbers: np.ndarray
    name: str

    @property
    def attribute_names(self):
        return [a.name for a in self.attributes]


class _Error(ValueError):
    """A ValueError carrying a line number (filled into the message later)."""

    def __init__(self, lineno, message):
        super().__init__(message)
        self.lineno = lineno
        self.message = message


def _fail(name, lineno, message):
    return ValueError(f"{name}, line {lineno}: {message}")


# ----------------------------------------------------------------------------- header


def _parse_attribute(rest, lineno):
    try:
        name, type_text = read_name(rest)
    except ValueError as exc:
        raise _Error(lineno, f"bad @attribute declaration: {exc}") from None
    if not type_text:
        raise _Error(lineno, f"attribute {name!r} has no type")
    if type_text.startswith("{"):
        if not type_text.endswith("}"):
            raise _Error(lineno, f"unterminated nominal declaration of attribute {name!r}")
        try:
            values = tuple(split_values(type_text[1:-1]))
        except ValueError as exc:
            raise _Error(lineno, f"bad nominal declaration of {name!r}: {exc}") from None
        if values == ("",) or any(v == "" for v in values):
            raise _Error(lineno, f"empty value in the nominal declaration of {name!r}")
        if len(set(values)) != len(values):
            raise _Error(lineno, f"repeated value in the nominal declaration of {name!r}")
        try:
            numbers = [float(v) for v in values]
        except ValueError:
            numbers = None
        if numbers is not None and len(set(numbers)) == len(numbers):
            codes = dict(zip(values, numbers))
            return _Attribute(name, "nominal_numeric", values, codes, lineno)
        codes = {v: float(i) for i, v in enumerate(values)}
        return _Attribute(name, "nominal_string", values, codes, lineno)
    kind = type_text.split()[0].lower()
    if kind in _NUMERIC_TYPES:
        return _Attribute(name, "numeric", lineno=lineno)
    if kind in _UNSUPPORTED_TYPES:
        raise _Error(lineno, f"attribute {name!r}: type {kind!r} is not supported")
    raise _Error(lineno, f"attribute {name!r}: unknown type {type_text!r}")


def _parse_header(lines, name):
    """Parse the header; return (relation, attributes, index of the first data line)."""
    relation, attributes, seen = None, [], {}
    for i, raw in enumerate(lines):
        lineno = i + 1
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        if not line.startswith("@"):
            raise _fail(name, lineno, f"expected @relation, @attribute or @data, got {line[:40]!r}")
        parts = line.split(None, 1)
        keyword = parts[0].lower()
        rest = parts[1] if len(parts) == 2 else ""
        if keyword == "@relation":
            try:
                relation = read_name(rest)[0] if rest.strip() else ""
            except ValueError as exc:
                raise _fail(name, lineno, f"bad @relation: {exc}") from None
        elif keyword == "@attribute":
            try:
                attribute = _parse_attribute(rest, lineno)
            except _Error as exc:
                raise _fail(name, exc.lineno, exc.message) from None
            if attribute.name in seen:
                raise _fail(
                    name,
                    lineno,
                    f"attribute {attribute.name!r} already declared on line {seen[attribute.name]}",
                )
            seen[attribute.name] = lineno
            attributes.append(attribute)
        elif keyword == "@data":
            if rest.strip():
                raise _fail(name, lineno, "unexpected text after @data")
            if not attributes:
                raise _fail(name, lineno, "no @attribute declaration before @data")
            return relation, attributes, i + 1
        else:
            raise _fail(name, lineno, f"unknown keyword {keyword!r}")
    raise _fail(name, len(lines), "no @data section")


# ----------------------------------------------------------------------------- values


def _convert_cell(token, attribute):
    """Slow, exact conversion of one cell (used to locate errors)."""
    if token == "?":
        return np.nan
    if attribute.kind == "numeric":
        try:
            if "_" in token:  # float() accepts '1_000'; ARFF does not
                raise ValueError
            return float(token)
        except ValueError:
            raise ValueError(
                f"value {token!r} of numeric attribute {attribute.name!r} is not a number"
            ) from None
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
    return cells.astype(np.float64)


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


def _fast_dense(rows, attributes):
    """NumPy's C parser for the common case (numbers only, no quotes, no '?').

    Returns None when it does not apply or fails; the caller then takes the
    slower path, which also locates errors.
    """
    if not rows or any(a.kind == "nominal_string" for a in attributes):
        return None
    if any(("'" in r or '"' in r or "?" in r) for r in rows):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            data = np.loadtxt(rows, delimiter=",", dtype=np.float64, comments=None, ndmin=2)
    except (ValueError, UserWarning):
        return None
    if data.shape != (len(rows), len(attributes)):
        return None
    for j, attribute in enumerate(attributes):
        if attribute.kind == "nominal_numeric" and not attribute.declares(data[:, j]).all():
            return None
    return data


def _parse_dense(rows, line_numbers, attributes, name):
    data = _fast_dense(rows, attributes)
    if data is not None:
        return data
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


def _parse_sparse(rows, line_numbers, attributes, name):
    n_attributes = len(attributes)
    for attribute in attributes:
        if attribute.kind == "nominal_numeric" and attribute.codes[attribute.values[0]] != 0:
            raise _fail(
                name,
                attribute.lineno,
                f"nominal attribute {attribute.name!r}: in sparse data an omitted value means "
                f"the first declared value {attribute.values[0]!r}, which is not 0; "
                "this reader does not support that",
            )
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
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
        indptr[i + 1] = len(all_indices)
    indices = np.asarray(all_indices, dtype=np.int64)
    tokens = np.asarray(all_values, dtype=str)
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
    matrix = sp.csr_matrix((values, indices, indptr), shape=(len(rows), n_attributes))
    matrix.sort_indices()
    return matrix


def parse_arff(text, name="<arff>"):
    """Parse the text of an ARFF file.

    Parameters
    ----------
    text : str
        The whole file.
    name : str, default="<arff>"
        The file name used in error messages.

    Returns
    -------
    ArffData
    """
    lines = text.splitlines()
    relation, attributes, start = _parse_header(lines, name)
    rows, line_numbers = [], []
    for i in range(start, len(lines)):
        line = lines[i].strip()
        if line and not line.startswith("%"):
            rows.append(line)
            line_numbers.append(i + 1)
    line_numbers = np.asarray(line_numbers, dtype=np.int64)
    if any(r.startswith("{") for r in rows):
        data = _parse_sparse(rows, line_numbers, attributes, name)
        sparse = True
    else:
        data = _parse_dense(rows, line_numbers, attributes, name)
        sparse = False
    return ArffData(relation or "", attributes, data, sparse, line_numbers, name)
