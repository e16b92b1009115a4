"""The shipped losses by name, as the estimators' ``loss=`` takes them."""

from ._fenchel_young import FenchelYoungLoss


def loss_names():
    """The names of the shipped losses, as the estimators accept them.

    Returns
    -------
    list of str
        Sorted names, one per :class:`FenchelYoungLoss` subclass with a
        ``name``.

    Examples
    --------
    >>> from sksparsemax.losses import loss_names
    >>> loss_names()
    ['budget_sparsemax', 'entmax', 'normmax', 'softmax', 'sparse_softmax', 'sparsemax']
    """
    return sorted(FenchelYoungLoss._registry)


def get_loss(loss, **params):
    """The loss object that ``loss`` names, or ``loss`` itself.

    Parameters
    ----------
    loss : str or FenchelYoungLoss
        A name of :func:`loss_names` or a loss instance (returned as is).
    **params
        With a name: the loss's parameters (e.g. ``alpha`` for
        ``"entmax"``, ``k`` for ``"sparse_softmax"``); defaults otherwise.

    Returns
    -------
    FenchelYoungLoss
        The loss object.

    Raises
    ------
    ValueError
        If ``loss`` is neither a known name nor a :class:`FenchelYoungLoss`.

    Examples
    --------
    >>> from sksparsemax.losses import get_loss
    >>> get_loss("entmax", alpha=2.0)
    EntmaxLoss(alpha=2.0)
    """
    if isinstance(loss, FenchelYoungLoss):
        return loss
    if isinstance(loss, str) and loss in FenchelYoungLoss._registry:
        return FenchelYoungLoss._registry[loss](**params)
    raise ValueError(
        f"loss must be one of {loss_names()} or a FenchelYoungLoss instance; "
        f"got {loss!r}."
    )
