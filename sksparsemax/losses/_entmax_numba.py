"""Compiled row kernel of the 1.5-entmax loss (numba backend; see ``_numba_engine``)."""

import math

from numba import njit

from ..transforms._numba_entmax import (
    _INSERTION_MAX,
    _entmax15_discard,
    _sort_desc,
)
from ..transforms._numba_kernels import _JIT, _JIT_INLINE
from ._numba_engine import run, target_dot


@njit(**_JIT_INLINE)
def _prefix_tau(srt, c, zbuf):
    """The threshold of 1.5-entmax from its sorted candidates ``srt[:c]``.

    The prefix rule of :func:`~sksparsemax.transforms._numba_entmax.
    _entmax15_prefix_tau`, each ``tau_k`` rounded to the dtype of the scores
    (``zbuf``) as the NumPy path computes it; in two passes (the support
    size, then its ``tau_k``) since the row kernels have no buffer of that
    dtype for all the ``tau_k``.
    """
    csum = 0.0
    csq = 0.0
    cnt = 0
    for r in range(1, c + 1):
        v = srt[r - 1]
        csum += v
        csq += v * v
        mean = csum / r
        delta = (1.0 - r * (csq / r - mean * mean)) / r
        zbuf[0] = mean - math.sqrt(delta if delta > 0 else 0.0)
        cnt += zbuf[0] <= v
    csum = 0.0
    csq = 0.0
    for r in range(1, cnt + 1):
        v = srt[r - 1]
        csum += v
        csq += v * v
    mean = csum / cnt
    delta = (1.0 - cnt * (csq / cnt - mean * mean)) / cnt
    zbuf[0] = mean - math.sqrt(delta if delta > 0 else 0.0)
    return zbuf[0]


@njit(**_JIT_INLINE)
def entmax15_row(Z, i, m, y, Q, qi, params, scratch, out, oi):
    """``<p, z - m> + H_1.5(p) - q^T (z - m)`` of row ``i``; ``p - q`` into ``out[oi]``.

    ``p = entmax15(z)``: with ``u = (z - m) / 2``, the threshold ``tau`` of
    the candidates ``u > -1`` (lower bounds discard most of them, the rest
    are sorted: the algorithm of ``entmax15_rows``), ``p = [u - tau]_+^2``
    normalised to sum 1 as the NumPy path does, and the Tsallis entropy
    ``H_1.5(p) = (sum p - sum p^1.5) / 0.75``. Entries outside the support (``-inf``
    masks included) add nothing.
    """
    fbuf, _, zbuf = scratch
    K = Z.shape[1]
    c = 0
    su = 0.0
    for j in range(K):
        zbuf[0] = (Z[i, j] - m) / 2  # in the dtype of the scores, as NumPy
        u = zbuf[0]
        fbuf[c] = u
        keep = u > -1.0
        su += u if keep else 0.0
        c += keep
    c = _entmax15_discard(fbuf, c, su)
    # The sort stays here (see entmax15_rows: a helper that passes fbuf on in
    # one branch only leaves an unpaired reference count per row).
    if c <= _INSERTION_MAX:
        for a in range(1, c):
            x = fbuf[a]
            p = a
            while p > 0 and fbuf[p - 1] < x:
                fbuf[p] = fbuf[p - 1]
                p -= 1
            fbuf[p] = x
    else:
        _sort_desc(fbuf, c)
    tau = _prefix_tau(fbuf, c, zbuf)
    qz = target_dot(Z, i, m, y, Q, qi)  # before out (which may be Z) is written
    # The candidates are spent: fbuf now holds u (K entries), read twice below.
    total = 0.0
    for j in range(K):
        zbuf[0] = (Z[i, j] - m) / 2
        u = zbuf[0]
        fbuf[j] = u
        d = u - tau
        total += d * d if d > 0 else 0.0
    proportions = Q.shape[1] > 0
    pz = 0.0
    psum = 0.0
    p15 = 0.0
    for j in range(K):
        d = fbuf[j] - tau
        p = d * d / total if d > 0 else 0.0
        if p > 0:
            pz += p * (2.0 * fbuf[j])  # z - m (exactly, but for float32 rounding)
            psum += p
            p15 += p * math.sqrt(p)
        out[oi, j] = p - Q[qi, j] if proportions else p
    if not proportions:
        out[oi, y[qi]] -= 1
    # H = -sum p (p^0.5 - 1) / 0.75, summed as the NumPy path does.
    return pz + (psum - p15) / 0.75 - qz


@njit(**_JIT)
def kernel(task, params):
    """The 1.5-entmax loss over a task of :mod:`._numba_engine`."""
    return run(entmax15_row, task, params)
