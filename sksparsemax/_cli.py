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
   and mean squared error;

and prints one table (scores, mean support size of the predicted
distributions, fit time), with progress on stderr. ``--data`` runs the same
comparison on a user's MULAN ARFF file or CSV file instead.

The fits run with one BLAS/OpenMP thread by default (``--threads``), as the
benchmarks do: every model of the table is timed alike, and on a small or
shared machine threaded BLAS on such small problems mostly measures thread
contention.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["main"]


class UsageError(Exception):
    """A problem with the command line or the user's data: one line, exit 2."""


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def _warm_up():
    """Run every mapping, and a fit of each compiled loss, on tiny data first.

    With the optional numba backend the first call of each kernel compiles
    it (or loads it from the on-disk cache); that one-off cost must not be
    charged to the first model of the table that uses it.
    """
    import warnings

    from .linear_model import SparsemaxClassifier, SparsemaxMultiLabel, SparseSoftmaxClassifier
    from .transforms import entmax15, entmax_bisect, softmax, sparse_softmax, sparsemax

    z = np.array([[0.5, 0.2, -0.1], [1.0, 0.0, -1.0]])
    for func in (softmax, sparsemax, entmax15):
        func(z)
    sparse_softmax(z, 2)
    entmax_bisect(z, 1.7)
    # The fits' compiled kernels (sparsemax, top-k, softmax losses) and the
    # whitening's products, on dense float64 data like the job's.
    X = np.linspace(-1.0, 1.0, 36).reshape(12, 3) ** 3
    y = np.arange(12) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 3 iterations: not converged
        for model in (
            SparsemaxClassifier(max_iter=3),
            SparseSoftmaxClassifier(k=2, max_iter=3),
            SparsemaxMultiLabel(loss="softmax", max_iter=3),
        ):
            model.fit(X, y)


def _thread_limit(threads):
    """Context limiting BLAS/OpenMP threads to ``threads`` (0: no limit)."""
    import contextlib

    if threads == 0:
        return contextlib.nullcontext()
    # threadpoolctl comes with scikit-learn (one of its requirements).
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads)


def _timed_fit(model, X, Y):
    start = time.perf_counter()
    model.fit(X, Y)
    return time.perf_counter() - start


def _fit_scaled(model_name, model, X, Y):
    """Fit ``model`` after a StandardScaler; return ``(pipeline, fit time)``.

    Sparse ``X`` is scaled without centring, which would make it dense.
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _progress(f"  fitting {model_name} ...")
    pipe = make_pipeline(StandardScaler(with_mean=not _is_sparse(X)), model)
    return pipe, _timed_fit(pipe, X, Y)


def _max_iter(quick):
    return 100 if quick else 300


def _mean_support(P):
    return float(np.count_nonzero(P > 0, axis=1).mean())


def _jensen_shannon(P, Q):
    """Mean Jensen-Shannon divergence (natural log) between rows of P and Q."""
    M = (P + Q) / 2

    def kl(A, B):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(A > 0, A * np.log(A / B), 0.0)
        return terms.sum(axis=1)

    return float(np.mean((kl(P, M) + kl(Q, M)) / 2))


# --------------------------------------------------------------------------- tasks
def _multiclass_models(quick, seed):
    from sklearn.linear_model import LogisticRegression

    from .linear_model import EntmaxClassifier, SparsemaxClassifier, SparseSoftmaxClassifier

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
        pipe, fit_time = _fit_scaled(model_name, model, X_tr, y_tr)
        pred = pipe.predict(X_te)
        rows.append(
            {
                "task": "multi-class",
                "data": name,
                "model": model_name,
                "accuracy": accuracy_score(y_te, pred),
                "macro_f1": f1_score(y_te, pred, average="macro"),
                "mean_support": _mean_support(pipe.predict_proba(X_te)),
                "fit_time_s": fit_time,
            }
        )
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
        pipe, fit_time = _fit_scaled(model_name, model, X_tr, Y_tr)
        pred = pipe.predict(X_te)
        proba = pipe.predict_proba(X_te)
        rows.append(
            {
                "task": "multi-label",
                "data": name,
                "model": model_name,
                "micro_f1": f1_score(Y_te, pred, average="micro", zero_division=0),
                "macro_f1": f1_score(Y_te, pred, average="macro", zero_division=0),
                "mean_support": _mean_support(np.asarray(proba)),
                "fit_time_s": fit_time,
            }
        )
    return rows


def run_label_proportions(*, quick, seed):
    """The paper's simulation, one setting: K = 10 labels, uniform proportions."""
    from sklearn.preprocessing import StandardScaler

    from .datasets import make_label_proportions
    from .linear_model import SparsemaxMultiLabel

    n_train, n_test = (300, 300) if quick else (1200, 1000)
    X, _, Q = make_label_proportions(
        n_train + n_test, n_labels=10, document_length=200, random_state=seed
    )
    scaler = StandardScaler().fit(X[:n_train])
    X_tr, X_te = scaler.transform(X[:n_train]), scaler.transform(X[n_train:])
    rows = []
    for loss in ("sparsemax", "softmax"):
        model_name = f"SparsemaxMultiLabel(loss='{loss}')"
        _progress(f"  fitting {model_name} ...")
        model = SparsemaxMultiLabel(loss=loss)
        fit_time = _timed_fit(model, X_tr, Q[:n_train])
        P = model.predict_proba(X_te)
        Q_te = Q[n_train:]
        rows.append(
            {
                "task": "label proportions",
                "data": "simulation K=10 L=200",
                "model": model_name,
                "jsd": _jensen_shannon(P, Q_te),
                "mse": float(np.mean((P - Q_te) ** 2)),
                "mean_support": _mean_support(P),
                "fit_time_s": fit_time,
            }
        )
    return rows


