"""Independent reference implementations and input strategies for the tests of
:mod:`sksparsemax.transforms`.

Nothing here calls the library.  The references are deliberately naive and
are written straight from the mathematics (``shared/reference/MATH.md``
§1, §3, §4):

* sparsemax from the sorted closed form of Martins & Astudillo (2016), in exact
  rational arithmetic (:class:`fractions.Fraction`), so the reference is the
  correctly rounded projection;
* sparsemax by brute force over every candidate support (exact arithmetic);
* sparsemax as a quadratic programme solved by ``scipy.optimize.minimize``
  (SLSQP), and alpha-entmax as the maximiser of the Tsallis-regularised
  objective, also by SLSQP;
* top-k by a plain selection loop (strict ``>`` over indices in increasing
  order, so among equal scores the lowest index wins);
* softmax with :func:`math.exp` and :func:`math.fsum`;
* alpha-entmax by plain bisection on the threshold.

Every test module runs once per available computational backend of the
library (the pure NumPy path and, when numba is installed, the compiled
kernels): see the autouse fixture ``transforms_backend``.

The references work on one 1-D float64 row; ``-inf`` entries are masks (they
are dropped and get probability 0).  They are handed to the tests through the
session-scoped fixture ``ref`` (a namespace), together with the hypothesis
strategies, so the test modules need no import of this file.
"""

import importlib.util
import itertools
import math
import types
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import strategies as st
from scipy.optimize import minimize

import sksparsemax.transforms as _transforms

# ---------------------------------------------------------------------------
# Backends: run every test module with each implementation of the mappings.
# ---------------------------------------------------------------------------
if hasattr(_transforms, "backend") and hasattr(_transforms, "get_backend"):
    BACKENDS = ["numpy"]
    if importlib.util.find_spec("numba") is not None:
        BACKENDS.append("numba")
else:  # a single implementation
    BACKENDS = [None]


@pytest.fixture(scope="module", autouse=True, params=BACKENDS,
                ids=[b or "default" for b in BACKENDS])
def transforms_backend(request):
    """Select the backend of :mod:`sksparsemax.transforms` for a whole module."""
    if request.param is None:
        yield None
        return
    with _transforms.backend(request.param) as name:
        assert name == request.param
        yield name


# --------------------------------------------------------------------------
# Softmax and top-k
# --------------------------------------------------------------------------
def softmax_naive(z):
    """Softmax of one row with math.exp / math.fsum (``-inf`` -> 0)."""
    z = [float(x) for x in z]
    m = max(z)
    e = [math.exp(x - m) if x != -math.inf else 0.0 for x in z]
    s = math.fsum(e)
    return np.array([x / s for x in e])


def topk_indices_naive(z, k):
    """Indices of the k largest scores, by repeated selection.

    The candidates are scanned in increasing index order and a later one only
    replaces the current best if it is strictly larger, so among equal scores
    the lowest index is selected first.
    """
    z = [float(x) for x in z]
    remaining = list(range(len(z)))
    chosen = []
    for _ in range(min(k, len(z))):
        best = remaining[0]
        for i in remaining[1:]:
            if z[i] > z[best]:
                best = i
        chosen.append(best)
        remaining.remove(best)
    return sorted(chosen)


def sparse_softmax_naive(z, k):
    """Softmax over the naive top-k set, 0 elsewhere."""
    z = [float(x) for x in z]
    idx = topk_indices_naive(z, k)
    p = np.zeros(len(z))
    p[idx] = softmax_naive([z[i] for i in idx])
    return p


def topk_gap(z, k):
    """Gap between the k-th and the (k+1)-th largest finite scores (inf if k >= K)."""
    zs = sorted((float(x) for x in z if np.isfinite(x)), reverse=True)
    if k >= len(zs):
        return math.inf
    return zs[k - 1] - zs[k]


