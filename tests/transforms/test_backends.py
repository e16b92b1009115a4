"""The NumPy and numba backends of :mod:`sksparsemax.transforms`.

The key correctness checks run under BOTH backends (the numba cases are
skipped, with the reason, when numba is not installed), against naive
sort-based closed forms written here, and the two backends are compared with
each other. The switch itself (``set_backend``, ``backend``,
``get_backend``, ``SKSPARSEMAX_BACKEND``) is tested too.
"""

import contextvars
import importlib.util
import os

import numpy as np
import pytest

import sksparsemax.transforms as T
from sksparsemax.transforms import _backend

HAS_NUMBA = importlib.util.find_spec("numba") is not None
NO_NUMBA = "numba is not installed (pip install 'sksparsemax[fast]') - numba backend not tested"

BACKENDS = [
    "numpy",
    pytest.param("numba", marks=pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)),
]


@pytest.fixture(scope="module", autouse=True)
def transforms_backend():
    """Override conftest's per-module backend: these tests choose their own."""
    yield None


@pytest.fixture(params=BACKENDS)
def use_backend(request):
    with T.backend(request.param) as name:
        assert name == request.param
        yield name


# ---------------------------------------------------------------------------
# Naive references (one row at a time, sort-based closed forms)
# ---------------------------------------------------------------------------
def sparsemax_sorted(z):
    """Martins & Astudillo (2016): sort, k(z), tau, then [z - tau]_+ (row-wise)."""
    z = np.asarray(z, dtype=np.float64)
    out = np.zeros_like(z)
    taus, sizes = [], []
    for r, row in enumerate(z.reshape(-1, z.shape[-1])):
        fin = row[np.isfinite(row)]
        zs = np.sort(fin)[::-1]
        csum = np.cumsum(zs)
        j = np.arange(1, zs.size + 1)
        k = int(j[1 + j * zs > csum].max())
        tau = (csum[k - 1] - 1) / k
        out.reshape(-1, z.shape[-1])[r] = np.maximum(row - tau, 0)
        taus.append(tau)
        sizes.append(k)
    return out, np.array(taus).reshape(z.shape[:-1]), np.array(sizes).reshape(z.shape[:-1])


def entmax15_sorted(z, return_tau=False):
    """Peters et al. (2019), Algorithm 2, on u = (z - max z)/2 (row-wise); and tau in these units."""
    z = np.asarray(z, dtype=np.float64)
    out = np.zeros_like(z)
    taus = []
    for r, row in enumerate(z.reshape(-1, z.shape[-1])):
        fin = np.isfinite(row)
        u = (row[fin] - row[fin].max()) / 2
        us = np.sort(u)[::-1]
        j = np.arange(1, us.size + 1)
        mean = np.cumsum(us) / j
        mean_sq = np.cumsum(us**2) / j
        tau = mean - np.sqrt(np.maximum((1 - j * (mean_sq - mean**2)) / j, 0))
        k = int(np.count_nonzero(tau <= us))
        p = np.zeros(row.size)
        p[fin] = np.maximum(u - tau[k - 1], 0) ** 2
        out.reshape(-1, z.shape[-1])[r] = p / p.sum()
        taus.append(tau[k - 1])
    return (out, np.array(taus)) if return_tau else out


def sparse_softmax_sorted(z, k):
    """Top-k by a stable sort of -z (lowest index first among ties)."""
    z = np.asarray(z, dtype=np.float64)
    out = np.zeros_like(z)
    for r, row in enumerate(z.reshape(-1, z.shape[-1])):
        keep = np.argsort(-row, kind="stable")[:k]
        e = np.exp(row[keep] - row[keep].max())
        out.reshape(-1, z.shape[-1])[r, keep] = e / e.sum()
    return out


def _scores(rng, n, K, scale=1.0, masks=False):
    z = rng.standard_normal((n, K)) * scale
    if masks and K > 1:
        m = rng.random((n, K)) < 0.3
        m[np.arange(n), rng.integers(0, K, n)] = False  # never a full row
        z[m] = -np.inf
    return z


SIZES = [1, 2, 3, 7, 10, 33, 100, 500]
SCALES = [0.01, 0.3, 1.0, 10.0]


def _assert_simplex(p, atol):
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1, dtype=np.float64), 1.0, rtol=0, atol=atol)


