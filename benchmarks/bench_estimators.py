"""Fit time, iterations, accuracy and peak memory of the linear estimators.

Each classifier of :mod:`sksparsemax.linear_model` and scikit-learn's
``LogisticRegression`` (lbfgs, multinomial) are fitted on the same data with
the same ``C``, ``tol`` and ``max_iter`` in one run:

* dense: ``make_classification`` 50000 x 200, 20 classes, 50 informative
  features, standardised;
* sparse: a synthetic text-like CSR matrix 20000 x 50000 (~0.5% density,
  20 classes): each class draws its words from a mixture of a shared Zipf
  distribution and a class-specific topic; features are log(1 + count),
  rows L2-normalised (like TF-IDF without IDF);
* multi-label: ``SparsemaxMultiLabel`` vs ``OneVsRestClassifier(
  LogisticRegression)`` on the MULAN data sets in ``../shared/data/multilabel``
  (read with :func:`sksparsemax.datasets.load_mulan`), standardised.

For each model it prints the fit time (best of ``--repeats``), its ratio to
the reference, L-BFGS iterations, test accuracy (micro-F1 for multi-label) and
the peak memory traced by :mod:`tracemalloc` during a separate fit, with its
ratio to the reference (NumPy reports its buffers to tracemalloc, so the peak
covers the arrays a fit allocates, not the input data).

Run from the repository root::

    python benchmarks/bench_estimators.py            # full sizes (minutes)
    python benchmarks/bench_estimators.py --quick    # < 1 minute

Targets (issue 4): SparsemaxClassifier fit time <= LogisticRegression's at
equal or better accuracy; SparsemaxMultiLabel <= half the time of the
one-vs-rest logistic regression; peak memory <= 1.5x.
"""

import argparse
import os
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sksparsemax.linear_model import (  # noqa: E402
    EntmaxClassifier,
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)


def text_like(n_samples, n_features, n_classes, density, rng):
    """Synthetic bag-of-words CSR matrix with class-dependent word frequencies."""
    ranks = np.arange(1, n_features + 1)
    zipf = 1.0 / ranks**1.1
    zipf /= zipf.sum()
    y = rng.integers(0, n_classes, size=n_samples)
    doc_len = rng.poisson(density * n_features * 1.15, size=n_samples) + 1
    rows, cols = [], []
    for c in range(n_classes):
        topic = np.zeros(n_features)
        words = rng.choice(n_features, size=n_features // 100, replace=False)
        topic[words] = rng.dirichlet(np.full(words.size, 0.3))
        p = 0.93 * zipf + 0.07 * topic
        docs = np.flatnonzero(y == c)
        lengths = doc_len[docs]
        tokens = rng.choice(n_features, size=int(lengths.sum()), p=p)
        rows.append(np.repeat(docs, lengths))
        cols.append(tokens)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sp.csr_matrix(
        (np.ones(rows.size), (rows, cols)), shape=(n_samples, n_features)
    )
    X.sum_duplicates()
    X.data = np.log1p(X.data)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / np.maximum(norms, 1e-12)) @ X
    return X.tocsr(), y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # OneVsRest warns about labels present in no (or every) example.
        warnings.filterwarnings("ignore", "Label not .* is present", UserWarning)
        return est.fit(X, y)


