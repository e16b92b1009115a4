"""One-pass candidate selection for the compiled sparse mappings on long rows.

The support of sparsemax lies in ``{z > max z - 1}``, that of 1.5-entmax in
``{z > max z - 2}`` (the largest output is at most 1). On rows too long to
stay in the cache between passes, the kernels read a row once
(:func:`row_candidates`: its maximum, a NaN flag, the entries that can be in
the support, and zeros written to the output), find the threshold over the
listed entries, and write and normalise the support only
(:func:`._numba_rows._pairwise_row_sum` reproduces NumPy's row sum without
reading the zeros). Part of the numba backend: same conventions as
:mod:`._numba_kernels`.
"""

import numpy as np
from numba import njit

from ._numba_rows import _JIT_INLINE


@njit(**_JIT_INLINE)
def _block_max8(x0, x1, x2, x3, x4, x5, x6, x7):
    """Largest of 8 values (a tree of compares; a NaN may be lost, the caller flags it)."""
    b01 = x0 if x0 > x1 else x1
    b23 = x2 if x2 > x3 else x3
    b45 = x4 if x4 > x5 else x5
    b67 = x6 if x6 > x7 else x7
    b03 = b01 if b01 > b23 else b23
    b47 = b45 if b45 > b67 else b67
    return b03 if b03 > b47 else b47


@njit(**_JIT_INLINE)
def row_candidates(Z, i, width, idx, out, write_out):
    """One pass over row ``i``: its maximum, a NaN flag and the entries ``z >= max z - width``.

    With a running maximum ``r`` (at most ``max z``), every entry
    ``z >= r - width`` at the time it is read has its column listed in
    ``idx`` (increasing): a superset of ``{z >= max z - width}``, a few
    dozen entries on random scores once ``r`` is near the maximum, at most
    the whole row (increasing scores). ``>=`` keeps the maximum and its
    ties where ``r - width`` rounds up to ``r`` (float64 scores of 2**53
    and more; float32 ones are compared in float64). Blocks of 8 entries
    whose largest is below ``r - width`` are skipped after one test, and
    ``out[i]`` is zeroed in the same pass (if ``write_out``), so the row is
    read once and written once. Returns ``(max, nan, n)``; a NaN is
    flagged, never listed.
    """
    K = Z.shape[1]
    stop = K // 8 * 8
    r = Z[i, 0]
    nan = False
    n = 0
    for a in range(0, stop, 8):
        x0, x1, x2, x3 = Z[i, a], Z[i, a + 1], Z[i, a + 2], Z[i, a + 3]
        x4, x5, x6, x7 = Z[i, a + 4], Z[i, a + 5], Z[i, a + 6], Z[i, a + 7]
        nan |= ((x0 != x0) | (x1 != x1)) | ((x2 != x2) | (x3 != x3))
        nan |= ((x4 != x4) | (x5 != x5)) | ((x6 != x6) | (x7 != x7))
        if write_out:
            for b in range(8):
                out[i, a + b] = 0
        bm = _block_max8(x0, x1, x2, x3, x4, x5, x6, x7)
        if bm >= r - width:
            if bm > r:
                r = bm
            lo = r - width
            for b in range(8):
                idx[n] = a + b
                n += Z[i, a + b] >= lo
    for a in range(stop, K):
        x = Z[i, a]
        nan |= x != x
        if write_out:
            out[i, a] = 0
        if x >= r - width:
            if x > r:
                r = x
            idx[n] = a
            n += 1
    return r, nan, n


# entmax15_candidates: the first lower bound of the threshold is computed
# when this many candidates are listed, the next one when their number has
# doubled since the last.
_ENTMAX15_BOUND_MIN = 64
# entmax15_candidates: entries are left out below the bound less this (in
# units of u = (z - max z) / 2), far more than the bound's rounding error.
_ENTMAX15_MARGIN = 1e-3


@njit(**_JIT_INLINE)
def _entmax15_lower_bound(Z, i, idx, n, r, buf):
    """A lower bound, in units of ``z``, of the 1.5-entmax threshold of any row holding ``Z[i, idx[:n]]``.

    ``r`` is the largest of these entries. With ``u = (z - r) / 2``, ``f(t)
    = sum [u - t]_+^2 - 1`` is convex and decreasing, and ``f(-1) >= 0``:
    Newton steps from -1 stay below its root. Adding entries only raises
    the root, so ``r + 2 t`` bounds the threshold of the whole row from
    below. Three steps, in float64 (``buf``: scratch of length ``n``).
    """
    for q in range(n):
        buf[q] = (np.float64(Z[i, idx[q]]) - r) / 2
    t = -1.0
    for _ in range(3):
        cnt = 0
        s1 = 0.0
        s2 = 0.0
        for q in range(n):
            d = buf[q] - t
            keep = d > 0
            d = d if keep else 0.0
            s1 += d
            s2 += d * d
            cnt += keep
        t += (s2 - 1.0) / (2.0 * s1)
    return r + 2.0 * (t - _ENTMAX15_MARGIN)


@njit(**_JIT_INLINE)
def entmax15_candidates(Z, i, idx, out, buf):
    """:func:`row_candidates` for 1.5-entmax: ``(max, nan, n, cut)``.

    The support lies in ``{z > max z - 2}``; on a long row many entries
    are that close to the maximum (4% of random normal scores), so once
    ``_ENTMAX15_BOUND_MIN`` candidates are listed, a lower bound of the
    threshold from them (:func:`_entmax15_lower_bound`, less a margin)
    becomes the ``cut`` below which entries are left out, the list is
    compacted, and the bound is raised again each time the list doubles.
    Entries left out are below ``max(max z - 2, cut)``; ``cut`` is -inf if
    no bound was needed. ``out[i]`` is zeroed in the same pass.
    """
    K = Z.shape[1]
    stop = K // 8 * 8
    r = Z[i, 0]
    nan = False
    n = 0
    cut = -np.inf
    cap = _ENTMAX15_BOUND_MIN
    lo = np.float64(r) - 2.0
    for a in range(0, stop, 8):
        x0, x1, x2, x3 = Z[i, a], Z[i, a + 1], Z[i, a + 2], Z[i, a + 3]
        x4, x5, x6, x7 = Z[i, a + 4], Z[i, a + 5], Z[i, a + 6], Z[i, a + 7]
        nan |= ((x0 != x0) | (x1 != x1)) | ((x2 != x2) | (x3 != x3))
        nan |= ((x4 != x4) | (x5 != x5)) | ((x6 != x6) | (x7 != x7))
        for b in range(8):
            out[i, a + b] = 0
        bm = _block_max8(x0, x1, x2, x3, x4, x5, x6, x7)
        if bm >= lo:
            if bm > r:
                r = bm
                lo = max(np.float64(r) - 2.0, cut)
            for b in range(8):
                idx[n] = a + b
                n += Z[i, a + b] >= lo
            if n >= cap and r > -np.inf:
                cut = max(cut, _entmax15_lower_bound(Z, i, idx, n, r, buf))
                lo = max(np.float64(r) - 2.0, cut)
                c = 0
                for q in range(n):
                    j = idx[q]
                    idx[c] = j
                    c += Z[i, j] >= lo
                n = c
                cap = max(2 * n, _ENTMAX15_BOUND_MIN)
    for a in range(stop, K):
        x = Z[i, a]
        nan |= x != x
        out[i, a] = 0
        if x >= lo:
            if x > r:
                r = x
                lo = max(np.float64(r) - 2.0, cut)
            idx[n] = a
            n += x >= lo
    return r, nan, n, cut
