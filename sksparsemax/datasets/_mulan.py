"""Loaders for MULAN multi-label data sets (ARFF + XML label list), and the
bundled ``emotions`` data set."""

import os
import re
from pathlib import Path
from xml.parsers import expat

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ._arff import parse_arff
from ._base import _read_package_data, _read_text

__all__ = ["load_mulan", "load_emotions"]


# ----------------------------------------------------------------------------- XML


def _parse_label_xml(text, name):
    """Label names of a MULAN XML file, in document order, with their line numbers.

    Every ``label`` element (in any namespace, at any depth: MULAN's hierarchical
    label files nest them) contributes its ``name`` attribute.
    """
    labels = []
    parser = expat.ParserCreate(namespace_separator=" ")

    def start(tag, attrs):
        if tag.rsplit(" ", 1)[-1] != "label":
            return
        line = parser.CurrentLineNumber
        if "name" not in attrs:
            raise ValueError(f"{name}, line {line}: <label> element without a name attribute")
        labels.append((attrs["name"], line))

    parser.StartElementHandler = start
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise ValueError(f"{name}, line {exc.lineno}: malformed XML ({exc})") from None
    if not labels:
        raise ValueError(f"{name}: no <label name=...> element")
    seen = {}
    for label, line in labels:
        if label in seen:
            raise ValueError(
                f"{name}, line {line}: label {label!r} already listed on line {seen[label]}"
            )
        seen[label] = line
    return labels


