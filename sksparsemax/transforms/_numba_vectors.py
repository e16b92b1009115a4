"""Fused passes over long coefficient vectors for the linear models' L-BFGS (numba).

With a million coefficients (20 classes times 50,000 sparse features) every
NumPy operation on a coefficient vector is one pass over 8 MB of memory, and
an L-BFGS iteration made of such operations (the direction, the trial point,
the new curvature pair, their dot products, the change of variables) spends
about as long in them as in the products with the curvature pairs. These
kernels do in one pass what takes NumPy several. The products with the
pairs themselves stay with BLAS, which reads them at the memory's speed.

They serve :class:`sksparsemax.linear_model._lbfgs._Pairs` and the diagonal
change of variables of
:class:`sksparsemax.linear_model._preconditioner.GramPreconditioner`, which
reach them through :func:`._backend.kernels`, like the whitening products of
:mod:`._numba_blas`. Dot products are reassociated (vectorised), as in BLAS.
"""

from numba import njit

from ._numba_rows import _JIT

_VECTOR = dict(_JIT, fastmath={"reassoc", "contract"}, boundscheck=False)


@njit(**_VECTOR)
def direction_and_slope(d, g, gamma):
    """``d -= gamma g`` in place; returns ``g^T d`` (the new ``d``)."""
    slope = 0.0
    for j in range(g.shape[0]):
        dj = d[j] - gamma * g[j]
        d[j] = dj
        slope += g[j] * dj
    return slope


@njit(**_VECTOR)
def store_pair(g_new, g, d, t, y, s):
    """``y = g_new - g`` and ``s = t d``; returns ``(y^T y, y^T g_new, d^T d)``."""
    yy = yg = dd = 0.0
    for j in range(g.shape[0]):
        gj = g_new[j]
        yj = gj - g[j]
        y[j] = yj
        yy += yj * yj
        yg += yj * gj
        dj = d[j]
        s[j] = t * dj
        dd += dj * dj
    return yy, yg, dd


@njit(**_VECTOR)
def trial_point(x, d, t, out):
    """``out = x + t d`` in one pass."""
    for j in range(x.shape[0]):
        out[j] = x[j] + t * d[j]


@njit(**_VECTOR)
def diagonal_gradient(gW, gb, mean, scale, gV):
    """``gV = (gW - gb mean^T) / scale`` (columns); returns ``max |gW|, max |gV|``.

    The chain rule of the diagonal change of variables ``W = V / scale``,
    ``b = c - W mean`` (``gb`` of length 0: no intercept, and ``mean``, any
array of length ``d``, is multiplied by 0),
    and the largest entries of both gradients, which the stopping rule
    tests, from the same pass.
    """
    K, d = gW.shape
    mw = mv = 0.0
    # w * 0 is NaN for a NaN or an infinite entry (and 0 otherwise): added to
    # the maxima, it makes them NaN, which no stopping rule accepts.
    bad = 0.0
    for k in range(K):
        b = gb[k] if gb.shape[0] else 0.0
        for j in range(d):
            w = gW[k, j]
            v = (w - b * mean[j]) / scale[j]
            gV[k, j] = v
            mw = max(mw, abs(w))
            mv = max(mv, abs(v))
            bad += w * 0.0
    return mw + bad, mv + bad
