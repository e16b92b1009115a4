"""Benchmark of the mappings of :mod:`sksparsemax.transforms`.

Times, in one process and one run, every mapping (sparsemax, top-k
sparse-softmax with k=5, entmax15, entmax_bisect with alpha=1.5, 1.7 and
one alpha per row drawn from {1.2, 1.5, 2, 3}, normmax with alpha=2 (closed
form), 1.5 and 4 (root search), budget_sparsemax with budget=2 and 5
(sort-based)), with each available backend (NumPy, and numba when
installed), against ``scipy.special.softmax`` on float64 standard-normal
scores of shape (100000, 10), (20000, 100), (2000, 1000) and (200, 10000),
and against the PyTorch CPU functions of the ``entmax`` package (single
thread) when it is installed (``sparsemax``, ``entmax15``,
``entmax_bisect``, ``normmax_bisect``, ``budget_bisect``; the bisecting ones
run ``n_iter=50`` halvings, their default, which brings them to about 1e-15
where their bisection converges, budget_bisect to a few 1e-15)::

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
on-disk cache. Where mpmath is installed (and without ``--quick``), the row
on which ours and the ``entmax`` package differ most is solved again with 50
significant digits, to tell which of the two is off. ``--write`` writes the
tables to ``benchmarks/results/transforms.md``.
"""

import argparse
import datetime
import gc
import json
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

from _machine import cpu_model, numpy_exp_simd  # noqa: E402

import sksparsemax.transforms as T  # noqa: E402
from sksparsemax.transforms import _backend  # noqa: E402

SHAPES = [(100000, 10), (20000, 100), (2000, 1000), (200, 10000)]
# n_iter of the entmax package's bisecting functions (their default): 50
# halvings of a bracket of width <= 1 (budget_bisect: <= 1 + the spread of the
# scores) leave about 1e-15 (budget: a few 1e-15).
TORCH_N_ITER = 50
TORCH_BISECTING = ("entmax_bisect", "normmax_bisect", "budget_bisect")
PER_ROW_ALPHAS = (1.2, 1.5, 2.0, 3.0)


def _per_row_alpha(z):
    """One alpha per row (shape (n, 1)), drawn from ``PER_ROW_ALPHAS``."""
    rng = np.random.default_rng(1)
    return {"alpha": rng.choice(PER_ROW_ALPHAS, size=(z.shape[0], 1))}


MAPPINGS = {
    # name: (our function, entmax-package function name or None, kwargs given
    # to both: a dict, or a function of the scores returning one)
    "sparsemax": (T.sparsemax, "sparsemax", {}),
    "sparse_softmax k=5": (T.sparse_softmax, None, {"k": 5}),
    "entmax15": (T.entmax15, "entmax15", {}),
    "entmax_bisect a=1.5": (T.entmax_bisect, "entmax_bisect", {"alpha": 1.5}),
    "entmax_bisect a=1.7": (T.entmax_bisect, "entmax_bisect", {"alpha": 1.7}),
    "entmax_bisect a per row": (T.entmax_bisect, "entmax_bisect", _per_row_alpha),
    "normmax a=2": (T.normmax, "normmax_bisect", {"alpha": 2.0}),
    "normmax a=1.5": (T.normmax, "normmax_bisect", {"alpha": 1.5}),
    "normmax a=4": (T.normmax, "normmax_bisect", {"alpha": 4.0}),
    "budget_sparsemax b=2": (T.budget_sparsemax, "budget_bisect", {"budget": 2}),
    "budget_sparsemax b=5": (T.budget_sparsemax, "budget_bisect", {"budget": 5}),
}


def _kwargs_for(kwargs, z):
    return kwargs(z) if callable(kwargs) else dict(kwargs)


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
    kwargs = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
              for k, v in kwargs.items()}
    if fname in TORCH_BISECTING:
        kwargs["n_iter"] = TORCH_N_ITER

    def call(t):
        with torch.no_grad():
            return f(t, dim=-1, **kwargs)

    return call


def _with_backend(name, f, kwargs):
    def call(z):
        with T.backend(name):
            return f(z, **kwargs)

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
          lambda z: T.entmax_bisect(z, alpha=1.5), lambda z: T.normmax(z, alpha=1.5),
          lambda z: T.budget_sparsemax(z, budget=2)):
    t = time.perf_counter(); f(z); out.append(time.perf_counter() - t)
