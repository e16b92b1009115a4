"""``benchmarks/bench_wide_sparse.py`` (the issue's 10^4 x 10^6 problem) and its goal.

The script runs end to end on its quick problem, ``benchmarks/goals.py``
lists exactly the wide-problem fits that miss their goal, and the
Performance page's statements about the wide problem are borne out by the
committed report.
"""

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name[:-3], BENCH / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _load("bench_wide_sparse.py")


def test_quick_run_writes_its_report(bench, tmp_path):
    result = bench.main(["--quick", "--repeats", "1", "--write", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "wide_sparse.json").read_text())
    assert saved["rows"] == result["rows"]
    names = [r["model"] for r in saved["rows"]]
    assert names == [name for name, _ in bench.models(100)]
    assert saved["rows"][0]["ratio"] == 1.0
    n, d, _ = bench.SIZES["quick"]
    assert saved["problem"]["train"] == [int(0.8 * n), d]
    for row in saved["rows"] + saved["long_runs"]:
        assert row["time"] > 0 and 0.0 <= row["score"] <= 1.0
        # A fit that warned of max_iter ran all its iterations.
        assert not row["max_iter_hit"] or row["n_iter"] >= 100
    report = (tmp_path / "wide_sparse.md").read_text()
    assert all(name in report for name in names)
    assert all(r["model"] in report for r in saved["long_runs"])


def test_goals_list_the_wide_fits_that_miss(tmp_path, monkeypatch):
    """A capped fit, a slow one and a worse-scoring one are listed; a fast
    fit that scores above the reference is not."""
    goals = _load("goals.py")
    ref = dict(model="LogisticRegression (reference)", time=1.0, ratio=1.0, n_iter=16,
               max_iter_hit=False, score=0.2)
    rows = [ref,
            dict(ref, model="SparseSoftmaxClassifier(k=2)", ratio=0.5, n_iter=105,
                 max_iter_hit=True, score=0.7),
            dict(ref, model="SparseSoftmaxClassifier(k=5)", ratio=0.3, score=0.7),
            dict(ref, model="SparsemaxClassifier", ratio=0.9, score=0.5),
            dict(ref, model="EntmaxClassifier(alpha=1.5)", ratio=0.1, score=0.18)]
    wide = dict(header="test", problem=dict(train=[8, 1000], nnz=10, classes=3, max_iter=100,
                                            repeats=1), rows=rows, long_runs=[])
    (tmp_path / "wide_sparse.json").write_text(json.dumps(wide))
    (tmp_path / "estimators.json").write_text(json.dumps(
        {"tables": {}, "overhead": {}, "machine": {}}))
    (tmp_path / "transforms.json").write_text(json.dumps({"rows": [], "machine": {}}))
    monkeypatch.setattr(goals, "RESULTS", tmp_path)
    goals.main()
    report = (tmp_path / "performance_goals.md").read_text()
    listed = [line[2:] for line in report.splitlines() if line.startswith("- ")]
    problem = "the wide sparse problem (8 x 1000 CSR)"
    assert sorted(listed) == sorted([
        f"fit time of SparseSoftmaxClassifier(k=2) on {problem}: 0.50x, stopped at max_iter",
        f"fit time of SparsemaxClassifier on {problem}: 0.90x",
        f"fit time of EntmaxClassifier(alpha=1.5) on {problem}: 0.10x",
    ])
    assert "Wide sparse problem: test" in report


def test_performance_page_claims_on_the_wide_problem(bench):
    """The Performance page says: on the wide problem (8,000 training
    documents, a million features) the top-k model with k = 2 stops at
    max_iter in less time than LogisticRegression; with ten times the
    iterations the stall rule ends it a few tens of iterations later;
    LogisticRegression and the smooth losses end after a few iterations, at
    a lower test accuracy than the top-k model's; and LogisticRegression's
    model with a tol 100 times smaller scores within 0.01 of it."""
    page = " ".join((ROOT / "docs" / "performance.rst").read_text(encoding="utf-8").split())
    assert ("8,000 training documents, a million features), the top-k model with ``k = 2`` "
            "still stops at ``max_iter``, in less time than LogisticRegression; with ten times "
            "the iterations allowed, the stall rule ends its fit a few tens of iterations "
            "later. There LogisticRegression and the smooth losses end by the gradient "
            "criterion after a few iterations, at a lower test accuracy than the top-k "
            "model's, and LogisticRegression's fit is not cut short: its model, fitted with "
            "a ``tol`` 100 times smaller, scores within 0.01 of it.") in page
    saved = json.loads((BENCH / "results" / "wide_sparse.json").read_text())
    assert saved["problem"]["train"] == [8000, 1_000_000]
    max_iter = saved["problem"]["max_iter"]
    rows = {r["model"]: r for r in saved["rows"]}
    top_k = rows["SparseSoftmaxClassifier(k=2)"]
    assert top_k["max_iter_hit"] and top_k["ratio"] < 1.0
    long_run, tight = saved["long_runs"]
    assert long_run["model"] == f"SparseSoftmaxClassifier(k=2, max_iter={10 * max_iter})"
    assert not long_run["max_iter_hit"] and max_iter < long_run["n_iter"] <= max_iter + 50
    reference = rows["LogisticRegression (reference)"]
    smooth = [reference, rows["SparsemaxClassifier"], rows["EntmaxClassifier(alpha=1.5)"]]
    for row in smooth:
        assert not row["max_iter_hit"] and row["n_iter"] <= 20, row["model"]
        assert row["score"] < top_k["score"], row["model"]
    assert tight["model"] == "FenchelYoungClassifier(loss='softmax', tol=1e-06)"
    assert not tight["max_iter_hit"] and abs(tight["score"] - reference["score"]) <= 0.01
