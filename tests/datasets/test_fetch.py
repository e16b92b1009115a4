"""fetch_mulan and get_data_home, against a local HTTP server (no internet).

The server (``http.server.ThreadingHTTPServer`` in a daemon thread) serves a
temporary folder laid out like the MULAN repository (``<name>/<file>``). The
emotions files are built from the data bundled with the package (the ARFF files
gunzipped; MULAN's ``emotions.arff`` is the training file followed by the test
file's data rows, byte for byte), so these tests need neither the network nor
``../shared``; the tests of the other data sets serve ``../shared/data/multilabel``
and skip without it.
"""

import functools
import gzip
import hashlib
import http.server
import shutil
import socket
import threading
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sksparsemax.datasets import fetch_mulan, get_data_home, load_emotions, load_mulan
from sksparsemax.datasets._fetch import MULAN_BASE_URL, MULAN_DATASETS

MULAN_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "multilabel"
DATA = resources.files("sksparsemax.datasets").joinpath("data")


def _emotions_files():
    """{filename: bytes} of MULAN's emotions folder, from the bundled data."""
    train = gzip.decompress(DATA.joinpath("emotions-train.arff.gz").read_bytes())
    test = gzip.decompress(DATA.joinpath("emotions-test.arff.gz").read_bytes())
    start = test.lower().index(b"@data")
    rows = test[test.index(b"\n", start) + 1 :]
    return {
        "emotions.xml": DATA.joinpath("emotions.xml").read_bytes(),
        "emotions-train.arff": train,
        "emotions-test.arff": test,
        "emotions.arff": train + rows,
    }


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


