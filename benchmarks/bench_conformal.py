"""Conformal prediction sets: sparsemax / entmax supports against MAPIE's LAC and APS.

For each data set a base model is fitted once on a training part; the rest is
split at random, ``--repeats`` times, into a calibration and a test half. On
each split, every method calibrates on the *same* prefit model and the same
calibration half, and predicts sets for the same test half:

* ``sparsemax``, ``entmax-1.5``, ``softmax (ours)``:
  :class:`sksparsemax.conformal.SparseConformalClassifier` with ``cv="prefit"``
  (scores: the model's ``decision_function``; for ``softmax (ours)`` the log of
  ``predict_proba``, MAPIE's input, so that its sets must be MAPIE LAC's);
* ``MAPIE LAC``, ``MAPIE APS``: ``mapie.classification.SplitConformalClassifier(
  model, confidence_level=..., conformity_score="lac" | "aps", prefit=True)``
  (``predict_proba``; APS with MAPIE's default ``include_last_label=True``, the
  deterministic, conservative variant).

Reported per (data set, model, method), averaged over the splits: coverage
(mean and standard deviation over splits), mean set size, share of empty
sets, set-size-stratified coverage (the coverage of the test points whose set
has 1, 2 or at least 3 labels, pooled over the splits; "worst": the smallest
of them over the groups holding at least 1% of the points) and the
calibration time (median over splits of the ``fit`` / ``conformalize`` call,
which includes the model's predictions on the calibration half). Data:
``load_digits`` (10 classes), the bundled *emotions* data as multi-class (the
first label of each song, 6 classes) and ``make_classification`` (5 classes,
10% label noise). Models: logistic regression (scikit-learn), a histogram
gradient-boosting classifier (non-linear) and ``SparsemaxClassifier``, the
linear ones after ``StandardScaler``. BLAS and OpenMP run on one thread.

Usage::

    python benchmarks/bench_conformal.py --write     # about a minute
    python benchmarks/bench_conformal.py --quick     # 5 splits
    python benchmarks/bench_conformal.py --smoke --write --results-dir /tmp/x

``--write`` writes ``benchmarks/results/conformal.md`` (the report),
``conformal.rst`` (the same, for the user guide) and ``conformal.csv`` (one row
per data set, model, target and method).
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import sklearn  # noqa: E402
from sklearn.datasets import load_digits, make_classification  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sksparsemax.conformal import SparseConformalClassifier  # noqa: E402
from sksparsemax.datasets import load_emotions  # noqa: E402
from sksparsemax.linear_model import SparsemaxClassifier  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("sparsemax", "entmax-1.5", "softmax (ours)", "MAPIE LAC", "MAPIE APS")
# method -> (mapping, alpha, response_method). Our softmax (LAC) score reads
# predict_proba, as MAPIE does: it must give MAPIE LAC's sets (a check).
OURS = {"sparsemax": ("sparsemax", 2.0, "auto"), "entmax-1.5": ("entmax", 1.5, "auto"),
        "softmax (ours)": ("softmax", 1.5, "predict_proba")}
DATASETS = ("digits", "emotions", "synthetic")
REPEATS = 20  # random calibration/test splits per (data set, model)
SIZE_GROUPS = ("1", "2", "3plus")  # set sizes 1, 2 and >= 3


def load(name, smoke):
    """(X, y, number of training samples)."""
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return X, y, 600
    if name == "emotions":
        X, Y = load_emotions(subset="train", return_X_y=True)
        X2, Y2 = load_emotions(subset="test", return_X_y=True)
        return np.vstack([X, X2]), np.argmax(np.vstack([Y, Y2]), axis=1), 250
    n = 1500 if smoke else 4000
    X, y = make_classification(n, n_features=20, n_informative=8, n_classes=5, flip_y=0.1,
                               random_state=0)
    return X, y, n // 4


def models(smoke):
    return {
        "logistic": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "hist-gb": HistGradientBoostingClassifier(max_iter=20 if smoke else 60,
                                                  early_stopping=False, random_state=0),
        "sparsemax-clf": make_pipeline(StandardScaler(), SparsemaxClassifier()),
    }


def calibrate(method, model, coverage, X_cal, y_cal):
    """(predict_set, seconds, threshold); predict_set maps X to a bool set matrix."""
    if method in OURS:
        mapping, alpha, response = OURS[method]
        clf = SparseConformalClassifier(model, mapping=mapping, alpha=alpha, coverage=coverage,
                                        cv="prefit", response_method=response)
        start = time.perf_counter()
        clf.fit(X_cal, y_cal)
        return clf.predict_set, time.perf_counter() - start, clf.temperature_
    from mapie.classification import SplitConformalClassifier

    score = "lac" if method == "MAPIE LAC" else "aps"
    clf = SplitConformalClassifier(model, confidence_level=coverage, conformity_score=score,
                                   prefit=True)
    start = time.perf_counter()
    clf.conformalize(X_cal, y_cal)
    seconds = time.perf_counter() - start
    return (lambda X: clf.predict_set(X)[1][:, :, 0].astype(bool)), seconds, np.nan


def split_metrics(sets, y):
    size = sets.sum(axis=1)
    covered = sets[np.arange(len(y)), y]
    row = {"coverage": covered.mean(), "size": size.mean(), "empty": np.mean(size == 0)}
    for name, mask in zip(SIZE_GROUPS, (size == 1, size == 2, size >= 3)):
        row[f"n_{name}"], row[f"hit_{name}"] = int(mask.sum()), int(covered[mask].sum())
    return row


def run_setting(data, model_name, model, X, y, n_train, coverages, repeats, seed):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    train, pool = perm[:n_train], perm[n_train:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the base models
        model.fit(X[train], y[train])
    rows = []
    for rep in range(repeats):
        order = rng.permutation(pool)
        cal, test = order[: len(order) // 2], order[len(order) // 2 :]
        for coverage in coverages:
            for method in METHODS:
                predict_set, seconds, T = calibrate(method, model, coverage, X[cal], y[cal])
                row = split_metrics(predict_set(X[test]), y[test])
                rows.append(dict(data=data, model=model_name, coverage_target=coverage,
                                 method=method, split=rep, n_cal=len(cal), n_test=len(test),
                                 calib_ms=1e3 * seconds, threshold=T, **row))
    return rows


def summarise(df):
    """One row per (data, model, target, method)."""
    keys = ["data", "model", "coverage_target", "method"]
    g = df.groupby(keys, sort=False)
    out = g.agg(coverage=("coverage", "mean"), coverage_sd=("coverage", "std"),
                size=("size", "mean"), empty=("empty", "mean"), calib_ms=("calib_ms", "median"),
                zero_threshold=("threshold", lambda t: float(np.mean(t == 0))),
                n_cal=("n_cal", "first"), splits=("split", "nunique")).reset_index()
    total = g[[f"n_{s}" for s in SIZE_GROUPS] + [f"hit_{s}" for s in SIZE_GROUPS]].sum()
    total = total.reset_index(drop=True)
    n_all = sum(total[f"n_{s}"] for s in SIZE_GROUPS)
    worst = np.full(len(out), np.inf)
    for s in SIZE_GROUPS:
        with np.errstate(invalid="ignore", divide="ignore"):
            cov = total[f"hit_{s}"] / total[f"n_{s}"]
        out[f"cov_size_{s}"] = cov
        big = total[f"n_{s}"] >= 0.01 * n_all
        worst = np.where(big, np.minimum(worst, cov), worst)
    out["cov_worst_size"] = worst
    return out


def _fmt(x, digits=3):
    return "-" if not np.isfinite(x) else f"{x:.{digits}f}"


def table(summary, coverage):
    lines = ["| data | model | method | coverage (sd) | mean size | empty | cov. size 1 | "
             "cov. size 2 | cov. size >=3 | worst size | calib. ms |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in summary[summary["coverage_target"] == coverage].itertuples():
        lines.append(
            f"| {r.data} | {r.model} | {r.method} | {_fmt(r.coverage)} ({_fmt(r.coverage_sd)}) | "
            f"{_fmt(r.size, 2)} | {100 * r.empty:.1f}% | {_fmt(r.cov_size_1)} | "
            f"{_fmt(r.cov_size_2)} | {_fmt(r.cov_size_3plus)} | "
            f"{_fmt(r.cov_worst_size)} | {r.calib_ms:.1f} |"
        )
    return lines


def findings(summary, df):
    """Sentences computed from the numbers (what the tables show)."""
    out = []
    for coverage in sorted(summary["coverage_target"].unique()):
        s = summary[summary["coverage_target"] == coverage]
        piv = s.pivot_table(index=["data", "model"], columns="method", values="size")
        cov = s.pivot_table(index=["data", "model"], columns="method", values="coverage")
        worst = s.pivot_table(index=["data", "model"], columns="method", values="cov_worst_size")
        n = len(piv)
        lo = s.groupby("method")["coverage"].min()
        out.append(f"- **Coverage {coverage}**: over the {n} (data set, model) pairs the lowest "
                   "mean coverage of each method is "
                   + ", ".join(f"{m} {lo[m]:.3f}" for m in METHODS) + ".")
        sd = s.set_index(["data", "model", "method"])
        short = sd["coverage"] < coverage - 3 * sd["coverage_sd"] / np.sqrt(sd["splits"])
        below = sd[short]
        out.append("  - Below the target by more than 3 standard errors: "
                   + ("none." if below.empty else
                      ", ".join(f"{m} on {d} / {mo} ({r.coverage:.3f})"
                                for (d, mo, m), r in below.iterrows()) + "."))
        valid = ~short.unstack("method").reindex(piv.index)
        for ours, other in (("sparsemax", "MAPIE APS"), ("sparsemax", "MAPIE LAC"),
                            ("entmax-1.5", "MAPIE APS")):
            both = valid[ours] & valid[other]
            ratio = (piv[ours] / piv[other])[both]
            out.append(
                f"  - Mean set size, {ours} / {other}, over the {int(both.sum())} pairs where neither "
                f"is below the target by 3 standard errors: smaller in {int((ratio < 1).sum())}, ratio median "
                f"{ratio.median():.2f} (range {ratio.min():.2f}-{ratio.max():.2f})."
            )
        gap = worst["sparsemax"] - worst["MAPIE APS"]
        out.append(
            f"  - Worst set-size-stratified coverage: sparsemax median {worst['sparsemax'].median():.3f}, "
            f"MAPIE APS {worst['MAPIE APS'].median():.3f}, MAPIE LAC {worst['MAPIE LAC'].median():.3f} "
            f"(sparsemax above APS in {int((gap > 0).sum())} of {n} pairs)."
        )
        zero = s[(s["method"] == "sparsemax") & (s["zero_threshold"] == 1)]
        lac_empty = s[s["method"] == "MAPIE LAC"].set_index(["data", "model"])["empty"]
        if len(zero):
            out.append(
                "  - Sparsemax threshold 0 on every split (the tie of the top label, whose "
                "score is exactly 0: the model's accuracy exceeds the target) on "
                + ", ".join(f"{r.data} / {r.model}" for r in zero.itertuples())
                + ": every set is the top label, and the coverage is the accuracy ("
                + ", ".join(f"{r.coverage:.3f}" for r in zero.itertuples())
                + "), above the target; MAPIE LAC comes closer to the target there by leaving "
                + ", ".join(f"{100 * lac_empty[(r.data, r.model)]:.1f}%" for r in zero.itertuples())
                + " of the sets empty."
            )
        empty = s.set_index("method")["empty"]
        out.append(f"  - Empty sets: MAPIE LAC up to {100 * empty.loc['MAPIE LAC'].max():.1f}% of the "
                   f"test points; sparsemax and entmax never (max "
                   f"{100 * max(empty.loc['sparsemax'].max(), empty.loc['entmax-1.5'].max()):.1f}%).")
        diff = (cov["softmax (ours)"] - cov["MAPIE LAC"]).abs().max()
        out.append(f"  - Our softmax score against MAPIE LAC: largest coverage difference {diff:.2g} "
                   "(the same sets: same score, same order statistic).")
    t = df.groupby("method")["calib_ms"].median()
    out.append(f"- **Calibration time** (median over all splits): sparsemax {t['sparsemax']:.1f} ms, "
               f"entmax-1.5 {t['entmax-1.5']:.1f} ms, MAPIE LAC {t['MAPIE LAC']:.1f} ms, MAPIE APS "
               f"{t['MAPIE APS']:.1f} ms: sparsemax takes {t['sparsemax'] / t['MAPIE LAC']:.2f}x the "
               "time of MAPIE LAC.")
    return out


def report(summary, df, args, elapsed):
    import mapie

    versions = (f"Python {platform.python_version()}, NumPy {np.__version__}, scikit-learn "
                f"{sklearn.__version__}, MAPIE {mapie.__version__}")
    lines = [
        "# Conformal prediction sets: sparse supports vs MAPIE (issue 19)",
        "",
        f"Generated by `python benchmarks/bench_conformal.py{' --quick' if args.quick else ''}"
        f"{' --smoke' if args.smoke else ''}` on {datetime.date.today().isoformat()}; {versions}; "
        f"{elapsed:.0f} s. {int(summary['splits'].max())} random calibration/test splits per "
        "(data set, model); every method calibrates the same prefit model on the same "
        "calibration half and predicts the same test half. Coverage: mean over splits (standard "
        "deviation); cov. size k: coverage of the test points whose set has k labels (pooled); "
        "worst size: the smallest of these over groups with at least 1% of the points. Smaller "
        "sets at the target coverage are better; so is a worst-size coverage close to the target.",
        "",
        "## Findings",
        "",
        *findings(summary, df),
        "",
        "Note on MAPIE APS with `SparsemaxClassifier`: that model's `predict_proba` is exactly 0 "
        "for many labels, the true one included. MAPIE's APS never puts a label of probability 0 "
        "in a set, even when its threshold is the largest possible score (1, tied for every such "
        "calibration point), so its coverage falls to the share of test points whose true label "
        "has a positive probability. The sparsemax and entmax scores read the model's "
        "`decision_function`, which has no such ties.",
    ]
    for coverage in sorted(summary["coverage_target"].unique()):
        lines += ["", f"## Target coverage {coverage}", "", *table(summary, coverage)]
    lines += ["", "```bash", "python benchmarks/bench_conformal.py --write", "```", ""]
    return "\n".join(lines)


def to_rst(md):
    """The report as reST, for ``docs/user_guide/conformal.rst`` (the docs' own converter)."""
    import sys

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    from sksparsemax_docs import markdown_to_rst

    return markdown_to_rst(md)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 splits")
    parser.add_argument("--smoke", action="store_true", help="tiny settings (seconds)")
    parser.add_argument("--write", action="store_true", help="write the results files")
    parser.add_argument("--results-dir", default=str(ROOT / "benchmarks" / "results"))
    parser.add_argument("--repeats", type=int, default=None, help=f"splits (default {REPEATS})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    repeats = args.repeats or (2 if args.smoke else 5 if args.quick else REPEATS)
    datasets = DATASETS[1:] if args.smoke else DATASETS
    coverages = (0.9,) if args.smoke else (0.9, 0.95)
    start = time.perf_counter()
    rows = []
    with threadpool_limits(1):
        for data in datasets:
            X, y, n_train = load(data, args.smoke)
            for name, model in models(args.smoke).items():
                rows += run_setting(data, name, model, X, y, n_train, coverages, repeats, args.seed)
                if not args.quiet:
                    print(f"{data} / {name}: done", flush=True)
    df = pd.DataFrame(rows)
    summary = summarise(df)
    md = report(summary, df, args, time.perf_counter() - start)
    print("\n".join(line for line in md.splitlines() if line.startswith(("- ", "  - "))))
    if args.write:
        out = Path(args.results_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "conformal.md").write_text(md, encoding="utf-8")
        (out / "conformal.rst").write_text(to_rst(md), encoding="utf-8")
        summary.to_csv(out / "conformal.csv", index=False, float_format="%.6g")
        print(f"wrote conformal.{{md,rst,csv}} to {out}")


if __name__ == "__main__":
    main()
