r"""Unconstrained limited-memory BFGS in compact form, for millions of coefficients.

The estimators fit unconstrained objectives, so L-BFGS-B's machinery for
bounds (the generalized Cauchy point, the subspace minimisation and their
passes over the coefficients at every step) is pure overhead for them; with
:math:`10^6` coefficients (20 classes times 50,000 features) it costs as
much as a large part of the loss-and-gradient evaluations it steers. This
solver keeps what the estimators need and makes each iteration as cheap as
the memory traffic of the curvature pairs allows:

- The direction is the compact representation of the inverse Hessian
  approximation (Byrd, Nocedal and Schnabel, 1994), with
  :math:`H_0 = \gamma I`, :math:`\gamma = s^\top y / y^\top y` of the
  latest pair:

  .. math::

      H g = \gamma g + S p + \gamma Y q, \quad
      q = -R^{-1} S^\top g, \quad
      p = R^{-\top}\big((D + \gamma Y^\top Y)(-q) - \gamma Y^\top g\big),

  with :math:`R` the upper triangle of :math:`S^\top Y` and :math:`D` its
  diagonal (the pairs in chronological order). The pairs are stored as the
  rows of one array ``B``, so :math:`S^\top g, Y^\top g` is one
  matrix-vector product and :math:`Sp + \gamma Yq` another: two passes over
  the pairs per iteration, against one per pair per loop in the two-loop
  recursion.
- The Gram matrix of the pairs, :math:`B B^\top`, is kept up to date
  without touching the pairs again ("vector-free" L-BFGS, Chen et al., 2014):
  the new pair's products with the stored ones follow from products already
  computed (:math:`B s = t\, B d` with :math:`B d = -\gamma B g - (B B^\top)
  c`, and :math:`B y = B g_{+} - B g`).
- The step satisfies the weak Wolfe conditions (sufficient decrease
  :math:`c_1 = 10^{-4}`, curvature :math:`c_2 = 0.9`), found by bracketing
  with safeguarded cubic interpolation. The curvature condition keeps
  :math:`s^\top y > 0` for every convex objective; the weak form (rather
  than the strong one) is what keeps BFGS working on objectives with kinks
  such as the top-k loss (Lewis and Overton, 2013), where the directional
  derivative jumps across a kink and its absolute value may never be small.
- With the numba backend and many coefficients (:data:`MIN_FUSED_COEF`),
  the operations on coefficient vectors around the two products with the
  pairs (the direction's update and slope, the trial point, the new pair
  and its dot products) are fused passes
  (:mod:`sksparsemax.transforms._numba_vectors`); the products stay with
  BLAS.
- Stopping rules are those scikit-learn gives L-BFGS-B: the largest entry of
  the gradient at most ``gtol``, or a relative decrease
  :math:`(f_k - f_{k+1}) / \max(|f_k|, |f_{k+1}|, 1)` at most ``ftol``.

References
----------
R. H. Byrd, J. Nocedal and R. B. Schnabel, "Representations of quasi-Newton
matrices and their use in limited memory methods", Mathematical Programming
63, 1994.

W. Chen, Z. Wang and J. Zhou, "Large-scale L-BFGS using MapReduce", NeurIPS
2014.

A. S. Lewis and M. L. Overton, "Nonsmooth optimization via quasi-Newton
methods", Mathematical Programming 141, 2013.
"""

import numpy as np
from scipy.linalg import get_blas_funcs, solve_triangular
from scipy.optimize import OptimizeResult, nnls

from ..transforms import _backend

#: Status codes, as scipy's L-BFGS-B reports them.
CONVERGED, MAX_ITER, LINE_SEARCH_FAILED = 0, 1, 2

_C1, _C2 = 1e-4, 0.9

#: Coefficients from which the numba backend's fused vector passes
#: (:mod:`sksparsemax.transforms._numba_vectors`) replace the NumPy
#: operations: where a pass over a vector costs a millisecond, not where
#: the compilation on first use would be noticed.
MIN_FUSED_COEF = 2**17

# y += a x in place, one pass (NumPy's `y += a * x` makes a temporary).
_axpy = get_blas_funcs("axpy", dtype=np.float64)


def _max_abs(v):
    """``max |v|`` without a temporary array."""
    return max(float(v.max()), -float(v.min())) if v.size else 0.0


