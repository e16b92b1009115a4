"""Download, cache and load the MULAN multi-label data sets (``fetch_mulan``).

The files come from the public MULAN repository on GitHub (tsoumakas/mulan,
pinned at commit ``43f6389``, folder ``data/multi-label/<name>/``), are checked
against the SHA-256 digests of :data:`MULAN_DATASETS` and are cached under the
data home (:func:`get_data_home`). Reading them is :func:`load_mulan`'s job.
"""

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from sklearn.utils import Bunch

from ._mulan import _check_bool, load_mulan

__all__ = ["fetch_mulan", "get_data_home"]

#: The environment variable naming the data home (see :func:`get_data_home`).
DATA_HOME_ENV = "SKSPARSEMAX_DATA"

#: The data home when neither ``data_home`` nor ``$SKSPARSEMAX_DATA`` is given.
DEFAULT_DATA_HOME = os.path.join("~", "sksparsemax_data")

#: The environment variable that overrides :data:`MULAN_BASE_URL` (a mirror, a
#: local file server in the tests).
BASE_URL_ENV = "SKSPARSEMAX_MULAN_URL"

#: The MULAN commit the files and the digests below belong to. It is the
#: abbreviated hash under which these files were copied (the full 40-digit
#: hash was not recorded); GitHub resolves an unambiguous abbreviated hash in
#: raw-file addresses. Pinning a commit, not a branch, keeps the checksums valid.
MULAN_COMMIT = "43f6389"

#: Where the files are downloaded from: ``<MULAN_BASE_URL><name>/<file>``.
MULAN_BASE_URL = (
    f"https://raw.githubusercontent.com/tsoumakas/mulan/{MULAN_COMMIT}/data/multi-label/"
)

#: The data sets ``fetch_mulan`` knows: for each, the files of its MULAN folder
#: and their SHA-256 digests (computed from copies taken unchanged from the
#: repository at :data:`MULAN_COMMIT`; they agree with the md5 sums recorded
#: with those copies and, for emotions, with the files bundled in the package).
MULAN_DATASETS = {
    "emotions": {
        "emotions.xml": "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0",
        "emotions-train.arff": "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98",
        "emotions-test.arff": "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f",
        "emotions.arff": "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b",
    },
    "medical": {
        "medical.xml": "51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce",
        "medical-train.arff": "c764f45756ab1c553b8b4eaaf5605a5610a43bbbcf37492d0f1a12bf9c9e2244",
        "medical-test.arff": "6be472e75a6c0b0916187f343a398011b1b26f8f0ddc682c575312ad3532f6c4",
        "medical.arff": "ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4",
    },
    "scene": {
        "scene.xml": "55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5",
        "scene-train.arff": "b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d",
        "scene-test.arff": "ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42",
    },
    "yeast": {
        "yeast.xml": "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247",
        "yeast-train.arff": "e759dc991ff54694a4ff9c4314f3be0d6fd2b1994a4b563f57e416394c6aebbd",
        "yeast-test.arff": "4aaac102bff9669a765bf0b378602e5cc8c3b181048282e2f003117b496d552a",
        "yeast.arff": "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7",
    },
}

_REFERENCES = {
    "emotions": (
        "K. Trohidis, G. Tsoumakas, G. Kalliris and I. Vlahavas, \"Multi-label "
        "classification of music into emotions\", Proceedings of the 9th International "
        "Conference on Music Information Retrieval (ISMIR 2008), pp. 325-330, 2008."
    ),
    "medical": (
        "J. P. Pestian, C. Brew, P. Matykiewicz, D. J. Hovermale, N. Johnson, K. B. Cohen "
        "and W. Duch, \"A shared task involving multi-label classification of clinical "
        "free text\", Proceedings of BioNLP 2007, pp. 97-104, 2007."
    ),
    "scene": (
        "M. R. Boutell, J. Luo, X. Shen and C. M. Brown, \"Learning multi-label scene "
        "classification\", Pattern Recognition 37(9), pp. 1757-1771, 2004."
    ),
    "yeast": (
        "A. Elisseeff and J. Weston, \"A kernel method for multi-labelled "
        "classification\", Advances in Neural Information Processing Systems 14 "
        "(NIPS 2001), pp. 681-687, 2002."
    ),
}

