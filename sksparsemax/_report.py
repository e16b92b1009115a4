"""The main job's report: what a person reads (see :mod:`sksparsemax._cli`).

A *task* is a dict: ``key`` (``"multi-class"``, ``"multi-label"`` or
``"label proportions"``), ``title``, ``description`` (data, split, what is
compared), ``notes``, ``baseline`` (the model the others are compared with),
``n_outputs`` and ``output_word`` (10 ``"classes"``...), ``sizes``, ``rows``
(one per model: scores, ``mean_support``, ``support_hist``, ``fit_time_s``),
for the simulation ``curve`` (scores along document lengths), and
``closing``: sentences computed from the rows, never written by hand.

:func:`write_report` prints nothing: it writes ``report.md``,
``results.json`` and (with matplotlib) ``report.png`` to the report folder
and returns the text report, every line at most :data:`WIDTH` characters.
"""

import json
import math
import textwrap

WIDTH = 100
#: The held-out share of the job's splits (the report states it from here).
TEST_SIZE = 0.3
_SPLIT = f"{100 - round(100 * TEST_SIZE)}%", f"{round(100 * TEST_SIZE)}%"
DASH = "—"

# (row key, header, format) per task; the arrow says which way is better.
_COLUMNS = {
    "multi-class": [("accuracy", "accuracy % ↑", "pct"), ("macro_f1", "macro F1 % ↑", "pct")],
    "multi-label": [("micro_f1", "micro F1 % ↑", "pct"), ("macro_f1", "macro F1 % ↑", "pct")],
    "label proportions": [("jsd", "JSD ↓", ".4f"), ("mse", "MSE ↓", ".5f")],
}
_COMMON = [("mean_support", "mean support", ".2f"), ("fit_time_s", "fit s ↓", ".3f")]

_LEGEND = {
    "accuracy": "accuracy: % of held-out samples whose predicted class is right.",
    "micro_f1": "micro F1: F1 score of all (sample, label) decisions pooled, in %.",
    "macro_f1": "macro F1: F1 score of each {word_1} averaged with equal weight, in %.",
    "jsd": "JSD: Jensen-Shannon divergence (natural log) between the predicted and the "
           "true label proportions of a document, averaged; 0 means identical.",
    "mse": "MSE: mean squared error between the predicted and the true proportions.",
    "mean_support": "mean support: average number of the {n} {word} that get a nonzero "
                    "predicted probability (not a score: fewer means sparser; softmax-type "
                    "models always use all {n}).",
    "fit_time_s": "fit s: seconds of one fit (best of two, numba compilation excluded).",
}


def _fmt(value, how):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{100 * value:.1f}" if how == "pct" else f"{value:{how}}"


def _signed(value, digits=1):
    return f"{value:+.{digits}f}".replace("-", "−")


def _wrap(text, indent="", hang="  "):
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + hang,
                         break_on_hyphens=False, break_long_words=False) or [""]


# --------------------------------------------------------------------------- closing lines
def _classification_closing(task, key, label):
    rows = {r["model"]: r for r in task["rows"]}
    base_name = task["baseline"]
    base = rows[base_name]
    b = round(100 * base[key], 1)
    lines = []
    for name, row in rows.items():
        if name == base_name:
            continue
        a = round(100 * row[key], 1)
        lines.append(
            f"{name}: {label} {a:.1f}% vs {base_name} {b:.1f}% ({_signed(a - b)} points); "
            f"{row['mean_support']:.2f} of {task['n_outputs']} {task['output_word']} nonzero "
            f"per prediction on average ({base_name}: {base['mean_support']:.2f})."
        )
    return lines


def _proportions_closing(task):
    rows = {r["model"].split("'")[1]: r for r in task["rows"]}
    sp, so = rows["sparsemax"], rows["softmax"]
    a, b = round(sp["jsd"], 4), round(so["jsd"], 4)
    change = f"{abs(100 * (1 - a / b)):.0f}% {'lower' if a < b else 'higher'}" if b else "n/a"
    lines = [
        f"sparsemax loss: JSD {a:.4f} vs softmax loss {b:.4f} ({change}), MSE "
        f"{sp['mse']:.5f} vs {so['mse']:.5f}; {sp['mean_support']:.2f} of "
        f"{task['n_outputs']} labels nonzero on average (softmax loss: "
        f"{so['mean_support']:.2f})."
    ]
    by_length = {}
    for point in task["curve"]:
        by_length.setdefault(point["document_length"], {})[point["loss"]] = point["jsd"]
    lengths = sorted(by_length)
    wins = sum(v["sparsemax"] < v["softmax"] for v in by_length.values())
    lines.append(
        f"Along document lengths {lengths[0]} to {lengths[-1]} words: the sparsemax loss has "
        f"the lower JSD at {wins} of {len(lengths)} lengths (the figure shows the curve)."
    )
    return lines


