"""The main job: sparse models next to their softmax/logistic counterparts.

``python -m sksparsemax`` (or the ``sksparsemax`` console script) fits, on
built-in data,

1. multi-class: :class:`SparsemaxClassifier`, :class:`SparseSoftmaxClassifier`
   and :class:`EntmaxClassifier` next to ``LogisticRegression`` (the digits
   data bundled with scikit-learn);
2. multi-label: :class:`SparsemaxMultiLabel` (sparsemax and softmax losses)
   next to one-vs-rest logistic regression (the emotions data bundled with
   this package);
3. a small label-proportion simulation (Martins & Astudillo, 2016, §5.1):
   sparsemax versus softmax proportions, scored by Jensen-Shannon divergence
   and mean squared error, at one document length and along a range of them;

and prints a report (:mod:`sksparsemax._report`): per task a title, what was
fitted on what, a table, a legend and closing lines computed from the
numbers; progress goes to stderr. The report folder (``--report-dir``,
default ``sksparsemax-report``) gets ``report.md``, ``results.json`` and, when
matplotlib is installed, the figure ``report.png``. ``--data`` runs the same
comparison on a user's MULAN ARFF file or CSV file instead.

The fits run with one BLAS/OpenMP thread by default (``--threads``), as the
benchmarks do: every model of the table is timed alike, and on a small or
shared machine threaded BLAS on such small problems mostly measures thread
contention. Every kernel the fits use is compiled (numba backend) or loaded
before the first timed fit (:func:`_warm_up`), and a fit time is the best
of two fits (one when a fit takes over a second).
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from . import _report
from ._cli_data import (
    UsageError,
    _check_output,
    _check_report_dir,
    _is_sparse,
    _write,
    check_user_split,
    read_user_data,
)

__all__ = ["main"]

DEFAULT_REPORT_DIR = "sksparsemax-report"


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def _print(text):
    """Print the report; a console that cannot show ↑ or — gets a stand-in."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        text = text.encode(encoding, errors="replace").decode(encoding, errors="replace")
    print(text)


def _numba_cache_cold():
    """Whether the numba backend is in effect with no on-disk cache of the
    loss kernels yet (their index files are missing): None without numba."""
    from .transforms import _backend

    if not _backend.numba_enabled():
        return None
    try:
        from .losses import _softmax_numba, _sparsemax_numba

        return not all(Path(m.kernel._cache._cache_file._index_path).is_file()
                       for m in (_softmax_numba, _sparsemax_numba))
    except Exception:  # numba's private cache layout changed: say nothing wrong
        return False


def _warm_up(sparse=False):
    """Run every mapping, and a fit of each model the job times, on tiny data.

    With the optional numba backend the first call of each kernel compiles
    it (or loads it from the on-disk cache); that one-off cost must not be
    charged to the first model of the table that uses it. The multi-label
    fits use their own specialisations (2-D targets, int64 indicators and
    float64 proportions), and CSR input (``sparse``) its own kernels.
    """
    import scipy.sparse as sp

    from .linear_model import (
        EntmaxClassifier,
        SparsemaxClassifier,
        SparsemaxMultiLabel,
        SparseSoftmaxClassifier,
    )
    from .transforms import entmax15, entmax_bisect, softmax, sparse_softmax, sparsemax

    cold = _numba_cache_cold()
    if cold:
        _progress("compiling the numba kernels (first run only: the numba cache keeps them) ...")
    start = time.perf_counter()
    z = np.array([[0.5, 0.2, -0.1], [1.0, 0.0, -1.0]])
    for func in (softmax, sparsemax, entmax15):
        func(z)
    sparse_softmax(z, 2)
    entmax_bisect(z, 1.7)
    # The fits pick their kernels by size (a fused loss kernel from 2**18
    # multiply-adds, blocked triangular products from 64 features): data just
    # above both, so that every one the job uses is compiled here.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 72))
    y = np.arange(400) % 12
    Y = np.eye(12, dtype=np.int64)[y]
    Y[::4, 0] = 1
    inputs = [X, sp.csr_matrix(X)] if sparse else [X]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 3 iterations: not converged
        for data in inputs:
            for model in (SparsemaxClassifier(max_iter=3), EntmaxClassifier(max_iter=3),
                          SparseSoftmaxClassifier(k=3, max_iter=3)):
                model.fit(data, y).predict_proba(data)
            for loss in ("sparsemax", "softmax"):
                for target in (Y, Y / Y.sum(axis=1, keepdims=True)):
                    SparsemaxMultiLabel(loss=loss, max_iter=3).fit(data, target).predict(data)
    elapsed = time.perf_counter() - start
    if cold or (cold is not None and elapsed > 2.0):  # compiled, or some of them
        _progress(f"  numba kernels compiled in {elapsed:.1f} s (not counted in the fit times)")


