"""The label-proportion simulation of Martins & Astudillo (2016), vectorised."""

import math

import numpy as np

from ._base import _check_generator, _check_int, _check_positive_real

__all__ = ["make_label_proportions"]


def _check_distribution(value, name, shape):
    """A non-negative array of ``shape`` whose last axis sums to 1 after normalising."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of non-negative numbers.") from None
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {array.shape}.")
    if not np.isfinite(array).all() or (array < 0).any():
        raise ValueError(f"{name} must contain finite non-negative numbers.")
    sums = array.sum(axis=-1, keepdims=True)
    if (sums <= 0).any():
        raise ValueError(f"{name} must have a positive sum (in every row).")
    return array / sums


def _truncated_poisson_choice(rng, mean, high, size):
    """Draws of Poisson(mean) conditioned on [1, high] (= redrawn until in range)."""
    k = np.arange(1, high + 1)
    log_pmf = k * math.log(mean) - mean - np.array([math.lgamma(i + 1) for i in k])
    pmf = np.exp(log_pmf - log_pmf.max())
    return rng.choice(k, size=size, p=pmf / pmf.sum())


def make_label_proportions(
    n_samples=100,
    n_labels=10,
    *,
    document_length=200,
    proportions="uniform",
    n_features=None,
    labels_per_document=1.0,
    class_prior=None,
    word_distributions=None,
    return_distributions=False,
    random_state=None,
):
    r"""Generate documents whose labels come in known proportions.

    The simulation of Martins & Astudillo (2016), Section 5.1 [1]_, read from the
    authors' code (``create_toy_multilabel_dataset.py`` and
    ``multilabel_dataset.py`` in github.com/Unbabel/sparsemax). With
    :math:`K` = ``n_labels`` labels and a vocabulary of :math:`V` =
    ``n_features`` words:

    1. a class prior :math:`\pi` and, for each label :math:`k`, a word
       distribution :math:`\beta_k` are drawn uniformly in :math:`[0, 1)` and
       normalised (once, shared by all documents);
    2. for each document, the number of labels :math:`m \sim
       \mathrm{Poisson}(\lambda)` (:math:`\lambda` = ``labels_per_document``,
       1 in the paper) is redrawn until :math:`1 \le m \le K`;
    3. :math:`m` distinct labels are drawn from :math:`\pi` without repeats
       (each next label from :math:`\pi` restricted to the labels not drawn yet);
    4. the proportions :math:`q` over the active labels are equal
       (``proportions="uniform"``: :math:`q_k = 1/m`) or uniform draws
       normalised (``proportions="random"``); :math:`q_k = 0` elsewhere;
    5. the document length :math:`n \sim \mathrm{Poisson}(L)` (:math:`L` =
       ``document_length``), redrawn while 0 as in the authors' code;
    6. the :math:`n` words are drawn from the mixture
       :math:`\sum_k q_k \beta_k`, and the features are the word counts.

    The target of a proportion estimator is :math:`q`. Every step is vectorised
    over documents (Gumbel-top-k for step 3, one multinomial draw per document
    for step 6), so large samples are cheap.

    Parameters
    ----------
    n_samples : int, default=100
        Number of documents. The paper draws 1200 training, 200 development and
        1000 test documents in one call (so that they share :math:`\pi` and
        :math:`\beta`) and splits them in that order; do the same, or pass
        ``class_prior`` and ``word_distributions`` from an earlier call.
    n_labels : int, default=10
        Number of labels :math:`K` (10 and 50 in the paper).
    document_length : float, default=200
        Mean :math:`L \ge 1` of the Poisson document length (200 to 2000 in the
        paper). With the zero length redrawn, the mean length is
        :math:`L / (1 - e^{-L})`, which equals :math:`L` for all practical
        purposes.
    proportions : {"uniform", "random"}, default="uniform"
        Equal proportions over the active labels, or random ones.
    n_features : int, default=None
        Vocabulary size :math:`V`; None means :math:`V = K`, as in the paper
        (or the width of ``word_distributions`` when given).
    labels_per_document : float, default=1.0
        Mean :math:`\lambda > 0` of the Poisson number of labels per document
        (before it is redrawn into :math:`[1, K]`).
    class_prior : array-like of shape (n_labels,), default=None
        Use this prior instead of drawing one (normalised to sum to 1). When
        some labels have prior 0, the number of labels per document is redrawn
        into :math:`[1, K_+]`, :math:`K_+` the number of labels with a positive
        prior.
    word_distributions : array-like of shape (n_labels, n_features), default=None
        Use these word distributions (one row per label, each normalised to
        sum to 1) instead of drawing them.
    return_distributions : bool, default=False
        If True, also return the class prior and the word distributions.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the draws. A :class:`numpy.random.Generator` is used as is; None,
        an int or a RandomState go through
        :func:`sklearn.utils.check_random_state` and seed a Generator from it.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Word counts, float64 (the paper standardises them before fitting).
    Y : ndarray of shape (n_samples, n_labels)
        Indicator matrix of the active labels, int64.
    Q : ndarray of shape (n_samples, n_labels)
        The true label proportions: each row sums to 1 and is positive exactly
        where ``Y`` is 1.
    class_prior : ndarray of shape (n_labels,)
        Only if ``return_distributions`` is True.
    word_distributions : ndarray of shape (n_labels, n_features)
        Row :math:`k` is :math:`\beta_k`. Only if ``return_distributions`` is
        True.

    Raises
    ------
    ValueError
        If a parameter is out of range; the message names it.

    See Also
    --------
    sklearn.datasets.make_multilabel_classification : The scikit-learn
        generator the authors' code started from (no proportions).

    References
    ----------
    .. [1] A. F. T. Martins and R. F. Astudillo, "From softmax to sparsemax: a
       sparse model of attention and multi-label classification", ICML 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.datasets import make_label_proportions
    >>> X, Y, Q = make_label_proportions(
    ...     n_samples=2200, n_labels=10, document_length=400,
    ...     proportions="random", random_state=0)
    >>> X.shape, Y.shape, Q.shape
    ((2200, 10), (2200, 10), (2200, 10))
    >>> bool(np.allclose(Q.sum(axis=1), 1.0)), bool(np.array_equal(Q > 0, Y == 1))
    (True, True)
    >>> X_train, Q_train = X[:1200], Q[:1200]  # the paper's split
    >>> X_test, Q_test = X[1200:], Q[1200:]
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    n_labels = _check_int(n_labels, "n_labels", 1)
    document_length = _check_positive_real(document_length, "document_length")
    if document_length < 1:
        raise ValueError(f"document_length must be >= 1, got {document_length!r}.")
    if not isinstance(proportions, str) or proportions not in ("uniform", "random"):
        raise ValueError(f"proportions must be 'uniform' or 'random', got {proportions!r}.")
    labels_per_document = _check_positive_real(labels_per_document, "labels_per_document")
    if not isinstance(return_distributions, (bool, np.bool_)):
        raise ValueError(f"return_distributions must be a bool, got {return_distributions!r}.")
    if n_features is not None:
        n_features = _check_int(n_features, "n_features", 1)
    if word_distributions is not None:
        width = np.shape(word_distributions)[-1] if np.ndim(word_distributions) == 2 else None
        if n_features is None and width is not None:
            n_features = width
    if n_features is None:
        n_features = n_labels
    if class_prior is not None:
        class_prior = _check_distribution(class_prior, "class_prior", (n_labels,))
    if word_distributions is not None:
        word_distributions = _check_distribution(
            word_distributions, "word_distributions", (n_labels, n_features)
        )
    rng = _check_generator(random_state)

    # 1. the model, shared by all documents
    if class_prior is None:
        class_prior = rng.random(n_labels)
        class_prior /= class_prior.sum()
    if word_distributions is None:
        word_distributions = rng.random((n_labels, n_features))
        word_distributions /= word_distributions.sum(axis=1, keepdims=True)

    # 2. number of labels per document: Poisson redrawn into [1, K+]
    n_positive = int(np.count_nonzero(class_prior))
    m = _truncated_poisson_choice(rng, labels_per_document, n_positive, n_samples)

    # 3. labels without repeats (Gumbel-top-k = sequential draws without replacement)
    with np.errstate(divide="ignore"):
        keys = np.log(class_prior) + rng.gumbel(size=(n_samples, n_labels))
    order = np.argsort(-keys, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n_labels)[None, :], axis=1)
    Y = (rank < m[:, None]).astype(np.int64)

    # 4. proportions over the active labels
    if proportions == "uniform":
        Q = Y / m[:, None]
    else:
        weights = (1.0 - rng.random((n_samples, n_labels))) * Y  # in (0, 1] on the support
        Q = weights / weights.sum(axis=1, keepdims=True)

    # 5. document lengths: Poisson(L), redrawn while 0
    lengths = rng.poisson(document_length, size=n_samples)
    zero = np.flatnonzero(lengths == 0)
    while zero.size:
        lengths[zero] = rng.poisson(document_length, size=zero.size)
        zero = zero[lengths[zero] == 0]

    # 6. word counts from the mixture of the active labels' word distributions
    mixture = Q @ word_distributions
    mixture /= mixture.sum(axis=1, keepdims=True)
    X = rng.multinomial(lengths, mixture).astype(np.float64)

    if return_distributions:
        return X, Y, Q, class_prior, word_distributions
    return X, Y, Q
