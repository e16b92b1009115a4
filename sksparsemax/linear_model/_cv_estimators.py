"""The cross-validated counterparts of the estimators (the search is in :mod:`._cv`)."""

import itertools
from numbers import Integral, Real

from sklearn.utils._param_validation import StrOptions

from ..losses import FenchelYoungLoss, loss_names
from ._base import forward
from ._classifiers import (
    EntmaxClassifier,
    FenchelYoungClassifier,
    SparsemaxClassifier,
    SparseSoftmaxClassifier,
)
from ._cv import _BaseLinearCV
from ._docstrings import _cv_doc
from ._multilabel import SparsemaxMultiLabel
from ._path import check_grid


class _BaseMultiClassCV(_BaseLinearCV):
    """Base of the multi-class CV estimators: adds ``class_weight``."""

    _parameter_constraints: dict = {
        **_BaseLinearCV._parameter_constraints,
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(self, *, Cs=10, cv=None, scoring=None, refit=True, n_jobs=None,
                 fit_intercept=True, tol=1e-4, max_iter=100, class_weight=None, verbose=0,
                 solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseLinearCV))
        self.class_weight = class_weight

    def _shared_params(self):
        return {**super()._shared_params(), "class_weight": self.class_weight}


_EXAMPLE_DATA = """>>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_iris(return_X_y=True)"""


class FenchelYoungClassifierCV(_BaseMultiClassCV):
    __doc__ = _cv_doc(
        """Cross-validated :class:`FenchelYoungClassifier`: ``C`` chosen on warm-started paths.

    The counterpart of :class:`~sklearn.linear_model.LogisticRegressionCV`
    for any loss of :mod:`sksparsemax.losses` (or one of your own).

    %(cv_notes)s

    Parameters
    ----------
    loss : str or FenchelYoungLoss, default="sparsemax"
        The loss, as in :class:`FenchelYoungClassifier`.
    %(cv_parameters)s
    %(cv_class_weight)s
    %(cv_solver)s

    Attributes
    ----------
    %(cv_attributes)s

    See Also
    --------
    FenchelYoungClassifier : The plain estimator.
    sklearn.linear_model.LogisticRegressionCV : ``loss="softmax"``.

    Examples
    --------
    %(data)s
    >>> from sksparsemax.linear_model import FenchelYoungClassifierCV
    >>> clf = make_pipeline(StandardScaler(),
    ...                     FenchelYoungClassifierCV(loss="sparsemax", Cs=5))
    >>> clf.fit(X, y)[-1].C_
    1.0
    """.replace("%(data)s", _EXAMPLE_DATA)
    )

    _parameter_constraints: dict = {
        **_BaseMultiClassCV._parameter_constraints,
        "loss": [StrOptions(set(loss_names())), FenchelYoungLoss],
    }

    def __init__(self, loss="sparsemax", *, Cs=10, cv=None, scoring=None, refit=True,
                 n_jobs=None, fit_intercept=True, tol=1e-4, max_iter=100, class_weight=None,
                 verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseMultiClassCV))
        self.loss = loss

    def _estimator(self):
        return FenchelYoungClassifier(loss=self.loss, **self._shared_params())


class SparsemaxClassifierCV(_BaseMultiClassCV):
    __doc__ = _cv_doc(
        """Cross-validated :class:`SparsemaxClassifier`: ``C`` chosen on warm-started paths.

    The sparsemax counterpart of
    :class:`~sklearn.linear_model.LogisticRegressionCV`, with the same ``Cs``,
    ``cv``, ``scoring`` and ``refit``.

    %(cv_notes)s

    Parameters
    ----------
    %(cv_parameters)s
    %(cv_class_weight)s
    %(cv_solver)s

    Attributes
    ----------
    %(cv_attributes)s

    See Also
    --------
    SparsemaxClassifier : The plain estimator.
    sklearn.linear_model.LogisticRegressionCV : The softmax counterpart.

    Examples
    --------
    %(data)s
    >>> from sksparsemax.linear_model import SparsemaxClassifierCV
    >>> clf = make_pipeline(StandardScaler(), SparsemaxClassifierCV(Cs=5)).fit(X, y)
    >>> clf[-1].Cs_
    array([1.e-04, 1.e-02, 1.e+00, 1.e+02, 1.e+04])
    >>> clf[-1].C_, clf[-1].scores_.shape  # 5 folds, no other grid, 5 values of C
    (1.0, (5, 1, 5))
    >>> clf.predict_proba(X[[0, 50, 100]])
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    """.replace("%(data)s", _EXAMPLE_DATA)
    )

    def _estimator(self):
        return SparsemaxClassifier(**self._shared_params())