def _closing(task):
    if task["key"] == "label proportions":
        return _proportions_closing(task)
    key, label = (("accuracy", "accuracy") if task["key"] == "multi-class"
                  else ("micro_f1", "micro F1"))
    return _classification_closing(task, key, label)


def _convergence_notes(task, max_iter):
    late = [r["model"] for r in task["rows"] if r.get("converged") is False]
    if not late:
        return []
    return [f"not converged within max_iter={max_iter} (scores approximate): "
            + ", ".join(late) + "."]


# --------------------------------------------------------------------------- tasks
def _task(key, title, description, rows, *, baseline, n_outputs, word, sizes, notes=()):
    task = {"key": key, "title": title, "description": description, "notes": list(notes),
            "baseline": baseline, "n_outputs": int(n_outputs), "output_word": word,
            "sizes": {k: int(v) for k, v in sizes.items()}, "rows": rows}
    return task


def digits_task(rows, n_samples, n_train, n_test):
    return _task(
        "multi-class", "Multi-class classification: handwritten digits",
        f"The digits data of scikit-learn ({n_samples} images of 8×8 pixels, i.e. 64 features, "
        f"10 classes): fitted on a stratified {_SPLIT[0]} ({n_train} images), scored on the "
        f"held-out {_SPLIT[1]} ({n_test}); {len(rows) - 1} sparse classifiers next to "
        "LogisticRegression.",
        rows, baseline="LogisticRegression", n_outputs=10, word="classes",
        sizes={"n_samples": n_samples, "n_train": n_train, "n_test": n_test,
               "n_features": 64, "n_outputs": 10})


def emotions_task(rows, n_train, n_unlabelled, n_test):
    dropped = f", {n_unlabelled} without a label dropped" if n_unlabelled else ""
    return _task(
        "multi-label", "Multi-label classification: emotions in music",
        f"The MULAN emotions data bundled with sksparsemax (72 audio features, 6 emotion "
        f"labels): fitted on its standard training part ({n_train} songs"
        f"{dropped}), scored on its {n_test} held-out test songs; SparsemaxMultiLabel with "
        "the sparsemax and the softmax loss next to one-vs-rest LogisticRegression.",
        rows, baseline="OneVsRest(LogisticRegression)", n_outputs=6, word="labels",
        sizes={"n_samples": n_train + n_unlabelled + n_test, "n_train": n_train,
               "n_test": n_test, "n_features": 72, "n_outputs": 6})


def proportions_task(rows, curve, n_train, n_test):
    lengths = sorted({p["document_length"] for p in curve})
    task = _task(
        "label proportions", "Label proportions: the simulation of Martins & Astudillo (2016)",
        f"Simulated documents (K = 10 labels, L = 200 words per document, {n_train} for "
        f"fitting and {n_test} held out): each model predicts the proportions of the labels "
        "in a document; SparsemaxMultiLabel with the sparsemax loss next to the softmax loss. "
        f"The curve repeats this for L = {', '.join(map(str, lengths))} words.",
        rows, baseline="SparsemaxMultiLabel(loss='softmax')", n_outputs=10, word="labels",
        sizes={"n_samples": n_train + n_test, "n_train": n_train, "n_test": n_test,
               "n_features": 10, "n_outputs": 10})
    task["curve"] = curve
    return task


def user_task(kind, name, rows, sizes, note):
    n, word = sizes["n_outputs"], "classes" if kind == "multi-class" else "labels"
    what = (f"{len(rows) - 1} sparse classifiers next to LogisticRegression"
            if kind == "multi-class"
            else "SparsemaxMultiLabel with the sparsemax and the softmax loss next to "
                 "one-vs-rest LogisticRegression")
    strat = "a stratified " if kind == "multi-class" else ""
    return _task(
        kind, f"{kind.capitalize()} classification: {name}",
        f"The file {name} ({sizes['n_samples']} rows, {sizes['n_features']} features, "
        f"{n} {word}): fitted on {strat}{_SPLIT[0]} ({sizes['n_train']} rows), scored on the "
        f"held-out {_SPLIT[1]} "
        f"({sizes['n_test']}); {what}.",
        rows, baseline=("LogisticRegression" if kind == "multi-class"
                        else "OneVsRest(LogisticRegression)"),
        n_outputs=n, word=word, sizes=sizes, notes=[note] if note else ())


