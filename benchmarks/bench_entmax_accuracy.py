"""Accuracy of alpha-entmax for 1 < alpha <= 100 against a 50-digit reference.

For each alpha, the largest absolute error (over all entries) of
``sksparsemax.transforms.entmax_bisect`` (float64 and float32, each backend)
and of the ``entmax`` package's ``entmax_bisect`` (PyTorch CPU, float64 and
float32 tensors, its default ``n_iter=50``) on the same rows, against an
mpmath reference (``mp.dps = 50``; support by the exact criterion
``sum_i [(alpha-1)(z_i - z_j)]_+^(1/(alpha-1)) < 1``, then the sum constraint
bisected with the smallest support entry as unknown, the reference of
``tests/transforms/test_entmax_accuracy.py``). Rows (width 8, shorter ones
padded with ``-inf`` masks): standard-normal scores times 0.003 ... 30, the
issue's row ``[0, -0.01]``, ties, near ties (1e-8 apart) and huge ranges
(1e6 apart). float32 rows are rounded first; the reference uses the rounded
values. If ``entmax`` (and torch) are not installed, its columns are left
out with a note::

    pip install torch==2.13.0 entmax   # CPU build; never an unpinned torch

Usage::

    python benchmarks/bench_entmax_accuracy.py [--write]

``--write`` writes the table to ``benchmarks/results/entmax_accuracy.md``.
"""

import argparse
import datetime
import importlib.util
import platform
import sys
import time
from pathlib import Path

import mpmath as mp
import numpy as np

from sksparsemax.transforms import backend, entmax_bisect

ROOT = Path(__file__).resolve().parents[1]
ALPHAS = [1.01, 1.1, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0]
K = 8
DPS = 50


def ref_row(z, alpha):
    """50-digit alpha-entmax of one row, as mpf (floats taken exactly; -inf are masks).

    Also the reference of ``tests/transforms/test_entmax_accuracy.py``.
    """
    with mp.workdps(DPS):
        a = mp.mpf(float(alpha)) - 1
        e = 1 / a
        zs = [mp.mpf(float(x)) for x in z]
        fin = [x for x in zs if x != -mp.inf]

        def H(t):
            return mp.fsum((a * (x - t)) ** e for x in fin if x > t)

        zr = max(fin)
        for t in sorted(set(fin), reverse=True):
            if H(t) >= 1:
                break
            zr = t
        m = sum(1 for x in fin if x == zr)
        ds = [a * (x - zr) for x in fin if x > zr]
        lo, hi = mp.mpf(-1e5), mp.mpf(0)  # bisection on log u
        for _ in range(3 * DPS + 40):
            mid = (lo + hi) / 2
            um = mp.exp(mid)
            if m * um + mp.fsum((um**a + d) ** e for d in ds) > 1:
                hi = mid
            else:
                lo = mid
        u = mp.exp((lo + hi) / 2)
        return [
            (u**a + a * (x - zr)) ** e if x > zr else (u if x == zr else mp.mpf(0))
            for x in zs
        ]


def rows():
    rng = np.random.default_rng(0)
    out = [[0.0, -0.01], [0.0, -0.01, -0.01], [0.0, -0.01, -0.01 - 1e-8],
           [0.0] * K, [1.0, 1.0, 1.0, 0.99, 0.99, 0.5],
           [0.0, -1e-8, -2e-8, -0.02, -0.02 + 1e-8],
           [0.0, -1e-8, -0.05, -0.05 - 1e-8, -0.1, -0.1 - 1e-8],
           [1e6, 0.0, -1e6, 1e6 - 0.01], [3e6, -3e6, 2e6, 3e6 - 1e-3, 3e6 - 1e-3]]
    for scale in [0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 30.0]:
        for k in [2, 3, 5, K, K, K]:
            out.append(list(rng.standard_normal(k) * scale))
    Z = np.full((len(out), K), -np.inf)
    for i, r in enumerate(out):
        Z[i, : len(r)] = r
    return Z


def _fmt(err):
    if isinstance(err, tuple):
        err, nan_rows = err
        return f"{err:.1e}" + (f" (NaN in {nan_rows} rows)" if nan_rows else "")
    return f"{err:.1e}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true",
                        help="write the table to benchmarks/results/entmax_accuracy.md")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    Z64 = rows()
    Z32 = Z64.astype(np.float32)
    backends = ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else [])
    have_entmax = importlib.util.find_spec("entmax") is not None
    notes = []
    versions = f"Python {platform.python_version()}, NumPy {np.__version__}, mpmath {mp.__version__}"
    if have_entmax:
        import entmax
        import torch

        torch.set_num_threads(1)
        versions += f", torch {torch.__version__}, entmax {getattr(entmax, '__version__', '?')}"
    else:
        notes.append("The `entmax` package is not installed: its columns are left out.")
    cols = [f"ours {dt} ({b})" for dt in ("f64", "f32") for b in backends]
    if have_entmax:
        cols += ["entmax pkg f64", "entmax pkg f32"]
    lines = ["| alpha | " + " | ".join(cols) + " |", "|---:|" + "---:|" * len(cols)]
    for alpha in ALPHAS:
        errs = []
        refs = {}
        for name, Z in (("f64", Z64), ("f32", Z32)):
            refs[name] = np.array([[float(x) for x in ref_row(z, alpha)] for z in Z])
            for b in backends:
                with backend(b):
                    p = entmax_bisect(Z, alpha=alpha)
                errs.append(np.abs(p - refs[name]).max())
        if have_entmax:
            for name, Z, dt in (("f64", Z64, torch.float64), ("f32", Z32, torch.float32)):
                p = entmax.entmax_bisect(torch.tensor(Z, dtype=dt), alpha=alpha, dim=-1)
                err = np.abs(p.double().numpy() - refs[name])
                nan_rows = int(np.isnan(err).any(axis=1).sum())
                errs.append((np.nanmax(err), nan_rows))
        lines.append(f"| {alpha:g} | " + " | ".join(_fmt(e) for e in errs) + " |")
        print(lines[-1], flush=True)
    elapsed = time.perf_counter() - t0
    report = "\n".join([
        "# Accuracy of alpha-entmax (issue 15, item 1)",
        "",
        (f"Generated by `python benchmarks/bench_entmax_accuracy.py` on "
         f"{datetime.date.today().isoformat()}; {versions}; {elapsed:.0f} s."),
        "",
        (f"Max absolute error over {Z64.shape[0]} rows of width {K} (random scores at scales "
        "0.003 to 30, the issue's row `[0, -0.01]`, ties, near ties 1e-8 apart, ranges of 1e6, "
        "`-inf` masks) against a 50-digit mpmath reference. float32 rows are rounded first and "
        "compared with the reference of the rounded values. The `entmax` package: "
        "`entmax.entmax_bisect` (PyTorch CPU, default `n_iter=50`). Required of sksparsemax: "
        "1e-9 (float64), 1e-5 (float32). NaN: rows where the package returns NaN (the max is "
        "over the other entries)."),
        "",
        *lines,
        "",
        *notes,
    ])
    print(report)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "entmax_accuracy.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report + "\n")
        print(f"written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