def _find_xml(arff_path):
    """``<stem>.xml`` beside the ARFF file, also with -train/-test stripped."""
    path = Path(arff_path)
    stem = path.name
    for suffix in (".gz", ".arff"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    stems = [stem]
    stripped = re.sub(r"[-_.](train|test)$", "", stem, flags=re.IGNORECASE)
    if stripped != stem:
        stems.append(stripped)
    candidates = [path.with_name(s + ext) for s in stems for ext in (".xml", ".xml.gz")]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ValueError(
        f"{os.fspath(arff_path)}: no MULAN label file found (looked for "
        + ", ".join(c.name for c in candidates)
        + "); pass xml_path, label_names or n_labels"
    )


# ----------------------------------------------------------------------------- split


def _split_features_labels(arff, label_names, label_source):
    """Split parsed ARFF data into X and the indicator matrix Y.

    ``label_names`` is a list of (name, line) pairs; ``line`` (may be None) is
    the line of ``label_source`` naming the label, for messages.
    """
    position = {a.name: j for j, a in enumerate(arff.attributes)}
    label_columns = []
    for label, line in label_names:
        if label not in position:
            where = f"{label_source}, line {line}" if line else label_source
            raise ValueError(f"{where}: label {label!r} is not an attribute of {arff.name}")
        label_columns.append(position[label])
    if len(set(label_columns)) != len(label_columns):
        raise ValueError(f"{label_source}: a label is named more than once")
    label_columns = sorted(label_columns)  # the ARFF file's order
    is_label = np.zeros(len(arff.attributes), dtype=bool)
    is_label[label_columns] = True
    feature_columns = np.flatnonzero(~is_label)
    if feature_columns.size == 0:
        raise ValueError(f"{arff.name}: every attribute is a label; no feature left")

    data = arff.data
    if arff.sparse:
        X = data[:, feature_columns].tocsr()
        X.sort_indices()
        Y = data[:, label_columns].toarray()
    else:
        Y = data[:, label_columns]
        X = _take_columns(data, feature_columns)
        arff.data = X  # ``data`` now holds X: the ArffData must not be used as before
    bad = ~((Y == 0) | (Y == 1))
    if bad.any():
        row, col = np.argwhere(bad)[0]
        value = Y[row, col]
        what = "missing ('?')" if np.isnan(value) else repr(float(value))
        raise ValueError(
            f"{arff.name}, line {arff.line_numbers[row]}: value {what} of label "
            f"{arff.attributes[label_columns[col]].name!r} is not 0 or 1"
        )
    Y = Y.astype(np.int64)
    feature_names = [arff.attributes[j].name for j in feature_columns]
    target_names = [arff.attributes[j].name for j in label_columns]
    return X, Y, feature_names, target_names


def _take_columns(data, columns, chunk_rows=4096):
    """``data[:, columns]`` as a C-contiguous array, in ``data``'s own memory.

    ``data`` (C-contiguous, owning its memory) is overwritten: row ``i`` of the
    result goes to ``data.flat[i * k : (i + 1) * k]`` (``k = len(columns)``),
    never past the rows not yet read, then the buffer is shrunk in place. So
    the features need no second copy of the parsed file. Otherwise, a copy.
    """
    n, m = data.shape
    k = len(columns)
    if not (data.flags.c_contiguous and data.flags.owndata and data.flags.writeable):
        return np.take(data, columns, axis=1)
    if k == m and np.array_equal(columns, np.arange(m)):
        return data
    flat = data.reshape(-1)
    for start in range(0, n, chunk_rows):
        stop = min(start + chunk_rows, n)
        flat[start * k : stop * k] = np.take(data[start:stop], columns, axis=1).reshape(-1)
    del flat
    data.resize((n, k), refcheck=False)
    return data


def _describe(title, X, Y, target_names, extra=""):
    kind = "sparse (CSR)" if sp.issparse(X) else "dense"
    cardinality = Y.sum(axis=1).mean() if Y.shape[0] else float("nan")
    return (
        f"{title}\n{'=' * len(title)}\n\n"
        f"{extra}"
        f"Samples: {X.shape[0]}\n"
        f"Features: {X.shape[1]} ({kind})\n"
        f"Labels: {Y.shape[1]} ({', '.join(target_names)})\n"
        f"Label cardinality (mean labels per sample): {cardinality:.3f}\n"
    )


def _make_bunch(X, Y, feature_names, target_names, descr, as_frame, return_X_y):
    frame = None
    if as_frame:
        import pandas as pd

        if sp.issparse(X):
            data = pd.DataFrame.sparse.from_spmatrix(X, columns=feature_names)
        else:
            data = pd.DataFrame(X, columns=feature_names)
        target = pd.DataFrame(Y, columns=target_names)
        frame = pd.concat([data, target], axis=1)
        X, Y = data, target
    if return_X_y:
        return X, Y
    return Bunch(
        data=X,
        target=Y,
        frame=frame,
        feature_names=list(feature_names),
        target_names=list(target_names),
        DESCR=descr,
    )


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool, got {value!r}.")
    return bool(value)


# ----------------------------------------------------------------------------- public


def load_mulan(
    arff_path,
    xml_path=None,
    *,
    label_names=None,
    n_labels=None,
    as_frame=False,
    return_X_y=False,
):
    """Load a MULAN multi-label data set from an ARFF file and its XML label list.

    MULAN stores a multi-label data set as an ARFF file (dense, or sparse with
    rows ``{index value, ...}``) whose label attributes are the ones named in a
    separate XML file (``<labels><label name="..."/>...</labels>``). This reader
    is self-contained (NumPy/SciPy; :func:`scipy.io.arff.loadarff` cannot read
    sparse ARFF) and reads gzipped files transparently.

    Parameters
    ----------
    arff_path : str, os.PathLike or file object
        The ARFF file (``.arff`` or gzipped ``.arff.gz``).
    xml_path : str, os.PathLike or file object, default=None
        The MULAN XML file naming the labels. When None and neither
        ``label_names`` nor ``n_labels`` is given, ``<stem>.xml`` (or
        ``<stem>.xml.gz``) is looked for beside ``arff_path``, first with the
        file's own stem, then with a ``-train``/``-test`` suffix removed (so
        ``scene-train.arff`` finds ``scene.xml``).
    label_names : sequence of str, default=None
        The label attributes, instead of an XML file.
    n_labels : int, default=None
        The number of labels, instead of an XML file: the last ``n_labels``
        attributes are the labels (MULAN's usual layout).
    as_frame : bool, default=False
        If True, ``data`` and ``target`` are :class:`pandas.DataFrame` (with
        sparse columns when the file is sparse) and ``frame`` joins them.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        data : ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
            The non-label attributes, float64: a CSR matrix when the file has
            sparse rows, a dense array otherwise. Nominal feature values that are
            numbers keep their value; other nominal values are coded by their
            0-based position in the declaration. Missing values (``?``) are NaN.
        target : ndarray of shape (n_samples, n_labels)
            The label indicator matrix, int64 with entries 0 and 1, always dense.
            Columns follow the order of the label attributes in the ARFF file.
        frame : pandas.DataFrame or None
            ``data`` and ``target`` side by side when ``as_frame=True``.
        feature_names : list of str
            The names of the features.
        target_names : list of str
            The names of the labels.
        DESCR : str
            A short description: source files, sizes, label cardinality.

    (data, target) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        If a file is malformed (the message names the file and the line: wrong
        number of values, a value that is not a number or not a declared nominal
        value, a number that is not finite such as ``inf``, ``nan`` or ``1e400``
        (a missing value is written ``?``), a sparse index out of range, no
        ``@data`` section...), if a label
        named in the XML file is not an attribute of the ARFF file, if a label
        value is not 0 or 1 (missing labels are errors), or if no label list can
        be found.

    See Also
    --------
    load_emotions : A small MULAN data set bundled with the package.

    Notes
    -----
    Supported ARFF: ``numeric``/``real``/``integer`` and nominal attributes,
    bare or quoted names, ``%`` comments, keywords in any case, dense and sparse
    rows (sparse indices are 0-based; omitted entries are 0). Not supported:
    ``string``, ``date`` and ``relational`` attributes, instance weights.

    Examples
    --------
    >>> import io
    >>> from sksparsemax.datasets import load_mulan
    >>> arff = io.StringIO('''@relation toy
    ... @attribute x1 numeric
    ... @attribute x2 numeric
    ... @attribute a {0,1}
    ... @attribute b {0,1}
    ... @data
    ... {0 1.5,2 1}
    ... {1 -2,2 1,3 1}
    ... ''')
    >>> toy = load_mulan(arff, n_labels=2)
    >>> toy.data.toarray()
    array([[ 1.5,  0. ],
           [ 0. , -2. ]])
    >>> toy.target
    array([[1, 0],
           [1, 1]])
    >>> toy.feature_names, toy.target_names
    (['x1', 'x2'], ['a', 'b'])
    """
    as_frame = _check_bool(as_frame, "as_frame")
    return_X_y = _check_bool(return_X_y, "return_X_y")
    given = [p for p, v in (("xml_path", xml_path), ("label_names", label_names),
                            ("n_labels", n_labels)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"pass only one of xml_path, label_names and n_labels, got {given}.")
    if label_names is not None:
        if isinstance(label_names, str) or not all(isinstance(s, str) for s in label_names):
            raise ValueError("label_names must be a sequence of str.")
        if len(label_names) == 0:
            raise ValueError("label_names must not be empty.")
    if n_labels is not None:
        if isinstance(n_labels, (bool, np.bool_)) or not isinstance(n_labels, (int, np.integer)):
            raise ValueError(f"n_labels must be a positive integer, got {n_labels!r}.")
        if n_labels < 1:
            raise ValueError(f"n_labels must be a positive integer, got {n_labels!r}.")

    if not given and hasattr(arff_path, "read"):
        raise ValueError(
            "arff_path is a file object: pass xml_path, label_names or n_labels."
        )
    text, arff_name = _read_text(arff_path)
    arff = parse_arff(text, arff_name)
    del text  # the parsed arrays replace it: free it before the features are split off

    if n_labels is not None:
        if n_labels >= len(arff.attributes):
            raise ValueError(
                f"n_labels={n_labels} but {arff_name} has only {len(arff.attributes)} "
                "attributes (at least one feature is needed)."
            )
        labels = [(a.name, None) for a in arff.attributes[-n_labels:]]
        source = "n_labels"
    elif label_names is not None:
        labels = [(name, None) for name in label_names]
        if len(set(label_names)) != len(label_names):
            raise ValueError("label_names contains repeated names.")
        source = "label_names"
    else:
        if xml_path is None:
            xml_path = _find_xml(arff_path)
        xml_text, source = _read_text(xml_path)
        labels = _parse_label_xml(xml_text, source)

    X, Y, feature_names, target_names = _split_features_labels(arff, labels, source)
    extra = f"MULAN data set read from {arff_name}\nRelation: {arff.relation}\n"
    if source not in ("n_labels", "label_names"):
        extra += f"Labels named in {source}\n"
    descr = _describe("MULAN multi-label data set", X, Y, target_names, extra + "\n")
    return _make_bunch(X, Y, feature_names, target_names, descr, as_frame, return_X_y)


_EMOTIONS_DESCR = """\
Emotions (MULAN)
================

593 songs, each described by 72 rhythmic and timbre features extracted from a
30-second excerpt, annotated with one or more of 6 emotions (Tellegen-Watson-Clark
model): amazed-suprised, happy-pleased, relaxing-calm, quiet-still, sad-lonely,
angry-aggresive (the spellings are the data set's). Label cardinality 1.87
(1.81 on the training part). MULAN's standard split: 391 training and 202 test
songs; "all" is the training part followed by the test part.

Source: the MULAN repository (tsoumakas/mulan, commit 43f6389, path
data/multi-label/emotions/), files emotions-train.arff, emotions-test.arff and
emotions.xml, copied unchanged (the ARFF files gzipped). The MULAN data folder
states no licence of its own; cite the original paper.

Reference: K. Trohidis, G. Tsoumakas, G. Kalliris and I. Vlahavas,
"Multi-label classification of music into emotions", Proceedings of the 9th
International Conference on Music Information Retrieval (ISMIR 2008),
Philadelphia, PA, USA, pp. 325-330, 2008.
"""


def load_emotions(*, subset="all", as_frame=False, return_X_y=False):
    """Load the emotions multi-label data set (bundled with the package).

    593 songs described by 72 audio features (rhythmic and timbre), each with
    one or more of 6 emotion labels; MULAN's standard split has 391 training and
    202 test songs. The data ship with sksparsemax, so no download is needed.

    Source: the public MULAN repository (tsoumakas/mulan, commit 43f6389,
    ``data/multi-label/emotions/``), the files ``emotions-train.arff``,
    ``emotions-test.arff`` and ``emotions.xml`` copied unchanged (the ARFF files
    gzipped); ``sksparsemax/datasets/data/README.md`` lists their md5 sums.
    The original paper is Trohidis, Tsoumakas, Kalliris and Vlahavas,
    "Multi-label classification of music into emotions", ISMIR 2008 [1]_.

    Parameters
    ----------
    subset : {"all", "train", "test"}, default="all"
        Which part: MULAN's training part (391 songs), test part (202 songs) or
        both (593 songs, the training part first).
    as_frame : bool, default=False
        If True, ``data`` and ``target`` are :class:`pandas.DataFrame` and
        ``frame`` joins them.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        data : ndarray of shape (n_samples, 72)
            The audio features, float64.
        target : ndarray of shape (n_samples, 6)
            The label indicator matrix, int64 with entries 0 and 1.
        frame : pandas.DataFrame or None
            ``data`` and ``target`` side by side when ``as_frame=True``.
        feature_names : list of str
            The names of the features.
        target_names : list of str
            ``['amazed-suprised', 'happy-pleased', 'relaxing-calm',
            'quiet-still', 'sad-lonely', 'angry-aggresive']`` (the data set's
            spellings).
        DESCR : str
            Description, provenance and citation.

    (data, target) : tuple
        If ``return_X_y`` is True.

    See Also
    --------
    load_mulan : Read any MULAN data set from its ARFF and XML files.

    References
    ----------
    .. [1] K. Trohidis, G. Tsoumakas, G. Kalliris and I. Vlahavas,
       "Multi-label classification of music into emotions", Proceedings of the
       9th International Conference on Music Information Retrieval (ISMIR),
       pp. 325-330, 2008.

    Examples
    --------
    >>> from sksparsemax.datasets import load_emotions
    >>> X, Y = load_emotions(subset="train", return_X_y=True)
    >>> X.shape, Y.shape
    ((391, 72), (391, 6))
    >>> round(float(Y.sum(axis=1).mean()), 2)
    1.81
    >>> load_emotions().target_names[:2]
    ['amazed-suprised', 'happy-pleased']
    """
    if subset not in ("all", "train", "test"):
        raise ValueError(f"subset must be 'all', 'train' or 'test', got {subset!r}.")
    as_frame = _check_bool(as_frame, "as_frame")
    return_X_y = _check_bool(return_X_y, "return_X_y")
    xml_name = "emotions.xml"
    labels = _parse_label_xml(_read_package_data(xml_name), xml_name)
    parts = ["train", "test"] if subset == "all" else [subset]
    Xs, Ys = [], []
    for part in parts:
        filename = f"emotions-{part}.arff.gz"
        arff = parse_arff(_read_package_data(filename), filename)
        X, Y, feature_names, target_names = _split_features_labels(arff, labels, xml_name)
        Xs.append(X)
        Ys.append(Y)
    X, Y = np.vstack(Xs), np.vstack(Ys)
    return _make_bunch(X, Y, feature_names, target_names, _EMOTIONS_DESCR, as_frame, return_X_y)
