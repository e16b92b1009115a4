"""The bundled emotions data set."""

import gzip
import hashlib
import re
from importlib import resources

import numpy as np
import pytest

from sksparsemax.datasets import load_emotions, load_mulan

DATA = resources.files("sksparsemax.datasets").joinpath("data")


def test_shapes_and_types():
    train = load_emotions(subset="train")
    test = load_emotions(subset="test")
    full = load_emotions()
    assert train.data.shape[0] + test.data.shape[0] == full.data.shape[0]
    for bunch in (train, test, full):
        assert bunch.data.shape[1] == 72 and bunch.target.shape[1] == 6
        assert isinstance(bunch.data, np.ndarray) and bunch.data.dtype == np.float64
        assert bunch.target.dtype == np.int64
        assert set(np.unique(bunch.target)) == {0, 1}
        assert len(bunch.feature_names) == 72 and len(bunch.target_names) == 6
        assert bunch.frame is None
    np.testing.assert_array_equal(full.data, np.vstack([train.data, test.data]))
    np.testing.assert_array_equal(full.target, np.vstack([train.target, test.target]))
    assert "Trohidis" in full.DESCR and "ISMIR 2008" in full.DESCR
    assert "Trohidis" in load_emotions.__doc__


def test_bundled_equals_shared(mulan_dir):
    folder = mulan_dir / "emotions"
    for subset, filename in [
        ("train", "emotions-train.arff"),
        ("test", "emotions-test.arff"),
        ("all", "emotions.arff"),
    ]:
        shared = load_mulan(folder / filename)
        bundled = load_emotions(subset=subset)
        assert bundled.feature_names == shared.feature_names
        assert bundled.target_names == shared.target_names
        np.testing.assert_array_equal(bundled.data, shared.data)
        np.testing.assert_array_equal(bundled.target, shared.target)


def test_bundled_files_are_unchanged_copies(mulan_dir):
    readme = DATA.joinpath("README.md").read_text()
    for bundled, original in [
        ("emotions-train.arff.gz", "emotions-train.arff"),
        ("emotions-test.arff.gz", "emotions-test.arff"),
        ("emotions.xml", "emotions.xml"),
    ]:
        raw = DATA.joinpath(bundled).read_bytes()
        if bundled.endswith(".gz"):
            raw = gzip.decompress(raw)
        expected = (mulan_dir / "emotions" / original).read_bytes()
        assert raw == expected
        digest = hashlib.md5(expected).hexdigest()
        assert re.search(rf"`{original}`.*`{digest}`", readme), f"md5 of {original} not in README"


def test_as_frame_and_return_X_y():
    pd = pytest.importorskip("pandas")
    bunch = load_emotions(subset="test", as_frame=True)
    plain = load_emotions(subset="test")
    assert isinstance(bunch.data, pd.DataFrame) and isinstance(bunch.frame, pd.DataFrame)
    assert list(bunch.target.columns) == plain.target_names
    np.testing.assert_array_equal(bunch.frame.to_numpy(), np.hstack([plain.data, plain.target]))
    X, Y = load_emotions(subset="test", return_X_y=True)
    np.testing.assert_array_equal(X, plain.data)
    np.testing.assert_array_equal(Y, plain.target)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"subset": "dev"}, "subset"),
        ({"as_frame": 1}, "as_frame"),
        ({"return_X_y": None}, "return_X_y"),
    ],
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(ValueError, match=name):
        load_emotions(**kwargs)
