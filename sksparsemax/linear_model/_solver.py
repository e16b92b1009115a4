"""The L-BFGS driver shared by every estimator of this subpackage."""

import sys
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning


def _check_lbfgs_result(result, max_iter, name="L-BFGS", extra_warning_msg=None):
    """Number of iterations of an L-BFGS-B run; warn if it did not converge.

    A small public-API counterpart of scikit-learn's private
    ``sklearn.utils.optimize._check_optimize_result``.

    Parameters
    ----------
    result : scipy.optimize.OptimizeResult
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
        if n_iter >= max_iter:
            msg += (
                f"\nIncrease the number of iterations (max_iter={max_iter}) "
                "or scale the data, e.g. with "
                "sklearn.preprocessing.StandardScaler."
            )
        else:
            msg += (
                "\nThe line search could not make progress, usually because "
                "tol is below what the objective's rounding allows (float32 "
                "data) or because the data are badly scaled."
            )
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
):
    """Minimise a smooth objective with scipy's L-BFGS-B, as scikit-learn does.

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

    Returns
    -------
    w : ndarray of shape (n_coef,)
        The last iterate (float64).
    value : float
        The objective at ``w``.
    n_iter : int
        Number of iterations run.
    """
    callback = None
    if verbose > 0:
        every = max(1, 10 // int(verbose))
        state = {"it": 0}

        def callback(intermediate_result):
            state["it"] += 1
            if state["it"] % every == 0:
                print(
                    f"[{name}] iteration {state['it']:5d}  "
                    f"objective {intermediate_result.fun:.10g}",
                    file=sys.stderr,
                    flush=True,
                )

    result = minimize(
        fun,
        np.asarray(w0, dtype=np.float64),
        args=args,
        method="L-BFGS-B",
        jac=True,
        callback=callback,
        options={
            "maxiter": max_iter,
            "maxls": 50,
            "gtol": tol,
            "ftol": 64 * np.finfo(float).eps,
        },
    )
    if check:
        n_iter = _check_lbfgs_result(result, max_iter, name, extra_warning_msg)
    else:
        n_iter = int(min(result.nit, max_iter))
    if verbose > 0:
        print(
            f"[{name}] stopped after {n_iter} iteration(s), objective "
            f"{result.fun:.10g}, status {result.status}",
            file=sys.stderr,
            flush=True,
        )
    return result.x, float(result.fun), n_iter
