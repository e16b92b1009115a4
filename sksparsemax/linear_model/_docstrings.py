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
        ``"lbfgs"``: scipy's L-BFGS-B, on whitened coefficients (an exact
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

_OBJECTIVE_NOTES = """The coefficients minimise, by L-BFGS (scipy's L-BFGS-B with
    ``maxls=50``, ``ftol=64*eps``, as in scikit-learn, stopping when the
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