# --------------------------------------------------------------------------- rendering
def _cells(task):
    columns = [("model", "model", None)] + _COLUMNS[task["key"]] + _COMMON
    header = [c[1] for c in columns]
    body = [[row["model"]] + [_fmt(row.get(k), how) for k, _, how in columns[1:]]
            for row in task["rows"]]
    return columns, header, body


def _text_table(task):
    _, header, body = _cells(task)
    widths = [max(len(r[j]) for r in [header] + body) for j in range(len(header))]

    def line(cells):
        first = cells[0].ljust(widths[0])
        return "  ".join([first] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])])

    return [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in body]


def _legend(task):
    columns, _, body = _cells(task)
    word_1 = task["output_word"][:-2] if task["output_word"] == "classes" else "label"
    lines = [_LEGEND[k].format(n=task["n_outputs"], word=task["output_word"], word_1=word_1)
             for k, _, _ in columns[1:]]
    lines.append("↑: higher is better; ↓: lower is better.")
    if any(DASH in cell for row in body for cell in row):
        lines.append(f"{DASH}: the score could not be computed for this model.")
    return lines


def _task_parts(task, settings):
    task["closing"] = _closing(task)
    notes = task["notes"] + _convergence_notes(task, settings["max_iter"])
    return task["description"], notes


def render_text(tasks, settings, footer):
    """The printed report: a list of lines, none wider than :data:`WIDTH`."""
    mode = ("quick run: fewer samples and iterations, scores approximate"
            if settings["quick"] else "full run")
    out = _wrap("sksparsemax: sparse models next to their softmax/logistic counterparts "
                f"({mode}; seed {settings['seed']}).", hang="")
    for i, task in enumerate(tasks, 1):
        sentence, notes = _task_parts(task, settings)
        out += [""] + _wrap(f"{i}. {task['title']}", hang="") + _wrap(sentence, hang="")
        out += [line for note in notes for line in _wrap(f"Note: {note}", hang="")]
        out += [""] + _text_table(task) + [""]
        out += [line for item in _legend(task) for line in _wrap(item, "  ")]
        out += ["", "What the numbers show:"]
        out += [line for item in task["closing"] for line in _wrap(f"- {item}", "")]
    return out + [""] + [line for item in footer for line in _wrap(item, hang="")]


def render_markdown(tasks, settings, figure):
    mode = "quick run (approximate)" if settings["quick"] else "full run"
    out = ["# sksparsemax: sparse models next to their softmax/logistic counterparts", "",
           f"{mode.capitalize()}, seed {settings['seed']}, {settings['threads']} BLAS "
           "thread(s) (0: the libraries' default).", ""]
    if figure:
        out += [f"![the job's figure]({figure})", ""]
    for i, task in enumerate(tasks, 1):
        sentence, notes = _task_parts(task, settings)
        out += [f"## {i}. {task['title']}", "", sentence, ""]
        out += [f"*Note: {note}*" for note in notes] + ([""] if notes else [])
        _, header, body = _cells(task)
        out += ["| " + " | ".join(header) + " |",
                "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
        out += ["| " + " | ".join(f"`{r}`" if j == 0 else r for j, r in
                                  enumerate(row)) + " |" for row in body]
        out += [""] + [f"- {item}" for item in _legend(task)] + ["", "**What the numbers show:**",
                                                                 ""]
        out += [f"- {item}" for item in task["closing"]] + [""]
    return "\n".join(out)


def write_report(tasks, settings, folder):
    """Write ``report.md``, ``results.json`` and the figure to ``folder``;
    return the printed report (a string)."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    figure, reason = "report.png", None
    try:
        from ._figure import draw

        draw(tasks, folder / figure)
    except ImportError:
        figure, reason = None, "the figure needs matplotlib: pip install matplotlib"
    except Exception as exc:  # a broken matplotlib set-up must not lose the report
        figure, reason = None, f"matplotlib failed ({type(exc).__name__}: {exc})"
    written = ", ".join(["report.md", "results.json"] + ([figure] if figure else []))
    footer = [f"Written to {folder}{'' if str(folder).endswith('/') else '/'}: {written}."]
    if reason:
        footer.append(f"No figure: {reason}.")
    text = render_text(tasks, settings, footer)
    markdown = render_markdown(tasks, settings, figure)
    if reason:
        markdown += f"\nNo figure: {reason}.\n"
    (folder / "report.md").write_text(markdown, encoding="utf-8")
    results = {"settings": settings, "tasks": tasks}
    (folder / "results.json").write_text(json.dumps(results, indent=2, default=float) + "\n",
                                         encoding="utf-8")
    return "\n".join(text)
