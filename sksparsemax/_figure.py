"""The main job's figure (matplotlib, an optional dependency).

:func:`draw` raises ImportError when matplotlib is missing; the report says
how to get it. No pyplot: the figure never touches a global backend.
"""

import math


def _score_panel(ax, task):
    key, label = (("accuracy", "accuracy") if task["key"] == "multi-class"
                  else ("micro_f1", "micro F1"))
    rows = task["rows"]
    values = [100 * r[key] for r in rows]
    colors = ["0.6" if r["model"] == task["baseline"] else "tab:blue" for r in rows]
    y = range(len(rows))
    ax.barh(y, values, color=colors)
    ax.set_yticks(list(y), [r["model"] for r in rows], fontsize=7)
    ax.invert_yaxis()
    low = min(values)
    ax.set_xlim(max(0.0, math.floor(low / 5) * 5 - 5), 100)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.1f}", va="center", fontsize=7)
    ax.set_xlabel(f"{label} on held-out data, % (higher is better)", fontsize=8)
    ax.set_title(f"{task['title'].split(':')[0]}: {label}\n(grey: the baseline)", fontsize=9)


def _support_panel(ax, task):
    n = task["n_outputs"]
    width = 0.8 / len(task["rows"])
    for j, row in enumerate(task["rows"]):
        hist = row["support_hist"]
        total = sum(hist) or 1
        xs = [k + (j - (len(task["rows"]) - 1) / 2) * width for k in range(len(hist))]
        ax.bar(xs, [100 * h / total for h in hist], width=width, label=row["model"])
    ax.set_xticks(range(n + 1))
    ax.tick_params(labelsize=7)
    ax.set_xlabel(f"number of the {n} {task['output_word']} with a nonzero probability",
                  fontsize=8)
    ax.set_ylabel("% of predictions", fontsize=8)
    ax.set_title(f"{task['title'].split(':')[0]}: support sizes", fontsize=9)
    ax.legend(fontsize=6)


def _curve_panel(ax, task):
    for loss, style in (("sparsemax", "o-"), ("softmax", "s--")):
        points = sorted((p["document_length"], p["jsd"]) for p in task["curve"]
                        if p["loss"] == loss)
        ax.plot([p[0] for p in points], [p[1] for p in points], style, label=f"{loss} loss")
    ax.set_xscale("log")
    lengths = sorted({p["document_length"] for p in task["curve"]})
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.minorticks_off()
    ax.set_xlabel("document length L (words)", fontsize=8)
    ax.set_ylabel("JSD to the true proportions (lower is better)", fontsize=8)
    ax.set_title("Label proportions: error against document length", fontsize=9)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)


def draw(tasks, path):
    """Write the figure of ``tasks`` (see :mod:`sksparsemax._report`) to ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = [(_score_panel, t) for t in tasks if t["key"] != "label proportions"]
    panels += [(_support_panel, t) for t in tasks]
    panels += [(_curve_panel, t) for t in tasks if t.get("curve")]
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(5.2 * ncols, 3.8 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, (panel, task) in zip(axes, panels):
        panel(ax, task)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    fig.savefig(path, dpi=110)
