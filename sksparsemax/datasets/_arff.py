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

The data section is read by blocks of lines: a block of numbers goes through
NumPy's C parsers (``np.loadtxt`` for dense rows, ``np.fromstring`` for sparse
ones), straight into one preallocated array (dense) or preallocated CSR
buffers (sparse), with no Python object per value; the peak memory stays
within about 2.5 times the parsed arrays (``benchmarks/bench_arff_memory.py``).
A block with quotes or nominal names is tokenised with ``str.split``; a slow,
cell-by-cell pass only runs to locate the line of an error. A number that is
not finite (``inf``, ``nan``, or one that overflows, such as ``1e400``) is an
error: a missing value is written ``?``.
"""

from dataclasses import dataclass, field

import numpy as np

from ._arff_data import _Builder, _Error, _fail
from ._arff_tokens import read_name, split_values

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


class _HeaderParser:
    """Parses the header one line at a time; :meth:`feed` is True at ``@data``."""

    def __init__(self, name):
        self.name = name
        self.relation = None
        self.attributes = []
        self.seen = {}

    def feed(self, raw, lineno):
        name = self.name
        line = raw.strip()
        if not line or line.startswith("%"):
            return False
        if not line.startswith("@"):
            raise _fail(name, lineno, f"expected @relation, @attribute or @data, got {line[:40]!r}")
        parts = line.split(None, 1)
        keyword = parts[0].lower()
        rest = parts[1] if len(parts) == 2 else ""
        if keyword == "@relation":
            try:
                self.relation = read_name(rest)[0] if rest.strip() else ""
            except ValueError as exc:
                raise _fail(name, lineno, f"bad @relation: {exc}") from None
        elif keyword == "@attribute":
            try:
                attribute = _parse_attribute(rest, lineno)
            except _Error as exc:
                raise _fail(name, exc.lineno, exc.message) from None
            if attribute.name in self.seen:
                raise _fail(
                    name,
                    lineno,
                    f"attribute {attribute.name!r} already declared on line "
                    f"{self.seen[attribute.name]}",
                )
            self.seen[attribute.name] = lineno
            self.attributes.append(attribute)
        elif keyword == "@data":
            if rest.strip():
                raise _fail(name, lineno, "unexpected text after @data")
            if not self.attributes:
                raise _fail(name, lineno, "no @attribute declaration before @data")
            return True
        else:
            raise _fail(name, lineno, f"unknown keyword {keyword!r}")
        return False


# ----------------------------------------------------------------------------- data

# The data section is parsed by blocks of whole lines of about this many characters.
_BLOCK_CHARS = 1 << 18


def _blocks(text, start=0, size=None):
    """Yield ``(end, lines)`` for consecutive blocks of whole lines of ``text``.

    A block ends just after a ``\\n``, so that ``\\r\\n`` is never cut and the
    lines are those of ``text.splitlines()``.
    """
    size = _BLOCK_CHARS if size is None else size
    n = len(text)
    pos = start
    while pos < n:
        end = text.find("\n", min(pos + size, n) - 1)
        end = n if end < 0 else end + 1
        yield end, text[pos:end].splitlines()
        pos = end


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
    header = _HeaderParser(name)
    blocks = _blocks(text)
    lineno, first, first_start, end = 0, None, 0, 0
    for end, lines in blocks:
        for k, raw in enumerate(lines):
            lineno += 1
            if header.feed(raw, lineno):
                first = lines[k + 1 :]
                break
        if first is not None:
            break
        first_start = end
    if first is None:
        raise _fail(name, lineno, "no @data section")
    capacity = len(first) + text.count("\n", end) + 1
    builder = _Builder(header.attributes, name, capacity)

    def data_blocks():
        yield first_start, first
        start = end
        for block_end, block in blocks:
            yield start, block
            start = block_end

    def entries_left():
        # Each entry of a row but its last is followed by a comma.
        return text.count(",", block_start) + text.count("\n", block_start) + 1

    next_lineno = lineno + 1
    for block_start, lines in data_blocks():
        rows, numbers = [], []
        for k, raw in enumerate(lines):
            line = raw.strip()
            if line and not line.startswith("%"):
                rows.append(line)
                numbers.append(next_lineno + k)
        next_lineno += len(lines)
        if rows:
            builder.add(rows, np.asarray(numbers, dtype=np.int64), entries_left)
    first = None
    data, sparse, line_numbers = builder.finish()
    return ArffData(header.relation or "", header.attributes, data, sparse, line_numbers, name)