# --------------------------------------------------------------------------- data
def _is_sparse(X):
    import scipy.sparse as sp

    return sp.issparse(X)


_MIN_ROWS = 10  # fewer: a 70/30 split leaves a test part of 1-2 rows, or fails


def _check_features(name, X, feature_names, where):
    """Refuse NaN/inf features: ``where(i)`` names data row ``i`` in messages."""
    bad = ~np.isfinite(X.data if _is_sparse(X) else X)
    if not bad.any():
        return
    if _is_sparse(X):  # load_mulan's CSR: bad is over X.data
        k = int(np.flatnonzero(bad)[0])
        row, col = int(np.searchsorted(X.indptr, k, side="right") - 1), int(X.indices[k])
    else:
        row, col = (int(i) for i in np.argwhere(bad)[0])
    value = "missing" if np.isnan(X[row, col]) else "infinite"
    raise UsageError(
        f"{name}: {int(bad.sum())} feature value(s) are missing or infinite (first: {value}, "
        f"{where(row)}, column {feature_names[col]!r}); fill in or drop them first"
    )


def _read_user_data(path, labels):
    """Load --data: a MULAN ARFF file (multi-label) or a CSV file.

    Returns ``("multi-class", X, y)`` or ``("multi-label", X, Y)``.
    """
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"cannot read --data {str(path)!r}: no such file")
    suffixes = "".join(path.suffixes[-2:]).lower()
    label_list = [s.strip() for s in labels.split(",")] if labels else None
    if ".arff" in suffixes:
        from .datasets import load_mulan

        try:
            bunch = load_mulan(path, label_names=label_list)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot load {path.name}: {exc}") from None
        _check_features(
            path.name, bunch.data, bunch.feature_names, lambda i: f"data row {i + 1}"
        )
        return "multi-label", bunch.data, np.asarray(bunch.target)
    if ".csv" not in suffixes:
        raise UsageError(
            f"--data {path.name}: unknown file type (expected .arff, .arff.gz or .csv)"
        )
    if not label_list:
        raise UsageError("--data with a CSV file needs --labels naming the label column(s)")
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise UsageError(f"cannot read {path.name}: {exc}") from None
    missing = [c for c in label_list if c not in frame.columns]
    if missing:
        raise UsageError(
            f"{path.name}: no column named {', '.join(map(repr, missing))} "
            f"(columns: {', '.join(map(str, frame.columns[:20]))})"
        )
    features = frame.drop(columns=label_list)
    non_numeric = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if non_numeric:
        raise UsageError(
            f"{path.name}: feature column(s) {', '.join(map(repr, non_numeric[:5]))} "
            "are not numeric"
        )
    X = features.to_numpy(dtype=np.float64)
    _check_features(path.name, X, list(map(str, features.columns)), lambda i: f"line {i + 2}")
    missing = frame[label_list].isna().to_numpy()
    if missing.any():
        row, col = (int(i) for i in np.argwhere(missing)[0])
        raise UsageError(f"{path.name}: label column {label_list[col]!r} has "
                         f"{missing[:, col].sum()} missing value(s) (first: line {row + 2})")
    if len(label_list) == 1:
        return "multi-class", X, frame[label_list[0]].to_numpy()
    Y = frame[label_list].to_numpy()
    if not np.isin(Y, (0, 1)).all():
        raise UsageError(f"{path.name}: label columns must hold 0/1 indicators")
    return "multi-label", X, Y.astype(np.int64)


def _reason(exc):
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _split(name, X, Y, *, stratify, seed):
    """The 70/30 train/test split of user data, or a one-line UsageError."""
    from sklearn.model_selection import train_test_split

    try:
        return train_test_split(
            X, Y, test_size=0.3, stratify=Y if stratify else None, random_state=seed
        )
    except ValueError as exc:
        raise UsageError(
            f"{name}: cannot make a{' stratified' if stratify else ''} 70/30 train/test "
            f"split of {X.shape[0]} rows: {_reason(exc)}"
        ) from None


