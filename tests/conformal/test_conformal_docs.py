"""The package docstring and the user guide's numbers of sksparsemax.conformal.

(Its docstrings and its API entry are checked with every subpackage's, in
``tests/test_docstrings.py`` and ``tests/test_docs.py``.)
"""

import importlib.util
from pathlib import Path


import sksparsemax
import sksparsemax.conformal as conformal

TESTS = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(
        "_conformal_" + name.replace("/", "_"), TESTS / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_top_level_lists_the_subpackage():
    assert "conformal" in sksparsemax._SUBMODULES
    assert sksparsemax.conformal is conformal
    assert ":mod:`sksparsemax.conformal`" in sksparsemax.__doc__


def test_user_guide_numbers_are_those_of_the_tests_and_the_benchmark():
    page = (TESTS.parent / "docs" / "user_guide" / "conformal.rst").read_text(encoding="utf-8")
    page = " ".join(page.split())  # the sentences, whatever their line breaks
    coverage_tests = _load("conformal/test_conformal_coverage")
    assert f"over {coverage_tests.N_SPLITS} random calibration/test splits" in page
    spec = importlib.util.spec_from_file_location(
        "_bench_conformal", TESTS.parent / "benchmarks" / "bench_conformal.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert f"over {bench.REPEATS} random calibration/test splits" in page
    assert len(bench.DATASETS) == len(bench.models(False)) == 3
    assert "three data sets and three models" in page
