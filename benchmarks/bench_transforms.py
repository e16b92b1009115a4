"""Benchmark of the mappings of :mod:`sksparsemax.transforms`.

Times, in one process and one run, every mapping (sparsemax, top-k
sparse-softmax with k=5, entmax15, entmax_bisect with alpha=1.5 and 1.7),
with each available backend (NumPy, and numba when installed), against
``scipy.special.softmax`` on float64 standard-normal scores of shape
(100000, 10), (20000, 100), (2000, 1000) and (200, 10000), and against the
PyTorch CPU functions of the ``entmax`` package (single thread) when it is
installed::

    pip install torch==2.13.0 entmax   # CPU build; never an unpinned torch

Usage::

    python benchmarks/bench_transforms.py [--quick] [--repeat N] [--write]

Timing: the contenders of a shape are interleaved (one call of each per
round) and the minimum over the rounds is reported, which is robust to the
noise of a shared machine; a contender stops being repeated once it has used
``--budget`` seconds on a shape (at least 3 rounds). Ratios are time /
time of scipy's softmax (below 1: faster than softmax) and time of the
``entmax`` package / ours (above 1: faster than PyTorch). Memory: the peak
of the NumPy allocations during one call (tracemalloc), as a multiple of the
input's size (the output alone is 1.0). The first-call (JIT) cost of the numba
kernels is measured in fresh subprocesses, with an empty and with a filled
on-disk cache. ``--write`` writes the tables to
``benchmarks/results/transforms.md``.
"""

import argparse
import datetime
import gc
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy
import scipy.special

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sksparsemax.transforms as T  # noqa: E402
from sksparsemax.transforms import _backend  # noqa: E402

SHAPES = [(100000, 10), (20000, 100), (2000, 1000), (200, 10000)]
MAPPINGS = {
    # name: (our function, entmax-package function name or None, kwargs)
    "sparsemax": (T.sparsemax, "sparsemax", {}),
    "sparse_softmax k=5": (lambda z: T.sparse_softmax(z, k=5), None, {}),
    "entmax15": (T.entmax15, "entmax15", {}),
    "entmax_bisect a=1.5": (lambda z: T.entmax_bisect(z, alpha=1.5), "entmax_bisect", {"alpha": 1.5}),
    "entmax_bisect a=1.7": (lambda z: T.entmax_bisect(z, alpha=1.7), "entmax_bisect", {"alpha": 1.7}),
}


def _load_torch_reference():
    try:
        import entmax
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch, entmax


def _torch_fn(ref, fname, kwargs):
    torch, entmax = ref
    f = getattr(entmax, fname)

    def call(t):
        with torch.no_grad():
            return f(t, dim=-1, **kwargs)

    return call


def _with_backend(name, f):
    def call(z):
        with T.backend(name):
            return f(z)

    return call


def _timed_rounds(contenders, args, repeat, budget):
    """Interleaved rounds; returns the minimum time of each contender."""
    best = {k: np.inf for k in contenders}
    spent = {k: 0.0 for k in contenders}
    count = {k: 0 for k in contenders}
    for _ in range(repeat):
        for key, f in contenders.items():
            if count[key] >= 3 and spent[key] > budget:
                continue
            x = args[key]
            t0 = time.perf_counter()
            f(x)
            dt = time.perf_counter() - t0
            best[key] = min(best[key], dt)
            spent[key] += dt
            count[key] += 1
    return best


def _peak_memory(f, z):
    """Peak NumPy allocation during ``f(z)``, as a multiple of ``z.nbytes``."""
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out = f(z)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    return (peak - base) / z.nbytes


_COMPILE_SNIPPET = """
import time, numpy as np
t0 = time.perf_counter()
import sksparsemax.transforms as T
z = np.random.default_rng(0).standard_normal((4, 20))
out = []
for f in (T.sparsemax, lambda z: T.sparse_softmax(z, k=5), T.entmax15,
          lambda z: T.entmax_bisect(z, alpha=1.5)):
    t = time.perf_counter(); f(z); out.append(time.perf_counter() - t)
print(" ".join(f"{x:.3f}" for x in out))
"""


def _first_call_times():
    """First-call times (s) of the numba kernels in fresh processes.

    Returns ``{"cold": [...], "cached": [...]}`` for sparsemax, sparse_softmax,
    entmax15, entmax_bisect (float64): "cold" with an empty numba cache (JIT
    compilation), "cached" in a second process that loads the machine code
    from that cache.
    """
    res = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, SKSPARSEMAX_BACKEND="numba",
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        for label in ("cold", "cached"):
            out = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env,
                                 capture_output=True, text=True, check=True)
            res[label] = [float(x) for x in out.stdout.split()]
    return res


def _fmt_ms(t):
    return "—" if t is None or not np.isfinite(t) else f"{1e3 * t:.2f}"


def _fmt_ratio(r):
    return "—" if r is None or not np.isfinite(r) else f"{r:.2f}"


