"""Forward and backward passes of 2D continuous attention: E_p[psi(t)] and its Jacobian."""

import numpy as np
from scipy.special import erfcx, ndtr, roots_legendre

from ._basis import GaussianRBF2D
from ._utils import as_float_array, check_alpha, check_spd, chunks, gauss_jacobi, log_rho2

__all__ = [
    "rbf_expectation_2d",
    "rbf_expectation_and_jacobian_2d",
    "rbf_expectation_jacobian_2d",
    "rbf_expectation_vjp_2d",
]

# Where A rho^2 < _FLAT (the support is much smaller than the basis function along a
# ray) the erf recursion loses digits to cancellation; a Gauss-Legendre rule in the
# radius is exact to rounding there.
_FLAT = 0.05
_R_NODES, _R_WEIGHTS = roots_legendre(16)
_SQRT_2PI = np.sqrt(2 * np.pi)


def _prepare(mu, Sigma, basis, alpha, n_angles, method):
    alpha = check_alpha(alpha)
    mu = as_float_array(mu, "mu")
    if mu.ndim < 1 or mu.shape[-1] != 2:
        raise ValueError(f"mu must have shape (..., 2), got {mu.shape}.")
    Sigma, chol = check_spd(Sigma, "Sigma", dim=2)
    try:
        shape = np.broadcast_shapes(mu.shape[:-1], Sigma.shape[:-2])
    except ValueError:
        raise ValueError(
            f"mu and Sigma have mismatched batch shapes: mu {mu.shape}, Sigma {Sigma.shape}."
        ) from None
    if not isinstance(basis, GaussianRBF2D):
        raise ValueError(f"basis must be a GaussianRBF2D, got {type(basis).__name__}.")
    if int(n_angles) != n_angles or n_angles < 4 or n_angles % 2:
        raise ValueError(f"n_angles must be an even integer >= 4, got {n_angles!r}.")
    if method not in ("auto", "closed", "quadrature"):
        raise ValueError(f"method must be 'auto', 'closed' or 'quadrature', got {method!r}.")
    if method == "closed" and alpha not in (1.0, 2.0):
        raise ValueError(f"method='closed' needs alpha = 1 or 2, got alpha={alpha}.")
    if method == "quadrature" and alpha == 1:
        raise ValueError("method='quadrature' needs alpha > 1 (the support must be compact).")
    mu = np.broadcast_to(mu, shape + (2,)).reshape(-1, 2)
    Sigma = np.broadcast_to(Sigma, shape + (2, 2)).reshape(-1, 2, 2)
    chol = np.broadcast_to(chol, shape + (2, 2)).reshape(-1, 2, 2)
    kind = "gauss" if alpha == 1 else ("closed" if alpha == 2 and method != "quadrature" else "quad")
    return alpha, mu, Sigma, chol, shape, kind


def _inv2(M):
    det = M[..., 0, 0] * M[..., 1, 1] - M[..., 0, 1] * M[..., 1, 0]
    inv = np.empty_like(M)
    inv[..., 0, 0] = M[..., 1, 1]
    inv[..., 1, 1] = M[..., 0, 0]
    inv[..., 0, 1] = -M[..., 0, 1]
    inv[..., 1, 0] = -M[..., 1, 0]
    return inv / det[..., None, None], det


def _gauss_terms(mu, Sigma, basis):
    """alpha = 1: r_j = N(mu; mu_j, Sigma + Sigma_j) and the Jacobian blocks."""
    C = Sigma[:, None] + basis.Sigma[None]  # (B, N, 2, 2)
    Cinv, det = _inv2(C)
    diff = basis.mu[None] - mu[:, None]  # mu_j - mu
    Cd = np.einsum("bnij,bnj->bni", Cinv, diff)
    r = np.exp(-0.5 * np.sum(diff * Cd, axis=-1)) / (2 * np.pi * np.sqrt(det))
    return r, Cinv, Cd


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
    P, _ = _inv2(basis.Sigma)  # (N, 2, 2)
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


