"""Mathematical properties of the losses, against independent references.

References used here do not call sksparsemax: subset enumeration of the
simplex QP, a scipy root search for the entmax threshold, scipy.special /
scipy.stats / scikit-learn for the softmax cross-entropy, finite differences
for the gradients.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import approx_fprime, brentq, check_grad
from scipy.special import logsumexp
from scipy.special import softmax as sp_softmax
from scipy.stats import entropy as sp_entropy
from sklearn.metrics import log_loss

from sksparsemax.losses import (
    EntmaxLoss,
    SoftmaxLoss,
    SparseSoftmaxLoss,
    SparsemaxLoss,
    entmax_loss,
    softmax_loss,
    sparse_softmax_loss,
    sparsemax_loss,
    tsallis_entropy,
)

LOSSES = [
    SparsemaxLoss(),
    SparseSoftmaxLoss(1),
    SparseSoftmaxLoss(2),
    SparseSoftmaxLoss(4),
    SparseSoftmaxLoss(5),
    EntmaxLoss(1.0),
    EntmaxLoss(1.25),
    EntmaxLoss(1.5),
    EntmaxLoss(2.0),
    EntmaxLoss(3.0),
    SoftmaxLoss(),
]
LOSS_IDS = [repr(loss) for loss in LOSSES]


def random_problem(rng, n, K, kind, scale=2.0):
    """Scores and a target of the given kind ('indices' or 'proportions')."""
    Z = scale * rng.standard_normal((n, K))
    if kind == "indices":
        return Z, rng.integers(0, K, size=n)
    Q = rng.dirichlet(np.ones(K), size=n)
    Q[Q < 0.1] = 0  # sparse label proportions ...
    Q[np.arange(n), rng.integers(0, K, size=n)] += 0.1  # ... never all zero
    return Z, Q / Q.sum(axis=1, keepdims=True)


def one_hot(y, K):
    return np.eye(K)[y]


# ------------------------------------------------------------ references
def ref_sparsemax_conjugate(z):
    """max_{p in simplex} p.z - |p|^2 / 2 by enumerating candidate supports.

    On a support S the stationary point of the equality-constrained QP is
    p_S = z_S - tau_S, tau_S = (sum z_S - 1)/|S|; the maximiser is the
    feasible (p >= 0) candidate with the largest objective.
    """
    best = -np.inf
    K = len(z)
    for size in range(1, K + 1):
        for S in itertools.combinations(range(K), size):
            S = list(S)
            p = np.zeros(K)
            p[S] = z[S] - (z[S].sum() - 1) / size
            if (p >= 0).all():
                best = max(best, p @ z - 0.5 * p @ p)
    return best


def ref_sparsemax_loss_sorting(z, q):
    """The paper's formula, threshold from the sorting characterisation."""
    zs = np.sort(z)[::-1]
    ks = np.arange(1, len(z) + 1)
    k = ks[1 + ks * zs > np.cumsum(zs)].max()
    tau = (zs[:k].sum() - 1) / k
    S = z > tau
    return -q @ z + 0.5 * np.sum(z[S] ** 2 - tau**2) + 0.5 * q @ q


def ref_tsallis(p, alpha):
    p = p[p > 0]
    if alpha == 1:
        return -np.sum(p * np.log(p))
    return (1 - np.sum(p**alpha)) / (alpha * (alpha - 1))


def ref_entmax_conjugate(z, alpha):
    """max_{p in simplex} p.z + H_alpha(p), threshold by brentq; also p."""
    x = (alpha - 1) * (z - z.max())

    def excess(tau):
        return np.sum(np.maximum(x - tau, 0) ** (1 / (alpha - 1))) - 1

    tau = brentq(excess, -1.0, 0.0, xtol=1e-15, rtol=1e-15)
    p = np.maximum(x - tau, 0) ** (1 / (alpha - 1))
    p /= p.sum()
    return p @ z + ref_tsallis(p, alpha), p