def _fused_kernels(n):
    """The compiled kernels for vectors of ``n`` entries, or None (NumPy)."""
    return _backend.kernels() if n >= MIN_FUSED_COEF else None


def _trial_point(x, d, t, kernels):
    """``x + t d`` (a new array)."""
    if kernels is None:
        x_t = d * t
        x_t += x
        return x_t
    x_t = np.empty_like(x)
    kernels.trial_point(x, d, t, x_t)
    return x_t


class _Pairs:
    """The last ``m`` curvature pairs (rows of ``B``), their Gram matrix, ``B g``.

    Pair ``j`` of the circular store occupies rows ``2 j`` (``s``) and
    ``2 j + 1`` (``y``) of ``B``, so the filled rows are a prefix of ``B``.
    ``kernels``: the fused passes of the numba backend, or None.
    """

    def __init__(self, m, n, kernels=None):
        self.m = m
        self.kernels = kernels
        # The whole history at once, as L-BFGS-B's workspace: zeros (pages the
        # kernel zeroes on first touch), so a short fit commits only the rows
        # it fills.
        self.B = np.zeros((2 * m, n))
        self.G = np.zeros((2 * m, 2 * m))
        self.order = []  # slots, oldest first
        self.gamma = 1.0
        # The objective at the start of each stored pair, and how many of the
        # latest pairs join up into a path ending at the current iterate (a
        # skipped pair breaks it): what the kink certificate needs.
        self.f_start = np.zeros(m)
        self.n_chain = 0

    @property
    def rows(self):
        return 2 * len(self.order)

    def times(self, v):
        """``B v`` over the filled rows."""
        return self.B[: self.rows] @ v

    def direction(self, g, Bg):
        """``d = -H g``, ``B d`` and the slope ``g^T d`` from ``g`` and ``B g``."""
        k = len(self.order)
        if k == 0:
            return -g, np.zeros(0), -float(g @ g)
        slots = np.asarray(self.order)
        s_rows, y_rows = 2 * slots, 2 * slots + 1
        SY = self.G[np.ix_(s_rows, y_rows)]
        R = np.triu(SY)
        YY = self.G[np.ix_(y_rows, y_rows)]
        gamma = self.gamma
        q = -solve_triangular(R, Bg[s_rows], lower=False)
        inner = np.diag(SY) * (-q) + gamma * (YY @ (-q)) - gamma * Bg[y_rows]
        p = solve_triangular(R, inner, lower=False, trans="T")
        c = np.zeros(self.rows)
        c[s_rows] = -p
        c[y_rows] = -gamma * q
        Bd = self.G[: self.rows, : self.rows] @ c - gamma * Bg
        d = c @ self.B[: self.rows]  # -(S p + gamma Y q)
        if self.kernels is not None:
            return d, Bd, float(self.kernels.direction_and_slope(d, g, gamma))
        d = _axpy(g, d, a=-gamma)  # in place
        return d, Bd, float(g @ d)

    def add(self, d, t, Bd, g, g_new, Bg, dg, dg_new, f):
        """Store the pair ``s = t d``, ``y = g_new - g``; return ``B g_new``.

        ``Bd`` and ``Bg`` are the products with the stored rows, ``dg`` and
        ``dg_new`` the slopes ``d^T g`` and ``d^T g_new`` the line search
        computed, ``f`` the objective at the pair's start. From them and
        ``B g_new`` (the one pass over the pairs) follow ``s^T y``,
        ``s^T g_new`` and the new rows' products with the stored ones. A pair
        whose curvature ``s^T y`` is not safely positive is not stored
        (L-BFGS-B's rule).
        """
        sy = t * (dg_new - dg)
        old_rows = self.rows
        full = len(self.order) == self.m
        slot = self.order[0] if full else len(self.order)
        r_s, r_y = 2 * slot, 2 * slot + 1
        Bg_new = self.times(g_new)
        if self.kernels is not None:
            # One pass for the new pair and its dot products (s is written
            # though the pair may be refused: then the slot is outside the
            # filled rows, or the memory is reset).
            yy, yg, dd = self.kernels.store_pair(g_new, g, d, t, self.B[r_y], self.B[r_s])
            y = None
        else:
            y = np.subtract(g_new, g, out=self.B[r_y])
            yy = float(y @ y)
        if not sy > np.finfo(np.float64).eps * yy:
            self.n_chain = 0
            if full:  # y overwrote the oldest pair: start the memory afresh
                self.reset()
                return np.zeros(0)
            return Bg_new
        if full:
            self.order.pop(0)
        if y is not None:
            np.multiply(d, t, out=self.B[r_s])
            dd, yg = float(d @ d), float(y @ g_new)
        new = np.empty(max(old_rows, 2 * slot + 2))
        new[:old_rows] = Bg_new
        # The new rows' products with the stored rows (the replaced slot's
        # entries are overwritten below).
        Bs, By = t * Bd, Bg_new - Bg
        self.G[r_s, :old_rows] = self.G[:old_rows, r_s] = Bs
        self.G[r_y, :old_rows] = self.G[:old_rows, r_y] = By
        self.G[r_s, r_s] = t * t * dd
        self.G[r_s, r_y] = self.G[r_y, r_s] = sy
        self.G[r_y, r_y] = yy
        new[r_s] = t * dg_new
        new[r_y] = yg
        self.order.append(slot)
        self.f_start[slot] = f
        self.n_chain = min(self.n_chain + 1, len(self.order))
        self.gamma = sy / yy
        return new[: self.rows]

    def reset(self):
        self.order = []
        self.gamma = 1.0
        self.n_chain = 0

    def kink_certificate(self, g, f, Bg, tol):
        r"""Whether the latest iterate is optimal to ``tol`` by the recent gradients.

        At a kink the gradient does not vanish, but a convex combination of
        the gradients :math:`g_j` at the iterates :math:`x_j` of the latest
        steps may. For a convex objective each :math:`g_j` is an
        :math:`\epsilon_j`-subgradient at the current :math:`x`, with
        :math:`\epsilon_j = f(x) - f(x_j) - g_j^\top (x - x_j) \ge 0`, so
        :math:`v = \sum_j \lambda_j g_j` (:math:`\lambda` in the simplex)
        satisfies :math:`f(z) \ge f(x) + v^\top (z - x) - \sum_j
        \lambda_j \epsilon_j` for every :math:`z` (the stopping test of
        bundle methods). The test passes when :math:`\max |v| \le` ``tol``
        and :math:`\sum_j \lambda_j \epsilon_j \le` ``tol`` ``|f|``
        (relative, as the stall rule), with :math:`\lambda` the smallest such combination. Its Gram matrix
        and the :math:`\epsilon_j` follow from the stored pairs' Gram matrix
        and ``B g`` (since :math:`g_j = g - \sum_{i \ge j} y_i` and
        :math:`x - x_j = \sum_{i \ge j} s_i`); only a passing test reads the
        pairs once more, to form :math:`v`.
        """
        J = self.n_chain
        if J == 0:
            return False
        slots = np.asarray(self.order[-J:])
        s_rows, y_rows = 2 * slots, 2 * slots + 1
        M = np.triu(np.ones((J + 1, J)))  # U_j = sum_{i >= j} y_i = (M Y)_j
        MYg, MSg = M @ Bg[y_rows], M @ Bg[s_rows]
        gg = float(g @ g)
        Q = gg - MYg[:, None] - MYg[None, :] + M @ self.G[np.ix_(y_rows, y_rows)] @ M.T
        UT = np.einsum("ji,il,jl->j", M, self.G[np.ix_(y_rows, s_rows)], M)
        f_j = np.append(self.f_start[slots], f)
        eps_j = np.maximum(f - f_j - (MSg - UT), 0.0)
        lam = _min_norm_in_simplex(Q)
        v2 = max(float(lam @ Q @ lam), 0.0)
        if np.sqrt(v2 / g.size) > tol or float(lam @ eps_j) > tol * abs(f):
            return False  # max |v| >= ||v||_2 / sqrt(n): the test cannot pass
        c = np.zeros(self.rows)
        c[y_rows] = M.T @ lam
        v = g - c @ self.B[: self.rows]
        return _max_abs(v) <= tol


