"""Fitting on Dask arrays against dask-ml's ``LogisticRegression(solver="lbfgs")``.

On one ``LocalCluster`` (2 worker processes, 1 thread each) and the same
data (a dense binary problem generated lazily on the workers with
``da.random``, ``--rows`` x ``--features``, row chunks of ``--chunk``,
persisted on the workers before any fit), it times

* ``FenchelYoungClassifier(loss="softmax")`` (the logistic model of a
  multinomial parametrisation: two score columns),
* ``SparsemaxClassifier``,
* dask-ml's ``LogisticRegression(solver="lbfgs")`` (dask-glm's L-BFGS: one
  ``compute`` of the loss and gradient per evaluation),

all with ``C=1`` (the same objective scaling: a sum of losses plus
``||w||^2 / (2C)``), ``tol`` and ``max_iter`` alike. It reports the total fit
time, the L-BFGS iterations, the time per iteration (fit time / iterations)
and per loss-and-gradient evaluation (time inside the evaluations / their
number), and each ratio to dask-ml's. It also prints the in-memory fit of
the same estimator on the same data gathered in one process (a reference
that needs no dask-ml), time per iteration included.

Target (issue 20): at most 1.0x dask-ml's time per L-BFGS iteration.

dask-ml and dask-glm come from the package index (``pip install dask-ml``);
without them the dask-ml rows say why and the in-memory reference remains.

Run from the repository root::

    python benchmarks/bench_dask_fit.py            # 2,000,000 x 20 (about 2 minutes)
    python benchmarks/bench_dask_fit.py --quick    # 200,000 x 20
    python benchmarks/bench_dask_fit.py --write    # also benchmarks/results/dask_fit.md
"""

import argparse
import os
import platform
import sys
import time
import warnings
from datetime import date
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "dask_fit.md"


