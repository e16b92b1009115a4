"""Compiled row kernels for the optional numba backend.

This module imports :mod:`numba`; it is only imported (lazily, by
:mod:`._backend`) when numba is installed and the backend is ``"numba"`` or
``"auto"``. Every kernel works on a C-contiguous 2-D array of rows ``Z``
(n, K) of float32 or float64, loops over the rows inside the compiled code and
writes into preallocated outputs; the only scratch memory is a few buffers of
length K per call, none per row. The arithmetic is the same as the NumPy path
(shift by the row maximum, the same closed forms, the row sums that normalise
the outputs in NumPy's pairwise order), so both backends agree to rounding;
the iterative thresholds sum in a different order.

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
# Row helpers called once per row by the kernels (and by the fused loss
# kernels): inlined into their callers, a call per row costs as much as the
# row's arithmetic for a few classes.
_JIT_INLINE = dict(_JIT, inline="always")


@njit(**_JIT_INLINE)
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
def _block_sum(A, i, lo, n):
    """Sum of ``A[i, lo:lo + n]``, ``1 <= n <= 128``, in NumPy's order."""
    if n < 8:
        res = A[i, lo]  # 0 + a == a for the nonnegative sums used here
        for a in range(lo + 1, lo + n):
            res += A[i, a]
        return res
    r0 = A[i, lo]
    r1 = A[i, lo + 1]
    r2 = A[i, lo + 2]
    r3 = A[i, lo + 3]
    r4 = A[i, lo + 4]
    r5 = A[i, lo + 5]
    r6 = A[i, lo + 6]
    r7 = A[i, lo + 7]
    a = 8
    stop = n - n % 8
    while a < stop:
        b = lo + a
        r0 += A[i, b]
        r1 += A[i, b + 1]
        r2 += A[i, b + 2]
        r3 += A[i, b + 3]
        r4 += A[i, b + 4]
        r5 += A[i, b + 5]
        r6 += A[i, b + 6]
        r7 += A[i, b + 7]
        a += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while a < n:
        res += A[i, lo + a]
        a += 1
    return res


@njit(**_JIT)
def _row_sum(A, i, stack, vals):
    """Sum of the row ``A[i]`` in NumPy's order, in the dtype of ``A``.

    NumPy sums a contiguous row pairwise: below 8 entries one by one, up to
    128 with 8 interleaved partial sums, above that the sum of the two halves
    (the first a multiple of 8 long). Reproducing it gives the NumPy path's
    row sums to the last bit, with 8 independent additions per step instead
    of a chain of K. The recursion runs on an explicit stack (``stack``: an
    (128, 3) intp scratch array, ``vals``: 128 entries of A's dtype).
    """
    K = A.shape[1]
    if K <= 128:
        return _block_sum(A, i, 0, K)
    stack[0, 0] = 0
    stack[0, 1] = K
    stack[0, 2] = 0
    top = 1
    nv = 0
    while top > 0:
        top -= 1
        lo = stack[top, 0]
        n = stack[top, 1]
        if stack[top, 2] == 1:  # both halves done: add them
            nv -= 1
            vals[nv - 1] = vals[nv - 1] + vals[nv]
        elif n <= 128:
            vals[nv] = _block_sum(A, i, lo, n)
            nv += 1
        else:
            n2 = n // 2
            n2 -= n2 % 8
            stack[top, 2] = 1
            stack[top + 1, 0] = lo + n2
            stack[top + 1, 1] = n - n2
            stack[top + 1, 2] = 0
            stack[top + 2, 0] = lo
            stack[top + 2, 1] = n2
            stack[top + 2, 2] = 0
            top += 3
    return vals[0]


