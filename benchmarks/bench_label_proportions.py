"""Label-proportion estimation: sparsemax vs softmax (Martins & Astudillo, 2016, §5.1).

Reproduces the simulation of the 2016 sparsemax paper (protocol in
``../shared/reference/MATH.md`` §6, read from the authors' code):

* documents from :func:`sksparsemax.datasets.make_label_proportions` with
  K = 10 and 50 labels (vocabulary V = K), uniform or random proportions,
  mean document length L in {200, 400, ..., 2000};
* 1200 training, 200 development and 1000 test documents drawn in ONE call (so
  that they share the class prior and the word distributions), split in that
  order; word-count features standardised with the training statistics;
* :class:`~sksparsemax.linear_model.SparsemaxMultiLabel` fitted on the
  proportion matrix Q with ``loss="sparsemax"`` or ``loss="softmax"``
  (L-BFGS, at most 100 iterations, as in the authors' code);
* the L2 strength tuned over the paper's grid lambda in {1e-9, 1e-8, ..., 1}
  on the development documents, separately for each metric;
* test metrics per example and label: MSE = sum (p - q)^2 / (N K) and the
  Jensen-Shannon divergence (natural log, so it lies in [0, ln 2]), averaged
  over the test documents;
* every setting repeated with several seeds (a new prior, new word
  distributions and new documents each time): mean +- standard deviation.

Regularisation mapping. The paper minimises ``lambda/2 ||W||^2 + (1/N) sum_i
L(z_i; q_i)``; ``SparsemaxMultiLabel`` minimises ``(1/n) sum_i L(z_i; q_i) +
||W||^2 / (2 C n)`` (intercepts unpenalised), so ``lambda = 1 / (C n)``, i.e.
``C = 1 / (lambda n)`` with n = 1200 training documents.

Run from the repository root::

    python benchmarks/bench_label_proportions.py            # full run, print only
    python benchmarks/bench_label_proportions.py --write    # + benchmarks/results/
    python benchmarks/bench_label_proportions.py --smoke    # seconds, for the tests

``--write`` writes ``label_proportions.{md,rst,csv,png}`` into
``--results-dir`` (default ``benchmarks/results``). BLAS is pinned to one
thread per process (set ``OPENBLAS_NUM_THREADS`` etc. yourself to override):
the problems are small and threaded BLAS only adds overhead, badly so on a
shared machine; use ``--n-jobs`` to run settings in parallel instead.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

import sksparsemax  # noqa: E402
from sksparsemax.datasets import make_label_proportions  # noqa: E402
from sksparsemax.linear_model import SparsemaxMultiLabel  # noqa: E402

LOSSES = ("softmax", "sparsemax")
METRICS = ("jsd", "mse")
# Display scale of each metric in the tables (values are multiplied by it).
METRIC_SCALE = {"jsd": 1e2, "mse": 1e3}
METRIC_LABEL = {"jsd": "JSD ×10²", "mse": "MSE ×10³"}

FULL = dict(
    n_labels=(10, 50),
    proportions=("uniform", "random"),
    lengths=tuple(range(200, 2001, 200)),
    lambdas=tuple(10.0**e for e in range(-9, 1)),
    n_train=1200,
    n_dev=200,
    n_test=1000,
    n_repeats=5,
)
SMOKE = dict(
    n_labels=(5, 8),
    proportions=("uniform", "random"),
    lengths=(50, 100),
    lambdas=(1e-4, 1e-1),
    n_train=120,
    n_dev=40,
    n_test=60,
    n_repeats=2,
)


# ----------------------------------------------------------------------------- metrics
def jensen_shannon(P, Q):
    """Mean Jensen-Shannon divergence (natural log) between the rows of P and Q."""
    M = (P + Q) / 2

    def kl(A, B):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(A > 0, A * np.log(A / B), 0.0)
        return terms.sum(axis=1)

    return float(np.mean((kl(P, M) + kl(Q, M)) / 2))


def mean_squared_error(P, Q):
    """Sum of (p - q)^2 over examples and labels, divided by N K."""
    return float(np.mean((P - Q) ** 2))


def lambda_to_C(lam, n_train):
    """The estimator's C for the paper's L2 strength lambda (lambda = 1 / (C n))."""
    return 1.0 / (lam * n_train)


# ----------------------------------------------------------------------------- one setting
def run_setting(repeat, n_labels, proportions, length, cfg, base_seed, max_iter):
    """Both losses, every lambda, on one draw of the data; dev-tuned test metrics.

    Returns a list of dicts (one per loss).
    """
    n_train, n_dev, n_test = cfg["n_train"], cfg["n_dev"], cfg["n_test"]
    # One independent stream per (seed, repeat, K, proportions, L); both losses
    # see the same documents (a paired comparison).
    seq = np.random.SeedSequence(
        [base_seed, repeat, n_labels, cfg["proportions"].index(proportions), length]
    )
    X, _, Q = make_label_proportions(
        n_train + n_dev + n_test,
        n_labels,
        document_length=length,
        proportions=proportions,
        random_state=np.random.default_rng(seq),
    )
    tr = slice(0, n_train)
    dv = slice(n_train, n_train + n_dev)
    te = slice(n_train + n_dev, None)
    scaler = StandardScaler().fit(X[tr])
    X_tr, X_dv, X_te = scaler.transform(X[tr]), scaler.transform(X[dv]), scaler.transform(X[te])

    rows = []
    for loss in LOSSES:
        per_lambda = []
        n_not_converged = 0
        fit_time = 0.0
        for lam in cfg["lambdas"]:
            model = SparsemaxMultiLabel(
                C=lambda_to_C(lam, n_train), loss=loss, max_iter=max_iter
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                start = time.perf_counter()
                model.fit(X_tr, Q[tr])
                fit_time += time.perf_counter() - start
            n_not_converged += any(
                issubclass(w.category, ConvergenceWarning) for w in caught
            )
            P_dv, P_te = model.predict_proba(X_dv), model.predict_proba(X_te)
            per_lambda.append(
                {
                    "lambda": lam,
                    "dev_jsd": jensen_shannon(P_dv, Q[dv]),
                    "dev_mse": mean_squared_error(P_dv, Q[dv]),
                    "test_jsd": jensen_shannon(P_te, Q[te]),
                    "test_mse": mean_squared_error(P_te, Q[te]),
                    "support": float(np.count_nonzero(P_te > 0, axis=1).mean()),
                }
            )
        row = {
            "repeat": repeat,
            "n_labels": n_labels,
            "proportions": proportions,
            "length": length,
            "loss": loss,
            "n_not_converged": n_not_converged,
            "fit_time_s": fit_time,
            "true_support": float(np.count_nonzero(Q[te] > 0, axis=1).mean()),
        }
        for metric in METRICS:
            best = min(per_lambda, key=lambda r: r[f"dev_{metric}"])  # first on ties
            row[metric] = best[f"test_{metric}"]
            row[f"lambda_{metric}"] = best["lambda"]
            if metric == "jsd":
                row["support"] = best["support"]
        rows.append(row)
    return rows


def run(cfg, *, seed, n_jobs, max_iter, verbose=True):
    from joblib import Parallel, delayed

    tasks = [
        (r, k, prop, length)
        for r in range(cfg["n_repeats"])
        for k in cfg["n_labels"]
        for prop in cfg["proportions"]
        for length in cfg["lengths"]
    ]
    results = Parallel(n_jobs=n_jobs, verbose=5 if verbose else 0)(
        delayed(run_setting)(r, k, prop, length, cfg, seed, max_iter)
        for r, k, prop, length in tasks
    )
    df = pd.DataFrame([row for rows in results for row in rows])
    order = [p for p in ("uniform", "random") if p in cfg["proportions"]]
    df["proportions"] = pd.Categorical(df["proportions"], categories=order, ordered=True)
    return df


# ----------------------------------------------------------------------------- reports
def summarise(df):
    """Mean and std over repeats, one row per (K, proportions, L), losses side by side."""
    keys = ["n_labels", "proportions", "length"]
    agg = df.groupby(keys + ["loss"], observed=True)[list(METRICS) + ["support"]].agg(["mean", "std"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    wide = agg.unstack("loss")
    wide.columns = [f"{c}_{loss}" for c, loss in wide.columns]
    # paired wins: repeats where sparsemax is strictly better
    piv = df.pivot_table(index=keys + ["repeat"], columns="loss", values=list(METRICS), observed=True)
    for metric in METRICS:
        win = (piv[(metric, "sparsemax")] < piv[(metric, "softmax")]).groupby(level=keys, observed=True)
        wide[f"{metric}_wins"] = win.sum().astype(int)
    wide["n_repeats"] = df.groupby(keys, observed=True)["repeat"].nunique()
    wide["true_support"] = df.groupby(keys, observed=True)["true_support"].mean()
    return wide.reset_index()


def _fmt(mean, std, scale):
    std = 0.0 if not np.isfinite(std) else std
    return f"{mean * scale:.3f} ± {std * scale:.3f}"


def table_rows(summary):
    header = ["K", "proportions", "L"]
    for metric in METRICS:
        header += [f"{METRIC_LABEL[metric]} softmax", f"{METRIC_LABEL[metric]} sparsemax"]
    header += ["sparsemax support (true)"]
    rows = []
    for _, s in summary.iterrows():
        row = [str(s["n_labels"]), s["proportions"], str(s["length"])]
        for metric in METRICS:
            cells = {
                loss: _fmt(s[f"{metric}_mean_{loss}"], s[f"{metric}_std_{loss}"], METRIC_SCALE[metric])
                for loss in LOSSES
            }
            better = min(LOSSES, key=lambda loss: s[f"{metric}_mean_{loss}"])
            cells[better] = f"**{cells[better]}**"
            row += [cells["softmax"], cells["sparsemax"]]
        row.append(f"{s['support_mean_sparsemax']:.2f} ({s['true_support']:.2f})")
        rows.append(row)
    return header, rows


def overall_lines(df, summary, n_lambdas):
    """Honest one-line summaries computed from the measurements."""
    n = len(summary)
    lines = []
    for metric in METRICS:
        better = int(
            (summary[f"{metric}_mean_sparsemax"] < summary[f"{metric}_mean_softmax"]).sum()
        )
        wins = int(summary[f"{metric}_wins"].sum())
        total = int(summary["n_repeats"].sum())
        ratio = summary[f"{metric}_mean_sparsemax"] / summary[f"{metric}_mean_softmax"]
        lines.append(
            f"{metric.upper()}: sparsemax has the lower mean in {better} of {n} settings "
            f"and is better in {wins} of {total} paired runs; mean ratio "
            f"sparsemax/softmax {ratio.mean():.2f} (min {ratio.min():.2f}, max {ratio.max():.2f})."
        )
    for (k, prop), grp in summary.groupby(["n_labels", "proportions"], observed=True):
        parts = []
        for metric in METRICS:
            r = grp[f"{metric}_mean_sparsemax"] / grp[f"{metric}_mean_softmax"]
            first, last = r.iloc[0], r.iloc[-1]
            parts.append(
                f"{metric.upper()} ratio {first:.2f} at L={grp['length'].iloc[0]} → "
                f"{last:.2f} at L={grp['length'].iloc[-1]}"
            )
        lines.append(f"K={k}, {prop}: " + "; ".join(parts) + ".")
    nc = df.groupby("loss")["n_not_converged"].sum()
    lines.append(
        "Fits that hit the 100-iteration cap (ConvergenceWarning), over all lambdas: "
        + ", ".join(f"{loss} {int(nc.get(loss, 0))}" for loss in LOSSES)
        + f" (of {len(df) // len(LOSSES) * n_lambdas} fits each)."
    )
    return lines


def _lambda_lines(df):
    lines = []
    for (loss, k), grp in df.groupby(["loss", "n_labels"]):
        counts = grp["lambda_jsd"].value_counts().sort_index()
        txt = ", ".join(f"{lam:.0e}: {c}" for lam, c in counts.items())
        lines.append(f"{loss}, K={k} (lambda chosen for JSD → count): {txt}")
    return lines


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def rst_table(header, rows):
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        for j, cell in enumerate(row):
            out.append(("   * - " if j == 0 else "     - ") + (cell or "\\ "))
    return "\n".join(out)


def describe(cfg, args, elapsed):
    return [
        f"K ∈ {{{', '.join(map(str, cfg['n_labels']))}}}, proportions "
        f"{' and '.join(cfg['proportions'])}, "
        f"L ∈ {cfg['lengths'][0]}…{cfg['lengths'][-1]} ({len(cfg['lengths'])} values), "
        f"{cfg['n_train']} train / {cfg['n_dev']} dev / {cfg['n_test']} test documents "
        f"drawn in one call, {cfg['n_repeats']} repetitions (seed {args.seed}; a new "
        "prior, word distributions and documents per repetition).",
        "Model: SparsemaxMultiLabel(loss=softmax|sparsemax) on the proportion matrix Q, "
        f"StandardScaler on the word counts, L-BFGS with max_iter={args.max_iter}.",
        f"lambda ∈ {{{', '.join(f'{lam:.0e}' for lam in cfg['lambdas'])}}} mapped to "
        f"C = 1/(lambda·n), n = {cfg['n_train']}; chosen on the dev documents, "
        "separately for JSD and for MSE.",
        "Metrics on the test documents: MSE = Σ(p−q)²/(N·K); JSD = mean over documents "
        "of the Jensen–Shannon divergence with natural log (≤ ln 2). Cells: mean ± std "
        "over repetitions (scaled as in the header); bold = lower mean. The last column "
        "is the mean number of labels in the support of the sparsemax estimate "
        "(λ chosen for JSD) and, in parentheses, of the true proportions.",
        f"Run: sksparsemax {sksparsemax.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}, {args.n_jobs} job(s), BLAS 1 thread, "
        f"{elapsed:.0f} s wall time.",
    ]


def write_outputs(df, summary, cfg, args, elapsed, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    df.to_csv(out_dir / "label_proportions.csv", index=False, float_format="%.6g")
    plot(summary, out_dir / "label_proportions.png")
    header, rows = table_rows(summary)
    setup = describe(cfg, args, elapsed)
    findings = overall_lines(df, summary, len(cfg["lambdas"]))
    command = "python benchmarks/bench_label_proportions.py --write" + (
        " --smoke" if args.smoke else ""
    )

    md = ["# Label-proportion estimation: sparsemax vs softmax", ""]
    md += [
        "Simulation of Martins & Astudillo (2016, §5.1). Regenerate with "
        f"`{command}`.",
        "",
    ]
    md += [f"- {line}" for line in setup] + [""]
    md += ["![JSD and MSE against document length](label_proportions.png)", ""]
    md += ["## Findings", ""] + [f"- {line}" for line in findings] + [""]
    md += ["## Test JSD and MSE (mean ± std over repetitions)", ""]
    md += [markdown_table(header, rows), ""]
    md += ["## Regularisation chosen on the dev documents", ""]
    md += [f"- {line}" for line in _lambda_lines(df)] + [""]
    (out_dir / "label_proportions.md").write_text("\n".join(md), encoding="utf-8")

    rst = [f"Regenerate with ``{command}``.", ""]
    rst += [f"- {_rst_escape(line)}" for line in setup] + [""]
    rst += [".. rubric:: Findings", ""] + [f"- {_rst_escape(line)}" for line in findings]
    rst += ["", ".. rubric:: Test JSD and MSE (mean ± std over repetitions)", ""]
    rst += [rst_table(header, rows), ""]
    rst += [".. rubric:: Regularisation chosen on the dev documents", ""]
    rst += [f"- {_rst_escape(line)}" for line in _lambda_lines(df)] + [""]
    (out_dir / "label_proportions.rst").write_text("\n".join(rst), encoding="utf-8")


def _rst_escape(text):
    for ch in ("\\", "*", "`", "|", "_"):
        text = text.replace(ch, "\\" + ch)
    return text


def plot(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = sorted(summary["n_labels"].unique())
    props = [p for p in ("uniform", "random") if p in set(summary["proportions"])]
    colors = {"softmax": "tab:blue", "sparsemax": "tab:red"}
    fig, axes = plt.subplots(
        len(ks), len(props), figsize=(5.2 * len(props), 3.6 * len(ks)), squeeze=False
    )
    for i, k in enumerate(ks):
        for j, prop in enumerate(props):
            ax = axes[i, j]
            ax2 = ax.twinx()
            grp = summary[(summary["n_labels"] == k) & (summary["proportions"] == prop)]
            grp = grp.sort_values("length")
            for loss in LOSSES:
                for metric, axis, style, marker in (
                    ("jsd", ax, "-", "o"),
                    ("mse", ax2, "--", "s"),
                ):
                    std = grp[f"{metric}_std_{loss}"].fillna(0.0)
                    axis.errorbar(
                        grp["length"],
                        grp[f"{metric}_mean_{loss}"],
                        yerr=std,
                        color=colors[loss],
                        linestyle=style,
                        marker=marker,
                        markersize=3.5,
                        capsize=2,
                        label=f"{metric.upper()} {loss}",
                    )
            ax.set_title(f"K = {k}, {prop} proportions")
            ax.set_xlabel("document length L")
            ax.set_ylabel("JSD (solid)")
            ax2.set_ylabel("MSE (dashed)")
            ax.set_ylim(bottom=0)
            ax2.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            if i == 0 and j == 0:
                h1, l1 = ax.get_legend_handles_labels()
                h2, l2 = ax2.get_legend_handles_labels()
                ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper right")
    fig.suptitle("Label-proportion estimation (test set, mean ± std over repetitions)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------- main
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny settings (seconds)")
    parser.add_argument("--write", action="store_true", help="write the results files")
    parser.add_argument(
        "--results-dir",
        default=str(ROOT / "benchmarks" / "results"),
        help="where --write puts the files (default: benchmarks/results)",
    )
    parser.add_argument("--repeats", type=int, default=None, help="repetitions (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=1, help="parallel settings (joblib)")
    parser.add_argument("--max-iter", type=int, default=100, help="L-BFGS iterations (paper: 100)")
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    cfg = dict(SMOKE if args.smoke else FULL)
    if args.repeats is not None:
        cfg["n_repeats"] = args.repeats
    start = time.perf_counter()
    df = run(cfg, seed=args.seed, n_jobs=args.n_jobs, max_iter=args.max_iter, verbose=not args.quiet)
    elapsed = time.perf_counter() - start
    summary = summarise(df)
    header, rows = table_rows(summary)
    print(markdown_table(header, rows))
    print()
    for line in overall_lines(df, summary, len(cfg["lambdas"])):
        print(line)
    print(f"\nwall time: {elapsed:.1f} s")
    if args.write:
        write_outputs(df, summary, cfg, args, elapsed, args.results_dir)
        print(f"wrote label_proportions.{{md,rst,csv,png}} to {args.results_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
