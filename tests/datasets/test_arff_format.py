"""The ARFF reader behind load_mulan, on small synthetic files."""

import gzip
import io

import numpy as np
import pytest
import scipy.sparse as sp

from sksparsemax.datasets import load_mulan

HEADER = [
    "% a comment",
    "@RELATION 'toy data'",
    "",
    "@attribute 'first feature' NUMERIC",
    "@Attribute x2 real",
    "@attribute x3 integer",
    "@attribute a {0,1}",
    "@attribute b {0,1}",
    "",
    "@DATA",
]
XML = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<labels xmlns="http://mulan.sourceforge.net/labels">\n'
    '<label name="a"></label>\n'
    '<label name="b"></label>\n'
    "</labels>\n"
)


def _write(tmp_path, lines, name="toy.arff", xml=XML):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    if xml is not None:
        (tmp_path / "toy.xml").write_text(xml)
    return path


def test_dense_features_labels_and_names(tmp_path):
    rows = ["1.5,-2,3,0,1", "% comment inside data", "", " 4 , 5e-1 ,6, 1 ,1"]
    bunch = load_mulan(_write(tmp_path, HEADER + rows))
    assert bunch.feature_names == ["first feature", "x2", "x3"]
    assert bunch.target_names == ["a", "b"]
    np.testing.assert_array_equal(bunch.data, [[1.5, -2.0, 3.0], [4.0, 0.5, 6.0]])
    np.testing.assert_array_equal(bunch.target, [[0, 1], [1, 1]])
    assert bunch.data.dtype == np.float64 and bunch.target.dtype == np.int64


def test_sparse_rows_omitted_entries_are_zero(tmp_path):
    rows = ["{0 1.5,4 1}", "{}", "{ 2 7 , 3 1 , 4 1 }", "{1 -1}"]
    bunch = load_mulan(_write(tmp_path, HEADER + rows))
    assert sp.issparse(bunch.data) and bunch.data.format == "csr"
    expected = np.array([[1.5, 0, 0], [0, 0, 0], [0, 0, 7], [0, -1, 0]])
    np.testing.assert_array_equal(bunch.data.toarray(), expected)
    np.testing.assert_array_equal(bunch.target, [[0, 1], [0, 0], [1, 1], [0, 0]])


def test_mixed_sparse_and_dense_rows(tmp_path):
    rows = ["{4 1}", "1,2,3,1,0"]
    bunch = load_mulan(_write(tmp_path, HEADER + rows))
    assert sp.issparse(bunch.data)
    np.testing.assert_array_equal(bunch.data.toarray(), [[0, 0, 0], [1, 2, 3]])
    np.testing.assert_array_equal(bunch.target, [[0, 1], [1, 0]])


def test_missing_feature_values_are_nan(tmp_path):
    dense = load_mulan(_write(tmp_path, HEADER + ["?,1,2,0,1", "3,?,?,1,0"]))
    np.testing.assert_array_equal(np.isnan(dense.data), [[1, 0, 0], [0, 1, 1]])
    sparse = load_mulan(_write(tmp_path, HEADER + ["{0 ?,3 1}"]))
    assert np.isnan(sparse.data.toarray()[0, 0])


def test_nominal_string_features_and_quotes(tmp_path):
    header = [
        "@relation r",
        "@attribute 'colour of it' {red, 'dark blue', green}",
        '@attribute "size" numeric',
        "@attribute lab {0,1}",
        "@data",
    ]
    rows = ["green,1,1", "'dark blue',2,0", "red,3,1", "?,4,0"]
    bunch = load_mulan(_write(tmp_path, header + rows, xml=None), n_labels=1)
    assert bunch.feature_names == ["colour of it", "size"]
    # non-numeric nominal values are coded by their position in the declaration
    np.testing.assert_array_equal(bunch.data[:3], [[2, 1], [1, 2], [0, 3]])
    assert np.isnan(bunch.data[3, 0])


def test_gzip_is_transparent(tmp_path):
    rows = ["1,2,3,0,1", "4,5,6,1,1"]
    plain = _write(tmp_path, HEADER + rows)
    gz = tmp_path / "toy-train.arff.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = load_mulan(plain), load_mulan(gz)  # toy-train.arff.gz finds toy.xml
    np.testing.assert_array_equal(a.data, b.data)
    np.testing.assert_array_equal(a.target, b.target)


def test_file_objects(tmp_path):
    text = "\n".join(HEADER + ["1,2,3,0,1"])
    from_text = load_mulan(io.StringIO(text), io.StringIO(XML))
    from_bytes = load_mulan(io.BytesIO(text.encode()), label_names=["b", "a"])
    np.testing.assert_array_equal(from_text.target, from_bytes.target)
    with pytest.raises(ValueError, match="xml_path"):
        load_mulan(io.StringIO(text))


