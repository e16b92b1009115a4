"""``benchmarks/bench_short_rows.py`` (the top-k mapping's two short-row kernels).

The script runs end to end on its quick shapes, and the Performance page's
statement about the two kernels is borne out by the committed report.
"""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_short_rows", BENCH / "bench_short_rows.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_run_writes_its_report(bench, tmp_path):
    result = bench.main(["--quick", "--rounds", "1", "--write", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "short_rows.json").read_text())
    assert saved["rows"] == result["rows"]
    expected = [(list(shape), k) for shape in bench.SHAPES["quick"] for k in bench.K_VALUES
                if k < shape[1]]
    assert [(r["shape"], r["k"]) for r in saved["rows"]] == expected
    for row in saved["rows"]:
        assert row["same_bits"] is True
        assert min(row["softmax_ms"], row["blocks_ms"], row["rows_ms"]) > 0
        assert row["rows_ratio"] == pytest.approx(row["rows_ms"] / row["softmax_ms"])
    from sksparsemax.transforms import _numba_columns

    uses = "blocks" if _numba_columns._COLUMNS_VECTORISED else "rows"
    assert saved["machine"]["mapping_uses"] == uses
    assert f"the mapping uses the {uses} kernel on this machine" in (
        tmp_path / "short_rows.md").read_text()


def test_performance_page_claim_on_the_short_row_kernels():
    """The page says that on a processor without AVX-512 the row kernel was
    the faster at every shape and k of the committed report, which must
    come from such a processor and show the same bits everywhere."""
    page = " ".join((ROOT / "docs" / "performance.rst").read_text(encoding="utf-8").split())
    assert ("On a processor without AVX-512 the row kernel was the faster one at every shape "
            "and k of ``benchmarks/bench_short_rows.py``") in page
    saved = json.loads((BENCH / "results" / "short_rows.json").read_text())
    assert saved["machine"]["avx512"] is False and saved["machine"]["mapping_uses"] == "rows"
    assert len(saved["rows"]) >= 6
    for row in saved["rows"]:
        assert row["same_bits"] is True
        assert row["rows_ms"] < row["blocks_ms"]