def ref_topk_lse(z, k):
    """max over subsets S of size k of logsumexp(z_S)."""
    return max(logsumexp(z[list(S)]) for S in itertools.combinations(range(len(z)), k))


# ------------------------------------------------------------ gradients
@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", ["indices", "proportions"])
@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_matches_finite_differences(loss, kind, seed):
    rng = np.random.default_rng(seed)
    n, K = 3, 5
    Z, target = random_problem(rng, n, K, kind)

    def f(w):
        return loss.loss(w.reshape(n, K), target).sum()

    grad = loss.gradient(Z, target)
    fd = approx_fprime(Z.ravel(), f, 1e-7)
    np.testing.assert_allclose(grad.ravel(), fd, atol=2e-5)
    # per-sample: check_grad on each row separately
    for i in range(n):
        def fi(z, i=i):
            return loss.loss(z[None], target[i : i + 1])[0]

        def gi(z, i=i):
            return loss.gradient(z[None], target[i : i + 1])[0]

        assert check_grad(fi, gi, Z[i], epsilon=1e-7) < 2e-5


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
def test_gradient_rows_are_mapping_minus_target(loss):
    rng = np.random.default_rng(3)
    Z, Q = random_problem(rng, 50, 6, "proportions")
    G = loss.gradient(Z, Q)
    np.testing.assert_allclose(G, loss.predict_proba(Z) - Q, atol=1e-15)
    np.testing.assert_allclose(G.sum(axis=1), 0, atol=1e-14)


# ------------------------------------------------------------ convexity, sign
@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
@pytest.mark.parametrize("kind", ["indices", "proportions"])
def test_midpoint_convexity_and_non_negativity(loss, kind):
    rng = np.random.default_rng(4)
    n, K = 3000, 5
    Za, target = random_problem(rng, n, K, kind, scale=3.0)
    Zb = 3.0 * rng.standard_normal((n, K))
    la, lb = loss.loss(Za, target), loss.loss(Zb, target)
    lm = loss.loss((Za + Zb) / 2, target)
    assert np.all(lm <= (la + lb) / 2 + 1e-12 * (1 + np.abs(la) + np.abs(lb)))
    assert np.all(la >= -1e-13) and np.all(lb >= -1e-13)


@settings(max_examples=40, deadline=None)
@given(
    z=arrays(np.float64, 4, elements=st.floats(-20, 20)),
    y=st.integers(0, 3),
    i=st.integers(0, len(LOSSES) - 1),
)
def test_non_negative_on_arbitrary_scores(z, y, i):
    value = LOSSES[i].loss(z[None], [y])[0]
    assert value >= -1e-12


def test_softmax_cross_entropy_is_at_least_the_target_entropy():
    rng = np.random.default_rng(5)
    Z, Q = random_problem(rng, 500, 6, "proportions")
    assert np.all(softmax_loss(Z, Q) >= sp_entropy(Q, axis=1) - 1e-12)


# ------------------------------------------------------------ zero sets
@pytest.mark.parametrize("delta", [0.0, 1e-9, 0.5, 3.0])
def test_sparsemax_loss_is_zero_at_and_beyond_the_margin(delta):
    rng = np.random.default_rng(6)
    n, K = 200, 6
    Z = rng.integers(-32, 32, size=(n, K)) / 8.0  # dyadic: z_y - max is exact
    y = rng.integers(0, K, size=n)
    others = np.where(one_hot(y, K) == 1, -np.inf, Z).max(axis=1)
    Z[np.arange(n), y] = others + 1 + delta
    assert np.all(sparsemax_loss(Z, y) == 0)
    assert np.all(SparsemaxLoss().gradient(Z, y) == 0)


