"""Shared fit/predict machinery of the sparse linear classifiers."""

import functools
import inspect
from dataclasses import dataclass
import numbers
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..losses import check_target
from ._dask_fit import blockwise, dask_fit_problem, is_dask_collection
from ._fit import FitSettings, fit_path, policy_for
from ._linear_loss import LinearModelLoss

_ACCEPT_SPARSE = ["csr", "csc"]
_DTYPES = [np.float64, np.float32]


def _check_sample_weight(sample_weight, n_samples, dtype):
    """Validated sample weights as a float array of shape (n_samples,), or None.

    Weights must be finite and non-negative with a positive sum. A scalar is
    broadcast to every sample.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=dtype)
    try:
        sw = np.asarray(sample_weight, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight must be numeric: {exc}") from None
    if sw.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1D array or scalar; got an array of shape "
            f"{sw.shape}."
        )
    if sw.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight.shape == {sw.shape}, expected ({n_samples},): "
            f"sample_weight has {sw.shape[0]} entries but X has {n_samples} "
            "samples."
        )
    if not np.all(np.isfinite(sw)):
        i = int(np.flatnonzero(~np.isfinite(sw))[0])
        raise ValueError(
            f"sample_weight must be finite; sample_weight[{i}] = {sw[i]}."
        )
    if np.any(sw < 0):
        i = int(np.flatnonzero(sw < 0)[0])
        raise ValueError(
            f"Negative values in data passed to sample_weight: "
            f"sample_weight[{i}] = {sw[i]}."
        )
    if not sw.sum() > 0:
        raise ValueError("sample_weight sums to zero: no sample to fit.")
    return sw


def _label_indices(classes, y):
    """A Dask block's labels as indices into ``classes``; every row kept."""
    return np.searchsorted(classes, np.asarray(y)).astype(np.intp, copy=False), None


def _mean_target(target, sample_weight, sw_sum):
    """The (weighted) mean target distribution (K,) of a checked Target."""
    if target.is_indices:
        counts = np.bincount(
            target.indices,
            weights=None if sample_weight is None else sample_weight.astype(np.float64),
            minlength=target.n_classes,
        )
        return counts / sw_sum
    if sample_weight is None:
        return target.proba.mean(axis=0)
    return sample_weight.astype(np.float64) @ target.proba / sw_sum


@dataclass
class FitProblem:
    """What a fit minimises, once the data are validated: the solver's inputs."""

    linear_loss: LinearModelLoss
    X: object
    target: object
    classes: np.ndarray
    sample_weight: object
    sw_sum: float
    #: The weighted mean target (K,), when computed with the data (a Dask
    #: fit computes it blockwise); else from ``target`` on first use.
    mean_target: object = None

    def target_mean(self):
        """The (weighted) mean target distribution (K,)."""
        if self.mean_target is None:
            self.mean_target = _mean_target(self.target, self.sample_weight, self.sw_sum)
        return self.mean_target

    @property
    def n_classes(self):
        return self.classes.shape[0]


def forward(params, base):
    """The entries of ``params`` (an ``__init__``'s locals) that ``base.__init__`` takes.

    scikit-learn reads an estimator's parameters from its own ``__init__``
    signature, so every subclass spells them out; this hands the shared
    ones on to the base class without repeating them a second time.
    """
    names = inspect.signature(base.__init__).parameters
    return {name: params[name] for name in names if name != "self"}


