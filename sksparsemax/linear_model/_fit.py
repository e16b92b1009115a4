"""Solver policy: how the estimators turn a linear loss into fitted coefficients.

Everything that decides *how* a fit runs lives here, so that the estimators
only say *what* to fit:

- the problem's shape: wide data solved exactly in the row space of ``X``
  (:class:`._row_space.RowSpaceReduction`), empty sparse columns left out
  (their optimal weight is 0);
- L-BFGS's change of variables (:func:`._preconditioner.gram_preconditioner_path`),
  with the intercepts scaled by the loss's curvature
  (:mod:`._intercept_scaling`);
- the safeguards of a loss with kinks (``loss.is_smooth(n_classes)`` False,
  such as top-k): a short L-BFGS warm-up on the softmax loss (the
  intercept-only start is a tie, a kink), the objective-stall stop of L-BFGS,
  and for Newton-CG a hand-over to L-BFGS once its steps stall on a kink.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..losses import get_loss
from ..transforms import backend
from ._intercept_scaling import intercept_scales
from ._preconditioner import gram_preconditioner_path
from ._row_space import row_space_reduction
from ._solver import minimize_lbfgs, minimize_newton_cg

#: With a loss with kinks, L-BFGS also stops when the objective decreased by
#: at most ``tol`` (relative) over this many iterations.
STALL_WINDOW = 10

#: L-BFGS iterations on the softmax loss that start a loss with kinks off the
#: all-equal tie of the intercept-only start.
SOFTMAX_WARMUP_ITER = 5

#: With solver="newton-cg" and a loss with kinks, Newton stops as stalled when
#: two consecutive line searches cut the step to this or less, and L-BFGS
#: finishes.
NEWTON_STALL_STEP = 1.0 / 16

#: Sparse ``X`` whose empty columns are at least this fraction of all columns
#: is fitted on its non-empty columns only (see :func:`_active_features`).
_MIN_EMPTY_FRACTION = 0.05


@dataclass
class FitSettings:
    """What the user chose for a fit: solver, stopping rule, messages."""

    solver: str
    max_iter: int
    tol: float
    verbose: int
    name: str


@dataclass
class SolverPolicy:
    """The safeguards of a fit, derived from the loss (:func:`policy_for`)."""

    warmup_iter: int = 0
    stall_window: int = None
    newton_stall_step: float = None
    hint: str = None


def policy_for(loss, n_classes, warm_started):
    """The :class:`SolverPolicy` of ``loss`` with ``n_classes`` classes.

    A smooth loss gets none; a loss with kinks gets the warm-up (unless the
    fit warm starts), the stall stop and the Newton hand-over.
    """
    if loss.is_smooth(n_classes):
        return SolverPolicy()
    return SolverPolicy(
        warmup_iter=0 if warm_started else SOFTMAX_WARMUP_ITER,
        stall_window=STALL_WINDOW,
        newton_stall_step=NEWTON_STALL_STEP,
        hint=(
            f"The loss {loss!r} is not differentiable everywhere ({n_classes} "
            "classes; for top-k, where the k-th and (k+1)-th scores of a "
            "sample tie); at such an optimum the gradient criterion (tol) may "
            "never be met although the objective has stopped decreasing."
        ),
    )


def _active_features(X):
    """Mask of the columns of a sparse ``X`` that have a stored entry, or None.

    The weights of a feature that is zero in every sample get the gradient
    ``l2 * w`` only, so their optimum is 0 and, from 0, L-BFGS never moves
    them (their entries of the gradient, of every step and of every update
    pair are 0, so the iterates of the other coefficients are those of the
    reduced problem). Fitting on the non-empty columns only is therefore
    exact; it shrinks L-BFGS's bookkeeping, which for bag-of-words data
    (many words never occur in a training set, or in a CV fold) is a large
    part of a fit. Returns None for dense ``X`` (never copied) and when
    fewer than ``_MIN_EMPTY_FRACTION`` of the columns are empty (not worth
    a copy of ``X``).
    """
    if not sp.issparse(X) or X.shape[1] == 0:
        return None
    if X.format == "csc":
        counts = np.diff(X.indptr)
    else:
        counts = np.bincount(X.tocsr().indices, minlength=X.shape[1])
    active = counts > 0
    n_empty = X.shape[1] - int(np.count_nonzero(active))
    if n_empty == 0 or n_empty < _MIN_EMPTY_FRACTION * X.shape[1]:
        return None
    return active


def objective_rtol(dtype):
    """Relative rounding level of the objective for data of ``dtype``.

    The per-sample losses are computed in the dtype of ``X`` (float32 stays
    float32), so their mean is exact to a few float32 ulps at best.
    """
    return max(64 * np.finfo(np.float64).eps, 16 * float(np.finfo(dtype).eps))


def fit_path(linear_loss, X, target, n_classes, sample_weight, w0, l2s, settings,
             policies, mean_target=None):
    """Minimise the objective at each ``l2`` in turn, each from the previous solution.

    The first fit starts from ``w0``. Everything that does not depend on the
    regularisation is done once for the whole path: the problem's shape (row
    space, active columns, or as it is) and the moments of the whitening
    (:func:`._preconditioner.gram_preconditioner_path`). ``policies`` holds
    one :class:`SolverPolicy` per ``l2`` (a warm-started fit skips the
    warm-up). ``mean_target`` (K,), the (weighted) mean target, gives the
    intercept-only optimum, where the curvature of the loss scales L-BFGS's
    intercept variables (:func:`_intercept_scales`).

    Returns
    -------
    solutions : list of tuple
        ``(weights (K, d), intercepts or None, n_iter)`` for each ``l2``.
    """
    fit_intercept = linear_loss.fit_intercept
    n_features = X.shape[1]
    # Data persisted in row blocks on a Dask cluster (._dask_fit): fitted as
    # they are (no row-space basis or column selection of data that are not
    # in this process), whitened by blockwise moments.
    blocked = getattr(X, "is_blocked", False)
    reduction = None
    if settings.solver == "lbfgs" and not blocked:
        reduction = row_space_reduction(X, n_classes, fit_intercept, sample_weight)
    if reduction is not None:
        # More features than samples: the same problem, exactly, in the row
        # space of X (see RowSpaceReduction).
        X_fit, w = reduction.features, reduction.reduce(w0, n_classes)

        def expand(w):
            return reduction.expand(w, n_classes)
    else:
        active = None if blocked else _active_features(X)
        if active is None:
            X_fit, w = X, w0

            def expand(w):
                return linear_loss.weight_intercept(w, n_classes)
        else:
            # Empty columns: weight 0 at the optimum; fit the others only.
            X_fit = X[:, active]
            W0, b0 = linear_loss.weight_intercept(w0, n_classes)
            w = linear_loss.pack(W0[:, active], b0)

            def expand(w):
                w_active, intercept = linear_loss.weight_intercept(w, n_classes)
                weights = np.zeros((n_classes, n_features))
                weights[:, active] = w_active
                return weights, intercept
    preconditioners = None
    if settings.solver == "lbfgs" and blocked:
        preconditioners = X_fit.preconditioner_path(n_classes, fit_intercept)
    elif settings.solver == "lbfgs":
        preconditioners = gram_preconditioner_path(
            X_fit, n_classes, fit_intercept, sample_weight
        )
    scales = None
    if preconditioners is not None and fit_intercept and mean_target is not None:
        scales = _intercept_scales(linear_loss.base_loss, n_classes, mean_target)
    keep_sum = getattr(linear_loss.base_loss, "shift_invariant", False)
    solutions = []
    l2s = list(l2s)
    for i, (l2, policy) in enumerate(zip(l2s, policies)):
        # The last fit factorises the whitening moments in place: one d x d
        # matrix fewer while it runs.
        precondition = (None if preconditioners is None
                        else preconditioners(l2, last=i == len(l2s) - 1))
        if precondition is not None:
            precondition.scale_intercepts(scales, keep_sum)
        w, n_iter = _solve(linear_loss, X_fit, w, target, n_classes, sample_weight,
                           l2, settings, policy, precondition)
        solutions.append((*expand(w), n_iter))
    return solutions


def _intercept_scales(loss, n_classes, mean_target):
    """Scales of the intercept variables (:func:`._intercept_scaling.intercept_scales`).

    From the curvature of the loss where its mapping gives the mean target
    (the intercept-only optimum). None for a loss with kinks (top-k): where
    L-BFGS ends on a kink depends on its path, and the curvature at the
    start (that of one piece, or of the softmax warm-up) says little about
    the pieces the fit ends between.
    """
    if not loss.is_smooth(n_classes):
        return None
    try:
        # One row, on the NumPy path: with the numba backend, the mapping's
        # kernel would otherwise be compiled for it (seconds, on the first
        # fit after an installation, even where the fit itself compiles
        # nothing).
        with backend("numpy"):
            p = loss.predict_proba(loss._scores_for(mean_target)[None, :])[0]
    except (AttributeError, NotImplementedError):
        return None
    return intercept_scales(loss, p)


def _solve(linear_loss, X, w0, target, n_classes, sample_weight, l2, settings, policy,
           precondition):
    """Warm-up (if the policy says so), then the chosen solver: ``(w, n_iter)``.

    ``precondition`` (L-BFGS only) serves the warm-up and the main run.
    """
    args = (X, target, n_classes, sample_weight, l2)
    n_warm = 0
    if policy.warmup_iter:
        w0, n_warm = _smooth_warmup(linear_loss, w0, args, settings, policy, precondition)
    if settings.solver == "newton-cg":
        w, n_iter = _newton(linear_loss, w0, args, settings, policy)
    else:
        w, _, n_iter = minimize_lbfgs(
            linear_loss.loss_gradient, w0, args=args, max_iter=settings.max_iter,
            tol=settings.tol, verbose=settings.verbose, name=settings.name,
            extra_warning_msg=policy.hint, stall=_stall(policy, settings),
            precondition=precondition,
        )
    return w, n_warm + n_iter


def _stall(policy, settings):
    """L-BFGS's stall stop: no relative decrease beyond ``tol`` over the window."""
    if policy.stall_window is None:
        return None
    return (policy.stall_window, settings.tol)


