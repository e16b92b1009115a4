"""The solvers shared by every estimator of this subpackage: L-BFGS and Newton-CG."""

import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._lbfgs import lbfgs


def _advice(hit_max_iter, line_search_failed, max_iter):
    """What to do about a non-converged fit: a line for the warning, or ''."""
    if hit_max_iter:
        return (
            f"\nIncrease the number of iterations (max_iter={max_iter}) "
            "or scale the data, e.g. with sklearn.preprocessing.StandardScaler."
        )
    if line_search_failed:
        return (
            "\nThe line search could not make progress, usually because "
            "tol is below what the objective's rounding allows (float32 "
            "data) or because the data are badly scaled."
        )
    return ""


def _check_lbfgs_result(result, max_iter, name="L-BFGS", extra_warning_msg=None):
    """Number of iterations of an L-BFGS run; warn if it did not converge.

    A small public-API counterpart of scikit-learn's private
    ``sklearn.utils.optimize._check_optimize_result``.

    Parameters
    ----------
    result : scipy.optimize.OptimizeResult
        With ``nit``, ``status`` (0 converged, 1 ``max_iter`` reached, 2
        the line search failed) and ``message``.
    max_iter : int
    name : str
        Named in the warning (e.g. the estimator).
    extra_warning_msg : str, default=None
        Appended to the warning.

    Returns
    -------
    n_iter : int
    """
    # scipy may report one iteration more than maxiter (scipy issue #7854).
    n_iter = int(min(result.nit, max_iter))
    if result.status != 0:
        message = result.message
        if isinstance(message, bytes):
            message = message.decode("latin1")
        msg = (
            f"{name}: L-BFGS failed to converge after {n_iter} iteration(s) "
            f"(status={result.status}): {message}."
        )
        msg += _advice(n_iter >= max_iter, result.status == 2, max_iter)
        if extra_warning_msg:
            msg += "\n" + extra_warning_msg
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)
    return n_iter


