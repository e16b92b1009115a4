"""Cold start: the first fit in a fresh environment against a warm one.

With the optional numba backend the compiled kernels are compiled on first
use and cached on disk (``cache=True``). This script measures, in fresh
subprocesses, each with its own empty ``NUMBA_CACHE_DIR``:

* ``import sksparsemax`` and a first ``SparsemaxClassifier().fit`` on
  problems of two sizes: 1000 x 20 with 5 classes (below the size from which
  the kernels are used: no compilation) and 5000 x 100 with 10 classes (the
  kernels apply: compiled on the first fit);
* the same in a second process on the filled cache (kernels loaded from disk);
* the warm fit (the second fit in the same process);
* ``python -m sksparsemax --quick`` end to end, cold and on the filled cache;
* the compile time of each loss's compiled kernel for each of its tasks
  (the rows of a score matrix, dense ``X``, CSR ``X``: see
  ``sksparsemax/losses/_numba_engine.py``), a first call on tiny data in a
  fresh process with an empty cache: what a first fit of that loss on such
  data adds.

Usage::

    python benchmarks/bench_cold_start.py [--write] [--repeat N]

``--write`` writes ``benchmarks/results/cold_start.md``. One BLAS thread;
best of ``--repeat`` fresh processes per cell (each cold run gets a new empty
cache).
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import cpu_model

ROOT = Path(__file__).resolve().parents[1]

_FIT = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
from sksparsemax import SparsemaxClassifier
from sksparsemax.transforms import get_backend
t1 = time.perf_counter()
rng = np.random.default_rng(0)
n, d, k = {n}, {d}, {k}
X = rng.standard_normal((n, d))
y = np.argmax(X @ rng.standard_normal((d, k)) + rng.gumbel(size=(n, k)), axis=1)
a = time.perf_counter(); SparsemaxClassifier().fit(X, y); b = time.perf_counter()
SparsemaxClassifier().fit(X, y); c = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first": b - a, "warm": c - b, "backend": get_backend()}}))
"""

SIZES = [(1000, 20, 5), (5000, 100, 10)]

_KERNEL = r"""
import time, sys
import numpy as np, scipy.sparse as sp
from sksparsemax.losses import EntmaxLoss, SoftmaxLoss, SparseSoftmaxLoss, SparsemaxLoss
loss = {{"sparsemax": SparsemaxLoss(), "softmax": SoftmaxLoss(),
         "top-k (k=3)": SparseSoftmaxLoss(k=3), "1.5-entmax": EntmaxLoss(1.5)}}["{loss}"]
kernel, params = loss._row_kernel_for(10)
params = np.asarray(params, dtype=np.float64)
n, d, K = 64, 8, 10
rng = np.random.default_rng(0)
y = rng.integers(0, K, n).astype(np.intp)
Q, tterm, weights = np.empty((0, 0)), np.zeros(1), np.empty(0)
if "{task}" == "rows":
    Z = rng.standard_normal((n, K))
    task = (Z, y, Q, tterm, np.empty_like(Z), np.empty(n), np.empty(n))
elif "{task}" == "dense":
    X = rng.standard_normal((n, d))
    task = (X, np.zeros((K, d)), np.zeros(K), y, Q, tterm, weights, 1.0, np.zeros((K, d)),
            np.zeros(K))
else:
    X = sp.random(n, d, density=0.3, format="csr", random_state=0)
    task = (X.data, X.indices, X.indptr, np.zeros((d, K)), np.zeros(K), y, Q, tterm, weights,
            1.0, np.zeros((d, K)), np.zeros(K))
t0 = time.perf_counter()
kernel(task, params)
print(time.perf_counter() - t0)
"""

KERNEL_LOSSES = ["sparsemax", "softmax", "top-k (k=3)", "1.5-entmax"]
KERNEL_TASKS = ["rows", "dense", "CSR"]


