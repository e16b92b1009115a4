"""Fit time, iterations, accuracy and peak memory of the linear estimators.

Each classifier of :mod:`sksparsemax.linear_model`, with ``solver="lbfgs"``
(the default) and ``solver="newton-cg"``, and scikit-learn's
``LogisticRegression`` (multinomial; lbfgs, the reference of the ratios, and
newton-cg for comparison) are fitted on the same data with the same ``C``,
``tol`` and ``max_iter`` in one run:

* dense: ``make_classification`` 50000 x 200, 20 classes, 50 informative
  features, standardised;
* sparse: a synthetic text-like CSR matrix 20000 x 50000 (~0.5% density,
  20 classes): each class draws its words from a mixture of a shared Zipf
  distribution and a class-specific topic; features are log(1 + count),
  rows L2-normalised (like TF-IDF without IDF);
* multi-label: ``SparsemaxMultiLabel`` vs ``OneVsRestClassifier(
  LogisticRegression)`` on the MULAN data sets in ``../shared/data/multilabel``
  (read with :func:`sksparsemax.datasets.load_mulan`), standardised.

For each model it prints the fit time, its ratio to the reference (the first
row), solver iterations (L-BFGS or Newton iterations; ``*``: stopped at
``max_iter``; for one-vs-rest the sum over the labels), the test score (accuracy; micro-F1 for multi-label) and
the peak memory traced by :mod:`tracemalloc` during a separate fit, with its
ratio to the reference (NumPy reports its buffers to tracemalloc, so the peak
covers the arrays a fit allocates, not the input data).

Timing protocol (the machines are shared and noisy): every model is fitted
once as a warm-up (imports, numba compilation), then the timed fits go round
the models ``--repeats`` times, interleaved, and the best time of each model
is kept. BLAS runs on one thread unless ``OPENBLAS_NUM_THREADS`` /
``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` are set: threaded BLAS on a loaded
machine makes timings erratic, and one thread treats both sides alike.

Run from the repository root::

    python benchmarks/bench_estimators.py                   # full sizes (minutes)
    python benchmarks/bench_estimators.py --quick           # < 1 minute
    python benchmarks/bench_estimators.py --only multilabel # MULAN, C=1

For the multi-label part a sparsemax model that stops at ``max_iter`` is also
refitted with ``10 * max_iter`` iterations, to show whether the early stop
costs micro-F1.

Backends: with numba installed (the ``fast`` extra) the sparsemax models use
compiled kernels, among them a one-pass loss and gradient for dense data with
few classes; the rows marked "NumPy backend" fit the same model with the
pure NumPy path (``sksparsemax.transforms.backend("numpy")``), what a user
without numba gets. The header names the backend of the other rows.

After the dense and the sparse tables, "solver overhead" refits every
L-BFGS model once more with its loss-and-gradient evaluations timed
(scikit-learn's ``LinearModelLoss.loss_gradient`` for LogisticRegression,
ours for the others) and prints the share of the fit spent outside them:
the solver's own work plus the set-up.

Targets (issue 21): every estimator, default solver, at most 0.8x
LogisticRegression's fit time at equal accuracy; on the sparse problem at
most 10% of the fit outside the loss-and-gradient evaluations; peak memory
at most LogisticRegression's (SparsemaxMultiLabel: at most twice the
one-vs-rest peak).
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import sklearn  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import accuracy_score, f1_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.multiclass import OneVsRestClassifier  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import cpu_model  # noqa: E402

from sksparsemax.linear_model import (  # noqa: E402
    EntmaxClassifier,
    SparsemaxClassifier,
    SparsemaxMultiLabel,
    SparseSoftmaxClassifier,
)
from sksparsemax.transforms import backend, get_backend  # noqa: E402


def text_like(n_samples, n_features, n_classes, density, rng):
    """Synthetic bag-of-words CSR matrix with class-dependent word frequencies."""
    ranks = np.arange(1, n_features + 1)
    zipf = 1.0 / ranks**1.1
    zipf /= zipf.sum()
    y = rng.integers(0, n_classes, size=n_samples)
    # Repeated words merge into one entry: 1.8 tokens per target nonzero give
    # the requested density of distinct words (checked: 0.505% for 0.5%).
    doc_len = rng.poisson(density * n_features * 1.8, size=n_samples) + 1
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


class OnNumPyBackend:
    """Fits and predicts with ``estimator`` on the NumPy backend (no numba)."""

    def __init__(self, estimator):
        self.estimator = estimator

    def get_params(self, deep=True):
        return {"estimator": self.estimator}

    def set_params(self, **params):
        self.estimator = params.get("estimator", self.estimator)
        return self

    def fit(self, X, y):
        with backend("numpy"):
            self.fitted_ = clone(self.estimator).fit(X, y)
        self.n_iter_ = self.fitted_.n_iter_
        return self

    def predict(self, X):
        with backend("numpy"):
            return self.fitted_.predict(X)


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # OneVsRest warns about labels present in no (or every) example.
        warnings.filterwarnings("ignore", "Label not .* is present", UserWarning)
        return est.fit(X, y)


def _timed_fit(est, X, y):
    e = clone(est)
    t0 = time.perf_counter()
    _fit(e, X, y)
    return e, time.perf_counter() - t0


def _peak_memory(est, X, y):
    e = clone(est)
    tracemalloc.start()
    _fit(e, X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def measure_all(models, X, y, repeats):
    """Fit every model ``repeats`` times, interleaved; best time, peak memory.

    Every model is fitted once first (warm-up: imports, numba compilation,
    caches), then the timed fits go round the models ``repeats`` times, so
    that a burst of load from other jobs on a shared machine hits every
    model alike; the best (minimum) time of each model is kept. The peak
    memory comes from one more fit of each model under tracemalloc.
    """
    fitted = {name: _timed_fit(est, X, y)[0] for name, est in models}  # warm-up
    times = {name: [] for name, _ in models}
    for _ in range(repeats):
        for name, est in models:
            fitted[name], t = _timed_fit(est, X, y)
            times[name].append(t)
    peaks = {name: _peak_memory(est, X, y) for name, est in models}
    return {name: (fitted[name], min(times[name]), peaks[name]) for name, _ in models}


def n_iter_of(est):
    if hasattr(est, "estimators_"):  # one-vs-rest: the sum over the labels
        return int(sum(int(np.max(getattr(e, "n_iter_", 0))) for e in est.estimators_))
    return int(np.max(est.n_iter_))


def hit_max_iter(est, max_iter):
    """Whether the fit (for one-vs-rest: any label's fit) stopped at max_iter."""
    fits = est.estimators_ if hasattr(est, "estimators_") else [est]
    return any(int(np.max(getattr(e, "n_iter_", 0))) >= max_iter for e in fits)


#: What a run measured, by table title: written to ``estimators.json`` with
#: ``--write`` (read by ``benchmarks/goals.py``).
RESULTS = {"tables": {}, "overhead": {}}


def report(title, models, X_train, y_train, X_test, y_test, repeats, score,
           max_iter=None, check_convergence=False):
    """Print one table; the first model is the reference of the ratios.

    With ``check_convergence``, a model other than the reference that stopped
    at ``max_iter`` is refitted once with ``10 * max_iter`` iterations (not
    timed against the others) to show what its score would be at
    convergence.
    """
    print(f"\n== {title} ==")
    print(
        f"{'model':44s} {'fit s':>8s} {'ratio':>6s} {'iter':>5s} "
        f"{'score':>7s} {'peak MiB':>9s} {'ratio':>6s}"
    )
    results = measure_all(models, X_train, y_train, repeats)
    ref_time = ref_peak = None
    rows = []
    for name, est in models:
        fitted, t, peak = results[name]
        ref_time = t if ref_time is None else ref_time
        ref_peak = peak if ref_peak is None else ref_peak
        s = score(y_test, fitted.predict(X_test))
        n_iter = n_iter_of(fitted)
        flag = "*" if max_iter is not None and hit_max_iter(fitted, max_iter) else " "
        print(
            f"{name:44s} {t:8.3f} {t / ref_time:6.2f} {n_iter:5d}{flag}"
            f"{s:7.4f} {peak / 2**20:9.1f} {peak / ref_peak:6.2f}",
            flush=True,
        )
        rows.append(dict(model=name, time=t, ratio=t / ref_time, n_iter=n_iter,
                         score=s, peak=peak, peak_ratio=peak / ref_peak))
        if check_convergence and flag == "*" and name != models[0][0]:
            long_run = clone(est).set_params(max_iter=10 * max_iter)
            long_fit, t_long = _timed_fit(long_run, X_train, y_train)
            s_long = score(y_test, long_fit.predict(X_test))
            print(
                f"{'  ... run to convergence (max_iter=' + str(10 * max_iter) + ')':44s}"
                f" {t_long:8.3f} {t_long / ref_time:6.2f} {n_iter_of(long_fit):5d} "
                f"{s_long:7.4f}",
                flush=True,
            )
    if max_iter is not None:
        print(f"(* stopped at max_iter={max_iter}; one-vs-rest: some label did)")
    RESULTS["tables"][title] = rows
    return rows


@contextlib.contextmanager
def timed_loss_gradient():
    """Accumulate the time spent in the loss-and-gradient evaluations.

    Wraps ``loss_gradient`` of scikit-learn's ``LinearModelLoss`` (what
    LogisticRegression's L-BFGS-B evaluates) and of ours (the evaluations
    of every sksparsemax L-BFGS fit); yields a dict with the total ``time``
    and the number of ``calls``.
    """
    from sklearn.linear_model import _linear_loss as sk_loss

    from sksparsemax.linear_model import _linear_loss as our_loss

    acc = {"time": 0.0, "calls": 0}
    originals = [(cls, cls.loss_gradient) for cls in
                 (sk_loss.LinearModelLoss, our_loss.LinearModelLoss)]

    def wrap(original):
        def loss_gradient(self, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(self, *args, **kwargs)
            finally:
                acc["time"] += time.perf_counter() - t0
                acc["calls"] += 1
        return loss_gradient

    for cls, original in originals:
        cls.loss_gradient = wrap(original)
    try:
        yield acc
    finally:
        for cls, original in originals:
            cls.loss_gradient = original


def solver_overhead(title, models, X, y, repeats=2):
    """Share of each L-BFGS fit spent outside the loss-and-gradient evaluations.

    One more fit per model (best of ``repeats``) with the evaluations timed
    (:func:`timed_loss_gradient`); the rest of the fit is the solver's own
    work (L-BFGS's iteration and line search, the change of variables) and
    the set-up (validation, encoding, whitening moments).
    """
    print(f"\n{'solver overhead (lbfgs fits)':44s} {'fit s':>8s} {'in loss':>8s} "
          f"{'calls':>6s} {'outside':>8s}")
    rows = []
    for name, est in models:
        best = None
        for _ in range(repeats):
            with timed_loss_gradient() as acc:
                _, t = _timed_fit(est, X, y)
            if best is None or t < best[0]:
                best = (t, acc["time"], acc["calls"])
        t, t_loss, calls = best
        share = 1.0 - t_loss / t
        print(f"{name:44s} {t:8.3f} {t_loss:8.3f} {calls:6d} {100 * share:7.1f}%", flush=True)
        rows.append(dict(model=name, time=t, loss_time=t_loss, calls=calls, outside=share))
    RESULTS["overhead"][title] = rows
    return rows


def lbfgs_models(models):
    """The models fitted by L-BFGS in their default configuration."""
    return [(name, est) for name, est in models
            if "newton" not in name and "NumPy" not in name]


def classifiers(C, tol, max_iter):
    common = dict(C=C, tol=tol, max_iter=max_iter)
    ncg = dict(solver="newton-cg", **common)
    return [
        ("LogisticRegression (reference)", LogisticRegression(**common)),
        ("LogisticRegression(solver='newton-cg')", LogisticRegression(**ncg)),
        ("SparsemaxClassifier", SparsemaxClassifier(**common)),
        ("SparsemaxClassifier(solver='newton-cg')", SparsemaxClassifier(**ncg)),
        ("SparsemaxClassifier, NumPy backend",
         OnNumPyBackend(SparsemaxClassifier(**common))),
        ("EntmaxClassifier(alpha=1.5)", EntmaxClassifier(alpha=1.5, **common)),
        ("EntmaxClassifier(alpha=1.5, newton-cg)", EntmaxClassifier(alpha=1.5, **ncg)),
        ("SparseSoftmaxClassifier(k=5)", SparseSoftmaxClassifier(k=5, **common)),
        ("SparseSoftmaxClassifier(k=5, newton-cg)", SparseSoftmaxClassifier(k=5, **ncg)),
    ]


MULAN_NAMES = ["scene", "emotions", "yeast", "medical"]


def _default_data_dir():
    """As benchmarks/bench_multilabel.py's: the env var, ../shared, or the
    fetch_mulan cache (filled on first use)."""
    env = os.environ.get("SKSPARSEMAX_MULAN_DIR")
    shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "multilabel"
    if env or shared.is_dir():
        return env or str(shared)
    from sksparsemax.datasets import fetch_mulan, get_data_home

    for name in MULAN_NAMES:
        fetch_mulan(name)  # download once (checksum-checked)
    return str(Path(get_data_home()) / "mulan")


def bench_multilabel(data_dir, args):
    """SparsemaxMultiLabel (both losses) vs one-vs-rest LR on MULAN data.

    One fixed ``C`` (``--C``) for every model and data set, standardised
    features (``with_mean=False`` for the sparse *medical*), training rows
    without a label dropped; score: test micro-F1 of the default prediction
    rule (``scale=1``, ``threshold=1/K``, OvR: 0.5), i.e. untuned.
    """
    try:
        from sksparsemax.datasets import load_mulan
    except ImportError:
        print("\n(multi-label part skipped: sksparsemax.datasets.load_mulan not found)")
        return []
    names = ["emotions"] if args.quick else MULAN_NAMES
    summary, shapes = [], []
    for name in names:
        folder = Path(data_dir) / name
        train, test = folder / f"{name}-train.arff", folder / f"{name}-test.arff"
        if not train.exists():
            print(f"\n(multi-label {name} skipped: {train} not found)")
            continue
        X_train, Y_train = load_mulan(train, folder / f"{name}.xml", return_X_y=True)
        X_test, Y_test = load_mulan(test, folder / f"{name}.xml", return_X_y=True)
        keep = np.asarray(Y_train.sum(axis=1)).ravel() > 0
        X_train, Y_train = X_train[keep], Y_train[keep]
        scaler = StandardScaler(with_mean=not sp.issparse(X_train)).fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        common = dict(C=args.C, tol=args.tol, max_iter=args.max_iter)
        ncg = dict(solver="newton-cg", **common)
        models = [
            ("OneVsRest(LogisticRegression) (reference)",
             OneVsRestClassifier(LogisticRegression(**common))),
            ("OneVsRest(LogisticRegression(newton-cg))",
             OneVsRestClassifier(LogisticRegression(**ncg))),
            ("SparsemaxMultiLabel", SparsemaxMultiLabel(**common)),
            ("SparsemaxMultiLabel(solver='newton-cg')", SparsemaxMultiLabel(**ncg)),
            ("SparsemaxMultiLabel, NumPy backend",
             OnNumPyBackend(SparsemaxMultiLabel(**common))),
            ("SparsemaxMultiLabel(loss='softmax')",
             SparsemaxMultiLabel(loss="softmax", **common)),
            ("SparsemaxMultiLabel(loss='softmax', newton-cg)",
             SparsemaxMultiLabel(loss="softmax", **ncg)),
        ]
        rows = report(
            f"multi-label {name} {X_train.shape} "
            f"{'CSR' if sp.issparse(X_train) else 'dense'}, {Y_train.shape[1]} "
            f"labels, C={args.C} (score: test micro-F1, untuned rule)",
            models, X_train, Y_train, X_test, Y_test, args.repeats or 7,
            lambda Y, P: f1_score(Y, P, average="micro"),
            max_iter=args.max_iter, check_convergence=True,
        )
        summary.append((name, rows))
        n, d = X_train.shape
        # L-BFGS's features: at most n in the row space of X (used when d >= 2n).
        shapes.append((name, n, min(n, d) if d >= 2 * n else d, Y_train.shape[1],
                       rows[0]["peak"]))
    if shapes:
        # What the joint model holds during the whole fit and one-vs-rest
        # holds one label's share of (or, for the target, in a sparse binary
        # form): the L-BFGS history of all labels' coefficients at once (10
        # pairs of K (d + 1) floats, against d + 1 per label), the d x d
        # whitening factor (d: the features L-BFGS works on) and the label
        # proportions, a dense n x K float64 matrix that every evaluation
        # reads. Their sum next to twice the one-vs-rest peak says how much
        # is left for the rest (the solver's coefficient vectors, K (d + 1)
        # each, the evaluations' temporaries).
        print("\n== multi-label memory: what the joint model holds (MiB) ==")
        print(f"{'data set':10s} {'OvR peak':>9s} {'2x OvR':>7s} {'joint history':>14s} "
              f"{'OvR history':>12s} {'d x d factor':>13s} {'n x K target':>13s} "
              f"{'sum':>6s}")
        for name, n, d, K, ovr_peak in shapes:
            mib = 2.0**20
            sizes = dict(joint_history=20 * K * (d + 1) * 8, factor=d * d * 8,
                         target=n * K * 8)
            print(f"{name:10s} {ovr_peak / mib:9.2f} {2 * ovr_peak / mib:7.2f} "
                  f"{sizes['joint_history'] / mib:14.2f} {20 * (d + 1) * 8 / mib:12.2f} "
                  f"{sizes['factor'] / mib:13.2f} {sizes['target'] / mib:13.2f} "
                  f"{sum(sizes.values()) / mib:6.2f}")
            RESULTS.setdefault("multilabel_memory", {})[name] = dict(
                ovr_peak=ovr_peak, ovr_history=20 * (d + 1) * 8, **sizes)
    if summary:
        print("\n== multi-label summary: fit time / OvR(LR, lbfgs) fit time "
              "(target for SparsemaxMultiLabel: <= 0.5); iterations ==")
        print(f"{'data set':10s} {'sparsemax':>10s} {'iter':>5s} "
              f"{'sm newton':>10s} {'iter':>5s} {'sm NumPy':>9s} "
              f"{'softmax':>10s} {'iter':>5s} {'sof newton':>10s} {'iter':>5s} "
              f"{'OvR ncg':>8s} {'OvR iter (sum)':>15s}")
        for name, rows in summary:
            ref, ref_ncg, sm, sm_ncg, sm_numpy, so, so_ncg = rows
            print(f"{name:10s} {sm['ratio']:10.2f} {sm['n_iter']:5d} "
                  f"{sm_ncg['ratio']:10.2f} {sm_ncg['n_iter']:5d} "
                  f"{sm_numpy['ratio']:9.2f} "
                  f"{so['ratio']:10.2f} {so['n_iter']:5d} "
                  f"{so_ncg['ratio']:10.2f} {so_ncg['n_iter']:5d} "
                  f"{ref_ncg['ratio']:8.2f} {ref['n_iter']:15d}")
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (< 1 min)")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--max-iter", type=int, default=100)
    parser.add_argument(
        "--repeats", type=int, default=None,
        help="timed fits per model (best of); default 3 (--quick) or 2 for the "
        "classifiers, 7 for multi-label",
    )
    parser.add_argument("--only", choices=["dense", "sparse", "multilabel"], default=None)
    parser.add_argument(
        "--write", action="store_true",
        help="also write the printed report to benchmarks/results/estimators.md",
    )
    parser.add_argument(
        "--data-dir", default=None,
        help="MULAN folder (default: $SKSPARSEMAX_MULAN_DIR, the ../shared checkout, "
        "or fetch_mulan's cache, downloading the sets on first use)",
    )
    args = parser.parse_args(argv)
    if args.write:
        out = Path(__file__).resolve().parent / "results" / "estimators.md"
        buffer = io.StringIO()
        with contextlib.redirect_stdout(_Tee(sys.stdout, buffer)):
            _run(args)
        out.write_text(
            "# Benchmark of the estimators\n\n"
            f"Generated by `python benchmarks/bench_estimators.py "
            f"{' '.join(argv if argv is not None else sys.argv[1:])}` on "
            f"{time.strftime('%Y-%m-%d')} ({platform.machine()}, "
            f"{os.cpu_count()} CPU(s), Python {platform.python_version()}, "
            f"NumPy {np.__version__}, scikit-learn {sklearn.__version__}).\n\n"
            "```text\n" + buffer.getvalue().strip() + "\n```\n"
        )
        RESULTS["machine"] = _machine()
        out.with_suffix(".json").write_text(json.dumps(RESULTS, indent=1) + "\n")
        print(f"written to {out} and {out.with_suffix('.json').name}")
    else:
        _run(args)


def _machine():
    """The machine and the versions the run used."""
    import scipy

    from sksparsemax.transforms import _backend

    numba = None
    if _backend._numba_available():
        import numba as nb

        numba = nb.__version__
    return dict(date=time.strftime("%Y-%m-%d"), machine=platform.machine(),
                processor=platform.processor(), cpu=cpu_model(), cpus=os.cpu_count(),
                python=platform.python_version(), numpy=np.__version__,
                scipy=scipy.__version__, sklearn=sklearn.__version__, numba=numba,
                blas_threads=os.environ.get("OPENBLAS_NUM_THREADS"))


class _Tee:
    """Write to several streams (the terminal and the report)."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()


def _run(args):
    rng = np.random.default_rng(0)
    print(f"C={args.C} tol={args.tol} max_iter={args.max_iter}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}; "
          f"best of {args.repeats or 'several'} interleaved fits after a warm-up; "
          f"quick={args.quick}; sksparsemax backend: {get_backend()}")

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
        models = classifiers(args.C, args.tol, args.max_iter)
        report(
            f"dense {X_train.shape}, 20 classes (score: test accuracy)",
            models, X_train, y_train, X_test, y_test, args.repeats or (3 if args.quick else 2),
            accuracy_score,
        )
        solver_overhead("dense", lbfgs_models(models), X_train, y_train)

    if args.only in (None, "sparse"):
        n, d = (5000, 20000) if args.quick else (20000, 50000)
        X, y = text_like(n, d, 20, 0.005, rng)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.2, random_state=0
        )
        models = classifiers(args.C, args.tol, args.max_iter)
        report(
            f"sparse CSR {X_train.shape}, density {X.nnz / np.prod(X.shape):.4f}, "
            "20 classes (score: test accuracy)",
            models, X_train, y_train, X_test, y_test, args.repeats or 3,
            accuracy_score,
        )
        solver_overhead("sparse", lbfgs_models(models), X_train, y_train)

    if args.only in (None, "multilabel"):
        bench_multilabel(args.data_dir or _default_data_dir(), args)


if __name__ == "__main__":
    main()
