"""
=============================================
Continuous attention over an image (2D)
=============================================

In two dimensions, continuous sparsemax of the quadratic score
:math:`f(t) = -\\tfrac12 (t - \\mu)^\\top \\Sigma^{-1} (t - \\mu)` is a
*truncated paraboloid* supported on an ellipse
(:class:`~sksparsemax.continuous.MultivariateBetaGaussian` with
``alpha=2``), while continuous softmax (``alpha=1``) is the Gaussian
:math:`N(\\mu, \\Sigma)`, which covers the whole plane.
:class:`~sksparsemax.continuous.ContinuousAttention2D` uses such a density
to attend to a region of an image: the context vector is the expectation of
the (ridge-regressed) feature map under the density.
"""

# %%
# Densities
# ---------
import matplotlib.pyplot as plt
import numpy as np

from sksparsemax.continuous import (
    ContinuousAttention2D,
    GaussianRBF2D,
    MultivariateBetaGaussian,
)

mu = np.array([0.45, 0.55])
Sigma = np.array([[0.020, 0.012], [0.012, 0.030]])
xs = np.linspace(0, 1, 200)
T = np.stack(np.meshgrid(xs, xs, indexing="xy"), axis=-1).reshape(-1, 2)

fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True, layout="constrained")
for ax, alpha in zip(axes, (1.0, 1.5, 2.0)):
    p = MultivariateBetaGaussian(mu, Sigma, alpha=alpha)
    density = p.pdf(T).reshape(len(xs), len(xs))
    im = ax.pcolormesh(xs, xs, density, cmap="viridis", shading="auto")
    if alpha > 1:
        ax.contour(xs, xs, density > 0, levels=[0.5], colors="w", linewidths=1)
    zero = np.mean(density == 0)
    ax.set_title(f"alpha = {alpha:g}: {zero:.0%} of the square has p = 0")
    ax.set_aspect("equal")
    fig.colorbar(im, ax=ax, shrink=0.8)
plt.show()

# %%
# The support is the ellipse :math:`(t-\mu)^\top\Sigma^{-1}(t-\mu) \le r^2`,
# available as :meth:`~sksparsemax.continuous.MultivariateBetaGaussian.support`:
support = MultivariateBetaGaussian(mu, Sigma, alpha=2.0).support()
print(support)
print("covariance of the truncated paraboloid:\n", MultivariateBetaGaussian(mu, Sigma, 2.0).cov())

# %%
# Attention over a synthetic image
# --------------------------------
# A 24 x 24 "image" with three feature channels: three coloured discs on a
# dark background. A query is a location :math:`\mu` and a scale
# :math:`\Sigma`. To compare like with like, the sparse query's
# :math:`\Sigma` is chosen so that its density has the *same covariance* as
# the Gaussian one: for ``alpha=2`` in 2D the covariance is
# :math:`(-\tau/3)\Sigma` with :math:`\tau = -(\pi\sqrt{\det\Sigma})^{-1/2}`,
# so :math:`\Sigma = s I` has covariance :math:`v I` for
# :math:`s = 9\pi v^2`.
H = W = 24
rows, cols = np.meshgrid((np.arange(H) + 0.5) / H, (np.arange(W) + 0.5) / W, indexing="ij")
image = np.zeros((H, W, 3))
for (r, c), colour in zip([(0.25, 0.3), (0.7, 0.25), (0.5, 0.75)], np.eye(3)):
    image[(rows - r) ** 2 + (cols - c) ** 2 < 0.15**2] = colour

variance = 0.006
Sigmas = {1.0: variance * np.eye(2), 2.0: 9 * np.pi * variance**2 * np.eye(2)}
for alpha, S in Sigmas.items():
    print(f"alpha = {alpha:g}: covariance of the density", np.diag(MultivariateBetaGaussian(mu, S, alpha).cov()))

queries = np.array([[0.25, 0.3], [0.5, 0.75], [0.5, 0.48]])  # (row, column) positions
pixels = ContinuousAttention2D.grid_positions(H, W)  # (row, column) of each pixel centre

fig, axes = plt.subplots(1, 3, figsize=(13, 4.3), layout="constrained")
axes[0].imshow(image, extent=(0, 1, 1, 0))
axes[0].set_title("image, queries and alpha = 2 supports")
angles = np.linspace(0, 2 * np.pi, 100)
for i, q in enumerate(queries):
    s = MultivariateBetaGaussian(q, Sigmas[2.0], alpha=2.0).support()
    radius = s.radius * np.sqrt(Sigmas[2.0][0, 0])  # Euclidean radius (Sigma = s I)
    axes[0].plot(q[1] + radius * np.cos(angles), q[0] + radius * np.sin(angles), "w")
    axes[0].annotate(str(i + 1), (q[1], q[0]), color="w", ha="center", va="center")
q = queries[2]
for ax, alpha in zip(axes[1:], (1.0, 2.0)):
    density = MultivariateBetaGaussian(q, Sigmas[alpha], alpha=alpha).pdf(pixels).reshape(H, W)
    ax.imshow(image, extent=(0, 1, 1, 0), alpha=0.35)
    ax.imshow(np.ma.masked_equal(density, 0), extent=(0, 1, 1, 0), cmap="magma", alpha=0.8)
    ax.set_title(f"query 3, alpha = {alpha:g}: {np.count_nonzero(density)} of {H * W} pixels with p > 0",
                 fontsize="medium")
plt.show()

# %%
# The Gaussian gives weight to every pixel; continuous sparsemax only to the
# pixels inside its ellipse. The context vectors (the expected colour under
# the density, computed in closed form from a ridge-regressed value function
# on 128 Gaussian basis functions):
basis = GaussianRBF2D.grid(n_per_side=8, widths=[0.05, 0.15])
for alpha in (1.0, 2.0):
    attention = ContinuousAttention2D(basis, alpha=alpha, ridge=0.05).fit(image)
    contexts = attention.context(queries, Sigmas[alpha])
    print(f"alpha = {alpha:g}")
    for i, c in enumerate(contexts):
        print(f"  query {i + 1}: (red, green, blue) = {np.array2string(c, precision=3, suppress_small=True)}")

# %%
# Queries 1 and 2 sit on a disc and return (nearly) its colour under both
# mechanisms; query 3 sits on the background and returns a dark colour with
# a little blue from the nearby disc. At matched covariance the two contexts
# are close: the difference is *which pixels can matter*. The sparse context
# depends only on the pixels inside the ellipse (62 here), so anything that
# happens outside it -- another object, noise -- cannot change the output
# nor receive a gradient. (The value function is a smooth fit of the image,
# so the contexts are slightly blurred versions of the pixel averages.)