# --------------------------------------------------------------------------
# Sparsemax
# --------------------------------------------------------------------------
def sparsemax_exact(z):
    """Sorted closed form in exact rational arithmetic.

    Sort z descending; k(z) = max{k : 1 + k z_(k) > sum_{j<=k} z_(j)};
    tau = (sum_{j<=k} z_(j) - 1) / k; p_i = [z_i - tau]_+.

    Returns ``(p, tau, k)``: ``p`` float64 (each entry the correctly rounded
    value of the exact projection), ``tau`` a Fraction, ``k`` an int.
    """
    z = np.asarray(z, dtype=np.float64)
    fin = [Fraction(float(x)) for x in z if np.isfinite(x)]
    zs = sorted(fin, reverse=True)
    k = 0
    csum = Fraction(0)
    for j, x in enumerate(zs, start=1):
        csum += x
        if 1 + j * x > csum:
            k = j
    tau = (sum(zs[:k], Fraction(0)) - 1) / k
    p = np.array(
        [float(max(Fraction(float(x)) - tau, 0)) if np.isfinite(x) else 0.0 for x in z]
    )
    return p, tau, k


def sparsemax_brute_force(z):
    """Euclidean projection onto the simplex by enumerating all supports.

    For each nonempty subset S of the unmasked indices, the minimiser of
    ||p - z||^2 on the affine hull of the face {p_S >= 0, p_rest = 0, sum p = 1}
    is p_S = z_S - (sum z_S - 1)/|S|; if it is non-negative it is a feasible
    point of the simplex.  The projection is the feasible candidate with the
    smallest distance (exact arithmetic; only for small K).
    """
    z = np.asarray(z, dtype=np.float64)
    idx = [i for i in range(z.size) if np.isfinite(z[i])]
    zf = {i: Fraction(float(z[i])) for i in idx}
    best, best_dist = None, None
    for r in range(1, len(idx) + 1):
        for S in itertools.combinations(idx, r):
            tau = (sum((zf[i] for i in S), Fraction(0)) - 1) / r
            cand = {i: zf[i] - tau for i in S}
            if any(v < 0 for v in cand.values()):
                continue
            dist = sum(
                ((cand.get(i, Fraction(0)) - zf[i]) ** 2 for i in idx), Fraction(0)
            )
            if best_dist is None or dist < best_dist:
                best, best_dist = cand, dist
    p = np.zeros(z.size)
    for i, v in best.items():
        p[i] = float(v)
    return p