@njit(**_JIT_INLINE)
def sparsemax_row_threshold(Z, i, m, buf):
    """Sparsemax threshold of row ``i`` of ``Z`` (shifted units), Michelot's way.

    ``m`` is the row maximum; ``buf`` a float64 scratch array of length K.
    With ``y = z - m``, only the candidates ``y > -1`` can be in the support
    (the threshold is at least ``max y - 1 = -1``), so they are copied into
    ``buf``; then ``tau = (sum_S y - 1) / |S|`` and ``S = {y > tau}`` are
    iterated from ``S`` = all candidates. Each ``tau`` is a lower bound of the
    root and increases monotonically; the iteration stops when ``S`` stops
    shrinking, at the closed form of Martins & Astudillo (2016) for the final
    support. Sums are accumulated in float64. Returns ``(tau, |S|)``.
    """
    K = Z.shape[1]
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
    return t, c


@njit(**_JIT)
def sparsemax_rows(Z, out, tau, size, zmax, write_out):
    """Sparsemax of every row of ``Z`` (threshold by Michelot's algorithm).

    See :func:`sparsemax_row_threshold` for the threshold of one row.
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
        t, c = sparsemax_row_threshold(Z, i, m, buf)
        tau[i] = t
        size[i] = c
        if write_out:
            tt = tau[i]  # rounded to the dtype of Z, as in the NumPy path
            for j in range(K):
                p = (Z[i, j] - m) - tt
                out[i, j] = p if p > 0 else 0
    return -1


# entmax15: up to this many remaining candidates are sorted by an inline
# insertion sort, more by numba's quicksort.
_INSERTION_MAX = 32
# entmax15: above this many candidates ``u > -1``, lower bounds of the
# threshold first discard the entries that cannot be in the support.
_ENTMAX15_FILTER_MIN = 16
# entmax15: above this row length, the row maximum and a superset of the
# candidates are found in one pass over the row.
_FUSED_MIN = 128
# Slack of the Newton lower bound of entmax15 (the rows are shifted so that
# the threshold lies in [-1, 0)): the bound is lowered by this much before
# discarding entries, far more than its rounding error, so no support entry
# is ever discarded.
_ENTMAX15_SLACK = 1e-9


@njit(**_JIT)
def _sort_desc(buf, c):
    """Sort ``buf[:c]`` in decreasing order, in place (numba's quicksort)."""
    buf[:c].sort()
    for a in range(c // 2):
        x = buf[a]
        buf[a] = buf[c - 1 - a]
        buf[c - 1 - a] = x


@njit(**_JIT_INLINE)
def top_k_row(Z, i, k, bval, bidx):
    """The ``k`` largest entries of row ``i`` of ``Z`` (``1 <= k <= K``).

    Writes their values, in decreasing order, into ``bval[:k]`` and their
    column indices into ``bidx[:k]``: one pass over the row keeps the k
    largest in this small buffer; a new entry enters only if it is strictly
    larger than the smallest kept one, and it is placed after the kept
    entries with an equal value, so among equal scores the lowest index
    wins. ``bval[0]`` is the row maximum if the row has no NaN. Returns
    whether the row contains a NaN.
    """
    K = Z.shape[1]
    nan = False
    # The first k entries, by a stable insertion sort.
    for j in range(k):
        x = Z[i, j]
        nan |= x != x
        _insert_decreasing(bval, bidx, j, x, j)
    last = bval[k - 1]
    for j in range(k, K):
        x = Z[i, j]
        nan |= x != x
        if x > last:  # it replaces the smallest kept entry
            _insert_decreasing(bval, bidx, k - 1, x, j)
            last = bval[k - 1]
    return nan


@njit(**_JIT_INLINE)
def _insert_decreasing(bval, bidx, p, x, j):
    """Insert ``x`` (column ``j``) into the decreasing ``bval[:p]`` (``bval[p]`` is free).

    It goes after the entries with an equal value (stable); ``bidx`` follows.
    """
    while p > 0 and bval[p - 1] < x:
        bval[p] = bval[p - 1]
        bidx[p] = bidx[p - 1]
        p -= 1
    bval[p] = x
    bidx[p] = j


@njit(**_JIT)
def sparse_softmax_rows(Z, k, out, zmax):
    """Top-k softmax of every row of ``Z`` (``1 <= k < K``).

    One pass per row finds the k largest entries and the row maximum (the
    first of them) and checks for NaN (:func:`top_k_row`: among equal scores
    the lowest index wins); ``exp`` is evaluated on the k kept entries only.
    Writes ``out`` and ``zmax``; returns the first invalid row or -1.
    """
    n, K = Z.shape
    bval = np.empty(k, dtype=Z.dtype)
    bidx = np.empty(k, dtype=np.intp)
    for i in range(n):
        nan = top_k_row(Z, i, k, bval, bidx)
        m = bval[0]  # the row maximum (if there is no NaN)
        if nan:
            zmax[i] = np.nan
            return i
        zmax[i] = m
        if not (m > -np.inf and m < np.inf):
            return i
        for j in range(K):
            out[i, j] = 0
        for p in range(k):
            out[i, bidx[p]] = np.exp(bval[p] - m)
        if K <= 128:  # the NumPy path's row sum, to the last bit
            s = _block_sum(out, i, 0, K)
        else:
            s = out[i, bidx[0]]
            for p in range(1, k):
                s += out[i, bidx[p]]
        for p in range(k):
            out[i, bidx[p]] = out[i, bidx[p]] / s
    return -1


@njit(**_JIT)
def entmax15_rows(Z, out, zmax):
    """Exact 1.5-entmax of every row of ``Z`` (sort of the candidates only).

    Per row, with ``u = (z - max z) / 2``: the threshold ``tau`` is at least
    ``max u - 1 = -1``, so only the candidates ``u > -1`` can be in the
    support (on long rows, one pass finds the row maximum and a superset of
    them: the entries within 2 of the running maximum). Then lower bounds ``t`` of
    ``tau`` discard the candidates below ``t`` (less a slack far above the
    rounding error, so no support entry is lost): first Jensen's bound
    ``mean(u_C) - 1/sqrt(|C|)`` over the candidates ``C`` (``[.]_+^2`` is
    convex), then Newton steps on ``f(t) = sum [u - t]_+^2 - 1`` (convex and
    decreasing, so every iterate stays below ``tau``) until a step discards
    nothing. The remaining candidates (the support and at most a few more)
    are sorted by decreasing value and fed to the prefix rule of Peters et al.
    (2019, Algorithm 2): with ``m_k`` and ``s_k`` the mean and mean square of
    the k largest, ``tau_k = m_k - sqrt([1/k - (s_k - m_k^2)]_+)`` and the
    support size is the number of k with ``tau_k <= u_(k)``. These prefix sums
    and the final row sums are computed as in the NumPy path, so the results
    agree. Returns the first invalid row or -1.
    """
    n, K = Z.shape
    buf = np.empty(K, dtype=Z.dtype)
    taus = np.empty(K, dtype=Z.dtype)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=out.dtype)
    for i in range(n):
        m = Z[i, 0]
        nan = m != m
        c2 = 0
        su = 0.0
        if K <= _FUSED_MIN:
            for j in range(1, K):
                x = Z[i, j]
                nan |= x != x
                m = x if x > m else m
            if nan or not (m > -np.inf and m < np.inf):
                zmax[i] = np.nan if nan else m
                return i
            zmax[i] = m
            # Candidates u > -1 (u as the NumPy path computes it), their sum.
            for j in range(K):
                u = (Z[i, j] - m) / 2
                buf[c2] = u
                keep = u > -1.0
                su += u if keep else 0.0
                c2 += keep
        else:
            # Row maximum, NaN check and the entries within 2 of the running
            # maximum (a superset of the candidates) in one pass.
            c = 0
            for j in range(K):
                x = Z[i, j]
                nan |= x != x
                m = x if x > m else m
                buf[c] = x
                c += (x - m) > -2
            if nan or not (m > -np.inf and m < np.inf):
                zmax[i] = np.nan if nan else m
                return i
            zmax[i] = m
            for a in range(c):
                u = (buf[a] - m) / 2
                buf[c2] = u
                keep = u > -1.0
                su += u if keep else 0.0
                c2 += keep
        c = c2
        if c > _ENTMAX15_FILTER_MIN:
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
                    break
                c = c2
                t += (s2 - 1.0) / (2.0 * s1)
        # Sort the candidates by decreasing value.
        if c <= _INSERTION_MAX:
            for a in range(1, c):
                x = buf[a]
                p = a
                while p > 0 and buf[p - 1] < x:
                    buf[p] = buf[p - 1]
                    p -= 1
                buf[p] = x
        else:
            _sort_desc(buf, c)
        csum = 0.0
        csq = 0.0
        cnt = 0
        for r in range(1, c + 1):
            v = buf[r - 1]
            csum += v
            csq += v * v
            mean = csum / r
            mean_sq = csq / r
            delta = (1.0 - r * (mean_sq - mean * mean)) / r
            t = mean - math.sqrt(delta if delta > 0 else 0.0)
            taus[r - 1] = t
            cnt += t <= v
        ts = taus[cnt - 1]  # rounded to the dtype of Z, as in the NumPy path
        for j in range(K):
            d = (Z[i, j] - m) / 2 - ts
            out[i, j] = d * d if d > 0 else 0
        s = _block_sum(out, i, 0, K) if K <= 128 else _row_sum(out, i, stack, vals)
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
    contribute 0 for every ``tau >= -1``), and every step drops the
    candidates ``x <= lo`` (every later iterate is above the left end ``lo``
    of the bracket, so they contribute 0 from then on): the sums are those
    of the full rows, in the same order. The output is renormalised.
    Returns the first invalid row or -1.
    """
    n, K = Z.shape
    am1 = alpha - 1.0
    e = 1.0 / am1
    em1 = e - 1.0
    square = e == 2.0  # alpha = 1.5: d ** 1 is d, d ** 2 is d * d
    linear = e == 1.0  # alpha = 2: d ** 0 is 1, d ** 1 is d
    buf = np.empty(K, dtype=np.float64)
    row = np.empty((1, K), dtype=np.float64)
    stack = np.empty((128, 3), dtype=np.intp)
    vals = np.empty(128, dtype=np.float64)
    hi0 = -(float(K) ** (1.0 - alpha))
    for i in range(n):
        m, ok = _row_max(Z, i, zmax)
        if not ok:
            return i
        mf = np.float64(m)
        c = 0
        for j in range(K):
            x = am1 * (np.float64(Z[i, j]) - mf)
            buf[c] = x
            c += x > -1.0
        lo = -1.0
        hi = hi0
        t = lo
        for _ in range(max_iter):
            f = 0.0
            fp = 0.0
            c2 = 0
            if square:
                for a in range(c):
                    x = buf[a]
                    buf[c2] = x
                    c2 += x > lo
                    d = x - t
                    d = d if d > 0 else 0.0
                    f += d * d
                    fp += d
            elif linear:
                for a in range(c):
                    x = buf[a]
                    buf[c2] = x
                    c2 += x > lo
                    d = x - t
                    f += d if d > 0 else 0.0
                    fp += 1.0 if d > 0 else 0.0
            else:
                for a in range(c):
                    x = buf[a]
                    buf[c2] = x
                    c2 += x > lo
                    d = x - t
                    if d > 0:
                        w = d**em1
                        f += w * d
                        fp += w
            c = c2
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
        for j in range(K):
            d = am1 * (np.float64(Z[i, j]) - mf) - t
            if square:
                p = d * d if d > 0 else 0.0
            elif linear:
                p = d if d > 0 else 0.0
            else:
                p = d**e if d > 0 else 0.0
            row[0, j] = p
        # the NumPy path's row sum, to the last bit
        s = _block_sum(row, 0, 0, K) if K <= 128 else _row_sum(row, 0, stack, vals)
        for j in range(K):
            out[i, j] = row[0, j] / s
    return -1
