"""Budget sparsemax on any Array API compatible array (PyTorch, CuPy, JAX...).

The projection of :mod:`._budget`, exact, vectorised over every slice with
the functions of the 2023.12 revision of the standard and the helpers of
:mod:`._array_api` (namespace, dtype policy, axis handling, error
messages). Where the NumPy path iterates (Newton steps, rows leaving the
active set), this path sorts, which needs no data-dependent loop on the
device: sort the breakpoints ``y_i`` and ``y_i - 1`` of ``f(t) = sum_i
clip(y_i - t, 0, 1)``, locate the segment where ``f`` reaches the budget from
prefix sums, and solve the linear equation there; float64 where the library
has it. The budget is a Python or NumPy number or array (checked on the host)
or an array of the scores' library (checked on its device).
"""

import numpy as np

from ._array_api import (
    _checked_max,
    _compat,
    _info,
    _pick,
    _prepare,
    _prepare_pair,
    _restore,
    _zero,
    is_foreign,
)
from ._budget import budget_rows, check_budget, raise_budget_error


def _device_budget(xp, budget, Z, axis, ndim, wide):
    """The budgets as an array ``(..., 1)`` of ``xp`` on ``Z``'s device."""
    batch = tuple(Z.shape[:-1])
    dev = _compat().device(Z)
    if not is_foreign(budget):
        b = budget_rows(check_budget(budget), batch + (Z.shape[-1],), axis, ndim)
        return xp.asarray(np.array(np.reshape(b, batch + (1,))), dtype=wide, device=dev)
    B = xp.asarray(budget, device=dev)
    if not xp.isdtype(B.dtype, ("integral", "real floating")):
        raise TypeError(
            f"budget must be a real number (or an array of them); got dtype {B.dtype}."
        )
    B = xp.astype(B, wide)
    ok = xp.isfinite(B) & (B > 0)
    if not bool(xp.all(ok)):
        flat = xp.reshape(B, (-1,))
        bad = int(xp.argmin(xp.astype(xp.reshape(ok, (-1,)), xp.int32)))
        check_budget(float(flat[bad]))  # raises the NumPy path's error
    if B.ndim == ndim and ndim > 0 and B.shape[axis] == 1:
        B = xp.squeeze(B, axis=axis)
    try:
        B = xp.broadcast_to(B, batch)
    except (ValueError, RuntimeError):
        raise ValueError(
            f"budget of shape {tuple(B.shape)} cannot be broadcast to the shape "
            f"{batch} of z without its distribution axis (one budget per slice)."
        ) from None
    return xp.reshape(B, batch + (1,))


def _checked_rows(xp, Z, B, wide):
    """Shifted scores ``Y`` (float ``wide``), raising as the NumPy path does.

    One host synchronisation; on failure the first slice that is invalid or
    whose budget exceeds its unmasked entries is named.
    """
    zmax = xp.max(Z, axis=-1, keepdims=True)
    Y = xp.astype(Z, wide) - xp.astype(zmax, wide)
    counts = xp.sum(xp.astype(Y > -float("inf"), wide), axis=-1, keepdims=True)
    ok = xp.isfinite(zmax) & (B <= counts)
    if not bool(xp.all(ok)):
        flat_ok = xp.reshape(ok, (-1,))
        row = int(xp.argmin(xp.astype(flat_ok, xp.int32)))
        if not bool(xp.isfinite(xp.reshape(zmax, (-1,))[row])):
            _checked_max(xp, Z, "z")  # raises: the first invalid slice is this one
        # Rows before ``row`` are valid: zero budgets there raise nothing.
        b = np.zeros(row + 1)
        counts_h = np.ones(row + 1)
        b[row] = float(xp.reshape(B, (-1,))[row])
        counts_h[row] = float(xp.reshape(counts, (-1,))[row])
        raise_budget_error(b, counts_h, tuple(Z.shape))
    return Y


def _segment_values(xp, Ys):
    """``(Vs, C)``: the breakpoints ``y_i`` and ``y_i - 1`` sorted decreasingly
    (their kind from a stable argsort, without a gather) and ``f`` at each of
    them from prefix sums."""
    K = Ys.shape[-1]
    V = xp.concat([Ys, Ys - 1.0], axis=-1)
    order = xp.argsort(V, axis=-1, descending=True, stable=True)
    Vs = xp.sort(V, axis=-1, descending=True)
    lower = order >= K
    fin = xp.isfinite(Vs)
    zero = _zero(xp, Vs)
    W = xp.where(fin, Vs, zero)
    sum_u = xp.cumulative_sum(xp.where(lower, zero, W), axis=-1)
    sum_l = xp.cumulative_sum(xp.where(lower, W, zero), axis=-1)
    one = xp.ones((), dtype=Vs.dtype, device=_compat().device(Vs))
    slope = xp.cumulative_sum(xp.where(lower, -one, one), axis=-1)
    inf = xp.full((), float("inf"), dtype=Vs.dtype, device=_compat().device(Vs))
    return Vs, xp.where(fin, sum_u - sum_l - slope * W, inf)