def _min_norm_in_simplex(Q):
    r"""``argmin lam^T Q lam`` over the probability simplex (``Q`` PSD, small).

    With :math:`A^\top A = Q`, minimising :math:`\|A\mu\|^2 +
    (1^\top \mu - 1)^2` over :math:`\mu \ge 0` is exact: for :math:`\mu =
    s \lambda` the best :math:`s` gives :math:`\|A\lambda\|^2 / (1 +
    \|A\lambda\|^2)`, increasing in :math:`\|A\lambda\|`, so
    :math:`\lambda = \mu / 1^\top\mu` with :math:`\mu` from one
    non-negative least squares solve (Lawson and Hanson's active set).
    """
    n = Q.shape[0]
    w, V = np.linalg.eigh(Q)
    A = np.sqrt(np.clip(w, 0.0, None))[:, None] * V.T
    A /= max(float(np.max(np.abs(A))), 1e-300)  # lam does not depend on the scale
    target = np.zeros(n + 1)
    target[-1] = 1.0
    mu, _ = nnls(np.vstack([A, np.ones(n)]), target)
    total = float(mu.sum())
    if not total > 0:
        mu, total = np.eye(n)[-1], 1.0
    return mu / total


def _cubic_step(t_lo, f_lo, d_lo, t_hi, f_hi, d_hi):
    """Minimiser of the cubic through two points with slopes, kept inside the
    middle 80% of the bracket (bisection where the cubic has no minimiser)."""
    lo, hi = min(t_lo, t_hi), max(t_lo, t_hi)
    d1 = d_lo + d_hi - 3 * (f_lo - f_hi) / (t_lo - t_hi)
    disc = d1 * d1 - d_lo * d_hi
    t = 0.5 * (lo + hi)
    if disc >= 0 and np.isfinite(disc):
        d2 = np.sign(t_hi - t_lo) * np.sqrt(disc)
        denom = d_hi - d_lo + 2 * d2
        if denom != 0:
            t = t_hi - (t_hi - t_lo) * (d_hi + d2 - d1) / denom
    margin = 0.1 * (hi - lo)
    if not (lo + margin <= t <= hi - margin):
        t = min(max(t, lo + margin), hi - margin) if np.isfinite(t) else 0.5 * (lo + hi)
    return t