def _check_alpha(value):
    if not isinstance(value, Real) or not value >= 1:
        return "each alpha must be a number >= 1."
    return None


def _check_k(value):
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 2:
        return "each k must be an integer >= 2."
    return None


class EntmaxClassifierCV(_BaseMultiClassCV):
    __doc__ = _cv_doc(
        """Cross-validated :class:`EntmaxClassifier`: ``C`` (and ``alpha``) chosen on paths.

    One warm-started path over ``Cs`` per value of ``alphas`` and fold.

    %(cv_notes)s

    Parameters
    ----------
    alphas : array-like of float, default=(1.5,)
        The values of the entmax parameter to choose from, each ``>= 1``.
    %(cv_parameters)s
    %(cv_class_weight)s
    %(cv_solver)s

    Attributes
    ----------
    alpha_ : float
        The chosen ``alpha``.
    %(cv_attributes)s

    See Also
    --------
    EntmaxClassifier : The plain estimator.

    Examples
    --------
    %(data)s
    >>> from sksparsemax.linear_model import EntmaxClassifierCV
    >>> clf = make_pipeline(StandardScaler(),
    ...                     EntmaxClassifierCV(alphas=(1.25, 1.5, 2.0), Cs=3))
    >>> cv = clf.fit(X, y)[-1]
    >>> cv.param_grid_
    [{'alpha': 1.25}, {'alpha': 1.5}, {'alpha': 2.0}]
    >>> cv.scores_.shape, cv.coefs_paths_.shape  # folds, alphas, Cs (, classes, features + 1)
    ((5, 3, 3), (5, 3, 3, 3, 5))
    """.replace("%(data)s", _EXAMPLE_DATA)
    )

    _parameter_constraints: dict = {
        **_BaseMultiClassCV._parameter_constraints,
        "alphas": ["array-like"],
    }

    def __init__(self, alphas=(1.5,), *, Cs=10, cv=None, scoring=None, refit=True,
                 n_jobs=None, fit_intercept=True, tol=1e-4, max_iter=100, class_weight=None,
                 verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseMultiClassCV))
        self.alphas = alphas

    def _estimator(self):
        return EntmaxClassifier(**self._shared_params())

    def _fit_grid(self):
        alphas = check_grid("alphas", self.alphas, _check_alpha)
        return [{"alpha": float(alpha)} for alpha in alphas]


class SparseSoftmaxClassifierCV(_BaseMultiClassCV):
    __doc__ = _cv_doc(
        """Cross-validated :class:`SparseSoftmaxClassifier`: ``C`` (and ``k``) chosen on paths.

    One warm-started path over ``Cs`` per value of ``ks`` and fold.

    %(cv_notes)s

    Parameters
    ----------
    ks : array-like of int, default=(5,)
        The numbers of classes kept to choose from, each ``>= 2``.
    %(cv_parameters)s
    %(cv_class_weight)s
    %(cv_solver)s

    Attributes
    ----------
    k_ : int
        The chosen ``k``.
    %(cv_attributes)s

    See Also
    --------
    SparseSoftmaxClassifier : The plain estimator.

    Examples
    --------
    %(data)s
    >>> from sksparsemax.linear_model import SparseSoftmaxClassifierCV
    >>> clf = make_pipeline(StandardScaler(), SparseSoftmaxClassifierCV(ks=(2, 3), Cs=3))
    >>> cv = clf.fit(X, y)[-1]
    >>> sorted(cv.best_params_)
    ['C', 'k']
    """.replace("%(data)s", _EXAMPLE_DATA)
    )

    _parameter_constraints: dict = {
        **_BaseMultiClassCV._parameter_constraints,
        "ks": ["array-like"],
    }

    def __init__(self, ks=(5,), *, Cs=10, cv=None, scoring=None, refit=True, n_jobs=None,
                 fit_intercept=True, tol=1e-4, max_iter=100, class_weight=None, verbose=0,
                 solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseMultiClassCV))
        self.ks = ks

    def _estimator(self):
        return SparseSoftmaxClassifier(**self._shared_params())

    def _fit_grid(self):
        return [{"k": int(k)} for k in check_grid("ks", self.ks, _check_k)]


