"""Fixtures of the datasets tests: a folder of the four MULAN data sets.

The folder is found the way :func:`sksparsemax.datasets.fetch_mulan` finds its
data, without downloading: in the data home (``$SKSPARSEMAX_DATA`` or
``~/sksparsemax_data``), either ``<data_home>/mulan/<name>/`` (what
``fetch_mulan`` downloads) or ``<data_home>/<name>/``, then, as before, in
``../shared/data/multilabel`` beside the checkout. The tests need each data
set's whole MULAN folder (``<name>.arff`` too, where MULAN ships it: what
``fetch_mulan`` downloads) and the table of ``README.md``; a folder without the
README (a ``fetch_mulan`` cache) gets the table below, the counts of MULAN's
standard split (the same as ``../shared/data/multilabel/README.md``).
"""

import os
import shutil
from pathlib import Path

import pytest

from sksparsemax.datasets._fetch import MULAN_DATASETS, _data_home_path, _find_local

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
MULAN_DIR = SHARED / "data" / "multilabel"
DATASETS = ("scene", "emotions", "yeast", "medical")

README_TABLE = """\
| dataset | train / test | features | labels | label cardinality (train) |
|---|---|---|---|---|
| scene | 1211 / 1196 | 294 | 6 | 1.06 |
| emotions | 391 / 202 | 72 | 6 | 1.81 |
| yeast | 1500 / 917 | 103 | 14 | 4.23 |
| medical | 333 / 645 | 1449 (sparse) | 45 | 1.26 |
"""

SKIP_MESSAGE = (
    "MULAN data not found (looked in {places}): run "
    "`python -c \"from sksparsemax.datasets import fetch_mulan; "
    "[fetch_mulan(n) for n in ('scene', 'emotions', 'yeast', 'medical')]\"` "
    "or set SKSPARSEMAX_DATA to a folder with the MULAN files "
    "(<name>/<name>.xml, <name>-train.arff, <name>-test.arff)"
)


def _complete(folder, name):
    return all((folder / f).is_file() for f in MULAN_DATASETS[name])


def find_mulan_folders():
    """{name: folder} of the complete local copies, or None if one is missing.

    The data home first (through ``fetch_mulan``'s own lookup), then
    ``../shared/data/multilabel``.
    """
    found = {}
    for name in DATASETS:
        candidates = [_find_local(name), _find_local(name, MULAN_DIR)]
        folders = [f for f in candidates if f is not None and _complete(f, name)]
        if not folders:
            return None
        found[name] = folders[0]
    return found


def _places():
    home = _data_home_path()
    return ", ".join(str(p) for p in (home / "mulan", home, MULAN_DIR))


@pytest.fixture(scope="session")
def mulan_dir(tmp_path_factory):
    """A folder with ``<name>/`` for the four data sets and ``README.md``.

    Skips the test, saying how to get the data, when a data set is missing.
    """
    found = find_mulan_folders()
    if found is None:
        pytest.skip(SKIP_MESSAGE.format(places=_places()))
    parents = {folder.parent for folder in found.values()}
    if len(parents) == 1:
        (root,) = parents
        if (root / "README.md").is_file() and all(root / n == f for n, f in found.items()):
            return root
    # the data sets in several places, or no README: a folder of links to them
    root = tmp_path_factory.mktemp("mulan")
    for name, folder in found.items():
        try:
            os.symlink(folder, root / name, target_is_directory=True)
        except OSError:  # no symbolic links (Windows without the privilege)
            shutil.copytree(folder, root / name)
    readme = next((f.parent / "README.md" for f in found.values()
                   if (f.parent / "README.md").is_file()), None)
    (root / "README.md").write_text(
        readme.read_text(encoding="utf-8") if readme is not None else README_TABLE,
        encoding="utf-8",
    )
    return root
