"""Smoothing continuation and active-set stages for the top-k model: do they save evaluations?

The top-k loss has kinks where a sample's k-th and (k+1)-th scores tie, and
at the minimiser of ``SparseSoftmaxClassifier`` many samples sit on one, so
L-BFGS ends on the stall rule or the kink certificate after more
evaluations than on a smooth loss (issue 21). This experiment inserts
*stages* between the fit's softmax warm-up and its top-k run, a few L-BFGS
iterations each, then the fit goes on as usual (same solver, whitening,
stopping rules, from the point the stages reached):

- a *smoothing continuation*: a decreasing sequence of smoothed top-k
  losses, ``mu`` the smoothing (below);
- *active-set* stages: the top-k set of each sample is frozen at the
  stage's start, so the loss is the smooth piece of the top-k loss active
  there (:class:`FixedSetTopKLoss`), and the sets are renewed at the next
  stage.

The smoothing. The top-k loss is ``L_k(z; y) = log(sum of the k largest
exp(z_j)) - z_y``, and the sum of the k largest entries of ``v = exp(z)``
is ``max <w, v>`` over the capped simplex ``C_k = {w in [0, 1]^K, sum w =
k}``. The smoothed loss adds the binary entropy ``H_b(w) = -w log w - (1 -
w) log(1 - w)`` of the weights::

    f_mu(z) = max_{w in C_k} log(sum_j w_j exp(z_j)) + mu sum_j H_b(w_j),
    L_mu(z; y) = f_mu(z) - z_y.

For each ``w`` the function of ``z`` is convex (a log-sum-exp with
weights, plus a constant), so ``f_mu``, their maximum, is convex; the
inner problem is strictly concave in ``w``, so its maximiser is unique and
``f_mu`` is differentiable with gradient ``p = w * exp(z) / <w, exp(z)>``, a
distribution (Danskin). ``f_mu(z + c) = f_mu(z) + c``; ``f <= f_mu <= f +
mu K log 2``; as ``mu -> 0`` the weights tend to the indicator of the top k
and ``p`` to the top-k softmax, and for large ``mu`` to ``k / K`` and ``p``
to the softmax. The maximiser solves, with ``u = exp(z - max z)``,
``w_j = sigmoid((t u_j - lam) / mu)``, ``sum w = k`` and ``t <w, u> = 1``:
Newton on ``log t`` (a convex one-dimensional problem), each step with
``lam`` from a safeguarded Newton iteration. Vectorised NumPy: the point is
the number of evaluations, not their speed (a compiled kernel would still
make the same two products with ``X`` per evaluation as the top-k loss's).

For each problem (the dense and the sparse problem of
``bench_estimators.py`` with ``k = 5``, and the issue's wide problem of
``bench_wide_sparse.py`` with ``k = 2``; ``C = 1``, ``tol = 1e-4``) it reports,
for the plain fit and for each schedule of ``(mu, iterations)`` stages: the
evaluations of each loss, the iterations, why the fit stopped, the
objective's relative gap to a long reference fit (``tol = 1e-10``) and the
test accuracy.

Run from the repository root::

    python benchmarks/bench_top_k_smoothing.py            # full sizes (about 12 minutes on 2 cores)
    python benchmarks/bench_top_k_smoothing.py --quick    # small sizes
    python benchmarks/bench_top_k_smoothing.py --write    # also results/top_k_smoothing.md, .json
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402
from unittest import mock  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import entr, expit  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import cpu_model  # noqa: E402
from bench_estimators import _Tee, text_like  # noqa: E402
from bench_wide_sparse import problem as wide_problem  # noqa: E402

from sksparsemax import SparseSoftmaxClassifier  # noqa: E402
from sksparsemax.linear_model import _fit  # noqa: E402
from sksparsemax.linear_model._linear_loss import LinearModelLoss  # noqa: E402
from sksparsemax.linear_model._solver import minimize_lbfgs  # noqa: E402
from sksparsemax.transforms import get_backend  # noqa: E402

#: k of the dense and sparse problems (the estimator benchmark's) and of
#: the wide one (the issue's).
K_TOP, WIDE_K = 5, 2
#: The stage whose top-k sets are frozen (:class:`FixedSetTopKLoss`).
FIXED = "fixed"
#: ``(mu, L-BFGS iterations)`` stages run after the softmax warm-up (``mu``:
#: the smoothing, or ``FIXED``).
SCHEDULES = {
    "plain fit": [],
    "0.1, 0.01, 0.001 (5 each)": [(0.1, 5), (0.01, 5), (0.001, 5)],
    "0.03, 0.003 (5 each)": [(0.03, 5), (0.003, 5)],
    "0.01, 0.001 (5 each)": [(0.01, 5), (0.001, 5)],
    "0.01 (8)": [(0.01, 8)],
    "0.003 (10)": [(0.003, 10)],
    "fixed sets (5), 3 times": [(FIXED, 5)] * 3,
    "0.01 (5), fixed sets (5)": [(0.01, 5), (FIXED, 5)],
}
QUICK_SCHEDULES = ("plain fit", "0.01, 0.001 (5 each)", "fixed sets (5), 3 times")


def _lambda_of(V, lam, mu, k, max_iter=100):
    """``lam`` with ``sum_j sigmoid((V_j - lam) / mu) = k`` in each row.

    Newton steps, safeguarded by a bracket (the sum decreases in ``lam``):
    a step that leaves the bracket is replaced by bisection.
    """
    lo = V.min(axis=1) - 40 * mu
    hi = V.max(axis=1) + 40 * mu
    lam = np.clip(lam, lo, hi)
    for _ in range(max_iter):
        W = expit((V - lam[:, None]) / mu)
        g = W.sum(axis=1) - k
        if np.all(np.abs(g) <= 1e-13 * k):
            break
        slope = -(W * (1 - W)).sum(axis=1) / mu
        lo = np.where(g > 0, lam, lo)
        hi = np.where(g < 0, lam, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = lam - g / slope
        outside = ~np.isfinite(step) | (step <= lo) | (step >= hi)
        lam = np.where(outside, 0.5 * (lo + hi), step)
    return lam


def smoothed_top_k(Z, k, mu, tol=1e-13, max_iter=60):
    """``(f_mu(z), p)`` of each row of ``Z``: the smoothed top-k log-sum-exp and its gradient.

    ``f_mu(z) = max_{w in C_k} log(sum_j w_j exp(z_j)) + mu sum_j H_b(w_j)``
    (see the module docstring), ``p = w * exp(z) / <w, exp(z)>``.
    """
    Z = np.asarray(Z, dtype=np.float64)
    m = Z.max(axis=1)
    U = np.exp(Z - m[:, None])
    largest = -np.partition(-U, (k - 1, k), axis=1)
    # mu -> 0: t = 1 / (sum of the k largest u), lam between the k-th and the
    # (k+1)-th of t u.
    s = -np.log(largest[:, :k].sum(axis=1))
    lam = 0.5 * np.exp(s) * (largest[:, k - 1] + largest[:, k])
    for _ in range(max_iter):
        t = np.exp(s)
        lam = _lambda_of(t[:, None] * U, lam, mu, k)
        W = expit((t[:, None] * U - lam[:, None]) / mu)
        A = (W * U).sum(axis=1)
        slope = t * A - 1  # d/ds of -s + max_w (t <w, u> + mu sum H_b(w)), s = log t
        if np.all(np.abs(slope) <= tol):
            break
        S = W * (1 - W) / mu
        total = S.sum(axis=1)
        mean = (S * U).sum(axis=1) / np.where(total > 0, total, 1)
        curvature = t * A + t * t * (S * (U - mean[:, None]) ** 2).sum(axis=1)
        s = s - np.clip(slope / curvature, -1, 1)
    A = (W * U).sum(axis=1)
    value = m + np.log(A) + mu * (entr(W) + entr(1 - W)).sum(axis=1)
    return value, W * U / A[:, None]


class SmoothedTopKLoss:
    """The smoothed top-k loss ``L_mu(z; y) = f_mu(z) - z_y`` (class targets).

    The base-loss interface of :class:`LinearModelLoss` (``loss_gradient``
    returning the per-sample losses and their gradients ``p - e_y``).
    """

    def __init__(self, k, mu):
        self.k, self.mu = k, mu

    def loss_gradient(self, Z, target, out=None):
        y = target.indices
        rows = np.arange(len(y))
        value, P = smoothed_top_k(Z, self.k, self.mu)
        P[rows, y] -= 1
        return value - Z[rows, y], P

    def loss(self, Z, target):
        return self.loss_gradient(Z, target)[0]


class FixedSetTopKLoss:
    """The top-k loss with each sample's top-k set frozen: ``log sum_{j in S} exp(z_j) - z_y``.

    ``S`` is the top k of the scores of the first evaluation (the stage's
    starting point; among equal scores the lowest indices), so the loss is
    the smooth piece of ``L_k`` active there, a convex lower bound of
    ``L_k`` that equals it at that point: an active-set stage.
    """

    def __init__(self, k):
        self.k, self.top = k, None

    def loss_gradient(self, Z, target, out=None):
        y = target.indices
        rows = np.arange(len(y))
        if self.top is None:
            order = np.argsort(-Z, axis=1, kind="stable")[:, : self.k]
            self.top = np.zeros(Z.shape, dtype=bool)
            np.put_along_axis(self.top, order, True, axis=1)
        masked = np.where(self.top, Z, -np.inf)
        m = masked.max(axis=1, keepdims=True)
        E = np.exp(masked - m)
        total = E.sum(axis=1)
        P = E / total[:, None]
        P[rows, y] -= 1
        return m[:, 0] + np.log(total) - Z[rows, y], P

    def loss(self, Z, target):
        return self.loss_gradient(Z, target)[0]


@contextlib.contextmanager
def continuation(schedule, k=K_TOP):
    """Fits of the top-k model run ``schedule``'s stages after their softmax warm-up."""
    warmup = _fit._smooth_warmup

    def warmup_then_stages(linear_loss, w0, args, settings, policy, precondition):
        w, n_iter = warmup(linear_loss, w0, args, settings, policy, precondition)
        for mu, stage_iter in schedule:
            base = FixedSetTopKLoss(k) if mu == FIXED else SmoothedTopKLoss(k, mu)
            stage = LinearModelLoss(base, linear_loss.fit_intercept)
            w, _, n = minimize_lbfgs(
                stage.loss_gradient, w, args=args, max_iter=stage_iter,
                tol=settings.tol, check=False, precondition=precondition,
            )
            n_iter += n
        return w, n_iter

    with mock.patch.object(_fit, "_smooth_warmup", warmup_then_stages):
        yield


