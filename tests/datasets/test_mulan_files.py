"""load_mulan on the four MULAN data sets of ../shared/data/multilabel.

Reference values come from the data folder's README table; dense files are
compared with :func:`scipy.io.arff.loadarff`, the sparse one with a naive parser
written here.
"""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.io import arff as scipy_arff

from sksparsemax.datasets import load_mulan

DATASETS = ["scene", "emotions", "yeast", "medical"]
DENSE_FILES = [
    (name, part) for name in ("scene", "emotions", "yeast") for part in ("train", "test")
]


def _readme_table(mulan_dir):
    """{dataset: (n_train, n_test, n_features, n_labels, cardinality)} from the README."""
    table = {}
    for line in (mulan_dir / "README.md").read_text().splitlines():
        m = re.match(
            r"\|\s*(\w+)\s*\|\s*(\d+)\s*/\s*(\d+)\s*\|\s*(\d+)[^|]*\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|",
            line,
        )
        if m:
            name, tr, te, nf, nl, card = m.groups()
            table[name] = (int(tr), int(te), int(nf), int(nl), float(card))
    return table


def _xml_labels(path):
    root = ET.parse(path).getroot()
    return [el.get("name") for el in root.iter() if el.tag.split("}")[-1] == "label"]


@pytest.mark.parametrize("name", DATASETS)
def test_shapes_and_cardinality_match_readme(mulan_dir, name):
    table = _readme_table(mulan_dir)
    assert set(DATASETS) <= set(table), "README table not understood"
    n_train, n_test, n_features, n_labels, cardinality = table[name]
    train = load_mulan(mulan_dir / name / f"{name}-train.arff")
    test = load_mulan(mulan_dir / name / f"{name}-test.arff")
    assert train.data.shape == (n_train, n_features)
    assert test.data.shape == (n_test, n_features)
    assert train.target.shape == (n_train, n_labels)
    assert test.target.shape == (n_test, n_labels)
    assert train.target.dtype == np.int64
    assert set(np.unique(train.target)) <= {0, 1}
    assert round(float(train.target.sum(axis=1).mean()), 2) == cardinality
    assert sp.issparse(train.data) == (name == "medical")
    if name == "medical":
        assert train.data.format == "csr"
    else:
        assert isinstance(train.data, np.ndarray) and train.data.dtype == np.float64
    # labels: exactly the XML's names, in the ARFF's attribute order
    xml_names = _xml_labels(mulan_dir / name / f"{name}.xml")
    assert sorted(train.target_names) == sorted(xml_names)
    assert len(train.feature_names) == n_features
    assert not set(train.feature_names) & set(train.target_names)


@pytest.mark.parametrize(("name", "part"), DENSE_FILES)
def test_dense_matches_scipy_loadarff(mulan_dir, name, part):
    path = mulan_dir / name / f"{name}-{part}.arff"
    records, meta = scipy_arff.loadarff(path)
    names = meta.names()
    columns = {}
    for attr, (kind, _) in zip(names, [meta[n] for n in names]):
        col = records[attr]
        columns[attr] = col.astype(str).astype(float) if kind == "nominal" else col.astype(float)
    labels = set(_xml_labels(mulan_dir / name / f"{name}.xml"))
    feature_names = [n for n in names if n not in labels]
    target_names = [n for n in names if n in labels]
    expected_X = np.column_stack([columns[n] for n in feature_names])
    expected_Y = np.column_stack([columns[n] for n in target_names]).astype(int)

    bunch = load_mulan(path)
    assert bunch.feature_names == feature_names
    assert bunch.target_names == target_names
    np.testing.assert_array_equal(bunch.data, expected_X)
    np.testing.assert_array_equal(bunch.target, expected_Y)


def _naive_sparse(path):
    """Parse a sparse ARFF file the slow, obvious way: (attribute names, dense rows)."""
    names, rows, in_data = [], [], False
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("%"):
            continue
        if not in_data:
            if line.lower().startswith("@attribute"):
                names.append(line.split()[1])
            elif line.lower().startswith("@data"):
                in_data = True
            continue
        row = [0.0] * len(names)
        for entry in line.strip("{}").split(","):
            if entry.strip():
                index, value = entry.split()
                row[int(index)] = float(value)
        rows.append(row)
    return names, np.array(rows)


