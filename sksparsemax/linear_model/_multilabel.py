"""Multi-label classification and label-proportion estimation (sparsemax)."""

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import column_or_1d, validate_data

from ..losses import FenchelYoungLoss, get_loss, loss_names
from ..losses._targets import SUM_TOL, SUM_TOL_FLOAT32
from ._base import _ACCEPT_SPARSE, _DTYPES, _BaseSparseLinearClassifier, forward
from ._dask_fit import blockwise


def _first_position(mask):
    """(row, column) of the first True entry of a 2-D boolean array."""
    i, j = np.unravel_index(int(np.flatnonzero(mask.ravel())[0]), mask.shape)
    return int(i), int(j)


def label_proportions(Y):
    """Target proportions from an indicator matrix or a proportion matrix.

    Parameters
    ----------
    Y : {ndarray, sparse matrix} of shape (n_samples, n_labels)
        A binary indicator matrix (every entry 0 or 1) or label proportions
        (non-negative rows summing to one). Rows of zeros have no label.

    Returns
    -------
    Q : ndarray of shape (n_samples, n_labels), float64
        Indicator rows made uniform over their labels; proportion rows as
        given. Rows without a label stay zero.
    labelled : ndarray of shape (n_samples,), bool
        Rows with at least one label.

    Raises
    ------
    ValueError
        If ``Y`` has a non-numeric, negative, non-finite or (when not binary)
        larger than one entry (the message names its row and column), or if it
        is not binary and a row with a label does not sum to one (the message
        names the row and its sum).
    """
    Y = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    if Y.dtype.kind == "b":
        Y = Y.astype(np.float64)
    elif Y.dtype.kind not in "iuf":
        try:
            Y = Y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                "Y must be a binary indicator matrix or a matrix of label "
                f"proportions; got non-numeric values (dtype {Y.dtype})."
            ) from None
    finite = np.isfinite(Y)
    if not finite.all():
        i, j = _first_position(~finite)
        raise ValueError(f"Y must be finite; Y[{i}, {j}] = {Y[i, j].item()!r}.")
    negative = Y < 0
    if negative.any():
        i, j = _first_position(negative)
        raise ValueError(
            "Y must be a binary indicator matrix or a matrix of label "
            f"proportions, with no negative entry; Y[{i}, {j}] = {Y[i, j].item()!r}."
        )
    Q = np.array(Y, dtype=np.float64, order="C")  # a copy, C order whatever Y was
    sums = Q.sum(axis=1)
    labelled = sums > 0
    binary = np.all((Y == 0) | (Y == 1))
    if not binary:
        above_one = Y > 1
        if above_one.any():
            i, j = _first_position(above_one)
            raise ValueError(
                "Y must be a binary indicator matrix (entries 0 or 1) or a "
                "matrix of label proportions (entries in [0, 1], rows summing "
                f"to one); Y[{i}, {j}] = {Y[i, j].item()!r}."
            )
        low_precision = Y.dtype.kind == "f" and Y.dtype.itemsize < 8
        tol = SUM_TOL_FLOAT32 if low_precision else SUM_TOL
        bad = labelled & (np.abs(sums - 1) > tol)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            non_binary = np.flatnonzero((Y[i] != 0) & (Y[i] != 1))
            j = int(non_binary[0]) if non_binary.size else int(np.flatnonzero(Y[i])[0])
            raise ValueError(
                "Y must be a binary indicator matrix (entries 0 or 1) or a "
                "matrix of label proportions (non-negative rows summing to "
                f"one); row {i} sums to {sums[i].item()!r} and has the value "
                f"{Y[i, j].item()!r} in column {j}."
            )
    Q[labelled] /= sums[labelled, None]
    return Q, labelled


class _MultiLabelMixin:
    """What the multi-label estimators share: a 2-D ``Y`` (a DataFrame's
    column names become ``classes_``) and scikit-learn's multi-label tags."""

    def _validate_fit_data(self, X, y):
        # A DataFrame Y names its labels: keep the names for classes_ (the
        # validated Y is a bare array).
        columns = getattr(y, "columns", None)
        self._label_names = None if columns is None else np.asarray(columns, dtype=object)
        return validate_data(
            self,
            X,
            y,
            accept_sparse=_ACCEPT_SPARSE,
            dtype=_DTYPES,
            multi_output=True,
        )

    def _encode_class_labels(self, y):
        """A single column (or a 1-D ``y``): class labels, one per sample."""
        if sp.issparse(y):
            y = y.toarray()
        y = column_or_1d(y, warn=True)
        self._multilabel = False
        return super()._encode_target(y)

    def _encode_target_blocks(self, y, unique, columns=None):
        # A 2-D Dask Y: classes from its shape (and a DataFrame's column
        # names); each block encoded by the estimator's _encode_label_block.
        if y.ndim == 2 and y.shape[1] > 1:
            self._label_names = None if columns is None else np.asarray(columns, dtype=object)
            self._multilabel = True
            return self._label_classes(y.shape[1]), self._encode_label_block
        self._multilabel = False
        return super()._encode_target_blocks(y, unique)

    def _label_classes(self, n_labels):
        """``classes_`` of a 2-D ``Y``: its column names, or 0..n_labels-1."""
        names = self._label_names
        return np.arange(n_labels) if names is None else names

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_label = True
        return tags


