"""Helpers shared by the continuous modules (private).

Validation of the inputs, the radius/threshold formulas of the beta-Gaussian,
the contraction of a Jacobian with an upstream gradient, closed-form 2 x 2
inverses, chunking of batches and Gauss-Jacobi rules.

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


def check_number(value, name, *, strict):
    """Return a finite float that is positive (``strict``) or non-negative."""
    word = "positive" if strict else "non-negative"
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a {word} number, got {value!r}.") from None
    if not (np.isfinite(number) and (number > 0 if strict else number >= 0)):
        raise ValueError(f"{name} must be a finite {word} number, got {value!r}.")
    return number


def check_method(method, alpha):
    """Check the ``method`` of an expectation against ``alpha`` (a float >= 1).

    The closed forms exist for ``alpha`` in {1, 2} only, and the quadrature needs
    the compact support of ``alpha > 1``.
    """
    if method not in ("auto", "closed", "quadrature"):
        raise ValueError(f"method must be 'auto', 'closed' or 'quadrature', got {method!r}.")
    if method == "closed" and alpha not in (1.0, 2.0):
        raise ValueError(f"method='closed' needs alpha = 1 or 2, got alpha={alpha}.")
    if method == "quadrature" and alpha == 1:
        raise ValueError("method='quadrature' needs alpha > 1 (the support must be compact).")
    return method


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


def half_width(sigma2, alpha):
    """Half-width a = rho * sigma of the support of the 1D beta-Gaussian (alpha > 1)."""
    return np.sqrt(np.exp(log_rho2(1, alpha, np.log(sigma2))) * sigma2)


def jacobian_vjp(jac, grad_r):
    """Contract a Jacobian (*batch, K, N) with an upstream gradient (*batch, N)."""
    grad_r = as_float_array(grad_r, "grad_r")
    expected = jac.shape[:-2] + (jac.shape[-1],)
    if grad_r.shape != expected:
        raise ValueError(f"grad_r must have shape {expected} (batch shape + (N,)), got {grad_r.shape}.")
    return np.einsum("...kn,...n->...k", jac, grad_r)


def inv2(M):
    """Inverse and determinant of a stack of 2 x 2 matrices, in closed form."""
    det = M[..., 0, 0] * M[..., 1, 1] - M[..., 0, 1] * M[..., 1, 0]
    inv = np.empty_like(M)
    inv[..., 0, 0] = M[..., 1, 1]
    inv[..., 1, 1] = M[..., 0, 0]
    inv[..., 0, 1] = -M[..., 0, 1]
    inv[..., 1, 0] = -M[..., 1, 0]
    return inv / det[..., None, None], det


def chunks(n_items, per_item, budget=2**22):
    """Yield slices over ``n_items`` so that ``len(slice) * per_item <= budget``."""
    step = max(1, int(budget // max(per_item, 1)))
    for start in range(0, n_items, step):
        yield slice(start, min(start + step, n_items))


_RULES = {}
# Golub-Welsch computes the whole n x n eigenvector matrix for its first row only;
# up to this many nodes that costs little, beyond it the weights come from the
# Christoffel function instead (O(n^2) time, O(n) memory).
_GW_MAX = 384


def gauss_jacobi(n, a, b):
    """Gauss-Jacobi rule for the weight (1 - x)**a (1 + x)**b on [-1, 1], weights summing to 1.

    Both methods work from the symmetric Jacobi matrix of the three-term recurrence
    (no overflow for large exponents). Up to ``_GW_MAX`` nodes the Golub-Welsch
    eigenvectors give the weights; for more nodes the eigenvalues are computed alone
    and the weights are the Christoffel numbers ``1 / sum_k p_k(x_i)^2`` of the
    orthonormal polynomials. (SciPy's ``roots_jacobi`` is not used: for negative
    exponents its weights lose accuracy as n grows, while both methods here work on
    the well-conditioned symmetric matrix; the Chebyshev weight ``a = b = -1/2`` has
    closed-form nodes.) Rules are cached, as the expectations reuse a few sizes.
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
