"""The main job (python -m sksparsemax): built-in run, user data, bad input."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sksparsemax._cli import _jensen_shannon, main


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """The default report folder goes to the test's own folder."""
    monkeypatch.chdir(tmp_path)


def _run_job(folder, *extra):
    out = folder / "table.json"
    result = subprocess.run(
        [sys.executable, "-m", "sksparsemax", "--output", str(out),
         "--report-dir", str(folder / "report"), *extra],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    results = json.loads((folder / "report" / "results.json").read_text(encoding="utf-8"))
    return result, json.loads(out.read_text()), results


@pytest.fixture(scope="module")
def quick_job(tmp_path_factory):
    return _run_job(tmp_path_factory.mktemp("quick"), "--quick")


@pytest.fixture(scope="module")
def full_job(tmp_path_factory):
    return _run_job(tmp_path_factory.mktemp("full"))


def test_module_runs_on_builtin_data_and_writes_the_table(quick_job):
    result, records, _ = quick_job
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
    # The printed report and the progress lines go to their own streams.
    assert "SparsemaxClassifier" in result.stdout
    assert "[1/3]" in result.stderr and "[1/3]" not in result.stdout


# ------------------------------------------------------------------ the report


@pytest.mark.parametrize("job", ["quick_job", "full_job"])
def test_report_is_at_most_100_characters_wide(request, job):
    result, _, _ = request.getfixturevalue(job)
    lines = result.stdout.splitlines()
    assert len(lines) > 40
    too_wide = [line for line in lines if len(line) > 100]
    assert not too_wide, too_wide


def _table_headers(stdout):
    return [re.split(r"\s{2,}", line.strip()) for line in stdout.splitlines()
            if line.startswith("model  ")]


def test_every_score_column_says_which_way_is_better(full_job):
    result, _, results = full_job
    headers = _table_headers(result.stdout)
    assert len(headers) == len(results["tasks"]) == 3
    for header in headers:
        scores = [h for h in header if h not in ("model", "mean support")]
        assert len(scores) == 3, header
        assert all(h.endswith(("↑", "↓")) for h in scores), header
    assert "Jensen-Shannon divergence" in result.stdout
    assert "mean support: average number" in result.stdout
    assert "held-out 30%" in result.stdout
    # No blank cell: every table row has as many cells as its header.
    for line in result.stdout.splitlines():
        if line.startswith(("LogisticRegression ", "Sparsemax")):
            assert len(re.split(r"\s{2,}", line.strip())) == 5, line


_CLASSIFICATION = re.compile(
    r"^(?P<model>.+?): (?P<score>accuracy|micro F1) (?P<a>[\d.]+)% vs (?P<base>.+?) "
    r"(?P<b>[\d.]+)% \((?P<d>[+−][\d.]+) points\); (?P<s>[\d.]+) of (?P<k>\d+) "
    r"(classes|labels) nonzero per prediction on average \((?P=base): (?P<bs>[\d.]+)\)\.$"
)
_PROPORTIONS = re.compile(
    r"^sparsemax loss: JSD (?P<a>[\d.]+) vs softmax loss (?P<b>[\d.]+) \((?P<p>\d+)% "
    r"(?P<dir>lower|higher)\), MSE (?P<c>[\d.]+) vs (?P<d>[\d.]+); (?P<s>[\d.]+) of 10 "
    r"labels nonzero on average \(softmax loss: (?P<t>[\d.]+)\)\.$"
)
_CURVE = re.compile(r"the sparsemax loss has the lower JSD at (\d+) of (\d+) lengths")


def _check_classification(task, line):
    m = _CLASSIFICATION.match(line)
    assert m, line
    rows = {r["model"]: r for r in task["rows"]}
    key = "accuracy" if m["score"] == "accuracy" else "micro_f1"
    row, base = rows[m["model"]], rows[m["base"]]
    assert m["base"] == task["baseline"]
    assert float(m["a"]) == round(100 * row[key], 1)
    assert float(m["b"]) == round(100 * base[key], 1)
    assert float(m["d"].replace("−", "-")) == pytest.approx(float(m["a"]) - float(m["b"]))
    assert float(m["s"]) == round(row["mean_support"], 2)
    assert float(m["bs"]) == round(base["mean_support"], 2)
    assert int(m["k"]) == task["n_outputs"]
    return m["model"]


def _check_proportions(task, lines):
    m = _PROPORTIONS.match(lines[0])
    assert m, lines[0]
    rows = {r["model"].split("'")[1]: r for r in task["rows"]}
    sp, so = rows["sparsemax"], rows["softmax"]
    a, b = round(sp["jsd"], 4), round(so["jsd"], 4)
    assert (float(m["a"]), float(m["b"])) == (a, b)
    assert int(m["p"]) == round(abs(100 * (1 - a / b)))
    assert m["dir"] == ("lower" if a < b else "higher")
    assert (float(m["c"]), float(m["d"])) == (round(sp["mse"], 5), round(so["mse"], 5))
    assert float(m["s"]) == round(sp["mean_support"], 2)
    assert float(m["t"]) == round(so["mean_support"], 2)
    curve = _CURVE.search(lines[1])
    jsd = {}
    for point in task["curve"]:
        jsd.setdefault(point["document_length"], {})[point["loss"]] = point["jsd"]
    wins = sum(v["sparsemax"] < v["softmax"] for v in jsd.values())
    assert (int(curve[1]), int(curve[2])) == (wins, len(jsd))


@pytest.mark.parametrize("job", ["quick_job", "full_job"])
def test_closing_lines_are_the_numbers_of_results_json(request, job):
    result, _, results = request.getfixturevalue(job)
    printed = " ".join(result.stdout.split())
    for task in results["tasks"]:
        assert task["closing"]
        for line in task["closing"]:
            assert " ".join(line.split()) in printed
        if task["key"] == "label proportions":
            _check_proportions(task, task["closing"])
        else:
            named = {_check_classification(task, line) for line in task["closing"]}
            assert named == {r["model"] for r in task["rows"]} - {task["baseline"]}


def test_the_report_folder_holds_the_report_and_the_figure(full_job, tmp_path):
    result, _, results = full_job
    lines = result.stdout.splitlines()
    assert not any(line.startswith("No figure: matplotlib failed") for line in lines), lines[-3:]
    written = [line for line in lines if line.startswith("Written to ")]
    assert written, lines[-3:]
    folder = Path(written[-1].split("Written to ")[1].split(":")[0])
    markdown = (folder / "report.md").read_text(encoding="utf-8")
    assert markdown.count("| model |") == 3
    for task in results["tasks"]:
        assert task["title"] in markdown
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "pip install matplotlib" in result.stdout
    else:
        assert (folder / "report.png").stat().st_size > 10_000
        assert "report.png" in markdown


def test_quick_is_smaller_and_warns_nothing(quick_job, full_job):
    quick, full = quick_job[2], full_job[2]
    assert quick["settings"]["quick"] and not full["settings"]["quick"]
    assert quick["settings"]["max_iter"] < full["settings"]["max_iter"]
    for q, f in zip(quick["tasks"], full["tasks"]):
        assert q["key"] == f["key"]
        assert q["sizes"]["n_train"] <= f["sizes"]["n_train"]
    assert sum(t["sizes"]["n_train"] for t in quick["tasks"]) < 0.7 * sum(
        t["sizes"]["n_train"] for t in full["tasks"])
    assert len(quick["tasks"][2]["curve"]) < len(full["tasks"][2]["curve"])
    assert "Warning" not in quick_job[0].stderr
    assert "quick run" in quick_job[0].stdout


def test_without_matplotlib_the_report_says_how_to_get_the_figure(tmp_path, capsys,
                                                                  monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it fails
    path = tmp_path / "d.csv"
    _write_csv(path)
    assert main(["--data", str(path), "--labels", "species", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "pip install matplotlib" in out
    assert "sksparsemax-report/" in out.splitlines()[-2]
    folder = tmp_path / "sksparsemax-report"
    assert (folder / "report.md").is_file() and (folder / "results.json").is_file()
    assert not (folder / "report.png").exists()


def test_a_cold_numba_cache_is_announced(tmp_path, capsys, monkeypatch):
    import sksparsemax._cli as cli

    monkeypatch.setattr(cli, "_numba_cache_cold", lambda: True)
    path = tmp_path / "d.csv"
    _write_csv(path)
    assert main(["--data", str(path), "--labels", "species", "--quick"]) == 0
    err = capsys.readouterr().err
    assert "compiling the numba kernels (first run only" in err
    assert "not counted in the fit times" in err


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


def _three_label_arff(path, xml=False):
    rng = np.random.default_rng(2)
    lines = ["@relation toy", "@attribute f1 numeric", "@attribute flag {0,1}",
             "@attribute f2 numeric"]
    lines += [f"@attribute lab{j} {{0,1}}" for j in (1, 2, 3)] + ["@data"]
    for _ in range(90):
        f1, f2 = rng.standard_normal(2)
        labels = [int(f1 > 0), int(f2 > 0 or f1 <= 0), int(f1 + f2 > 0)]
        lines.append(f"{f1},{int(f2 > 1)},{f2}," + ",".join(map(str, labels)))
    path.write_text("\n".join(lines) + "\n")
    if xml:
        labels = "".join(f'<label name="lab{j}"/>' for j in (1, 2, 3))
        path.with_suffix(".xml").write_text(
            f'<?xml version="1.0"?><labels xmlns="http://mulan.sourceforge.net/labels">'
            f"{labels}</labels>\n")
    return path


@pytest.mark.parametrize("xml", [False, True])
@pytest.mark.parametrize("labels, kind", [("lab1", "multi-class"), ("lab2,lab3", "multi-label")])
def test_labels_drop_the_other_label_columns_of_a_mulan_file(tmp_path, capsys, xml, labels,
                                                             kind):
    path = _three_label_arff(tmp_path / "toy.arff", xml=xml)
    folder = tmp_path / "rep"
    assert main(["--data", str(path), "--labels", labels, "--quick",
                 "--report-dir", str(folder)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    others = [n for n in ("lab1", "lab2", "lab3") if n not in labels.split(",")]
    # Without the XML file the labels are the {0,1} attributes that end the list
    # (MULAN's layout): the {0,1} feature "flag" stays a feature either way.
    assert (f"dropped the {len(others)} other label column(s) of toy.arff "
            f"({', '.join(others)})") in out
    (task,) = json.loads((folder / "results.json").read_text(encoding="utf-8"))["tasks"]
    assert task["key"] == kind
    n_features = 3  # f1, flag, f2
    assert task["sizes"]["n_features"] == n_features
    assert {r["n_features_in"] for r in task["rows"]} == {n_features}


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
        (["--report-dir", "{txt}"], "is not a folder"),
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
