"""Cross-validated estimators against GridSearchCV and LogisticRegressionCV.

On the same folds and the same grid of ``C`` (one run, one BLAS thread,
``n_jobs=1``), it times

* ``SparsemaxClassifierCV`` (warm-started paths),
* ``GridSearchCV(SparsemaxClassifier(), {"C": Cs})`` (every point from
  scratch; ``refit=True``, like the CV estimator),
* ``LogisticRegressionCV`` (multinomial, lbfgs, accuracy),

on dense data (``make_classification`` 20000 x 100, 10 classes,
standardised) and on sparse text-like data (the CSR generator of
``bench_estimators.py``, 10000 x 20000, 20 classes, about 40 distinct words
per document: hard enough that ``C`` matters), and ``SparsemaxMultiLabelCV`` over ``C`` x
``scale`` against ``GridSearchCV(SparsemaxMultiLabel(), {"C", "scale"})`` on
a MULAN data set (``scene``; micro-F1), or on ``make_multilabel_classification``
data when the MULAN files are not found. It prints each time, its ratio to
the CV estimator's, the chosen parameters, the best mean CV score and the
held-out test score, and whether the CV estimator chose what GridSearchCV
chose.

Timing protocol: one warm-up fit of every model on a small subset (imports,
numba compilation), then ``--repeats`` rounds of the models, interleaved;
the best time of each is kept. The ``max_iter`` column counts the fits of a
search that stopped at ``max_iter`` (a ``ConvergenceWarning``): their scores
depend on where the solver stopped, not only on the data, so the two
searches agree only where both converged.

Targets (issue 18): ``SparsemaxClassifierCV`` at most 0.5x the time of
``GridSearchCV`` and at most 1.0x ``LogisticRegressionCV``;
``SparsemaxMultiLabelCV`` at most 0.3x ``GridSearchCV``.

Run from the repository root::

    python benchmarks/bench_cv.py            # full sizes (about 6 minutes on 2 cores)
    python benchmarks/bench_cv.py --quick    # small sizes (under a minute)
    python benchmarks/bench_cv.py --write    # also benchmarks/results/cv.md
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_classification, make_multilabel_classification  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegressionCV  # noqa: E402
from sklearn.metrics import accuracy_score, f1_score  # noqa: E402
from sklearn.model_selection import (  # noqa: E402
    GridSearchCV,
    KFold,
    StratifiedKFold,
    train_test_split,
)
from sklearn.preprocessing import StandardScaler  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_estimators import _Tee, text_like  # noqa: E402

from sksparsemax.linear_model import (  # noqa: E402
    SparsemaxClassifier,
    SparsemaxClassifierCV,
    SparsemaxMultiLabel,
    SparsemaxMultiLabelCV,
)
from sksparsemax.transforms import get_backend  # noqa: E402

TARGETS = {"GridSearchCV": 0.5, "LogisticRegressionCV": 1.0}
MULTILABEL_TARGET = 0.3
SCALES = tuple(np.arange(1.0, 5.01, 0.5))


def classifier_models(Cs, folds, tol, max_iter):
    """The three searches of one multi-class problem, the CV estimator first."""
    common = dict(tol=tol, max_iter=max_iter)
    return {
        "SparsemaxClassifierCV": SparsemaxClassifierCV(Cs=Cs, cv=folds, **common),
        "GridSearchCV": GridSearchCV(SparsemaxClassifier(**common), {"C": list(Cs)},
                                     cv=folds),
        "LogisticRegressionCV": LogisticRegressionCV(
            Cs=list(Cs), cv=folds, scoring="accuracy", l1_ratios=(0,),
            use_legacy_attributes=False, **common),
    }


def multilabel_models(Cs, folds, tol, max_iter):
    common = dict(tol=tol, max_iter=max_iter)
    return {
        "SparsemaxMultiLabelCV": SparsemaxMultiLabelCV(
            Cs=Cs, scales=SCALES, cv=folds, scoring="f1_micro", **common),
        "GridSearchCV": GridSearchCV(
            SparsemaxMultiLabel(**common), {"C": list(Cs), "scale": list(SCALES)},
            cv=folds, scoring="f1_micro"),
    }


def _fit(model, X, y):
    """Fit; return the number of fits that raised a ConvergenceWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y)
    return sum(issubclass(w.category, ConvergenceWarning) for w in caught)