def _thread_limit(threads):
    """Context limiting BLAS/OpenMP threads to ``threads`` (0: no limit)."""
    import contextlib

    if threads == 0:
        return contextlib.nullcontext()
    # threadpoolctl comes with scikit-learn (one of its requirements).
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads)


def _timed_fit(model, X, Y):
    """Fit ``model``; return the best wall time of two fits (one if slow)."""
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        model.fit(X, Y)
        best = min(best, time.perf_counter() - start)
        if best > 1.0:
            break
    return best


def _fit(model_name, model, X, Y, scale=True):
    """Fit ``model`` (after a StandardScaler when ``scale``); return
    ``(fitted, fit time, converged)``; a ConvergenceWarning is not printed but
    reported (``converged`` False). Sparse ``X`` is scaled without centring.
    The timed fit comes after a two-iteration fit (compiles what is left)."""
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _progress(f"  fitting {model_name} ...")
    if scale:
        model = make_pipeline(StandardScaler(with_mean=not _is_sparse(X)), model)
    # A short untimed fit first, on the same data: whatever kernel the warm-up
    # missed is compiled now, not in the timed fit.
    short = clone(model).set_params(**{k: 2 for k in model.get_params() if k.endswith("max_iter")})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", ConvergenceWarning)
        short.fit(X, Y)
        warnings.simplefilter("always", ConvergenceWarning)
        fit_time = _timed_fit(model, X, Y)
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return model, fit_time, converged


def _max_iter(quick):
    return 100 if quick else 300


def _support_sizes(P):
    return np.count_nonzero(np.asarray(P) > 0, axis=1)


def _jensen_shannon(P, Q):
    """Mean Jensen-Shannon divergence (natural log) between rows of P and Q."""
    M = (P + Q) / 2

    def kl(A, B):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(A > 0, A * np.log(A / B), 0.0)
        return terms.sum(axis=1)

    return float(np.mean((kl(P, M) + kl(Q, M)) / 2))


def _row(task, name, model_name, fitted, fit_time, converged, P, scores):
    sizes = _support_sizes(P)
    return {
        "task": task,
        "data": name,
        "model": model_name,
        **scores,
        "mean_support": float(sizes.mean()),
        "fit_time_s": fit_time,
        "converged": converged,
        "n_features_in": int(fitted[-1].n_features_in_ if hasattr(fitted, "steps")
                             else fitted.n_features_in_),
        "support_hist": np.bincount(sizes, minlength=np.shape(P)[1] + 1).tolist(),
    }


# --------------------------------------------------------------------------- tasks
def _multiclass_models(quick, seed):
    from sklearn.linear_model import LogisticRegression

    from .linear_model import (
        EntmaxClassifier,
        SparsemaxClassifier,
        SparseSoftmaxClassifier,
    )

    max_iter = _max_iter(quick)
    return [
        ("LogisticRegression", LogisticRegression(max_iter=max_iter)),
        ("SparsemaxClassifier", SparsemaxClassifier(max_iter=max_iter)),
        ("SparseSoftmaxClassifier(k=3)", SparseSoftmaxClassifier(k=3, max_iter=max_iter)),
        ("EntmaxClassifier(alpha=1.5)", EntmaxClassifier(alpha=1.5, max_iter=max_iter)),
    ]


def run_multiclass(name, X_tr, X_te, y_tr, y_te, *, quick, seed):
    """Fit the multi-class models on a given train/test split."""
    from sklearn.metrics import accuracy_score, f1_score

    rows = []
    for model_name, model in _multiclass_models(quick, seed):
        pipe, fit_time, converged = _fit(model_name, model, X_tr, y_tr)
        pred = pipe.predict(X_te)
        scores = {"accuracy": accuracy_score(y_te, pred),
                  "macro_f1": f1_score(y_te, pred, average="macro")}
        rows.append(_row("multi-class", name, model_name, pipe, fit_time, converged,
                         pipe.predict_proba(X_te), scores))
    return rows


