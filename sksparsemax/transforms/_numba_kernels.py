"""Compiled row kernels for the optional numba backend.

This module imports :mod:`numba`; it is only imported (lazily, by
:mod:`._backend`) when numba is installed and the backend is ``"numba"`` or
``"auto"``. Every kernel works on a C-contiguous 2-D array of rows ``Z``
(n, K) of float32 or float64, loops over the rows inside the compiled code and
writes into preallocated outputs. The arithmetic is the same as the NumPy path
(shift by the row maximum, the same closed forms), so both backends agree to
rounding; only the order of the summations differs.

Invalid rows (NaN, ``+inf``, all ``-inf``) are not raised here: each kernel
stores the row maximum of every row it visits in ``zmax`` and returns the
index of the first row whose maximum is not finite (NaN if the row contains a
NaN), or -1. The caller then raises the library's ``ValueError`` through
:func:`._validation.checked_row_max`, so the message is the same for both
backends.

All kernels are compiled with ``cache=True`` (the machine code is stored next
to this file, or under ``NUMBA_CACHE_DIR``), so the compilation cost (a few
seconds per kernel and dtype) is paid once per machine, not once per process.
"""

import math

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_JIT)
def _row_max(Z, i, zmax):
    """Maximum of row ``i`` (dtype of ``Z``), also stored in ``zmax[i]``.

    Returns ``(m, ok)``; ``ok`` is False if the row contains a NaN (then
    ``zmax[i]`` is NaN, as NumPy's ``max`` gives) or if its maximum is not
    finite (``+inf``, or every entry ``-inf``).
    """
    K = Z.shape[1]
    m = Z[i, 0]
    nan = m != m
    for j in range(1, K):
        x = Z[i, j]
        nan |= x != x
        if x > m:
            m = x
    zmax[i] = m
    if nan:
        zmax[i] = np.nan
        return m, False
    return m, m > -np.inf and m < np.inf


@njit(**_JIT)
def sparsemax_rows(Z, out, tau, size, zmax, write_out):
    """Sparsemax of every row of ``Z`` (threshold by Michelot's algorithm).

    Per row: ``y = z - max z``; only the candidates ``y > -1`` can be in the
    support (the threshold is at least ``max y - 1 = -1``), so they are copied
    into a small buffer; then ``tau = (sum_S y - 1) / |S|`` and
    ``S = {y > tau}`` are iterated from ``S`` = all candidates. Each ``tau``
    is a lower bound of the root and increases monotonically; the iteration
    stops when ``S`` stops shrinking, at the closed form of Martins &
    Astudillo (2016) for the final support. Sums are accumulated in float64.

    Writes ``tau`` (shifted units, dtype of ``Z``), ``size`` (support size),
    ``zmax`` and, if ``write_out``, ``out = max(y - tau, 0)``.
    Returns the first invalid row or -1.
    """
    n, K = Z.shape
    buf = np.empty(K, dtype=np.float64)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        # Candidates (branch-free append).
        c = 0
        s = 0.0
        for j in range(K):
            y = Z[i, j] - m
            buf[c] = y
            keep = y > -1.0
            s += y if keep else 0.0
            c += keep
        t = (s - 1.0) / c
        while True:
            c2 = 0
            s2 = 0.0
            for j in range(c):
                y = buf[j]
                buf[c2] = y
                keep = y > t
                s2 += y if keep else 0.0
                c2 += keep
            if c2 == c:
                break
            c = c2
            t = (s2 - 1.0) / c2
        tau[i] = t
        size[i] = c
        if write_out:
            tt = tau[i]  # rounded to the dtype of Z, as in the NumPy path
            for j in range(K):
                p = (Z[i, j] - m) - tt
                out[i, j] = p if p > 0 else 0
    return -1


@njit(**_JIT)
def sparse_softmax_rows(Z, k, out, zmax):
    """Top-k softmax of every row of ``Z`` (``1 <= k < K``).

    The k largest entries are kept in a small buffer sorted by decreasing
    value; a new entry enters only if it is strictly larger than the smallest
    kept one, and it is placed after the kept entries with an equal value, so
    among equal scores the lowest index wins. Writes ``out`` and ``zmax``;
    returns the first invalid row or -1.
    """
    n, K = Z.shape
    bval = np.empty(k, dtype=Z.dtype)
    bidx = np.empty(k, dtype=np.intp)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        # Fill the buffer with the first k entries (stable insertion sort).
        for j in range(k):
            x = Z[i, j]
            p = j
            while p > 0 and bval[p - 1] < x:
                bval[p] = bval[p - 1]
                bidx[p] = bidx[p - 1]
                p -= 1
            bval[p] = x
            bidx[p] = j
        for j in range(k, K):
            x = Z[i, j]
            if x > bval[k - 1]:
                p = k - 1
                while p > 0 and bval[p - 1] < x:
                    bval[p] = bval[p - 1]
                    bidx[p] = bidx[p - 1]
                    p -= 1
                bval[p] = x
                bidx[p] = j
        for j in range(K):
            out[i, j] = 0
        s = 0.0
        for p in range(k):
            e = np.exp(bval[p] - m)
            out[i, bidx[p]] = e
            s += out[i, bidx[p]]
        inv = s
        for p in range(k):
            out[i, bidx[p]] = out[i, bidx[p]] / inv
    return -1


