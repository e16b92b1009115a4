"""Polar form of 2D continuous attention for alpha > 1 (private).

Whitening the support ellipse of the beta-Gaussian, ``t = mu + L x`` with
``L L' = Sigma``, turns it into the disk ``|x| <= rho``; each basis function is
then a Gaussian along every ray ``x = r u(phi)``, with a quadratic exponent
``A r^2 + 2 B r + C`` whose coefficients are cheap trigonometric polynomials of
the angle. The radius is integrated in closed form (``alpha = 2``) or by a
Gauss-Jacobi rule (other ``alpha``); the angle by the periodic rule.
"""

import numpy as np
from scipy.special import erfcx, ndtr, roots_legendre

from ._utils import chunks, gauss_jacobi, inv2

__all__ = []

# Where A rho^2 < _FLAT (the support is much smaller than the basis function along a
# ray) the erf recursion loses digits to cancellation; a Gauss-Legendre rule in the
# radius is exact to rounding there.
_FLAT = 0.05
_R_NODES, _R_WEIGHTS = roots_legendre(16)


def _angle_tables(n_angles):
    """Periodic rule: first half of the angles (the second half is u -> -u), trig tables."""
    half = n_angles // 2
    ang = 2 * np.pi * np.arange(half) / n_angles
    cos, sin = np.cos(ang), np.sin(ang)
    t_a = np.stack([np.ones(half), np.cos(2 * ang), np.sin(2 * ang)])  # A = [a0, a1, a2] @ t_a
    t_b = np.stack([cos, sin])  # B = [q0, q1] @ t_b
    u = np.concatenate([np.stack([cos, sin], axis=1), -np.stack([cos, sin], axis=1)])  # (n, 2)
    return t_a, t_b, u


def _ray_coefficients(mu, chol, basis):
    """Ray quadratics A = u'Mu, B = q'u, C = d'Pd per (density, basis function).

    With v = L u (whitened ray direction), d = mu - mu_j and P = Sigma_j^-1:
    M = L'PL, q = L'Pd. Returns (R, 3) coefficients of A in [1, cos 2phi, sin 2phi],
    (R, 2) coefficients of B in [cos phi, sin phi] and C of shape (R,), R = b * N rows.
    """
    P, _ = inv2(basis.Sigma)  # (N, 2, 2)
    d = mu[:, None, :] - basis.mu[None]  # (b, N, 2)
    Pd = np.einsum("nij,bnj->bni", P, d)
    C = np.sum(d * Pd, axis=-1)
    q = np.einsum("bji,bnj->bni", chol, Pd)  # L' P d
    M = np.einsum("bki,nkl,blj->bnij", chol, P, chol)  # L' P L
    coef_a = np.stack([0.5 * (M[..., 0, 0] + M[..., 1, 1]), 0.5 * (M[..., 0, 0] - M[..., 1, 1]), M[..., 0, 1]], -1)
    return coef_a.reshape(-1, 3), q.reshape(-1, 2), C.reshape(-1)


def _ray_geometry(mu, chol, basis, n_angles):
    """Full-circle A (b, N, n), B (b, N, n), C (b, N) and the directions u (n, 2)."""
    t_a, t_b, u = _angle_tables(n_angles)
    coef_a, coef_b, C = _ray_coefficients(mu, chol, basis)
    A = coef_a @ t_a
    B = coef_b @ t_b
    shape = (mu.shape[0], basis.n_basis, n_angles)
    return u, np.concatenate([A, A], axis=1).reshape(shape), np.concatenate([B, -B], axis=1).reshape(shape), \
        C.reshape(shape[:2])


