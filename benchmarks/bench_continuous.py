"""Timings of the continuous-attention forward and backward passes.

Run ``python benchmarks/bench_continuous.py`` from the repository root. Prints the
best of a few repeats for r = E_p[psi] and its Jacobian w.r.t. the canonical
parameters, for a batch of densities and a Gaussian RBF basis.
"""

import argparse
import time

import numpy as np

from sksparsemax.continuous import (
    GaussianRBF1D,
    GaussianRBF2D,
    rbf_expectation_1d,
    rbf_expectation_2d,
    rbf_expectation_jacobian_1d,
    rbf_expectation_jacobian_2d,
)


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=10_000, help="number of 1D densities")
    parser.add_argument("--batch-2d", type=int, default=1_000, help="number of 2D densities")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    basis = GaussianRBF1D.uniform(32, [0.1, 0.5])  # N = 64
    mu = rng.uniform(0, 1, args.batch)
    sigma2 = rng.uniform(1e-3, 0.05, args.batch)
    print(f"1D: {args.batch} densities x {basis.n_basis} basis functions (best of {args.repeat})")
    for alpha in [1.0, 2.0, 1.5]:
        path = "closed form" if alpha in (1.0, 2.0) else "adaptive Gauss-Jacobi"
        fwd = best_of(lambda: rbf_expectation_1d(mu, sigma2, basis, alpha), args.repeat)
        bwd = best_of(lambda: rbf_expectation_jacobian_1d(mu, sigma2, basis, alpha), args.repeat)
        print(f"  alpha={alpha:<4} ({path:>21}): forward {fwd * 1e3:8.1f} ms   jacobian {bwd * 1e3:8.1f} ms"
              f"   total {(fwd + bwd) * 1e3:8.1f} ms")

    basis2 = GaussianRBF2D.grid(8, 0.1)  # N = 64
    mu2 = rng.uniform(0, 1, (args.batch_2d, 2))
    A = rng.normal(size=(args.batch_2d, 2, 2)) * 0.1
    Sigma2 = A @ np.swapaxes(A, 1, 2) + 1e-3 * np.eye(2)
    print(f"2D: {args.batch_2d} densities x {basis2.n_basis} basis functions, 100 angles")
    for alpha in [1.0, 2.0]:
        fwd = best_of(lambda: rbf_expectation_2d(mu2, Sigma2, basis2, alpha), args.repeat)
        bwd = best_of(lambda: rbf_expectation_jacobian_2d(mu2, Sigma2, basis2, alpha), args.repeat)
        print(f"  alpha={alpha:<4}: forward {fwd * 1e3:8.1f} ms   jacobian {bwd * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