class _Timed:
    """Wraps a loss-and-gradient function: counts its calls and their time."""

    def __init__(self, func):
        self.func, self.calls, self.seconds = func, 0, 0.0

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.func(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def _time_ours(make, X, y):
    from sksparsemax.linear_model import _dask_fit

    original = _dask_fit.DaskLinearLoss.loss_gradient
    timed = _Timed(original)
    _dask_fit.DaskLinearLoss.loss_gradient = lambda self, *a, **k: timed(self, *a, **k)
    try:
        start = time.perf_counter()
        est = make().fit(X, y)
        total = time.perf_counter() - start
    finally:
        _dask_fit.DaskLinearLoss.loss_gradient = original
    return total, est.n_iter_, timed


def _time_dask_ml(X, y, tol, max_iter):
    """dask-ml's fit, its iterations (read from scipy's L-BFGS info) and evaluations."""
    try:
        import dask_glm.algorithms as algorithms
        from dask_ml.linear_model import LogisticRegression
    except Exception as exc:  # noqa: BLE001 - any import failure blocks the comparison
        return f"dask-ml unavailable: {type(exc).__name__}: {exc}"
    original = algorithms.fmin_l_bfgs_b
    record = {}

    def recorded(func, x0, **kwargs):
        timed = record["timed"] = _Timed(func)
        out = original(timed, x0, **kwargs)
        record["nit"] = out[2]["nit"]
        return out

    algorithms.fmin_l_bfgs_b = recorded
    try:
        start = time.perf_counter()
        LogisticRegression(solver="lbfgs", C=1.0, tol=tol, max_iter=max_iter).fit(X, y)
        total = time.perf_counter() - start
    except Exception as exc:  # noqa: BLE001 - report why, keep the other rows
        return f"dask-ml failed: {type(exc).__name__}: {exc}"
    finally:
        algorithms.fmin_l_bfgs_b = original
    return total, record["nit"], record["timed"]


def _row(name, total, n_iter, timed, ref):
    per_iter = total / max(n_iter, 1)
    per_eval = timed.seconds / max(timed.calls, 1)
    ratios = ("" if ref is None else
              f"{per_iter / ref[0]:10.2f} {per_eval / ref[1]:10.2f} {total / ref[2]:9.2f}")
    line = (f"{name:34s} {total:8.2f} {n_iter:6d} {timed.calls:6d} "
            f"{per_iter * 1e3:10.1f} {per_eval * 1e3:10.1f} {ratios}")
    return line, (per_iter, per_eval, total)


def run(rows, features, chunk, tol, max_iter):
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    from sksparsemax import FenchelYoungClassifier, SparsemaxClassifier

    warnings.simplefilter("ignore")  # dask-ml's deprecated config keys; max_iter
    lines = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=40) as cluster, \
            Client(cluster) as client:
        rng = da.random.RandomState(0)
        X = rng.standard_normal(size=(rows, features), chunks=(chunk, features))
        w = np.linspace(-1.0, 1.0, features)
        y = ((X @ w + rng.standard_normal(size=rows, chunks=chunk)) > 0).astype(np.int64)
        X, y = dask.persist(X, y)
        client.wait_for_workers(2)
        lines.append(f"data: {rows} x {features} float64 ({X.nbytes / 1e6:.0f} MB), "
                     f"row chunks of {chunk}, persisted on 2 workers x 1 thread; "
                     f"C=1, tol={tol}, max_iter={max_iter}")
        # Warm-up (imports and numba compilation on the workers).
        FenchelYoungClassifier(loss="softmax", max_iter=2).fit(X[:chunk], y[:chunk])
        SparsemaxClassifier(max_iter=2).fit(X[:chunk], y[:chunk])
        dml = _time_dask_ml(X[:chunk], y[:chunk], tol, 2)
        dml = _time_dask_ml(X, y, tol, max_iter)
        header = (f"{'model':34s} {'fit (s)':>8s} {'iter':>6s} {'evals':>6s} "
                  f"{'ms/iter':>10s} {'ms/eval':>10s} {'iter/ref':>10s} "
                  f"{'eval/ref':>10s} {'fit/ref':>9s}")
        lines += ["", "ref = dask-ml LogisticRegression(solver='lbfgs')", header]
        ref = None
        if isinstance(dml, str):
            lines.append(f"{'dask-ml LogisticRegression':34s} {dml}")
        else:
            line, ref = _row("dask-ml LogisticRegression", *dml, None)
            lines.append(line)
        models = {
            "FenchelYoung(softmax) on dask": lambda: FenchelYoungClassifier(
                loss="softmax", tol=tol, max_iter=max_iter),
            "SparsemaxClassifier on dask": lambda: SparsemaxClassifier(
                tol=tol, max_iter=max_iter),
        }
        for name, make in models.items():
            lines.append(_row(name, *_time_ours(make, X, y), ref)[0])
        lines += _in_memory(models, X, y)
    return lines


def _in_memory(models, X, y):
    """The same fits on the data gathered in this process (a dask-free reference)."""
    Xm, ym = X.compute(), y.compute()
    lines = ["", "in memory (the same data gathered in one process, one thread):"]
    for name, make in models.items():
        start = time.perf_counter()
        est = make().fit(Xm, ym)
        total = time.perf_counter() - start
        lines.append(f"{name.replace(' on dask', ''):34s} {total:8.2f} {est.n_iter_:6d} "
                     f"{'':6s} {total / max(est.n_iter_, 1) * 1e3:10.1f}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--max-iter", type=int, default=100)
    args = parser.parse_args(argv)
    rows = args.rows or (200_000 if args.quick else 2_000_000)
    chunk = max(rows // 8, 1)
    lines = run(rows, args.features, chunk, args.tol, args.max_iter)
    text = "\n".join(lines)
    print(text)
    if args.write:
        import dask
        import sklearn

        RESULTS.write_text(
            "# Fitting on Dask arrays\n\n"
            f"Generated by `python benchmarks/bench_dask_fit.py --write` on {date.today()} "
            f"({platform.machine()}, {os.cpu_count()} CPU(s), Python "
            f"{platform.python_version()}, NumPy {np.__version__}, scikit-learn "
            f"{sklearn.__version__}, dask {dask.__version__}).\n\n```text\n{text}\n```\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