_CHUNK = 1 << 16


def _how_to_get(name):
    return (
        f"run `python -c \"from sksparsemax.datasets import fetch_mulan; "
        f"fetch_mulan('{name}')\"` (downloads it from {MULAN_BASE_URL}{name}/), "
        f"or set {DATA_HOME_ENV} to a folder holding {name}/{name}.xml, "
        f"{name}/{name}-train.arff and {name}/{name}-test.arff"
    )


def _data_home_path(data_home=None):
    """The data home as a Path, without creating it."""
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV) or DEFAULT_DATA_HOME
    return Path(os.path.expanduser(os.fspath(data_home)))


def get_data_home(data_home=None):
    """Return the folder where sksparsemax caches downloaded data sets.

    The folder is, in this order: ``data_home`` when given, the environment
    variable ``SKSPARSEMAX_DATA`` when set and not empty, otherwise
    ``~/sksparsemax_data``. A leading ``~`` is expanded to the user's home
    folder. The folder is created if it does not exist.

    Parameters
    ----------
    data_home : str or os.PathLike, default=None
        The folder to use instead of ``$SKSPARSEMAX_DATA`` or
        ``~/sksparsemax_data``.

    Returns
    -------
    data_home : str
        The path of the data home folder.

    See Also
    --------
    fetch_mulan : Download (once) and load a MULAN data set.

    Examples
    --------
    >>> import os, tempfile
    >>> from sksparsemax.datasets import get_data_home
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     home = get_data_home(os.path.join(tmp, "my_data"))
    ...     os.path.basename(home), os.path.isdir(home)
    ('my_data', True)
    """
    path = _data_home_path(data_home)
    path.mkdir(parents=True, exist_ok=True)
    return os.fspath(path)


def _required_files(name):
    return [f"{name}.xml", f"{name}-train.arff", f"{name}-test.arff"]