@pytest.mark.parametrize("part", ["train", "test"])
def test_sparse_matches_naive_parser(mulan_dir, part):
    path = mulan_dir / "medical" / f"medical-{part}.arff"
    names, dense = _naive_sparse(path)
    labels = set(_xml_labels(mulan_dir / "medical" / "medical.xml"))
    is_label = np.array([n in labels for n in names])
    bunch = load_mulan(path)
    assert bunch.data.shape == (dense.shape[0], int((~is_label).sum()))
    np.testing.assert_array_equal(bunch.data.toarray(), dense[:, ~is_label])
    np.testing.assert_array_equal(bunch.target, dense[:, is_label].astype(int))
    # CSR stores no explicit zeros beyond what the file lists, and sorted indices
    assert bunch.data.has_sorted_indices
    assert bunch.data.nnz == np.count_nonzero(dense[:, ~is_label])


def test_full_files_are_train_plus_test(mulan_dir):
    # MULAN's <name>.arff, where shipped, is the training rows then the test rows
    for name in ("emotions", "yeast", "medical"):
        full = load_mulan(mulan_dir / name / f"{name}.arff")
        train = load_mulan(mulan_dir / name / f"{name}-train.arff")
        test = load_mulan(mulan_dir / name / f"{name}-test.arff")
        stack = sp.vstack if sp.issparse(full.data) else np.vstack
        both = stack([train.data, test.data])
        if sp.issparse(both):
            both, full_data = both.toarray(), full.data.toarray()
        else:
            full_data = full.data
        assert full_data.shape == both.shape
        # same multiset of rows (the order may differ between files)
        key = np.lexsort(np.hstack([both, np.vstack([train.target, test.target])]).T)
        key_full = np.lexsort(np.hstack([full_data, full.target]).T)
        np.testing.assert_array_equal(both[key], full_data[key_full])


def test_explicit_label_specs_agree_with_xml(mulan_dir):
    path = mulan_dir / "yeast" / "yeast-train.arff"
    from_xml = load_mulan(path, mulan_dir / "yeast" / "yeast.xml")
    auto = load_mulan(path)
    by_count = load_mulan(path, n_labels=len(from_xml.target_names))
    by_name = load_mulan(path, label_names=list(reversed(from_xml.target_names)))
    for other in (auto, by_count, by_name):
        assert other.target_names == from_xml.target_names
        np.testing.assert_array_equal(other.data, from_xml.data)
        np.testing.assert_array_equal(other.target, from_xml.target)


def test_as_frame_sparse_and_dense(mulan_dir):
    pd = pytest.importorskip("pandas")
    dense = load_mulan(mulan_dir / "emotions" / "emotions-test.arff", as_frame=True)
    plain = load_mulan(mulan_dir / "emotions" / "emotions-test.arff")
    assert isinstance(dense.data, pd.DataFrame) and isinstance(dense.target, pd.DataFrame)
    assert list(dense.data.columns) == plain.feature_names
    assert list(dense.target.columns) == plain.target_names
    np.testing.assert_array_equal(dense.data.to_numpy(), plain.data)
    np.testing.assert_array_equal(dense.target.to_numpy(), plain.target)
    assert list(dense.frame.columns) == plain.feature_names + plain.target_names

    sparse = load_mulan(mulan_dir / "medical" / "medical-train.arff", as_frame=True)
    plain = load_mulan(mulan_dir / "medical" / "medical-train.arff")
    assert all(isinstance(t, pd.SparseDtype) for t in sparse.data.dtypes)
    np.testing.assert_array_equal(sparse.data.sparse.to_dense().to_numpy(), plain.data.toarray())
    np.testing.assert_array_equal(sparse.target.to_numpy(), plain.target)
    X, Y = load_mulan(mulan_dir / "medical" / "medical-train.arff", return_X_y=True)
    assert (X != plain.data).nnz == 0
    np.testing.assert_array_equal(Y, plain.target)


def test_descr_mentions_source(mulan_dir):
    bunch = load_mulan(mulan_dir / "scene" / "scene-train.arff")
    assert "scene-train.arff" in bunch.DESCR and "scene.xml" in bunch.DESCR
    assert bunch.frame is None