def _smooth_warmup(linear_loss, w0, args, settings, policy, precondition):
    """A few L-BFGS iterations on a smooth loss from ``w0``: ``(w, n_iter)``.

    The softmax loss, the smooth counterpart of the simplex losses.

    A loss whose targets are not distributions over the classes (the
    per-label losses) names its own smooth counterpart (``_warmup_loss``).
    """
    surrogate = getattr(linear_loss.base_loss, "_warmup_loss", None)
    smooth = get_loss("softmax") if surrogate is None else surrogate()
    # The same kind of linear loss (in memory or blockwise on Dask).
    warmup = type(linear_loss)(smooth, linear_loss.fit_intercept)
    w, _, n_iter = minimize_lbfgs(
        warmup.loss_gradient, w0, args=args, max_iter=policy.warmup_iter,
        tol=settings.tol, verbose=settings.verbose,
        name=f"{settings.name} (softmax warm-up)", check=False,
        precondition=precondition,
    )
    # Hand the score buffer on rather than holding two of them.
    linear_loss.adopt_buffer(warmup)
    return w, n_iter


def _newton(linear_loss, w0, args, settings, policy):
    """Newton-CG, handing over to L-BFGS if it stalls on a kink: ``(w, n_iter)``."""
    stall_step = policy.newton_stall_step
    w, _, n_newton, status = minimize_newton_cg(
        linear_loss.loss_gradient_hessian_product, linear_loss.loss, w0, args=args,
        max_iter=settings.max_iter, tol=settings.tol,
        f_rtol=objective_rtol(args[0].dtype), stall_step=stall_step,
        return_status=True, verbose=settings.verbose, name=settings.name,
        check=stall_step is None, extra_warning_msg=policy.hint,
    )
    if stall_step is None or status == 0:
        return w, n_newton
    if n_newton >= settings.max_iter:
        _warn_newton_max_iter(settings, policy)
        return w, n_newton
    # Newton's direction does not see the kinks and stalls on them: L-BFGS,
    # whose secant pairs see the kinks, finishes with the remaining iterations.
    w, _, n_lbfgs = minimize_lbfgs(
        linear_loss.loss_gradient, w, args=args,
        max_iter=settings.max_iter - n_newton, tol=settings.tol,
        verbose=settings.verbose, name=f"{settings.name} (L-BFGS after Newton-CG)",
        extra_warning_msg=policy.hint, stall=_stall(policy, settings),
    )
    return w, n_newton + n_lbfgs


def _warn_newton_max_iter(settings, policy):
    warnings.warn(
        f"{settings.name}: Newton-CG failed to converge after "
        f"{settings.max_iter} iteration(s): maximum number of iterations reached.\n"
        f"Increase the number of iterations (max_iter={settings.max_iter}) or "
        "scale the data, e.g. with sklearn.preprocessing.StandardScaler.\n"
        + (policy.hint or ""),
        ConvergenceWarning,
        stacklevel=5,
    )