def measure(est, X, y, repeats):
    times = []
    for _ in range(repeats):
        e = clone(est)
        t0 = time.perf_counter()
        _fit(e, X, y)
        times.append(time.perf_counter() - t0)
    e_mem = clone(est)
    tracemalloc.start()
    _fit(e_mem, X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return e, min(times), peak


def n_iter_of(est):
    if hasattr(est, "estimators_"):  # one-vs-rest
        return int(sum(int(np.max(getattr(e, "n_iter_", 0))) for e in est.estimators_))
    return int(np.max(est.n_iter_))


def report(title, models, X_train, y_train, X_test, y_test, repeats, score):
    print(f"\n== {title} ==")
    print(
        f"{'model':42s} {'fit s':>8s} {'ratio':>6s} {'iter':>5s} "
        f"{'score':>7s} {'peak MiB':>9s} {'ratio':>6s}"
    )
    ref_time = ref_peak = None
    for name, est in models:
        fitted, t, peak = measure(est, X_train, y_train, repeats)
        ref_time = t if ref_time is None else ref_time
        ref_peak = peak if ref_peak is None else ref_peak
        s = score(y_test, fitted.predict(X_test))
        print(
            f"{name:42s} {t:8.2f} {t / ref_time:6.2f} {n_iter_of(fitted):5d} "
            f"{s:7.4f} {peak / 2**20:9.1f} {peak / ref_peak:6.2f}",
            flush=True,
        )


def classifiers(C, tol, max_iter):
    common = dict(C=C, tol=tol, max_iter=max_iter)
    return [
        ("LogisticRegression (reference)", LogisticRegression(**common)),
        ("SparsemaxClassifier", SparsemaxClassifier(**common)),
        ("EntmaxClassifier(alpha=1.5)", EntmaxClassifier(alpha=1.5, **common)),
        ("SparseSoftmaxClassifier(k=5)", SparseSoftmaxClassifier(k=5, **common)),
    ]


def bench_multilabel(data_dir, args):
    try:
        from sksparsemax.datasets import load_mulan
    except ImportError:
        print("\n(multi-label part skipped: sksparsemax.datasets.load_mulan not found)")
        return
    names = ["emotions"] if args.quick else ["scene", "emotions", "yeast", "medical"]
    for name in names:
        folder = Path(data_dir) / name
        train, test = folder / f"{name}-train.arff", folder / f"{name}-test.arff"
        if not train.exists():
            print(f"\n(multi-label {name} skipped: {train} not found)")
            continue
        X_train, Y_train = load_mulan(train, folder / f"{name}.xml", return_X_y=True)
        X_test, Y_test = load_mulan(test, folder / f"{name}.xml", return_X_y=True)
        keep = Y_train.sum(axis=1) > 0
        X_train, Y_train = X_train[keep], Y_train[keep]
        scaler = StandardScaler(with_mean=not sp.issparse(X_train)).fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        common = dict(C=args.C, tol=args.tol, max_iter=args.max_iter)
        models = [
            ("OneVsRest(LogisticRegression) (reference)",
             OneVsRestClassifier(LogisticRegression(**common))),
            ("SparsemaxMultiLabel", SparsemaxMultiLabel(**common)),
            ("SparsemaxMultiLabel(loss='softmax')",
             SparsemaxMultiLabel(loss="softmax", **common)),
        ]
        report(
            f"multi-label {name} {X_train.shape} {Y_train.shape[1]} labels "
            "(score: test micro-F1)",
            models, X_train, Y_train, X_test, Y_test, args.repeats,
            lambda Y, P: f1_score(Y, P, average="micro"),
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (< 1 min)")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=None, help="timing runs (best of)")
    parser.add_argument("--only", choices=["dense", "sparse", "multilabel"], default=None)
    parser.add_argument(
        "--data-dir",
        default=os.environ.get(
            "SKSPARSEMAX_MULAN_DIR",
            str(Path(__file__).resolve().parents[2] / "shared" / "data" / "multilabel"),
        ),
    )
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if not args.quick else 2
    rng = np.random.default_rng(0)
    print(f"C={args.C} tol={args.tol} max_iter={args.max_iter}; "
          f"BLAS threads as configured; quick={args.quick}")

    if args.only in (None, "dense"):
        n, d = (8000, 100) if args.quick else (50000, 200)
        X, y = make_classification(
            n_samples=n, n_features=d, n_informative=50 if not args.quick else 30,
            n_redundant=10, n_classes=20, n_clusters_per_class=1,
            class_sep=1.5, random_state=0,
        )
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.2, random_state=0
        )
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        report(
            f"dense {X_train.shape}, 20 classes (score: test accuracy)",
            classifiers(args.C, args.tol, args.max_iter),
            X_train, y_train, X_test, y_test, args.repeats, accuracy_score,
        )

    if args.only in (None, "sparse"):
        n, d = (5000, 20000) if args.quick else (20000, 50000)
        X, y = text_like(n, d, 20, 0.005, rng)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.2, random_state=0
        )
        report(
            f"sparse CSR {X_train.shape}, density {X.nnz / np.prod(X.shape):.4f}, "
            "20 classes (score: test accuracy)",
            classifiers(args.C, args.tol, args.max_iter),
            X_train, y_train, X_test, y_test, args.repeats, accuracy_score,
        )

    if args.only in (None, "multilabel"):
        bench_multilabel(args.data_dir, args)


if __name__ == "__main__":
    main()