def _find_local(name, data_home=None):
    """The folder holding a local copy of data set ``name``, or None.

    Looked for, in this order, in ``<data_home>/mulan/<name>/`` (where
    :func:`fetch_mulan` downloads to) and ``<data_home>/<name>/`` (a folder of
    MULAN data sets used as data home). A copy counts when it has the XML label
    file and the training and test ARFF files. Nothing is created.
    """
    home = _data_home_path(data_home)
    for folder in (home / "mulan" / name, home / name):
        if all((folder / f).is_file() for f in _required_files(name)):
            return folder
    return None


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url, target, sha256, timeout):
    """Download ``url`` to ``target``, checking its SHA-256 digest.

    The bytes go to a temporary file beside ``target``, renamed to ``target``
    only once the digest matches, so no partial or corrupt file is ever left
    under the name ``target``.
    """
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
                for block in iter(lambda: resp.read(_CHUNK), b""):
                    digest.update(block)
                    out.write(block)
        except urllib.error.HTTPError as exc:
            raise OSError(f"could not download {url}: HTTP error {exc.code} ({exc.reason})") from None
        except urllib.error.URLError as exc:
            raise OSError(
                f"could not download {url}: {exc.reason} (no network, or the server is "
                "unreachable)"
            ) from None
        except TimeoutError:
            raise OSError(f"could not download {url}: no answer within {timeout} s") from None
        except (OSError, http.client.HTTPException) as exc:
            raise OSError(f"could not download {url}: {exc!r}") from None
        actual = digest.hexdigest()
        if actual != sha256:
            raise OSError(
                f"{target.name} downloaded from {url} has SHA-256 {actual}, expected {sha256}: "
                "the file is corrupt or not the one registered; it was not kept"
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _download_dataset(name, folder, base_url, timeout):
    folder.mkdir(parents=True, exist_ok=True)
    base = base_url if base_url.endswith("/") else base_url + "/"
    try:
        for filename, sha256 in MULAN_DATASETS[name].items():
            target = folder / filename
            if target.is_file():
                continue  # only verified files are ever renamed into the cache
            url = urllib.parse.urljoin(base, f"{urllib.parse.quote(name)}/{filename}")
            _download(url, target, sha256, timeout)
    except OSError as exc:
        for path in (folder, folder.parent):  # no empty folder left behind
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()
        if str(exc).startswith("could not download"):
            raise OSError(
                f"{exc}. Without network, set {DATA_HOME_ENV} to a folder holding "
                f"{name}/{name}.xml, {name}/{name}-train.arff and {name}/{name}-test.arff."
            ) from None
        raise


def _describe(name, folder, train, test, source):
    title = f"MULAN data set {name!r}"
    n_labels = train.target.shape[1]
    kind = "sparse (CSR)" if hasattr(train.data, "tocsr") else "dense"
    cardinality = float(train.target.sum(axis=1).mean()) if train.target.shape[0] else float("nan")
    return (
        f"{title}\n{'=' * len(title)}\n\n"
        f"MULAN's standard split: {train.data.shape[0]} training and {test.data.shape[0]} "
        f"test samples, {train.data.shape[1]} features ({kind}), {n_labels} labels "
        f"({', '.join(train.target_names)}); label cardinality {cardinality:.2f} on the "
        "training part.\n\n"
        f"Source: the MULAN repository (tsoumakas/mulan, commit {MULAN_COMMIT}, "
        f"data/multi-label/{name}/), {source}. Files read from {folder}.\n"
        "The MULAN data folder states no licence of its own; cite the original paper.\n\n"
        f"Reference: {_REFERENCES[name]}\n"
    )


def fetch_mulan(
    name,
    *,
    data_home=None,
    download_if_missing=True,
    return_X_y=False,
    as_frame=False,
    base_url=None,
    timeout=60.0,
):
    """Load a MULAN multi-label data set, downloading it once if needed.

    The data set's folder of the public MULAN repository (its XML label file and
    ARFF files) is downloaded once, each file checked against its registered
    SHA-256 digest, into ``<data_home>/mulan/<name>/``; later calls read the
    local copy without network. The files are read with :func:`load_mulan`.

    A local copy is looked for, in this order, in:

    1. ``<data_home>/mulan/<name>/`` -- where this function downloads to;
    2. ``<data_home>/<name>/`` -- so that a folder of MULAN data sets
       (``<name>/<name>.xml``, ``<name>/<name>-train.arff``,
       ``<name>/<name>-test.arff``) can serve as data home directly, e.g.
       ``SKSPARSEMAX_DATA=../shared/data/multilabel``.

    A copy counts when it has ``<name>.xml``, ``<name>-train.arff`` and
    ``<name>-test.arff``. Local copies are read as they are (their digests are
    checked only when downloaded).

    Parameters
    ----------
    name : {"emotions", "medical", "scene", "yeast"}
        The data set. Only data sets with registered digests can be downloaded;
        any other MULAN data set can be read with :func:`load_mulan` from its
        files.
    data_home : str or os.PathLike, default=None
        The data home; None means ``$SKSPARSEMAX_DATA``, else
        ``~/sksparsemax_data`` (see :func:`get_data_home`).
    download_if_missing : bool, default=True
        If False, raise an :class:`OSError` instead of downloading when no local
        copy is found.
    return_X_y : bool, default=False
        If True, return ``(X_train, Y_train, X_test, Y_test)`` instead of a
        Bunch.
    as_frame : bool, default=False
        If True, the features and labels are :class:`pandas.DataFrame` (as with
        :func:`load_mulan`).
    base_url : str, default=None
        Where to download from: the files are read from
        ``<base_url><name>/<file>``. None means the environment variable
        ``SKSPARSEMAX_MULAN_URL`` when set, otherwise the MULAN repository at
        commit 43f6389,
        ``https://raw.githubusercontent.com/tsoumakas/mulan/43f6389/data/multi-label/``.
        A mirror must serve the same bytes: the digests are checked.
    timeout : float, default=60.0
        The network timeout of each download, in seconds.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes.

        X_train : ndarray of shape (n_train, n_features) or scipy.sparse.csr_matrix
            The training features, float64 (CSR for the sparse ``medical``).
        Y_train : ndarray of shape (n_train, n_labels)
            The training label indicator matrix, int64 with entries 0 and 1.
        X_test : ndarray of shape (n_test, n_features) or scipy.sparse.csr_matrix
            The test features.
        Y_test : ndarray of shape (n_test, n_labels)
            The test label indicator matrix.
        feature_names : list of str
            The names of the features.
        target_names : list of str
            The names of the labels (``label_names`` is the same list).
        DESCR : str
            A description: sizes, provenance, where the files were read from,
            and the data set's reference.
        data_dir : str
            The folder the files were read from.

    (X_train, Y_train, X_test, Y_test) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        If ``name`` is not a registered data set (the message lists them).
    OSError
        If no local copy is found and ``download_if_missing`` is False (the
        message names the folders searched and how to get the data), if a
        download fails (no network, timeout, HTTP error), or if a downloaded
        file does not have its registered SHA-256 digest (the message names the
        file and both digests; the file is not kept).

    See Also
    --------
    get_data_home : The folder of the downloaded data.
    load_mulan : Read a MULAN data set from its files.
    load_emotions : The emotions data set, bundled with the package.

    Notes
    -----
    The digests were computed from the files of the MULAN repository at commit
    43f6389. The downloaded files are written to a temporary file, checked,
    then renamed, so an interrupted or corrupt download leaves nothing in the
    cache.

    Examples
    --------
    The first call downloads the files (about 6 MB for scene); later calls
    read the cached copy.

    >>> from sksparsemax.datasets import fetch_mulan
    >>> scene = fetch_mulan("scene")  # doctest: +SKIP
    >>> scene.X_train.shape, scene.Y_test.shape  # doctest: +SKIP
    ((1211, 294), (1196, 6))
    >>> X_train, Y_train, X_test, Y_test = fetch_mulan(
    ...     "yeast", return_X_y=True)  # doctest: +SKIP
    """
    if not isinstance(name, str) or name not in MULAN_DATASETS:
        raise ValueError(
            f"unknown MULAN data set {name!r}; fetch_mulan knows "
            f"{', '.join(sorted(MULAN_DATASETS))} (other MULAN data sets can be read "
            "from their files with load_mulan)."
        )
    download_if_missing = _check_bool(download_if_missing, "download_if_missing")
    return_X_y = _check_bool(return_X_y, "return_X_y")
    as_frame = _check_bool(as_frame, "as_frame")

    home = _data_home_path(data_home)
    folder = _find_local(name, home)
    source = "a local copy"
    if folder is None:
        cache = home / "mulan" / name
        if not download_if_missing:
            raise OSError(
                f"MULAN data set {name!r} not found in {cache} nor in {home / name} "
                f"(download_if_missing=False). To get it, {_how_to_get(name)}."
            )
        if base_url is None:
            base_url = os.environ.get(BASE_URL_ENV) or MULAN_BASE_URL
        get_data_home(home)
        _download_dataset(name, cache, base_url, timeout)
        folder = cache
        source = f"downloaded from {base_url} (SHA-256 checked)"

    xml = folder / f"{name}.xml"
    train = load_mulan(folder / f"{name}-train.arff", xml, as_frame=as_frame)
    test = load_mulan(folder / f"{name}-test.arff", xml, as_frame=as_frame)
    if return_X_y:
        return train.data, train.target, test.data, test.target
    return Bunch(
        X_train=train.data,
        Y_train=train.target,
        X_test=test.data,
        Y_test=test.target,
        feature_names=list(train.feature_names),
        target_names=list(train.target_names),
        label_names=list(train.target_names),
        DESCR=_describe(name, folder, train, test, source),
        data_dir=os.fspath(folder),
    )
