"""alpha-entmax on any Array API compatible array (PyTorch, CuPy, JAX...).

The Array API path of :mod:`._entmax` (see :mod:`._array_api` for the
dispatch, the dtype policy and the errors), with the NumPy path's
algorithms vectorised over every slice (in float64 where the library has
it):

* 1.5-entmax from the sort-based closed form;
* alpha-entmax by the safeguarded Newton/bisection search on the threshold
  for alpha <= 2 and the smallest-support-entry form for alpha > 2, with one
  alpha or one per slice;
* the Jacobian-vector product in the NumPy path's form without cancellation.
"""

import numpy as np

from ._array_api import (
    _arange1,
    _checked_max,
    _compat,
    _info,
    _pick,
    _power_where,
    _prepare,
    _prepare_pair,
    _restore,
    _zero,
)
from ._validation import per_slice


def entmax15(z, axis=-1):
    xp, Z, axis = _prepare(z, axis)
    zmax = _checked_max(xp, Z, "z")
    U = (Z - zmax) / 2  # slice maximum 0
    # Entries with u <= -1 are never in the support: clipping them keeps the
    # prefix sums finite and changes no result.
    srt = xp.sort(xp.clip(U, min=-2.0), axis=-1, descending=True)
    K = Z.shape[-1]
    rho = _arange1(xp, K, U)
    mean = xp.cumulative_sum(srt, axis=-1) / rho
    mean_sq = xp.cumulative_sum(srt * srt, axis=-1) / rho
    delta = (1 - rho * (mean_sq - mean * mean)) / rho
    tau = mean - xp.sqrt(xp.clip(delta, min=0.0))
    size = xp.sum(xp.astype(tau <= srt, U.dtype), axis=-1, keepdims=True)
    zero = _zero(xp, U)
    tau_star = xp.sum(xp.where(rho == size, tau, zero), axis=-1, keepdims=True)
    P = xp.clip(U - tau_star, min=0.0)
    P = P * P
    # Rounding in tau leaves sums within a few ulps of 1; renormalise.
    return _restore(xp, P / xp.sum(P, axis=-1, keepdims=True), axis)


def _entmax_threshold(xp, X, alpha, tol, max_iter):
    """Root ``tau`` of ``sum_i [x_i - tau]_+^(1/(alpha-1)) = 1`` per slice.

    The NumPy path's safeguarded Newton iteration (bracket ``[-1,
    -K^(1-alpha)]``, a Newton step that leaves the bracket is replaced by
    bisection), run on every slice at once; a slice that has converged stays
    frozen. ``X`` holds ``(alpha - 1) * (z - max z)`` in float64.
    """
    K = X.shape[-1]
    e = 1.0 / (alpha - 1.0)
    batch = tuple(X.shape[:-1]) + (1,)
    dev = _compat().device(X)
    lo = xp.full(batch, -1.0, dtype=X.dtype, device=dev)
    hi = xp.zeros(batch, dtype=X.dtype, device=dev) - float(K) ** (1.0 - alpha)
    t = lo
    zero = _zero(xp, X)
    one = xp.ones((), dtype=X.dtype, device=dev)
    done = xp.zeros(batch, dtype=xp.bool, device=dev)
    for _ in range(max_iter):
        D = X - t
        pos = D > 0
        D = xp.where(pos, D, zero)
        W = _power_where(xp, D, pos, e - 1.0)
        f = xp.sum(W * D, axis=-1, keepdims=True) - 1.0
        fp = xp.sum(W, axis=-1, keepdims=True) * e
        above = f > 0
        lo = xp.where(above, t, lo)
        hi = xp.where(above, hi, t)
        now = (xp.abs(f) <= tol) | (hi - lo <= tol * xp.clip(xp.abs(t), min=1.0))
        done = done | now
        if bool(xp.all(done)):
            break
        newton = t + f / xp.where(fp > 0, fp, one)
        inside = (fp > 0) & (newton > lo) & (newton < hi)
        step = xp.where(inside, newton, (lo + hi) / 2)
        t = xp.where(done, t, step)
    return t