def _closed_alpha2(mu, chol, rho2, basis, n_angles, want_r, want_jac):
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


def _quadrature(mu, chol, rho2, alpha, basis, n_angles, n_radial, jacobian):
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


def _assemble_jacobian(jac, sl, mu, chol, s0, s1, s2, exx):
    """Jacobian rows from the whitened moments: cov(t, psi) and cov(t t', psi)."""
    L = chol[sl]
    cx = np.einsum("bij,bnj->bni", L, s1)  # cov(t, psi)
    cxx = s2 - (exx * s0)[..., None, None] * np.eye(2)  # cov(x x', psi)
    m = mu[sl][:, None, :]
    ctt = np.einsum("bij,bnjk,blk->bnil", L, cxx, L)
    ctt = ctt + m[..., :, None] * cx[..., None, :] + cx[..., :, None] * m[..., None, :]
    jac[sl, :2] = np.moveaxis(cx, -1, 1)
    jac[sl, 2:] = np.moveaxis(ctt.reshape(cx.shape[:2] + (4,)), -1, 1)


def _gauss_jacobian(jac, sl, mu, Sigma, basis):
    r, Cinv, Cd = _gauss_terms(mu[sl], Sigma[sl], basis)
    # Product rule: mean m_j = mu + Sigma C^-1 (mu_j - mu), covariance Sigma - Sigma C^-1 Sigma.
    e = np.einsum("bij,bnj->bni", Sigma[sl], Cd)
    shrink = np.einsum("bij,bnjk,bkl->bnil", Sigma[sl], Cinv, Sigma[sl])
    m = mu[sl][:, None, :]
    outer = -shrink + e[..., :, None] * e[..., None, :]
    outer = outer + m[..., :, None] * e[..., None, :] + e[..., :, None] * m[..., None, :]
    jac[sl, :2] = np.moveaxis(r[..., None] * e, -1, 1)
    jac[sl, 2:] = np.moveaxis((r[..., None, None] * outer).reshape(r.shape + (4,)), -1, 1)
    return r


def _compute(mu, Sigma, chol, alpha, basis, kind, n_angles, n_radial, want_r, want_jac):
    """Shared driver: r (B, N) and/or the Jacobian (B, 6, N)."""
    n_b, n_basis = mu.shape[0], basis.n_basis
    r = np.empty((n_b, n_basis)) if want_r else None
    jac = np.empty((n_b, 6, n_basis)) if want_jac else None
    if kind == "gauss":
        for sl in chunks(n_b, n_basis * (16 if want_jac else 8)):
            if want_jac:
                r_sl = _gauss_jacobian(jac, sl, mu, Sigma, basis)
            else:
                r_sl = _gauss_terms(mu[sl], Sigma[sl], basis)[0]
            if want_r:
                r[sl] = r_sl
        return r, jac
    logdet = 2 * np.log(chol[:, 0, 0] * chol[:, 1, 1])
    rho2 = np.exp(log_rho2(2, alpha, logdet))
    if kind == "closed":
        # the radial work is chunked inside; here only the (b, N, 2, 2) assembly arrays
        for sl in chunks(n_b, n_basis * 32):
            out = _closed_alpha2(mu[sl], chol[sl], rho2[sl], basis, n_angles, want_r, want_jac)
            if want_r:
                r[sl] = out[0]
            if want_jac:
                _assemble_jacobian(jac, sl, mu, chol, *out[-1])
        return r, jac
    per = basis.n_basis * n_angles * 4 * n_radial
    for sl in chunks(n_b, per):
        if want_r:
            r[sl] = _quadrature(mu[sl], chol[sl], rho2[sl], alpha, basis, n_angles, n_radial, False)
        if want_jac:
            moments = _quadrature(mu[sl], chol[sl], rho2[sl], alpha, basis, n_angles, n_radial, True)
            _assemble_jacobian(jac, sl, mu, chol, *moments)
    return r, jac