def _check_scale(value):
    if not isinstance(value, Real) or not value > 0 or value == float("inf"):
        return "each scale must be a positive finite number."
    return None


def _check_threshold(value):
    if value is not None and (not isinstance(value, Real) or not 0 <= value < 1):
        return "each threshold must be None or a number in [0, 1)."
    return None


class SparsemaxMultiLabelCV(_BaseLinearCV):
    __doc__ = _cv_doc(
        """Cross-validated :class:`SparsemaxMultiLabel`: ``C``, ``scale`` and ``threshold``.

    One warm-started path over ``Cs`` per fold; the prediction rule's
    ``scale`` and ``threshold`` do not change the fit, so every value of
    them is scored on the held-out fold from the one fit at each ``C``
    (:class:`~sklearn.model_selection.GridSearchCV` would refit each).

    %(cv_notes)s

    Parameters
    ----------
    loss : str or FenchelYoungLoss, default="sparsemax"
        The loss, as in :class:`SparsemaxMultiLabel`.
    scales : array-like of float, default=(1.0,)
        The values of the prediction rule's ``scale`` to choose from (the
        paper tunes 1, 1.5, ..., 5).
    thresholds : array-like of float or None, default=(None,)
        The values of the rule's ``threshold`` to choose from; the grid is
        every pair of a scale and a threshold.
    %(cv_parameters)s
    %(cv_solver)s

    Attributes
    ----------
    scale_ : float
        The chosen ``scale``.
    threshold_ : float or None
        The chosen ``threshold``.
    %(cv_attributes)s

    See Also
    --------
    SparsemaxMultiLabel : The plain estimator.

    Examples
    --------
    >>> from sklearn.datasets import make_multilabel_classification
    >>> from sksparsemax.linear_model import SparsemaxMultiLabelCV
    >>> X, Y = make_multilabel_classification(n_samples=300, n_classes=5,
    ...                                       allow_unlabeled=False, random_state=0)
    >>> cv = SparsemaxMultiLabelCV(Cs=4, scales=(1.0, 2.0, 3.0),
    ...                            scoring="f1_micro").fit(X, Y)
    >>> cv.scores_.shape  # 5 folds, 3 scales, 4 values of C: 4 fits per fold
    (5, 3, 4)
    >>> sorted(cv.best_params_)
    ['C', 'scale', 'threshold']
    """
    )

    _parameter_constraints: dict = {
        **_BaseLinearCV._parameter_constraints,
        "loss": [StrOptions(set(loss_names())), FenchelYoungLoss],
        "scales": ["array-like"],
        "thresholds": ["array-like"],
    }

    def __init__(self, loss="sparsemax", *, scales=(1.0,), thresholds=(None,), Cs=10,
                 cv=None, scoring=None, refit=True, n_jobs=None, fit_intercept=True,
                 tol=1e-4, max_iter=100, verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseLinearCV))
        self.loss = loss
        self.scales = scales
        self.thresholds = thresholds

    def _estimator(self):
        return SparsemaxMultiLabel(loss=self.loss, **self._shared_params())

    def _rule_grid(self):
        scales = check_grid("scales", self.scales, _check_scale)
        thresholds = check_grid("thresholds", self.thresholds, _check_threshold)
        return [
            {"scale": float(s), "threshold": None if t is None else float(t)}
            for s, t in itertools.product(scales, thresholds)
        ]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        return tags
