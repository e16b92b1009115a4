"""The main job (python -m sksparsemax): built-in run, user data, bad input."""

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sksparsemax._cli import _jensen_shannon, main


def test_module_runs_on_builtin_data_and_writes_the_table(tmp_path):
    out = tmp_path / "table.json"
    result = subprocess.run(
        [sys.executable, "-m", "sksparsemax", "--quick", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    records = json.loads(out.read_text())
    models = {(r["task"], r["model"]) for r in records}
    for expected in [
        ("multi-class", "LogisticRegression"),
        ("multi-class", "SparsemaxClassifier"),
        ("multi-class", "SparseSoftmaxClassifier(k=3)"),
        ("multi-class", "EntmaxClassifier(alpha=1.5)"),
        ("multi-label", "SparsemaxMultiLabel"),
        ("multi-label", "OneVsRest(LogisticRegression)"),
        ("label proportions", "SparsemaxMultiLabel(loss='sparsemax')"),
        ("label proportions", "SparsemaxMultiLabel(loss='softmax')"),
    ]:
        assert expected in models
    by_model = {(r["task"], r["model"]): r for r in records}
    # Softmax-type models put mass on every class; sparse ones do not.
    assert by_model[("multi-class", "LogisticRegression")]["mean_support"] == 10
    assert by_model[("multi-class", "SparsemaxClassifier")]["mean_support"] < 10
    assert by_model[("multi-class", "SparseSoftmaxClassifier(k=3)")]["mean_support"] <= 3
    # Digits is easy: every model is far above chance (0.1).
    for r in records:
        if r["task"] == "multi-class":
            assert r["accuracy"] > 0.85
    # The printed table and the progress lines go to their own streams.
    assert "SparsemaxClassifier" in result.stdout
    assert "[1/3]" in result.stderr and "[1/3]" not in result.stdout


def _write_csv(path, n=120, seed=0, multilabel=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    if multilabel:
        frame["l1"] = (X[:, 0] > 0).astype(int)
        frame["l2"] = (X[:, 1] > 0).astype(int)
        frame["l3"] = ((X[:, 0] <= 0) & (X[:, 1] <= 0)).astype(int)
    else:
        frame["species"] = np.where(X[:, 0] > 0.3, "x", np.where(X[:, 1] > 0, "y", "z"))
    frame.to_csv(path, index=False)


def test_csv_multiclass(tmp_path, capsys):
    path = tmp_path / "d.csv"
    _write_csv(path)
    out = tmp_path / "t.csv"
    assert main(["--data", str(path), "--labels", "species", "--quick", "--output", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["task"]) == {"multi-class"}
    assert len(table) == 4
    assert (table["accuracy"] > 0.6).all()


def test_csv_multilabel(tmp_path):
    path = tmp_path / "d.csv"
    _write_csv(path, multilabel=True)
    out = tmp_path / "t.json"
    assert main(["--data", str(path), "--labels", "l1,l2,l3", "--quick", "--output", str(out)]) == 0
    records = json.loads(out.read_text())
    assert {r["task"] for r in records} == {"multi-label"}
    assert all(0 <= r["micro_f1"] <= 1 for r in records)


@pytest.mark.parametrize("threads", [0, 1, 2])
def test_threads_limit_the_fits(tmp_path, monkeypatch, threads):
    from threadpoolctl import threadpool_info

    import sksparsemax._cli as cli

    seen = []
    fit = cli._timed_fit

    def spy(model, X, Y):
        seen.append({p["num_threads"] for p in threadpool_info()})
        return fit(model, X, Y)

    monkeypatch.setattr(cli, "_timed_fit", spy)
    path = tmp_path / "d.csv"
    _write_csv(path)
    before = {p["num_threads"] for p in threadpool_info()}
    assert main(["--data", str(path), "--labels", "species", "--quick",
                 "--threads", str(threads)]) == 0
    assert len(seen) == 4
    if threads == 0:
        assert all(s == before for s in seen), (seen, before)
    else:
        assert all(max(s) <= threads for s in seen), seen
    assert {p["num_threads"] for p in threadpool_info()} == before  # restored


def test_arff_data(tmp_path):
    rng = np.random.default_rng(1)
    lines = ["@relation toy", "@attribute f1 numeric", "@attribute f2 numeric"]
    lines += ["@attribute lab1 {0,1}", "@attribute lab2 {0,1}", "@data"]
    for _ in range(80):
        f1, f2 = rng.standard_normal(2)
        lines.append(f"{f1},{f2},{int(f1 > 0)},{int(f2 > 0 or f1 <= 0)}")
    path = tmp_path / "toy.arff"
    path.write_text("\n".join(lines) + "\n")
    assert main(["--data", str(path), "--labels", "lab1,lab2", "--quick"]) == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--data", "does/not/exist.arff"], "no such file"),
        (["--data", "{csv}"], "needs --labels"),
        (["--data", "{csv}", "--labels", "nope"], "no column named 'nope'"),
        (["--data", "{txt}"], "unknown file type"),
        (["--output", "table.xlsx"], "use a .csv or .json"),
        (["--data", "{bad_arff}"], "cannot load"),
        (["--threads", "-1"], "--threads -1"),
    ],
)
def test_bad_input_gets_one_clear_line(tmp_path, capsys, argv, message):
    csv = tmp_path / "d.csv"
    _write_csv(csv)
    txt = tmp_path / "d.txt"
    txt.write_text("1,2,3\n")
    bad_arff = tmp_path / "bad.arff"
    bad_arff.write_text("@relation x\n@attribute a numeric\n@data\n1,2\n")
    argv = [a.format(csv=csv, txt=txt, bad_arff=bad_arff) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("sksparsemax: error:")
    assert message in err[0]


def test_jensen_shannon_matches_scipy():
    from scipy.spatial.distance import jensenshannon

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(5), size=7)
    Q = rng.dirichlet(np.ones(5), size=7)
    Q[:, 0] = 0
    Q /= Q.sum(axis=1, keepdims=True)
    expected = np.mean([jensenshannon(p, q) ** 2 for p, q in zip(P, Q)])
    assert _jensen_shannon(P, Q) == pytest.approx(expected, rel=1e-10)


# ------------------------------------------------------------------ data errors at fit time


def _arff(path, rows, n_features=2):
    lines = ["@relation toy"] + [f"@attribute f{j} numeric" for j in range(n_features)]
    lines += ["@attribute lab1 {0,1}", "@attribute lab2 {0,1}", "@data"] + rows
    path.write_text("\n".join(lines) + "\n")
    return path


def _csv_with(tmp_path, edit, n=120):
    path = tmp_path / "d.csv"
    _write_csv(path, n=n)
    frame = pd.read_csv(path)
    edit(frame)
    frame.to_csv(path, index=False)
    return path


def _set(row, col, value):
    def edit(frame):
        frame[col] = frame[col].astype(object) if isinstance(value, str) else frame[col]
        frame.loc[row, col] = value
    return edit


def _rng_rows(n, labelled=True, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        f1, f2 = rng.standard_normal(2)
        labels = (int(f1 > 0), int(f2 > 0 or f1 <= 0)) if labelled else (0, 0)
        rows.append(f"{f1},{f2},{labels[0]},{labels[1]}")
    return rows


DATA_ERRORS = {
    "nan feature": (lambda t: _csv_with(t, _set(7, "b", np.nan)), "species",
                    r"d\.csv: 1 feature value.*missing.*line 9, column 'b'"),
    "inf feature": (lambda t: _csv_with(t, _set(3, "a", np.inf)), "species",
                    r"d\.csv: .*infinite.*line 5, column 'a'"),
    "nan label": (lambda t: _csv_with(t, _set(10, "species", np.nan)), "species",
                  r"d\.csv: label column 'species' has 1 missing.*line 12"),
    "3 rows": (lambda t: _csv_with(t, lambda f: None, n=3), "species",
               r"d\.csv: 3 row\(s\) are too few for a 70/30 train/test split"),
    "a class of one": (lambda t: _csv_with(t, _set(0, "species", "lonely")), "species",
                       r"d\.csv: cannot make a stratified 70/30 train/test split of 120 rows"),
    "arff without labels": (lambda t: _arff(t / "toy.arff", _rng_rows(40, labelled=False)),
                            "lab1,lab2", r"toy\.arff: no row has a label"),
    "2-row arff": (lambda t: _arff(t / "toy.arff", _rng_rows(2)), "lab1,lab2",
                   r"toy\.arff: 2 row\(s\) are too few for a 70/30 train/test split"),
    "missing arff feature": (lambda t: _arff(t / "toy.arff", ["?,1,1,0"] + _rng_rows(40)),
                             "lab1,lab2", r"toy\.arff: .*missing.*data row 1, column 'f0'"),
    "overflowing arff number": (lambda t: _arff(t / "toy.arff", _rng_rows(30) + ["1,1e400,1,0"]),
                                "lab1,lab2",
                                r"cannot load toy\.arff: .*line 37: value '1e400' of numeric "
                                r"attribute 'f1' is not a finite number"),
}


@pytest.mark.parametrize("case", list(DATA_ERRORS))
def test_data_errors_are_one_line_naming_the_file(tmp_path, capsys, case):
    make, labels, pattern = DATA_ERRORS[case]
    path = make(tmp_path)
    assert main(["--data", str(path), "--labels", labels, "--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("sksparsemax: error:")
    assert re.search(pattern, err[0]), err[0]


def test_module_exits_2_without_a_traceback_on_bad_data(tmp_path):
    path = _csv_with(tmp_path, _set(7, "b", np.nan))
    result = subprocess.run(
        [sys.executable, "-m", "sksparsemax", "--data", str(path), "--labels", "species",
         "--quick"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "d.csv" in result.stderr


@pytest.mark.parametrize("where, message", [
    ("no/such/folder/t.csv", "no such folder"),
    ("{file}/t.csv", "not a folder"),
    ("{folder}.json", "it is a folder"),
])
def test_unwritable_output_is_refused_before_the_job(tmp_path, capsys, monkeypatch, where, message):
    import sksparsemax._cli as cli

    def no_job():
        raise AssertionError("the job ran")

    monkeypatch.setattr(cli, "_warm_up", no_job)
    (tmp_path / "plain.txt").write_text("x")
    (tmp_path / "sub.json").mkdir()
    target = where.format(file=tmp_path / "plain.txt", folder=tmp_path / "sub")
    if not target.startswith(str(tmp_path)):
        target = str(tmp_path / target)
    assert main(["--quick", "--output", target]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("sksparsemax: error: cannot write --output")
    assert message in err[0]
