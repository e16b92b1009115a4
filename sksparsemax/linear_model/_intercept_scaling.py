r"""Scales of the intercept variables in L-BFGS's change of variables.

The intercepts are not regularised, so their curvature is that of the loss
alone, the diagonal :math:`h` of its Hessian with respect to the scores,
which for the softmax loss is :math:`p_j (1 - p_j)`: a class (or label)
that is rare in the targets has a nearly flat intercept, along which
L-BFGS, whose curvature estimate is one scalar, crawls. With the scales
:math:`t_j = \max(1, \sqrt{\bar h / h_j})` (:func:`intercept_scales`, from
the curvature at the intercept-only optimum) the intercepts become
:math:`b = M_t c` in the variables :math:`c` of
:class:`._preconditioner.GramPreconditioner` (before its shift by
:math:`W\mu`):

- for a shift-invariant loss (the simplex losses), :math:`M_t = \Pi D_t \Pi
  + \tfrac1K \mathbf 1 \mathbf 1^\top`, :math:`\Pi = I - \tfrac1K \mathbf 1
  \mathbf 1^\top`: the scales act on the differences between the
  intercepts and leave their sum, which the loss does not see, to move
  exactly as without them (L-BFGS then keeps it, as it keeps it without
  scales: from the centred start, the sum stays 0, as in
  LogisticRegression, on whatever data);
- otherwise (the per-label losses), :math:`M_t = D_t`.

:math:`M_t` is symmetric positive definite and costs :math:`O(K)` to apply,
invert and transpose. Only the intercepts flatter than the mean get a
larger scale: the weights of every class have the regularisation's
curvature besides the loss's, so an intercept is never the flattest
direction for being steeper than the others, and shrinking its scale would
only make it stiffer than the weights.
"""

import numpy as np

#: The intercepts' scales are at most this: a class whose curvature at the
#: start is tiny (the softmax probability of a label absent from the
#: targets) keeps a finite scale.
MAX_INTERCEPT_SCALE = 10.0


def intercept_scales(loss, p):
    """Scales of the intercept variables from the loss's curvature at ``p``, or None.

    ``h``, the diagonal of the Hessian of ``loss`` with respect to the
    scores (``hessian_product``) where its mapping is ``p`` (K,), the
    probabilities of the intercept-only optimum, is the curvature of the
    objective in each intercept at the start of a fit. Returns ``t = max(1,
    sqrt(mean(h) / h))``, at most ``MAX_INTERCEPT_SCALE``, and 1 where
    ``h`` is 0 (a class outside the support of a sparse mapping: no
    curvature to go by, and no gradient to follow there); None when every
    ``t`` is 1, or when the loss has no Hessian (its mapping no
    ``jacobian_product``) or no curvature at ``p``.

    Examples
    --------
    >>> import numpy as np
    >>> from sksparsemax.losses import get_loss
    >>> intercept_scales(get_loss("softmax"), np.array([0.7, 0.2, 0.1])).round(3)
    array([1.   , 1.   , 1.305])
    >>> print(intercept_scales(get_loss("sparsemax"), np.array([0.7, 0.2, 0.1])))
    None
    """
    p = np.asarray(p, dtype=np.float64)
    K = p.shape[0]
    hessian_product = getattr(loss, "hessian_product", None)
    if hessian_product is None:
        return None
    try:
        J = hessian_product(np.tile(p, (K, 1)), np.eye(K))
    except NotImplementedError:
        return None
    h = np.diagonal(np.asarray(J, dtype=np.float64)).copy()
    mean = float(h.mean()) if np.all(np.isfinite(h)) else 0.0
    if not mean > 0:
        return None
    floor = mean / MAX_INTERCEPT_SCALE**2
    t = np.where(h > 0, np.sqrt(mean / np.clip(h, floor, mean)), 1.0)
    if np.all(t <= 1.0 + 1e-12):
        return None
    return t


class InterceptScaling:
    """The map ``b = M_t c`` of the intercept variables (see the module docstring).

    Parameters
    ----------
    scale : ndarray of shape (K,)
        The scales ``t`` (positive).
    keep_sum : bool
        Whether the loss is shift-invariant: then the scales act on the
        differences between the intercepts only, and their sum is kept.
    """

    def __init__(self, scale, keep_sum):
        self.scale = np.asarray(scale, dtype=np.float64)
        self.keep_sum = bool(keep_sum)

    def apply(self, c, out):
        """``out = M_t c`` (also the gradient's map: ``M_t`` is symmetric)."""
        if not self.keep_sum:
            np.multiply(c, self.scale, out=out)
            return out
        mean = c.mean()
        np.multiply(c - mean, self.scale, out=out)
        out += mean - out.mean()
        return out

    def solve(self, b, out):
        """``out = M_t^{-1} b`` (``out`` may be ``b``: it is read before being written).

        With ``keep_sum``: the mean of ``b`` is that of ``out``; the rest,
        ``y`` with ``Pi D_t y = b - mean(b)`` and ``sum(y) = 0``, is ``y =
        (b - mean(b) + lam) / t`` with ``lam`` making its sum 0.
        """
        if not self.keep_sum:
            np.divide(b, self.scale, out=out)
            return out
        mean = b.mean()
        r = b - mean
        inverse = 1.0 / self.scale
        lam = -np.dot(r, inverse) / inverse.sum()
        np.multiply(r + lam, inverse, out=out)
        out += mean
        return out