class _BaseSparseLinearClassifier(ClassifierMixin, BaseEstimator):
    """Base class: linear scores fitted by L-BFGS or Newton-CG on a loss of raw scores.

    Subclasses define ``_make_loss(n_classes)`` (the loss object of
    :mod:`sksparsemax.losses`) and may override ``_check_params_vs_data``
    and ``_encode_target``; how the fit runs is decided in :mod:`._fit`.

    Warning: This class should not be used directly. Use derived classes
    instead.
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "verbose": ["verbose"],
        "solver": [StrOptions({"lbfgs", "newton-cg"})],
    }

    def __init__(
        self,
        *,
        C=1.0,
        fit_intercept=True,
        tol=1e-4,
        max_iter=100,
        warm_start=False,
        verbose=0,
        solver="lbfgs",
    ):
        self.C = C
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.verbose = verbose
        self.solver = solver

    # -- hooks ---------------------------------------------------------------
    def _make_loss(self, n_classes):  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_params_vs_data(self, n_classes):
        """Data-dependent parameter checks (e.g. k against n_classes)."""

    def _encode_target(self, y):
        """Classes, the loss target and the mask of rows to keep (or None)."""
        check_classification_targets(y)
        classes, y_ind = np.unique(y, return_inverse=True)
        self._check_classes(classes)
        return classes, y_ind.astype(np.intp, copy=False), None

    def _encode_target_blocks(self, y, unique, columns=None):
        """For a Dask ``y``: the classes and the encoder of one row block.

        ``unique()`` computes the sorted unique labels blockwise; the
        encoder maps a block of labels to ``(class indices, None)`` (the
        rows to keep: all), like :meth:`_encode_target`. ``columns``: the
        column names of a Dask DataFrame ``y`` (for multi-label targets).
        """
        classes = unique()
        check_classification_targets(classes)
        self._check_classes(classes)
        return classes, functools.partial(_label_indices, classes)

    def _report_dropped(self, n_dropped, n_samples):
        """Warn about (or refuse) the rows that the target encoding left out."""

    def _check_classes(self, classes):
        if classes.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in "
                "the data, but the data contains only one class: "
                f"{classes.tolist()[0]!r}."
            )

    def _class_sample_weight(self, classes, target):
        """Per-sample weights implied by ``class_weight`` (or None)."""
        if getattr(self, "class_weight", None) is None:
            return None
        cw = self._class_weights(classes, np.bincount(target, minlength=len(classes)))
        return cw[target]

    def _class_weights(self, classes, counts):
        """The weight of each class that ``class_weight`` implies (or None).

        ``counts`` holds the number of samples of each class (what
        ``"balanced"`` needs; a Dask fit sums it blockwise).
        """
        class_weight = getattr(self, "class_weight", None)
        if class_weight is None:
            return None
        if isinstance(class_weight, str) and class_weight == "balanced":
            # compute_class_weight's formula, from the counts: n / (K n_k).
            with np.errstate(divide="ignore"):
                cw = counts.sum() / (len(classes) * np.asarray(counts, dtype=np.float64))
        else:
            # Every class occurs: a dict's weights need only the classes.
            cw = compute_class_weight(class_weight, classes=classes, y=classes)
        bad = ~(np.isfinite(cw) & (cw >= 0))
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise ValueError(
                "class_weight must be finite and non-negative, like "
                f"sample_weight; the class {classes[j].item()!r} has weight {float(cw[j])}."
            )
        return cw

    def _validate_fit_data(self, X, y):
        return validate_data(
            self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES
        )

    # -- fit -----------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model by L-BFGS or Newton-CG (``solver``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; scipy.sparse CSR/CSC matrices are used as they are
            (never densified). float32 data give float32 coefficients. A
            dask array chunked by rows (dense or scipy.sparse chunks) or a
            dask DataFrame is fitted blockwise on its cluster, never gathered
            (see the user guide, "Scaling out"); ``y`` and ``sample_weight``
            may then be dask arrays or Series too.
        y : array-like of shape (n_samples,)
            Target labels (any hashable labels: strings, integers...).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a weight of 2 counts a sample twice. Multiplied
            by the weights that ``class_weight`` implies.

        Returns
        -------
        self : object
            The fitted estimator. A fit that raises leaves the estimator as
            it was (a previous fit stays usable).
        """
        state = dict(self.__dict__)
        try:
            return self._fit(X, y, sample_weight)
        except BaseException:
            # validate_data and the target encoding set attributes before
            # the solver runs: put back the state of the previous fit.
            self.__dict__.clear()
            self.__dict__.update(state)
            raise

    def _fit(self, X, y, sample_weight):
        problem = self._fit_problem(X, y, sample_weight)
        w0 = self._initial_coef(problem)
        (solution,) = self._solve_path(problem, [self.C], w0, self._warm_started)
        self._set_solution(problem, *solution)
        return self

    def _fit_problem(self, X, y, sample_weight):
        """Validate the data and build what the solver minimises: a :class:`FitProblem`.

        Sets the attributes that describe the data (``n_features_in_``,
        ``feature_names_in_``, the target's kind), not the solution; the
        regularisation path of the CV estimators solves one problem at
        several ``C``.
        """
        if is_dask_collection(X):
            # Validated, encoded and persisted blockwise on the cluster.
            linear_loss, X, classes, sw_sum, mean = dask_fit_problem(
                self, X, y, sample_weight
            )
            return FitProblem(linear_loss, X, None, classes, None, sw_sum, mean)
        X, y = self._validate_fit_data(X, y)
        sample_weight = _check_sample_weight(sample_weight, X.shape[0], X.dtype)
        classes, target, keep = self._encode_target(y)
        n_classes = classes.shape[0]
        self._check_params_vs_data(n_classes)

        cw = self._class_sample_weight(classes, target)
        if cw is not None:
            cw = cw.astype(X.dtype, copy=False)
            sample_weight = cw if sample_weight is None else sample_weight * cw
        if keep is not None:
            X, target = X[keep], target[keep]
            if sample_weight is not None:
                sample_weight = sample_weight[keep]
        if sample_weight is not None and not sample_weight.sum() > 0:
            raise ValueError(
                "The sample weights (times the class weights) sum to zero: no "
                "sample to fit."
            )
        sw_sum = (
            float(X.shape[0])
            if sample_weight is None
            else float(np.sum(sample_weight, dtype=np.float64))
        )
        target = self._check_target(target, X.shape[0], n_classes)
        linear_loss = LinearModelLoss(self._make_loss(n_classes), self.fit_intercept)
        X = linear_loss.prepare_data(X, n_classes)
        return FitProblem(linear_loss, X, target, classes, sample_weight, sw_sum)

    def _solve_path(self, problem, Cs, w0, warm_started=False):
        """Minimise the objective at each ``C`` in turn, the first from ``w0``.

        Each later ``C`` starts from the previous solution (a warm start).
        Returns ``(weights, intercepts or None, n_iter)`` for each ``C``.
        """
        n_classes = problem.n_classes
        loss = problem.linear_loss.base_loss
        settings = FitSettings(
            self.solver, self.max_iter, self.tol, self.verbose, type(self).__name__
        )
        policies = [
            policy_for(loss, n_classes, warm_started or j > 0) for j in range(len(Cs))
        ]
        return fit_path(
            problem.linear_loss, problem.X, problem.target, n_classes,
            problem.sample_weight, w0, [1.0 / (C * problem.sw_sum) for C in Cs],
            settings, policies,
            mean_target=problem.target_mean() if self.fit_intercept else None,
        )

    def _set_solution(self, problem, weights, intercept, n_iter):
        """Store a solution of ``problem`` as the fitted attributes."""
        dtype = problem.X.dtype
        self.classes_ = problem.classes
        self.coef_ = weights.astype(dtype)
        if intercept is None:
            self.intercept_ = np.zeros(problem.n_classes, dtype=dtype)
        else:
            self.intercept_ = intercept.astype(dtype)
        self.n_iter_ = n_iter

    def _check_target(self, target, n_samples, n_classes):
        """The validated target of the loss (distributions over the classes)."""
        return check_target(target, n_samples, n_classes)

    def _initial_coef(self, problem):
        """The previous solution (``warm_start``) or the intercept-only optimum.

        Without a warm start the weights start at 0 and the intercepts at
        the optimum of the intercept-only model: the scores ``b`` whose
        mapping is the (weighted) mean target distribution (for sparsemax
        ``b`` is that distribution itself, which lies on the simplex; for
        softmax its logarithm, clipped), centred, a cheaper starting point
        than ``b = 0`` that costs one pass over the target.
        """
        linear_loss, classes = problem.linear_loss, problem.classes
        n_classes, n_features = problem.n_classes, problem.X.shape[1]
        self._warm_started = False
        if self.warm_start and hasattr(self, "coef_"):
            if self.coef_.shape != (n_classes, n_features) or not np.array_equal(
                self.classes_, classes
            ):
                raise ValueError(
                    "warm_start=True needs the same classes and number of "
                    f"features as the previous fit: the previous fit had "
                    f"classes {self.classes_.tolist()!r} and "
                    f"{self.coef_.shape[1]} features, this one has classes "
                    f"{classes.tolist()!r} and {n_features} features."
                )
            self._warm_started = True
            return linear_loss.pack(self.coef_, self.intercept_)
        w0 = linear_loss.init_zero_coef(n_classes, n_features)
        if self.fit_intercept:
            b0 = linear_loss.base_loss._scores_for(problem.target_mean())
            # A simplex loss is invariant to adding a constant to all scores,
            # and L-BFGS never changes sum(b) (its gradient sums to 0): centre
            # b0 so that the intercepts sum to 0, as from b = 0 (and as in
            # LogisticRegression). A per-label loss compares each score with
            # 0: its b0 stays as it is.
            if linear_loss.base_loss.shift_invariant:
                b0 = b0 - b0.mean()
            w0[-n_classes:] = b0
        return w0

    # -- predict -------------------------------------------------------------
    def _raw_scores(self, X):
        """Raw scores ``X @ coef_.T + intercept_`` of shape (n, n_classes)."""
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse=_ACCEPT_SPARSE, dtype=_DTYPES, reset=False
        )
        Z = safe_sparse_dot(X, self.coef_.T, dense_output=True)
        Z = np.asarray(Z)
        Z += self.intercept_
        return Z

    @blockwise
    def decision_function(self, X):
        """Raw scores of the classes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            ``X @ coef_.T + intercept_``. For a binary problem, like
            :class:`~sklearn.linear_model.LogisticRegression`, the score of the
            second class minus that of the first, shape (n_samples,): positive
            scores predict ``classes_[1]``. This is what scikit-learn's
            scorers (``roc_auc``, ``average_precision``) expect.
        """
        Z = self._raw_scores(X)
        if Z.shape[1] == 2:
            return Z[:, 1] - Z[:, 0]
        return Z

    @blockwise
    def predict(self, X):
        """Predict the class of highest score (and highest probability).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``; ties go to the first class.
        """
        Z = self._raw_scores(X)
        return self.classes_[np.argmax(Z, axis=1)]


    @blockwise
    def predict_proba(self, X):
        """Class probabilities, with exact zeros.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Each row is on the probability simplex; columns follow
            ``classes_``.
        """
        Z = self._raw_scores(X)
        # The loss is rebuilt from the parameters rather than kept as a fitted
        # attribute: a persisted model then holds arrays and the estimator
        # only (skops trusts nothing else).
        loss = self._make_loss(Z.shape[1])
        P = loss.predict_proba(Z)
        # A distribution whatever the loss's rows sum to (budget sparsemax:
        # its budget).
        total = loss.row_sum
        return P if total == 1.0 else P / total

    @blockwise
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`; ``-inf`` where it is exactly 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log of predict_proba; -inf where the probability is 0.
        """
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return np.log(proba)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

