"""Row primitives of the compiled kernels: compilation options, row maximum, row sum.

Shared by the mapping kernels (:mod:`._numba_kernels`, :mod:`._numba_entmax`)
and the fused loss kernels of :mod:`sksparsemax.losses`; imported only when
the numba backend is in effect.
"""

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, error_model="numpy")
# Row helpers called once per row by the kernels (and by the fused loss
# kernels): inlined into their callers, a call per row costs as much as the
# row's arithmetic for a few classes. Such a helper must end the lifetime of
# each array it takes at one place on every path: it returns from inside a
# loop rather than breaking out of it, and no branch is the last use of an
# array that another branch does not use. Otherwise numba's reference-count
# pruning cannot pair the helper's incref and decref of that array, and
# every call pays for both.
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
