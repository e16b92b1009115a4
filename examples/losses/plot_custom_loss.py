"""
=====================================================
Writing your own loss: sparsemax with a temperature
=====================================================

A new loss is one subclass of :class:`~sksparsemax.losses.FenchelYoungLoss`
with two methods: its mapping ``predict_proba`` (scores to distributions)
and its regulariser ``omega``. Everything else -- the loss value
:math:`\\Omega^*(z) + \\Omega(q) - \\langle z, q\\rangle`, its gradient
:math:`\\hat p(z) - q`, ``-inf`` masks, label proportions, float32 -- comes
from the base class, and :class:`~sksparsemax.FenchelYoungClassifier` fits it.

Here: sparsemax with a temperature :math:`t`, whose regulariser is
:math:`\\Omega(p) = \\tfrac t2 (\\|p\\|^2 - 1)` and whose mapping is the
Euclidean projection of :math:`z / t` onto the simplex. A larger :math:`t`
spreads the probability over more classes.
"""

# %%
# The loss: one class
# -------------------
import numpy as np

from sksparsemax.losses import FenchelYoungLoss


class TemperedSparsemaxLoss(FenchelYoungLoss):
    """Sparsemax with temperature ``t``: Omega(p) = t/2 (||p||^2 - 1)."""

    def __init__(self, t=2.0):
        self.t = t

    def predict_proba(self, Z):
        U = np.asarray(Z, dtype=np.float64) / self.t
        # Sort-based projection onto the simplex.
        S = -np.sort(-U, axis=1)
        cumsum = np.cumsum(S, axis=1) - 1.0
        ks = np.arange(1, U.shape[1] + 1)
        with np.errstate(invalid="ignore"):  # -inf masks
            support = S * ks > cumsum
        size = support.sum(axis=1)
        tau = cumsum[np.arange(U.shape[0]), size - 1] / size
        return np.maximum(U - tau[:, None], 0.0)

    def omega(self, P):
        return 0.5 * self.t * (np.einsum("ij,ij->i", P, P) - 1.0)


# %%
# Its values and gradients follow from the two methods. At ``t = 1`` it is
# the shipped sparsemax loss:
from sksparsemax.losses import SparsemaxLoss

Z = np.array([[1.0, 0.2, -1.0], [0.0, 3.0, -np.inf]])
y = [0, 1]
print("tempered, t=1:", TemperedSparsemaxLoss(t=1.0).loss(Z, y))
print("SparsemaxLoss:", SparsemaxLoss().loss(Z, y))
assert np.allclose(TemperedSparsemaxLoss(t=1.0).loss(Z, y), SparsemaxLoss().loss(Z, y))

# %%
# Fitting it
# ----------
# :class:`~sksparsemax.FenchelYoungClassifier` takes the loss instance. The
# support of ``predict_proba`` (the classes the model keeps) grows with ``t``.
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sksparsemax import FenchelYoungClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
temperatures = [0.5, 1.0, 2.0, 4.0]
sizes, accuracies = [], []
for t in temperatures:
    clf = make_pipeline(
        StandardScaler(), FenchelYoungClassifier(loss=TemperedSparsemaxLoss(t), C=0.1)
    ).fit(X_train, y_train)
    P = clf.predict_proba(X_test)
    sizes.append(np.count_nonzero(P, axis=1).mean())
    accuracies.append(clf.score(X_test, y_test))
    print(f"t={t:<4} mean support {sizes[-1]:.2f} classes, accuracy {accuracies[-1]:.3f}")

# %%
# The mean support size, computed above, is what the figure shows.
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(temperatures, sizes, "o-")
ax.set_xscale("log", base=2)
ax.set_xlabel("temperature t")
ax.set_ylabel("mean number of classes with p > 0")
ax.set_title("Tempered sparsemax on digits (held-out 25%)")
fig.tight_layout()
plt.show()