def test_xml_lookup_strips_train_test_suffix(tmp_path):
    rows = ["1,2,3,0,1"]
    for name in ("toy-train.arff", "toy-TEST.arff", "toy_train.arff"):
        assert load_mulan(_write(tmp_path, HEADER + rows, name=name)).target_names == ["a", "b"]
    lonely = tmp_path / "sub"
    lonely.mkdir()
    with pytest.raises(ValueError, match=r"no MULAN label file.*lonely-train\.xml.*lonely\.xml"):
        load_mulan(_write(lonely, HEADER + rows, name="lonely-train.arff", xml=None))


def test_label_spec_arguments_are_checked(tmp_path):
    path = _write(tmp_path, HEADER + ["1,2,3,0,1"])
    with pytest.raises(ValueError, match="only one of"):
        load_mulan(path, tmp_path / "toy.xml", n_labels=2)
    with pytest.raises(ValueError, match="n_labels"):
        load_mulan(path, n_labels=0)
    with pytest.raises(ValueError, match="n_labels"):
        load_mulan(path, n_labels=5)  # no feature left
    with pytest.raises(ValueError, match="label_names"):
        load_mulan(path, label_names="a")
    with pytest.raises(ValueError, match="label_names.*'c'|'c'.*label_names"):
        load_mulan(path, label_names=["a", "c"])
    with pytest.raises(ValueError, match="as_frame"):
        load_mulan(path, as_frame="yes")


def test_as_frame(tmp_path):
    pd = pytest.importorskip("pandas")
    bunch = load_mulan(_write(tmp_path, HEADER + ["1,2,3,0,1", "4,5,6,1,0"]), as_frame=True)
    assert isinstance(bunch.frame, pd.DataFrame)
    assert list(bunch.frame.columns) == ["first feature", "x2", "x3", "a", "b"]
    np.testing.assert_array_equal(bunch.frame.to_numpy(), [[1, 2, 3, 0, 1], [4, 5, 6, 1, 0]])
    X, Y = load_mulan(tmp_path / "toy.arff", as_frame=True, return_X_y=True)
    assert list(X.columns) == ["first feature", "x2", "x3"] and list(Y.columns) == ["a", "b"]


# --------------------------------------------------------------------------- errors

# (lines of the file, the bad line (found in the lines to get its number), message pattern)


def _with_attribute(line, at=4):
    """HEADER with ``line`` inserted among the attribute declarations."""
    return HEADER[:at] + [line] + HEADER[at:]