def run_multilabel(name, X_tr, Y_tr, X_te, Y_te, *, quick, seed):
    """Fit the multi-label models on a given train/test split."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.multiclass import OneVsRestClassifier

    from .linear_model import SparsemaxMultiLabel

    max_iter = _max_iter(quick)
    models = [
        (
            "OneVsRest(LogisticRegression)",
            OneVsRestClassifier(LogisticRegression(max_iter=max_iter)),
        ),
        ("SparsemaxMultiLabel", SparsemaxMultiLabel(max_iter=max_iter)),
        (
            "SparsemaxMultiLabel(loss='softmax')",
            SparsemaxMultiLabel(loss="softmax", max_iter=max_iter),
        ),
    ]
    keep = np.asarray(Y_tr.sum(axis=1)).ravel() > 0  # the paper drops unlabelled rows
    X_tr, Y_tr = X_tr[keep], Y_tr[keep]
    rows = []
    for model_name, model in models:
        pipe, fit_time, converged = _fit(model_name, model, X_tr, Y_tr)
        pred = pipe.predict(X_te)
        scores = {"micro_f1": f1_score(Y_te, pred, average="micro", zero_division=0),
                  "macro_f1": f1_score(Y_te, pred, average="macro", zero_division=0)}
        rows.append(_row("multi-label", name, model_name, pipe, fit_time, converged,
                         pipe.predict_proba(X_te), scores))
    return rows


_LENGTHS = (20, 50, 100, 200, 500, 1000)  # the document lengths of the curve
_QUICK_LENGTHS = (20, 200, 1000)


def _label_proportion_sizes(quick):
    return (300, 300) if quick else (1200, 1000)


def _proportion_fits(n_train, n_test, length, seed, timed):
    """Fit both losses on simulated documents of ``length`` words; return
    ``[(loss, fitted, fit time, converged, P, Q_test)]``."""
    from sklearn.preprocessing import StandardScaler

    from .datasets import make_label_proportions
    from .linear_model import SparsemaxMultiLabel

    X, _, Q = make_label_proportions(
        n_train + n_test, n_labels=10, document_length=length, random_state=seed
    )
    scaler = StandardScaler().fit(X[:n_train])
    X_tr, X_te = scaler.transform(X[:n_train]), scaler.transform(X[n_train:])
    fits = []
    for loss in ("sparsemax", "softmax"):
        model = SparsemaxMultiLabel(loss=loss)
        if timed:
            model, fit_time, converged = _fit(f"SparsemaxMultiLabel(loss='{loss}')", model,
                                              X_tr, Q[:n_train], scale=False)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X_tr, Q[:n_train])
            fit_time, converged = None, None
        fits.append((loss, model, fit_time, converged, model.predict_proba(X_te), Q[n_train:]))
    return fits


def run_label_proportions(*, quick, seed):
    """The paper's simulation: K = 10 labels, uniform proportions; the table at
    documents of L = 200 words, the curve along several lengths.

    Returns ``(rows, curve)``.
    """
    n_train, n_test = _label_proportion_sizes(quick)
    rows, curve = [], []
    for length in _QUICK_LENGTHS if quick else _LENGTHS:
        fits = _proportion_fits(n_train, n_test, length, seed, timed=length == 200)
        for loss, model, fit_time, converged, P, Q_te in fits:
            scores = {"jsd": _jensen_shannon(P, Q_te), "mse": float(np.mean((P - Q_te) ** 2))}
            curve.append({"document_length": length, "loss": loss, **scores})
            if length == 200:
                rows.append(_row("label proportions", "simulation K=10 L=200",
                                 f"SparsemaxMultiLabel(loss='{loss}')", model, fit_time,
                                 converged, P, scores))
    return rows, curve


# --------------------------------------------------------------------------- jobs
def _user_data(args):
    """Read and check --data before any fit: ``(kind, X, Y, note, split)``."""
    kind, X, Y, note = read_user_data(args.data, args.labels)
    return kind, X, Y, note, check_user_split(Path(args.data).name, kind, X, Y, args.seed)


def _user_task(args, data):
    kind, X, Y, note, parts = data
    name = Path(args.data).name
    _progress(f"[1/1] {kind}: {name} ({X.shape[0]} samples, {X.shape[1]} features)")
    if note:
        _progress(f"  {note}")
    try:
        if kind == "multi-class":
            rows = run_multiclass(name, *parts, quick=args.quick, seed=args.seed)
        else:
            X_tr, X_te, Y_tr, Y_te = parts
            rows = run_multilabel(name, X_tr, Y_tr, X_te, Y_te, quick=args.quick,
                                  seed=args.seed)
    except ValueError as exc:  # another problem of the data, found by the fits
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(f"{name}: the models cannot be fitted: {reason}") from None
    n_out = len(np.unique(Y)) if kind == "multi-class" else Y.shape[1]
    sizes = {"n_samples": X.shape[0], "n_train": parts[0].shape[0],
             "n_test": parts[1].shape[0], "n_features": X.shape[1], "n_outputs": n_out}
    return [_report.user_task(kind, name, rows, sizes, note)]


def _digits(quick, seed):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    if quick:  # a stratified third of the images
        X, _, y, _ = train_test_split(X, y, train_size=600, stratify=y, random_state=seed)
    return X, y


def _builtin_tasks(args):
    from sklearn.model_selection import train_test_split

    from .datasets import load_emotions

    X, y = _digits(args.quick, args.seed)
    _progress(f"[1/3] multi-class: digits ({X.shape[0]} samples, 10 classes)")
    split = train_test_split(X, y, test_size=_report.TEST_SIZE, stratify=y, random_state=args.seed)
    rows = run_multiclass("digits", *split, quick=args.quick, seed=args.seed)
    tasks = [_report.digits_task(rows, X.shape[0], split[0].shape[0], split[1].shape[0])]
    train = load_emotions(subset="train")
    test = load_emotions(subset="test")
    _progress(
        f"[2/3] multi-label: emotions ({train.data.shape[0]} train / "
        f"{test.data.shape[0]} test, {train.target.shape[1]} labels)"
    )
    Y_tr = np.asarray(train.target)
    rows = run_multilabel("emotions", train.data, Y_tr, test.data, np.asarray(test.target),
                          quick=args.quick, seed=args.seed)
    n_unlabelled = int((Y_tr.sum(axis=1) == 0).sum())
    tasks.append(_report.emotions_task(rows, Y_tr.shape[0] - n_unlabelled, n_unlabelled,
                                       test.data.shape[0]))
    _progress("[3/3] label proportions: simulated documents")
    rows, curve = run_label_proportions(quick=args.quick, seed=args.seed)
    tasks.append(_report.proportions_task(rows, curve, *_label_proportion_sizes(args.quick)))
    return tasks


# --------------------------------------------------------------------------- output
_COLUMNS = [
    "task",
    "data",
    "model",
    "accuracy",
    "micro_f1",
    "macro_f1",
    "jsd",
    "mse",
    "mean_support",
    "fit_time_s",
]


def _table(rows):
    frame = pd.DataFrame(rows)
    return frame[[c for c in _COLUMNS if c in frame.columns]]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sksparsemax",
        description=(
            "Fit sparsemax, top-k sparse-softmax and entmax models next to "
            "logistic/softmax ones; print a report and write it, with a figure "
            "and the results, to a folder."
        ),
    )
    parser.add_argument(
        "--data",
        metavar="PATH",
        help="a MULAN ARFF file (.arff/.arff.gz, labels from its XML file or "
        "--labels) or a CSV file (with --labels); default: built-in data",
    )
    parser.add_argument(
        "--labels",
        metavar="COLS",
        help="comma-separated label column names: one column = multi-class, "
        "several 0/1 columns = multi-label; a MULAN file's other labels are dropped",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smaller, faster run: fewer samples and iterations (approximate scores)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--output", metavar="FILE", help="also write the table (.csv or .json)")
    parser.add_argument(
        "--report-dir",
        metavar="DIR",
        default=DEFAULT_REPORT_DIR,
        help="folder for report.md, results.json and report.png "
        f"(default: ./{DEFAULT_REPORT_DIR})",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="BLAS/OpenMP threads for the fits (default 1, the same for every "
        "model; 0: the libraries' own default)",
    )
    return parser


def main(argv=None):
    """Run the main job; return the exit status (0 ok, 2 bad usage or data)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.output:
            _check_output(args.output)
        if args.threads < 0:
            raise UsageError(f"--threads {args.threads}: use a positive number, or 0")
        _check_report_dir(args.report_dir)
        data = _user_data(args) if args.data else None
        _warm_up(sparse=data is not None and _is_sparse(data[1]))
        with _thread_limit(args.threads):
            tasks = _user_task(args, data) if data else _builtin_tasks(args)
        settings = {"quick": args.quick, "seed": args.seed, "threads": args.threads,
                    "max_iter": _max_iter(args.quick)}
        try:
            text = _report.write_report(tasks, settings, Path(args.report_dir))
        except OSError as exc:
            raise UsageError(f"cannot write the report to --report-dir "
                             f"{args.report_dir!r}: {exc.strerror or exc}") from None
        _print(text)
        if args.output:
            _write(_table([r for t in tasks for r in t["rows"]]), args.output)
            _progress(f"table written to {args.output}")
    except UsageError as exc:
        print(f"sksparsemax: error: {exc}", file=sys.stderr)
        return 2
    return 0
