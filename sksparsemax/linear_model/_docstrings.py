"""The docstring text the multi-class classifiers share (parameters, attributes, objective)."""

_COMMON_PARAMETERS = """C : float, default=1.0
        Inverse of the L2 regularisation strength, as in
        :class:`~sklearn.linear_model.LogisticRegression`: the penalty is
        :math:`\\tfrac{1}{2C\\sum_i s_i}\\|W\\|_F^2` next to the weighted mean
        loss, so the same grid of ``C`` works for both. Must be positive.
    fit_intercept : bool, default=True
        Whether to fit one (unpenalised) intercept per class.
    tol : float, default=1e-4
        Stop the solver when the largest entry of the gradient is at most
        ``tol``.
    max_iter : int, default=100
        Maximum number of solver iterations (L-BFGS iterations, or Newton
        iterations for ``solver="newton-cg"``).
    class_weight : dict or "balanced", default=None
        Weights of the classes, ``{label: weight}``; ``"balanced"`` uses
        ``n_samples / (n_classes * np.bincount(y))``. They multiply
        ``sample_weight``.
    warm_start : bool, default=False
        If True, start from ``coef_`` and ``intercept_`` of the previous fit
        (which must have the same classes and features).
    verbose : int, default=0
        If positive, print the solver's iteration and objective to stderr
        (every 10 iterations for 1, more often for larger values).
    solver : {"lbfgs", "newton-cg"}, default="lbfgs"
        The algorithm; both minimise the same objective (below).
        ``"lbfgs"``: L-BFGS (unconstrained, in compact form, scikit-learn's
        stopping rules), on whitened coefficients (an exact
        change of variables by the features' Gram matrix, its diagonal, or,
        with twice as many features as samples, the row space of ``X``; see
        the user guide's "Choosing the solver"). ``"newton-cg"``: an inexact
        Newton method, truncated conjugate gradients on Hessian-vector
        products of the objective (the Jacobian of the mapping, a generalized
        Hessian for the piecewise-smooth losses) with an Armijo line search;
        fewer, costlier iterations, no L-BFGS history (less memory on sparse
        text data). Like ``LogisticRegression(solver="newton-cg")``."""

_COMMON_ATTRIBUTES = """classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (n_classes, n_features)
        Weights, one row per class; float32 when ``X`` is float32. Binary
        problems keep both rows (unlike LogisticRegression, which stores one).
    intercept_ : ndarray of shape (n_classes,)
        Intercepts (zeros when ``fit_intercept=False``).
    n_iter_ : int
        Number of solver iterations run (Newton iterations for
        ``solver="newton-cg"``).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during fit, when ``X`` has string column
        names (pandas)."""

_OBJECTIVE_NOTES = """The coefficients minimise, by L-BFGS (10 curvature pairs, a weak
    Wolfe line search of at most 50 evaluations, ``ftol=64*eps`` as
    scikit-learn gives scipy's L-BFGS-B, stopping when the
    gradient's largest entry is at most ``tol`` with respect to both the
    coefficients and the whitened coefficients it works on) or by
    Newton-CG (``solver="newton-cg"``: stops when the gradient's largest
    entry is at most ``tol``; at most 200 CG products per Newton step),

    .. math::

        \\frac{1}{\\sum_i s_i} \\sum_{i=1}^n s_i\\, L(W x_i + b;\\, y_i)
        + \\frac{1}{2 C \\sum_i s_i} \\|W\\|_F^2,

    with sample weights :math:`s_i` (times the class weights) and
    unpenalised intercepts :math:`b`."""


def _doc(text):
    return (
        text.replace("%(parameters)s", _COMMON_PARAMETERS)
        .replace("%(attributes)s", _COMMON_ATTRIBUTES)
        .replace("%(objective)s", _OBJECTIVE_NOTES)
    )


