"""
===================================================================
Decision regions and sparse probabilities vs. LogisticRegression
===================================================================

Four linear classifiers on the same two-dimensional, four-class problem:
scikit-learn's :class:`~sklearn.linear_model.LogisticRegression` (softmax)
and the three multi-class estimators of sksparsemax,
:class:`~sksparsemax.linear_model.SparsemaxClassifier`,
:class:`~sksparsemax.linear_model.EntmaxClassifier` (``alpha=1.5``) and
:class:`~sksparsemax.linear_model.SparseSoftmaxClassifier` (``k=2``).

All four are linear: their decision regions (the argmax of the scores) are
separated by straight lines and look alike. What differs is
:meth:`predict_proba`: the sparse models give probability *exactly 0* to the
classes they rule out, so their probability maps show plateaus at 1 and
regions where only two or three classes compete.
"""

# %%
# Data and models
# ---------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sksparsemax.linear_model import (
    EntmaxClassifier,
    SparsemaxClassifier,
    SparseSoftmaxClassifier,
)

X, y = make_blobs(
    n_samples=400, centers=[[-2, -1], [2, -1], [0, 2.2], [0, -0.2]],
    cluster_std=[1.0, 1.0, 1.0, 0.8], random_state=0,
)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

models = {
    "LogisticRegression": LogisticRegression(C=1.0),
    "SparsemaxClassifier": SparsemaxClassifier(C=1.0),
    "EntmaxClassifier(alpha=1.5)": EntmaxClassifier(alpha=1.5, C=1.0),
    "SparseSoftmaxClassifier(k=2)": SparseSoftmaxClassifier(k=2, C=1.0),
}
for name, model in models.items():
    models[name] = make_pipeline(StandardScaler(), model).fit(X_train, y_train)
    P = models[name].predict_proba(X_test)
    print(
        f"{name:30s} accuracy {models[name].score(X_test, y_test):.3f}   "
        f"zero probabilities {np.mean(P == 0):6.1%}   "
        f"mean support size {np.mean((P > 0).sum(axis=1)):.2f}"
    )

# %%
# Decision regions and confidence
# -------------------------------
# Top row: the predicted class (colour) shaded by the largest predicted
# probability. Bottom row: the number of classes with a positive
# probability. LogisticRegression gives every class a positive probability
# everywhere (support size 4); the sparse models are certain (support size
# 1) far from the boundaries.
xx, yy = np.meshgrid(np.linspace(-5.5, 5.5, 160), np.linspace(-4.5, 5.5, 150))
grid = np.column_stack([xx.ravel(), yy.ravel()])
class_colors = np.array(["#1b9e77", "#d95f02", "#7570b3", "#e7298a"])

fig, axes = plt.subplots(2, 4, figsize=(16, 7.5), sharex=True, sharey=True, layout="constrained")
for j, (name, model) in enumerate(models.items()):
    P = model.predict_proba(grid)
    label = P.argmax(axis=1)
    rgb = plt.matplotlib.colors.to_rgba_array(class_colors[label])[:, :3]
    confidence = P.max(axis=1)[:, None]
    image = 1 - (1 - rgb) * (confidence - 0.25) / 0.75  # white at 1/4, full colour at 1
    axes[0, j].imshow(image.reshape(*xx.shape, 3), origin="lower",
                      extent=(xx.min(), xx.max(), yy.min(), yy.max()), aspect="auto")
    axes[0, j].scatter(*X_test.T, c=class_colors[y_test], s=12, edgecolors="k", linewidths=0.3)
    axes[0, j].set_title(name, fontsize="medium")
    support = (P > 0).sum(axis=1).reshape(xx.shape)
    im = axes[1, j].contourf(xx, yy, support, levels=[0.5, 1.5, 2.5, 3.5, 4.5], cmap="Blues")
    axes[1, j].contour(xx, yy, label.reshape(xx.shape), levels=[0.5, 1.5, 2.5], colors="k",
                       linewidths=0.6)
axes[0, 0].set_ylabel("predicted class, shaded by max probability")
axes[1, 0].set_ylabel("number of classes with p > 0")
cbar = fig.colorbar(im, ax=axes[1, :], ticks=[1, 2, 3, 4], shrink=0.9)
cbar.set_label("support size")
plt.show()

# %%
# What ``predict_proba`` returns
# ------------------------------
# A few test points, rounded. Rows of the sparse models contain exact zeros
# (and often an exact 1), printed as ``0``; LogisticRegression's small
# probabilities are small but never zero. Downstream code that takes
# ``np.log`` of these probabilities, or computes a log-loss, must be ready
# for ``-inf``.
rows = [0, 1, 2, 3]
np.set_printoptions(formatter={"float": lambda v: "0" if v == 0 else f"{v:.3g}"})
for name, model in models.items():
    print(name)
    print(model.predict_proba(X_test[rows]))

# %%
# How C controls the sparsity
# ---------------------------
# ``C`` is the inverse regularisation strength, exactly as in
# LogisticRegression. Larger ``C`` means larger weights, hence larger score
# gaps and sparser probabilities; small ``C`` shrinks the scores towards
# zero and every class is back in the support. ``k`` bounds the support of
# the top-k model from above whatever ``C``.
Cs = np.geomspace(1e-3, 1e2, 8)
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
for name, make in [
    ("SparsemaxClassifier", lambda C: SparsemaxClassifier(C=C)),
    ("EntmaxClassifier(alpha=1.5)", lambda C: EntmaxClassifier(alpha=1.5, C=C)),
    ("SparseSoftmaxClassifier(k=2)", lambda C: SparseSoftmaxClassifier(k=2, C=C, max_iter=200)),
]:
    sizes = []
    for C in Cs:
        model = make_pipeline(StandardScaler(), make(C)).fit(X_train, y_train)
        sizes.append(np.mean((model.predict_proba(X_test) > 0).sum(axis=1)))
    ax.plot(Cs, sizes, "o-", label=name)
ax.axhline(4, color="k", linestyle=":", label="LogisticRegression (always 4)")
ax.set_xscale("log")
ax.set_xlabel("C")
ax.set_ylabel("mean number of classes with p > 0")
ax.legend()
plt.show()