@pytest.mark.parametrize("delta", [1e-3, 0.1, 0.9])
def test_sparsemax_loss_is_positive_inside_the_margin(delta):
    rng = np.random.default_rng(7)
    n, K = 200, 6
    Z = rng.integers(-32, 32, size=(n, K)) / 8.0
    y = rng.integers(0, K, size=n)
    others = np.where(one_hot(y, K) == 1, -np.inf, Z).max(axis=1)
    Z[np.arange(n), y] = others + 1 - delta
    values = sparsemax_loss(Z, y)
    assert np.all(values > 0)
    # only the runner-up can enter the support: loss = delta^2 / 4 exactly
    # when it is unique; never below it
    assert np.all(values >= delta**2 / 4 - 1e-12)


@pytest.mark.parametrize("alpha", [1.25, 1.5, 3.0])
def test_entmax_loss_zero_iff_margin(alpha):
    rng = np.random.default_rng(8)
    n, K = 200, 5
    Z = rng.standard_normal((n, K))
    y = rng.integers(0, K, size=n)
    others = np.where(one_hot(y, K) == 1, -np.inf, Z).max(axis=1)
    margin = 1 / (alpha - 1)
    Z[np.arange(n), y] = others + margin * 1.001
    np.testing.assert_allclose(entmax_loss(Z, y, alpha), 0, atol=1e-14)
    Z[np.arange(n), y] = others + margin * 0.99
    assert np.all(entmax_loss(Z, y, alpha) > 0)


@pytest.mark.parametrize("alpha", [1.0, 1.25, 1.5, 2.0, 3.0])
def test_entmax_loss_is_zero_where_entmax_equals_the_proportions(alpha):
    rng = np.random.default_rng(9)
    _, Q = random_problem(rng, 100, 6, "proportions")
    # scores whose entmax is Q: z_j = q_j^(alpha-1)/(alpha-1) on the support
    # (threshold 0), anything <= 0 outside; log q_j for alpha = 1.
    with np.errstate(divide="ignore"):
        if alpha == 1.0:
            Z = np.log(Q)
        else:
            Z = np.where(Q > 0, Q ** (alpha - 1) / (alpha - 1), -1.0)
    Z += 3.0 * rng.standard_normal((100, 1))  # a row shift changes nothing
    np.testing.assert_allclose(entmax_loss(Z, Q, alpha), 0, atol=1e-13)
    assert np.all(entmax_loss(Z, Q, alpha) >= -1e-13)
    np.testing.assert_allclose(EntmaxLoss(alpha).gradient(Z, Q), 0, atol=1e-13)
    if alpha == 2.0:
        np.testing.assert_allclose(sparsemax_loss(Z, Q), 0, atol=1e-13)


def test_top1_loss_is_zero_iff_the_target_is_an_argmax():
    rng = np.random.default_rng(10)
    Z = rng.standard_normal((300, 5))
    y = rng.integers(0, 5, size=300)
    values = sparse_softmax_loss(Z, y, k=1)
    np.testing.assert_allclose(values, Z.max(axis=1) - Z[np.arange(300), y], atol=1e-15)
    assert np.all((values == 0) == (Z.argmax(axis=1) == y))


# ------------------------------------------------------------ binary case
def modified_huber(t):
    return np.where(t >= 1, 0.0, np.where(t > -1, (t - 1) ** 2 / 4, -t))


def test_binary_sparsemax_loss_is_the_modified_huber_loss():
    t = np.concatenate([np.linspace(-4, 4, 161), [-1.0, 1.0, -1 + 1e-9, 1 - 1e-9]])
    c = np.random.default_rng(11).normal(size=t.size)  # a common shift
    Z = np.column_stack([c + t / 2, c - t / 2])
    n = t.size
    np.testing.assert_allclose(sparsemax_loss(Z, np.zeros(n, int)), modified_huber(t), atol=1e-14)
    np.testing.assert_allclose(sparsemax_loss(Z, np.ones(n, int)), modified_huber(-t), atol=1e-14)


