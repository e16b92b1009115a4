"""Multi-class linear classifiers with sparse probabilities."""

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from ..losses import FenchelYoungLoss, get_loss, loss_names
from ._base import _BaseSparseLinearClassifier, forward
from ._docstrings import _doc

class _BaseMultiClass(_BaseSparseLinearClassifier):
    """Base of the multi-class classifiers: adds ``class_weight``."""

    _parameter_constraints: dict = {
        **_BaseSparseLinearClassifier._parameter_constraints,
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(self, *, C=1.0, fit_intercept=True, tol=1e-4, max_iter=100,
                 class_weight=None, warm_start=False, verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseSparseLinearClassifier))
        self.class_weight = class_weight


class FenchelYoungClassifier(_BaseMultiClass):
    __doc__ = _doc(
        r"""Linear classifier trained with any Fenchel-Young loss.

    The generic estimator behind the named classifiers: the scores
    :math:`z = W x + b` are fitted with the loss ``loss`` (a name, or any
    :class:`~sksparsemax.losses.FenchelYoungLoss`, including one you write),

    .. math::

        L(z; y) = \Omega^*(z) + \Omega(e_y) - z_y, \qquad
        \nabla_z L = \hat p(z) - e_y,

    and :meth:`predict_proba` returns the loss's mapping :math:`\hat p(W x +
    b)`. ``FenchelYoungClassifier(loss="sparsemax")`` is
    :class:`SparsemaxClassifier`; ``loss=EntmaxLoss(alpha)`` is
    :class:`EntmaxClassifier`; ``loss=SparseSoftmaxLoss(k)`` is
    :class:`SparseSoftmaxClassifier`. A loss that is not differentiable
    everywhere (``loss.is_smooth(n_classes)`` False, e.g. top-k) gets the
    solver safeguards described in the user guide ("How the fit runs").

    %(objective)s

    Parameters
    ----------
    loss : str or FenchelYoungLoss, default="sparsemax"
        The loss: a name of :func:`~sksparsemax.losses.loss_names`
        (``"sparsemax"``, ``"softmax"``, ``"entmax"`` with alpha = 1.5,
        ``"sparse_softmax"`` with k = 5, ``"normmax"`` with alpha = 2,
        ``"budget_sparsemax"`` with budget = 2), or a loss instance (for
        other parameters, or a loss of your own). ``solver="newton-cg"``
        needs its ``jacobian_product``.

    %(parameters)s

    Attributes
    ----------
    %(attributes)s

    See Also
    --------
    sksparsemax.losses.FenchelYoungLoss : How to write a loss.
    SparsemaxClassifier : ``loss="sparsemax"``.
    sklearn.linear_model.LogisticRegression : ``loss="softmax"``.

    References
    ----------
    .. [1] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax import FenchelYoungClassifier
    >>> from sksparsemax.losses import EntmaxLoss
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(),
    ...                     FenchelYoungClassifier(loss=EntmaxLoss(alpha=1.5)))
    >>> clf.fit(X, y).predict_proba(X[[0, 50, 100]]).round(3)
    array([[1.   , 0.   , 0.   ],
           [0.   , 0.933, 0.067],
           [0.   , 0.   , 1.   ]])
    """
    )

    _parameter_constraints: dict = {
        **_BaseMultiClass._parameter_constraints,
        "loss": [StrOptions(set(loss_names())), FenchelYoungLoss],
    }

    def __init__(self, loss="sparsemax", *, C=1.0, fit_intercept=True, tol=1e-4, max_iter=100,
                 class_weight=None, warm_start=False, verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseMultiClass))
        self.loss = loss

    def _make_loss(self, n_classes):
        return get_loss(self.loss)