def _entmax_gap(xp, X, alpha, tol, max_iter):
    """alpha-entmax (alpha > 2) of the slices ``X = z - max z`` (float64 where
    the library has it), unnormalised: the NumPy path's ``_entmax_gap``.

    The threshold form loses the support entries whose ``p_j^(alpha-1)`` is
    below the resolution of ``tau``; with ``a = alpha - 1`` and ``z_r`` the
    smallest support value, ``p_j^a = u^a + a (z_j - z_r)`` has no
    cancellation. The support comes from a binary search over the sorted
    candidates ``a (max z - z_j) < 1`` (``z_j`` is in it iff ``sum_i [a (z_i -
    z_j)]_+^(1/a) < 1``), ``u = p_r`` from monotone Newton steps on ``log u``.
    Every slice runs each step; a finished one stays frozen.
    """
    a = alpha - 1.0
    e = 1.0 / a
    cand = -a * X < 1.0
    index = _info(xp, X)[1]
    ncand = xp.sum(xp.astype(cand, index), axis=-1, keepdims=True)
    C = int(xp.max(ncand))
    ninf = xp.full((), -float("inf"), dtype=X.dtype, device=_compat().device(X))
    Y = xp.sort(xp.where(cand, X, ninf), axis=-1, descending=True)[..., :C]
    lo = xp.ones_like(ncand)  # the maximum is always in the support
    hi = ncand + 1
    while bool(xp.any(hi - lo > 1)):
        act = hi - lo > 1
        mid = xp.where(act, (lo + hi) // 2, lo)
        D = a * (Y - _pick(xp, Y, mid - 1))
        ok = xp.sum(_power_where(xp, D, D > 0, e), axis=-1, keepdims=True) < 1.0
        lo = xp.where(act & ok, mid, lo)
        hi = xp.where(act & ~ok, mid, hi)
    zr = _pick(xp, Y, lo - 1)
    D = a * (Y - zr)
    pos = D > 0
    m = xp.sum(xp.astype(D == 0, X.dtype), axis=-1, keepdims=True)
    s = xp.log((1.0 - xp.sum(_power_where(xp, D, pos, e), axis=-1, keepdims=True)) / m)
    done = xp.zeros(s.shape, dtype=xp.bool, device=_compat().device(s))
    for _ in range(max_iter):
        ua, us = xp.exp(a * s), xp.exp(s)
        Wd = D + ua
        Pw = _power_where(xp, Wd, pos, e)
        g = m * us + xp.sum(Pw, axis=-1, keepdims=True)
        R = xp.sum(xp.where(pos, Pw / xp.where(pos, Wd, ua + 1), _zero(xp, Pw)), axis=-1,
                   keepdims=True)
        step = (g - 1.0) / (m * us + ua * R)
        s = xp.where(done, s, s - step)
        done = done | (xp.abs(g - 1.0) <= tol) | (us * xp.abs(step) <= tol)
        if bool(xp.all(done)):
            break
    G = a * (X - zr)
    P = _power_where(xp, G + xp.exp(a * s), G > 0, e)
    return xp.where(G == 0, xp.exp(s), P)


def _alpha_slices(xp, Z, alpha, axis, dtype):
    """``alpha`` (a float, or a float64 NumPy array of one value per slice,
    as :func:`._validation.per_slice` reads it) as a float or an array of
    shape ``Z.shape[:-1] + (1,)`` on ``Z``'s device."""
    if isinstance(alpha, float):
        return alpha
    shape = tuple(Z.shape)
    A = np.reshape(per_slice(alpha, shape, axis), shape[:-1] + (1,))
    if A.size and bool(np.all(A == A.flat[0])):
        return float(A.flat[0])
    return xp.asarray(A, dtype=dtype, device=_compat().device(Z))


def _threshold_form(xp, X, alpha, tol, max_iter):
    X = (alpha - 1.0) * X
    tau = _entmax_threshold(xp, X, alpha, tol, max_iter)
    return xp.clip(X - tau, min=0.0) ** (1.0 / (alpha - 1.0))


def _entmax_slices(xp, X, alpha, tol, max_iter):
    """Unnormalised alpha-entmax of ``X = z - max z``, ``alpha`` a float > 1 or
    an array of per-slice values >= 1 (each slice takes its own form: softmax
    at 1, the threshold form up to 2, the smallest-support-entry form
    above; every form runs on all slices, with a harmless alpha where it
    is not the slice's)."""
    if isinstance(alpha, float) and alpha > 2.0:
        return _entmax_gap(xp, X, alpha, tol, max_iter)  # see its docstring
    if isinstance(alpha, float):
        return _threshold_form(xp, X, alpha, tol, max_iter)
    gap, soft = alpha > 2.0, alpha == 1.0
    thr = xp.where(gap | soft, xp.ones_like(alpha) * 1.5, alpha)
    P = _threshold_form(xp, X, thr, tol, max_iter)
    if bool(xp.any(gap)):
        G = _entmax_gap(xp, X, xp.where(gap, alpha, xp.ones_like(alpha) * 3.0), tol, max_iter)
        P = xp.where(gap, G, P)
    if bool(xp.any(soft)):
        P = xp.where(soft, xp.exp(X), P)
    return P


def entmax_bisect(z, alpha, axis=-1, *, tol, max_iter):
    """Parameters already validated (alpha a float > 1 or a float64 NumPy array
    of values >= 1, tol > 0, max_iter >= 1)."""
    xp, Z, axis = _prepare(z, axis)
    zmax = _checked_max(xp, Z, "z")
    wide = _info(xp, Z)[0]
    alpha = _alpha_slices(xp, Z, alpha, axis, wide)
    X = xp.astype(Z, wide) - xp.astype(zmax, wide)
    if isinstance(alpha, float) and alpha == 1.0:
        X = xp.exp(X)
    else:
        X = _entmax_slices(xp, X, alpha, float(tol), int(max_iter))
    X = X / xp.sum(X, axis=-1, keepdims=True)
    return _restore(xp, xp.astype(X, Z.dtype), axis)


def entmax_jvp(p, v, alpha, axis=-1):
    """``alpha`` already validated (a float or a NumPy array, one per slice).

    The NumPy path's form without cancellation (``_entmax._entmax_jvp_rows``):
    with ``M`` the support entry of largest ``s = p^(2-alpha)`` (in log
    space), ``w = s / s_M``, ``W = sum w`` and ``dv = v - v_M``: ``J v_j =
    s_j (dv_j - sum_k w_k dv_k / W)`` and ``J v_M = -sum_{k != M} s_k dv_k /
    W``. The naive ``s v - s (s.v) / sum(s)`` loses every digit for large
    alpha, where ``s`` spans hundreds of orders of magnitude.
    """
    xp, P, V, axis = _prepare_pair(p, v, axis)
    alpha = _alpha_slices(xp, P, alpha, axis, _info(xp, P)[0])
    out_dtype, wide = P.dtype, _info(xp, P)[0]
    P, V = xp.astype(P, wide), xp.astype(V, wide)
    pos = P > 0
    zero = _zero(xp, P)
    one = xp.ones((), dtype=P.dtype, device=_compat().device(P))
    L = xp.where(pos, (2.0 - alpha) * xp.log(xp.where(pos, P, one)), -float("inf") * one)
    M = xp.argmax(L, axis=-1, keepdims=True)
    cols = xp.arange(P.shape[-1], dtype=M.dtype, device=_compat().device(P))
    at_M = cols == M
    LM = xp.sum(xp.where(at_M, L, zero), axis=-1, keepdims=True)
    LM = xp.where(xp.isfinite(LM), LM, zero)  # a slice without support gives 0
    w = xp.exp(L - LM)
    S = xp.exp(L)
    W = xp.sum(w, axis=-1, keepdims=True)
    W = xp.where(W > 0, W, one)
    dV = xp.where(pos, V - _pick(xp, V, M), zero)
    delta = xp.sum(w * dV, axis=-1, keepdims=True) / W
    JV = xp.where(pos, S * (dV - delta), zero)
    JM = -xp.sum(xp.where(at_M, zero, xp.where(pos, S, zero) * dV), axis=-1, keepdims=True) / W
    JV = xp.where(at_M & pos, JM, JV)
    return _restore(xp, xp.astype(JV, out_dtype), axis)