def _radial_alpha2(A, B, C, rho, rho2):
    """Radial integrals K_k = int_0^rho r^k exp(-(A r^2 + 2 B r + C) / 2) dr, k = 1, 2, 3.

    ``A, B`` have shape (R, m) for the first m = n/2 angles; the opposite rays have A and
    -B. The rays are taken in pairs ordered by the sign of c = B / A: returns K1, K2, K3
    of shape (R, 2m) whose first half is the ray of each pair with c = |c| (it leaves the
    basis centre behind) and second half the ray with c = -|c|, and ``sign`` (R, m),
    +1 where the first-half ray is the one at angle phi (B >= 0), -1 otherwise.

    With s = sqrt(A / 2), e0 = exp(-C / 2) and far = exp(-(C - B^2/A) / 2) <= 1:

    - c = |c|: with g = exp(-A rho (rho/2 + |c|)), G = e0 g and
      K_0 = e0 sqrt(pi / (2A)) (erfcx(s |c|) - g erfcx(s (rho + |c|)));
    - c = -|c|: K_0 = sqrt(pi / (2A)) (2 far Phi(sqrt(A) (rho - |c|)) - e0 erfcx(s |c|)),
      G = exp(-(A rho^2 - 2 |B| rho + C) / 2),

    so each pair costs two erfcx and one ndtr, with no branch evaluated twice (e0 is
    factored out of the receding ray, whose recursion amplifies relative errors).
    K_1..K_3 follow by integration by parts, G being the integrand at r = rho. Where
    A rho^2 < _FLAT (support much smaller than the basis along the ray) the recursion
    cancels; a 16-node Gauss-Legendre rule is exact to rounding there.
    """
    sign = np.where(B >= 0, 1.0, -1.0)
    absb = np.abs(B)
    c = absb / A
    s = np.sqrt(0.5 * A)
    sq = np.sqrt(0.5 * np.pi / A)
    e0 = np.exp(-0.5 * C)
    X = erfcx(s * c)
    # receding ray (c = |c|)
    g = A * rho * (0.5 * rho + c)
    np.negative(g, out=g)
    np.exp(g, out=g)
    K0p = e0 * sq * (X - g * erfcx(s * (rho + c)))
    Gp = e0 * g
    # approaching ray (c = -|c|)
    far = np.exp(-0.5 * np.maximum(C - absb * c, 0.0))
    K0n = sq * (2 * far * ndtr(2 * s / np.sqrt(2) * (rho - c)) - e0 * X)
    Gn = np.exp(-0.5 * np.maximum(A * rho2 - 2 * absb * rho + C, 0.0))
    K0 = np.concatenate([K0p, K0n], axis=1)
    G = np.concatenate([Gp, Gn], axis=1)
    Bs = np.concatenate([absb, -absb], axis=1)
    inv_a = np.concatenate([1.0 / A, 1.0 / A], axis=1)
    K1 = e0 - G - Bs * K0
    K1 *= inv_a
    K2 = K0 - rho * G - Bs * K1
    K2 *= inv_a
    K3 = 2 * K1 - rho2 * G - Bs * K2
    K3 *= inv_a
    flat = np.nonzero(np.concatenate([A, A], axis=1) * rho2 < _FLAT)
    if flat[0].size:
        rows = flat[0]
        rr = np.broadcast_to(rho, K1.shape)[flat]
        r = 0.5 * rr[:, None] * (_R_NODES + 1)
        a_f = np.concatenate([A, A], axis=1)[flat]
        gl = np.exp(-0.5 * (a_f[:, None] * r * r + 2 * Bs[flat][:, None] * r + C[rows]))
        for K, k in ((K1, 1), (K2, 2), (K3, 3)):
            K[flat] = 0.5 * rr * np.sum(_R_WEIGHTS * r**k * gl, axis=-1)
    return K1, K2, K3, sign


