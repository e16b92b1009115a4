"""The main job's user input and output: ``--data``/``--labels`` (reading and
checks), ``--output`` and ``--report-dir`` (checks before any fit).

Every problem of the command line or of the data is a :class:`UsageError`:
one line on stderr, exit status 2 (see :func:`sksparsemax._cli.main`).
"""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ._report import TEST_SIZE

_MIN_ROWS = 10  # fewer: a 70/30 split leaves a test part of 1-2 rows, or fails


class UsageError(Exception):
    """A problem with the command line or the user's data: one line, exit 2."""


def _is_sparse(X):
    import scipy.sparse as sp

    return sp.issparse(X)


def _check_features(name, X, feature_names, where):
    """Refuse NaN/inf features: ``where(i)`` names data row ``i`` in messages."""
    bad = ~np.isfinite(X.data if _is_sparse(X) else X)
    if not bad.any():
        return
    if _is_sparse(X):  # load_mulan's CSR: bad is over X.data
        k = int(np.flatnonzero(bad)[0])
        row, col = int(np.searchsorted(X.indptr, k, side="right") - 1), int(X.indices[k])
    else:
        row, col = (int(i) for i in np.argwhere(bad)[0])
    value = "missing" if np.isnan(X[row, col]) else "infinite"
    raise UsageError(
        f"{name}: {int(bad.sum())} feature value(s) are missing or infinite (first: {value}, "
        f"{where(row)}, column {feature_names[col]!r}); fill in or drop them first"
    )


_ATTRIBUTE = re.compile(r"^\s*@attribute\s+('[^']*'|\"[^\"]*\"|\S+)\s+(.*?)\s*$", re.I)
_BINARY = re.compile(r"^\{\s*'?0'?\s*,\s*'?1'?\s*\}$")


def _all_mulan_labels(path):
    """Every label attribute of a MULAN file: those of its XML file when one is
    found beside it, else the attributes declared ``{0,1}`` that end the
    attribute list (MULAN's layout: the labels come last)."""
    from .datasets._base import _read_text
    from .datasets._mulan import _find_xml, _parse_label_xml

    try:
        xml_text, source = _read_text(_find_xml(path))
        return [name for name, _ in _parse_label_xml(xml_text, source)]
    except (OSError, ValueError):
        pass
    text, _ = _read_text(path)
    attributes = []
    for line in text[: text.lower().find("@data")].splitlines():
        match = _ATTRIBUTE.match(line)
        if match:
            attributes.append((match.group(1).strip("'\""), bool(_BINARY.match(match.group(2)))))
    names = []
    for name, binary in reversed(attributes):
        if not binary:
            break
        names.insert(0, name)
    return names


def _read_mulan(path, label_list):
    """``(X, Y, note)`` of a MULAN file; with ``--labels``, the file's other label
    columns are dropped (not turned into features) and ``note`` says so."""
    from .datasets import load_mulan

    note = None
    try:
        if label_list is None:
            bunch = load_mulan(path)
        else:
            others = [n for n in _all_mulan_labels(path) if n not in label_list]
            bunch = load_mulan(path, label_names=label_list + others)
            if others:
                note = (f"--labels: dropped the {len(others)} other label column(s) of "
                        f"{path.name} ({', '.join(others)}); they are not used as features")
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot load {path.name}: {exc}") from None
    _check_features(path.name, bunch.data, bunch.feature_names, lambda i: f"data row {i + 1}")
    Y = np.asarray(bunch.target)
    if label_list is not None:
        Y = Y[:, [bunch.target_names.index(n) for n in label_list]]
    return bunch.data, Y, note


def _read_csv(path, label_list):
    if not label_list:
        raise UsageError("--data with a CSV file needs --labels naming the label column(s)")
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"cannot read {path.name}: {exc}") from None
    missing = [c for c in label_list if c not in frame.columns]
    if missing:
        raise UsageError(
            f"{path.name}: no column named {', '.join(map(repr, missing))} "
            f"(columns: {', '.join(map(str, frame.columns[:20]))})"
        )
    features = frame.drop(columns=label_list)
    non_numeric = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if non_numeric:
        raise UsageError(
            f"{path.name}: feature column(s) {', '.join(map(repr, non_numeric[:5]))} "
            "are not numeric"
        )
    X = features.to_numpy(dtype=np.float64)
    _check_features(path.name, X, list(map(str, features.columns)), lambda i: f"line {i + 2}")
    missing = frame[label_list].isna().to_numpy()
    if missing.any():
        row, col = (int(i) for i in np.argwhere(missing)[0])
        raise UsageError(f"{path.name}: label column {label_list[col]!r} has "
                         f"{missing[:, col].sum()} missing value(s) (first: line {row + 2})")
    return X, frame[label_list].to_numpy()