def _env(cache):
    env = dict(os.environ)
    env.update(NUMBA_CACHE_DIR=cache, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    return env


def _fit_cell(n, d, k, cache):
    out = subprocess.run([sys.executable, "-c", _FIT.format(n=n, d=d, k=k)], env=_env(cache),
                         capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cli_cell(cache, out_dir):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sksparsemax", "--quick", "--report-dir", out_dir],
                   env=_env(cache), capture_output=True, text=True, check=True,
                   cwd=tempfile.gettempdir())
    return time.perf_counter() - start


def _kernel_cell(loss, task, cache):
    out = subprocess.run([sys.executable, "-c", _KERNEL.format(loss=loss, task=task.lower())],
                         env=_env(cache), capture_output=True, text=True, check=True,
                         cwd=tempfile.gettempdir())
    return float(out.stdout.strip().splitlines()[-1])


def measure_kernels(repeat):
    """Compile time (s) of each loss's kernel per task: ``{loss: {task: seconds}}``."""
    times = {}
    for loss in KERNEL_LOSSES:
        for task in KERNEL_TASKS:
            runs = []
            for _ in range(repeat):
                with tempfile.TemporaryDirectory() as cache:
                    runs.append(_kernel_cell(loss, task, cache))
            times.setdefault(loss, {})[task] = min(runs)
    return times


def measure(repeat):
    rows = []
    for n, d, k in SIZES:
        cold, cached = [], []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(_fit_cell(n, d, k, cache))
                cached.append(_fit_cell(n, d, k, cache))
        best = lambda runs, key: min(r[key] for r in runs)  # noqa: E731
        rows.append({
            "problem": f"{n} x {d}, {k} classes", "backend": cold[0]["backend"],
            "import_s": best(cold, "import"), "cold_first_fit_s": best(cold, "first"),
            "cached_first_fit_s": best(cached, "first"), "warm_fit_s": best(cold + cached, "warm"),
        })
    cli = {"cold_s": [], "cached_s": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
            cli["cold_s"].append(_cli_cell(cache, str(Path(out) / "cold")))
            cli["cached_s"].append(_cli_cell(cache, str(Path(out) / "cached")))
    return rows, {key: min(values) for key, values in cli.items()}


def render(rows, cli, repeat, kernels):
    lines = [
        "# Cold start",
        "",
        f"Generated by `python benchmarks/bench_cold_start.py --write` on "
        f"{datetime.date.today()}; {platform.machine()} {cpu_model() or ''}, "
        f"{os.cpu_count()} CPU(s), Python "
        f"{platform.python_version()}. Each cell: best of {repeat} fresh processes, one BLAS "
        "thread; a cold run has an empty numba cache (`NUMBA_CACHE_DIR`), a cached run "
        "reuses the cache the cold run filled. `warm fit`: the second fit in one process.",
        "",
        "| problem | backend | import (s) | first fit, cold cache (s) | first fit, "
        "filled cache (s) | warm fit (s) | cold - warm (s) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['problem']} | {r['backend']} | {r['import_s']:.2f} | "
            f"{r['cold_first_fit_s']:.2f} | {r['cached_first_fit_s']:.2f} | "
            f"{r['warm_fit_s']:.3f} | {r['cold_first_fit_s'] - r['warm_fit_s']:.2f} |"
        )
    lines += [
        "",
        "`python -m sksparsemax --quick`, whole run (wall time, s): cold cache "
        f"{cli['cold_s']:.1f}, filled cache {cli['cached_s']:.1f}.",
        "",
    ]
    lines += [
        "Compile time of each loss's kernel (s): the first call, on tiny data, of a fresh "
        "process with an empty cache (the import excluded); a first fit of the loss on data of "
        "that layout adds it.",
        "",
        "| loss | " + " | ".join(KERNEL_TASKS) + " |",
        "|---|" + "---:|" * len(KERNEL_TASKS),
    ]
    for loss, by_task in kernels.items():
        lines.append(f"| {loss} | " + " | ".join(f"{by_task[t]:.1f}" for t in KERNEL_TASKS) + " |")
    lines.append("")
    small = rows[0]
    lines.append(
        f"Findings: on {small['problem']} the first fit takes "
        f"{small['cold_first_fit_s'] - small['warm_fit_s']:.2f} s more than a warm one "
        f"({'within' if small['cold_first_fit_s'] - small['warm_fit_s'] <= 2 else 'over'} "
        "the 2 s goal); on "
        f"{rows[1]['problem']} the kernels apply and the first fit compiles them: "
        f"{rows[1]['cold_first_fit_s']:.1f} s cold, {rows[1]['cached_first_fit_s']:.2f} s "
        "once cached."
    )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--results-dir", default=str(ROOT / "benchmarks" / "results"))
    args = parser.parse_args(argv)
    rows, cli = measure(args.repeat)
    kernels = measure_kernels(args.repeat)
    text = render(rows, cli, args.repeat, kernels)
    print(text)
    if args.write:
        Path(args.results_dir, "cold_start.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
