"""
==============================================================
The sparsemax loss next to the logistic and Huber losses
==============================================================

The estimators of :mod:`sksparsemax` minimise convex losses of the linear
scores. For two classes every loss is a function of the *margin*
:math:`t = z_{y} - z_{\\text{other}}` only, and this is where the
sparsemax loss reveals what it is: the **modified Huber loss** (the loss of
:class:`~sklearn.linear_model.SGDClassifier` with ``loss="modified_huber"``)
divided by four,

.. math::

    L_{\\text{sparsemax}}(t) =
    \\begin{cases}
        0 & t \\ge 1, \\\\
        (1 - t)^2 / 4 & -1 < t < 1, \\\\
        -t & t \\le -1,
    \\end{cases}

zero beyond a margin of 1 like the hinge loss, quadratic near the decision
boundary and linear (robust) for badly misclassified points like the
logistic loss -- and smooth, so L-BFGS applies.
"""

# %%
# Binary case
# -----------
# We evaluate the library's loss functions on the scores
# :math:`z = (0, t)` with true class 1, and compare with the closed forms.
import matplotlib.pyplot as plt
import numpy as np

from sksparsemax.losses import entmax_loss, softmax_loss, sparsemax_loss

t = np.linspace(-3, 3, 601)
Z = np.column_stack([np.zeros_like(t), t])
y = np.ones(len(t), dtype=int)

losses = {
    "logistic (softmax)": softmax_loss(Z, y),
    "1.5-entmax": entmax_loss(Z, y, alpha=1.5),
    "sparsemax": sparsemax_loss(Z, y),
}
hinge = np.maximum(0, 1 - t)
modified_huber = np.where(t >= -1, np.maximum(0, 1 - t) ** 2, -4 * t)

# The sparsemax loss is exactly a quarter of the modified Huber loss:
print("max |sparsemax - modified_huber / 4| =", np.abs(losses["sparsemax"] - modified_huber / 4).max())

fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
for name, values in losses.items():
    ax.plot(t, values, label=name, linewidth=2)
ax.plot(t, hinge, "k:", label="hinge")
ax.plot(t, modified_huber / 4, "--", color="gray", label="modified Huber / 4")
ax.axvline(1, color="0.8", linewidth=0.8)
ax.set_xlabel("margin $t = z_y - z_{other}$")
ax.set_ylabel("loss")
ax.set_ylim(-0.1, 3)
ax.legend()
ax.set_title("Binary losses as functions of the margin")
plt.show()

# %%
# The logistic loss never reaches zero: even a well classified point keeps
# pushing the weights. The sparsemax loss is exactly zero once the margin
# exceeds 1, which is what makes :meth:`predict_proba` of
# :class:`~sksparsemax.linear_model.SparsemaxClassifier` return exact 0 and 1.
#
# Three classes: the flat region
# ------------------------------
# With three classes and true class 1, the sparsemax loss is zero on the
# whole region :math:`z_1 \ge 1 + \max(z_2, z_3)` (where
# :math:`\operatorname{sparsemax}(z) = e_1`); the softmax loss is positive
# everywhere. Below: both losses over :math:`(z_2, z_3)` with
# :math:`z_1 = 0`.
grid = np.linspace(-3, 3, 201)
A, B = np.meshgrid(grid, grid)
Z3 = np.stack([np.zeros(A.size), A.ravel(), B.ravel()], axis=1)
y3 = np.zeros(A.size, dtype=int)
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True, layout="constrained")
for ax, (name, f) in zip(axes, [("softmax loss", softmax_loss), ("sparsemax loss", sparsemax_loss)]):
    L = f(Z3, y3).reshape(A.shape)
    cs = ax.contourf(A, B, L, levels=np.linspace(0, 4, 17), cmap="magma_r", extend="max")
    ax.contour(A, B, L, levels=[1e-12], colors="c", linewidths=2)
    ax.set_title(name + " (true class 1, $z_1 = 0$)")
    ax.set_xlabel("$z_2$")
    ax.set_aspect("equal")
axes[0].set_ylabel("$z_3$")
fig.colorbar(cs, ax=axes, label="loss", shrink=0.9)
plt.show()

# %%
# The cyan line bounds the zero set of the sparsemax loss: the lower-left
# quadrant :math:`z_2, z_3 \le -1`.
#
# Top-k sparse-softmax: a stack of convex losses
# ----------------------------------------------
# The top-k loss :math:`L_k(z; y) = \log\sum_{j \in \Omega_k(z)} e^{z_j} - z_y`
# (:func:`~sksparsemax.losses.sparse_softmax_loss`) is a maximum of convex
# functions, hence convex, but only piecewise smooth: it has kinks where
# the k-th and (k+1)-th scores swap. The losses are ordered,
# :math:`L_2 \le L_3 \le \dots \le L_K`, and :math:`L_K` is the softmax
# cross-entropy. Below, the losses along a line :math:`z_0 + s\,d` in a
# 6-class score space.
from sksparsemax.losses import sparse_softmax_loss  # noqa: E402

rng = np.random.default_rng(3)
z0, d = rng.normal(size=6), rng.normal(size=6)
s = np.linspace(-3, 3, 601)
Zline = z0 + s[:, None] * d
yline = np.zeros(len(s), dtype=int)
fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
for k in range(2, 7):
    label = "softmax (k = K = 6)" if k == 6 else f"k = {k}"
    ax.plot(s, sparse_softmax_loss(Zline, yline, k=k), label=label)
ax.set_xlabel("$s$")
ax.set_ylabel("$L_k(z_0 + s d;\\ y = 0)$")
ax.legend()
ax.set_title("Top-k sparse-softmax losses along a line")
plt.show()