@njit(**_JIT)
def entmax15_rows(Z, out, zmax):
    """Exact 1.5-entmax of every row of ``Z`` (sort of the candidates only).

    Per row: ``u = (z - max z) / 2``; the threshold is at least
    ``max u - 1 = -1``, so only the candidates ``u > -1`` are sorted and fed
    to the prefix rule of Peters et al. (2019, Algorithm 2): with ``m_k`` and
    ``s_k`` the mean and mean square of the k largest,
    ``tau_k = m_k - sqrt([1/k - (s_k - m_k^2)]_+)`` and the support size is
    the number of k with ``tau_k <= u_(k)``. The result is renormalised to
    sum to one, as in the NumPy path. Returns the first invalid row or -1.
    """
    n, K = Z.shape
    buf = np.empty(K, dtype=Z.dtype)
    taus = np.empty(K, dtype=Z.dtype)
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        c = 0
        for j in range(K):
            u = (Z[i, j] - m) / 2
            buf[c] = u
            c += u > -1.0
        srt = buf[:c]
        srt.sort()  # in place: no allocation per row
        csum = 0.0
        csq = 0.0
        cnt = 0
        for r in range(1, c + 1):
            v = srt[c - r]
            csum += v
            csq += v * v
            mean = csum / r
            mean_sq = csq / r
            delta = (1.0 - r * (mean_sq - mean * mean)) / r
            t = mean - math.sqrt(delta if delta > 0 else 0.0)
            taus[r - 1] = t
            cnt += t <= v
        ts = taus[cnt - 1]  # rounded to the dtype of Z, as in the NumPy path
        s = 0.0
        for j in range(K):
            d = (Z[i, j] - m) / 2 - ts
            out[i, j] = d * d if d > 0 else 0
            s += out[i, j]
        for j in range(K):
            out[i, j] = out[i, j] / s
    return -1


@njit(**_JIT)
def entmax_bisect_rows(Z, alpha, tol, max_iter, out, zmax):
    """alpha-entmax (alpha > 1) of every row by safeguarded Newton steps.

    The same iteration as the NumPy path, per row: ``x = (alpha - 1)(z - max
    z)`` in float64, bracket ``[-1, -K^(1-alpha)]``, start at the left end;
    stop when ``|f(tau)| <= tol`` or the bracket is narrower than
    ``tol * max(1, |tau|)``; a Newton iterate outside the bracket is replaced
    by bisection. Only the candidates ``x > -1`` enter the sums (the others
    contribute 0 for every ``tau >= -1``). The output is renormalised.
    Returns the first invalid row or -1.
    """
    n, K = Z.shape
    e = 1.0 / (alpha - 1.0)
    buf = np.empty(K, dtype=np.float64)
    hi0 = -(float(K) ** (1.0 - alpha))
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        mf = np.float64(m)
        c = 0
        for j in range(K):
            x = (alpha - 1.0) * (np.float64(Z[i, j]) - mf)
            buf[c] = x
            c += x > -1.0
        lo = -1.0
        hi = hi0
        t = lo
        for _ in range(max_iter):
            f = 0.0
            fp = 0.0
            for j in range(c):
                d = buf[j] - t
                if d > 0:
                    if e == 2.0:  # alpha = 1.5: d ** 1 is d, exactly
                        w = d
                    elif e == 1.0:  # alpha = 2: d ** 0 is 1, exactly
                        w = 1.0
                    else:
                        w = d ** (e - 1.0)
                    f += w * d
                    fp += w
            f -= 1.0
            fp *= e
            if f > 0:
                lo = t
            else:
                hi = t
            if abs(f) <= tol or hi - lo <= tol * max(1.0, abs(t)):
                break
            newton = t + f / fp
            if newton > lo and newton < hi:
                t = newton
            else:
                t = (lo + hi) / 2
        s = 0.0
        for j in range(K):
            d = (alpha - 1.0) * (np.float64(Z[i, j]) - mf) - t
            p = d ** e if d > 0 else 0.0
            buf[j] = p
            s += p
        for j in range(K):
            out[i, j] = buf[j] / s
    return -1
