"""Validation helpers and the shared radius/threshold formulas (private).

Conventions used throughout :mod:`sksparsemax.continuous` (see the
docstring of :class:`~sksparsemax.continuous.BetaGaussian`): for
``alpha > 1`` the density is

    p(t) = [(alpha - 1) (-tau - q(t) / 2)]_+ ** (1 / (alpha - 1)),
    q(t) = (t - mu)^T Sigma^{-1} (t - mu),

its support is the ellipsoid ``q(t) <= rho**2`` with ``rho**2 = -2 tau`` and

    rho**2 = R(d, alpha)**2 * det(Sigma) ** (-1 / (d + 2 / (alpha - 1))).
"""

import numpy as np
from scipy.linalg import eigh_tridiagonal, eigvalsh_tridiagonal
from scipy.special import gammaln

__all__ = []


def check_alpha(alpha):
    """Return ``alpha`` as a float after checking ``alpha >= 1``."""
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a real number >= 1, got {alpha!r}.") from None
    if np.ndim(alpha) != 0 or not np.isfinite(value) or value < 1:
        raise ValueError(f"alpha must be a finite real number >= 1, got {alpha!r}.")
    return value


def as_float_array(value, name):
    """Convert to a float64 array and check it is finite."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers.") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf).")
    return arr


def check_positive(value, name):
    """Float64 array of strictly positive finite numbers."""
    arr = as_float_array(value, name)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be strictly positive, got min {arr.min()!r}.")
    return arr


def broadcast(named):
    """Broadcast ``{name: array}``; a clear error naming the arrays on mismatch."""
    try:
        return np.broadcast_arrays(*named.values())
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in named.items())
        names = " and ".join(named)
        raise ValueError(f"{names} have mismatched shapes: {shapes}.") from None


def check_spd(value, name, dim=None):
    """Check a (batch of) symmetric positive definite matrices.

    Returns the float64 array and its lower Cholesky factor.
    """
    arr = as_float_array(value, name)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"{name} must be a square matrix (or a stack of them), got shape {arr.shape}.")
    if dim is not None and arr.shape[-1] != dim:
        raise ValueError(f"{name} must be {dim} x {dim}, got shape {arr.shape}.")
    scale = np.max(np.abs(arr), axis=(-2, -1), keepdims=True)
    if np.any(np.abs(arr - np.swapaxes(arr, -1, -2)) > 1e-10 * np.maximum(scale, 1e-300)):
        raise ValueError(f"{name} must be symmetric.")
    arr = 0.5 * (arr + np.swapaxes(arr, -1, -2))
    try:
        chol = np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be positive definite.") from None
    if not np.all(np.isfinite(chol)) or np.any(np.diagonal(chol, axis1=-2, axis2=-1) <= 0):
        raise ValueError(f"{name} must be positive definite.")
    return arr, chol


def log_radius(d, alpha):
    """log R(d, alpha), the support radius constant of the beta-Gaussian (alpha > 1).

    R(d, a) = [Gamma(d/2 + a/(a-1)) / (Gamma(a/(a-1)) pi^{d/2}) (2/(a-1))^{1/(a-1)}]
              ** ((a - 1) / (2 + (a - 1) d)).
    """
    am1 = alpha - 1.0
    inner = (
        gammaln(d / 2.0 + alpha / am1)
        - gammaln(alpha / am1)
        - 0.5 * d * np.log(np.pi)
        + np.log(2.0 / am1) / am1
    )
    return am1 / (2.0 + am1 * d) * inner


def log_rho2(d, alpha, logdet):
    """log of rho**2 = -2 tau for a beta-Gaussian with log det(Sigma) = ``logdet``."""
    return 2.0 * log_radius(d, alpha) - logdet / (d + 2.0 / (alpha - 1.0))


def chunks(n_items, per_item, budget=2**22):
    """Yield slices over ``n_items`` so that ``len(slice) * per_item <= budget``."""
    step = max(1, int(budget // max(per_item, 1)))
    for start in range(0, n_items, step):
        yield slice(start, min(start + step, n_items))


_RULES = {}
# Up to this many nodes the Golub-Welsch eigenvectors are cheap (< 0.1 s); beyond it
# the weights come from the Christoffel function (O(n^2) time, O(n) memory).
_GW_MAX = 384


def gauss_jacobi(n, a, b):
    """Gauss-Jacobi rule for the weight (1 - x)**a (1 + x)**b on [-1, 1], weights summing to 1.

    Both methods work from the symmetric Jacobi matrix of the three-term recurrence
    (no overflow for large exponents). Up to ``_GW_MAX`` nodes the Golub-Welsch
    eigenvectors give the weights; for more nodes the eigenvalues are computed alone
    and the weights are the Christoffel numbers ``1 / sum_k p_k(x_i)^2`` of the
    orthonormal polynomials. (SciPy's ``roots_jacobi`` is not used: for negative
    exponents its weights lose accuracy quickly with n, about 1e-9 at n = 1024 for
    exponent -0.8, where these rules stay within about 1e-12; the Chebyshev weight
    ``a = b = -1/2`` has closed-form nodes.) Rules are cached.
    """
    key = (int(n), float(a), float(b))
    if key not in _RULES:
        if a == b == -0.5:  # Gauss-Chebyshev: closed form
            x, w = np.cos(np.pi * (np.arange(n, 0, -1) - 0.5) / n), np.ones(n)
        elif n <= _GW_MAX:
            x, w = _golub_welsch_jacobi(n, a, b)
        else:
            x, w = _christoffel_jacobi(n, a, b)
        if len(_RULES) >= 256:
            _RULES.pop(next(iter(_RULES)))
        x.setflags(write=False)
        w = w / w.sum()
        w.setflags(write=False)
        _RULES[key] = (x, w)
    return _RULES[key]


def _jacobi_matrix(n, a, b):
    """Diagonal and off-diagonal of the symmetric Jacobi matrix of the Jacobi weight."""
    k = np.arange(n, dtype=np.float64)
    s = 2 * k + a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        diag = (b * b - a * a) / (s * (s + 2))
    diag[0] = (b - a) / (a + b + 2)
    if a == b:
        diag[:] = 0.0  # symmetric weight: exactly zero (avoids 0/0 when a + b = 0)
    k1 = k[1:]
    s1 = s[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        off2 = 4 * k1 * (k1 + a) * (k1 + b) * (k1 + a + b) / (s1 * s1 * (s1 + 1) * (s1 - 1))
    if n > 1:
        off2[0] = 4 * (1 + a) * (1 + b) / ((2 + a + b) ** 2 * (3 + a + b))
    return diag, np.sqrt(off2)


def _golub_welsch_jacobi(n, a, b):
    """Nodes and (unnormalised) weights from the symmetric Jacobi matrix."""
    diag, off = _jacobi_matrix(n, a, b)
    if n == 1:
        return diag.copy(), np.ones(1)
    x, vec = eigh_tridiagonal(diag, off)
    return x, vec[0] ** 2


def _christoffel_jacobi(n, a, b):
    """Nodes (eigenvalues) and Christoffel weights 1 / sum_k p_k(x)^2 (unnormalised scale)."""
    diag, off = _jacobi_matrix(n, a, b)
    x = eigvalsh_tridiagonal(diag, off)
    p_prev = np.zeros_like(x)
    p = np.ones_like(x)
    total = np.ones_like(x)
    log_scale = np.zeros_like(x)
    for k in range(n - 1):
        p_next = (x - diag[k]) * p
        if k:
            p_next -= off[k - 1] * p_prev
        p_next /= off[k]
        total += p_next * p_next
        p_prev, p = p, p_next
        if k % 16 == 0:  # rescale where the orthonormal polynomials grow large
            big = np.abs(p) > 1e100
            if big.any():
                p[big] *= 1e-100
                p_prev[big] *= 1e-100
                total[big] *= 1e-200
                log_scale[big] += 200 * np.log(10.0)
    log_w = -(np.log(total) + log_scale)
    return x, np.exp(log_w - log_w.max())
