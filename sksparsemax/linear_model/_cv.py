"""Cross-validated estimators: regularisation paths, warm started, folds in parallel.

The counterpart of :class:`~sklearn.linear_model.LogisticRegressionCV`. A
subclass names its plain estimator (:meth:`_BaseLinearCV._estimator`), the
grid of the parameters that change the fit (``alphas``, ``ks``: one path
per value) and of those that only change predictions (``scale``,
``threshold``: scored on the fit at each ``C``, never refitted).
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data

from ._base import _ACCEPT_SPARSE, _DTYPES, _BaseSparseLinearClassifier, _check_sample_weight
from ._dask_fit import is_dask_collection
from ._path import check_Cs, fold_path


class _BaseLinearCV(ClassifierMixin, BaseEstimator):
    """Base of the CV estimators: the search, the choice, the refit, the predictions.

    Subclasses define ``_estimator()`` (the plain estimator, unfitted, with
    the shared parameters) and may define ``_fit_grid()`` and
    ``_rule_grid()`` (lists of parameter dicts; ``[{}]`` by default).

    Warning: This class should not be used directly. Use derived classes
    instead.
    """

    _parameter_constraints: dict = {
        **{
            key: value
            for key, value in _BaseSparseLinearClassifier._parameter_constraints.items()
            if key not in ("C", "warm_start")
        },
        "Cs": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "cv": ["cv_object"],
        "scoring": [StrOptions(set(get_scorer_names())), callable, None],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
    }

    def __init__(self, *, Cs=10, cv=None, scoring=None, refit=True, n_jobs=None,
                 fit_intercept=True, tol=1e-4, max_iter=100, verbose=0, solver="lbfgs"):
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.solver = solver

    # -- hooks ---------------------------------------------------------------
    def _estimator(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_grid(self):
        """The values of the parameters that change the fit: one path each."""
        return [{}]

    def _rule_grid(self):
        """The values of the parameters that change only the predictions."""
        return [{}]

    def _shared_params(self):
        """The parameters handed to the plain estimator as they are."""
        return dict(fit_intercept=self.fit_intercept, tol=self.tol,
                    max_iter=self.max_iter, verbose=self.verbose, solver=self.solver)

    # -- fit -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, groups=None):
        """Choose the parameters by cross-validation, then refit on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            Target, as the plain estimator's ``fit`` takes it.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the fits and of the held-out scores (as in
            :class:`~sklearn.linear_model.LogisticRegressionCV`).
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter (e.g.
            :class:`~sklearn.model_selection.GroupKFold`).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        if is_dask_collection(X):
            # Folds of a Dask collection would be gathered by the checks below.
            raise TypeError(
                f"{type(self).__name__} does not fit on Dask collections: its folds "
                "are in-memory fits. Fit the plain estimator on the Dask data (one "
                "model, fitted blockwise on the cluster), or run the folds of "
                "in-memory data on a cluster with joblib.parallel_backend(\"dask\")."
            )
        X = validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES)
        if not (hasattr(y, "iloc") or sp.issparse(y)):
            y = np.asarray(y)  # indexed by fold (a DataFrame Y keeps its label names)
        check_consistent_length(X, y)
        sample_weight = _check_sample_weight(sample_weight, X.shape[0], X.dtype)
        base = self._estimator()
        # The data's own checks (one class only, bad labels) before any split.
        classes = _classes(base, X, y)
        self.Cs_ = check_Cs(self.Cs)
        fit_grid, rule_grid = self._fit_grid(), self._rule_grid()
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y, groups))
        scorer = check_scoring(base, scoring=self.scoring)
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(fold_path)(clone(base).set_params(**params), X, y, sample_weight,
                               train, test, self.Cs_, rule_grid, scorer)
            for train, test in folds
            for params in fit_grid
        )
        self._collect(results, classes, len(folds), fit_grid, rule_grid)
        self._choose(fit_grid, rule_grid)
        self._fit_best(X, y, sample_weight, base)
        return self

    def _collect(self, results, classes, n_folds, fit_grid, rule_grid):
        """The paths of every fold, as arrays (fold, grid point, C, ...)."""
        for f, (*_, fold_classes) in enumerate(results):
            if not np.array_equal(fold_classes, classes):
                missing = [c for c in classes.tolist() if c not in set(fold_classes.tolist())]
                raise ValueError(
                    f"The training part of fold {f // len(fit_grid)} lacks the classes "
                    f"{missing!r}: every class needs samples in every training fold "
                    "(use a stratified splitter, or fewer folds)."
                )
        n_fit, n_cs = len(fit_grid), len(self.Cs_)
        coefs, n_iter, scores, _ = zip(*results)
        self.coefs_paths_ = np.reshape(np.stack(coefs), (n_folds, n_fit, n_cs) + coefs[0].shape[1:])
        self.n_iter_ = np.reshape(np.stack(n_iter), (n_folds, n_fit, n_cs))
        # (fold, fit point, rule, C) -> (fold, grid point, C), fit points slowest.
        self.scores_ = np.reshape(np.stack(scores), (n_folds, n_fit * len(rule_grid), n_cs))
        self.param_grid_ = [{**f, **r} for f in fit_grid for r in rule_grid]
        self.classes_ = classes

    def _choose(self, fit_grid, rule_grid):
        """The best mean held-out score; ties go to the smallest ``C``, then the first grid point.

        The order of :class:`~sklearn.model_selection.GridSearchCV` over
        ``{"C": Cs_, **grid}``, whose keys it sorts (``C`` first).
        """
        mean = self.scores_.mean(axis=0)  # (grid point, C)
        flat = mean.T.ravel()  # C slowest, as GridSearchCV orders the candidates
        if np.all(np.isnan(flat)):
            raise ValueError("Every cross-validation score is NaN: nothing to choose from.")
        best = int(np.argmax(np.where(np.isnan(flat), -np.inf, flat)))
        c_index, g_index = divmod(best, mean.shape[0])
        self.best_index_ = (g_index, c_index)
        self.C_ = float(self.Cs_[c_index])
        self.best_params_ = {"C": self.C_, **self.param_grid_[g_index]}
        self.best_score_ = float(flat[best])
        for name, value in self.param_grid_[g_index].items():
            setattr(self, f"{name}_", value)  # alpha_, k_, scale_, threshold_
        self._best_fit_point = g_index // len(rule_grid)

    def _fit_best(self, X, y, sample_weight, base):
        """The plain estimator at the chosen parameters: ``best_estimator_``.

        With ``refit``, fitted on all the data from the average of the folds'
        solutions; otherwise that average itself.
        """
        best = clone(base).set_params(**self.best_params_)
        problem = best._fit_problem(X, y, sample_weight)
        g, c = self._best_fit_point, self.best_index_[1]
        mean = self.coefs_paths_[:, g, c].mean(axis=0)
        n_features = X.shape[1]
        weights = mean[:, :n_features]
        intercept = mean[:, n_features] if self.fit_intercept else None
        if self.refit:
            w0 = problem.linear_loss.pack(weights, intercept)
            (solution,) = best._solve_path(problem, [self.C_], w0, warm_started=True)
        else:
            solution = (weights, intercept, 0)
        best._set_solution(problem, *solution)
        self.best_estimator_ = best
        self.coef_ = best.coef_
        self.intercept_ = best.intercept_

    # -- predict -------------------------------------------------------------
    def _checked(self, X):
        check_is_fitted(self)
        if is_dask_collection(X):
            return X  # best_estimator_ predicts blockwise, checking each block
        return validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES,
                             reset=False)

    def decision_function(self, X):
        """The chosen model's ``decision_function`` (see ``best_estimator_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            The scores (or the multi-label margins) of ``best_estimator_``.
        """
        X = self._checked(X)
        return self.best_estimator_.decision_function(X)

    def predict(self, X):
        """The chosen model's predictions (see ``best_estimator_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_labels)
            Labels from ``classes_`` (an indicator matrix for a 2-D ``Y``).
        """
        X = self._checked(X)
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        """The chosen model's probabilities, with exact zeros.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows on the probability simplex, columns following ``classes_``.
        """
        X = self._checked(X)
        return self.best_estimator_.predict_proba(X)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`; ``-inf`` where it is exactly 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            The log of :meth:`predict_proba`.
        """
        X = self._checked(X)
        return self.best_estimator_.predict_log_proba(X)

    def score(self, X, y, sample_weight=None):
        """The ``scoring`` of the chosen model on ``X, y`` (accuracy by default).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,) or (n_samples, n_labels)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the samples in the score.

        Returns
        -------
        score : float
            The score of the chosen model.
        """
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        if self.scoring is None:
            return super().score(X, y, **kw)
        return check_scoring(self, scoring=self.scoring)(self, X, y, **kw)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _classes(base, X, y):
    """The classes of the whole data, as the plain estimator encodes them.

    Runs the plain estimator's own checks of the target (one class only,
    labels of the wrong type...) on a clone, so that their errors come
    before any split.
    """
    est = clone(base)
    _, y = est._validate_fit_data(X, y)
    classes, _, _ = est._encode_target(y)
    return classes