class SparsemaxClassifier(_BaseMultiClass):
    __doc__ = _doc(
        r"""Linear classifier trained with the sparsemax loss.

    The multi-class sparsemax loss of Martins & Astudillo (2016),

    .. math::

        L(z; y) = -z_y + \tfrac12 \sum_{j \in S(z)} (z_j^2 - \tau(z)^2)
                  + \tfrac12,

    is convex and smooth with gradient :math:`\operatorname{sparsemax}(z) -
    e_y`; it is zero as soon as the true class leads every other score by 1
    (for two classes it is the modified Huber loss of :math:`z_1 - z_0`).
    :meth:`predict_proba` returns :math:`\operatorname{sparsemax}(W x + b)`,
    which has exact zeros: classes the model rules out get probability 0.

    %(objective)s

    Parameters
    ----------
    %(parameters)s

    Attributes
    ----------
    %(attributes)s

    See Also
    --------
    sklearn.linear_model.LogisticRegression : The softmax counterpart.
    EntmaxClassifier : The alpha-entmax family (``alpha=2`` is this model).
    SparseSoftmaxClassifier : Top-k sparse-softmax.
    sksparsemax.losses.SparsemaxLoss : The loss.

    Notes
    -----
    ``decision_function`` returns the scores ``X @ coef_.T + intercept_``,
    or for a binary problem the difference of the two columns (shape
    (n_samples,)), as scikit-learn's scorers expect. ``predict_log_proba``
    is ``log(predict_proba)``, ``-inf`` where the probability is exactly 0.

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From Softmax to Sparsemax:
       A Sparse Model of Attention and Multi-Label Classification", ICML 2016.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax.linear_model import SparsemaxClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), SparsemaxClassifier()).fit(X, y)
    >>> clf.predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> clf.predict_proba(X[[0, 50, 100]])
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    >>> round(clf.score(X, y), 2)
    0.98
    """
    )

    def _make_loss(self, n_classes):
        return get_loss("sparsemax")


class EntmaxClassifier(_BaseMultiClass):
    __doc__ = _doc(
        r"""Linear classifier trained with the alpha-entmax loss.

    The Fenchel-Young loss of :math:`\alpha`-entmax (Peters, Niculae &
    Martins, 2019),

    .. math::

        L_\alpha(z; y) = (p - e_y)^\top z + H^T_\alpha(p), \qquad
        p = \operatorname{entmax}_\alpha(z),

    with gradient :math:`p - e_y`, for any :math:`\alpha \ge 1`:
    :math:`\alpha = 1` is the softmax (multinomial logistic) loss and
    :math:`\alpha = 2` the sparsemax loss; in between, :math:`\alpha = 1.5`
    gives sparse yet smooth probabilities. :meth:`predict_proba` returns
    :math:`\operatorname{entmax}_\alpha(W x + b)`. ``alpha`` is a
    constructor parameter, so it can be tuned by grid search.

    %(objective)s

    Parameters
    ----------
    alpha : float, default=1.5
        The entmax parameter, ``alpha >= 1``.

    %(parameters)s

    Attributes
    ----------
    %(attributes)s

    See Also
    --------
    sklearn.linear_model.LogisticRegression : ``alpha=1``.
    SparsemaxClassifier : ``alpha=2``.
    sksparsemax.losses.EntmaxLoss : The loss.

    Notes
    -----
    ``decision_function`` returns the scores (for a binary problem their
    difference, shape (n_samples,)); ``predict_log_proba`` is
    ``log(predict_proba)``, ``-inf`` where the probability is exactly 0
    (never for ``alpha=1``).

    References
    ----------
    .. [1] B. Peters, V. Niculae and A. F. T. Martins, "Sparse
       Sequence-to-Sequence Models", ACL 2019.
    .. [2] M. Blondel, A. F. T. Martins and V. Niculae, "Learning with
       Fenchel-Young Losses", JMLR 21(35), 2020.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax.linear_model import EntmaxClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), EntmaxClassifier(alpha=1.5))
    >>> clf.fit(X, y).predict(X[[0, 50, 100]])
    array([0, 1, 2])
    >>> clf.predict_proba(X[[0, 50, 100]]).round(3)
    array([[1.   , 0.   , 0.   ],
           [0.   , 0.933, 0.067],
           [0.   , 0.   , 1.   ]])
    """
    )

    _parameter_constraints: dict = {
        **_BaseMultiClass._parameter_constraints,
        "alpha": [Interval(Real, 1, None, closed="left")],
    }

    def __init__(self, alpha=1.5, *, C=1.0, fit_intercept=True, tol=1e-4, max_iter=100,
                 class_weight=None, warm_start=False, verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseMultiClass))
        self.alpha = alpha

    def _make_loss(self, n_classes):
        return get_loss("entmax", alpha=self.alpha)


