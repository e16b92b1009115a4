"""One fold of a cross-validated regularisation path, and its grids.

:func:`fold_path` fits one estimator on a training fold at every ``C`` of
the grid, from the most regularised to the least, each fit starting from the
previous solution, and scores every prediction rule at every ``C`` on the
held-out fold. The CV estimators (:mod:`._cv`) run one per fold (and per
point of a grid of parameters that change the fit) in parallel.
"""

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils import _safe_indexing


def check_Cs(Cs):
    """The grid of ``C`` as a sorted float array (a count gives a log grid).

    A count ``n`` gives ``np.logspace(-4, 4, n)``, as in
    :class:`~sklearn.linear_model.LogisticRegressionCV`. A list is sorted
    increasingly: the path runs from the most regularised model (smallest
    ``C``, nearly the intercepts alone) to the least.
    """
    if isinstance(Cs, Integral) and not isinstance(Cs, bool):
        return np.logspace(-4, 4, int(Cs))
    values = np.asarray(Cs)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(
            f"Cs must be a positive integer or a non-empty 1-D list of values of C; "
            f"got {Cs!r}."
        )
    try:
        values = values.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"Cs must hold numbers; got {Cs!r}.") from None
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"Every value of Cs must be positive and finite; Cs[{j}] = {float(values[j])!r}."
        )
    return np.sort(values)


def check_grid(name, values, check_value):
    """A parameter grid (``alphas``, ``ks``, ...) as a tuple of checked values.

    ``check_value(value)`` returns an error message for a bad value, or None.
    """
    if np.ndim(values) != 1 or len(values) == 0:
        raise ValueError(f"{name} must be a non-empty 1-D list of values; got {values!r}.")
    for j, value in enumerate(values):
        problem = check_value(value)
        if problem:
            raise ValueError(f"{name}[{j}] = {value!r}: {problem}")
    return tuple(values)


def fold_path(estimator, X, y, sample_weight, train, test, Cs, rules, scorer):
    """Fit ``estimator`` on one training fold at every ``C``; score on the held-out fold.

    Parameters
    ----------
    estimator : estimator of this subpackage
        Unfitted; cloned. Its ``C`` is replaced by each value of ``Cs``.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
    y : array-like
        The target, as ``fit`` takes it (indexed by rows).
    sample_weight : ndarray of shape (n_samples,) or None
        Weights of the fit and of the scores.
    train, test : ndarray of int
        The rows of the fold.
    Cs : ndarray
        Increasing; the first fit starts from the intercept-only model, each
        later one from the previous solution.
    rules : list of dict
        Values of the parameters that only change predictions (e.g.
        ``scale``): each is scored on the fit at each ``C``, with no refit.
    scorer : callable
        ``scorer(estimator, X, y, **kw)``, ``sample_weight`` in ``kw`` when
        given.

    Returns
    -------
    coefs : ndarray of shape (n_cs, n_classes, n_features + fit_intercept)
        The weights at each ``C`` (the intercepts in the last column).
    n_iter : ndarray of shape (n_cs,)
    scores : ndarray of shape (n_rules, n_cs)
    classes : ndarray
        The classes of the training fold.
    """
    est = clone(estimator)
    fit_weight = None if sample_weight is None else sample_weight[train]
    problem = est._fit_problem(_safe_indexing(X, train), _safe_indexing(y, train), fit_weight)
    solutions = est._solve_path(problem, Cs, est._initial_coef(problem))

    X_test, y_test = _safe_indexing(X, test), _safe_indexing(y, test)
    score_kw = {} if sample_weight is None else {"sample_weight": sample_weight[test]}
    n_features = problem.X.shape[1]
    coefs = np.zeros((len(Cs), problem.n_classes, n_features + est.fit_intercept))
    n_iter = np.zeros(len(Cs), dtype=np.int64)
    scores = np.empty((len(rules), len(Cs)))
    for j, (C, solution) in enumerate(zip(Cs, solutions)):
        est.set_params(C=C)
        est._set_solution(problem, *solution)
        weights, intercept, n_iter[j] = solution
        coefs[j, :, :n_features] = weights
        if intercept is not None:
            coefs[j, :, n_features] = intercept
        for r, rule in enumerate(rules):
            est.set_params(**rule)
            scores[r, j] = scorer(est, X_test, y_test, **score_kw)
    return coefs, n_iter, scores, problem.classes