@contextlib.contextmanager
def counted_evaluations():
    """A Counter of the objective's evaluations, by loss class."""
    counts = collections.Counter()
    evaluate = LinearModelLoss.loss_gradient

    def counting(self, *args, **kwargs):
        counts[type(self.base_loss).__name__] += 1
        return evaluate(self, *args, **kwargs)

    with mock.patch.object(LinearModelLoss, "loss_gradient", counting):
        yield counts


def fit(X, y, schedule, k=K_TOP, **params):
    """``(estimator, evaluations, final objective, why it stopped)``."""
    log = io.StringIO()
    with continuation(schedule, k), counted_evaluations() as counts, \
            contextlib.redirect_stderr(log):
        est = SparseSoftmaxClassifier(k=k, verbose=1, **params).fit(X, y)
    last = log.getvalue().strip().splitlines()[-1]
    objective = float(re.search(r"objective ([-+0-9.e]+)", last).group(1))
    return est, dict(counts), objective, last.rsplit(", ", 1)[-1]


def run_problem(title, X_train, y_train, X_test, y_test, schedules, tol, reference_iter,
                k=K_TOP):
    with warnings.catch_warnings():  # the reference may end on max_iter: it is a bound
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, _, reference, _ = fit(X_train, y_train, [], k, C=1.0, tol=1e-10,
                                 max_iter=reference_iter)
    print(f"\n## {title}\n\nk={k}; reference objective {reference:.10f} "
          f"(tol=1e-10, max_iter={reference_iter})\n")
    print("| schedule | softmax | stages | top-k | total | iterations | stop "
          "| gap to the reference | test accuracy |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    rows = []
    for name in schedules:
        with warnings.catch_warnings():  # max_iter: the stop column says so
            warnings.simplefilter("ignore", ConvergenceWarning)
            est, counts, objective, stop = fit(X_train, y_train, SCHEDULES[name], k, C=1.0,
                                               tol=tol, max_iter=100)
        row = dict(
            problem=title, k=k, schedule=name, softmax=counts.get("SoftmaxLoss", 0),
            stages=counts.get("SmoothedTopKLoss", 0) + counts.get("FixedSetTopKLoss", 0),
            top_k=counts.get("SparseSoftmaxLoss", 0), iterations=int(est.n_iter_), stop=stop,
            gap=(objective - reference) / abs(reference),
            accuracy=float(est.score(X_test, y_test)),
        )
        row["total"] = row["softmax"] + row["stages"] + row["top_k"]
        rows.append(row)
        print(f"| {name} | {row['softmax']} | {row['stages']} | {row['top_k']} "
              f"| {row['total']} | {row['iterations']} | {stop} | {row['gap']:.1e} "
              f"| {row['accuracy']:.4f} |", flush=True)
    return rows


def _run(args):
    schedules = QUICK_SCHEDULES if args.quick else tuple(SCHEDULES)
    reference_iter = 200 if args.quick else 600
    print(f"C=1.0, tol={args.tol}, max_iter=100; sksparsemax backend: "
          f"{get_backend()}; evaluations of the objective by loss")
    n, d = (4000, 60) if args.quick else (50000, 200)
    X, y = make_classification(
        n_samples=n, n_features=d, n_informative=30 if args.quick else 50, n_redundant=10,
        n_classes=20, n_clusters_per_class=1, class_sep=1.5, random_state=0,
    )
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    scaler = StandardScaler().fit(X_train)
    rows = run_problem(f"dense {X_train.shape}, 20 classes", scaler.transform(X_train),
                       y_train, scaler.transform(X_test), y_test, schedules, args.tol,
                       reference_iter)
    n, d = (3000, 10000) if args.quick else (20000, 50000)
    X, y = text_like(n, d, 20, 0.005, np.random.default_rng(0))
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    rows += run_problem(f"sparse CSR {X_train.shape}, 20 classes", X_train, y_train, X_test,
                        y_test, schedules, args.tol, reference_iter)
    # The wide problem and k (bench_wide_sparse.py's), where the
    # plain fit stops at max_iter.
    X, y = wide_problem("quick" if args.quick else "full")
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
    rows += run_problem(f"wide CSR {X_train.shape}, 20 classes", X_train, y_train, X_test,
                        y_test, schedules, args.tol, reference_iter, k=WIDE_K)
    return rows


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, two schedules")
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--write", action="store_true",
                        help="also write benchmarks/results/top_k_smoothing.md and .json")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, buffer)):
        rows = _run(args)
    if args.write:
        header = (
            f"Generated by `python benchmarks/bench_top_k_smoothing.py "
            f"{' '.join(argv if argv is not None else sys.argv[1:])}` on "
            f"{time.strftime('%Y-%m-%d')} ({platform.machine()}, {cpu_model()}, "
            f"Python {platform.python_version()}, NumPy {np.__version__})."
        )
        (args.out / "top_k_smoothing.md").write_text(
            "# Smoothing continuation for the top-k model\n\n" + header + "\n\n"
            "See the docstring of the script for the smoothed loss and the protocol. "
            "Columns: evaluations of the objective on each loss (softmax: the warm-up; "
            "stages: the continuation's; top-k: the rest of the fit), the fit's "
            "iterations (`n_iter_`), why it stopped (`status 1`: at max_iter), its "
            "objective's relative gap to the reference and its test accuracy.\n" + buffer.getvalue().rstrip() + "\n",
            encoding="utf-8",
        )
        (args.out / "top_k_smoothing.json").write_text(
            json.dumps({"header": header, "rows": rows}, indent=1) + "\n", encoding="utf-8"
        )
        print(f"written to {args.out}")
    return rows


if __name__ == "__main__":
    main()
