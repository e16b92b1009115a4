"""What 1D and 2D continuous attention share: ridge fit, context, broadcasting (private)."""

import numpy as np

from .._checks import check_alpha
from ._utils import as_float_array, check_number

__all__ = []


def _ridge_operator(F, ridge):
    """G = (F'F + ridge I)^-1 F', so that the coefficients are G @ values."""
    n_basis = F.shape[1]
    gram = F.T @ F + ridge * np.eye(n_basis)
    try:
        return np.linalg.solve(gram, F.T)
    except np.linalg.LinAlgError:
        raise ValueError(
            "The ridge system is singular: use ridge > 0 or more positions than basis functions."
        ) from None


class AttentionBase:
    """Ridge-regressed value function and context vectors, for a basis of either dimension.

    A subclass sets the basis type, the vector-Jacobian product of its expectation
    and the shapes of one point (a position or a location: ``()`` on a line, ``(2,)``
    in the plane) and of one scale, so that checking the positions and broadcasting
    the densities' batch against the values' batch are written once.
    """

    _basis_type = None
    _expectation_vjp = None
    _point_shape = _scale_shape = None

    def __init__(self, basis, alpha=2.0, ridge=0.1, **options):
        if not isinstance(basis, self._basis_type):
            raise ValueError(f"basis must be a {self._basis_type.__name__}, got {type(basis).__name__}.")
        self.basis = basis
        self.alpha = check_alpha(alpha)
        self.ridge = check_number(ridge, "ridge", strict=False)
        self.options = options

    def _fit(self, values, positions):
        """Ridge-regress ``values`` (..., P, D) observed at ``positions`` on the basis."""
        if values.ndim < 2:
            raise ValueError(f"values must have shape (..., P, D), got {values.shape}.")
        positions = as_float_array(positions, "positions")
        expected = values.shape[-2:-1] + self._point_shape
        if positions.shape != expected:
            raise ValueError(
                f"positions and values have mismatched shapes: positions {positions.shape}, "
                f"values {values.shape} (expected positions of shape {expected})."
            )
        F = self.basis(positions)
        self.coef_ = np.einsum("nl,...ld->...nd", _ridge_operator(F, self.ridge), values)
        return self

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise ValueError(f"This {type(self).__name__} is not fitted yet: call fit(values) first.")

    def _combine(self, r):
        try:
            return np.einsum("...n,...nd->...d", r, self.coef_)
        except ValueError:
            raise ValueError(
                f"The densities' batch shape {r.shape[:-1]} does not broadcast with the "
                f"values' batch shape {self.coef_.shape[:-2]}."
            ) from None

    def _grad_r(self, grad_context, batch_shape):
        """Upstream gradient on r, broadcast to the full batch shape (returned too)."""
        self._check_fitted()
        grad_context = as_float_array(grad_context, "grad_context")
        try:
            full = np.broadcast_shapes(batch_shape, self.coef_.shape[:-2], grad_context.shape[:-1])
            grad_r = np.einsum("...nd,...d->...n", self.coef_, grad_context)
            return np.broadcast_to(grad_r, full + (self.basis.n_basis,)), full
        except ValueError:
            raise ValueError(
                f"grad_context {grad_context.shape}, the densities' batch shape {batch_shape} and "
                f"the values' batch shape {self.coef_.shape[:-2]} do not broadcast together."
            ) from None

    def _with_vjp(self, r, jac):
        """Context c = B'r and a closure g -> J (B g) reusing the precomputed Jacobian."""
        shape = r.shape[:-1]
        context = self._combine(r)

        def vjp(grad_context):
            grad_r, full = self._grad_r(grad_context, shape)
            jac_full = np.broadcast_to(jac, full + jac.shape[-2:])
            return _sum_to(np.einsum("...kn,...n->...k", jac_full, grad_r), shape)

        return context, vjp

    def _context_vjp(self, loc, scale, grad_context):
        """J (B g) for density parameters whose batch broadcasts with the values' batch."""
        shape = np.broadcast_shapes(
            loc.shape[: loc.ndim - len(self._point_shape)], scale.shape[: scale.ndim - len(self._scale_shape)]
        )
        grad_r, full = self._grad_r(grad_context, shape)
        loc = np.broadcast_to(loc, full + self._point_shape)
        scale = np.broadcast_to(scale, full + self._scale_shape)
        grad = self._expectation_vjp(loc, scale, self.basis, grad_r, self.alpha, **self.options)
        return _sum_to(grad, shape)


def _sum_to(grad, shape):
    """Sum a (full_shape + (k,)) gradient down to shape + (k,) (undo broadcasting)."""
    extra = grad.ndim - 1 - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad
