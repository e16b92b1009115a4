"""Peak memory of the ARFF reader (load_mulan) against the size of what it returns.

Writes a dense ARFF file (numeric features, 0/1 labels, one ``?`` missing
value) and a sparse one (``{index value, ...}`` rows, one ``?``) of about
``--size-mb`` megabytes each in a temporary folder, then loads each in a fresh
subprocess and measures

* the tracemalloc peak (Python objects and NumPy buffers; NumPy reports its
  allocations to tracemalloc) of ``load_mulan`` alone, and
* the growth of the process's maximum resident set size (``ru_maxrss``)
  over the baseline after the imports,

and reports both as a ratio to the file size and to the size of the parsed
arrays (``X`` and ``Y``; for a CSR ``X`` its data, indices and indptr).

Run:  python benchmarks/bench_arff_memory.py [--size-mb 200] [--write]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_FEATURES = 100
N_LABELS = 6

CHILD = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
import scipy.sparse as sp
from sksparsemax.datasets import load_mulan

path, n_labels, trace = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if trace:
    tracemalloc.start()
start = time.perf_counter()
X, Y = load_mulan(path, n_labels=n_labels, return_X_y=True)
seconds = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1] if trace else None
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
if sp.issparse(X):
    x_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
else:
    x_bytes = X.nbytes
print(json.dumps({
    "seconds": seconds, "tracemalloc_peak": peak, "rss_growth": rss,
    "array_bytes": x_bytes + Y.nbytes, "shape": list(X.shape),
    "sparse": bool(sp.issparse(X)),
    "n_missing": int(np.isnan(X.data if sp.issparse(X) else X).sum()),
}))
"""


def _header(n_features, n_labels):
    lines = ["@relation bench"]
    lines += [f"@attribute f{j} numeric" for j in range(n_features)]
    lines += [f"@attribute l{j} {{0,1}}" for j in range(n_labels)]
    lines.append("@data")
    return "\n".join(lines) + "\n"


def write_dense(path, size_mb, seed=0):
    """About ``size_mb`` MB of dense rows; cell (0, 1) is '?'."""
    rng = np.random.default_rng(seed)
    target = size_mb * 1e6
    with open(path, "w") as fh:
        fh.write(_header(N_FEATURES, N_LABELS))
        written, first = 0, True
        while written < target:
            X = rng.standard_normal((2000, N_FEATURES))
            Y = rng.integers(0, 2, size=(2000, N_LABELS))
            rows = [",".join(f"{v:.6g}" if isinstance(v, float) else str(int(v)) for v in r)
                    for r in np.hstack([X, Y]).tolist()]
            if first:
                cells = rows[0].split(",")
                cells[1] = "?"
                rows[0] = ",".join(cells)
                first = False
            block = "\n".join(rows) + "\n"
            fh.write(block)
            written += len(block)
    return os.path.getsize(path)


def write_sparse(path, size_mb, n_features=1000, density=0.02, seed=0):
    """About ``size_mb`` MB of sparse rows; the first entry of row 0 is '?'."""
    rng = np.random.default_rng(seed)
    target = size_mb * 1e6
    with open(path, "w") as fh:
        fh.write(_header(n_features, N_LABELS))
        written, first = 0, True
        while written < target:
            rows = []
            for _ in range(2000):
                k = max(1, rng.binomial(n_features, density))
                idx = np.sort(rng.choice(n_features, size=k, replace=False))
                vals = rng.standard_normal(k)
                labels = n_features + np.flatnonzero(rng.integers(0, 2, N_LABELS))
                entries = [f"{i} {v:.6g}" for i, v in zip(idx.tolist(), vals.tolist())]
                entries += [f"{i} 1" for i in labels.tolist()]
                if first:
                    entries[0] = f"{idx[0]} ?"
                    first = False
                rows.append("{" + ",".join(entries) + "}")
            block = "\n".join(rows) + "\n"
            fh.write(block)
            written += len(block)
    return os.path.getsize(path)


def measure(path, trace):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(N_LABELS), "1" if trace else "0"],
        capture_output=True, text=True, env=env, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# Measured with this script (--size-mb 45 --no-trace) on the reader before the
# block-wise rewrite (one Python str per value once a dense file holds a '?'),
# same machine: RSS growth in MB, parsed arrays in MB.
BEFORE = [
    ("dense", 46.4, 42.4, 1208),
    ("sparse", 45.5, 46.7, 747),
]


def _report(results, size_mb):
    mb = 1e6
    lines = [
        "# ARFF reader: peak memory",
        "",
        f"`python benchmarks/bench_arff_memory.py --size-mb {size_mb:g} --write`: "
        "`load_mulan(path, n_labels=6)` in a fresh subprocess per measurement; "
        f"dense file: {N_FEATURES} numeric features + {N_LABELS} {{0,1}} labels, "
        "one `?`; sparse file: 1000 features at 2 % density + 6 labels, one `?`. "
        "Parsed arrays = X and Y as returned (CSR X: data + indices + indptr). "
        "tracemalloc peak: Python objects and NumPy buffers allocated during the "
        "call; RSS growth: `ru_maxrss` after the call minus `ru_maxrss` after the imports.",
        "",
        "| file | size (MB) | parsed arrays (MB) | time (s) | tracemalloc peak (MB) "
        "| peak / arrays | RSS growth (MB) | RSS growth / arrays | missing kept as NaN |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        peak = r.get("tracemalloc_peak")
        peak_s = f"{peak / mb:.0f}" if peak else "-"
        ratio_s = f"{peak / r['array_bytes']:.2f}" if peak else "-"
        lines.append(
            f"| {r['kind']} | {r['file_bytes'] / mb:.1f} | {r['array_bytes'] / mb:.1f} "
            f"| {r['seconds']:.1f} | {peak_s} | {ratio_s} | {r['rss_growth'] / mb:.0f} "
            f"| {r['rss_growth'] / r['array_bytes']:.2f} | {r['n_missing']} |"
        )
    lines += [
        "",
        "Before the block-wise reader (one Python object per value; `--size-mb 45 --no-trace`):",
        "",
        "| file | size (MB) | parsed arrays (MB) | RSS growth (MB) | RSS growth / arrays |",
        "|---|---|---|---|---|",
    ]
    for kind, size, arrays, rss in BEFORE:
        lines.append(f"| {kind} | {size} | {arrays} | {rss} | {rss / arrays:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=200.0, help="file size (default 200)")
    parser.add_argument("--smoke", action="store_true", help="2 MB files, a quick check")
    parser.add_argument("--no-trace", action="store_true", help="only ru_maxrss (faster)")
    parser.add_argument("--write", action="store_true", help="write arff_memory.md")
    parser.add_argument("--results-dir", default=str(Path(__file__).parent / "results"))
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    size_mb = 2.0 if args.smoke else args.size_mb
    log = (lambda *a: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, writer in (("dense", write_dense), ("sparse", write_sparse)):
            path = Path(tmp) / f"bench-{kind}.arff"
            t0 = time.perf_counter()
            file_bytes = writer(path, size_mb)
            log(f"{kind}: wrote {file_bytes / 1e6:.1f} MB in {time.perf_counter() - t0:.0f} s")
            row = {"kind": kind, "file_bytes": file_bytes}
            row.update(measure(path, trace=False))
            if not args.no_trace:
                row["tracemalloc_peak"] = measure(path, trace=True)["tracemalloc_peak"]
            results.append(row)
            log(json.dumps(row))
            path.unlink()
    text = _report(results, size_mb)
    print(text)
    if args.write:
        out = Path(args.results_dir) / "arff_memory.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return results


if __name__ == "__main__":
    main()