# ---------------------------------------------------------------------------
# Correctness under each backend
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("K", SIZES)
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("masks", [False, True])
def test_sparsemax_closed_form(use_backend, K, scale, masks):
    z = _scores(np.random.default_rng(K), 40, K, scale, masks)
    ref, tau_ref, size_ref = sparsemax_sorted(z)
    p = T.sparsemax(z)
    assert p.dtype == np.float64 and p.shape == z.shape
    _assert_simplex(p, 1e-13)
    np.testing.assert_allclose(p, ref, rtol=0, atol=1e-14)
    assert np.all(p[np.isneginf(z)] == 0)
    tau, size = T.sparsemax_threshold(z)
    np.testing.assert_allclose(tau, tau_ref, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(size, size_ref)
    np.testing.assert_array_equal(size, np.count_nonzero(p, axis=-1))


def _rows_with_an_entry_at_the_threshold(rng, n, K):
    """Rows whose first entry equals the threshold of the whole row (exactly).

    With ``r`` the sum of the other entries, ``z0 = (r - 1) / (K - 1)``
    solves ``z0 = (z0 + r - 1) / K``: the closed form of the full support is
    ``z0`` itself, so entry 0 lies on the boundary of the support and the
    rounded closed forms of the supports with and without it straddle it.
    The other entries stay within 1 of each other so that the full support
    is the candidate set of the first step.
    """
    z = rng.uniform(-0.9, 0.0, (n, K))
    z[:, 0] = (z[:, 1:].sum(axis=1) - 1) / (K - 1)
    keep = z[:, 0] > z[:, 1:].max(axis=1) - 1  # entry 0 a candidate too
    return z[keep]


@pytest.mark.parametrize("K", [3, 4, 5, 17, 4097])
def test_sparsemax_entry_at_the_threshold(use_backend, K):
    # A regression test: the compiled kernel counted the support over the
    # whole row at each of Michelot's steps, and on rows like these the
    # rounded threshold could fall back below the boundary entry, the support
    # grow back and the iteration cycle forever (it hung CI on a conformal
    # estimator check). Each threshold must be the closed form of its support.
    z = _rows_with_an_entry_at_the_threshold(np.random.default_rng(K), 2000 if K < 100 else 20, K)
    assert z.shape[0] > 10
    ref, tau_ref, size_ref = sparsemax_sorted(z)
    p = T.sparsemax(z)
    _assert_simplex(p, 1e-13)
    np.testing.assert_allclose(p, ref, rtol=0, atol=1e-14)
    tau, size = T.sparsemax_threshold(z)
    np.testing.assert_allclose(tau, tau_ref, rtol=1e-14, atol=1e-14)
    # The boundary entry may fall on either side by rounding, never more.
    assert np.all(np.abs(size - size_ref) <= 1)
    assert np.all(np.abs(size - np.count_nonzero(p, axis=-1)) <= 1)


def _assert_uniform_on_huge_ties(f, z):
    """Scores made huge, 16 apart: ``f`` is uniform on the ties of each row's maximum.

    At 2**56 the maximum minus 1 or 2 rounds to the maximum itself in
    float64, so the compiled kernels' candidate test must keep the ties.
    """
    grid = np.round(z * 4 + 100.0) * 16
    grid[np.isneginf(z)] = -np.inf
    for offset, dtype in ((2.0**27, np.float32), (2.0**56, np.float64)):
        huge = (grid + offset).astype(dtype)
        assert np.array_equal(huge - dtype(offset), grid)  # exact
        top = huge == huge.max(axis=1, keepdims=True)
        np.testing.assert_allclose(f(huge), top / top.sum(axis=1, keepdims=True), atol=1e-7)


def _rows_around_the_pair_bound(K, dtype):
    """Random rows of ``K`` entries and rows that probe the kernels' start of their iteration.

    On rows of 8 to 31 entries the compiled sparsemax and 1.5-entmax
    kernels start from the threshold of the maxima of two halves of the row
    (entry 0 with the odd entries before the last; the even entries from 2
    with the last one), a lower bound of the row's.
    Rows where the support is those two entries, where the smaller of the
    two is 1 below the maximum (-1 in the units of either mapping's bound:
    its kink), ties between the two, the top three in one half, either half
    holding the maximum, increasing and decreasing rows, all ties, one half
    masked.
    """
    rng = np.random.default_rng(K)
    rows = [_scores(rng, 60, K, s, masks) for s in SCALES for masks in (False, True)]
    special = np.full((11, K), -5.0)
    special[0, [1, 2]] = [0.3, 0.0]  # support = the maxima of the halves
    special[1, [0, 1, K - 1]] = [2.0, 1.9, 1.25]  # the two maxima 0.75 apart
    special[2, [1, 2]] = [1.0, 0.0]  # 1 apart: the sparsemax bound's kink
    special[3, [1, 2]] = [2.0, 0.0]  # 2 apart: the 1.5-entmax bound's kink
    special[4, [2, 3]] = [0.5, 0.5]  # a tie of the two
    special[5, [0, 1, 3]] = [1.0, 0.9, 0.8]  # the top three in one half
    special[6, [2, 4, 6]] = [1.0, 0.9, 0.8]  # ... in the other half
    special[7] = np.linspace(0.0, 1.0, K)  # increasing
    special[8] = np.linspace(1.0, 0.0, K)  # decreasing
    special[9] = 0.25  # all tied: all in the support
    special[10, ::2] = -np.inf  # one half masked
    special[10, 1::2] = rng.standard_normal(special[10, 1::2].shape)
    return np.concatenate(rows + [special]).astype(dtype)


@pytest.mark.parametrize("K", [7, 8, 9, 10, 16, 31, 32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparsemax_short_rows_from_the_alternate_maxima(use_backend, K, dtype):
    # 7 and 32: the lengths around those that start from the pair's bound.
    z = _rows_around_the_pair_bound(K, dtype)
    ref, tau_ref, size_ref = sparsemax_sorted(z)
    p = T.sparsemax(z)
    assert p.dtype == dtype
    atol = 1e-14 if dtype == np.float64 else 2e-6
    _assert_simplex(p, 10 * atol)
    np.testing.assert_allclose(p, ref, rtol=0, atol=atol)
    tau, size = T.sparsemax_threshold(z)
    np.testing.assert_allclose(tau, tau_ref, rtol=0, atol=atol)
    # The support sizes, where no entry is within rounding of the threshold.
    clear = np.all(np.abs(z - tau_ref[:, None]) > 100 * atol, axis=1)
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(size[clear], size_ref[clear])


@pytest.mark.parametrize("K", [7, 8, 9, 10, 16, 31, 32])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_entmax15_short_rows_from_the_alternate_maxima(use_backend, K, dtype):
    _check_entmax15_on(_rows_around_the_pair_bound(K, dtype))


def _check_entmax15_on(z):
    """entmax15 of the rows ``z`` against the sorted closed form; exact zeros 2 below the maximum."""
    ref = entmax15_sorted(z)
    p = T.entmax15(z)
    assert p.dtype == z.dtype
    atol = 1e-13 if z.dtype == np.float64 else 2e-6
    _assert_simplex(p, 10 * atol)
    np.testing.assert_allclose(p, ref, rtol=0, atol=atol)
    assert np.all(p[z <= z.max(axis=1, keepdims=True) - 2] == 0)  # masks included


@pytest.mark.parametrize("K", [8, 9, 10, 24])
def test_numpy_pair_bound_is_a_lower_bound_of_the_threshold(K):
    # The NumPy paths' start (sparsemax and 1.5-entmax, rows of up to 24
    # entries; the halves are the even and the odd entries) on the
    # transposed block, shifted to a maximum of 0 (1.5-entmax: u = z / 2,
    # clipped at -2, as its dense path has it): at least -1, at most the
    # threshold, and the threshold itself where the support is the pair.
    from sksparsemax.transforms._entmax15_numpy import _pair_bound as entmax15_bound
    from sksparsemax.transforms._sparsemax import _pair_bound as sparsemax_bound

    z = _rows_around_the_pair_bound(K, np.float64)
    _, tau_ref, _ = sparsemax_sorted(z)
    _, tau15_ref = entmax15_sorted(z, return_tau=True)
    zmax = z.max(axis=1)
    shifted = np.ascontiguousarray((z - zmax[:, None]).T)
    tight = len(z) - 11  # special[0]: the support is the pair
    for bound, tau in ((sparsemax_bound(shifted), tau_ref - zmax),
                       (entmax15_bound(np.maximum(shifted / 2, -2)), tau15_ref)):
        assert np.all(bound >= -1)
        assert np.all(bound <= tau + 1e-12)
        assert bound[tight] == pytest.approx(tau[tight], abs=1e-15)
        assert np.mean(bound > -1) > 0.3
    for bound in (sparsemax_bound, entmax15_bound):  # one class: no pair
        assert np.all(bound(np.zeros((1, 5))) == -1)


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
@pytest.mark.parametrize("K", [8, 9, 10, 16, 31])
def test_pair_bounds_are_lower_bounds_of_the_thresholds(K):
    # The compiled kernels' starts are correct only as lower bounds (for
    # sparsemax: Michelot's iteration then cannot miss an entry of the
    # support; 1.5-entmax certifies its result whatever the start, so only
    # its speed depends on it), and they are the threshold itself where the
    # support is the two alternate maxima (the first special row).
    from sksparsemax.transforms._numba_entmax15 import _entmax15_pair_bound
    from sksparsemax.transforms._numba_kernels import _sparsemax_pair_bound
    from sksparsemax.transforms._numba_rows import _row_max_and_low

    z = _rows_around_the_pair_bound(K, np.float64)
    _, tau_ref, _ = sparsemax_sorted(z)
    _, tau15_ref = entmax15_sorted(z, return_tau=True)
    zmax = np.empty(len(z))
    found = [_row_max_and_low(z, i, zmax) for i in range(len(z))]
    assert all(ok for _, _, ok in found)
    np.testing.assert_array_equal(zmax, z.max(axis=1))
    bounds = np.array([_sparsemax_pair_bound(low, m) for m, low, _ in found])
    bounds15 = np.array([_entmax15_pair_bound(low, m) for m, low, _ in found])
    assert np.all(bounds >= -1) and np.all(bounds15 >= -1)
    # (rounding: the bound is the threshold on rows whose support is the pair)
    assert np.all(bounds <= tau_ref - zmax + 1e-12)
    assert np.all(bounds15 <= tau15_ref + 1e-12)
    tight = len(z) - 11  # special[0]: the support is the pair
    assert bounds[tight] == pytest.approx(tau_ref[tight] - zmax[tight], abs=1e-15)
    assert bounds15[tight] == pytest.approx(tau15_ref[tight], abs=1e-15)
    assert np.mean(bounds > -1) > 0.3 and np.mean(bounds15 > -1) > 0.3


def _rows_around_the_lane_bound(K, dtype):
    """Random rows of ``K >= 32`` entries and rows that probe the 1.5-entmax kernel's lane bound.

    On such rows the compiled kernel starts its iteration from Newton steps
    on the maxima of the 8 lanes ``j = r (mod 8)`` of the first ``K // 8 *
    8`` entries. Rows where the support is within one lane's maxima, spread
    over all 8 lanes, larger than the lanes can hold, where the maximum is
    among the last ``K mod 8`` entries (outside every lane: when ``K`` is
    not a multiple of 8), where every lane is masked but that maximum,
    ties, and all entries equal.
    """
    rng = np.random.default_rng(K)
    rows = [_scores(rng, 60, K, s, masks) for s in SCALES for masks in (False, True)]
    special = np.full((8, K), -5.0)
    special[0, [0, 8]] = [0.4, 0.0]  # support: two entries of lane 0
    special[1, :8] = np.linspace(0.0, 0.7, 8)  # one entry per lane
    special[2, : K // 2] = np.linspace(0.0, 0.05, K // 2)  # wider than the lanes
    special[3, -1] = 1.0  # the maximum last (outside the lanes if K % 8)
    special[3, :8] = [0.6, 0.2, -0.5, -3.0, 0.9, 0.0, -1.0, 0.5]
    special[4, : K // 8 * 8] = -np.inf  # only the last entries left
    special[4, K // 8 * 8 :] = rng.standard_normal(K % 8)
    special[4, -1] = 2.0
    special[5, ::3] = 1.0  # ties at the maximum
    special[6] = np.round(rng.standard_normal(K))  # ties everywhere
    special[7] = 0.25  # all tied: all in the support
    if K % 8 == 0:  # no entry outside the lanes: rows 3 and 4 hold the maximum in lane 7
        special[4, -8:] = rng.standard_normal(8)
        special[4, -1] = 2.0
    return np.concatenate(rows + [special]).astype(dtype)


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
@pytest.mark.parametrize("K", [32, 33, 39, 100, 128])
def test_entmax15_lane_bound_is_a_lower_bound_of_the_threshold(K):
    # The compiled 1.5-entmax kernel starts rows of 32 to 128 entries from
    # Newton steps on the row's 8 lane maxima. Its result is certified
    # whatever the start, so only its speed depends on the bound being
    # close, but a bound above the threshold would mean wasted passes from
    # the wrong side: at least -1, at most the threshold (sorted closed
    # form), and above -1 on most random rows (a bound that is -1 is no
    # better than the iteration's own start).
    from sksparsemax.transforms._numba_entmax15 import _entmax15_lane_bound
    from sksparsemax.transforms._numba_rows import _row_max_of_lanes

    z = _rows_around_the_lane_bound(K, np.float64)
    finite = np.isfinite(z).any(axis=1)
    _, tau15_ref = entmax15_sorted(z, return_tau=True)
    zmax = np.empty(len(z))
    found = [_row_max_of_lanes(z, i, zmax) for i in range(len(z))]
    assert all(ok for _, _, ok in found)
    np.testing.assert_array_equal(zmax, z.max(axis=1))
    stop = K // 8 * 8
    lanes_ref = np.stack([z[:, r:stop:8].max(axis=1) for r in range(8)], axis=1)
    np.testing.assert_array_equal(np.array([lanes for _, lanes, _ in found]), lanes_ref)
    bounds = np.array([_entmax15_lane_bound(lanes, m) for m, lanes, _ in found])
    assert finite.all() and np.all(bounds >= -1)
    assert np.all(bounds <= tau15_ref + 1e-12)
    n_random = len(SCALES) * 2 * 60
    assert np.mean(bounds[:n_random] > -1) > 0.5
    if K % 8:  # every lane masked: only the last entries are finite
        assert bounds[-4] == -1


@pytest.mark.parametrize("K", [32, 33, 39, 100, 128])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_entmax15_rows_around_the_lane_bound(use_backend, K, dtype):
    _check_entmax15_on(_rows_around_the_lane_bound(K, dtype))


@pytest.mark.parametrize("K", [2047, 2048, 2049, 2055, 20000])
@pytest.mark.parametrize("masks", [False, True])
def test_sparsemax_long_rows(use_backend, K, masks):
    # Both sides of the length where the compiled kernel starts reading a
    # row once, copying the entries above its running maximum minus 1
    # (_SPARSEMAX_ONE_PASS_MIN = 2048 entries; 2055: a tail of 7 after the
    # blocks of 8). Orders that defeat the running maximum: increasing
    # scores (every entry copied), the maximum last, the maximum first.
    rng = np.random.default_rng(K)
    z = np.concatenate([_scores(rng, 3, K, s, masks) for s in SCALES])
    z[0, :] = 1.5  # a row of ties: everything in the support
    z[1, :] = np.linspace(-3.0, 0.5, K)  # increasing
    z[2, :] = np.sort(z[2, :])
    z[2, -1] += 0.25  # the maximum last, after many entries within 1 of it
    z[3, :] = z[3, ::-1] if masks else np.sort(z[3, :])[::-1]
    ref, tau_ref, size_ref = sparsemax_sorted(z)
    p = T.sparsemax(z)
    _assert_simplex(p, 1e-12)
    np.testing.assert_allclose(p, ref, rtol=0, atol=1e-14)
    tau, size = T.sparsemax_threshold(z)
    np.testing.assert_allclose(tau, tau_ref, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(size, size_ref)
    assert size[0] == K
    p32 = T.sparsemax(z.astype(np.float32))
    assert p32.dtype == np.float32
    np.testing.assert_allclose(p32, ref, rtol=0, atol=2e-6)
    _assert_uniform_on_huge_ties(T.sparsemax, z)


@pytest.mark.parametrize("d, K", [(0, 3), (5, 1), (1000, 3), (4000, 20), (7, 20000)])
@pytest.mark.parametrize("src_dtype", [np.float64, np.float32])
def test_copy_transposed_equals_the_transpose(d, K, src_dtype):
    # The blocked transposed copy (the linear models' (d, K) products into
    # their packed (K, d) weights): every entry exactly, in blocks of several
    # rows of src (4000 x 20: 5 blocks), one row each (7 x 20000), one
    # block or none; dst's entries outside its view untouched.
    from sksparsemax.transforms._blocks import copy_transposed

    src = np.random.default_rng(d + K).standard_normal((d, K)).astype(src_dtype)
    packed = np.full(K * d + 3, np.nan)
    dst = packed[: K * d].reshape(K, d)
    copy_transposed(src, dst)
    np.testing.assert_array_equal(dst, src.T.astype(np.float64))
    assert np.isnan(packed[K * d :]).all()


@pytest.mark.parametrize("n, spread", [(5, 1.0), (3000, 1.0), (3000, 30.0)])
def test_padded_buckets_place_every_candidate_once(n, spread):
    # The rows of candidates padded into matrices (the NumPy sparsemax and
    # 1.5-entmax paths on wide rows): every entry of every segment lands
    # once, in its row's line of its matrix, at its position in the
    # segment; few padded entries take one matrix, many uneven ones several.
    from sksparsemax.transforms._blocks import PAD_ONE_MATRIX, padded_buckets

    rng = np.random.default_rng(n)
    counts = 1 + rng.poisson(spread, n)
    counts[0] = 200  # one long segment
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    seen = np.zeros(counts.sum(), int)
    buckets = list(padded_buckets(counts, starts))
    for rows, width, src, dst in buckets:
        assert width == counts[rows].max()
        seen[src] += 1
        row_of_src = np.searchsorted(starts, src, side="right") - 1
        np.testing.assert_array_equal(rows[dst // width], row_of_src)
        np.testing.assert_array_equal(dst % width, src - starts[row_of_src])
    np.testing.assert_array_equal(seen, 1)
    one = n * counts.max() <= max(2 * counts.sum(), PAD_ONE_MATRIX)
    assert (len(buckets) == 1) == one
    assert one == (n == 5)


@pytest.mark.parametrize("K", [25, 100, 1000])
def test_sparsemax_wide_rows_of_uneven_candidates(use_backend, K):
    # Rows whose numbers of entries within 1 of their maximum range from 1
    # to K (scores spread from 1/100 to 100 units), so that the NumPy path
    # pads them into several matrices, and float32.
    rng = np.random.default_rng(K)
    scale = 10.0 ** rng.uniform(-2, 2, (4000, 1))
    z = rng.standard_normal((4000, K)) * scale
    z[0] = 0.0
    ref, tau_ref, size_ref = sparsemax_sorted(z)
    # Rounding of z - max z: a few ulps of the row's largest magnitude.
    ulp = np.abs(z).max(axis=1, keepdims=True)
    p = T.sparsemax(z)
    _assert_simplex(p, 1e-12)
    assert np.all(np.abs(p - ref) <= 4e-16 * ulp + 1e-15)
    assert size_ref.min() == 1 and size_ref.max() == K
    p32 = T.sparsemax(z.astype(np.float32))
    assert p32.dtype == np.float32
    assert np.all(np.abs(p32 - ref) <= 2e-7 * ulp + 2e-6)


@pytest.mark.parametrize("K", [128, 129, 200, 1000, 2055, 20000])
@pytest.mark.parametrize("masks", [False, True])
def test_entmax15_long_rows(use_backend, K, masks):
    # Rows of more than 128 entries are read once by the compiled kernel,
    # listing the entries within 2 of the running maximum and, once 64 are
    # listed, cutting below a lower bound of the threshold from them (raised
    # each time the list doubles). Orders and scales that stress the list:
    # nearly uniform rows (the whole row in the support), increasing scores
    # (every entry listed, the bound raised again and again), the maximum
    # last after many entries close to it, decreasing scores, ties.
    rng = np.random.default_rng(K + 5)
    z = np.concatenate([_scores(rng, 3, K, s, masks) for s in SCALES + [0.001]])
    z[0, :] = 1.5  # a row of ties: everything in the support
    z[1, :] = np.linspace(-3.0, 0.5, K)
    z[2, :] = np.sort(z[2, :])
    z[2, -1] += 0.25
    z[3, :] = z[3, ::-1] if masks else np.sort(z[3, :])[::-1]
    z[4, :] = np.round(z[4, :] * 2) / 2  # ties on a grid
    ref = entmax15_sorted(z)
    p = T.entmax15(z)
    _assert_simplex(p, 1e-12)
    np.testing.assert_allclose(p, ref, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(p > 0, ref > 0)
    assert np.all(p[0] > 0)
    p32 = T.entmax15(z.astype(np.float32))
    assert p32.dtype == np.float32
    np.testing.assert_allclose(p32, ref, rtol=0, atol=2e-6)
    _assert_uniform_on_huge_ties(T.entmax15, z)


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
@pytest.mark.parametrize("K", [129, 1000, 20000])
def test_entmax15_long_rows_match_the_numpy_path(K):
    # The compiled kernel normalises by the NumPy path's row sum, computed
    # from the leaves of NumPy's pairwise sum that hold the support: both
    # backends agree to about one ulp of the threshold.
    rng = np.random.default_rng(K)
    z = np.concatenate([_scores(rng, 5, K, s, masks=True) for s in SCALES])
    for dtype in (np.float64, np.float32):
        zz = z.astype(dtype)
        with T.backend("numpy"):
            ref = T.entmax15(zz)
        with T.backend("numba"):
            p = T.entmax15(zz)
        np.testing.assert_array_equal(p > 0, ref > 0)
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(p, ref, rtol=0, atol=8 * eps)


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_sum_from_listed_columns_is_the_full_row_sum(dtype):
    # The compiled 1.5-entmax kernel normalises a long row by its sum
    # computed from the columns that hold the support only; it must be the
    # pairwise sum of the whole row (_row_sum, NumPy's generic order) to the
    # last bit, the zeros skipped, whatever the length, the number of
    # nonzeros and where they fall (leaf blocks, their 8 lanes and tails),
    # and equal NumPy's own sum to rounding.
    from sksparsemax.transforms._numba_rows import _pairwise_row_sum, _row_sum

    rng = np.random.default_rng(3)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=dtype)
    for K in (129, 130, 255, 1000, 1001, 4099, 20000):
        for n_nonzero in (0, 1, 3, 7, 40, K // 3, K):
            A = np.zeros((2, K), dtype=dtype)
            cols = np.sort(rng.choice(K, size=n_nonzero, replace=False))
            A[1, cols] = rng.random(n_nonzero).astype(dtype) * 10.0 ** rng.integers(-8, 8, n_nonzero)
            full = _row_sum(A, 1, stack, vals)
            np.testing.assert_allclose(full, A[1].sum(dtype=np.float64), rtol=8 * np.finfo(dtype).eps)
            listed = cols.astype(np.intp)
            assert _pairwise_row_sum(A, 1, listed, listed.size, stack, vals) == full
            # Listing more columns (zeros among them) changes nothing.
            more = np.union1d(listed, rng.choice(K, size=min(K, 50), replace=False)).astype(np.intp)
            assert _pairwise_row_sum(A, 1, more, more.size, stack, vals) == full


@pytest.mark.parametrize("K", SIZES)
@pytest.mark.parametrize("masks", [False, True])
def test_entmax15_closed_form(use_backend, K, masks):
    z = _scores(np.random.default_rng(K + 1), 40, K, 2.0, masks)
    p = T.entmax15(z)
    _assert_simplex(p, 1e-13)
    np.testing.assert_allclose(p, entmax15_sorted(z), rtol=0, atol=1e-13)
    assert np.all(p[np.isneginf(z)] == 0)


@pytest.mark.parametrize("K", SIZES)
@pytest.mark.parametrize("k", [1, 2, 5])
def test_sparse_softmax_closed_form(use_backend, K, k):
    z = _scores(np.random.default_rng(K + 2), 40, K, 1.0, masks=True)
    p = T.sparse_softmax(z, k)
    _assert_simplex(p, 1e-13)
    np.testing.assert_allclose(p, sparse_softmax_sorted(z, k), rtol=1e-14, atol=1e-15)


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
@pytest.mark.parametrize("K", [2, 3, 8, 9, 10, 16, 17, 24, 25, 31, 32, 33, 100, 128, 129, 1000])
def test_sparse_softmax_rows_match_the_numpy_path(K):
    # For k <= 8 the compiled kernel maps rows of up to 24 entries by
    # transposed blocks of 32 rows (102 rows here: a partial block), a
    # network per row and the exp of every entry, summed in row order as
    # the NumPy path's transposed blocks; rows of more than k entries at
    # least the k-th largest take a scalar pass of their own. On longer rows
    # it looks for the top k among the entries above a lower bound of the
    # k-th largest (the lane maxima) and sums the kept values as the NumPy
    # path does (sequentially below 8, in pairs of pairs at 8). The same
    # entries are kept, whatever k, ties at the k-th place (scores on a
    # grid of 0.5; rows where every entry ties), -inf masks and dtype, and
    # the values differ only by the rounding of exp (the kernel's
    # polynomial or libm's against NumPy's SIMD exp); the bound must never
    # cut a row's top k (sorted reference).
    rng = np.random.default_rng(K)
    z = np.concatenate([
        _scores(rng, 40, K, 1.0, masks=True),
        np.round(2 * _scores(rng, 40, K, 1.0)) / 2,
        np.zeros((2, K)),
        np.where(rng.random((20, K)) < 0.9, -np.inf, rng.standard_normal((20, K))),
    ])
    z[-20:, 0] = 1.0  # a finite entry in each mostly masked row
    for k in range(1, min(K, 9)):
        for dtype in (np.float32, np.float64):  # float64 last: a, b below
            zz = z.astype(dtype)
            with T.backend("numpy"):
                a = T.sparse_softmax(zz, k)
            with T.backend("numba"):
                b = T.sparse_softmax(zz, k)
            assert b.dtype == dtype
            np.testing.assert_array_equal(b != 0, a != 0, err_msg=f"k={k}, {dtype.__name__}")
            eps = np.finfo(dtype).eps
            np.testing.assert_allclose(b, a, rtol=4 * eps, atol=0,
                                       err_msg=f"k={k}, {dtype.__name__}")
        ref = sparse_softmax_sorted(z, k)
        np.testing.assert_array_equal(b != 0, ref != 0)
        np.testing.assert_allclose(a, ref, rtol=1e-14, atol=1e-15)


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
@pytest.mark.parametrize("K", [2, 3, 8, 10, 17, 24])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_top_k_short_rows_by_blocks_and_by_rows_agree_bit_for_bit(K, dtype):
    # Rows of up to 24 entries are mapped by transposed blocks where the
    # processor vectorises them (AVX-512) and row by row elsewhere: both
    # kernels run here, whatever this processor is, and must give the same
    # bits (the same network, exp and order of sums), the same row maxima,
    # and name the same first invalid row. 70 rows: two full blocks and a
    # partial one; ties at the k-th place, masks, rows of one finite entry.
    from sksparsemax.transforms._numba_columns import sparse_softmax_columns
    from sksparsemax.transforms._numba_top_k import _sparse_softmax_network_rows

    rng = np.random.default_rng(K)
    z = np.concatenate([
        _scores(rng, 30, K, 1.0, masks=True),
        np.round(2 * rng.standard_normal((30, K))) / 2,
        np.zeros((4, K)),
        np.full((6, K), -np.inf),
    ]).astype(dtype)
    z[-6:, K // 2] = rng.standard_normal(6)
    for k in range(1, min(K, 9)):
        a, b = np.empty_like(z), np.empty_like(z)
        ma, mb = np.empty(len(z), dtype), np.empty(len(z), dtype)
        assert sparse_softmax_columns(z, k, a, ma) == -1
        assert _sparse_softmax_network_rows(z, k, b, mb) == -1
        np.testing.assert_array_equal(b, a, err_msg=f"k={k}")
        np.testing.assert_array_equal(mb, ma)
        np.testing.assert_allclose(a, sparse_softmax_sorted(z, k), rtol=0,
                                   atol=2e-6 if dtype == np.float32 else 1e-13)
    for bad_value in (np.nan, np.inf):
        bad = z.copy()
        bad[40, 0] = bad_value
        bad[65, K - 1] = np.nan
        bad[35] = -np.inf  # not finite anywhere: invalid too, and first
        for f in (sparse_softmax_columns, _sparse_softmax_network_rows):
            assert f(bad, 2, np.empty_like(bad), np.empty(len(bad), dtype)) == 35


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
def test_top_k_short_rows_kernel_follows_the_target_processor(monkeypatch):
    # The choice between the two kernels above is the compile target's:
    # transposed blocks only where numba compiles for AVX-512, the host's
    # features or those NUMBA_CPU_FEATURES names.
    from llvmlite import binding
    from numba.core import config

    from sksparsemax.transforms import _numba_columns

    host = bool(binding.get_host_cpu_features().get("avx512f", False) and config.ENABLE_AVX)
    monkeypatch.setattr(config, "CPU_FEATURES", None)
    assert _numba_columns._target_has_avx512() is host
    monkeypatch.setattr(config, "CPU_FEATURES", "+sse2,+avx2,+avx512f,+avx512vl")
    assert _numba_columns._target_has_avx512() is True
    monkeypatch.setattr(config, "CPU_FEATURES", "+sse2,+avx2,-avx512f")
    assert _numba_columns._target_has_avx512() is False
    if "NUMBA_CPU_FEATURES" not in os.environ:
        assert _numba_columns._COLUMNS_VECTORISED is host


@pytest.mark.parametrize("n", [1, 31, 32, 33, 200])
@pytest.mark.parametrize("mapping", ["sparse_softmax", "entmax15"])
def test_short_rows_across_blocks(use_backend, mapping, n):
    # The compiled top-k and 1.5-entmax kernels map rows of up to 24
    # entries by blocks of 32 rows (the 1.5-entmax iteration until every
    # row of the block is certified): every row of every block, the
    # partial last one included, is its row's mapping (rows of ties among
    # them; the two backends within a few ulps), and the first invalid row
    # is named wherever its block is, after valid blocks were written.
    rng = np.random.default_rng(n)
    if mapping == "sparse_softmax":
        f, exact = (lambda z: T.sparse_softmax(z, 3)), (lambda z: sparse_softmax_sorted(z, 3))
    else:
        f, exact = T.entmax15, entmax15_sorted
    for dtype, atol in ((np.float64, 1e-13), (np.float32, 2e-6)):
        for K in (2, 7, 10, 24):
            z = np.round(2 * rng.standard_normal((n, K))).astype(dtype) / 2
            z[: n // 2] = rng.standard_normal((n // 2, K))  # and rows without ties
            p = f(z)
            np.testing.assert_allclose(p, exact(z), rtol=0, atol=atol)
            with T.backend("numpy"):
                np.testing.assert_allclose(p, f(z), rtol=0, atol=4 * np.finfo(dtype).eps)
            bad = z.copy()
            bad[n - 1, K - 1] = np.nan
            if n > 1:
                bad[n - 2, 0] = np.inf  # an earlier invalid row is the one named
            with pytest.raises(ValueError, match=rf"\brow {max(n - 2, 0)}\b"):
                f(bad)


@pytest.mark.parametrize("alpha, exact", [(1.5, entmax15_sorted), (2.0, lambda z: sparsemax_sorted(z)[0])])
@pytest.mark.parametrize("K", [1, 3, 10, 100])
def test_entmax_bisect_matches_exact(use_backend, alpha, exact, K):
    z = _scores(np.random.default_rng(K + 3), 30, K, 1.5, masks=True)
    p = T.entmax_bisect(z, alpha=alpha)
    _assert_simplex(p, 1e-13)
    np.testing.assert_allclose(p, exact(z), rtol=0, atol=1e-12)


def test_ties(use_backend):
    z = np.array([[1.0, 3.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(
        T.sparse_softmax(z, 2), [[0, 0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0, 0]]
    )
    np.testing.assert_allclose(T.sparse_softmax(z, 3)[1], [1 / 3] * 3 + [0, 0], rtol=1e-15)
    np.testing.assert_allclose(T.sparsemax(z), [[0, 1 / 3, 1 / 3, 1 / 3, 0], [0.2] * 5], rtol=1e-15)
    np.testing.assert_allclose(T.entmax15(z[1]), [0.2] * 5, rtol=1e-15)


def test_known_values(use_backend):
    np.testing.assert_allclose(T.sparsemax([1.0, 0.2, -1.0]), [0.9, 0.1, 0.0], atol=1e-16)
    t = np.linspace(-3, 3, 25)
    np.testing.assert_allclose(
        T.sparsemax(np.stack([t, np.zeros_like(t)], axis=-1))[:, 0],
        np.clip((t + 1) / 2, 0, 1),
        atol=1e-16,
    )


@pytest.mark.parametrize(
    "f",
    [
        T.sparsemax,
        lambda z: T.sparse_softmax(z, 2),
        T.entmax15,
        lambda z: T.entmax_bisect(z, alpha=1.7),
    ],
    ids=["sparsemax", "sparse_softmax", "entmax15", "entmax_bisect"],
)
class TestEdgeCases:
    def test_float32_stays_float32(self, use_backend, f):
        z = _scores(np.random.default_rng(0), 30, 12, 1.0, masks=True)
        p32 = f(z.astype(np.float32))
        assert p32.dtype == np.float32
        _assert_simplex(p32, 1e-5)
        np.testing.assert_allclose(p32, f(z), rtol=0, atol=2e-6)

    def test_integers_become_float64(self, use_backend, f):
        assert f(np.array([[3, 1, 0]])).dtype == np.float64

    @pytest.mark.parametrize("K", [5, 30])  # the dense and the flat NumPy paths
    def test_empty_batch(self, use_backend, f, K):
        for dtype in (np.float32, np.float64):
            p = f(np.empty((0, K), dtype=dtype))
            assert p.shape == (0, K) and p.dtype == dtype

    def test_k_equals_one(self, use_backend, f):
        np.testing.assert_array_equal(f(np.array([[-3.0], [5.0], [1e300]])), [[1.0]] * 3)

    @pytest.mark.parametrize("dtype, big", [(np.float64, 1e300), (np.float64, 1.7e308), (np.float32, 3e38)])
    def test_huge_scores_and_shift(self, use_backend, f, dtype, big):
        base = np.array([[0.5, 0.0, -0.25, -3.0], [1.0, 1.0, 0.0, -np.inf]], dtype=dtype)
        p = f(base)
        # a shift by a large constant that keeps the differences exact
        shift = dtype(2.0**40 if dtype == np.float64 else 2.0**16)
        np.testing.assert_allclose(f(base + shift), p, rtol=0, atol=1e-6)
        extreme = np.array([[big, -big, 0.0], [big, big, -big]], dtype=dtype)
        q = f(extreme)
        assert q.dtype == dtype
        np.testing.assert_array_equal(q, [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])

    def test_masks_are_exact_zeros_and_change_nothing(self, use_backend, f):
        rng = np.random.default_rng(5)
        z = rng.standard_normal((20, 9))
        zm = z.copy()
        zm[:, [1, 4]] = -np.inf
        p = f(zm)
        assert np.all(p[:, [1, 4]] == 0)
        np.testing.assert_allclose(p[:, [0, 2, 3, 5, 6, 7, 8]], f(np.delete(z, [1, 4], axis=1)), rtol=0, atol=1e-15)

    def test_invalid_rows_raise_naming_the_row(self, use_backend, f):
        z = np.zeros((5, 4))
        bad = z.copy()
        bad[3, 1] = np.nan
        bad[4, 2] = np.inf
        with pytest.raises(ValueError, match=r"NaN.*\brow 3\b"):
            f(bad)
        bad = z.copy()
        bad[2, 0] = np.inf
        bad[2, 1] = np.nan  # NaN wins within a row, as NumPy's max
        with pytest.raises(ValueError, match=r"NaN.*\brow 2\b"):
            f(bad)
        bad = z.copy()
        bad[1, 3] = np.inf
        with pytest.raises(ValueError, match=r"\+inf.*\brow 1\b"):
            f(bad)
        bad = z.copy()
        bad[4] = -np.inf
        with pytest.raises(ValueError, match=r"-inf.*\brow 4\b"):
            f(bad)
        bad = np.zeros((2, 3, 4), dtype=np.float32)
        bad[1, 2, 0] = np.nan
        with pytest.raises(ValueError, match=r"NaN.*position \(1, 2\)"):
            f(bad)

    def test_invalid_entries_found_anywhere_in_long_rows(self, use_backend, f):
        # The compiled row maximum keeps 8 running maxima on rows of 32
        # entries and more, and finishes the rest one by one, and two over
        # alternate entries on shorter rows (the first and last entries
        # start them): a NaN or +inf in any lane, chain or in the tail must
        # be found, and the maximum of a valid row is the largest entry
        # wherever it is.
        # Rows of 2048 entries and more are read once by the compiled
        # sparsemax, in blocks of 8 and a tail.
        rng = np.random.default_rng(8)
        for K in (1, 2, 3, 4, 5, 10, 31, 32, 33, 47, 100, 2051):
            places = (0, 1, 2, 3, 7, 8, 15, K // 2, K - 4, K - 3, K - 2, K - 1)
            for j in sorted({j for j in places if 0 <= j < K}):
                for bad_value, message in ((np.nan, r"NaN"), (np.inf, r"\+inf")):
                    bad = rng.standard_normal((3, K))
                    bad[2, j] = bad_value
                    with pytest.raises(ValueError, match=message + r".*\brow 2\b"):
                        f(bad)
                z = rng.standard_normal((2, K))
                z[1, j] = 50.0  # far above the others: all the mass (to rounding)
                p = f(z)
                assert np.argmax(p[1]) == j and p[1, j] == pytest.approx(1.0, abs=1e-15)

    def test_layouts_and_axes(self, use_backend, f):
        rng = np.random.default_rng(6)
        z = rng.standard_normal((6, 7, 8))
        ref = f(z.reshape(-1, 8)).reshape(z.shape)
        np.testing.assert_allclose(f(np.asfortranarray(z)), ref, rtol=0, atol=1e-15)
        np.testing.assert_allclose(
            np.moveaxis(_call_axis(f, np.moveaxis(z, -1, 0), 0), 0, -1), ref, rtol=0, atol=1e-15
        )
        zz = np.repeat(z, 2, axis=-1)[..., ::2]  # non-contiguous
        np.testing.assert_allclose(f(zz), ref, rtol=0, atol=1e-15)
        np.testing.assert_allclose(f(z[0, 0]), ref[0, 0], rtol=0, atol=1e-15)

    def test_input_not_modified(self, use_backend, f):
        z = np.random.default_rng(7).standard_normal((5, 6))
        z[0, 0] = -np.inf
        copy = z.copy()
        f(z)
        np.testing.assert_array_equal(z, copy)


def _call_axis(f, z, axis):
    # the parametrized lambdas take no axis: move it to the end and back
    return np.moveaxis(f(np.moveaxis(z, axis, -1)), -1, axis)


# ---------------------------------------------------------------------------
# The two backends agree
# ---------------------------------------------------------------------------
@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K", [1, 2, 5, 10, 64, 300, 2000])
@pytest.mark.parametrize(
    "name, f",
    [
        ("sparsemax", T.sparsemax),
        ("threshold", lambda z: np.stack(T.sparsemax_threshold(z), axis=-1)),
        ("sparse_softmax", lambda z: T.sparse_softmax(z, 5)),
        ("entmax15", T.entmax15),
        ("entmax_bisect_1.5", lambda z: T.entmax_bisect(z, alpha=1.5)),
        ("entmax_bisect_1.7", lambda z: T.entmax_bisect(z, alpha=1.7)),
        ("entmax_bisect_3", lambda z: T.entmax_bisect(z, alpha=3.0)),
    ],
)
def test_backends_agree(name, f, K, dtype):
    rng = np.random.default_rng(K)
    z = np.concatenate([_scores(rng, 30, K, s, masks=True) for s in SCALES]).astype(dtype)
    with T.backend("numpy"):
        a = f(z)
    with T.backend("numba"):
        b = f(z)
    assert a.dtype == b.dtype and a.shape == b.shape
    if dtype == np.float64:
        atol = 1e-15 * (np.abs(a).max() if name == "threshold" else 1)
        if name == "entmax15":
            # The closed form cancels (1 - |S| var), which amplifies the
            # rounding of each backend's support sums (summed in different
            # orders) in the largest probabilities; a long-double reference
            # shows the larger error on the NumPy path's side.
            atol = 2e-15
    else:
        atol = 2e-6 * (np.abs(a).max() if name == "threshold" else 1)
    np.testing.assert_allclose(b, a, rtol=0, atol=atol)


# ---------------------------------------------------------------------------
# The switch
# ---------------------------------------------------------------------------
def test_set_backend_and_context_manager():
    # a fresh context: no enclosing `backend(...)` block overrides the setting
    contextvars.Context().run(_check_set_backend_and_context_manager)


def _check_set_backend_and_context_manager():
    previous = T.set_backend("numpy")
    try:
        assert T.get_backend() == "numpy"
        with T.backend("auto") as name:
            assert name == ("numba" if HAS_NUMBA else "numpy")
            assert T.get_backend() == name
        assert T.get_backend() == "numpy"
        with pytest.raises(RuntimeError):
            with T.backend("auto"):
                raise RuntimeError
        assert T.get_backend() == "numpy"
    finally:
        T.set_backend(previous)


@pytest.mark.parametrize("bad", ["cuda", "", None, 3])
def test_invalid_backend_name(bad):
    with pytest.raises(ValueError, match="backend must be one of"):
        T.set_backend(bad)
    with pytest.raises(ValueError, match="backend must be one of"):
        with T.backend(bad):
            pass


def test_environment_variable(monkeypatch):
    monkeypatch.setenv("SKSPARSEMAX_BACKEND", "NumPy")
    assert _backend._initial_setting() == "numpy"
    monkeypatch.setenv("SKSPARSEMAX_BACKEND", "")
    assert _backend._initial_setting() == "auto"
    monkeypatch.setenv("SKSPARSEMAX_BACKEND", "fortran")
    with pytest.raises(ValueError, match="SKSPARSEMAX_BACKEND"):
        _backend._initial_setting()


def test_without_numba(monkeypatch):
    """When numba is missing, 'auto' is NumPy and 'numba' is an ImportError."""
    monkeypatch.setattr(_backend, "_numba_found", False)
    with T.backend("auto") as name:
        assert name == "numpy"
        np.testing.assert_allclose(T.sparsemax([1.0, 0.2, -1.0]), [0.9, 0.1, 0.0])
    with pytest.raises(ImportError, match="numba"):
        T.set_backend("numba")
    with pytest.raises(ImportError, match="numba"):
        with T.backend("numba"):
            pass


@pytest.mark.skipif(not HAS_NUMBA, reason=NO_NUMBA)
def test_auto_prefers_numba():
    with T.backend("auto") as name:
        assert name == "numba"
