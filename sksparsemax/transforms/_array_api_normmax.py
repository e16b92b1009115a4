"""alpha-normmax on any Array API compatible array (PyTorch, CuPy, JAX...).

The NumPy path's algorithms (:mod:`._normmax`), vectorised over every slice
with the functions of the 2023.12 standard and the helpers of
:mod:`._array_api` (namespace, dtype policy, axis handling, the NaN / +inf /
all -inf check), in float64 where the library has it:

* ``alpha = 2`` by the sorted closed form (a quadratic in the threshold per
  candidate support size);
* other ``alpha`` by the safeguarded Newton search on the threshold, every
  slice at once, a converged slice frozen (one host synchronisation per
  step to stop);
* the Jacobian-vector product from its closed form.
"""

import math

from ._array_api import (
    _arange1,
    _checked_max,
    _compat,
    _info,
    _power_where,
    _prepare,
    _prepare_pair,
    _restore,
    _zero,
)


def _closed_form_2(xp, X):
    """``q = [x - tau]_+`` with ``sum q^2 = 1`` (slice maximum 0): the NumPy
    path's ``_closed_form_2``."""
    srt = xp.sort(xp.clip(X, min=-2.0), axis=-1, descending=True)
    rho = _arange1(xp, X.shape[-1], X)
    mean = xp.cumulative_sum(srt, axis=-1) / rho
    mean_sq = xp.cumulative_sum(srt * srt, axis=-1) / rho
    delta = (1 - rho * (mean_sq - mean * mean)) / rho
    tau = mean - xp.sqrt(xp.clip(delta, min=0.0))
    size = xp.sum(xp.astype(tau <= srt, X.dtype), axis=-1, keepdims=True)
    tau_star = xp.sum(xp.where(rho == size, tau, _zero(xp, X)), axis=-1, keepdims=True)
    return xp.clip(X - tau_star, min=0.0)


def _threshold(xp, X, alpha, tol, max_iter):
    """The NumPy path's ``_threshold``: Newton steps on ``||[x - tau]_+||_b - 1``
    (``b = alpha / (alpha - 1)``) from ``tau = -1``, safeguarded by the bracket
    ``[-1, -K^(-(alpha-1)/alpha)]``, on every slice at once."""
    K = X.shape[-1]
    a = alpha - 1.0
    e = 1.0 / a
    batch = tuple(X.shape[:-1]) + (1,)
    dev = _compat().device(X)
    lo = xp.full(batch, -1.0, dtype=X.dtype, device=dev)
    hi = xp.full(batch, -(float(K) ** (-a / alpha)), dtype=X.dtype, device=dev)
    t = lo
    done = xp.zeros(batch, dtype=xp.bool, device=dev)
    for _ in range(max_iter):
        D = X - t
        pos = D > 0
        Q = _power_where(xp, D, pos, e)
        S = xp.sum(Q * xp.where(pos, D, _zero(xp, D)), axis=-1, keepdims=True)
        above = S > 1.0
        lo = xp.where(above, t, lo)
        hi = xp.where(above, hi, t)
        now = (xp.abs(S - 1.0) <= tol) | (hi - lo <= tol * xp.clip(xp.abs(t), min=1.0))
        done = done | now
        if bool(xp.all(done)):
            break
        newton = t + (S ** (a / alpha) - 1.0) * S ** (1.0 / alpha) / xp.sum(
            Q, axis=-1, keepdims=True)
        inside = (newton > lo) & (newton < hi)
        t = xp.where(done, t, xp.where(inside, newton, (lo + hi) / 2))
    return t


def normmax(z, alpha, axis=-1, *, tol, max_iter):
    """Parameters already validated (alpha > 1 float, tol > 0, max_iter >= 1)."""
    xp, Z, axis = _prepare(z, axis)
    zmax = _checked_max(xp, Z, "z")
    wide = _info(xp, Z)[0]
    X = xp.astype(Z, wide) - xp.astype(zmax, wide)
    if alpha == 2.0:
        Q = _closed_form_2(xp, X)
    else:
        tau = _threshold(xp, X, float(alpha), float(tol), int(max_iter))
        D = X - tau
        Q = _power_where(xp, D, D > 0, 1.0 / (alpha - 1.0))
    Q = Q / xp.sum(Q, axis=-1, keepdims=True)
    return _restore(xp, xp.astype(Q, Z.dtype), axis)


def normmax_jvp(p, v, alpha, axis=-1):
    """``alpha`` already validated; the NumPy path's ``_jvp_rows``."""
    xp, P0, V0, axis = _prepare_pair(p, v, axis)
    wide = _info(xp, P0)[0]
    P, V = xp.astype(P0, wide), xp.astype(V0, wide)
    pos = P > 0
    zero = _zero(xp, P)
    one = xp.ones((), dtype=P.dtype, device=_compat().device(P))
    pmax = xp.max(P, axis=-1, keepdims=True)
    scale = xp.where(pmax > 0, pmax, one)
    N = pmax * xp.sum((P / scale) ** alpha, axis=-1, keepdims=True) ** (1.0 / alpha)
    Nsafe = xp.where(N > 0, N, one)
    ninf = xp.full((), -float("inf"), dtype=P.dtype, device=_compat().device(P))
    L = xp.where(pos, (2.0 - alpha) * xp.log(xp.where(pos, P, one) / Nsafe), ninf)
    LM = xp.max(L, axis=-1, keepdims=True)
    LM = xp.where(xp.isfinite(LM), LM, zero)
    rho = xp.exp(L - LM)
    W = xp.where(pos, V - xp.sum(P * V, axis=-1, keepdims=True), zero)
    B = rho * W - P * xp.sum(rho * W, axis=-1, keepdims=True)
    factor = xp.exp(xp.log(Nsafe) + LM - math.log(alpha - 1.0))
    out = xp.where(B != 0, B * factor, zero)
    return _restore(xp, xp.astype(out, P0.dtype), axis)
