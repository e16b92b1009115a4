"""The threshold of 1.5-entmax in the compiled kernels (numba backend).

With ``u = (z - max z) / 2``, the threshold ``tau`` is the root of ``f(t) =
sum_j [u_j - t]_+^2 - 1``: the closed form of a support, the Newton step on
``f``, and the sort-based fallback (candidate filter, sort, prefix rule).
Shared by the row kernels (:mod:`._numba_entmax15`), the column kernels of
short rows (:mod:`._numba_columns`), the loss kernel and normmax (whose
alpha = 2 solves the same equation).
"""

import math

import numpy as np
from numba import njit

from ._numba_rows import _JIT, _JIT_INLINE, _sort_desc

# entmax15: above this many candidates ``u > -1``, lower bounds of the
# threshold first discard the entries that cannot be in the support.
_ENTMAX15_FILTER_MIN = 16
# Slack of the Newton lower bound of entmax15 (the rows are shifted so that
# the threshold lies in [-1, 0)): the bound is lowered by this much before
# discarding entries, far more than its rounding error, so no support entry
# is ever discarded.
_ENTMAX15_SLACK = 1e-9
# entmax15: Newton passes before the sort-based fallback (a handful suffice).
_ENTMAX15_MAX_PASSES = 40


@njit(**_JIT_INLINE)
def _entmax15_discard(buf, c, su):
    """Drop from the candidates ``buf[:c]`` (sum ``su``) those below lower bounds of tau.

    Every entry below a lower bound ``t`` of the threshold is outside the
    support; entries are dropped below ``t - _ENTMAX15_SLACK`` only, so no
    support entry is lost to rounding. The bounds: Jensen's ``mean(u) -
    1/sqrt(c)`` (``[.]_+^2`` is convex), then Newton steps on ``f(t) = sum
    [u - t]_+^2 - 1`` (convex and decreasing, so every iterate stays below
    tau) until a step drops nothing. Up to ``_ENTMAX15_FILTER_MIN``
    candidates are kept as they are. Compacts ``buf`` in place and returns
    the number kept.
    """
    if c <= _ENTMAX15_FILTER_MIN:
        return c
    t = su / c - 1.0 / math.sqrt(c)
    t = t if t > -1.0 else -1.0
    for it in range(64):
        thr = t - _ENTMAX15_SLACK
        c2 = 0
        s1 = 0.0
        s2 = 0.0
        for a in range(c):
            u = buf[a]
            buf[c2] = u
            c2 += u > thr
            d = u - t
            d = d if d > 0 else 0.0
            s1 += d
            s2 += d * d
        if c2 == c and it > 0:
            return c
        c = c2
        t += (s2 - 1.0) / (2.0 * s1)
    return c


@njit(**_JIT_INLINE)
def _entmax15_prefix_tau(srt, c, taus):
    """Threshold of 1.5-entmax from its candidates ``srt[:c]``, sorted decreasingly.

    The prefix rule of Peters et al. (2019, Algorithm 2): with ``m_k`` and
    ``s_k`` the mean and mean square of the k largest, ``tau_k = m_k -
    sqrt([1/k - (s_k - m_k^2)]_+)``, and the support size is the number of k
    with ``tau_k <= u_(k)``. The prefix sums are those of the NumPy path;
    ``taus`` (length >= c, dtype of the scores) holds the ``tau_k``, so the
    result is rounded to that dtype, as in the NumPy path.
    """
    csum = 0.0
    csq = 0.0
    cnt = 0
    for r in range(1, c + 1):
        v = srt[r - 1]
        csum += v
        csq += v * v
        mean = csum / r
        mean_sq = csq / r
        delta = (1.0 - r * (mean_sq - mean * mean)) / r
        t = mean - math.sqrt(delta if delta > 0 else 0.0)
        taus[r - 1] = t
        cnt += t <= v
    return taus[cnt - 1]


@njit(**_JIT_INLINE)
def _entmax15_closed_form(cnt, s1, s2):
    """Threshold of 1.5-entmax if its support ``S`` has ``cnt`` entries of sums ``s1``, ``s2``.

    The sort-based formula of Peters et al. (2019) for that support, written
    as the NumPy path writes it: with ``mean`` and ``mean_sq`` the means of
    ``u`` and ``u^2`` over ``S``, ``tau = mean - sqrt([1/|S| - (mean_sq -
    mean^2)]_+)``, the smaller root of ``sum_S (u - tau)^2 = 1``.
    """
    mean = s1 / cnt
    mean_sq = s2 / cnt
    delta = (1.0 - cnt * (mean_sq - mean * mean)) / cnt
    return mean - math.sqrt(delta if delta > 0 else 0.0)


@njit(**_JIT)
def _entmax15_sorted_tau(Z, i, m, buf, taus):
    """Threshold of 1.5-entmax of row ``i`` by sorting its candidates (the fallback).

    The candidates ``u > -1``, reduced by :func:`_entmax15_discard`, sorted
    by decreasing value and fed to the prefix rule
    (:func:`_entmax15_prefix_tau`). ``buf`` and ``taus``: scratch arrays of
    length K in the dtype of ``Z``.
    """
    K = Z.shape[1]
    c = 0
    su = 0.0
    for j in range(K):
        u = (Z[i, j] - m) / 2
        buf[c] = u
        keep = u > -1.0
        su += u if keep else 0.0
        c += keep
    c = _entmax15_discard(buf, c, su)
    _sort_desc(buf, c)
    return _entmax15_prefix_tau(buf, c, taus)


@njit(**_JIT_INLINE)
def _entmax15_newton_step(cnt, s1, s2, t):
    """Newton step on ``f(t) = sum_S (u - t)^2 - 1`` from ``t`` (sums over ``S = {u > t}``)."""
    d1 = s1 - cnt * t  # sum (u - t)
    d2 = s2 - 2.0 * t * s1 + cnt * t * t  # sum (u - t)^2
    return t + (d2 - 1.0) / (2.0 * d1)


@njit(**_JIT_INLINE)
def _entmax15_pair_bound(low, m):
    """A lower bound of the 1.5-entmax threshold from the maximum ``m`` and another entry ``low``.

    As :func:`._numba_kernels._sparsemax_pair_bound` for sparsemax: the
    threshold of a part of a row is at most the row's, and the threshold of
    ``u = 0`` and ``u = (low - m) / 2`` is the closed form of these two when
    ``u > -1``, else -1.
    """
    u = np.float64((low - m) / 2)
    if u > -1.0:
        return _entmax15_closed_form(2, u, u * u)
    return -1.0