class SparsemaxMultiLabel(_MultiLabelMixin, _BaseSparseLinearClassifier):
    r"""Multi-label classifier and label-proportion estimator (sparsemax).

    The multi-label model of Martins & Astudillo (2016): one linear score per
    label, :math:`z = W x + b`, fitted so that :math:`\operatorname{sparsemax}(z)`
    matches the label proportions :math:`q` of each sample, with the
    sparsemax loss

    .. math::

        L(z; q) = -q^\top z + \tfrac12 \sum_{j \in S(z)} (z_j^2 - \tau(z)^2)
                  + \tfrac12 \|q\|^2,

    which is zero iff :math:`\operatorname{sparsemax}(z) = q`. With
    ``loss="softmax"`` it is the paper's softmax baseline
    :math:`L(z; q) = \log\sum_j e^{z_j} - q^\top z` (fitted proportions
    :math:`\operatorname{softmax}(z)`). The coefficients minimise, by L-BFGS or Newton-CG (``solver``),

    .. math::

        \frac{1}{\sum_i s_i} \sum_{i} s_i\, L(W x_i + b;\, q_i)
        + \frac{1}{2 C \sum_i s_i} \|W\|_F^2

    over the samples that have a label (intercepts unpenalised).

    Targets: ``fit(X, Y)`` takes a binary indicator matrix (dense or
    scipy.sparse; a row with labels :math:`S` becomes the uniform proportions
    :math:`q = 1_S / |S|`) or a matrix of label proportions (non-negative rows
    summing to one). Rows with no label carry no proportion: they are left
    out of the fit, with a ``UserWarning`` that says how many. A 1-D ``y`` of
    class labels is also accepted (one label per sample: the model is then a
    multi-class classifier whose :meth:`predict` returns labels).

    Predictions: :meth:`predict_proba` returns the estimated proportions
    :math:`\operatorname{sparsemax}(z)` (``softmax(z)`` for
    ``loss="softmax"``); :meth:`predict` returns the indicator matrix of the
    labels in the support of :math:`\operatorname{sparsemax}(\text{scale}
    \cdot z)` (the paper's rule; never empty), or for ``loss="softmax"`` of
    the labels with :math:`\operatorname{softmax}(z)_k > \text{threshold}`
    and always at least the top-scoring label. A ``threshold`` with
    ``loss="sparsemax"`` predicts the labels with
    :math:`\operatorname{sparsemax}(\text{scale} \cdot z)_k >
    \text{threshold}` (and the top-scoring label): the softmax baseline's
    rule applied to sparsemax's proportions, which adapts the number of
    labels to how confident the model is about a sample.

    Parameters
    ----------
    C : float, default=1.0
        Inverse of the L2 regularisation strength, as in
        :class:`~sklearn.linear_model.LogisticRegression`. Must be positive.
    loss : str or FenchelYoungLoss, default="sparsemax"
        The loss: ``"sparsemax"``, ``"softmax"`` (the paper's baseline), any
        other name of :func:`~sksparsemax.losses.loss_names` (``"entmax"``,
        ``"sparse_softmax"``, ...) with its default parameters, or any loss
        instance (e.g. ``EntmaxLoss(alpha=1.5)``, or one of your own). For a
        loss other than sparsemax and softmax, a label is predicted where
        its proportion ``predict_proba(scale * z)`` exceeds ``threshold`` (0
        when None: the support), and the top-scoring label always; the
        margins are those proportions minus the threshold.
    scale : float, default=1.0
        The multiplier :math:`t` of the scores in the sparsemax prediction
        rule (the paper tunes :math:`t \in \{1, 1.5, \dots, 5\}`): larger
        values predict fewer labels. Used by every loss but ``"softmax"``
        (whose rule is the threshold on ``softmax(z)``).
    threshold : float, default=None
        The proportion threshold :math:`p_0` of the prediction rule: a label
        is predicted where its estimated proportion exceeds :math:`p_0`
        (and the top-scoring label always). None means the paper's rules:
        :math:`p_0 = 0` for ``loss="sparsemax"`` (the support of
        :math:`\operatorname{sparsemax}(\text{scale} \cdot z)`) and
        :math:`p_0 = 1/K` for ``loss="softmax"`` with :math:`K` labels (the
        paper tunes :math:`p_0 \in \{1/K, \dots, 10/K\}` for softmax).
    fit_intercept : bool, default=True
        Whether to fit one (unpenalised) intercept per label.
    tol : float, default=1e-4
        Stop the solver when the largest entry of the gradient is at most
        ``tol``.
    max_iter : int, default=100
        Maximum number of solver iterations (Newton iterations for
        ``solver="newton-cg"``).
    warm_start : bool, default=False
        If True, start from ``coef_`` and ``intercept_`` of the previous fit.
    verbose : int, default=0
        If positive, print the solver's iteration and objective to stderr.
    solver : {"lbfgs", "newton-cg"}, default="lbfgs"
        The algorithm; both minimise the same objective. ``"lbfgs"``:
        L-BFGS on whitened coefficients (an exact change of
        variables; with twice as many features as samples, in the row space
        of ``X``; see the user guide's "Choosing the solver").
        ``"newton-cg"``: inexact Newton, truncated conjugate gradients on
        Hessian-vector products of the objective (the generalized Hessian
        for sparsemax) with an Armijo line search; no L-BFGS history.

    Attributes
    ----------
    classes_ : ndarray of shape (n_labels,)
        ``np.arange(n_labels)`` for a 2-D ``Y`` (its column names for a
        pandas DataFrame); the class labels for a 1-D ``y``.
    coef_ : ndarray of shape (n_labels, n_features)
        Weights, one row per label (float32 when ``X`` is float32).
    intercept_ : ndarray of shape (n_labels,)
        Intercepts (zeros when ``fit_intercept=False``).
    n_iter_ : int
        Number of solver iterations run (Newton iterations for
        ``solver="newton-cg"``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during fit, when ``X`` has string column
        names (pandas).

    See Also
    --------
    sklearn.multiclass.OneVsRestClassifier : One logistic regression per label.
    sklearn.linear_model.LogisticRegression : Softmax over classes.
    SparsemaxClassifier : The multi-class sparsemax classifier.
    MarginalMultiLabel : Per-label marginal probabilities.

    Notes
    -----
    ``predict_proba`` returns proportions: each row sums to one over the
    labels (with exact zeros for ``loss="sparsemax"``). They are not the
    per-label marginal probabilities that scikit-learn's one-vs-rest
    multi-label classifiers return (:class:`MarginalMultiLabel` gives
    those, with exact 0s and 1s). ``decision_function`` returns signed
    margins, positive exactly for the predicted labels (see
    :meth:`decision_function`); the raw scores are
    ``X @ coef_.T + intercept_``. The paper standardises the features (use a
    :class:`~sklearn.preprocessing.StandardScaler` in a pipeline) and tunes
    ``C`` with ``scale`` or ``threshold`` by cross-validation.

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From Softmax to Sparsemax:
       A Sparse Model of Attention and Multi-Label Classification", ICML 2016.

    Examples
    --------
    >>> from sklearn.datasets import make_multilabel_classification
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax.linear_model import SparsemaxMultiLabel
    >>> X, Y = make_multilabel_classification(n_samples=300, n_classes=5,
    ...                                       allow_unlabeled=False,
    ...                                       random_state=0)
    >>> clf = make_pipeline(StandardScaler(), SparsemaxMultiLabel())
    >>> clf.fit(X[:200], Y[:200]).predict(X[200:203])
    array([[1, 1, 1, 0, 1],
           [1, 1, 0, 1, 0],
           [1, 1, 1, 1, 0]])
    >>> Y[200:203]
    array([[1, 1, 1, 1, 1],
           [0, 1, 0, 1, 0],
           [0, 0, 1, 1, 0]])
    >>> clf.predict_proba(X[200:203]).round(2)
    array([[0.15, 0.5 , 0.32, 0.  , 0.03],
           [0.22, 0.54, 0.  , 0.24, 0.  ],
           [0.14, 0.15, 0.39, 0.31, 0.  ]])
    """

    _parameter_constraints: dict = {
        **_BaseSparseLinearClassifier._parameter_constraints,
        "loss": [StrOptions(set(loss_names())), FenchelYoungLoss],
        "scale": [Interval(Real, 0, None, closed="neither")],
        "threshold": [Interval(Real, 0, 1, closed="left"), None],
    }

    def __init__(self, C=1.0, *, loss="sparsemax", scale=1.0, threshold=None,
                 fit_intercept=True, tol=1e-4, max_iter=100, warm_start=False, verbose=0,
                 solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseSparseLinearClassifier))
        self.loss = loss
        self.scale = scale
        self.threshold = threshold

    def _encode_target(self, y):
        if y.ndim == 2 and y.shape[1] > 1:
            Q, keep = self._encode_label_block(y)
            self._report_dropped(0 if keep is None else int(np.count_nonzero(~keep)),
                                 Q.shape[0], stacklevel=5)
            self._multilabel = True
            return self._label_classes(Q.shape[1]), Q, keep
        return self._encode_class_labels(y)

    @staticmethod
    def _encode_label_block(Y):
        """Label proportions of (a block of) ``Y`` and the labelled rows (None: all)."""
        Q, labelled = label_proportions(Y)
        return Q, None if labelled.all() else labelled

    def _report_dropped(self, n_dropped, n_samples, stacklevel=7):
        if n_dropped == n_samples:
            raise ValueError(
                "Y has no label at all (every row is zero): there is "
                "nothing to fit."
            )
        if n_dropped:
            warnings.warn(
                f"{n_dropped} of {n_samples} rows of Y have no label "
                "(all zeros): they carry no label proportion and are left "
                "out of the fit.",
                UserWarning,
                stacklevel=stacklevel,
            )

    def _make_loss(self, n_classes):
        return get_loss(self.loss)

    def _margins(self, Z):
        """Signed margins of the prediction rule: positive iff predicted.

        All three rules read the loss's mapping.
        """
        loss = self._make_loss(Z.shape[1])
        name = loss.name
        if name == "softmax":
            threshold = 1.0 / Z.shape[1] if self.threshold is None else self.threshold
            with np.errstate(divide="ignore"):
                return np.log(loss.predict_proba(Z)) - np.log(threshold)
        Zs = self.scale * Z
        P = loss.predict_proba(Zs)
        if loss.row_sum != 1.0:  # proportions, as predict_proba returns them
            P /= loss.row_sum
        if name == "sparsemax":
            # sparsemax(z) = max(z - tau, 0): tau = z_top - p_top, as the
            # top-scoring label is always in the support.
            top = np.argmax(Zs, axis=1)
            rows = np.arange(Zs.shape[0])
            Zs -= (Zs[rows, top] - P[rows, top])[:, None]
            P = Zs
        if self.threshold:
            P -= self.threshold
        return P

    @blockwise
    def decision_function(self, X):
        """Signed margins of the labels (positive for the predicted labels).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        margins : ndarray of shape (n_samples, n_labels) or (n_samples,)
            With scores ``z = X @ coef_.T + intercept_``: for
            ``loss="sparsemax"``, ``scale * z - tau(scale * z) - threshold``
            (``threshold`` None counts as 0), the margin to the sparsemax
            threshold, so that without ``threshold`` ``sparsemax(scale * z) =
            max(margins, 0)``; for ``loss="softmax"``,
            ``log(softmax(z)) - log(threshold)``. A label is predicted where
            its margin is positive (and the label of largest margin always).
            Within a sample the margins order the labels like the scores. When fitted on a 1-D ``y``: the scores,
            or for two classes their difference, as for
            :class:`SparsemaxClassifier`.
        """
        if getattr(self, "_multilabel", False):
            return self._margins(self._raw_scores(X))
        return super().decision_function(X)

    @blockwise
    def predict(self, X):
        """Predict the labels of each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        Y_pred : ndarray of shape (n_samples, n_labels) or (n_samples,)
            Indicator matrix (int, 0/1) of the labels in the support of
            ``sparsemax(scale * z)`` (with ``threshold``: of the labels with
            ``sparsemax(scale * z) > threshold``), or for ``loss="softmax"``
            of the labels with ``softmax(z) > threshold``, plus the
            top-scoring label; that is, of the labels with a positive
            :meth:`decision_function`, and the label of largest margin. When
            fitted on a 1-D ``y``: the labels of highest score.
        """
        Z = self._raw_scores(X)
        if not self._multilabel:
            return self.classes_[np.argmax(Z, axis=1)]
        Y = self._margins(Z) > 0
        # The top-scoring label always (already so for the sparsemax support,
        # where it has a positive proportion).
        Y[np.arange(Z.shape[0]), np.argmax(Z, axis=1)] = True
        return Y.astype(np.int64)

    @blockwise
    def predict_proba(self, X):
        """Estimated label proportions.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proportions : ndarray of shape (n_samples, n_labels)
            ``sparsemax(z)`` (exact zeros), or ``softmax(z)`` for
            ``loss="softmax"``; every row sums to one.
        """
        return super().predict_proba(X)