def minimize_lbfgs(
    fun,
    w0,
    args=(),
    *,
    max_iter,
    tol,
    verbose=0,
    name="L-BFGS",
    check=True,
    extra_warning_msg=None,
    stall=None,
    precondition=None,
):
    """Minimise a smooth objective by L-BFGS, with scikit-learn's stopping rules.

    The iterations are those of :func:`._lbfgs.lbfgs` (unconstrained L-BFGS
    in compact form, weak Wolfe line search); the stopping rules, the
    messages and the warnings are those scikit-learn gives scipy's L-BFGS-B.

    Parameters
    ----------
    fun : callable
        ``fun(w, *args) -> (value, gradient)``, float64 values.
    w0 : ndarray of shape (n_coef,)
        Starting point (float64).
    args : tuple, default=()
        Extra arguments of ``fun``.
    max_iter : int
        Maximum number of L-BFGS iterations.
    tol : float
        Stop when the largest entry of the projected gradient is at most tol
        (scipy's ``gtol``); the relative reduction criterion ``ftol`` is
        ``64 * eps`` like in :class:`~sklearn.linear_model.LogisticRegression`.
    verbose : int, default=0
        If positive, print the iteration and the objective to stderr every
        ``max(1, 10 // verbose)`` iterations, and a final line.
    name : str, default="L-BFGS"
        Prefix of the printed lines and of the warning.
    check : bool, default=True
        Whether to emit a :class:`~sklearn.exceptions.ConvergenceWarning` when
        the run did not converge.
    extra_warning_msg : str, default=None
        Appended to the warning.
    stall : tuple (window, rtol), default=None
        For objectives that are not differentiable at their minimiser (the
        top-k loss), where the gradient criterion may never be met: also stop,
        as converged, once the objective has decreased by at most ``rtol``
        (relative to its value) over the last ``window`` iterations.
    precondition : object, default=None
        A linear change of variables ``w = precondition.coef(v)`` (with
        ``variables``, its inverse, and ``gradient_and_max``, the chain rule
        and the largest entry of both gradients), such as
        :class:`._preconditioner.GramPreconditioner`. L-BFGS then runs on
        ``v`` and stops once the largest entry of the gradient is at most
        ``tol`` with respect to both ``w`` and ``v``; ``w`` is returned.

    Returns
    -------
    w : ndarray of shape (n_coef,)
        The last iterate (float64).
    value : float
        The objective at ``w``.
    n_iter : int
        Number of iterations run.
    """
    every = max(1, 10 // int(verbose)) if verbose > 0 else 0
    state = {"it": 0, "history": [], "stalled": False, "converged": False}
    gtol = tol
    w0 = np.asarray(w0, dtype=np.float64)
    initial = None
    if precondition is not None:
        fun, w0, last = _preconditioned(fun, w0, precondition)
        gtol = None  # the solver would test the gradient in v only: `last` tests both
        initial = fun(w0, *args)
        if last() <= tol:  # already converged (a warm start)
            return precondition.coef(w0), float(initial[0]), 0

    def callback(intermediate_result):
        state["it"] += 1
        if precondition is not None and last() <= tol:
            state["converged"] = True
            raise StopIteration
        if stall is not None:
            window, rtol = stall
            history = state["history"]
            history.append(float(intermediate_result.fun))
            if len(history) > window:
                old = history.pop(0)
                if old - history[-1] <= rtol * abs(history[-1]):
                    state["stalled"] = True
                    raise StopIteration
        if every:
            if state["it"] % every == 0:
                print(
                    f"[{name}] iteration {state['it']:5d}  "
                    f"objective {intermediate_result.fun:.10g}",
                    file=sys.stderr,
                    flush=True,
                )

    result = lbfgs(
        lambda v: fun(v, *args), w0, max_iter=max_iter, gtol=gtol,
        ftol=64 * np.finfo(float).eps, max_ls=50, callback=callback, initial=initial,
        kink_tol=tol if stall is not None else None,
    )
    stopped = state["stalled"] or state["converged"]
    if check and not stopped:
        n_iter = _check_lbfgs_result(result, max_iter, name, extra_warning_msg)
    else:
        n_iter = int(min(state["it"] if stopped else result.nit, max_iter))
    w = result.x if precondition is None else precondition.coef(result.x)
    if verbose > 0:
        why = (
            "objective stalled" if state["stalled"]
            else "converged" if state["converged"]
            else f"status {result.status}"
        )
        print(
            f"[{name}] stopped after {n_iter} iteration(s), objective "
            f"{result.fun:.10g}, {why}",
            file=sys.stderr,
            flush=True,
        )
    return w, float(result.fun), n_iter


def _preconditioned(fun, w0, precondition):
    """``fun`` of the variables ``v``, ``v0``, and ``last()``.

    ``last()`` returns the largest entry of the gradients with respect to
    ``w`` and to ``v`` (the larger of the two) at the latest evaluation:
    after every iteration of :func:`._lbfgs.lbfgs` that is the new iterate
    (the line search ends at the point it accepts).
    """
    state = {"gmax": np.inf}

    def fun_v(v, *args):
        f, g = fun(precondition.coef(v), *args)
        gv, state["gmax"] = precondition.gradient_and_max(g)
        return f, gv

    def last():
        return state["gmax"]

    return fun_v, precondition.variables(w0), last


def _truncated_cg(hessp, grad, max_inner, rtol):
    """Approximately solve ``H x = -grad`` by conjugate gradients from 0.

    Stops when the residual's 1-norm is at most ``rtol * ||grad||_1`` (the
    forcing term of an inexact Newton method, as in scikit-learn's
    ``_newton_cg``), after ``max_inner`` products with ``H``, or on
    non-positive curvature (then the last iterate, or ``-grad`` at the first
    step, is returned: a descent direction either way).

    Returns
    -------
    x : ndarray of shape (n_coef,)
    n_products : int
        Number of Hessian-vector products computed.
    """
    x = np.zeros_like(grad)
    r = -grad  # residual -grad - H x at x = 0 (a new array)
    p = r.copy()
    rr = float(np.dot(r, r))
    target = rtol * float(np.sum(np.abs(grad)))
    eps = np.finfo(np.float64).eps
    n_products = 0
    while n_products < max_inner:
        if float(np.sum(np.abs(r))) <= target:
            break
        Hp = hessp(p)
        n_products += 1
        curv = float(np.dot(p, Hp))
        if curv <= 16 * eps * float(np.dot(p, p)):
            # Flat or negative curvature along p (the objective is convex, so
            # only rounding or l2 = 0 get here): stop with what we have.
            if n_products == 1:
                x = r.copy() if rr > 0 else x
            break
        alpha = rr / curv
        x += alpha * p
        r -= alpha * Hp
        rr_new = float(np.dot(r, r))
        p *= rr_new / rr
        p += r
        rr = rr_new
    return x, n_products


def minimize_newton_cg(
    grad_hess,
    func,
    w0,
    args=(),
    *,
    max_iter,
    tol,
    max_inner=200,
    max_ls=40,
    ftol=64 * np.finfo(np.float64).eps,
    f_rtol=None,
    stall_step=None,
    return_status=False,
    verbose=0,
    name="Newton-CG",
    check=True,
    extra_warning_msg=None,
):
    r"""Minimise a convex objective by inexact Newton: truncated CG + Armijo.

    Each iteration solves the Newton system :math:`H d = -g` approximately by
    conjugate gradients, using only Hessian-vector products, to the relative
    residual :math:`\eta = \min(0.5, \sqrt{\|g\|_1})` in 1-norm (a forcing
    term that gives superlinear convergence near the optimum, as
    scikit-learn's ``_newton_cg``), then backtracks from the full step
    :math:`t = 1` until the Armijo condition
    :math:`f(w + t d) \le f(w) + 10^{-4}\, t\, g^\top d` holds. For the
    piecewise twice differentiable losses (sparsemax) :math:`H` is the
    generalized Hessian at :math:`w`; the line search makes the method
    globally convergent.

    Parameters
    ----------
    grad_hess : callable
        ``grad_hess(w, *args) -> (value, gradient, hessp)`` with
        ``hessp(v)`` the Hessian at ``w`` times ``v``; float64.
    func : callable
        ``func(w, *args) -> value``, for the line search's trial points.
    w0 : ndarray of shape (n_coef,)
        Starting point.
    args : tuple, default=()
        Extra arguments of ``grad_hess`` and ``func``.
    max_iter : int
        Maximum number of Newton iterations.
    tol : float
        Stop when the largest entry of the gradient is at most ``tol`` (the
        criterion of L-BFGS's ``gtol`` and of scikit-learn's newton-cg).
    max_inner : int, default=200
        Maximum number of CG iterations (Hessian-vector products) per Newton
        iteration.
    max_ls : int, default=40
        Maximum number of step halvings of the line search.
    ftol : float, default=64 * eps
        Also stop (as converged, like L-BFGS-B's ``ftol``) when an iteration
        lowers the objective by at most ``ftol * max(|f|, 1)``.
    f_rtol : float, default=None
        Relative rounding level of the objective (default ``64 * eps`` of
        float64). When no step passes the Armijo test but the full step
        changes the objective by no more than this (relative) and lowers
        the gradient's 1-norm, the step is taken: progress hidden by
        rounding, as in scikit-learn's line search.
    stall_step : float, default=None
        If given, stop (``status`` 3, "stalled") after two consecutive
        iterations whose line search had to cut the step to at most
        ``stall_step``: on a kink of a piecewise-smooth loss (top-k) the
        Newton direction, blind to the kink, then makes little progress and
        a first-order method finishes better. None never stops for that.
    return_status : bool, default=False
        Also return the status: 0 converged, 1 ``max_iter`` reached, 2 the
        line search failed, 3 stalled.
    verbose : int, default=0
        If positive, print each iteration's objective, gradient max-norm, CG
        products and step to stderr (every ``max(1, 10 // verbose)``-th
        iteration), and a final line.
    name : str, default="Newton-CG"
        Prefix of the printed lines and of the warning.
    check : bool, default=True
        Whether to emit a :class:`~sklearn.exceptions.ConvergenceWarning` when
        the run did not converge.
    extra_warning_msg : str, default=None
        Appended to the warning.

    Returns
    -------
    w : ndarray of shape (n_coef,)
        The last iterate (float64).
    value : float
        The objective at ``w``.
    n_iter : int
        Number of Newton iterations run.
    status : int
        Only with ``return_status``.
    """
    if f_rtol is None:
        f_rtol = 64 * np.finfo(np.float64).eps
    w = np.array(w0, dtype=np.float64, copy=True)
    f, g, hessp = grad_hess(w, *args)
    every = max(1, 10 // int(verbose)) if verbose > 0 else 0
    n_iter = n_products = n_short = 0
    status, message = 1, "maximum number of iterations reached"
    while True:
        gmax = float(np.max(np.abs(g))) if g.size else 0.0
        if gmax <= tol:
            status, message = 0, "max |gradient| <= tol"
            break
        if n_iter >= max_iter:
            break
        g_l1 = float(np.sum(np.abs(g)))
        d, n_cg = _truncated_cg(hessp, g, max_inner, min(0.5, float(np.sqrt(g_l1))))
        n_products += n_cg
        del hessp
        f_old = f
        step = _armijo(grad_hess, func, args, w, f, g, d, max_ls, f_rtol)
        if step is None:
            status, message = 2, (
                "the line search could not decrease the objective along the "
                "Newton direction"
            )
            break
        w, f, g, hessp, t = step
        del step  # else it keeps the previous iterate's hessp (an (n, K) array) alive
        n_iter += 1
        if every and n_iter % every == 0:
            print(
                f"[{name}] iteration {n_iter:5d}  objective {f:.10g}  "
                f"max|grad| {float(np.max(np.abs(g))):.3g}  CG products {n_cg:4d}  "
                f"step {t:.3g}",
                file=sys.stderr,
                flush=True,
            )
        gmax = float(np.max(np.abs(g))) if g.size else 0.0
        if (f_old - f) <= ftol * max(abs(f_old), abs(f), 1.0):
            # No relative progress left (L-BFGS-B's ftol criterion): kinks of
            # a piecewise-smooth loss can keep the gradient from vanishing.
            status, message = 0, "relative reduction of the objective <= ftol"
            break
        n_short = n_short + 1 if stall_step is not None and t <= stall_step else 0
        if n_short >= 2:
            status, message = 3, "stalled: the line search keeps cutting the step"
            break
    if check and status != 0:
        msg = (
            f"{name}: Newton-CG failed to converge after {n_iter} iteration(s) "
            f"(status={status}): {message}; max |gradient| = {gmax:.3g} > "
            f"tol = {tol:.3g}."
        )
        msg += _advice(status == 1, status == 2, max_iter)
        if extra_warning_msg:
            msg += "\n" + extra_warning_msg
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)
    if verbose > 0:
        print(
            f"[{name}] stopped after {n_iter} Newton iteration(s) "
            f"({n_products} Hessian-vector products), objective {f:.10g}, "
            f"status {status}",
            file=sys.stderr,
            flush=True,
        )
    if return_status:
        return w, float(f), n_iter, status
    return w, float(f), n_iter


def _armijo(grad_hess, func, args, w, f, g, d, max_ls, f_rtol):
    """Backtracking from the full Newton step ``d`` until the Armijo condition holds.

    Returns ``(w, f, g, hessp, t)`` at the accepted point (step ``t``), or
    None if no step of the ``max_ls`` halvings lowers the objective. A full
    step whose change of the objective is below its rounding (``f_rtol``)
    is taken when it lowers the gradient's 1-norm: progress hidden by
    rounding, as in scikit-learn's line search.
    """
    slope = float(np.dot(g, d))
    if not slope < 0:  # not a descent direction (rounding): steepest descent
        d = -g
        slope = -float(np.dot(g, g))
    t = 1.0
    for _ in range(max_ls):
        w_t = w + t * d
        f_t = func(w_t, *args)
        if f_t <= f + 1e-4 * t * slope:
            return (w_t, *grad_hess(w_t, *args), t)
        if t == 1.0 and abs(f_t - f) <= f_rtol * abs(f):
            f_t2, g_t, hessp_t = grad_hess(w_t, *args)
            if float(np.sum(np.abs(g_t))) < float(np.sum(np.abs(g))):
                return w_t, f_t2, g_t, hessp_t, t
            del hessp_t
        t *= 0.5
    return None