# ------------------------------------------------------------ references
@pytest.mark.parametrize("kind", ["indices", "proportions"])
def test_sparsemax_loss_against_brute_force_conjugate(kind):
    rng = np.random.default_rng(12)
    n, K = 40, 5
    Z, target = random_problem(rng, n, K, kind)
    Q = one_hot(target, K) if kind == "indices" else target
    expected = [ref_sparsemax_conjugate(Z[i]) - Q[i] @ Z[i] + 0.5 * Q[i] @ Q[i] for i in range(n)]
    sorting = [ref_sparsemax_loss_sorting(Z[i], Q[i]) for i in range(n)]
    np.testing.assert_allclose(sparsemax_loss(Z, target), expected, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(sparsemax_loss(Z, target), sorting, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("alpha", [1.25, 1.5, 2.5])
@pytest.mark.parametrize("kind", ["indices", "proportions"])
def test_entmax_loss_against_root_search_reference(alpha, kind):
    rng = np.random.default_rng(13)
    n, K = 30, 6
    Z, target = random_problem(rng, n, K, kind)
    Q = one_hot(target, K) if kind == "indices" else target
    expected, probas = [], []
    for i in range(n):
        conj, p = ref_entmax_conjugate(Z[i], alpha)
        # the reference really is the maximum over the simplex
        P = rng.dirichlet(np.ones(K), size=200)
        others = P @ Z[i] + np.array([ref_tsallis(r, alpha) for r in P])
        assert np.all(others <= conj + 1e-12)
        expected.append(conj - Q[i] @ Z[i] - ref_tsallis(Q[i], alpha))
        probas.append(p)
    loss = EntmaxLoss(alpha)
    np.testing.assert_allclose(loss.loss(Z, target), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(loss.gradient(Z, target), np.array(probas) - Q, atol=1e-9)


@pytest.mark.parametrize("kind", ["indices", "proportions"])
def test_sparse_softmax_loss_against_best_subset(kind):
    rng = np.random.default_rng(14)
    n, K = 25, 6
    Z, target = random_problem(rng, n, K, kind)
    Q = one_hot(target, K) if kind == "indices" else target
    for k in range(1, K + 1):
        expected = [ref_topk_lse(Z[i], k) - Q[i] @ Z[i] for i in range(n)]
        np.testing.assert_allclose(sparse_softmax_loss(Z, target, k), expected, rtol=1e-13)


def test_softmax_chain_sparse_softmax_k_equals_K_and_references():
    rng = np.random.default_rng(15)
    n, K = 60, 7
    Z, y = random_problem(rng, n, K, "indices")
    ce = softmax_loss(Z, y)
    reference = -np.log(sp_softmax(Z, axis=1)[np.arange(n), y])
    sk = [log_loss([y[i]], sp_softmax(Z[i : i + 1], axis=1), labels=range(K)) for i in range(n)]
    np.testing.assert_allclose(ce, reference, rtol=1e-12)
    np.testing.assert_allclose(ce, sk, rtol=1e-10)
    for k in (K, K + 3):
        np.testing.assert_allclose(sparse_softmax_loss(Z, y, k), ce, rtol=1e-14)
    np.testing.assert_allclose(entmax_loss(Z, y, alpha=1.0), ce, rtol=1e-14)


def test_softmax_with_proportions_is_entropy_plus_kl():
    rng = np.random.default_rng(16)
    Z, Q = random_problem(rng, 60, 5, "proportions")
    P = sp_softmax(Z, axis=1)
    kl, h = sp_entropy(Q, P, axis=1), sp_entropy(Q, axis=1)
    np.testing.assert_allclose(softmax_loss(Z, Q), kl + h, rtol=1e-12)
    np.testing.assert_allclose(sparse_softmax_loss(Z, Q, 5), kl + h, rtol=1e-12)
    np.testing.assert_allclose(entmax_loss(Z, Q, alpha=1.0), kl, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("kind", ["indices", "proportions"])
def test_top_k_loss_is_non_decreasing_in_k(kind):
    rng = np.random.default_rng(17)
    K = 8
    Z, target = random_problem(rng, 500, K, kind)
    values = np.array([sparse_softmax_loss(Z, target, k) for k in range(1, K + 1)])
    assert np.all(np.diff(values, axis=0) >= -1e-14)
    assert np.any(np.diff(values, axis=0) > 1e-3)


@pytest.mark.parametrize("kind", ["indices", "proportions"])
def test_entmax_special_cases_and_continuity_in_alpha(kind):
    rng = np.random.default_rng(18)
    Z, target = random_problem(rng, 200, 6, kind)
    sm = sparsemax_loss(Z, target)
    np.testing.assert_allclose(entmax_loss(Z, target, 2.0), sm, rtol=1e-13, atol=1e-15)
    # alpha = 2 -/+ tiny and 1.5 + tiny go through the bisection solver
    np.testing.assert_allclose(entmax_loss(Z, target, 2.0 - 1e-9), sm, atol=1e-7)
    np.testing.assert_allclose(entmax_loss(Z, target, 2.0 + 1e-9), sm, atol=1e-7)
    np.testing.assert_allclose(
        entmax_loss(Z, target, 1.5 + 1e-9), entmax_loss(Z, target, 1.5), atol=1e-7
    )
    np.testing.assert_allclose(
        entmax_loss(Z, target, 1.0 + 1e-6), entmax_loss(Z, target, 1.0), atol=1e-5
    )
    G15 = EntmaxLoss(1.5).gradient(Z, target)
    np.testing.assert_allclose(EntmaxLoss(1.5 + 1e-9).gradient(Z, target), G15, atol=1e-7)


# ------------------------------------------------------------ Tsallis entropy
def test_tsallis_entropy_against_closed_forms():
    rng = np.random.default_rng(19)
    P = rng.dirichlet(np.full(5, 0.5), size=40)
    P[:5, 0] = 0
    P /= P.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(tsallis_entropy(P, 1.0), sp_entropy(P, axis=1), rtol=1e-13)
    np.testing.assert_allclose(tsallis_entropy(P, 2.0), (1 - (P**2).sum(axis=1)) / 2, rtol=1e-13)
    for alpha in (1.3, 1.7, 4.0):
        expected = [ref_tsallis(p, alpha) for p in P]
        np.testing.assert_allclose(tsallis_entropy(P, alpha), expected, rtol=1e-12)
    # continuity at alpha = 1 (the expm1 form keeps the accuracy)
    np.testing.assert_allclose(tsallis_entropy(P, 1 + 1e-10), sp_entropy(P, axis=1), rtol=1e-9)
    # one-hot: 0; uniform: (1 - K^(1 - alpha)) / (alpha (alpha - 1))
    assert tsallis_entropy([0.0, 1.0, 0.0], 1.5) == 0
    np.testing.assert_allclose(
        tsallis_entropy(np.full(4, 0.25), 3.0), (1 - 4.0**-2) / 6, rtol=1e-14
    )


def test_tsallis_entropy_axis_dtype_and_errors():
    rng = np.random.default_rng(20)
    P = rng.dirichlet(np.ones(3), size=(2, 4))  # (2, 4, 3)
    moved = np.moveaxis(P, -1, 0)  # distributions along axis 0
    np.testing.assert_allclose(tsallis_entropy(moved, 1.5, axis=0), tsallis_entropy(P, 1.5))
    assert tsallis_entropy(P.astype(np.float32), 1.5).dtype == np.float32
    with pytest.raises(ValueError, match="row 1"):
        tsallis_entropy([[0.5, 0.5], [1.5, -0.5]], 2.0)
    with pytest.raises(ValueError, match="non-negative"):
        tsallis_entropy([0.5, np.nan], 2.0)
    with pytest.raises(ValueError, match="alpha"):
        tsallis_entropy([0.5, 0.5], 0.5)