def sparsemax_qp(z):
    """Projection onto the simplex by SLSQP (only the unmasked entries)."""
    z = np.asarray(z, dtype=np.float64)
    fin = np.isfinite(z)
    zf = z[fin]
    K = zf.size
    res = minimize(
        lambda p: np.sum((p - zf) ** 2),
        np.full(K, 1.0 / K),
        jac=lambda p: 2 * (p - zf),
        method="SLSQP",
        bounds=[(0.0, 1.0)] * K,
        constraints=[{"type": "eq", "fun": lambda p: np.sum(p) - 1.0,
                      "jac": lambda p: np.ones_like(p)}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    # status 8 ("positive directional derivative in line search") means no
    # further progress is possible at this ftol: the iterate is at the optimum
    # to working precision.  Anything else is a failure of the reference.
    assert res.status in (0, 8), res.message
    p = np.zeros(z.size)
    p[fin] = res.x
    return p


def sparsemax_margin(z):
    """min_i |z_i - tau| over the unmasked entries (distance to a kink)."""
    _, tau, _ = sparsemax_exact(z)
    return min(abs(float(Fraction(float(x)) - tau)) for x in z if np.isfinite(x))


# --------------------------------------------------------------------------
# alpha-entmax
# --------------------------------------------------------------------------
def entmax_bisect_naive(z, alpha, n_iter=2000):
    """alpha-entmax (alpha > 1) by plain bisection on the threshold.

    x = (alpha - 1)(z - max z); find tau with sum_i [x_i - tau]_+^{1/(alpha-1)}
    = 1 in [-1, -K^{1-alpha}] (the left end gives a sum >= 1, the right end a
    sum <= 1), halving until the bracket can no longer shrink in float64.
    """
    z = np.asarray(z, dtype=np.float64)
    fin = np.isfinite(z)
    x = (alpha - 1.0) * (z[fin] - z[fin].max())
    K = x.size
    e = 1.0 / (alpha - 1.0)

    def mass(t):
        return math.fsum(np.maximum(x - t, 0.0) ** e)

    lo, hi = -1.0, -float(K) ** (1.0 - alpha)
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if mass(mid) > 1.0:
            lo = mid
        else:
            hi = mid
    tau = 0.5 * (lo + hi)
    q = np.maximum(x - tau, 0.0) ** e
    q /= math.fsum(q)
    p = np.zeros(z.size)
    p[fin] = q
    return p, tau


def entmax_margin(z, alpha):
    """min_i |(alpha-1)(z_i - max z) - tau| over the unmasked entries."""
    z = np.asarray(z, dtype=np.float64)
    fin = np.isfinite(z)
    _, tau = entmax_bisect_naive(z, alpha)
    x = (alpha - 1.0) * (z[fin] - z[fin].max())
    return float(np.min(np.abs(x - tau)))


def entmax_tsallis_slsqp(z, alpha):
    """argmax_{p in simplex} p.z + (1 - sum p^alpha) / (alpha (alpha - 1)) by SLSQP."""
    z = np.asarray(z, dtype=np.float64)
    K = z.size
    c = 1.0 / (alpha * (alpha - 1.0))

    def neg(p):
        q = np.maximum(p, 0.0)
        return -(q @ z + c * (1.0 - np.sum(q**alpha)))

    def neg_grad(p):
        q = np.maximum(p, 0.0)
        return -(z - c * alpha * q ** (alpha - 1.0))

    res = minimize(
        neg,
        np.full(K, 1.0 / K),
        jac=neg_grad,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * K,
        constraints=[{"type": "eq", "fun": lambda p: np.sum(p) - 1.0,
                      "jac": lambda p: np.ones_like(p)}],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    # status 8 ("positive directional derivative in line search") means no
    # further progress is possible at this ftol: the iterate is at the optimum
    # to working precision.  Anything else is a failure of the reference.
    assert res.status in (0, 8), res.message
    return res.x


# --------------------------------------------------------------------------
# Finite differences
# --------------------------------------------------------------------------
def central_difference(f, z, v, h):
    """(f(z + h v) - f(z - h v)) / (2 h), in float64."""
    z = np.asarray(z, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    return (np.asarray(f(z + h * v)) - np.asarray(f(z - h * v))) / (2.0 * h)


# --------------------------------------------------------------------------
# Hypothesis strategies
# --------------------------------------------------------------------------
KINDS = ("moderate", "ties", "grid", "large_spread", "tiny_spread", "offset",
         "clustered")


def _floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def score_vectors(draw, min_size=1, max_size=10, kinds=KINDS, masks=False):
    """1-D float64 score vectors, including adversarial ones.

    kinds: ``moderate`` (uniform in [-3, 3]); ``ties`` (values drawn from a
    pool of at most 3, so repeated values are common); ``grid`` (multiples of
    1/8 in [-2, 2]: exact arithmetic, many ties, many points exactly on a
    kink); ``large_spread`` (in [-1e3, 1e3]); ``tiny_spread`` (a common value
    up to 1e3 plus perturbations below 1e-6); ``offset`` (a common value up to
    1e4 plus [-2, 2]).  With ``masks=True`` some entries (never all) are -inf.
    """
    K = draw(st.integers(min_size, max_size))
    kind = draw(st.sampled_from(kinds))
    if kind == "moderate":
        vals = draw(st.lists(_floats(-3, 3), min_size=K, max_size=K))
    elif kind == "ties":
        pool = draw(st.lists(_floats(-2, 2), min_size=1, max_size=3))
        vals = draw(st.lists(st.sampled_from(pool), min_size=K, max_size=K))
    elif kind == "grid":
        vals = [i / 8 for i in draw(st.lists(st.integers(-16, 16), min_size=K, max_size=K))]
    elif kind == "large_spread":
        vals = draw(st.lists(_floats(-1e3, 1e3), min_size=K, max_size=K))
    elif kind == "tiny_spread":
        base = draw(_floats(-1e3, 1e3))
        vals = [base + d for d in draw(st.lists(_floats(-1e-6, 1e-6), min_size=K, max_size=K))]
    elif kind == "offset":
        base = draw(_floats(-1e4, 1e4))
        vals = [base + d for d in draw(st.lists(_floats(-2, 2), min_size=K, max_size=K))]
    else:  # clustered
        power = draw(st.sampled_from([0.5, 1.0, 3.0]))
        scale = draw(st.sampled_from([0.3, 1.0, 1.5]))
        u = draw(st.lists(st.floats(0, 1), min_size=K, max_size=K))
        vals = [-scale * x**power for x in u]
    z = np.array(vals, dtype=np.float64)
    if masks and K >= 2:
        mask = np.array(draw(st.lists(st.booleans(), min_size=K, max_size=K)))
        if mask.all():
            mask[draw(st.integers(0, K - 1))] = False
        z[mask] = -np.inf
    return z


@st.composite
def score_matrices(draw, max_rows=6, min_size=1, max_size=10, kinds=KINDS, masks=False):
    """2-D float64 (n_rows, K) arrays whose rows come from :func:`score_vectors`."""
    K = draw(st.integers(min_size, max_size))
    n = draw(st.integers(1, max_rows))
    rows = [
        draw(score_vectors(min_size=K, max_size=K, kinds=kinds, masks=masks))
        for _ in range(n)
    ]
    return np.stack(rows)


def moderate_vectors(min_size=2, max_size=6, lo=-2.0, hi=2.0):
    """Plain vectors with entries in [lo, hi] (for finite-difference tests)."""
    return st.integers(min_size, max_size).flatmap(
        lambda K: st.lists(_floats(lo, hi), min_size=K, max_size=K).map(
            lambda v: np.array(v, dtype=np.float64)
        )
    )


def tangent_vectors(K):
    """Tangent vectors with entries in [-1, 1]."""
    return st.lists(_floats(-1, 1), min_size=K, max_size=K).map(
        lambda v: np.array(v, dtype=np.float64)
    )


def random_rows(rng, n, K, masks=True):
    """A batch (n, K) whose rows are of mixed kinds (numpy Generator ``rng``).

    Per row: normal scores at scale 0.1, 1 or 3; ``clustered`` ones in
    (-1, 0] (large supports, slow threshold searches); dyadic ties; an
    offset of 1e4; and, with ``masks``, about a third of the entries -inf
    (never a whole row).  Mixing them in one batch makes rows converge after
    different numbers of steps.
    """
    Z = np.empty((n, K))
    for i in range(n):
        kind = rng.integers(5)
        if kind == 0:
            Z[i] = rng.normal(scale=rng.choice([0.1, 1.0, 3.0]), size=K)
        elif kind == 1:
            Z[i] = -rng.uniform(size=K) ** rng.choice([0.5, 1.0, 3.0]) * rng.choice([0.3, 1.0])
        elif kind == 2:
            Z[i] = rng.integers(-8, 9, size=K) / 8
        elif kind == 3:
            Z[i] = 1e4 + rng.normal(size=K)
        else:
            Z[i] = rng.normal(size=K) / np.sqrt(K)  # everything in the support
        if masks and rng.uniform() < 0.3:
            m = rng.uniform(size=K) < 0.3
            m[rng.integers(K)] = False
            Z[i, m] = -np.inf
    return Z


def assert_on_simplex(p, axis=-1, atol=None):
    """Every slice along ``axis`` is non-negative and sums to one."""
    p = np.asarray(p)
    if atol is None:
        atol = 8 * p.shape[axis] * np.finfo(p.dtype).eps
    assert np.all(np.isfinite(p)), p
    assert np.all(p >= 0), p
    np.testing.assert_allclose(p.sum(axis=axis, dtype=np.float64), 1.0, rtol=0, atol=atol)


def apply_rows(f, Z):
    """Apply a 1-D reference to every row of a 2-D array."""
    return np.stack([f(row) for row in np.asarray(Z)])


class _Namespace(types.SimpleNamespace):
    def __repr__(self):  # keep hypothesis' falsifying examples readable
        return "ref"


REF = _Namespace(
    softmax=softmax_naive,
    topk_indices=topk_indices_naive,
    sparse_softmax=sparse_softmax_naive,
    topk_gap=topk_gap,
    sparsemax_exact=sparsemax_exact,
    sparsemax=lambda z: sparsemax_exact(z)[0],
    sparsemax_brute_force=sparsemax_brute_force,
    sparsemax_qp=sparsemax_qp,
    sparsemax_margin=sparsemax_margin,
    entmax=lambda z, alpha: entmax_bisect_naive(z, alpha)[0],
    entmax_bisect=entmax_bisect_naive,
    entmax_margin=entmax_margin,
    entmax_tsallis=entmax_tsallis_slsqp,
    central_difference=central_difference,
    score_vectors=score_vectors,
    score_matrices=score_matrices,
    moderate_vectors=moderate_vectors,
    tangent_vectors=tangent_vectors,
    assert_on_simplex=assert_on_simplex,
    random_rows=random_rows,
    apply_rows=apply_rows,
    KINDS=KINDS,
)


@pytest.fixture(scope="session")
def ref():
    """Namespace of the independent references, helpers and strategies."""
    return REF
