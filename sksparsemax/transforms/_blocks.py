"""Row blocks and candidate sets for the NumPy paths of the sparse mappings.

The NumPy paths of :func:`sparsemax`, :func:`sparse_softmax` and
:func:`entmax15` make several passes over the scores. On a large score
matrix every pass over the whole array reads it from main memory; the
mappings therefore process the rows in blocks of about ``BLOCK_ENTRIES``
entries (a few hundred KiB, within the L2 cache), making all the passes on
one block before the next, so that only the first read of a block and the
write of its output reach main memory.

Within a block, only a few entries of a wide row can be in the support of a
sparse mapping: those above a lower bound of its threshold (``max z - 1``
for sparsemax, a bound from the row's group maxima, :func:`group_maxima`,
for 1.5-entmax and the k-th largest score). :func:`block_candidates`
finds them, row after row, and the iterations run on these candidates only.

:func:`copy_transposed` applies the same blocking to a transposed copy (the
linear models' weights, which the sparse products give as (d, K)).
"""

import numpy as np

from ._validation import checked_row_max

#: Entries per row block (float64: 256 KiB).
BLOCK_ENTRIES = 2**15


def row_blocks(n, K, entries=BLOCK_ENTRIES):
    """``(start, stop)`` of consecutive blocks of rows of about ``entries`` entries."""
    step = max(1, entries // max(K, 1))
    for start in range(0, n, step):
        yield start, min(n, start + step)


#: Entries per block of :func:`copy_transposed` (float64: 128 KiB).
TRANSPOSE_BLOCK = 2**14


def copy_transposed(src, dst):
    """``dst[...] = src.T`` for a C-ordered ``src`` (d, K) and ``dst`` (K, d), blockwise.

    NumPy copies ``src.T`` as a whole along the rows of ``dst``, each one a
    walk through all of ``src`` with a stride of K entries; in blocks of
    columns of ``dst`` the rows of ``src`` that a block reads stay in the
    cache.

    Examples
    --------
    >>> import numpy as np
    >>> src = np.arange(6.0).reshape(3, 2)
    >>> dst = np.empty((2, 3))
    >>> copy_transposed(src, dst)
    >>> dst
    array([[0., 2., 4.],
           [1., 3., 5.]])
    """
    step = max(1, TRANSPOSE_BLOCK // max(src.shape[1], 1))
    for start in range(0, src.shape[0], step):
        np.copyto(dst[:, start : start + step], src[start : start + step].T)


#: Rows up to this length take a mapping's dense path, which works on the
#: transposed block (long contiguous columns); longer rows its flat path,
#: which gathers the few candidates of each row.
DENSE_K = 24

#: Entries per block of the dense paths (float64: 512 KiB).
DENSE_BLOCK = 2**16


def map_rows(Z, shape, name, flat, dense, scratch_dtypes, out=None, row_values=False):
    """A mapping of the rows ``Z`` (n, K) by its NumPy paths, block by block.

    ``flat(Z, out)`` maps rows longer than ``DENSE_K`` into a zero array;
    otherwise each block ``Zb`` of rows is transposed into ``UT`` (K, b),
    the memory of the first scratch buffer, whose column maxima
    ``zmax`` (one reduction along contiguous rows, where the maxima of
    the rows of ``Zb`` read it column by column) are validated by
    :func:`checked_block_max` (which names ``name`` and the row of ``Z``),
    and ``dense(UT, zmax, Pb, scratch)`` maps it into the block ``Pb`` of
    the output; ``scratch`` holds one buffer of a block's size per dtype of
    ``scratch_dtypes`` (the first one ``UT``'s), reused from block to block.

    ``out``: the array to write instead of a new one, ``Z`` itself for a
    mapping in place. The dense path allows that (each block is copied into
    ``UT`` before its output is written); ``flat`` is then given ``Z`` as
    ``out`` (not zero) and must read what it needs before it writes.
    ``row_values``: return ``(out, values)``, with ``values`` (n,) in the
    dtype of ``Z`` holding what ``dense`` returns for the rows of its block
    and ``flat`` for all rows (a mapping's thresholds).
    """
    n, K = Z.shape
    if n == 0:  # no rows: no block, no candidate
        out = np.empty((0, K), Z.dtype) if out is None else out
        return (out, np.empty(0, Z.dtype)) if row_values else out
    if K > DENSE_K:
        if out is None:
            out = np.zeros((n, K), Z.dtype)
        values = flat(np.ascontiguousarray(Z), out)
        return (out, values) if row_values else out
    if out is None:
        out = np.empty((n, K), Z.dtype)
    values = np.empty(n, Z.dtype) if row_values else None
    size = min(n, max(1, DENSE_BLOCK // K)) * K
    scratch = tuple(np.empty(size, dtype) for dtype in scratch_dtypes)
    for start, stop in row_blocks(n, K, DENSE_BLOCK):
        Zb = Z[start:stop]
        UT = scratch[0][: Zb.size].reshape(K, -1)
        np.copyto(UT, Zb.T)
        zmax = checked_block_max(Z, start, Zb, shape, name, np.maximum.reduce(UT, axis=0))
        found = dense(UT, zmax, out[start:stop], scratch)
        if row_values:
            values[start:stop] = found
    return (out, values) if row_values else out


def half_maxima_low(UT):
    """The smaller of the maxima of the even and the odd rows of ``UT`` (K, b), per column.

    For a transposed block (one row of scores per column), another entry
    than the maximum (``K >= 2``): the threshold of the two, a lower bound
    of the row's for sparsemax and 1.5-entmax (the threshold of a part of a
    row is at most the row's), is where their dense paths start.
    """
    low = np.maximum.reduce(UT[0::2], axis=0)
    return np.minimum(low, np.maximum.reduce(UT[1::2], axis=0), out=low)


def row_max(Z):
    """Maximum of each row of the 2-D ``Z`` (NaN propagates).

    For narrow rows a loop over the K columns (vectorised over rows) avoids
    NumPy's per-row overhead of a reduction along a short last axis.
    """
    if Z.shape[1] <= 16 and Z.shape[0] > 0:
        m = Z[:, 0].copy()
        for j in range(1, Z.shape[1]):
            np.maximum(m, Z[:, j], out=m)
        return m
    return Z.max(axis=1)


def checked_block_max(Z, start, Zb, shape, name="z", m=None):
    """Row maxima of the block ``Zb = Z[start:start + len(Zb)]``, validated.

    The rows before ``start`` have been validated already, so an invalid row
    of the block is the first invalid row of ``Z``: the error is that of
    :func:`checked_row_max` on the whole ``Z`` (it names the row of ``Z``).
    ``m``: the maxima if already computed (NaN propagated).
    """
    if m is None:
        m = row_max(Zb)
    if not np.isfinite(m).all():
        full = np.zeros(start + m.shape[0], dtype=m.dtype)
        full[start:] = m
        checked_row_max(Z, shape, name, full)
    return m


def segment_starts(counts):
    """First position of each segment of a flat vector, from their lengths."""
    starts = np.empty_like(counts)
    starts[0] = 0
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def block_candidates(Zb, lower, offset=0):
    """Flat indices (plus ``offset``) of the entries of ``Zb`` at least ``lower``.

    ``Zb`` is a block of rows of a C-contiguous array, ``lower`` one value
    per row; the indices come row after row, columns increasing.
    ``z >= fl(m - gap)`` holds for every ``z`` with ``z - m > -gap`` exactly
    (rounding is monotone), so a ``lower`` computed as ``m - gap`` loses no
    entry that the exact gap keeps, even for huge scores.
    """
    idx = np.flatnonzero(Zb >= lower[:, None])
    if offset:
        idx += offset
    return idx


def flat_segments(found, n, K):
    """``(idx, starts, counts)`` of the candidates of all ``n`` rows of width ``K``.

    ``found`` lists the flat indices of the candidates of consecutive row
    blocks (:func:`block_candidates`); every row must have one.
    """
    idx = np.concatenate(found) if len(found) > 1 else found[0]
    starts = np.searchsorted(idx, np.arange(0, n * K, K))
    return idx, starts, np.diff(starts, append=idx.size)


#: Number of column groups of :func:`group_maxima`.
GROUPS = 10


def group_maxima(Zb, groups=GROUPS):
    """Maxima of at least ``groups`` disjoint groups of columns of each row.

    The groups cover every column, so the row maximum is the maximum of the
    group maxima (NaN propagates). Each group maximum is an entry of its row:
    they are distinct entries, whose sub-problem gives bounds of the
    thresholds of the whole row (a lower bound of the sparsemax and
    1.5-entmax thresholds, of the k-th largest entry). Wide rows: exactly
    ``groups`` groups of contiguous columns, by one ``reduceat`` (the last
    group takes the remainder). Narrower rows (where a ``reduceat`` along
    short segments has a large overhead per segment), by halving:
    the maximum of the two halves of the columns (a column left over by an
    odd width joins the last group), until fewer than ``2 * groups`` remain;
    every step is one operation along long rows. Returns an array of shape
    ``(b, w)``, ``w = groups`` for wide rows, ``groups <= w < 2 * groups``
    (or ``w = K`` if smaller) otherwise.
    """
    K = Zb.shape[1]
    if K >= 32 * groups:  # wide groups: exactly `groups`, contiguous
        return np.maximum.reduceat(Zb, np.arange(0, K - K % groups, K // groups), axis=1)
    A = Zb
    while A.shape[1] >= 2 * groups:
        half = A.shape[1] // 2
        B = np.maximum(A[:, :half], A[:, half : 2 * half])
        if A.shape[1] > 2 * half:
            np.maximum(B[:, -1], A[:, -1], out=B[:, -1])
        A = B
    return A if A is not Zb else Zb.copy()


#: Padded entries up to which :func:`padded_buckets` pads all rows into one
#: matrix, whatever the padding (each matrix costs a few array operations).
PAD_ONE_MATRIX = 2**15


def padded_buckets(counts, starts):
    """Rows of flat segments grouped by length, for padding into matrices.

    Segment ``i`` (the candidates of row ``i``) has ``counts[i]`` entries
    from ``starts[i]``. Rows are grouped by the power of two just above their
    length (at least 8), so that padding each group to its longest segment
    wastes at most about half of it. Yields ``(rows, width, src, dst)``: the
    rows of the group, its width, and for every entry of these segments its
    position in the flat vector and in the C-order ``(rows.size, width)``
    matrix.
    """
    if counts.size * int(counts.max()) <= max(2 * int(counts.sum()), PAD_ONE_MATRIX):
        key = np.zeros(counts.size, np.intp)  # few rows or even lengths: one matrix
    else:
        key = np.frexp(np.maximum(counts, 8) - 1)[1]
    for value in np.unique(key):
        rows = np.flatnonzero(key == value)
        c = counts[rows]
        width = int(c.max())
        local = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
        src = np.repeat(starts[rows], c) + local
        dst = np.repeat(np.arange(0, rows.size * width, width), c) + local
        yield rows, width, src, dst