class SparseSoftmaxClassifier(_BaseMultiClass):
    __doc__ = _doc(
        r"""Linear classifier trained with the top-k sparse-softmax loss.

    With :math:`\Omega_k(z)` the indices of the :math:`k` largest scores, the
    loss of Sun et al. (2021) is

    .. math::

        L_k(z; y) = \log \sum_{j \in \Omega_k(z)} e^{z_j} - z_y,

    convex and piecewise smooth, with gradient
    :math:`\operatorname{sparse\_softmax}_k(z) - e_y` away from ties at the
    k-th score (there, the lowest class indices are kept). :meth:`predict_proba`
    is the softmax over the :math:`k` largest scores and 0 elsewhere, so at
    most ``k`` classes get a positive probability. For ``k >= n_classes`` the
    loss is the softmax cross-entropy and the model is the one of
    :class:`~sklearn.linear_model.LogisticRegression` at the same ``C``.

    %(objective)s

    Initialisation: the weights start at 0 and the intercepts at the log of
    the class frequencies (the softmax intercept-only optimum), where every
    score of a sample is equal when the classes are balanced: a tie (a kink)
    of the top-k loss for ``k < n_classes``. Unless it warm starts, the fit
    therefore begins with a few (5) L-BFGS iterations on the softmax loss,
    then minimises the top-k loss from there; the objective is convex, so
    this only chooses the starting point. ``n_iter_`` counts the iterations
    of both phases. The warm-up runs L-BFGS for either ``solver``. With
    ``solver="newton-cg"``, Newton's steps stall on those kinks (its
    Hessian does not see them): when two consecutive line searches cut the
    step to 1/16 or less, L-BFGS finishes with the remaining iterations
    (also counted in ``n_iter_``).

    Convergence: for ``k < n_classes`` the loss is not differentiable where
    the k-th and the (k+1)-th scores of a sample tie, and the minimiser often
    lies on such a kink, where the gradient does not vanish. Besides the
    gradient criterion (``tol``), L-BFGS therefore also stops, as converged,
    when a convex combination of the gradients at its latest iterates (up to
    11) has no entry above ``tol`` and certifies the objective to within
    ``tol`` (relative) of its minimum -- the stopping test of bundle methods,
    exact for this convex objective -- or, failing that, once the objective
    has decreased by at most ``tol`` (relative to its value) over the last
    10 iterations. Only when no criterion is met
    within ``max_iter`` iterations is a
    :class:`~sklearn.exceptions.ConvergenceWarning` raised. At such an
    optimum the two tied scores are equal only to the solver's accuracy, so
    which of the two classes :meth:`predict_proba` keeps for that sample can
    change with rounding (e.g. between a fit with sample weights and one with
    repeated rows), though the objective does not.

    Parameters
    ----------
    k : int, default=5
        Number of classes kept, ``k >= 2`` (``k = 1`` makes the zero model
        optimal). ``k >= n_classes`` is the plain softmax.

    %(parameters)s

    Attributes
    ----------
    %(attributes)s

    See Also
    --------
    sklearn.linear_model.LogisticRegression : ``k >= n_classes``.
    SparsemaxClassifier : Sparse probabilities from a smooth loss.
    sksparsemax.losses.SparseSoftmaxLoss : The loss.

    Notes
    -----
    For a binary problem (where ``k >= 2`` is the softmax) the two weight
    rows satisfy ``coef_[1] - coef_[0] == LogisticRegression(C=2 * C).coef_[0]``
    (LogisticRegression penalises a single vector). ``decision_function``
    returns that difference of scores, shape (n_samples,), for binary
    problems; ``predict_log_proba`` is ``log(predict_proba)``, ``-inf``
    outside the top k.

    References
    ----------
    .. [1] J. Sun, Z. Yang, Y. Lu, J. Su and Y. Zhang, "Sparse-softmax: A
       Simpler and Faster Alternative Softmax Transformation",
       arXiv:2112.12433, 2021.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sksparsemax.linear_model import SparseSoftmaxClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), SparseSoftmaxClassifier(k=2))
    >>> clf.fit(X, y).predict_proba(X[[0, 50, 100]]).round(3)
    array([[0.986, 0.014, 0.   ],
           [0.   , 0.867, 0.133],
           [0.   , 0.007, 0.993]])
    """
    )

    _parameter_constraints: dict = {
        **_BaseMultiClass._parameter_constraints,
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, k=5, *, C=1.0, fit_intercept=True, tol=1e-4, max_iter=100,
                 class_weight=None, warm_start=False, verbose=0, solver="lbfgs"):
        super().__init__(**forward(locals(), _BaseMultiClass))
        self.k = k

    def _check_params_vs_data(self, n_classes):
        if self.k < 2:
            raise ValueError(
                f"k must be at least 2; got k={self.k}. With k=1 the loss is "
                "max_j z_j - z_y, which the all-zero model minimises: there is "
                "nothing to learn."
            )

    def _make_loss(self, n_classes):
        return get_loss("sparse_softmax", k=self.k)
