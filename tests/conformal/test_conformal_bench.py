"""The conformal benchmark runs end to end (--smoke) and reports what it measured."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mapie")


def test_bench_conformal_smoke(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_conformal.py"), "--smoke", "--write",
         "--quiet", "--results-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=str(ROOT),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    md = (tmp_path / "conformal.md").read_text(encoding="utf-8")
    assert "## Findings" in md and "| emotions | logistic | sparsemax |" in md
    assert ".. list-table::" in (tmp_path / "conformal.rst").read_text(encoding="utf-8")
    df = pd.read_csv(tmp_path / "conformal.csv")
    assert set(df["method"]) == {"sparsemax", "entmax-1.5", "softmax (ours)", "MAPIE LAC",
                                 "MAPIE APS"}
    # our softmax score is MAPIE's LAC: the same sets, hence the same numbers
    ours = df[df["method"] == "softmax (ours)"].reset_index(drop=True)
    lac = df[df["method"] == "MAPIE LAC"].reset_index(drop=True)
    pd.testing.assert_series_equal(ours["coverage"], lac["coverage"])
    pd.testing.assert_series_equal(ours["size"], lac["size"])
    assert df.loc[df["method"].isin(["sparsemax", "entmax-1.5"]), "empty"].eq(0).all()


def test_committed_results_match_their_findings():
    """The committed report's numbers are those of its CSV (no hand-edited number)."""
    results = ROOT / "benchmarks" / "results"
    if not (results / "conformal.csv").exists():
        pytest.skip("no committed results")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_conformal as bench
    finally:
        sys.path.pop(0)
    df = pd.read_csv(results / "conformal.csv")
    md = (results / "conformal.md").read_text(encoding="utf-8")
    for coverage in sorted(df["coverage_target"].unique()):
        for line in bench.table(df, coverage)[2:]:
            assert line in md, line