def run(repeat, budget, shapes):
    ref = _load_torch_reference()
    backends = ["numpy"] + (["numba"] if _backend._numba_available() else [])
    rng = np.random.default_rng(0)
    rows = []
    for shape in shapes:
        z = rng.standard_normal(shape)
        contenders = {"scipy softmax": lambda x: scipy.special.softmax(x, axis=-1)}
        args = {"scipy softmax": z}
        for name, (f, fname, kwargs) in MAPPINGS.items():
            for b in backends:
                contenders[(name, b)] = _with_backend(b, f)
                args[(name, b)] = z
            if ref is not None and fname is not None:
                contenders[(name, "torch")] = _torch_fn(ref, fname, kwargs)
                args[(name, "torch")] = ref[0].from_numpy(z)
        # Warm up (JIT compilation, caches) and check agreement.
        outputs = {key: np.asarray(f(args[key])) for key, f in contenders.items()}
        best = _timed_rounds(contenders, args, repeat, budget)
        t_soft = best["scipy softmax"]
        rows.append((shape, "scipy.special.softmax", "scipy", t_soft, 1.0, None, None,
                     _peak_memory(contenders["scipy softmax"], z), None))
        for name, (f, fname, _) in MAPPINGS.items():
            t_torch = best.get((name, "torch"))
            for b in backends:
                key = (name, b)
                other = (name, "torch") if (name, "torch") in outputs else (name, "numpy")
                diff = float(np.max(np.abs(outputs[key] - outputs[other]))) if other != key else None
                rows.append((shape, name, b, best[key], best[key] / t_soft,
                             None if t_torch is None else t_torch / best[key],
                             diff, _peak_memory(contenders[key], z), other[1] if diff is not None else None))
            if t_torch is not None:
                rows.append((shape, name, "entmax (torch)", t_torch, t_torch / t_soft,
                             1.0, None, None, None))
        print(f"done {shape}", file=sys.stderr, flush=True)
    return rows, ref


def _versions(ref):
    parts = [f"Python {platform.python_version()}", f"NumPy {np.__version__}", f"SciPy {scipy.__version__}"]
    if _backend._numba_available():
        import numba

        parts.append(f"numba {numba.__version__}")
    else:
        parts.append("numba not installed")
    if ref is not None:
        parts.append(f"torch {ref[0].__version__} (1 thread)")
        try:
            from importlib.metadata import version

            parts.append(f"entmax {version('entmax')}")
        except Exception:  # pragma: no cover
            pass
    else:
        parts.append("entmax/torch not installed")
    return ", ".join(parts)


def format_report(rows, ref, repeat, budget, compile_times):
    lines = []
    lines.append("# Benchmark of `sksparsemax.transforms`")
    lines.append("")
    lines.append(f"Generated by `python benchmarks/bench_transforms.py` on "
                 f"{datetime.date.today().isoformat()}; {platform.machine()} "
                 f"{platform.processor() or ''}, {os.cpu_count()} CPU(s). {_versions(ref)}.")
    lines.append("")
    lines.append(f"float64 standard-normal scores; minimum over up to {repeat} interleaved "
                 f"rounds (a contender stops after {budget:g} s on a shape, at least 3 rounds). "
                 "`/ softmax`: time over the time of `scipy.special.softmax` (< 1 is faster). "
                 "`torch / ours`: time of the `entmax` package's PyTorch CPU function over ours "
                 "(> 1 is faster). `mem`: peak NumPy allocation during one call / input size "
                 "(the output alone is 1.0; tracemalloc does not see PyTorch). "
                 "`max |Δ|`: largest absolute difference from the output named after it.")
    lines.append("")
    for shape in dict.fromkeys(r[0] for r in rows):
        lines.append(f"## shape {shape}")
        lines.append("")
        lines.append("| mapping | backend | time (ms) | / softmax | torch / ours | mem (× input) | max \\|Δ\\| |")
        lines.append("|---|---|---:|---:|---:|---:|---|")
        for (shp, name, b, t, r_soft, r_torch, diff, mem, other) in rows:
            if shp != shape:
                continue
            d = "—" if diff is None else f"{diff:.1e} vs {other}"
            m = "—" if mem is None else f"{mem:.2f}"
            lines.append(f"| {name} | {b} | {_fmt_ms(t)} | {_fmt_ratio(r_soft)} | "
                         f"{_fmt_ratio(r_torch)} | {m} | {d} |")
        lines.append("")
    if compile_times:
        names = ["sparsemax", "sparse_softmax", "entmax15", "entmax_bisect"]
        lines.append("## First call of the numba kernels (float64, fresh process)")
        lines.append("")
        lines.append("| kernel | empty cache: JIT compile (s) | filled cache: load (s) |")
        lines.append("|---|---:|---:|")
        for i, n in enumerate(names):
            lines.append(f"| {n} | {compile_times['cold'][i]:.2f} | {compile_times['cached'][i]:.3f} |")
        lines.append("")
        lines.append("The first call also imports numba (included in the sparsemax row). With "
                     "`cache=True` the compiled code is stored on disk, so the compile cost is "
                     "paid once per machine and dtype (float32 compiles separately).")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 rounds, 1 s budget, no first-call subprocesses")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per shape (default 20)")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds per contender and shape before it stops repeating")
    parser.add_argument("--write", action="store_true",
                        help="write the report to benchmarks/results/transforms.md")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 20)
    budget = args.budget or (1.0 if args.quick else 3.0)
    compile_times = None
    if not args.quick and _backend._numba_available():
        compile_times = _first_call_times()
    rows, ref = run(repeat, budget, SHAPES)
    report = format_report(rows, ref, repeat, budget, compile_times)
    print(report)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "transforms.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report + "\n")
        print(f"written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