def chosen(model):
    """The chosen parameters and the best mean CV score of a fitted search."""
    if isinstance(model, LogisticRegressionCV):
        mean = model.scores_.mean(axis=0)[0]
        return {"C": float(model.C_)}, float(mean.max())
    params = {k.replace("param_", ""): v for k, v in model.best_params_.items()}
    params = {k: (float(v) if v is not None else None) for k, v in params.items()}
    return params, float(model.best_score_)


def run_problem(title, models, X_train, y_train, X_test, y_test, score, repeats, warm):
    print(f"\n## {title}\n")
    for model in models.values():  # warm-up: imports, numba compilation
        _fit(clone(model).set_params(cv=3), *warm)
    times = {name: np.inf for name in models}
    fitted, unconverged = {}, {}
    for _ in range(repeats):
        for name, model in models.items():
            est = clone(model)
            start = time.perf_counter()
            unconverged[name] = _fit(est, X_train, y_train)
            times[name] = min(times[name], time.perf_counter() - start)
            fitted[name] = est
    reference = next(iter(models))
    rows = []
    for name, est in fitted.items():
        params, cv_score = chosen(est)
        rows.append((name, times[name], times[reference] / times[name], params, cv_score,
                     score(y_test, est.predict(X_test)), unconverged[name]))
    print(f"{'model':<24} {'fit (s)':>8} {'CV / this':>10}  {'CV score':>8} "
          f"{'test':>6} {'max_iter':>8}  chosen")
    for name, t, ratio, params, cv_score, test, n_warn in rows:
        text = ", ".join(f"{k}={v:.4g}" if v is not None else f"{k}=None"
                         for k, v in sorted(params.items()))
        print(f"{name:<24} {t:8.2f} {ratio:10.3f}  {100 * cv_score:8.2f} "
              f"{100 * test:6.2f} {n_warn:8d}  {text}")
    cv, search = fitted[reference], fitted["GridSearchCV"]
    searched = chosen(search)[0]
    same = {k: v for k, v in chosen(cv)[0].items() if k in searched} == searched
    gap = np.abs(cv.scores_.mean(axis=0).T.ravel() - search.cv_results_["mean_test_score"])
    at_max = int(np.count_nonzero(cv.n_iter_ >= cv.max_iter))
    print(f"\n{reference} chose what GridSearchCV chose: {'yes' if same else 'NO'}; "
          f"largest difference of their mean CV scores: {100 * gap.max():.2f} points; "
          f"fits of its paths stopped at max_iter: {at_max} of {cv.n_iter_.size}")
    return {name: times[reference] / times[name] for name in times if name != reference}


def _multilabel_data(quick):
    """The MULAN ``scene`` split (as ``bench_multilabel.py`` finds it), or synthetic data."""
    from bench_multilabel import default_data_dir, load_split

    split = None if quick else load_split("scene", default_data_dir())
    if split is not None:
        X_tr, Y_tr, X_te, Y_te, source = split
        return f"scene ({source})", X_tr, Y_tr, X_te, Y_te
    X, Y = make_multilabel_classification(n_samples=3000 if not quick else 600,
                                          n_features=50, n_classes=6,
                                          allow_unlabeled=False, random_state=0)
    X_tr, X_te, Y_tr, Y_te = train_test_split(X, Y, test_size=0.3, random_state=0)
    return "make_multilabel_classification", X_tr, Y_tr, X_te, Y_te