def _wolfe_step(fun, x, f, d, slope, t, max_ls, kernels=None):
    """A step ``t`` along ``d`` that satisfies the weak Wolfe conditions.

    Returns ``(t, x_t, f_t, g_t, d_t, n_evaluations)`` (``d_t`` the slope
    ``g_t^T d``), with ``x_t`` None when no
    step was found within ``max_ls`` evaluations. Trial points whose
    objective is not finite count as too long. ``kernels``: as
    :class:`_Pairs`'.
    """
    lo, f_lo, d_lo = 0.0, f, slope
    hi = f_hi = d_hi = None
    for n_eval in range(1, max_ls + 1):
        x_t = _trial_point(x, d, t, kernels)
        f_t, g_t = fun(x_t)
        f_t = float(f_t)
        d_t = float(g_t @ d) if np.isfinite(f_t) else np.inf
        if not np.isfinite(f_t) or f_t > f + _C1 * t * slope or (hi is None and f_t >= f_lo and lo > 0):
            hi, f_hi, d_hi = t, f_t, d_t
        elif d_t < _C2 * slope:
            lo, f_lo, d_lo = t, f_t, d_t  # too short: the slope is still steep
        else:
            return t, x_t, f_t, g_t, d_t, n_eval
        del x_t, g_t
        if hi is None:
            t *= 4.0
        elif np.isfinite(f_hi) and np.isfinite(d_hi):
            t = _cubic_step(lo, f_lo, d_lo, hi, f_hi, d_hi)
        else:
            t = 0.5 * (lo + hi)
        if hi is not None and hi - lo <= 1e-16 * max(hi, 1.0):
            break
    return t, None, None, None, None, max_ls