print(" ".join(f"{x:.3f}" for x in out))
"""


def _first_call_times():
    """First-call times (s) of the numba kernels in fresh processes.

    Returns ``{"cold": [...], "cached": [...]}`` for sparsemax, sparse_softmax,
    entmax15, entmax_bisect, normmax, budget_sparsemax (float64, in this
    order): "cold" with an empty numba cache (JIT
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


def _exact_row(fname, z, kwargs, digits=50):
    """One slice of the entmax-package mapping ``fname``, solved with mpmath.

    The threshold ``tau`` is found by Illinois steps (a bracketed secant)
    with ``digits`` significant digits on the entries that can be in the
    support, and the output rounded to float64 once. ``kwargs`` holds the
    scalar parameter of this slice. Returns None without mpmath.
    """
    try:
        import mpmath
    except ImportError:
        return None
    mp = mpmath.mp
    with mpmath.workdps(digits):
        zmax = float(np.max(z))
        if fname == "budget_bisect":
            b = kwargs["budget"]
            lo = mp.mpf(float(np.sort(z)[::-1][b - 1])) - 1  # top b entries all at 1
            hi = mp.mpf(zmax)
            cand = [mp.mpf(float(x)) for x in z if x > lo]

            def f(t):
                return mp.fsum(min(max(x - t, 0), 1) for x in cand) - b

            def out(t):
                return [min(max(mp.mpf(float(x)) - t, 0), 1) for x in z]
        elif fname == "normmax_bisect":
            a = mp.mpf(kwargs["alpha"])
            e = a / (a - 1)
            lo, hi = mp.mpf(zmax) - 1, mp.mpf(zmax)
            cand = [mp.mpf(float(x)) for x in z if x > zmax - 1]

            def f(t):
                return mp.fsum(max(x - t, 0) ** e for x in cand) - 1

            def out(t):
                q = [max(mp.mpf(float(x)) - t, 0) ** (1 / (a - 1)) for x in z]
                s = mp.fsum(q)
                return [v / s for v in q]
        else:  # sparsemax, entmax15, entmax_bisect: alpha-entmax
            a = mp.mpf(kwargs.get("alpha", {"sparsemax": 2.0, "entmax15": 1.5}.get(fname)))
            lo, hi = (a - 1) * zmax - 1, (a - 1) * zmax
            cand = [(a - 1) * mp.mpf(float(x)) for x in z if (a - 1) * float(x) > lo]

            def f(t):
                return mp.fsum(max(x - t, 0) ** (1 / (a - 1)) for x in cand) - 1

            def out(t):
                return [max((a - 1) * mp.mpf(float(x)) - t, 0) ** (1 / (a - 1)) for x in z]
        flo, fhi = f(lo), f(hi)  # f decreasing: flo >= 0 >= fhi
        side = 0
        for _ in range(400):
            if hi - lo <= mp.mpf(10) ** (-digits + 5) * max(1, abs(lo)):
                break
            t = (lo * fhi - hi * flo) / (fhi - flo)
            if not lo < t < hi:
                t = (lo + hi) / 2
            ft = f(t)
            if ft == 0:
                lo = hi = t
                break
            if ft > 0:
                lo, flo = t, ft
                if side == 1:
                    fhi /= 2
                side = 1
            else:
                hi, fhi = t, ft
                if side == -1:
                    flo /= 2
                side = -1
        return np.array([float(v) for v in out((lo + hi) / 2)])


def _arbitrate(outputs, backends, z, kwargs, name, fname):
    """Errors, against :func:`_exact_row`, on the row where ours and torch differ most."""
    gap = np.max(np.abs(outputs[(name, "numpy")] - outputs[(name, "torch")]), axis=-1)
    i = int(np.argmax(gap))
    row_kwargs = {k: (float(v[i, 0]) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    exact = _exact_row(fname, z[i], row_kwargs)
    if exact is None:
        return None
    err = {b: float(np.max(np.abs(outputs[(name, b)][i] - exact))) for b in backends + ["torch"]}
    return {"row": i, "params": row_kwargs, "gap": float(gap[i]), "err": err}


def run(repeat, budget, shapes, arbiter=True):
    ref = _load_torch_reference()
    backends = ["numpy"] + (["numba"] if _backend._numba_available() else [])
    rng = np.random.default_rng(0)
    rows = []
    checks = []
    for shape in shapes:
        z = rng.standard_normal(shape)
        contenders = {"scipy softmax": lambda x: scipy.special.softmax(x, axis=-1)}
        args = {"scipy softmax": z}
        shape_kwargs = {}
        for name, (f, fname, kwargs) in MAPPINGS.items():
            kw = shape_kwargs[name] = _kwargs_for(kwargs, z)
            for b in backends:
                contenders[(name, b)] = _with_backend(b, f, kw)
                args[(name, b)] = z
            if ref is not None and fname is not None:
                contenders[(name, "torch")] = _torch_fn(ref, fname, kw)
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
                if arbiter:
                    c = _arbitrate(outputs, backends, z, shape_kwargs[name], name, fname)
                    if c is not None:
                        checks.append((shape, name, c))
        del outputs
        print(f"done {shape}", file=sys.stderr, flush=True)
    return rows, ref, checks


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


def format_report(rows, ref, repeat, budget, compile_times, checks=(), wall=None):
    lines = []
    lines.append("# Benchmark of `sksparsemax.transforms`")
    lines.append("")
    lines.append(f"Generated by `python benchmarks/bench_transforms.py` on "
                 f"{datetime.date.today().isoformat()}; {platform.machine()} "
                 f"{cpu_model() or ''}, {os.cpu_count()} CPU(s), NumPy's exp on "
                 f"{numpy_exp_simd() or 'an unreported SIMD target'}. {_versions(ref)}.")
    lines.append("")
    lines.append(f"float64 standard-normal scores; minimum over up to {repeat} interleaved "
                 f"rounds (a contender stops after {budget:g} s on a shape, at least 3 rounds). "
                 "`/ softmax`: time over the time of `scipy.special.softmax` (< 1 is faster). "
                 "`torch / ours`: time of the `entmax` package's PyTorch CPU function over ours "
                 "(> 1 is faster). `mem`: peak NumPy allocation during one call / input size "
                 "(the output alone is 1.0; tracemalloc does not see PyTorch). "
                 "`max |Δ|`: largest absolute difference from the output named after it. "
                 f"The `entmax` package's bisecting functions (`entmax_bisect`, `normmax_bisect`, "
                 f"`budget_bisect`) run `n_iter={TORCH_N_ITER}` (their default). "
                 "`entmax_bisect a per row`: one alpha per row, an array of shape (n, 1) drawn "
                 f"from {{{', '.join(f'{a:g}' for a in PER_ROW_ALPHAS)}}} (the same tensor for "
                 "the `entmax` package).")
    if wall is not None:
        lines.append("")
        lines.append(f"Wall time of the whole run: {wall / 60:.1f} min.")
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
    if checks:
        lines.append("## Which side is off: the row where ours and the entmax package differ most")
        lines.append("")
        lines.append("For each shape and mapping, the row with the largest max |Δ| between our NumPy "
                     "output and the `entmax` package's is solved again with mpmath (50 significant "
                     "digits, rounded to float64 once); the columns are the max absolute error of "
                     "each output on that row. Only that one row per shape is checked.")
        lines.append("")
        backends = [b for b in ("numpy", "numba") if b in checks[0][2]["err"]]
        lines.append("| shape | mapping | row (parameter) | ours − torch | "
                     + " | ".join(f"{b} − exact" for b in backends) + " | torch − exact |")
        lines.append("|---|---|---|---:|" + "---:|" * (len(backends) + 1))
        for shape, name, c in checks:
            par = ", ".join(f"{k}={v:g}" for k, v in c["params"].items())
            lines.append(f"| {shape} | {name} | {c['row']}" + (f" ({par})" if par else "")
                         + f" | {c['gap']:.1e} | "
                         + " | ".join(f"{c['err'][b]:.1e}" for b in backends)
                         + f" | {c['err']['torch']:.1e} |")
        lines.append("")
    if compile_times:
        names = ["sparsemax", "sparse_softmax", "entmax15", "entmax_bisect", "normmax",
                 "budget_sparsemax"]
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
                        help="3 rounds, 1 s budget, no first-call subprocesses, no 50-digit check")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per shape (default 20)")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds per contender and shape before it stops repeating")
    parser.add_argument("--write", action="store_true",
                        help="write the report to benchmarks/results/transforms.md")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 20)
    budget = args.budget or (1.0 if args.quick else 3.0)
    start = time.perf_counter()
    compile_times = None
    if not args.quick and _backend._numba_available():
        compile_times = _first_call_times()
    rows, ref, checks = run(repeat, budget, SHAPES, arbiter=not args.quick)
    report = format_report(rows, ref, repeat, budget, compile_times, checks,
                           wall=time.perf_counter() - start)
    print(report)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "transforms.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report + "\n")
        records = [dict(shape=list(shape), mapping=name, backend=b, time=t, ratio=r)
                   for shape, name, b, t, r, *_ in rows]
        meta = dict(date=datetime.date.today().isoformat(), machine=platform.machine(),
                    cpu=cpu_model(), numpy_exp_simd=numpy_exp_simd(),
                    cpus=os.cpu_count(), python=platform.python_version(),
                    numpy=np.__version__, scipy=scipy.__version__, versions=_versions(ref))
        out.with_suffix(".json").write_text(
            json.dumps(dict(machine=meta, rows=records), indent=1) + "\n")
        print(f"written to {out} and {out.with_suffix('.json').name}", file=sys.stderr)


if __name__ == "__main__":
    main()