def closed_alpha2(mu, chol, rho2, basis, n_angles, want_r, want_jac):
    """alpha = 2: whitened polar form, radius in closed form, periodic angle rule.

    Returns r (b, N) and/or the angle sums (s0, s1, s2, exx) of the Jacobian, from one
    evaluation of the radial integrals.
    """
    n_b, n_basis = mu.shape[0], basis.n_basis
    t_a, t_b, u = _angle_tables(n_angles)
    coef_a, coef_b, C = _ray_coefficients(mu, chol, basis)
    rho2_rows = np.repeat(rho2, n_basis)[:, None]
    rho_rows = np.sqrt(rho2_rows)
    detL = chol[:, 0, 0] * chol[:, 1, 1]
    detS = basis.Sigma[:, 0, 0] * basis.Sigma[:, 1, 1] - basis.Sigma[:, 0, 1] ** 2
    norm = detL[:, None] / (2 * np.pi * np.sqrt(detS))  # (b, N)
    scale = (norm * (2 * np.pi / n_angles)).reshape(-1, 1)
    half = n_angles // 2
    u_half = u[:half]
    uu_half = np.column_stack([u_half[:, 0] ** 2, u_half[:, 0] * u_half[:, 1], u_half[:, 1] ** 2])
    rows = n_b * n_basis
    r = np.empty(rows) if want_r else None
    sums = np.empty((rows, 6)) if want_jac else None
    for sl in chunks(rows, n_angles, budget=2**16):
        A = coef_a[sl] @ t_a
        B = coef_b[sl] @ t_b
        rh, rh2 = rho_rows[sl], rho2_rows[sl]
        K1, K2, K3, sign = _radial_alpha2(A, B, C[sl, None], rh, rh2)
        # the angle sums are invariant under swapping the rays of a pair, except the
        # odd one: sum K2 u = sum_pairs sign (K2_receding - K2_approaching) u_phi
        k1 = K1.sum(axis=1)
        if want_r:
            r[sl] = 0.5 * (rh2[:, 0] * k1 - K3.sum(axis=1))
        if want_jac:
            sums[sl, 0] = k1
            sums[sl, 1:3] = (sign * (K2[:, :half] - K2[:, half:])) @ u_half
            sums[sl, 3:] = (K3[:, :half] + K3[:, half:]) @ uu_half
    out = []
    if want_r:
        out.append((scale[:, 0] * r).reshape(n_b, n_basis))
    if want_jac:
        sums *= scale
        sums = sums.reshape(n_b, n_basis, 6)
        s2 = np.empty((n_b, n_basis, 2, 2))
        s2[..., 0, 0], s2[..., 0, 1], s2[..., 1, 1] = sums[..., 3], sums[..., 4], sums[..., 5]
        s2[..., 1, 0] = s2[..., 0, 1]
        exx = rho2[:, None] / 4  # E[x x'] = rho^2 / 4 I under the uniform law on the disk
        out.append((sums[..., 0], sums[..., 1:3], s2, exx))
    return out


def quadrature(mu, chol, rho2, alpha, basis, n_angles, n_radial, jacobian):
    """Other alpha: s = |x|^2 / rho^2 has weight (1 - s)^e on [0, 1] (Gauss-Jacobi), angles periodic."""
    beta = 1.0 / (alpha - 1)
    exponent = (2 - alpha) * beta if jacobian else beta
    y, w = gauss_jacobi(n_radial, exponent, 0.0)
    s = 0.5 * (1 + y)
    u, A, B, C = _ray_geometry(mu, chol, basis, n_angles)
    rho = np.sqrt(rho2)[:, None, None, None]
    rs = rho * np.sqrt(s)[:, None]  # (b, 1, n_radial, 1) radii
    expo = A[:, :, None, :] * rs * rs + 2 * B[:, :, None, :] * rs + C[:, :, None, None]
    detP = basis.Sigma[:, 0, 0] * basis.Sigma[:, 1, 1] - basis.Sigma[:, 0, 1] ** 2
    psi = np.exp(-0.5 * expo) / (2 * np.pi * np.sqrt(detP))[:, None, None]  # (b, N, n_r, n_a)
    wa = w[:, None] / n_angles
    m0 = np.einsum("bnrm,rm->bn", psi, np.broadcast_to(wa, psi.shape[2:]))
    if not jacobian:
        return m0
    m1 = np.einsum("bnrm,rm,mi->bni", psi * rs, np.broadcast_to(wa, psi.shape[2:]), u)
    m2 = np.einsum("bnrm,rm,mi,mk->bnik", psi * rs * rs, np.broadcast_to(wa, psi.shape[2:]), u, u)
    gamma = exponent
    # Z = int p^(2-alpha) dt = det(L) K^gamma pi rho^2 / (gamma + 1), K = (alpha - 1) rho^2 / 2
    detL = chol[:, 0, 0] * chol[:, 1, 1]
    z = (detL * ((alpha - 1) * rho2 / 2) ** gamma * np.pi * rho2 / (gamma + 1))[:, None]
    exx = (rho2 * np.sum(w * s) / 2)[:, None]
    return z * m0, z[..., None] * m1, z[..., None, None] * m2, exx