def rbf_expectation_2d(mu, Sigma, basis, alpha=2.0, *, n_angles=100, n_radial=32, method="auto"):
    r"""Forward pass of 2D continuous attention: :math:`r = \mathbb{E}_p[\psi(t)]`.

    ``p`` is the bivariate beta-Gaussian :class:`MultivariateBetaGaussian`
    ``(mu, Sigma, alpha)`` and :math:`\psi_j = N(\cdot; \mu_j, \Sigma_j)` the Gaussian
    RBFs of ``basis`` [1]_ [2]_.

    - ``alpha = 1``: :math:`r_j = N(\mu; \mu_j, \Sigma + \Sigma_j)`.
    - ``alpha = 2``: whiten the support ellipse to the disk of radius
      :math:`\rho = \sqrt{-2\tau}` (:math:`t = \mu + L x`, :math:`LL^\top = \Sigma`), so
      :math:`r_j = \det L\int_0^{2\pi}\int_0^\rho \frac{\rho^2 - r^2}{2}\,
      \psi_j(\mu + rLu(\varphi))\,r\,dr\,d\varphi`. Along each ray the integrand is a
      cubic times a Gaussian in :math:`r`, integrated in closed form (erfcx or the
      normal cdf, whichever the ray needs, and an integration-by-parts recursion; the
      rays at :math:`\varphi` and :math:`\varphi + \pi` share their quadratic and one
      erfcx); the angle uses the periodic rule
      (``n_angles`` equally spaced angles, endpoint excluded, sum times
      :math:`2\pi/n`), which converges geometrically (about 1e-13 with 100 angles for
      typical widths), unlike the rule with both endpoints.
    - Other ``alpha > 1``: the same polar form with :math:`s = r^2/\rho^2`, whose
      weight is :math:`(1-s)^{1/(\alpha-1)}`: a fixed ``n_radial``-node Gauss-Jacobi
      rule in :math:`s` times the periodic angle rule.

    Parameters
    ----------
    mu : array_like of shape (..., 2)
        Locations of the densities.
    Sigma : array_like of shape (..., 2, 2)
        Scale matrices of the scores (not the covariances); batch shapes broadcast.
    basis : GaussianRBF2D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    n_angles : int, default=100
        Number of angles of the periodic rule (even, >= 4).
    n_radial : int, default=32
        Number of Gauss-Jacobi nodes in the radius (quadrature path only).
    method : {'auto', 'closed', 'quadrature'}, default='auto'
        ``'quadrature'`` forces the Gauss-Jacobi path for ``alpha = 2``.

    Returns
    -------
    ndarray of shape (\*batch_shape, N)
        :math:`r_j = \int p(t)\psi_j(t)\,dt`.

    See Also
    --------
    rbf_expectation_jacobian_2d : The backward pass.
    rbf_expectation_and_jacobian_2d : Both passes at once.

    References
    ----------
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins et al., "Sparse Continuous Distributions and Fenchel-Young
       Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import GaussianRBF2D, rbf_expectation_2d
    >>> basis = GaussianRBF2D([[0.0, 0.0]], np.eye(2))
    >>> rbf_expectation_2d([0.0, 0.0], np.eye(2), basis, alpha=1.0)  # 1 / (4 pi)
    array([0.07957747])
    >>> rbf_expectation_2d([[0.5, 0.5]], 0.01 * np.eye(2), GaussianRBF2D.grid(3, 0.2)).shape
    (1, 9)
    """
    alpha, mu, Sigma, chol, shape, kind = _prepare(mu, Sigma, basis, alpha, n_angles, method)
    r, _ = _compute(mu, Sigma, chol, alpha, basis, kind, int(n_angles), int(n_radial), True, False)
    return r.reshape(shape + (basis.n_basis,))


