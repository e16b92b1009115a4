"""Multi-label benchmarks of the other losses: entmax, normmax, budget sparsemax, marginals.

The protocol of ``bench_multilabel.py`` (the 2016 sparsemax paper's, §5.2 of
Martins & Astudillo, ICML 2016), whose machinery this script imports rather
than copies -- data loading (MULAN train/test split of scene, emotions, yeast,
medical), the paper's lambda grid (C = 1 / (lambda n)), the 5-fold shuffled
CV with one fit per (C, fold) scoring every threshold, the scores, the fit
timing and the paired bootstrap -- applied to:

* ``OneVsRest(LogisticRegression)`` (the baseline; predict sigma(z_k) > delta,
  delta in {0.05, ..., 0.5}) and ``SparsemaxMultiLabel`` (sparsemax, the 2016
  model: the support of sparsemax(t z), t in {1, 1.5, ..., 5}), the rows of
  ``benchmarks/results/multilabel.md``;
* ``SparsemaxMultiLabel`` with ``EntmaxLoss(alpha=1.5)``,
  ``NormmaxLoss(alpha=2)`` and ``BudgetSparsemaxLoss(budget=2)``, the same
  proportion targets (uniform over the gold labels); primary rule: the support
  of the loss's mapping at scale t (``scale=t``), plus the top label, t on the
  sparsemax grid; second rule, reported apart and scored from the same CV
  fits: the labels whose mapped value at t = 1 exceeds p0
  (``threshold=p0``), plus the top label, p0 in {0, 0.05, ..., 0.5};
* ``MarginalMultiLabel`` with the sparsemax loss and with
  ``EntmaxLoss(alpha=1.5)`` (binary relevance: each label's score against 0);
  predict the labels with marginal > delta, delta on the OvR grid.

Every test score comes from the model tuned for it (micro-F1 or macro-F1 =
mean of per-label F1) by the CV; the two rules of a SparsemaxMultiLabel model
are tuned separately. The fit times are those of ``bench_multilabel.py``: the
final refit (best of ``timing_repeats + 1``, one BLAS thread) and the mean CV
fit over the C grid, with their ratios to OvR's.

Run from the repository root::

    python benchmarks/bench_multilabel_losses.py --n-jobs 2          # print only
    python benchmarks/bench_multilabel_losses.py --n-jobs 2 --write  # + benchmarks/results/
    python benchmarks/bench_multilabel_losses.py --smoke             # seconds, bundled emotions
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.metrics import label_ranking_average_precision_score  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _p in (str(ROOT), str(HERE)):  # run from a checkout without installing
    if _p not in sys.path:
        sys.path.insert(0, _p)

import bench_multilabel as bml  # noqa: E402

import sksparsemax  # noqa: E402
from sksparsemax.linear_model import MarginalMultiLabel, SparsemaxMultiLabel  # noqa: E402
from sksparsemax.losses import BudgetSparsemaxLoss, EntmaxLoss, NormmaxLoss  # noqa: E402

# model key -> (label, family, primary rule). Families: "ovr" (OvRLogistic),
# "proportions" (SparsemaxMultiLabel), "marginals" (MarginalMultiLabel).
MODELS = {
    "logistic": ("OneVsRest(LogisticRegression)", "ovr", "delta"),
    "sparsemax": ("SparsemaxMultiLabel (sparsemax)", "proportions", "t"),
    "entmax15": ("SparsemaxMultiLabel(loss=EntmaxLoss(alpha=1.5))", "proportions", "t"),
    "normmax2": ("SparsemaxMultiLabel(loss=NormmaxLoss(alpha=2))", "proportions", "t"),
    "budget2": ("SparsemaxMultiLabel(loss=BudgetSparsemaxLoss(budget=2))", "proportions", "t"),
    "marginal_sparsemax": ("MarginalMultiLabel(loss='sparsemax')", "marginals", "delta"),
    "marginal_entmax15": ("MarginalMultiLabel(loss=EntmaxLoss(alpha=1.5))", "marginals", "delta"),
}
SHORT = {
    "logistic": "OvR LR",
    "sparsemax": "sparsemax",
    "entmax15": "entmax-1.5",
    "normmax2": "normmax-2",
    "budget2": "budget-2",
    "marginal_sparsemax": "marginal sparsemax",
    "marginal_entmax15": "marginal entmax-1.5",
}
RULE_LABEL = {
    "t": "support of the mapping at scale t (+ top label)",
    "p0": "mapped value at t = 1 > p0 (+ top label)",
    "delta": "probability / marginal > δ",
}
RULE_SYMBOL = {"t": "t", "p0": "p0", "delta": "δ"}
CRITERIA = ("micro_f1", "macro_f1")
CRITERION_LABEL = {"micro_f1": "micro-F1", "macro_f1": "macro-F1"}
PRIMARY = dict(bml.PRIMARY)  # std scaling, paper t grid, paper lambdas, max_iter 100


def _loss(method):
    return {
        "sparsemax": "sparsemax",
        "entmax15": EntmaxLoss(alpha=1.5),
        "normmax2": NormmaxLoss(alpha=2),
        "budget2": BudgetSparsemaxLoss(budget=2),
        "marginal_sparsemax": "sparsemax",
        "marginal_entmax15": EntmaxLoss(alpha=1.5),
    }[method]


# ----------------------------------------------------------------------------- models
def make_pipeline(method, C, sparse, max_iter=100, scaling="std", sparsemax_rule=None):
    """The model behind its feature scaler (``bench_multilabel.make_pipeline``'s signature).

    The threshold parameter name is None: :func:`predict_labels` sets the rule.
    """
    family = MODELS[method][1]
    if family == "ovr":
        clf = bml.OvRLogistic(C=C, max_iter=max_iter)
    elif family == "proportions":
        clf = SparsemaxMultiLabel(C=C, loss=_loss(method), max_iter=max_iter)
    else:
        clf = MarginalMultiLabel(C=C, loss=_loss(method), max_iter=max_iter)
    return Pipeline([("scale", bml._scaler(scaling, sparse)), ("clf", clf)]), None


def marginals(pipe, X):
    """(n, L) per-label probabilities: sigma(z) for OvR, ``predict_marginals`` otherwise."""
    clf = pipe[-1]
    Xt = pipe[:-1].transform(X)
    if isinstance(clf, bml.OvRLogistic):
        return clf.predict_proba(Xt)
    return clf.predict_marginals(Xt)


def predict_labels(pipe, method, thr_param, rule, X, softmax_rule=None):
    """The indicator matrix under ``rule`` = ("t", t), ("p0", p0) or ("delta", delta).

    (``bench_multilabel.predict_labels``'s signature.)
    """
    kind, value = rule
    if kind == "delta":
        return (marginals(pipe, X) > value).astype(np.int64)
    if kind == "t":
        pipe.set_params(clf__scale=value, clf__threshold=None)
    elif kind == "p0":
        pipe.set_params(clf__scale=1.0, clf__threshold=value)
    else:
        raise ValueError(kind)
    return pipe.predict(X)


def raw_scores(pipe, X):
    """z = W x + b of a fitted SparsemaxMultiLabel / MarginalMultiLabel pipeline."""
    clf = pipe[-1]
    Z = pipe[:-1].transform(X) @ clf.coef_.T
    return np.asarray(Z) + clf.intercept_


def rules_of(method, cfg):
    """The rules tuned for ``method``: {rule kind: grid}."""
    family = MODELS[method][1]
    if family == "proportions":
        return {"t": [float(t) for t in cfg["scales"]], "p0": [float(p) for p in cfg["p0s"]]}
    return {"delta": [float(d) for d in cfg["deltas"]]}


def warm_up(methods):
    """Fit every model once on a few rows (dense and sparse): numba compilation is not timed."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    Y = (rng.random((40, 3)) < 0.5).astype(np.int64)
    Y[:, 0] |= Y.sum(axis=1) == 0
    for sparse in (False, True):
        Xs = sp.csr_matrix(X) if sparse else X
        for method in methods:
            pipe = make_pipeline(method, 1.0, sparse)[0]
            bml._fit(pipe, Xs, Y)
            for rule in [(k, g[0]) for k, g in rules_of(method, bml.FULL).items()]:
                predict_labels(pipe, method, None, rule, Xs)


# ----------------------------------------------------------------------------- run
def run_dataset(name, X_tr, Y_tr, X_te, Y_te, cfg, methods, *, n_jobs, seed, log,
                max_iter=100, scaling="std"):
    """Tune and test every model on one data set; one row per (model, rule)."""
    keep = np.asarray(Y_tr.sum(axis=1)).ravel() > 0
    X_tr, Y_tr = X_tr[keep], Y_tr[keep]
    sparse = sp.issparse(X_tr)
    Y_te_dense = Y_te.toarray() if sp.issparse(Y_te) else np.asarray(Y_te)
    C_grid = bml.C_grid_for({"reg_grid": "paper"}, cfg, X_tr.shape[0])
    rows = []
    for method in methods:
        label, family, primary_rule = MODELS[method]
        grids = rules_of(method, cfg)
        thr_grid = [(kind, v) for kind, grid in grids.items() for v in grid]
        start = time.perf_counter()
        table, fit_seconds, n_nc = bml.cv_grid(
            method, X_tr, Y_tr, C_grid, thr_grid,
            KFold(cfg["n_folds"], shuffle=True, random_state=seed),
            n_jobs=n_jobs, max_iter=max_iter, scaling=scaling,
            factory=make_pipeline, predictor=predict_labels,
        )
        cv_time = time.perf_counter() - start
        kinds = table["threshold"].map(lambda r: r[0])
        refits = {}  # C -> (fitted pipeline, best seconds, ConvergenceWarnings)

        def refit(C):
            if C not in refits:
                pipe, _ = make_pipeline(method, C, sparse, max_iter, scaling)
                times = [bml._fit(clone(pipe), X_tr, Y_tr)[0] for _ in range(cfg["timing_repeats"])]
                seconds, n_warn = bml._fit(pipe, X_tr, Y_tr)
                refits[C] = (pipe, float(min(times + [seconds])), n_warn)
            return refits[C]

        for kind, grid in grids.items():
            sub = table[kinds == kind].reset_index(drop=True)
            row = {
                "dataset": name, "method": method, "model": label, "family": family,
                "rule": kind, "primary_rule": kind == primary_rule,
                "n_train": X_tr.shape[0], "n_test": X_te.shape[0], "n_labels": Y_tr.shape[1],
                "test_label_cardinality": float(Y_te_dense.sum(axis=1).mean()),
                "cv_time_s": cv_time, "cv_fits": len(C_grid) * cfg["n_folds"],
                "cv_not_converged": n_nc, "C_min": min(C_grid), "C_max": max(C_grid),
                "threshold_min": min(grid), "threshold_max": max(grid),
                "mean_cv_fit_s": float(np.mean([s for v in fit_seconds.values() for s in v])),
            }
            for crit in CRITERIA:
                best = bml.select(sub, crit)
                C, rule = float(best["C"]), best["threshold"]
                pipe, seconds, n_warn = refit(C)
                Y_pred = predict_labels(pipe, method, None, rule, X_te)
                test = bml.scores(Y_te, Y_pred)
                row[crit] = test[crit]
                row[f"{crit}_C"] = C
                row[f"{crit}_threshold"] = float(rule[1])
                row[f"{crit}_cv"] = float(best[crit])
                row[f"{crit}_fit_s"] = seconds
                row[f"{crit}_not_converged"] = n_warn
                if crit == "micro_f1":
                    row["_micro_counts"] = bml.micro_counts(Y_te, Y_pred)
                    counts = Y_pred.sum(axis=1)
                    row["mean_predicted_labels"] = float(counts.mean())
                    row["min_predicted_labels"] = int(counts.min())
                    row["empty_predictions"] = float((counts == 0).mean())
                    # the ranking of each row's labels by the scores, whatever the rule
                    ranking = marginals(pipe, X_te) if family == "ovr" else raw_scores(pipe, X_te)
                    row["lrap"] = label_ranking_average_precision_score(Y_te_dense, ranking)
                    row["refit_iterations"] = bml._n_iter(pipe[-1])
            rows.append(row)
            log(f"  {name:9s} {SHORT[method]:20s} {RULE_SYMBOL[kind]:2s} micro {row['micro_f1']:.4f} "
                f"macro {row['macro_f1']:.4f} fit {row['micro_f1_fit_s']:.3f}s (cv {cv_time:.1f}s)")
    return rows


def add_ratios(df):
    """Fit-time ratios to OvR LR on the same data set, and the gap to OvR's micro-F1."""
    df = df.copy()
    ovr = df[df["method"] == "logistic"].set_index("dataset")
    for col in ("micro_f1_fit_s", "mean_cv_fit_s"):
        df[col.replace("_s", "_ratio_ovr")] = df[col] / df["dataset"].map(ovr[col])
    for crit in CRITERIA:
        df[f"{crit}_minus_ovr"] = 100 * (df[crit] - df["dataset"].map(ovr[crit]))
    return df


# ----------------------------------------------------------------------------- reports
def _choice(r, crit):
    name = RULE_SYMBOL[r["rule"]]
    C, t = r[f"{crit}_C"], r[f"{crit}_threshold"]
    c_edge = " (edge)" if np.isclose(C, r["C_min"]) or np.isclose(C, r["C_max"]) else ""
    t_edge = (" (edge)" if np.isclose(t, r["threshold_min"]) or np.isclose(t, r["threshold_max"])
              else "")
    return f"C={C:.3g}{c_edge}, {name}={t:.3g}{t_edge}"


def _bold_if(text, cond):
    return f"**{text}**" if cond else text


def main_table(df):
    """Primary rules: scores, fit times and their ratios to OvR, the choices."""
    header = ["data set", "model", "rule", "micro-F1", "macro-F1", "LRAP", "labels / row",
              "fit (s)", "fit ÷ OvR", "mean CV fit (s)", "CV fit ÷ OvR", "micro-F1 choice",
              "macro-F1 choice"]
    rows = []
    prim = df[df["primary_rule"]]
    for name, grp in prim.groupby("dataset", sort=False):
        for _, r in grp.iterrows():
            rows.append([
                name, r["model"], RULE_SYMBOL[r["rule"]],
                _bold_if(f"{100 * r['micro_f1']:.2f}", r["micro_f1"] == grp["micro_f1"].max()),
                _bold_if(f"{100 * r['macro_f1']:.2f}", r["macro_f1"] == grp["macro_f1"].max()),
                _bold_if(f"{100 * r['lrap']:.2f}", r["lrap"] == grp["lrap"].max()),
                f"{r['mean_predicted_labels']:.2f} (true {r['test_label_cardinality']:.2f})",
                f"{r['micro_f1_fit_s']:.3f}", f"{r['micro_f1_fit_ratio_ovr']:.2f}",
                f"{r['mean_cv_fit_s']:.3f}", f"{r['mean_cv_fit_ratio_ovr']:.2f}",
                _choice(r, "micro_f1"), _choice(r, "macro_f1"),
            ])
    return header, rows


def pivot_table(df, value, fmt, rule_filter="primary", bold="max"):
    """Models x data sets of one column."""
    sub = df[df["primary_rule"]] if rule_filter == "primary" else df[df["rule"] == rule_filter]
    names = list(dict.fromkeys(sub["dataset"]))
    header = ["model", *names]
    rows = []
    for method in dict.fromkeys(sub["method"]):
        cells = [MODELS[method][0]]
        for name in names:
            grp = sub[sub["dataset"] == name]
            v = grp.loc[grp["method"] == method, value].iloc[0]
            best = grp[value].max() if bold == "max" else None
            cells.append(_bold_if(fmt(v), bold == "max" and v == best))
        rows.append(cells)
    return header, rows


def gap_table(df):
    """Micro-F1 minus OvR's, with the paired-bootstrap 95% interval (primary rules)."""
    prim = df[df["primary_rule"]]
    names = list(dict.fromkeys(prim["dataset"]))
    header = ["model", *names]
    rows = []
    for method in dict.fromkeys(prim["method"]):
        if method == "logistic":
            continue
        cells = [MODELS[method][0]]
        for name in names:
            g = prim[prim["dataset"] == name].set_index("method")
            gap = g.loc[method, "micro_f1_minus_ovr"]
            lo, hi = bml.bootstrap_gap(g.loc[method, "_micro_counts"],
                                       g.loc["logistic", "_micro_counts"])
            cells.append(f"{gap:+.2f} [{lo:+.2f}, {hi:+.2f}]")
        rows.append(cells)
    return header, rows


def rule_table(df):
    """SparsemaxMultiLabel models: the t rule against the p0 rule."""
    header = ["data set", "model", "micro-F1 (t)", "micro-F1 (p0)", "macro-F1 (t)",
              "macro-F1 (p0)", "labels / row (t / p0)", "micro-F1 choice (p0)"]
    rows = []
    sub = df[df["family"] == "proportions"]
    for (name, method), grp in sub.groupby(["dataset", "method"], sort=False):
        g = grp.set_index("rule", drop=False)
        t, p = g.loc["t"], g.loc["p0"]
        rows.append([
            name, MODELS[method][0],
            _bold_if(f"{100 * t['micro_f1']:.2f}", t["micro_f1"] >= p["micro_f1"]),
            _bold_if(f"{100 * p['micro_f1']:.2f}", p["micro_f1"] > t["micro_f1"]),
            _bold_if(f"{100 * t['macro_f1']:.2f}", t["macro_f1"] >= p["macro_f1"]),
            _bold_if(f"{100 * p['macro_f1']:.2f}", p["macro_f1"] > t["macro_f1"]),
            f"{t['mean_predicted_labels']:.2f} / {p['mean_predicted_labels']:.2f}",
            _choice(p, "micro_f1"),
        ])
    return header, rows


def _per_set(values, fmt="{:+.2f}"):
    return ", ".join(f"{k} {fmt.format(v)}" for k, v in values.items())


def findings(df):
    """Conclusions, every number read from the results."""
    lines = []
    prim = df[df["primary_rule"]]
    names = list(dict.fromkeys(prim["dataset"]))
    n = len(names)
    for crit in CRITERIA:
        best = prim.loc[prim.groupby("dataset", sort=False)[crit].idxmax()]
        lines.append(
            f"Best {CRITERION_LABEL[crit]} (primary rules): "
            + "; ".join(f"{r['dataset']} {SHORT[r['method']]} {100 * r[crit]:.2f}"
                        for _, r in best.iterrows()) + "."
        )
    for method in dict.fromkeys(prim["method"]):
        if method == "logistic":
            continue
        sub = prim[prim["method"] == method].set_index("dataset")
        gaps = sub["micro_f1_minus_ovr"]
        macro = sub["macro_f1_minus_ovr"]
        line = (f"{MODELS[method][0]} against OvR LR, micro-F1 points: {_per_set(gaps)} "
                f"(at least OvR's on {int((gaps >= 0).sum())} of {n}, mean {gaps.mean():+.2f}); "
                f"macro-F1: {_per_set(macro)} (mean {macro.mean():+.2f})")
        if method != "sparsemax" and "sparsemax" in set(prim["method"]):
            sm = prim[prim["method"] == "sparsemax"].set_index("dataset")
            vs = 100 * (sub["micro_f1"] - sm["micro_f1"])
            line += f"; micro-F1 against sparsemax: {_per_set(vs)} (mean {vs.mean():+.2f})"
        lines.append(line + ".")
    for method in dict.fromkeys(prim["method"]):
        if method == "logistic":
            continue
        sub = prim[prim["method"] == method].set_index("dataset")
        lines.append(
            f"Fit time of {SHORT[method]} ÷ OvR LR: final refit {_per_set(sub['micro_f1_fit_ratio_ovr'], '{:.2f}')}; "
            f"mean CV fit {_per_set(sub['mean_cv_fit_ratio_ovr'], '{:.2f}')}; faster than OvR on both "
            f"counts on {int(((sub['micro_f1_fit_ratio_ovr'] < 1) & (sub['mean_cv_fit_ratio_ovr'] < 1)).sum())} "
            f"of {n}."
        )
    if "budget2" in set(df["method"]):
        b = df[df["method"] == "budget2"].set_index(["rule", "dataset"])
        bt, bp = b.loc["t"], b.loc["p0"]
        lines.append(
            "Budget sparsemax (budget 2): its mapping lies in the capped simplex (rows sum to 2, "
            "entries at most 1), so the support rule always predicts at least 2 labels: fewest "
            f"per test row {_per_set(bt['min_predicted_labels'], '{:d}')}; mean "
            f"{_per_set(bt['mean_predicted_labels'], '{:.2f}')} against the true "
            f"{_per_set(bt['test_label_cardinality'], '{:.2f}')}. The p0 rule ("
            + ("proportion = inclusion probability / 2" if budget_threshold_reads() == "proportions"
               else "inclusion probability")
            + f" > p0, plus the top label) predicts {_per_set(bp['mean_predicted_labels'], '{:.2f}')} "
            f"and changes its micro-F1 by {_per_set(100 * (bp['micro_f1'] - bt['micro_f1']))} points."
        )
    prop = df[df["family"] == "proportions"]
    if len(prop):
        parts = []
        for method in dict.fromkeys(prop["method"]):
            s = prop[prop["method"] == method].set_index(["rule", "dataset"])
            d = 100 * (s.loc["p0", "micro_f1"] - s.loc["t", "micro_f1"])
            parts.append(f"{SHORT[method]} {_per_set(d)}")
        lines.append("Proportion-threshold rule p0 instead of the support at scale t, micro-F1 "
                     "change in points (tuned separately, same CV fits): " + "; ".join(parts) + ".")
        ovr = df[df["method"] == "logistic"].set_index("dataset")["micro_f1"]
        parts = []
        for method in dict.fromkeys(prop["method"]):
            s = prop[(prop["method"] == method) & (prop["rule"] == "p0")].set_index("dataset")
            gaps = 100 * (s["micro_f1"] - ovr.loc[s.index])
            parts.append(f"{SHORT[method]} {_per_set(gaps)} (at least OvR's on "
                         f"{int((gaps >= 0).sum())} of {len(gaps)})")
        lines.append("With the p0 rule, micro-F1 minus OvR LR's in points: " + "; ".join(parts) + ".")
    for label, sub in (("primary rules", prim), ("p0 rule", df[df["rule"] == "p0"])):
        edges = []
        for _, r in sub.iterrows():
            t = r["micro_f1_threshold"]
            if np.isclose(t, r["threshold_min"]) or np.isclose(t, r["threshold_max"]):
                edges.append(f"{SHORT[r['method']]} on {r['dataset']} "
                             f"({RULE_SYMBOL[r['rule']]}={t:g})")
        if len(sub):
            lines.append(f"Micro-F1 choices of the threshold/scale at an end of its grid ({label}): "
                         + (", ".join(edges) if edges else "none") + ".")
    nc = prim.groupby("method", sort=False)[["cv_not_converged", "cv_fits"]].sum()
    lines.append("CV fits that hit the iteration cap (ConvergenceWarning): "
                 + ", ".join(f"{SHORT[m]} {int(r['cv_not_converged'])}/{int(r['cv_fits'])}"
                             for m, r in nc.iterrows()) + ".")
    return lines


def reproduction_check(df, results_dir):
    """Whether the sparsemax and OvR rows equal multilabel.csv's primary rows (a computed line)."""
    path = Path(results_dir) / "multilabel.csv"
    if not path.is_file():
        return None
    ref = pd.read_csv(path)
    ref = ref[ref["protocol"] == "primary"]
    diffs, compared = [], 0
    for method in ("sparsemax", "logistic"):
        for _, r in df[(df["method"] == method) & df["primary_rule"]].iterrows():
            m = ref[(ref["method"] == method) & (ref["dataset"] == r["dataset"])]
            if len(m) != 1:
                continue
            compared += 1
            for crit in CRITERIA:
                diffs.append(abs(100 * (r[crit] - m[crit].iloc[0])))
    if not compared:
        return None
    return (f"Reproduction check: the SparsemaxMultiLabel (sparsemax) and OvR LR rows against the "
            f"primary rows of multilabel.csv ({compared} model-data set pairs): largest "
            f"micro/macro-F1 difference {max(diffs):.4f} points.")


def budget_threshold_reads():
    """What SparsemaxMultiLabel's ``threshold`` is compared with for the budget loss.

    "proportions" (``predict_proba``, rows summing to 1) or "inclusion" (the
    loss's mapping, rows summing to the budget); read from the estimator.
    """
    import warnings

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    Y = (rng.random((30, 4)) < 0.5).astype(np.int64)
    Y[:, 0] |= Y.sum(axis=1) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = SparsemaxMultiLabel(loss=BudgetSparsemaxLoss(budget=2), threshold=0.1).fit(X, Y)
    margins = clf.decision_function(X)
    return "proportions" if np.allclose(margins, clf.predict_proba(X) - 0.1) else "inclusion"


def _library_state():
    """The git commit of the checkout and the uncommitted changes under sksparsemax/ (text)."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                              capture_output=True, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--", "sksparsemax"], cwd=ROOT,
                                text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "checkout state unknown"
    changed = sorted(line[3:].strip() for line in status.splitlines() if line.strip())
    if not changed:
        return f"checkout at commit {head}, sksparsemax/ unmodified"
    return (f"checkout at commit {head}, uncommitted changes under sksparsemax/ to "
            + ", ".join(changed))


def describe(df, cfg, args, sources, skipped, elapsed):
    by_set = df.groupby("dataset", sort=False)
    lines = [
        "Protocol: that of bench_multilabel.py (the 2016 paper's, its primary protocol), "
        "whose code this script reuses: MULAN's standard train/test split ("
        + "; ".join(f"{k}: {v}" for k, v in sources.items())
        + "), training rows without a label dropped; features "
        f"{bml.SCALING_LABEL['std']}, inside the pipeline; L-BFGS capped at {args.max_iter} "
        "iterations; intercepts unpenalised.",
        f"Grid: λ ∈ {bml._grid_text(cfg['lambdas'])}, C = 1/(λ·n) (C from "
        + "; ".join(f"{k}: {g['C_min'].iloc[0]:.3g} to {g['C_max'].iloc[0]:.3g}" for k, g in by_set)
        + f"), the same for every model; scale t ∈ {bml._grid_text(cfg['scales'])}; "
        f"p0 ∈ {bml._grid_text(cfg['p0s'])}; δ ∈ {bml._grid_text(cfg['deltas'])}"
        + (" (--smoke: tiny grids, bundled emotions only)." if args.smoke else
           ": bench_multilabel.py's full grids, not reduced.")
        + " '(edge)' marks a choice at an end of its grid.",
        "Models and rules. OvR LR: OneVsRest(LogisticRegression), predict σ(z_k) > δ. "
        "SparsemaxMultiLabel with the sparsemax, EntmaxLoss(alpha=1.5), NormmaxLoss(alpha=2) and "
        "BudgetSparsemaxLoss(budget=2) losses, all fitted to the proportion targets q = 1_S/|S| "
        "(S the gold labels): primary rule 't', the labels in the support of the loss's mapping "
        "of t·z (SparsemaxMultiLabel(scale=t)), plus the top-scoring label, t tuned on the "
        "sparsemax grid; second rule 'p0', the labels whose mapped value at t = 1 exceeds p0 "
        "(SparsemaxMultiLabel(threshold=p0)), plus the top label, scored from the same CV fits "
        "and tuned separately (table 'Prediction rules'). The budget loss fits the projection "
        "Π(2q) of the target, scaled to the budget, onto the capped simplex {0 ≤ p ≤ 1, Σp = 2}: "
        "a row with 2 gold labels becomes 1 on both, one with 3 or more 2/|S| on each, and one "
        "with a single gold label 1 on it and 1/(L−1) on every other label; its mapping "
        "(inclusion probabilities, rows summing to 2) has at least 2 nonzero entries, so rule t "
        "predicts at least 2 labels per row; rule p0 compares p0 with "
        + ("the estimator's predict_proba, these inclusion probabilities divided by the budget "
           "(entries at most 1/2; p0 = 0.45 is an inclusion probability of 0.9). "
           if budget_threshold_reads() == "proportions" else
           "these inclusion probabilities (loss.predict_proba, entries at most 1), not with the "
           "estimator's predict_proba, which divides them by the budget. ")
        +         "MarginalMultiLabel (loss 'sparsemax': marginal clip((z+1)/2, 0, 1); "
        "EntmaxLoss(alpha=1.5)): binary relevance, predict marginal > δ "
        "(predict_marginals), δ on the OvR grid.",
        f"Tuning: {cfg['n_folds']}-fold CV on the training set (KFold, shuffled, seed "
        f"{args.seed}), one fit per (C, fold) scoring every threshold of every rule (the same "
        "scores as GridSearchCV); micro-F1 and macro-F1 (mean of per-label F1, zero_division=0) "
        "tuned separately, each test score from the model tuned for it. Bold: best per data set.",
        "Other columns: LRAP, sklearn's label ranking average precision of the micro-F1-tuned "
        "model's raw scores z (σ(z) for OvR), independent of the rule; labels / row, the mean "
        "number of labels it predicts per test row (the test set's true mean in brackets).",
        f"Fit time: the final refit (pipeline with scaler) of the micro-F1-tuned model on the "
        f"whole training set, best of {cfg['timing_repeats'] + 1} runs, one BLAS thread, after "
        "a warm-up fit of every model (numba compilation excluded); 'mean CV fit': mean over all "
        "the CV fits of the C grid; '÷ OvR': ratio to OvR LR's on the same data set. The "
        "machine (2 cores) was shared with other jobs, so timings are indicative.",
        f"Run: sksparsemax {sksparsemax.__version__} ({args.library_state}), numpy {np.__version__}, "
        f"Python {platform.python_version()}, {args.n_jobs} job(s), {elapsed:.0f} s wall time.",
    ]
    if skipped:
        lines.append("Skipped (files not found): " + ", ".join(skipped) + ".")
    return lines


def _command(args):
    parts = ["python benchmarks/bench_multilabel_losses.py --write"]
    if args.smoke:
        parts.append("--smoke")
    if args.n_jobs != 1:
        parts.append(f"--n-jobs {args.n_jobs}")
    if args.max_iter != PRIMARY["max_iter"]:
        parts.append(f"--max-iter {args.max_iter}")
    return " ".join(parts)


def report(df, cfg, args, sources, skipped, elapsed):
    """The markdown text."""
    found = findings(df)
    check = reproduction_check(df, args.results_dir) if not args.smoke else None
    if check:
        found.append(check)
    pct = "{:.2f}".format
    md = ["# Multi-label benchmarks of the other losses (MULAN)", ""]
    md += ["Entmax, normmax and budget sparsemax in SparsemaxMultiLabel, and MarginalMultiLabel, "
           "next to one-vs-rest logistic regression and the 2016 sparsemax model, under the "
           "protocol of [multilabel.md](multilabel.md). Generated by "
           f"`{_command(args)}`; every number below comes from that run.", ""]
    md += ["## Protocol", ""] + [f"- {line}" for line in describe(df, cfg, args, sources,
                                                                  skipped, elapsed)] + [""]
    md += ["## Findings", ""] + [f"- {line}" for line in found] + [""]
    for crit in CRITERIA:
        h, r = pivot_table(df, crit, lambda v: pct(100 * v))
        md += [f"## Test {CRITERION_LABEL[crit]} (%), primary rules", "", bml.markdown_table(h, r), ""]
    h, r = gap_table(df)
    md += ["## Micro-F1 minus OvR LR's (points), with a 95% interval", "",
           "Paired bootstrap of the test rows (2000 resamples, seed 0), both models' micro-F1 "
           "recomputed on each resample.", "", bml.markdown_table(h, r), ""]
    h, r = main_table(df)
    md += ["## Scores, fit times and choices (primary rules)", "", bml.markdown_table(h, r), ""]
    h, r = rule_table(df)
    md += ["## Prediction rules of the SparsemaxMultiLabel models: support at scale t vs "
           "threshold p0", "", "Bold: the better rule of the two.", "", bml.markdown_table(h, r), ""]
    return "\n".join(md)


def write_outputs(df, md, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    public = [c for c in df.columns if not c.startswith("_")]
    df[public].to_csv(out_dir / "multilabel_losses.csv", index=False, float_format="%.6g")
    (out_dir / "multilabel_losses.md").write_text(md, encoding="utf-8")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="bundled emotions, tiny grid")
    parser.add_argument("--write", action="store_true", help="write the results files")
    parser.add_argument("--results-dir", default=str(ROOT / "benchmarks" / "results"),
                        help="where --write puts the files (default: benchmarks/results)")
    parser.add_argument("--data-dir", default=None,
                        help="MULAN folder (default ../shared/data/multilabel)")
    parser.add_argument("--datasets", nargs="+", default=None, choices=bml.DATASETS)
    parser.add_argument("--models", nargs="+", default=None, choices=tuple(MODELS),
                        help="models to run (default: all; OvR LR always runs)")
    parser.add_argument("--n-jobs", type=int, default=1, help="parallel CV fits (joblib)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the CV shuffling")
    parser.add_argument("--max-iter", type=int, default=PRIMARY["max_iter"],
                        help="L-BFGS iterations (paper: 100)")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    base = bml.SMOKE if args.smoke else bml.FULL
    cfg = dict(base, scales=base["scale_grids"][PRIMARY["scale_grid"]])
    if args.smoke:
        data_dir = Path("/nonexistent-use-bundled")
        names = args.datasets or ["emotions"]
    else:
        data_dir = Path(args.data_dir) if args.data_dir else bml.default_data_dir()
        names = args.datasets or list(bml.DATASETS)
    methods = list(MODELS) if not args.models else ["logistic"] + [
        m for m in MODELS if m in args.models and m != "logistic"]

    def log(msg):
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    state = _library_state()
    warm_up(methods)
    start = time.perf_counter()
    rows, sources, skipped = [], {}, []
    for name in names:
        split = bml.load_split(name, data_dir)
        if split is None:
            skipped.append(name)
            log(f"  {name}: files not found under {data_dir}, skipped")
            continue
        X_tr, Y_tr, X_te, Y_te, source = split
        sources[name] = source
        rows += run_dataset(name, X_tr, Y_tr, X_te, Y_te, cfg, methods, n_jobs=args.n_jobs,
                            seed=args.seed, log=log, max_iter=args.max_iter)
    elapsed = time.perf_counter() - start
    if not rows:
        print("no data set found; pass --data-dir", file=sys.stderr)
        return 1
    df = add_ratios(pd.DataFrame(rows))
    end_state = _library_state()
    args.library_state = state if end_state == state else (
        f"at the start: {state}; at the end: {end_state}. The tree changed during the run; the "
        "run used the modules imported at its start")
    md = report(df, cfg, args, sources, skipped, elapsed)
    for crit in CRITERIA:
        h, r = pivot_table(df, crit, lambda v: f"{100 * v:.2f}")
        print(f"{CRITERION_LABEL[crit]} (%)")
        print(bml.markdown_table(h, r))
        print()
    for line in findings(df):
        print(line)
    print(f"\nwall time: {elapsed:.1f} s")
    if args.write:
        write_outputs(df, md, args.results_dir)
        print(f"wrote multilabel_losses.{{md,csv}} to {args.results_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