def read_user_data(path, labels):
    """Load --data: a MULAN ARFF file (multi-label) or a CSV file.

    Returns ``(kind, X, Y, note)``: ``kind`` is ``"multi-class"`` (one label
    column: ``Y`` 1-D) or ``"multi-label"`` (``Y`` 0/1 indicators); ``note``
    is a line for the report, or None.
    """
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"cannot read --data {str(path)!r}: no such file")
    suffixes = "".join(path.suffixes[-2:]).lower()
    label_list = [s.strip() for s in labels.split(",")] if labels else None
    if ".arff" in suffixes:
        X, Y, note = _read_mulan(path, label_list)
        if Y.shape[1] == 1:  # one label of the file: a two-class problem
            return "multi-class", X, Y[:, 0], note
        return "multi-label", X, Y, note
    if ".csv" not in suffixes:
        raise UsageError(
            f"--data {path.name}: unknown file type (expected .arff, .arff.gz or .csv)"
        )
    X, Y = _read_csv(path, label_list)
    if Y.shape[1] == 1:
        return "multi-class", X, Y[:, 0], None
    if not np.isin(Y, (0, 1)).all():
        raise UsageError(f"{path.name}: label columns must hold 0/1 indicators")
    return "multi-label", X, Y.astype(np.int64), None


def _reason(exc):
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def split(name, X, Y, *, stratify, seed):
    """The 70/30 train/test split of user data, or a one-line UsageError."""
    from sklearn.model_selection import train_test_split

    try:
        return train_test_split(
            X, Y, test_size=TEST_SIZE, stratify=Y if stratify else None, random_state=seed
        )
    except ValueError as exc:
        raise UsageError(
            f"{name}: cannot make a{' stratified' if stratify else ''} 70/30 train/test "
            f"split of {X.shape[0]} rows: {_reason(exc)}"
        ) from None


def check_user_split(name, kind, X, Y, seed):
    """The checks of user data before its split; return the split."""
    if X.shape[0] < _MIN_ROWS:
        raise UsageError(f"{name}: {X.shape[0]} row(s) are too few for a 70/30 train/test "
                         f"split (at least {_MIN_ROWS} needed)")
    if kind == "multi-class":
        if len(np.unique(Y)) < 2:
            raise UsageError(f"{name}: the label column has a single class")
        return split(name, X, Y, stratify=True, seed=seed)
    if not np.asarray(Y).any():
        raise UsageError(f"{name}: no row has a label (every label value is 0)")
    parts = split(name, X, Y, stratify=False, seed=seed)
    if not np.asarray(parts[2]).any():
        n_labelled = int(np.asarray(Y).any(axis=1).sum())
        raise UsageError(f"{name}: no row of the training part has a label "
                         f"(only {n_labelled} labelled row(s) in all)")
    return parts


def _check_output(path):
    """Refuse, before any fit, an --output name that is neither .csv nor .json,
    or that cannot be written: a folder, in a missing or read-only folder."""
    import os

    path = Path(path)
    if path.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"--output {path}: use a .csv or .json file name")
    folder, problem = path.parent, None
    if path.is_dir():
        problem = "it is a folder"
    elif not folder.is_dir():
        problem = f"{str(folder)!r}: {'not a folder' if folder.exists() else 'no such folder'}"
    elif not (os.access(path, os.W_OK) if path.exists() else os.access(folder, os.W_OK | os.X_OK)):
        problem = "permission denied"
    if problem:
        raise UsageError(f"cannot write --output {str(path)!r}: {problem}")


def _check_report_dir(path):
    """Refuse, before any fit, a --report-dir that is a file or cannot be made
    (its nearest existing parent is not a writable folder)."""
    import os

    path = Path(path)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    problem = None
    if existing.exists() and not existing.is_dir():
        problem = f"{str(existing)!r} is not a folder"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = "permission denied"
    if problem:
        raise UsageError(f"cannot write the report to --report-dir {str(path)!r}: {problem}")


def _write(frame, path):
    """Write the table to ``path``, a name accepted by :func:`_check_output`."""
    path = Path(path)
    try:
        if path.suffix.lower() == ".csv":
            frame.to_csv(path, index=False)
        else:
            records = json.loads(frame.to_json(orient="records"))
            path.write_text(json.dumps(records, indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write --output {str(path)!r}: {exc.strerror or exc}") from None