def rbf_expectation_jacobian_2d(mu, Sigma, basis, alpha=2.0, *, n_angles=100, n_radial=32, method="auto"):
    r"""Backward pass: Jacobian of :math:`r = \mathbb{E}_p[\psi]` w.r.t. the canonical parameters.

    With :math:`\theta = [\Sigma^{-1}\mu, \mathrm{vec}(-\frac12\Sigma^{-1})]` (6 numbers)
    and :math:`\phi(t) = [t_1, t_2, t_1^2, t_1t_2, t_2t_1, t_2^2]`, the Jacobian is the
    :math:`(2-\alpha)`-covariance [1]_ [2]_

    .. math::

        \frac{\partial r}{\partial\theta} = \int p^{2-\alpha}\phi\psi^\top
        - \frac{(\int p^{2-\alpha}\phi)(\int p^{2-\alpha}\psi)^\top}{\int p^{2-\alpha}}.

    ``alpha = 1``: :math:`\mathrm{Cov}_p(\phi,\psi)` in closed form (Gaussian product
    rule). ``alpha = 2``: :math:`|S|\,\mathrm{Cov}_{U(S)}(\phi,\psi)`, radius in
    closed form and periodic angle rule as in :func:`rbf_expectation_2d`. Other
    ``alpha``: the Gauss-Jacobi rule with weight :math:`(1-s)^{(2-\alpha)/(\alpha-1)}`
    and :math:`\int p^{2-\alpha} = \det L\,K^\gamma\pi\rho^2/(\gamma+1)`,
    :math:`K = (\alpha-1)\rho^2/2`, :math:`\gamma = (2-\alpha)/(\alpha-1)`.
    Each entry of :math:`\mathrm{vec}(\Theta)` is a separate coordinate: the
    derivative w.r.t. :math:`\Theta_{12}` alone is the covariance with :math:`t_1t_2`.

    Parameters
    ----------
    mu : array_like of shape (..., 2)
        Locations of the densities.
    Sigma : array_like of shape (..., 2, 2)
        Scale matrices of the scores; batch shapes broadcast.
    basis : GaussianRBF2D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    n_angles : int, default=100
        Number of angles of the periodic rule (even, >= 4).
    n_radial : int, default=32
        Number of Gauss-Jacobi nodes in the radius (quadrature path only).
    method : {'auto', 'closed', 'quadrature'}, default='auto'
        As in :func:`rbf_expectation_2d`.

    Returns
    -------
    ndarray of shape (\*batch_shape, 6, N)
        Rows follow :math:`\theta`.

    See Also
    --------
    rbf_expectation_vjp_2d : Vector-Jacobian product.
    MultivariateBetaGaussian.from_canonical : Densities from canonical parameters.

    References
    ----------
    .. [1] A. F. T. Martins, M. Treviso, A. Farinhas, V. Niculae, M. A. T. Figueiredo
       and P. M. Q. Aguiar, "Sparse and Continuous Attention Mechanisms", NeurIPS 2020.
    .. [2] A. F. T. Martins et al., "Sparse Continuous Distributions and Fenchel-Young
       Losses", JMLR 23(257), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import GaussianRBF2D, rbf_expectation_jacobian_2d
    >>> basis = GaussianRBF2D.grid(3, widths=0.2)
    >>> rbf_expectation_jacobian_2d([0.5, 0.4], 0.02 * np.eye(2), basis).shape
    (6, 9)
    """
    alpha, mu, Sigma, chol, shape, kind = _prepare(mu, Sigma, basis, alpha, n_angles, method)
    _, jac = _compute(mu, Sigma, chol, alpha, basis, kind, int(n_angles), int(n_radial), False, True)
    return jac.reshape(shape + (6, basis.n_basis))


