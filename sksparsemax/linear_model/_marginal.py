"""Multi-label classification with per-label marginal probabilities."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import StrOptions

from ..losses import FenchelYoungLoss, MarginalLoss, check_marginals, get_loss, loss_names
from ._base import _BaseSparseLinearClassifier, forward
from ._dask_fit import blockwise
from ._multilabel import _MultiLabelMixin


class MarginalMultiLabel(_MultiLabelMixin, _BaseSparseLinearClassifier):
    r"""Multi-label classifier with per-label marginal probabilities (exact 0s and 1s).

    One linear score per label, :math:`z = W x + b`, and per label a
    two-class Fenchel-Young loss of the label's score against the score 0
    of its absence (:class:`~sksparsemax.losses.MarginalLoss`):

    .. math::

        L(z; y) = \sum_{j=1}^{L} \ell\big((z_j, 0);\, (y_j, 1 - y_j)\big),
        \qquad \hat p_j = \hat p_\ell\big((z_j, 0)\big)_1 \in [0, 1],

    minimised over :math:`W, b` with the objective of
    :class:`~sklearn.linear_model.LogisticRegression`,
    :math:`\frac{1}{\sum_i s_i} \sum_i s_i L(W x_i + b; y_i) + \frac{1}{2 C
    \sum_i s_i} \|W\|_F^2`. The labels are separate problems that share
    ``C`` (binary relevance), fitted in one pass over the data. With
    ``loss="sparsemax"`` (default) the marginal of label :math:`j` is
    :math:`\operatorname{clip}((z_j + 1)/2, 0, 1)`: exactly 0 for a label
    the model rules out, exactly 1 for one it is sure of, and the loss is
    the modified Huber loss; with ``loss="softmax"`` the marginal is the
    sigmoid of :math:`z_j` and the model is one-vs-rest logistic regression
    (the coefficients of ``OneVsRestClassifier(LogisticRegression(C=C))``).

    Where :class:`SparsemaxMultiLabel` estimates label *proportions* (rows
    summing to one: the 2016 model), this model estimates the probability of
    each label on its own, which is scikit-learn's multi-label convention.

    Targets: ``fit(X, Y)`` takes a binary indicator matrix (dense or
    scipy.sparse) or per-label marginal probabilities (entries in
    ``[0, 1]``). A 1-D ``y`` of class labels (one label per sample) gives the
    multi-class classifier of the loss, as ``FenchelYoungClassifier(loss)``:
    one score per class and probabilities on the simplex (per-class
    marginals would tie at 1 for several classes, and ``predict`` could
    then not agree with both ``predict_proba`` and ``decision_function``).

    Parameters
    ----------
    C : float, default=1.0
        Inverse of the L2 regularisation strength, as in
        :class:`~sklearn.linear_model.LogisticRegression`. Must be positive.
    loss : str or FenchelYoungLoss, default="sparsemax"
        The two-class loss of every label: a name of
        :func:`~sksparsemax.losses.loss_names` or an instance (e.g.
        ``EntmaxLoss(alpha=1.5)``, whose marginals also reach 0 and 1).
    fit_intercept : bool, default=True
        Whether to fit one (unpenalised) intercept per label.
    tol : float, default=1e-4
        Stop the solver when the largest entry of the gradient is at most
        ``tol``.
    max_iter : int, default=100
        Maximum number of solver iterations.
    warm_start : bool, default=False
        If True, start from ``coef_`` and ``intercept_`` of the previous fit.
    verbose : int, default=0
        If positive, print the solver's iteration and objective to stderr.
    solver : {"lbfgs", "newton-cg"}, default="lbfgs"
        The algorithm, as for :class:`SparsemaxClassifier`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_labels,)
        ``np.arange(n_labels)`` for a 2-D ``Y`` (its column names for a
        pandas DataFrame); the class labels for a 1-D ``y``.
    coef_ : ndarray of shape (n_labels, n_features)
        Weights, one row per label.
    intercept_ : ndarray of shape (n_labels,)
        Intercepts (zeros when ``fit_intercept=False``).
    n_iter_ : int
        Number of solver iterations run.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during fit, when ``X`` has string column
        names (pandas).

    See Also
    --------
    SparsemaxMultiLabel : Label proportions (rows summing to one).
    sklearn.multiclass.OneVsRestClassifier : One classifier per label.

    Notes
    -----
    :meth:`predict_proba` returns, for a 2-D ``Y``, one ``(n_samples, 2)``
    array per label (the probabilities of absence and presence), the form of
    :class:`~sklearn.multioutput.MultiOutputClassifier` and the trees:
    scikit-learn expects an ``(n_samples, n_labels)`` array to lie strictly
    inside ``(0, 1)``, which exact 0s and 1s do not. :meth:`predict_marginals`
    gives the marginals as one ``(n_samples, n_labels)`` array. For the same
    reason :meth:`decision_function` exists only after a fit on a 1-D
    ``y``.

    References
    ----------
    .. [1] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sklearn.datasets import make_multilabel_classification
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax.linear_model import MarginalMultiLabel
    >>> X, Y = make_multilabel_classification(n_samples=300, n_classes=4,
    ...                                       random_state=0)
    >>> clf = make_pipeline(StandardScaler(), MarginalMultiLabel())
    >>> clf.fit(X[:200], Y[:200]).predict(X[200:203])
    array([[0, 0, 1, 0],
           [1, 0, 1, 0],
           [1, 1, 0, 1]])
    >>> Y[200:203]
    array([[0, 0, 1, 0],
           [1, 0, 1, 0],
           [1, 0, 0, 1]])
    >>> clf[-1].predict_marginals(clf[0].transform(X[200:203])).round(2)
    array([[0.41, 0.  , 1.  , 0.01],
           [1.  , 0.  , 0.82, 0.  ],
           [0.6 , 0.89, 0.43, 1.  ]])
    """

    _parameter_constraints: dict = {
        **_BaseSparseLinearClassifier._parameter_constraints,
        "loss": [StrOptions(set(loss_names())), FenchelYoungLoss],
    }

    def __init__(self, C=1.0, *, loss="sparsemax", fit_intercept=True, tol=1e-4,
                 max_iter=100, warm_start=False, verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseSparseLinearClassifier))
        self.loss = loss

    def _make_loss(self, n_classes):
        if getattr(self, "_multilabel", True):
            return MarginalLoss(self.loss)
        return get_loss(self.loss)

    def _encode_target(self, y):
        if y.ndim == 2 and y.shape[1] > 1:
            Y, _ = self._encode_label_block(y)
            self._multilabel = True
            return self._label_classes(Y.shape[1]), Y, None
        return self._encode_class_labels(y)

    @staticmethod
    def _encode_label_block(Y):
        """Per-label probabilities of (a block of) ``Y``; every row kept."""
        Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        if Y.dtype.kind not in "biuf":
            raise ValueError(
                "Y must be a binary indicator matrix or per-label "
                f"probabilities in [0, 1]; got values of dtype {Y.dtype}."
            )
        return check_marginals(Y, *Y.shape).proba, None

    def _check_target(self, target, n_samples, n_classes):
        if self._multilabel:
            return check_marginals(target, n_samples, n_classes)
        return super()._check_target(target, n_samples, n_classes)

    @blockwise
    def predict_marginals(self, X):
        """Marginal probability of each label (exact 0s and 1s for sparsemax).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        marginals : ndarray of shape (n_samples, n_labels)
            :math:`\\hat p_j` in ``[0, 1]``; a label is predicted where it is
            above 1/2 (where its score is positive). For a 1-D ``y``, the
            class probabilities (:meth:`predict_proba`).
        """
        return self._make_loss(len(self.classes_)).predict_proba(self._raw_scores(X))

    def _fitted_on_classes(self):
        return not getattr(self, "_multilabel", False)

    @available_if(_fitted_on_classes)
    @blockwise
    def decision_function(self, X):
        """Scores of the classes (only after a fit on a 1-D ``y``).

        After a fit on a 2-D ``Y`` the method is absent, as for
        :class:`~sklearn.multioutput.MultiOutputClassifier`: scikit-learn
        reads a multi-label ``decision_function`` next to a list-valued
        ``predict_proba`` as an (n_samples, n_labels) probability array. The
        labels' scores are then ``X @ coef_.T + intercept_`` (positive
        exactly for the predicted labels).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            ``X @ coef_.T + intercept_``; for two classes, the second score
            minus the first.
        """
        return super().decision_function(X)

    @blockwise
    def predict(self, X):
        """Predict the labels (2-D ``Y``) or the classes (1-D ``y``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        Y_pred : ndarray of shape (n_samples, n_labels) or (n_samples,)
            Indicator matrix (int, 0/1) of the labels with a positive score
            (marginal above 1/2); for a 1-D ``y``, the class of highest
            score.
        """
        Z = self._raw_scores(X)
        if not self._multilabel:
            return self.classes_[np.argmax(Z, axis=1)]
        return (Z > 0).astype(np.int64)

    def predict_proba(self, X):
        """Per-label probabilities (2-D ``Y``) or class probabilities (1-D ``y``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : list of ndarray of shape (n_samples, 2), or ndarray of shape (n_samples, n_classes)
            For a 2-D ``Y``: one array per label, columns ``1 - p_j`` and
            ``p_j`` (see :meth:`predict_marginals`). For a 1-D ``y``: the
            loss's class probabilities (rows on the simplex).
        """
        if not getattr(self, "_multilabel", False):  # also: unfitted
            return super().predict_proba(X)
        P = self.predict_marginals(X)
        # np.stack: also for the lazy marginals of a Dask X.
        return [np.stack([1 - P[:, j], P[:, j]], axis=1) for j in range(P.shape[1])]

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`; ``-inf`` where it is exactly 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : list of ndarray or ndarray
            The logarithm of each array of :meth:`predict_proba`.
        """
        if not getattr(self, "_multilabel", False):  # also: unfitted
            return super().predict_log_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(p) for p in self.predict_proba(X)]