def _run(args):
    rng = np.random.default_rng(0)
    Cs = np.logspace(-4, 4, args.n_cs)
    print(f"{args.n_cs} values of C (np.logspace(-4, 4)), {args.folds} folds, "
          f"tol={args.tol}, max_iter={args.max_iter}, n_jobs=1; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; best of "
          f"{args.repeats} interleaved runs after a warm-up; quick={args.quick}; "
          f"sksparsemax backend: {get_backend()}")
    ratios = {}

    if args.only in (None, "dense"):
        ratios["dense"] = _dense(args, Cs)
    if args.only in (None, "sparse"):
        ratios["sparse"] = _sparse(args, Cs, rng)
    if args.only in (None, "multilabel"):
        ratios["multilabel"] = _multilabel(args, Cs)
    _targets(ratios)
    return ratios


def _dense(args, Cs):
    n, d = (4000, 50) if args.quick else (20000, 100)
    X, y = make_classification(n_samples=n, n_features=d, n_informative=40 if not args.quick
                               else 20, n_redundant=10, n_classes=10,
                               n_clusters_per_class=1, class_sep=1.0, random_state=0)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0)
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=0).split(X_tr, y_tr))
    return run_problem(
        f"dense {X_tr.shape}, 10 classes (scores: accuracy)",
        classifier_models(Cs, folds, args.tol, args.max_iter),
        X_tr, y_tr, X_te, y_te, accuracy_score, args.repeats, (X_tr[:500], y_tr[:500]))


def _sparse(args, Cs, rng):
    n, d = (3000, 5000) if args.quick else (10000, 20000)
    X, y = text_like(n, d, 20, 0.0015 if not args.quick else 0.005, rng)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0)
    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=0).split(X_tr, y_tr))
    return run_problem(
        f"sparse CSR {X_tr.shape}, density {X.nnz / np.prod(X.shape):.4f}, 20 classes "
        "(scores: accuracy)",
        classifier_models(Cs, folds, args.tol, args.max_iter),
        X_tr, y_tr, X_te, y_te, accuracy_score, args.repeats, (X_tr[:500], y_tr[:500]))


def _multilabel(args, Cs):
    name, X_tr, Y_tr, X_te, Y_te = _multilabel_data(args.quick)
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    folds = list(KFold(args.folds, shuffle=True, random_state=0).split(X_tr))
    return run_problem(
        f"multi-label {name} {X_tr.shape}, {Y_tr.shape[1]} labels, C x scale "
        f"({len(SCALES)} scales; scores: micro-F1)",
        multilabel_models(Cs, folds, args.tol, args.max_iter),
        X_tr, Y_tr, X_te, Y_te, lambda a, b: f1_score(a, b, average="micro"),
        args.repeats, (X_tr[:300], Y_tr[:300]))


def _targets(ratios):
    print("\n## Targets\n")
    for problem in [p for p in ("dense", "sparse") if p in ratios]:
        for other, target in TARGETS.items():
            value = ratios[problem][other]
            print(f"{problem}: SparsemaxClassifierCV / {other} = {value:.3f} "
                  f"(target <= {target}: {'met' if value <= target else 'NOT met'})")
    if "multilabel" in ratios:
        value = ratios["multilabel"]["GridSearchCV"]
        print(f"multi-label: SparsemaxMultiLabelCV / GridSearchCV = {value:.3f} "
              f"(target <= {MULTILABEL_TARGET}: "
              f"{'met' if value <= MULTILABEL_TARGET else 'NOT met'})")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--n-cs", type=int, default=10)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--only", choices=["dense", "sparse", "multilabel"], default=None)
    parser.add_argument("--write", action="store_true",
                        help="also write the report to benchmarks/results/cv.md")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not args.write:
        return _run(args)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, buffer)):
        ratios = _run(args)
    out = Path(__file__).resolve().parent / "results" / "cv.md"
    out.write_text(
        "# Cross-validated estimators\n\n"
        f"Generated by `python benchmarks/bench_cv.py "
        f"{' '.join(argv if argv is not None else sys.argv[1:])}` on "
        f"{time.strftime('%Y-%m-%d')} ({platform.machine()}, {os.cpu_count()} CPU(s), "
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}).\n\n"
        "```text\n" + buffer.getvalue().strip() + "\n```\n"
    )
    print(f"written to {out}")
    return ratios


if __name__ == "__main__":
    main()