def rbf_expectation_and_jacobian_2d(mu, Sigma, basis, alpha=2.0, *, n_angles=100, n_radial=32, method="auto"):
    r"""Forward and backward passes at once: :math:`r = \mathbb{E}_p[\psi]` and :math:`\partial r/\partial\theta`.

    Equal to ``(rbf_expectation_2d(...), rbf_expectation_jacobian_2d(...))``; for
    ``alpha = 2`` the radial integrals along the rays are computed once for both.

    Parameters
    ----------
    mu : array_like of shape (..., 2)
        Locations of the densities.
    Sigma : array_like of shape (..., 2, 2)
        Scale matrices of the scores; batch shapes broadcast.
    basis : GaussianRBF2D
        The N basis functions.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    n_angles : int, default=100
        Number of angles of the periodic rule (even, >= 4).
    n_radial : int, default=32
        Number of Gauss-Jacobi nodes in the radius (quadrature path only).
    method : {'auto', 'closed', 'quadrature'}, default='auto'
        As in :func:`rbf_expectation_2d`.

    Returns
    -------
    r : ndarray of shape (\*batch_shape, N)
        As :func:`rbf_expectation_2d`.
    jac : ndarray of shape (\*batch_shape, 6, N)
        As :func:`rbf_expectation_jacobian_2d`.

    See Also
    --------
    rbf_expectation_2d, rbf_expectation_jacobian_2d

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import GaussianRBF2D, rbf_expectation_and_jacobian_2d
    >>> basis = GaussianRBF2D.grid(3, widths=0.2)
    >>> r, jac = rbf_expectation_and_jacobian_2d([0.5, 0.4], 0.02 * np.eye(2), basis)
    >>> r.shape, jac.shape
    ((9,), (6, 9))
    """
    alpha, mu, Sigma, chol, shape, kind = _prepare(mu, Sigma, basis, alpha, n_angles, method)
    r, jac = _compute(mu, Sigma, chol, alpha, basis, kind, int(n_angles), int(n_radial), True, True)
    return r.reshape(shape + (basis.n_basis,)), jac.reshape(shape + (6, basis.n_basis))


def rbf_expectation_vjp_2d(mu, Sigma, basis, grad_r, alpha=2.0, **kwargs):
    r"""Vector-Jacobian product :math:`(\partial r/\partial\theta)\,g`: the gradient w.r.t. :math:`\theta`.

    Given :math:`g = \partial\mathcal{L}/\partial r`, returns :math:`J g` with
    :math:`J` from :func:`rbf_expectation_jacobian_2d` [1]_.

    Parameters
    ----------
    mu : array_like of shape (..., 2)
        Locations of the densities.
    Sigma : array_like of shape (..., 2, 2)
        Scale matrices of the scores.
    basis : GaussianRBF2D
        The N basis functions.
    grad_r : array_like of shape (\*batch_shape, N)
        Upstream gradient with respect to ``r``.
    alpha : float, default=2.0
        Entmax parameter, ``alpha >= 1``.
    **kwargs
        Passed to :func:`rbf_expectation_jacobian_2d`.

    Returns
    -------
    ndarray of shape (\*batch_shape, 6)
        Gradient with respect to :math:`\theta`.

    References
    ----------
    .. [1] A. F. T. Martins et al., "Sparse and Continuous Attention Mechanisms",
       NeurIPS 2020; JMLR 23(257), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.continuous import GaussianRBF2D, rbf_expectation_vjp_2d
    >>> basis = GaussianRBF2D.grid(2, widths=0.3)
    >>> rbf_expectation_vjp_2d([0.5, 0.5], 0.05 * np.eye(2), basis, np.ones(4)).shape
    (6,)
    """
    jac = rbf_expectation_jacobian_2d(mu, Sigma, basis, alpha, **kwargs)
    grad_r = as_float_array(grad_r, "grad_r")
    if grad_r.shape != jac.shape[:-2] + (jac.shape[-1],):
        raise ValueError(
            f"grad_r must have shape {jac.shape[:-2] + (jac.shape[-1],)} (batch shape + (N,)), "
            f"got {grad_r.shape}."
        )
    return np.einsum("...kn,...n->...k", jac, grad_r)