def lbfgs(fun, x0, *, max_iter, gtol, ftol, m=10, max_ls=50, callback=None, initial=None,
          kink_tol=None):
    """Minimise ``fun`` (value and gradient) by L-BFGS; see the module docstring.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (value, gradient)``, the gradient a float64 array shaped
        like ``x``.
    x0 : ndarray of shape (n,)
        Starting point.
    max_iter : int
        Maximum number of iterations (accepted steps).
    gtol : float or None
        Stop when the largest entry of the gradient is at most ``gtol``;
        None: no such test (the caller's ``callback`` tests the gradient).
    ftol : float
        Stop when an iteration lowers the objective by at most
        ``ftol * max(|f_k|, |f_{k+1}|, 1)``.
    m : int, default=10
        Number of curvature pairs kept (scipy's ``maxcor``).
    max_ls : int, default=50
        Maximum number of evaluations per line search.
    callback : callable, default=None
        Called after every iteration with an
        :class:`~scipy.optimize.OptimizeResult` holding ``x`` and ``fun``;
        raising :class:`StopIteration` ends the run (status 0).
    initial : tuple (value, gradient), default=None
        ``fun(x0)``, when the caller has it already.
    kink_tol : float, default=None
        For convex objectives with kinks, where the gradient need not vanish
        at the minimiser: also stop when a convex combination of the
        gradients of the latest iterates certifies optimality to this
        tolerance (:meth:`_Pairs.kink_certificate`). None: no such test.

    Returns
    -------
    result : scipy.optimize.OptimizeResult
        ``x``, ``fun``, ``jac``, ``nit`` (iterations), ``nfev``,
        ``status`` (0 converged or stopped by ``callback``, 1 ``max_iter``
        reached, 2 the line search failed), ``message``, ``success``.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.linear_model._lbfgs import lbfgs
    >>> A = np.diag([1.0, 10.0, 100.0]); b = np.ones(3)
    >>> res = lbfgs(lambda x: (0.5 * x @ A @ x - b @ x, A @ x - b), np.zeros(3),
    ...             max_iter=100, gtol=1e-10, ftol=0.0)
    >>> np.allclose(res.x, [1.0, 0.1, 0.01]), res.status
    (True, 0)
    """
    x = np.array(x0, dtype=np.float64, copy=True).ravel()
    f, g = fun(x) if initial is None else initial
    f, nfev, nit = float(f), 1 if initial is None else 0, 0
    kernels = _fused_kernels(x.size)
    pairs = _Pairs(m, x.size, kernels)
    Bg = np.zeros(0)

    def small_gradient():
        return gtol is not None and _max_abs(g) <= gtol

    def done(status, message):
        return OptimizeResult(x=x, fun=f, jac=g, nit=nit, nfev=nfev, status=status,
                              message=message, success=status == CONVERGED)

    if small_gradient():
        return done(CONVERGED, "max |gradient| <= gtol")
    while True:
        if nit >= max_iter:
            return done(MAX_ITER, "maximum number of iterations reached")
        d, Bd, slope = pairs.direction(g, Bg)
        if not slope < 0:  # rounding spoilt the direction: steepest descent
            pairs.reset()
            d, Bd, Bg = -g, np.zeros(0), np.zeros(0)
            slope = -float(g @ g)
        t0 = 1.0 if pairs.order else 1.0 / max(float(np.sqrt(g @ g)), 1e-300)
        t, x_new, f_new, g_new, slope_new, n_eval = _wolfe_step(fun, x, f, d, slope, t0, max_ls,
                                                                   kernels)
        nfev += n_eval
        if x_new is None:
            if not pairs.order:
                return done(LINE_SEARCH_FAILED, "the line search found no step "
                            "satisfying the Wolfe conditions")
            pairs.reset()  # retry once along the steepest descent
            Bg = np.zeros(0)
            continue
        Bg = pairs.add(d, t, Bd, g, g_new, Bg, slope, slope_new, f)
        del d
        f_old, x, f, g = f, x_new, f_new, g_new
        nit += 1
        if callback is not None:
            try:
                callback(OptimizeResult(x=x, fun=f))
            except StopIteration:
                return done(CONVERGED, "stopped by the callback")
        if small_gradient():
            return done(CONVERGED, "max |gradient| <= gtol")
        if f_old - f <= ftol * max(abs(f_old), abs(f), 1.0):
            return done(CONVERGED, "relative reduction of the objective <= ftol")
        if kink_tol is not None and pairs.kink_certificate(g, f, Bg, kink_tol):
            return done(CONVERGED, "a convex combination of the latest gradients "
                        "certifies optimality to kink_tol")