_CV_PARAMETERS = """Cs : int or array-like of float, default=10
        The grid of ``C``: a count ``n`` gives ``np.logspace(-4, 4, n)`` (as
        in :class:`~sklearn.linear_model.LogisticRegressionCV`); a list is
        used sorted increasingly. On each fold the path runs from the
        smallest ``C`` to the largest, each fit starting from the previous
        solution.
    cv : int, cross-validation generator or iterable, default=None
        As in scikit-learn: None is 5-fold, an int the number of folds
        (stratified for class labels, plain k-fold for a 2-D ``Y``).
    scoring : str or callable, default=None
        A scorer name or ``scorer(estimator, X, y)``; None is the
        estimator's accuracy. Given ``sample_weight``, it is passed to the
        scorer on the held-out fold.
    refit : bool, default=True
        Refit the chosen parameters on all the data (starting from the
        average of the folds' solutions). If False, the model is that
        average, at the parameters chosen by the mean score (where
        LogisticRegressionCV averages each fold's own best, which for
        ``alpha`` or ``k`` would be no model at all).
    n_jobs : int, default=None
        Folds (and grid points that change the fit) run in parallel with
        joblib; ``joblib.parallel_backend("dask")`` runs them on a Dask
        cluster. None means 1 unless in a joblib context.
    fit_intercept : bool, default=True
        Whether to fit one (unpenalised) intercept per class.
    tol : float, default=1e-4
        Stop each solver run when the largest entry of the gradient is at
        most ``tol``.
    max_iter : int, default=100
        Maximum number of solver iterations per value of ``C``."""

_CV_SOLVER = """verbose : int, default=0
        If positive, print the solver's iterations to stderr.
    solver : {"lbfgs", "newton-cg"}, default="lbfgs"
        The algorithm of every fit, as in the plain estimator."""

_CV_CLASS_WEIGHT = """class_weight : dict or "balanced", default=None
        Weights of the classes; ``"balanced"`` is computed on each training
        fold, as :class:`~sklearn.model_selection.GridSearchCV` over the
        plain estimator would."""

_CV_ATTRIBUTES = """Cs_ : ndarray of shape (n_cs,)
        The grid of ``C``, increasing.
    C_ : float
        The chosen ``C``.
    best_params_ : dict
        All the chosen parameters, ``C`` included.
    best_score_ : float
        The mean held-out score at ``best_params_``.
    best_index_ : tuple of int
        ``(grid point, C)``: where ``best_params_`` is in ``scores_``.
    param_grid_ : list of dict
        The values of the parameters other than ``C`` of each row of
        ``scores_`` (``[{}]`` when there is no such grid).
    scores_ : ndarray of shape (n_folds, n_grid, n_cs)
        The held-out score of every fold, grid point and ``C``.
    coefs_paths_ : ndarray of shape (n_folds, n_fits, n_cs, n_classes, n_dof)
        The coefficients of every fold, every grid point that changes the
        fit (``alphas``, ``ks``; 1 otherwise) and ``C``: the weights, then
        the intercept when ``fit_intercept`` (``n_dof`` is ``n_features +
        fit_intercept``), in float64.
    n_iter_ : ndarray of shape (n_folds, n_fits, n_cs)
        Solver iterations of every fit of the paths.
    best_estimator_ : estimator
        The plain estimator at the chosen parameters, fitted; the
        predictions are its predictions.
    classes_ : ndarray of shape (n_classes,)
        The class labels (the labels of a 2-D ``Y``).
    coef_ : ndarray of shape (n_classes, n_features)
        ``best_estimator_.coef_``.
    intercept_ : ndarray of shape (n_classes,)
        ``best_estimator_.intercept_``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the features seen during fit, when ``X`` has string column
        names (pandas)."""

_CV_NOTES = """Each fold fits the grid of ``C`` from the most regularised model to the
    least, each fit warm-started from the previous one, reusing what does
    not depend on ``C`` (the whitening's Gram matrix, the problem's shape).
    The chosen parameters are those of the best mean held-out score; ties
    go to the smallest ``C``, then to the first grid point: the choice of
    :class:`~sklearn.model_selection.GridSearchCV` over the plain estimator
    with the same folds and grid, which refits every point from scratch."""


def _cv_doc(text):
    return (
        text.replace("%(cv_parameters)s", _CV_PARAMETERS)
        .replace("%(cv_solver)s", _CV_SOLVER)
        .replace("%(cv_class_weight)s", _CV_CLASS_WEIGHT)
        .replace("%(cv_attributes)s", _CV_ATTRIBUTES)
        .replace("%(cv_notes)s", _CV_NOTES)
    )