class _Server:
    """A local file server of ``root`` in a daemon thread; logs the paths asked."""

    def __init__(self, root):
        self.root = Path(root)
        self.requests = []
        requests = self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                requests.append(self.path)
                super().do_GET()

        handler = functools.partial(Handler, directory=str(self.root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def shutdown(self):
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join(5)
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path):
    """A local server of a MULAN-like folder holding emotions."""
    root = tmp_path / "repo"
    (root / "emotions").mkdir(parents=True)
    for filename, content in _emotions_files().items():
        (root / "emotions" / filename).write_bytes(content)
    srv = _Server(root)
    yield srv
    srv.shutdown()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.delenv("SKSPARSEMAX_DATA", raising=False)
    monkeypatch.delenv("SKSPARSEMAX_MULAN_URL", raising=False)
    return tmp_path / "data_home"


def _leftovers(folder):
    return sorted(p.name for p in Path(folder).rglob("*") if p.name.endswith(".part"))


def _closed_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


# ----------------------------------------------------------------------------- registry


def test_registry_matches_the_bundled_emotions_files():
    files = _emotions_files()
    assert set(files) == set(MULAN_DATASETS["emotions"])
    for filename, content in files.items():
        assert _sha256(content) == MULAN_DATASETS["emotions"][filename], filename


def test_registry_matches_the_shared_copies():
    if not MULAN_DIR.is_dir():
        pytest.skip(f"{MULAN_DIR} absent: the digests are checked against the bundled emotions")
    assert sorted(MULAN_DATASETS) == ["emotions", "medical", "scene", "yeast"]
    for name, files in MULAN_DATASETS.items():
        on_disk = sorted(p.name for p in (MULAN_DIR / name).iterdir())
        assert on_disk == sorted(files), name
        for filename, digest in files.items():
            assert _sha256((MULAN_DIR / name / filename).read_bytes()) == digest, filename
    bundled = _emotions_files()
    for filename, content in bundled.items():
        assert (MULAN_DIR / "emotions" / filename).read_bytes() == content, filename


def test_default_base_url_is_pinned_to_the_mulan_commit():
    assert MULAN_BASE_URL == (
        "https://raw.githubusercontent.com/tsoumakas/mulan/43f6389/data/multi-label/"
    )


# ----------------------------------------------------------------------------- download


def test_fetch_downloads_checks_and_loads(server, home):
    bunch = fetch_mulan("emotions", data_home=home, base_url=server.base_url)
    cache = home / "mulan" / "emotions"
    assert bunch.data_dir == str(cache)
    assert sorted(p.name for p in cache.iterdir()) == sorted(MULAN_DATASETS["emotions"])
    for filename, digest in MULAN_DATASETS["emotions"].items():
        assert _sha256((cache / filename).read_bytes()) == digest
    assert sorted(server.requests) == sorted(f"/emotions/{f}" for f in MULAN_DATASETS["emotions"])

    xml = server.root / "emotions" / "emotions.xml"
    for part in ("train", "test"):
        ref = load_mulan(server.root / "emotions" / f"emotions-{part}.arff", xml)
        np.testing.assert_array_equal(bunch[f"X_{part}"], ref.data)
        np.testing.assert_array_equal(bunch[f"Y_{part}"], ref.target)
        assert bunch.feature_names == ref.feature_names
        assert bunch.target_names == bunch.label_names == ref.target_names
    assert bunch.X_train.shape == (391, 72) and bunch.X_test.shape == (202, 72)
    assert bunch.Y_train.dtype == np.int64
    np.testing.assert_array_equal(bunch.X_train, load_emotions(subset="train").data)
    assert "emotions" in bunch.DESCR and "Trohidis" in bunch.DESCR
    assert "43f6389" in bunch.DESCR and "SHA-256 checked" in bunch.DESCR

    parts = fetch_mulan("emotions", data_home=home, base_url=server.base_url, return_X_y=True)
    assert isinstance(parts, tuple) and len(parts) == 4
    for got, key in zip(parts, ["X_train", "Y_train", "X_test", "Y_test"]):
        np.testing.assert_array_equal(got, bunch[key])
    assert not _leftovers(home)


def test_cache_is_reused_without_the_server(server, home):
    fetch_mulan("emotions", data_home=home, base_url=server.base_url)
    n_requests = len(server.requests)
    again = fetch_mulan("emotions", data_home=home, base_url=server.base_url)
    assert len(server.requests) == n_requests  # nothing asked the second time
    server.shutdown()
    for kwargs in ({}, {"base_url": server.base_url}, {"download_if_missing": False}):
        bunch = fetch_mulan("emotions", data_home=home, **kwargs)
        np.testing.assert_array_equal(bunch.X_train, again.X_train)
        assert "a local copy" in bunch.DESCR


def test_corrupt_download_raises_and_keeps_nothing(server, home):
    path = server.root / "emotions" / "emotions-train.arff"
    good = path.read_bytes()
    bad = good + b"% not the registered file\n"
    assert bad != good
    path.write_bytes(bad)
    expected = MULAN_DATASETS["emotions"]["emotions-train.arff"]
    with pytest.raises(OSError) as info:
        fetch_mulan("emotions", data_home=home, base_url=server.base_url)
    message = str(info.value)
    assert "emotions-train.arff" in message
    assert expected in message and _sha256(bad) in message
    assert info.value.__cause__ is None and info.value.__context__ is None
    cache = home / "mulan" / "emotions"
    assert not (cache / "emotions-train.arff").exists()
    assert not _leftovers(home)
    # the next call, once the server is right, downloads what is missing only
    path.write_bytes(good)
    before = list(server.requests)
    bunch = fetch_mulan("emotions", data_home=home, base_url=server.base_url)
    assert bunch.X_train.shape == (391, 72)
    asked = server.requests[len(before):]
    assert "/emotions/emotions-train.arff" in asked
    assert "/emotions/emotions.xml" not in asked


def test_offline_error_is_clear_and_leaves_nothing(home):
    url = _closed_port_url()
    with pytest.raises(OSError, match=r"could not download .*emotions/emotions\.xml") as info:
        fetch_mulan("emotions", data_home=home, base_url=url, timeout=5)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert not (home / "mulan" / "emotions").exists()


def test_unresponsive_server_times_out(home):
    with socket.socket() as listener:  # accepts connections, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/"
        with pytest.raises(OSError, match="could not download"):
            fetch_mulan("emotions", data_home=home, base_url=url, timeout=0.5)


def test_missing_file_on_the_server_is_an_http_error(server, home):
    (server.root / "emotions" / "emotions-test.arff").unlink()
    with pytest.raises(OSError, match=r"emotions-test\.arff: HTTP error 404"):
        fetch_mulan("emotions", data_home=home, base_url=server.base_url)
    assert not _leftovers(home)
    assert not (home / "mulan" / "emotions" / "emotions-test.arff").exists()


# ----------------------------------------------------------------------------- lookup


def test_no_download_when_missing_names_the_path_and_the_fix(home):
    with pytest.raises(OSError) as info:
        fetch_mulan("scene", data_home=home, download_if_missing=False)
    message = str(info.value)
    assert str(home / "mulan" / "scene") in message
    assert "fetch_mulan('scene')" in message and "SKSPARSEMAX_DATA" in message
    assert not home.exists()  # nothing created when nothing is downloaded


def test_environment_variables(server, home, monkeypatch, tmp_path):
    monkeypatch.setenv("SKSPARSEMAX_DATA", str(home))
    monkeypatch.setenv("SKSPARSEMAX_MULAN_URL", server.base_url)
    assert get_data_home() == str(home) and home.is_dir()
    bunch = fetch_mulan("emotions")
    assert bunch.data_dir == str(home / "mulan" / "emotions")
    assert server.requests
    other = tmp_path / "explicit"
    assert get_data_home(other) == str(other)  # the argument wins


def test_default_data_home(monkeypatch, tmp_path):
    monkeypatch.delenv("SKSPARSEMAX_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert get_data_home() == str(tmp_path / "sksparsemax_data")
    assert (tmp_path / "sksparsemax_data").is_dir()
    monkeypatch.setenv("SKSPARSEMAX_DATA", "")  # empty: as if unset
    assert get_data_home() == str(tmp_path / "sksparsemax_data")
    assert get_data_home("~/elsewhere") == str(tmp_path / "elsewhere")


def test_data_home_holding_the_data_sets_directly(home, monkeypatch):
    folder = home / "emotions"
    folder.mkdir(parents=True)
    for filename, content in _emotions_files().items():
        if filename != "emotions.arff":  # the three files needed suffice
            (folder / filename).write_bytes(content)
    url = _closed_port_url()  # any download attempt would fail
    bunch = fetch_mulan("emotions", data_home=home, base_url=url)
    assert bunch.data_dir == str(folder)
    assert bunch.X_test.shape == (202, 72)
    monkeypatch.setenv("SKSPARSEMAX_DATA", str(home))  # the CI layout
    assert fetch_mulan("emotions", download_if_missing=False).data_dir == str(folder)
    # <data_home>/mulan/<name>/ comes first
    cache = home / "mulan" / "emotions"
    shutil.copytree(folder, cache)
    assert fetch_mulan("emotions", data_home=home, base_url=url).data_dir == str(cache)


def test_incomplete_local_copy_is_not_used(home):
    folder = home / "emotions"
    folder.mkdir(parents=True)
    (folder / "emotions.xml").write_bytes(_emotions_files()["emotions.xml"])
    with pytest.raises(OSError, match="not found"):
        fetch_mulan("emotions", data_home=home, download_if_missing=False)


def test_as_frame(server, home):
    pytest.importorskip("pandas")
    bunch = fetch_mulan("emotions", data_home=home, base_url=server.base_url, as_frame=True)
    assert list(bunch.X_train.columns) == bunch.feature_names
    assert list(bunch.Y_test.columns) == bunch.target_names


@pytest.mark.parametrize(
    "name, message",
    [("bibtex", "unknown MULAN data set 'bibtex'"), ("Scene", "emotions, medical, scene, yeast"),
     (3, "unknown MULAN data set 3")],
)
def test_unknown_name(home, name, message):
    with pytest.raises(ValueError, match=message):
        fetch_mulan(name, data_home=home)
    assert not home.exists()


@pytest.mark.parametrize("param", ["download_if_missing", "return_X_y", "as_frame"])
def test_bool_parameters_are_checked(home, param):
    with pytest.raises(ValueError, match=f"{param} must be a bool"):
        fetch_mulan("emotions", data_home=home, **{param: "yes"})


# ----------------------------------------------------------------------------- all four


def test_fetch_every_registered_data_set_from_a_local_mirror(tmp_path, home):
    if not MULAN_DIR.is_dir():
        pytest.skip(f"{MULAN_DIR} absent (emotions is tested from the bundled data)")
    srv = _Server(MULAN_DIR)
    try:
        for name in ("medical", "yeast", "scene"):
            bunch = fetch_mulan(name, data_home=home, base_url=srv.base_url.rstrip("/"))
            xml = MULAN_DIR / name / f"{name}.xml"
            ref = load_mulan(MULAN_DIR / name / f"{name}-test.arff", xml)
            assert sp.issparse(bunch.X_test) == (name == "medical")
            got = bunch.X_test.toarray() if sp.issparse(bunch.X_test) else bunch.X_test
            want = ref.data.toarray() if sp.issparse(ref.data) else ref.data
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(bunch.Y_test, ref.target)
            assert bunch.target_names == ref.target_names
    finally:
        srv.shutdown()
    assert sorted(p.name for p in (home / "mulan").iterdir()) == ["medical", "scene", "yeast"]
