"""A loss's compiled kernel, behind the interface its callers use.

:meth:`FenchelYoungLoss.compiled` returns a :class:`CompiledLoss` when the
numba backend is in effect and the loss has a row kernel. It turns arrays
and :class:`Target` objects into the tasks of ``_numba_engine`` and the
kernel's results back into arrays or the library's errors, so that neither
the losses' generic code nor the linear models know how a kernel is called.
This module imports NumPy only; the kernels themselves import numba.
"""

import numpy as np
import scipy.sparse as sp

from ..transforms._blocks import copy_transposed
from ..transforms._validation import raise_invalid_row

#: Dense ``X`` goes through the one-pass kernel while the K x d gradient
#: stays in the CPU's caches; with more coefficients BLAS is faster. (The
#: CSR kernel has no such limit: scipy's sparse products are no faster.)
MAX_FUSED_COEF = 2**14

#: Below this many multiply-adds per evaluation (``n d K`` for dense ``X``)
#: the fit takes NumPy's BLAS path: a kernel's per-call saving is small next
#: to its first compilation, so a first fit on small data compiles nothing
#: (benchmarks/bench_cold_start.py measures the first fit).
MIN_FUSED_WORK = 2**18

#: Score matrices with fewer entries take the NumPy path (see above).
MIN_ROWS_ENTRIES = 2**14

_EMPTY_INDICES = np.empty(0, dtype=np.intp)


class CompiledLoss:
    """The compiled loss and gradient of a loss, on score rows or linear scores.

    Parameters
    ----------
    loss : FenchelYoungLoss
        The loss (for its target term).
    kernel : callable
        Its compiled entry point ``kernel(task, params)``.
    params : ndarray of float64
        The loss's parameters, as its row kernel reads them.
    """

    def __init__(self, loss, kernel, params):
        self.loss = loss
        self.kernel = kernel
        self.params = np.ascontiguousarray(params, dtype=np.float64)
        # A kernel that takes longer to compile than the sparsemax loss's
        # (the loss's ``_kernel_compile_weight``: 1.5-entmax's Newton search
        # for the threshold is inlined in each driver) applies from
        # proportionally larger problems only, so that
        # a first fit on small data compiles nothing.
        self.compile_weight = getattr(loss, "_kernel_compile_weight", 1)

    def _target_arrays(self, target, dtype):
        """``(y, Q, tterm)`` of a :class:`Target` for the row kernels (cached on it).

        A solver evaluates the loss many times on one target: the arrays are
        made once.
        """
        def make():
            term = self.loss._target_term(target)
            tterm = np.ascontiguousarray(np.atleast_1d(np.asarray(term, np.float64)))
            if target.is_indices:
                y = np.ascontiguousarray(target.indices, dtype=np.intp)
                return y, np.empty((0, 0), dtype=dtype), tterm
            return _EMPTY_INDICES, np.ascontiguousarray(target.proba_as(dtype)), tterm

        return target.cached(("kernel arrays", self.loss, np.dtype(dtype).str), make)

    def applies_to_rows(self, Z):
        """Whether :meth:`rows` is worth it for the scores ``Z``: at least
        :data:`MIN_ROWS_ENTRIES` entries (times ``compile_weight``; below, the
        NumPy path is about as fast and nothing is compiled)."""
        return Z.size >= MIN_ROWS_ENTRIES * self.compile_weight

    def rows(self, Z, target, out):
        """Per-sample losses of the score rows ``Z`` and their gradients into ``out``.

        ``out`` (possibly ``Z``) is left untouched if a row is invalid; the
        library's ``ValueError`` is raised then.
        """
        Z = np.ascontiguousarray(Z)
        n = Z.shape[0]
        losses = np.empty(n, dtype=Z.dtype)
        zmax = np.empty(n, dtype=Z.dtype)
        y, Q, tterm = self._target_arrays(target, Z.dtype)
        bad = self.kernel((Z, y, Q, tterm, out, losses, zmax), self.params)
        raise_invalid_row(Z, Z.shape, "Z", zmax, bad)
        return losses, out

    def applies_to(self, X, n_classes):
        """Whether :meth:`linear` takes ``X``: float32/64, dense C-contiguous
        with at most :data:`MAX_FUSED_COEF` weights and at least
        :data:`MIN_FUSED_WORK` multiply-adds, or CSR (times ``compile_weight``
        for both, when it is above 1)."""
        if X.dtype not in (np.float32, np.float64):
            return False
        min_work = MIN_FUSED_WORK * self.compile_weight
        if isinstance(X, np.ndarray):
            work = X.shape[0] * X.shape[1] * n_classes
            return (X.flags.c_contiguous and n_classes * X.shape[1] <= MAX_FUSED_COEF
                    and work >= min_work)
        if not (sp.issparse(X) and X.format == "csr"):
            return False
        return self.compile_weight == 1 or X.nnz * n_classes >= min_work

    def linear(self, X, W, b, target, row_weights, scale, grad_W, grad_b):
        """Weighted loss of the scores ``X @ W.T + b``; its gradient added into ``grad_W``.

        Parameters
        ----------
        X : ndarray or CSR matrix of shape (n, d)
            Data that :meth:`applies_to`.
        W : ndarray of shape (K, d), float64
        b : ndarray of shape (K,), float64
        target : Target
        row_weights : ndarray of shape (n,) or None
            Per-sample weights (None: all 1), times ``scale``.
        scale : float
        grad_W : ndarray of shape (K, d), float64
            The loss's gradient ``sum_i c_i (p_i - q_i) x_i^T`` is added to
            it (the caller fills it with the penalty's gradient first).
        grad_b : ndarray of shape (K,), float64
            Overwritten with ``sum_i c_i (p_i - q_i)``.

        Returns
        -------
        float or None
            ``sum_i c_i loss_i``, or None if a score is invalid (NaN,
            ``+inf``: an overflow; the NumPy path then raises the error).
        """
        y, Q, tterm = self._target_arrays(target, np.float64)
        weights = (
            np.empty(0) if row_weights is None
            else np.ascontiguousarray(row_weights, dtype=np.float64)
        )
        b = np.ascontiguousarray(b, dtype=np.float64)
        if sp.issparse(X):
            # The kernel gathers and scatters rows of W.T: (d, K) arrays.
            Wt = np.ascontiguousarray(W.T, dtype=np.float64)
            grad_Wt = np.ascontiguousarray(grad_W.T)
            task = (X.data, X.indices, X.indptr, Wt, b, y, Q, tterm, weights,
                    scale, grad_Wt, grad_b)
            value, bad = self.kernel(task, self.params)
            copy_transposed(grad_Wt, grad_W)
        else:
            W = np.ascontiguousarray(W, dtype=np.float64)
            task = (X, W, b, y, Q, tterm, weights, scale, grad_W, grad_b)
            value, bad = self.kernel(task, self.params)
        return None if bad >= 0 else float(value)