MALFORMED = {
    "too few values": (HEADER + ["1,2,3,0,1", "1,2,0,1"], "1,2,0,1", "expected 5"),
    "too many values": (HEADER + ["1,2,3,0,1,7"], "1,2,3,0,1,7", "expected 5"),
    "bad number": (HEADER + ["1,2,3,0,1", "1,abc,3,0,1"], "1,abc,3,0,1", "'abc'.*x2"),
    "underscore number": (HEADER + ["1_0,2,3,0,1"], "1_0,2,3,0,1", "'1_0'"),
    "undeclared nominal": (HEADER + ["1,2,3,0,2"], "1,2,3,0,2", "'2'.*'b'"),
    "bad sparse index": (HEADER + ["{0 1}", "{x 1}"], "{x 1}", "index"),
    "sparse index out of range": (HEADER + ["{0 1}", "{5 1}"], "{5 1}", "out of range"),
    "negative sparse index": (HEADER + ["{-1 1}"], "{-1 1}", "out of range"),
    "sparse entry without value": (HEADER + ["{0 1,3}"], "{0 1,3}", "index value"),
    "repeated sparse index": (HEADER + ["{0 1,0 2}"], "{0 1,0 2}", "repeated"),
    "unclosed sparse row": (HEADER + ["{0 1,3 1"], "{0 1,3 1", "'}'"),
    "bad value in sparse row": (HEADER + ["{0 1}", "{1 zz}"], "{1 zz}", "'zz'"),
    "unterminated quote": (HEADER + ["1,2,3,'0,1"], "1,2,3,'0,1", "quote"),
    "unknown keyword": (_with_attribute("@atribute x numeric"), "@atribute x numeric", "keyword"),
    "unsupported type": (_with_attribute("@attribute s string"), "@attribute s string", "string"),
    "unknown type": (_with_attribute("@attribute s float"), "@attribute s float", "type"),
    "duplicate attribute": (
        _with_attribute("@attribute x2 numeric", 5),
        "@attribute x2 numeric",
        "already",
    ),
    "text before @data": (_with_attribute("1,2,3"), "1,2,3", "expected @relation"),
    "bad nominal declaration": (
        _with_attribute("@attribute n {a,b"),
        "@attribute n {a,b",
        "nominal",
    ),
    "missing label": (HEADER + ["1,2,3,?,1"], "1,2,3,?,1", "missing.*'a'"),
    "label not 0/1": (
        HEADER[:6] + ["@attribute a numeric"] + HEADER[7:] + ["1,2,3,0.5,1"],
        "1,2,3,0.5,1",
        "0.5.*'a'",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_files_name_file_and_line(tmp_path, case):
    lines, bad_line, pattern = MALFORMED[case]
    lineno = lines.index(bad_line) + 1
    path = _write(tmp_path, lines)
    with pytest.raises(ValueError, match=pattern) as info:
        load_mulan(path)
    message = str(info.value)
    assert f"line {lineno}:" in message
    assert "toy.arff" in message


def test_no_data_section(tmp_path):
    path = _write(tmp_path, HEADER[:-1])
    with pytest.raises(ValueError, match="toy.arff.*no @data"):
        load_mulan(path)


def test_label_in_xml_missing_from_arff(tmp_path):
    xml = XML.replace('<label name="b"></label>', '<label name="b"></label>\n<label name="zz"/>')
    path = _write(tmp_path, HEADER + ["1,2,3,0,1"], xml=xml)
    lineno = xml.splitlines().index('<label name="zz"/>') + 1
    with pytest.raises(ValueError, match=rf"toy\.xml, line {lineno}: label 'zz'.*toy\.arff"):
        load_mulan(path)


def test_malformed_xml(tmp_path):
    xml = XML.replace("</labels>", "<label name='c'>\n</labels>")
    path = _write(tmp_path, HEADER + ["1,2,3,0,1"], xml=xml)
    with pytest.raises(ValueError, match=r"toy\.xml, line \d+: malformed XML"):
        load_mulan(path)
    (tmp_path / "toy.xml").write_text("<labels></labels>")
    with pytest.raises(ValueError, match="no <label"):
        load_mulan(path)


def test_quoted_relation_and_names_with_escapes(tmp_path):
    header = [
        "@relation 'it''s'",  # not a valid quoted name: the reader keeps going
        "@attribute 'it\\'s here' numeric",
        "@attribute\tlab\t{0,1}",
        "@data",
    ]
    bunch = load_mulan(_write(tmp_path, header + ["2,1"], xml=None), n_labels=1)
    assert bunch.feature_names == ["it's here"]
    np.testing.assert_array_equal(bunch.data, [[2.0]])


def test_crlf_and_byte_order_mark(tmp_path):
    lines = HEADER + ["1,2,3,0,1", "4,5,x,1,1"]
    path = tmp_path / "toy.arff"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines[:-1]).encode() + b"\r\n")
    (tmp_path / "toy.xml").write_text(XML)
    np.testing.assert_array_equal(load_mulan(path).data, [[1, 2, 3]])
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    with pytest.raises(ValueError, match=f"line {len(lines)}:"):
        load_mulan(path)


# ------------------------------------------------------------------ numbers, blocks, memory


@pytest.mark.parametrize("token", ["1e400", "-1e400", "inf", "-Infinity", "nan", "NaN"])
@pytest.mark.parametrize("layout", ["dense", "dense with ?", "sparse"])
def test_non_finite_numbers_are_refused(tmp_path, token, layout):
    if layout == "sparse":
        rows = ["{0 1,4 1}", f"{{1 {token},3 1}}"]
    elif layout == "dense":
        rows = ["1,2,3,0,1", f"1,{token},3,0,1"]
    else:
        rows = ["1,?,3,0,1", f"1,{token},3,0,1"]
    lines = HEADER + rows
    path = _write(tmp_path, lines)
    pattern = rf"toy\.arff, line {len(lines)}: .*{token!r}.*'x2'.*finite"
    with pytest.raises(ValueError, match=pattern):
        load_mulan(path)


def _random_rows(rng, n, sparse):
    rows, expected = [], np.zeros((n, 5))
    for i in range(n):
        values = np.round(rng.standard_normal(3), 3)
        values[rng.random(3) < 0.3] = 0
        labels = rng.integers(0, 2, 2)
        expected[i] = np.r_[values, labels]
        cells = [repr(float(v)) for v in values] + [str(int(v)) for v in labels]
        if i % 7 == 3:
            cells[i % 3] = "?"
            expected[i, i % 3] = np.nan
        if sparse and i % 5:
            entries = [f"{j} {c}" for j, c in enumerate(cells) if c not in ("0.0", "0")]
            rng.shuffle(entries)
            rows.append("{" + ",".join(entries) + "}")
        else:
            rows.append(",".join(cells))
        if i % 11 == 0:
            rows.append("% a comment")
    return rows, expected


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("block_chars", [1, 64, 1 << 20])
def test_blocks_of_any_size_read_the_same(tmp_path, monkeypatch, sparse, block_chars):
    import sksparsemax.datasets._arff as arff_module

    monkeypatch.setattr(arff_module, "_BLOCK_CHARS", block_chars)
    rows, expected = _random_rows(np.random.default_rng(3), 300, sparse)
    bunch = load_mulan(_write(tmp_path, HEADER + rows))
    X = bunch.data.toarray() if sp.issparse(bunch.data) else bunch.data
    assert sp.issparse(bunch.data) == sparse
    np.testing.assert_array_equal(X, expected[:, :3])  # NaN where '?'
    np.testing.assert_array_equal(bunch.target, expected[:, 3:])
    if sparse:
        assert bunch.data.has_sorted_indices


@pytest.mark.parametrize("case", ["bad number", "undeclared nominal", "bad value in sparse row",
                                  "repeated sparse index", "too few values"])
def test_errors_in_later_blocks_name_their_line(tmp_path, monkeypatch, case):
    import sksparsemax.datasets._arff as arff_module

    monkeypatch.setattr(arff_module, "_BLOCK_CHARS", 32)
    lines, bad_line, pattern = MALFORMED[case]
    good = "{0 1,4 1}" if bad_line.startswith("{") else "1,?,3,0,1"
    lines = lines[: len(HEADER)] + [good] * 40 + lines[len(HEADER):]
    path = _write(tmp_path, lines)
    with pytest.raises(ValueError, match=pattern) as info:
        load_mulan(path)
    assert f"toy.arff, line {lines.index(bad_line) + 1}:" in str(info.value)


def test_dense_rows_then_sparse_rows_across_blocks(tmp_path, monkeypatch):
    import sksparsemax.datasets._arff as arff_module

    monkeypatch.setattr(arff_module, "_BLOCK_CHARS", 16)
    rows = ["1,?,3,0,1"] * 20 + ["{0 ?,4 1}", "{}", "0,0,2,1,0"]
    bunch = load_mulan(_write(tmp_path, HEADER + rows))
    X = bunch.data.toarray()
    assert X.shape == (23, 3)
    np.testing.assert_array_equal(X[:20], [[1, np.nan, 3]] * 20)
    np.testing.assert_array_equal(X[20:], [[np.nan, 0, 0], [0, 0, 0], [0, 0, 2]])
    np.testing.assert_array_equal(bunch.target[19:], [[0, 1], [0, 1], [0, 0], [1, 0]])


def _peak_ratio(path):
    """tracemalloc peak of load_mulan over the size of the arrays it returns."""
    import tracemalloc

    tracemalloc.start()
    try:
        X, Y = load_mulan(path, return_X_y=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    x_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sp.issparse(X) else X.nbytes
    return peak / (x_bytes + Y.nbytes), X


@pytest.mark.parametrize("sparse", [False, True])
def test_peak_memory_is_a_small_multiple_of_the_arrays(tmp_path, monkeypatch, sparse):
    # A few MB of text with one missing value: the reader once made a Python
    # object per value (dense: ~25x the arrays, sparse: ~15x). The blocks of
    # text parsed at a time are made small here, as they are next to a large file.
    import sksparsemax.datasets._arff as arff_module

    monkeypatch.setattr(arff_module, "_BLOCK_CHARS", 1 << 16)
    rng = np.random.default_rng(0)
    n_features = 60
    header = ["@relation big"] + [f"@attribute f{j} numeric" for j in range(n_features)]
    header += ["@attribute a {0,1}", "@attribute b {0,1}", "@data"]
    values = np.round(rng.standard_normal((12000, n_features)), 4)
    labels = rng.integers(0, 2, (12000, 2))
    if sparse:
        values[rng.random(values.shape) < 0.6] = 0
        values[5, 0] = 1.5
        body = [
            "{" + ",".join(f"{j} {v!r}" for j, v in enumerate(r.tolist()) if v)
            + "".join(f",{n_features + j} 1" for j in np.flatnonzero(lab)) + "}"
            for r, lab in zip(values, labels)
        ]
        body[5] = body[5].replace("{0 1.5,", "{0 ?,", 1)
    else:
        body = [",".join(map(repr, r)) + f",{a},{b}" for r, (a, b) in zip(values.tolist(), labels)]
        body[5] = "?" + body[5][body[5].index(","):]
    path = tmp_path / "big.arff"
    path.write_text("\n".join(header + body) + "\n")
    (tmp_path / "big.xml").write_text(XML)
    ratio, X = _peak_ratio(path)
    assert sp.issparse(X) == sparse
    first = X[5].toarray()[0, 0] if sparse else X[5, 0]
    assert np.isnan(first)  # the missing value is kept
    assert ratio < 3.0, ratio
