"""
=====================================================
Multi-label classification of the emotions data set
=====================================================

The *emotions* data (593 songs, 72 audio features, 6 emotion labels; MULAN's
train/test split) ship with sksparsemax, so this example needs no download:
:func:`~sksparsemax.datasets.load_emotions`.

:class:`~sksparsemax.linear_model.SparsemaxMultiLabel` is the multi-label
model of Martins & Astudillo (2016): one linear score per label, trained so
that :math:`\\operatorname{sparsemax}(z)` matches the uniform distribution
over each song's labels. It predicts the labels in the **support** of
:math:`\\operatorname{sparsemax}(t \\cdot z)`; the ``scale`` :math:`t`
trades recall for precision (larger :math:`t`, fewer labels). We compare it
with

* the paper's softmax baseline (``loss="softmax"``: same targets, predict the
  labels with :math:`\\operatorname{softmax}(z)_k > p_0`), and
* scikit-learn's one-vs-rest logistic regression
  (:class:`~sklearn.multiclass.OneVsRestClassifier`), which predicts each
  label independently with a threshold on its sigmoid.
"""

# %%
# Data
# ----
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, hamming_loss
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sksparsemax.datasets import load_emotions
from sksparsemax.linear_model import SparsemaxMultiLabel

data = load_emotions()
X_train, Y_train = load_emotions(subset="train", return_X_y=True)
X_test, Y_test = load_emotions(subset="test", return_X_y=True)
labels = data.target_names
print(X_train.shape, Y_train.shape, X_test.shape)
print("labels per song (train):", np.bincount(Y_train.sum(axis=1)))

# %%
# Tuning C and the prediction threshold
# -------------------------------------
# The paper tunes the regularisation together with the prediction rule
# (``scale`` for sparsemax, ``threshold`` for softmax). The prediction rule
# does not change the fitted weights, so we fit once per ``C`` on 75% of the
# training songs and try every rule on the other 25% with ``set_params``.
# (:class:`~sklearn.model_selection.GridSearchCV` over
# ``{"sparsemaxmultilabel__C": ..., "sparsemaxmultilabel__scale": ...}``
# does the same with cross-validation, at the price of one fit per
# combination.)
X_fit, X_val, Y_fit, Y_val = train_test_split(X_train, Y_train, test_size=0.25, random_state=0)

candidates = {
    "sparsemax": ("scale", [1.0, 1.5, 2.0, 3.0, 4.0, 5.0]),
    "softmax": ("threshold", [k / 6 for k in (0.5, 0.75, 1, 1.5, 2)]),
}
best = {}
for loss, (rule, values) in candidates.items():
    scores = []
    for C in (0.03, 0.3):
        model = make_pipeline(StandardScaler(), SparsemaxMultiLabel(C=C, loss=loss, max_iter=300))
        model.fit(X_fit, Y_fit)
        for value in values:
            model.set_params(**{f"sparsemaxmultilabel__{rule}": value})
            scores.append((f1_score(Y_val, model.predict(X_val), average="micro"), C, value))
    f1, C, value = max(scores)
    best[loss] = (C, rule, value)
    print(f"{loss:9s}: best C={C}, {rule}={value:.3g} (validation micro-F1 {f1:.3f})")

# %%
# Test scores
# -----------
# The models are refitted on the whole training part with the chosen
# settings. For one-vs-rest logistic regression we use the usual 0.5
# threshold on each sigmoid.
models = {
    f"sparsemax (scale={best['sparsemax'][2]:g})": SparsemaxMultiLabel(
        C=best["sparsemax"][0], scale=best["sparsemax"][2], max_iter=300
    ),
    f"softmax (threshold={best['softmax'][2]:.3g})": SparsemaxMultiLabel(
        C=best["softmax"][0], loss="softmax", threshold=best["softmax"][2], max_iter=300
    ),
    "one-vs-rest logistic": OneVsRestClassifier(LogisticRegression(C=0.1)),
}
predictions = {}
for name, model in models.items():
    models[name] = make_pipeline(StandardScaler(), model).fit(X_train, Y_train)
    Y_pred = predictions[name] = models[name].predict(X_test)
    print(
        f"{name:28s} micro-F1 {f1_score(Y_test, Y_pred, average='micro'):.3f}  "
        f"macro-F1 {f1_score(Y_test, Y_pred, average='macro', zero_division=0):.3f}  "
        f"Hamming loss {hamming_loss(Y_test, Y_pred):.3f}  "
        f"labels/song {Y_pred.sum(axis=1).mean():.2f} (true {Y_test.sum(axis=1).mean():.2f})"
    )

# %%
# Per-label F1 and the number of predicted labels
# -----------------------------------------------
fig, axes = plt.subplots(1, 2, figsize=(13, 4.2), layout="constrained")
width = 0.8 / len(predictions)
for i, (name, Y_pred) in enumerate(predictions.items()):
    per_label = f1_score(Y_test, Y_pred, average=None, zero_division=0)
    axes[0].bar(np.arange(len(labels)) + i * width, per_label, width, label=name)
    counts = np.bincount(Y_pred.sum(axis=1), minlength=7)[:7]
    axes[1].plot(np.arange(7), counts, "o-", label=name)
axes[1].plot(np.arange(7), np.bincount(Y_test.sum(axis=1), minlength=7)[:7], "k--", label="true")
axes[0].set_xticks(np.arange(len(labels)) + 0.4 - width / 2, labels, rotation=20)
axes[0].set_ylabel("F1 on the test songs")
axes[0].legend(fontsize="small")
axes[1].set_xlabel("number of labels of a song")
axes[1].set_ylabel("number of test songs")
axes[1].legend(fontsize="small")
plt.show()

# %%
# Predicted proportions
# ---------------------
# ``predict_proba`` of ``SparsemaxMultiLabel`` returns *label proportions*:
# each row sums to one over the labels, with exact zeros for the labels the
# model rules out. They are not the per-label marginal probabilities of the
# one-vs-rest model (whose rows do not sum to one).
sparse_model = models[next(iter(models))]
P = sparse_model.predict_proba(X_test[:8])
fig, ax = plt.subplots(figsize=(8, 3.6), layout="constrained")
im = ax.imshow(P.T, cmap="Greens", vmin=0, vmax=1)
for (i, j), value in np.ndenumerate(P):
    ax.text(i, j, "0" if value == 0 else f"{value:.2f}", ha="center", va="center", fontsize=8)
    if Y_test[i, j]:
        ax.add_patch(plt.Rectangle((i - 0.5, j - 0.5), 1, 1, fill=False, edgecolor="r", linewidth=1.5))
ax.set_yticks(range(len(labels)), labels)
ax.set_xlabel("test song (red boxes: true labels)")
fig.colorbar(im, label="sparsemax proportion")
plt.show()
