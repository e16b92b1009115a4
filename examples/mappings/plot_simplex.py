"""
=============================================================
Softmax, sparsemax, entmax, normmax and more on the 2-simplex
=============================================================

Three classes, three scores :math:`z = (z_1, z_2, z_3)`. Every mapping of
:mod:`sksparsemax.transforms` turns them into a point of the probability
simplex :math:`\\Delta^2`. Because all of them are invariant to adding a
constant to every score, we can fix :math:`z_3 = 0` and draw each mapping
over the *score plane* :math:`(z_1, z_2)`.

* :func:`~sksparsemax.transforms.softmax` is never zero: every class keeps
  some probability, however bad its score.
* :func:`~sksparsemax.transforms.sparsemax` is the Euclidean projection onto
  the simplex; a class whose score is more than 1 below the leader's is
  always cut to exactly zero.
* :func:`~sksparsemax.transforms.entmax15` (alpha-entmax with
  :math:`\\alpha = 1.5`) sits in between: sparse, but with a smoother
  transition.
* :func:`~sksparsemax.transforms.sparse_softmax` with ``k=2`` keeps the two
  largest scores and renormalises their softmax: at most two classes are
  ever positive, and the probabilities jump where the ranking changes.
* :func:`~sksparsemax.transforms.normmax` (the simplex argmax regularised by
  the :math:`\\alpha`-norm) is sparse too; its output flattens towards the
  uniform distribution on its support as :math:`\\alpha` grows (here
  :math:`\\alpha = 2` and :math:`\\alpha = 5`).
* :func:`~sksparsemax.transforms.budget_sparsemax` projects onto the
  *capped* simplex :math:`\\{0 \\le p_i \\le 1, \\sum_i p_i = b\\}`: its
  output sums to the budget :math:`b`, not to one. We draw
  :math:`p / b`, which lies on the simplex, for :math:`b = 1.5` and
  :math:`b = 2`; every entry of :math:`p / b` is then at most
  :math:`1 / b`, so no point reaches a vertex.
"""

# %%
# The mappings over the score plane
# ---------------------------------
# Each panel shows the probability of class 1 as a function of
# :math:`(z_1, z_2)` with :math:`z_3 = 0`. White contour lines are drawn at
# 0.25, 0.5 and 0.75; the hatched area is where :math:`p_1` is *exactly* 0.
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from sksparsemax.transforms import (
    budget_sparsemax,
    entmax15,
    normmax,
    softmax,
    sparse_softmax,
    sparsemax,
)

grid = np.linspace(-3, 3, 241)
Z1, Z2 = np.meshgrid(grid, grid)
scores = np.stack([Z1, Z2, np.zeros_like(Z1)], axis=-1)  # (241, 241, 3)

mappings = {
    "softmax": softmax,
    "1.5-entmax": entmax15,
    "sparsemax": sparsemax,
    "top-2 sparse-softmax": lambda z: sparse_softmax(z, k=2),
    "2-normmax": lambda z: normmax(z, alpha=2.0),
    "5-normmax": lambda z: normmax(z, alpha=5.0),
    "budget sparsemax / 1.5": lambda z: budget_sparsemax(z, budget=1.5) / 1.5,
    "budget sparsemax / 2": lambda z: budget_sparsemax(z, budget=2.0) / 2.0,
}
probas = {name: f(scores) for name, f in mappings.items()}


def panel_grid():
    """A 2 x 4 grid of panels, one per mapping."""
    fig, axes = plt.subplots(2, 4, figsize=(14, 7.4), sharex=True, sharey=True,
                             layout="constrained")
    for ax in axes[1]:
        ax.set_xlabel("$z_1$")
    for ax in axes[:, 0]:
        ax.set_ylabel("$z_2$  ($z_3 = 0$)")
    return fig, axes


fig, axes = panel_grid()
for ax, (name, P) in zip(axes.flat, probas.items()):
    im = ax.pcolormesh(Z1, Z2, P[..., 0], vmin=0, vmax=1, cmap="viridis", shading="auto")
    ax.contour(Z1, Z2, P[..., 0], levels=[0.25, 0.5, 0.75], colors="w", linewidths=0.7)
    ax.contourf(Z1, Z2, P[..., 0] == 0, levels=[0.5, 1.5], colors="none", hatches=["///"])
    ax.set_title(name)
    ax.set_aspect("equal")