def _flat_threshold(xp, Ys, B, index):
    """``y_(b+1)`` where ``f`` is flat at the integer level ``b`` (the 0/1
    solution, as the NumPy path's ``_flat_rows``), NaN elsewhere."""
    dev = _compat().device(Ys)
    ninf = xp.full(tuple(Ys.shape[:-1]) + (1,), -float("inf"), dtype=Ys.dtype, device=dev)
    padded = xp.concat([Ys, ninf], axis=-1)
    whole = B == xp.floor(B)
    j = xp.astype(xp.where(whole, B, xp.ones_like(B)), index)
    last, nxt = _pick(xp, padded, j - 1), _pick(xp, padded, j)
    nan = xp.full((), float("nan"), dtype=Ys.dtype, device=dev)
    return xp.where(whole & (last - nxt >= 1.0), nxt, nan)


def _threshold(xp, Y, B):
    """``tau`` (..., 1) with ``sum clip(y - tau, 0, 1) = b``: see ``budget_threshold``."""
    K = Y.shape[-1]
    index = _info(xp, Y)[1]
    Ys = xp.sort(Y, axis=-1, descending=True)
    Vs, C = _segment_values(xp, Ys)
    reached = C >= B
    first = xp.argmax(xp.astype(reached, xp.int32), axis=-1, keepdims=True)
    k = xp.where(xp.any(reached, axis=-1, keepdims=True), xp.astype(first, index),
                 xp.full_like(xp.astype(first, index), 2 * K))
    t_hi = _pick(xp, Vs, k - 1)  # k >= 1: f(max y) = 0 < b
    ninf = xp.full_like(t_hi, -float("inf"))
    t_lo = xp.where(k < 2 * K, _pick(xp, Vs, xp.clip(k, max=2 * K - 1)), ninf)
    capped = (Y - 1.0) >= t_hi
    free = (Y >= t_hi) & ~capped
    zero = _zero(xp, Y)
    n_free = xp.sum(xp.astype(free, Y.dtype), axis=-1, keepdims=True)
    n_cap = xp.sum(xp.astype(capped, Y.dtype), axis=-1, keepdims=True)
    s_free = xp.sum(xp.where(free, Y, zero), axis=-1, keepdims=True)
    one = xp.ones_like(n_free)
    tau = (s_free + n_cap - B) / xp.where(n_free > 0, n_free, one)
    tau = xp.where(n_free > 0, xp.minimum(xp.maximum(tau, t_lo), t_hi), t_hi)
    flat = _flat_threshold(xp, Ys, B, index)
    return xp.where(xp.isnan(flat), tau, flat)


def budget_sparsemax(z, budget, axis=-1):
    """Budget sparsemax of a foreign array (``budget`` not yet checked)."""
    xp, Z, axis = _prepare(z, axis)
    wide = _info(xp, Z)[0]
    B = _device_budget(xp, budget, Z, axis, Z.ndim, wide)
    Y = _checked_rows(xp, Z, B, wide)
    tau = _threshold(xp, Y, B)
    above = Y > tau
    zero = _zero(xp, Y)
    # tau is -inf for an all-ones slice: the masks' -inf - (-inf) is avoided.
    D = xp.where(above, Y, zero) - xp.where(above, tau, zero)
    P = xp.where(above, xp.minimum(D, xp.ones_like(tau)), zero)
    return _restore(xp, xp.astype(P, Z.dtype), axis)


def budget_sparsemax_jvp(p, v, axis=-1):
    """``J v`` with ``J = diag(f) - f f^T / |F|`` on the free set ``0 < p < 1``."""
    xp, P, V, axis = _prepare_pair(p, v, axis)
    free = (P > 0) & (P < 1)
    zero = _zero(xp, V)
    count = xp.sum(xp.astype(free, V.dtype), axis=-1, keepdims=True)
    one = xp.ones_like(count)
    mean = xp.sum(xp.where(free, V, zero), axis=-1, keepdims=True) / xp.where(
        count > 0, count, one
    )
    return _restore(xp, xp.where(free, V - mean, zero), axis)
