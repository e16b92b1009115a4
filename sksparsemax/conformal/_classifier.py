"""SparseConformalClassifier: prediction sets that are supports of sparse mappings."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    _fit_context,
    clone,
)
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.utils import _safe_indexing, indexable
from sklearn.utils._param_validation import HasMethods, Interval, RealNotInt, StrOptions
from sklearn.utils._tags import get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _num_samples, check_is_fitted, column_or_1d

from ._calibration import class_quantiles, conformal_quantile
from ._scores import _checked_scores, get_score, set_distribution

__all__ = ["SparseConformalClassifier"]


def _index_of(classes, values):
    """Positions of ``values`` in ``classes`` (sorted or not, as a prefit model's)."""
    sorter = np.argsort(classes)
    return sorter[np.searchsorted(classes, values, sorter=sorter)]


def _default_estimator():
    # Imported here: the linear models are the default, not a requirement.
    from ..linear_model import SparsemaxClassifier

    return SparsemaxClassifier()


class SparseConformalClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""Conformal prediction sets that are the supports of sparsemax or entmax.

    Wraps a classifier with scores :math:`z(x)` (its ``decision_function``, or
    the logarithm of its ``predict_proba``) and calibrates a temperature
    :math:`\hat T` on held-out data (Campos et al., 2025) so that the support
    of :math:`\alpha\text{-entmax}(z(x) / \hat T)` is a split-conformal
    prediction set:

    .. math::

        C(x) = \{ y : s_\alpha(z(x), y) \le \hat T \}, \qquad
        s_\alpha(z, y) = (\alpha - 1)\,\|(z - z_y \mathbf{1})_+\|_{1/(\alpha-1)},

    :math:`\hat T` the :math:`\lceil (n + 1)\,\text{coverage} \rceil`-th
    smallest of the :math:`n` calibration scores :math:`s_\alpha(z(x_i),
    y_i)` (:math:`+\infty` if that exceeds :math:`n`). Sparsemax is
    :math:`\alpha = 2`, :math:`s(z, y) = \sum_j (z_j - z_y)_+`. For an
    exchangeable test point :math:`P(y \in C(x)) \ge` ``coverage``, whatever
    the model and the data distribution. :math:`C(x)` is a top-k set of
    :math:`z(x)` that always holds the top label. ``mapping="softmax"`` is the
    LAC score :math:`1 - \operatorname{softmax}(z)_y` (Sadinle et al., 2019),
    for comparison; its sets may be empty.

    Parameters
    ----------
    estimator : estimator object, default=None
        A classifier with ``decision_function`` or ``predict_proba``; ``None``
        means :class:`~sksparsemax.linear_model.SparsemaxClassifier`. A 1-D
        (binary) decision function :math:`d` is read as the scores
        :math:`(-d/2, d/2)`; the scores are invariant to a shift, so this is
        the same as :math:`(0, d)`.
    mapping : {"sparsemax", "entmax", "softmax"}, default="sparsemax"
        The mapping whose support is the set, i.e. the non-conformity score
        (see :func:`~sksparsemax.conformal.nonconformity_scores`).
    alpha : float, default=1.5
        The entmax parameter :math:`\alpha > 1` of ``mapping="entmax"``
        (ignored otherwise).
    coverage : float, default=0.9
        The target coverage :math:`1 - \varepsilon`, in (0, 1).
    cv : {"split", "prefit"} or int, default="split"
        ``"split"``: fit a clone of ``estimator`` on part of the data and
        calibrate on the rest (``calibration_size``). ``"prefit"``:
        ``estimator`` is already fitted; every sample passed to ``fit``
        calibrates. An int :math:`\ge 2`: that many stratified folds; the
        out-of-fold scores of all samples calibrate, and the model refitted on
        all of them predicts (cross-conformal; its guarantee is approximate,
        the exact one is for ``"split"`` and ``"prefit"``).
    calibration_size : float or int, default=0.25
        With ``cv="split"``: the share (float in (0, 1)) or number (int) of
        samples held out to calibrate (a stratified split when possible).
    class_conditional : bool, default=False
        Mondrian calibration: one threshold per class, from that class's
        calibration points, and :math:`C(x) = \{y : s(z(x), y) \le \hat
        T_y\}`; then :math:`P(y \in C(x) \mid y = c) \ge` ``coverage`` for
        every class :math:`c`.
    response_method : {"auto", "decision_function", "predict_proba"}, default="auto"
        Where the scores come from; ``"auto"``: ``decision_function`` if the
        estimator has one, otherwise ``log(predict_proba)`` (a zero
        probability is a ``-inf`` score, never in a finite-temperature set).
    random_state : int, RandomState instance or None, default=None
        Seeds the calibration split (``cv="split"``) or the folds (int ``cv``).

    Attributes
    ----------
    estimator_ : estimator object
        The fitted classifier that predicts (``estimator`` itself if
        ``cv="prefit"``).
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    temperature_ : float or ndarray of shape (n_classes,)
        The calibrated threshold :math:`\hat T` of the scores (per class if
        ``class_conditional``): a temperature for sparsemax and entmax, the
        LAC threshold on :math:`1 - p_y` for softmax. ``inf`` (with a warning)
        if the calibration set is too small for ``coverage``.
    calibration_scores_ : ndarray of shape (n_calibration,)
        The scores of the calibration points' true labels.
    n_features_in_ : int
        The number of features seen by ``estimator_``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        The feature names seen by ``estimator_`` (if it has them).

    See Also
    --------
    sksparsemax.conformal.nonconformity_scores : The scores of every label.
    sksparsemax.conformal.conformal_quantile : The calibration rule.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sksparsemax.conformal import SparseConformalClassifier
    >>> X, y = make_classification(600, n_informative=4, n_classes=4, random_state=0)
    >>> clf = SparseConformalClassifier(coverage=0.9, random_state=0).fit(X[:400], y[:400])
    >>> round(clf.temperature_, 3)
    0.568
    >>> clf.predict_set(X[400:403])
    array([[False, False,  True,  True],
           [False, False,  True, False],
           [False,  True,  True,  True]])
    >>> clf.predict_proba(X[400:403]).round(3)
    array([[0.   , 0.   , 0.41 , 0.59 ],
           [0.   , 0.   , 1.   , 0.   ],
           [0.   , 0.312, 0.365, 0.323]])
    >>> clf.predict(X[400:403])
    array([3, 2, 2])
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), None],
        "mapping": [StrOptions({"sparsemax", "entmax", "softmax"})],
        "alpha": [Interval(Real, 1, None, closed="neither")],
        "coverage": [Interval(Real, 0, 1, closed="neither")],
        "cv": [StrOptions({"split", "prefit"}), Interval(Integral, 2, None, closed="left")],
        "calibration_size": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "class_conditional": ["boolean"],
        "response_method": [StrOptions({"auto", "decision_function", "predict_proba"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        mapping="sparsemax",
        alpha=1.5,
        coverage=0.9,
        cv="split",
        calibration_size=0.25,
        class_conditional=False,
        response_method="auto",
        random_state=None,
    ):
        self.estimator = estimator
        self.mapping = mapping
        self.alpha = alpha
        self.coverage = coverage
        self.cv = cv
        self.calibration_size = calibration_size
        self.class_conditional = class_conditional
        self.response_method = response_method
        self.random_state = random_state

    def _base(self):
        return _default_estimator() if self.estimator is None else self.estimator

    def _method(self, estimator):
        if self.response_method != "auto":
            method = self.response_method
        elif hasattr(estimator, "decision_function"):
            method = "decision_function"
        else:
            method = "predict_proba"
        if not hasattr(estimator, method):
            raise ValueError(
                f"estimator {type(estimator).__name__} has no {method} method "
                f"(response_method={self.response_method!r}); SparseConformalClassifier "
                "needs decision_function or predict_proba."
            )
        return method

    def _raw_scores(self, estimator, X):
        """The scores z of every class of ``classes_`` (``-inf`` for a class the
        estimator never saw)."""
        method = self._method(estimator)
        out = getattr(estimator, method)(X)
        out = np.asarray(out, dtype=np.float64)
        if method == "decision_function":
            if out.ndim == 1 or out.shape[1] == 1:
                d = out.reshape(-1)
                out = np.column_stack([-d / 2, d / 2])
        else:
            with np.errstate(divide="ignore"):
                out = np.log(out)
        cols = _index_of(self.classes_, estimator.classes_)
        if out.ndim != 2 or out.shape[1] != cols.shape[0]:
            raise ValueError(
                f"estimator's {method} returned shape {out.shape}; expected "
                f"(n_samples, {cols.shape[0]}) for its {cols.shape[0]} classes."
            )
        Z = np.full((out.shape[0], self.classes_.shape[0]), -np.inf)
        Z[:, cols] = out
        return _checked_scores(Z, name=f"the estimator's {method}")

    def _true_scores(self, estimator, X, y_idx):
        S = get_score(self.mapping, self.alpha).scores(self._raw_scores(estimator, X))
        return S[np.arange(S.shape[0]), y_idx]

    def _split_indices(self, y):
        idx = np.arange(y.shape[0])
        kw = dict(test_size=self.calibration_size, random_state=self.random_state)
        try:  # stratified where every class allows it, else a plain shuffle
            return train_test_split(idx, stratify=y, **kw)
        except ValueError:
            return train_test_split(idx, **kw)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the estimator (unless prefit) and calibrate the temperature.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training data, in whatever form the estimator takes (pandas
            DataFrames pass through).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            The fitted meta-estimator.
        """
        X, y = indexable(X, y)
        if _num_samples(X) == 0:
            raise ValueError("Found array with 0 sample(s) while fitting SparseConformalClassifier.")
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        get_score(self.mapping, self.alpha)  # fail early on a bad alpha ...
        self._method(self._base())  # ... or an estimator without scores
        if self.cv == "prefit":
            scores, y_idx = self._fit_prefit(X, y)
        else:
            self.classes_, y_idx = np.unique(y, return_inverse=True)
            if self.classes_.shape[0] < 2:
                raise ValueError(
                    f"SparseConformalClassifier needs at least 2 classes in y; got 1 class "
                    f"({self.classes_[0]!r})."
                )
            if self.cv == "split":
                train, cal = self._split_indices(y)
                self.estimator_ = clone(self._base()).fit(
                    _safe_indexing(X, train), y[train]
                )
                scores = self._true_scores(self.estimator_, _safe_indexing(X, cal), y_idx[cal])
                y_idx = y_idx[cal]
            else:
                scores = self._cross_scores(X, y, y_idx)
                self.estimator_ = clone(self._base()).fit(X, y)
        self.calibration_scores_ = scores
        if self.class_conditional:
            self.temperature_ = class_quantiles(
                scores, y_idx, self.classes_.shape[0], self.coverage
            )
        else:
            self.temperature_ = conformal_quantile(scores, self.coverage)
        return self

    def _fit_prefit(self, X, y):
        estimator = self._base()
        check_is_fitted(estimator)
        self.estimator_ = estimator
        self.classes_ = np.asarray(estimator.classes_)
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(
                f"y holds labels the prefit estimator does not know: "
                f"{sorted(set(y[unknown].tolist()))[:5]} (its classes_ are {self.classes_})."
            )
        y_idx = _index_of(self.classes_, y)
        return self._true_scores(estimator, X, y_idx), y_idx

    def _cross_scores(self, X, y, y_idx):
        scores = np.empty(y.shape[0])
        folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        for train, test in folds.split(np.zeros(y.shape[0]), y):
            model = clone(self._base()).fit(_safe_indexing(X, train), y[train])
            scores[test] = self._true_scores(model, _safe_indexing(X, test), y_idx[test])
        return scores

    def _sets(self, X):
        check_is_fitted(self)
        Z = self._raw_scores(self.estimator_, X)
        S = get_score(self.mapping, self.alpha).scores(Z)
        T = np.asarray(self.temperature_, dtype=np.float64)
        return Z, S <= T  # T broadcasts over the columns when per class

    def predict_set(self, X):
        """Return the prediction sets, as a boolean indicator matrix.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        sets : ndarray of shape (n_samples, n_classes), dtype bool
            ``sets[i, j]`` is whether ``classes_[j]`` is in the set of sample
            ``i``: :math:`s(z(x_i), j) \\le \\hat T` (:math:`\\hat T_j` if
            ``class_conditional``).
        """
        return self._sets(X)[1]

    def predict_proba(self, X):
        """Return the calibrated sparse distribution whose support is the set.

        For sparsemax and entmax: the mapping of :math:`z(x) / T` restricted to
        the set, :math:`T = \\hat T` (the largest :math:`\\hat T_y` of the set
        if ``class_conditional``), taken as the limit from above: a label on
        the boundary (:math:`s = \\hat T`, e.g. the calibration quantile
        itself) has vanishing probability and is returned with the smallest
        positive normal float, so that ``predict_proba(X) > 0`` equals
        ``predict_set(X)`` exactly. :math:`\\hat T = 0` gives the uniform
        distribution over the labels tied at the top, :math:`\\hat T = \\infty`
        the uniform distribution over all labels. For ``mapping="softmax"``:
        softmax renormalised over the set; an empty set (possible with this
        score) has no distribution on it, and its row is the one-hot vector of
        the top score (so that every row sums to one).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The probabilities, exactly zero outside the prediction set (but
            for the empty sets of ``mapping="softmax"``).
        """
        return self._proba(*self._sets(X))

    def _proba(self, Z, in_set):
        T = np.asarray(self.temperature_, dtype=np.float64)
        if T.ndim:  # Mondrian: the largest threshold of the set's labels
            T = np.max(np.where(in_set, T, -np.inf), axis=1)
        return set_distribution(get_score(self.mapping, self.alpha), Z, in_set, T)

    def predict(self, X):
        """Predict the most probable class (ties broken by the scores).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The label of largest ``predict_proba`` (among equals, the largest
            score :math:`z`): the top label of the estimator's scores, unless
            they are tied.
        """
        Z, in_set = self._sets(X)
        P = self._proba(Z, in_set)
        top = P == P.max(axis=1, keepdims=True)
        return self.classes_[np.argmax(np.where(top, Z, -np.inf), axis=1)]

    @property
    def n_features_in_(self):
        """Number of features seen by the fitted estimator."""
        return self.estimator_.n_features_in_

    @property
    def feature_names_in_(self):
        """Names of the features seen by the fitted estimator."""
        return self.estimator_.feature_names_in_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = get_tags(self._base()).input_tags.sparse
        return tags