fig.colorbar(im, ax=axes, label="$p_1$", shrink=0.8)
plt.show()

# %%
# Support regions
# ---------------
# The *support* of the output is the set of classes with a positive
# probability. Softmax always has the full support {1, 2, 3}. Sparsemax
# partitions the plane into seven regions -- one per non-empty subset of
# classes: near a vertex of the simplex only one class survives, along the
# "roads" between two of them two classes survive, and only around the
# origin (all three scores within 1 of each other) are all three positive.
# Entmax and normmax have the same seven regions, of other shapes; top-2
# never has a support of three. Budget sparsemax with :math:`b > 1` can
# never have a support of one class: each entry is capped at 1, so at
# least :math:`\lceil b \rceil` classes share the budget.
supports = ["{1}", "{2}", "{3}", "{1,2}", "{1,3}", "{2,3}", "{1,2,3}"]
# the support {i : p_i > 0} as a 3-bit number (class 1 the highest bit) -> colour index
code_of_bits = np.array([-1, 2, 1, 5, 0, 4, 3, 6])
colors = ListedColormap(
    ["#1b9e77", "#d95f02", "#7570b3", "#66c2a5", "#a6d854", "#fc8d62", "#e7e7e7"]
)

fig, axes = panel_grid()
for ax, (name, P) in zip(axes.flat, probas.items()):
    bits = (P > 0).astype(int) @ np.array([4, 2, 1])
    region = code_of_bits[bits]
    im = ax.pcolormesh(Z1, Z2, region, cmap=colors, vmin=-0.5, vmax=6.5, shading="auto")
    ax.set_title(name)
    ax.set_aspect("equal")
cbar = fig.colorbar(im, ax=axes, ticks=range(7), shrink=0.8)
cbar.ax.set_yticklabels(supports)
cbar.set_label("support")
plt.show()

# %%
# Where the scores land on the simplex
# ------------------------------------
# The same random score vectors, mapped by each function and drawn in
# barycentric coordinates. Softmax fills the interior; sparsemax piles many
# points onto the edges (one class at zero) and the vertices (a one-hot
# output); entmax does so less; top-2 puts *every* point on an edge. The
# budget panels (:math:`p / b`) stay inside the region where no entry exceeds
# :math:`1 / b`: a hexagon for :math:`b = 1.5`, the inner triangle for
# :math:`b = 2`.
rng = np.random.default_rng(0)
random_scores = rng.normal(scale=1.2, size=(1500, 3))
corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])

fig, axes = plt.subplots(2, 4, figsize=(14, 7.4), layout="constrained")
for ax, (name, f) in zip(axes.flat, mappings.items()):
    P = f(random_scores)
    xy = P @ corners
    n_sparse = np.mean((P == 0).any(axis=1))
    ax.fill(*corners.T, facecolor="none", edgecolor="k", linewidth=0.8)
    ax.scatter(*xy.T, s=4, alpha=0.4, c=P, edgecolors="none")
    ax.set_title(f"{name}\n{n_sparse:.0%} of outputs have a zero")
    ax.set_aspect("equal")
    ax.axis("off")
    for label, (x, y) in zip(["class 1", "class 2", "class 3"], corners):
        ax.annotate(label, (x, y), ha="center", va="top" if y == 0 else "bottom",
                    xytext=(0, -4 if y == 0 else 4), textcoords="offset points")
plt.show()

# %%
# Temperature: from uniform to argmax
# -----------------------------------
# Scaling the scores, ``sparsemax(z / T)``, moves from the argmax
# (:math:`T \to 0`) to the uniform distribution (:math:`T \to \infty`);
# unlike softmax, the number of non-zero classes changes along the way, one
# class at a time.
z = np.array([1.2, 0.8, 0.3, -0.2, -1.0])
temperatures = np.geomspace(0.05, 10, 200)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.5), sharey=True, layout="constrained")
for ax, f, name in [(axes[0], softmax, "softmax"), (axes[1], sparsemax, "sparsemax")]:
    P = f(z / temperatures[:, None])
    ax.stackplot(temperatures, P.T, labels=[f"$z_{i + 1} = {v}$" for i, v in enumerate(z)])
    ax.set_xscale("log")
    ax.set_xlabel("temperature $T$")
    ax.set_title(f"{name}$(z / T)$")
axes[0].set_ylabel("probability")
axes[1].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
plt.show()