def _user_task(args):
    kind, X, Y = _read_user_data(args.data, args.labels)
    name = Path(args.data).name
    if X.shape[0] < _MIN_ROWS:
        raise UsageError(f"{name}: {X.shape[0]} row(s) are too few for a 70/30 train/test "
                         f"split (at least {_MIN_ROWS} needed)")
    if kind == "multi-class":
        if len(np.unique(Y)) < 2:
            raise UsageError(f"{name}: the label column has a single class")
        split = _split(name, X, Y, stratify=True, seed=args.seed)
    else:
        if not np.asarray(Y).any():
            raise UsageError(f"{name}: no row has a label (every label value is 0)")
        split = _split(name, X, Y, stratify=False, seed=args.seed)
        if not np.asarray(split[2]).any():
            n_labelled = int(np.asarray(Y).any(axis=1).sum())
            raise UsageError(f"{name}: no row of the training part has a label "
                             f"(only {n_labelled} labelled row(s) in all)")
    _progress(f"[1/1] {kind}: {name} ({X.shape[0]} samples, {X.shape[1]} features)")
    try:
        if kind == "multi-class":
            return run_multiclass(name, *split, quick=args.quick, seed=args.seed)
        X_tr, X_te, Y_tr, Y_te = split
        return run_multilabel(name, X_tr, Y_tr, X_te, Y_te, quick=args.quick, seed=args.seed)
    except ValueError as exc:  # another problem of the data, found by the fits
        raise UsageError(f"{name}: the models cannot be fitted: {_reason(exc)}") from None


def _builtin_tasks(args):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from .datasets import load_emotions

    X, y = load_digits(return_X_y=True)
    _progress(f"[1/3] multi-class: digits ({X.shape[0]} samples, 10 classes)")
    split = train_test_split(X, y, test_size=0.3, stratify=y, random_state=args.seed)
    rows = run_multiclass("digits", *split, quick=args.quick, seed=args.seed)
    train = load_emotions(subset="train")
    test = load_emotions(subset="test")
    _progress(
        f"[2/3] multi-label: emotions ({train.data.shape[0]} train / "
        f"{test.data.shape[0]} test, {train.target.shape[1]} labels)"
    )
    rows += run_multilabel(
        "emotions",
        train.data,
        np.asarray(train.target),
        test.data,
        np.asarray(test.target),
        quick=args.quick,
        seed=args.seed,
    )
    _progress("[3/3] label proportions: simulated documents")
    rows += run_label_proportions(quick=args.quick, seed=args.seed)
    return rows


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


def _format(frame):
    shown = frame.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            digits = 5 if col in ("jsd", "mse") else 3
            shown[col] = shown[col].map(lambda v, d=digits: "" if pd.isna(v) else f"{v:.{d}f}")
    return shown.to_string(index=False)


def _check_output(path):
    """Refuse, before any fit, an --output name that is neither .csv nor .json,
    or that cannot be written: a folder, in a missing or read-only folder."""
    import os

    path = Path(path)
    if path.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"--output {path}: use a .csv or .json file name")
    folder, problem = path.parent, None
    if path.is_dir():
        problem = "it is a folder"
    elif not folder.is_dir():
        problem = f"{str(folder)!r}: {'not a folder' if folder.exists() else 'no such folder'}"
    elif not (os.access(path, os.W_OK) if path.exists() else os.access(folder, os.W_OK | os.X_OK)):
        problem = "permission denied"
    if problem:
        raise UsageError(f"cannot write --output {str(path)!r}: {problem}")


def _write(frame, path):
    """Write the table to ``path``, a name accepted by :func:`_check_output`."""
    path = Path(path)
    try:
        if path.suffix.lower() == ".csv":
            frame.to_csv(path, index=False)
        else:
            records = json.loads(frame.to_json(orient="records"))
            path.write_text(json.dumps(records, indent=2) + "\n")
    except OSError as exc:
        raise UsageError(f"cannot write --output {str(path)!r}: {exc.strerror or exc}") from None


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sksparsemax",
        description=(
            "Fit sparsemax, top-k sparse-softmax and entmax models next to "
            "logistic/softmax ones and print a comparison table."
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
        "several 0/1 columns = multi-label",
    )
    parser.add_argument("--quick", action="store_true", help="smaller, faster run")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--output", metavar="FILE", help="also write the table (.csv or .json)")
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
        _warm_up()
        with _thread_limit(args.threads):
            rows = _user_task(args) if args.data else _builtin_tasks(args)
        frame = _table(rows)
        print(_format(frame))
        if args.output:
            _write(frame, args.output)
            _progress(f"table written to {args.output}")
    except UsageError as exc:
        print(f"sksparsemax: error: {exc}", file=sys.stderr)
        return 2
    return 0
