"""
==========================================================
Prediction sets with guaranteed coverage: sparse supports
==========================================================

The labels that sparsemax or entmax give a nonzero probability form a *set*.
Campos et al. (AISTATS 2025) show that calibrating the temperature :math:`T`
of :math:`\\operatorname{sparsemax}(z / T)` on held-out data is split
conformal prediction: with :math:`\\hat T` the
:math:`\\lceil (n+1)(1-\\varepsilon) \\rceil`-th smallest calibration score

.. math::

   s(z, y) = \\sum_j (z_j - z_y)_+ ,

the set :math:`\\{y : s(z(x), y) \\le \\hat T\\}` -- the support of the
calibrated sparsemax -- contains the true label with probability at least
:math:`1 - \\varepsilon`, whatever the model.
:class:`~sksparsemax.conformal.SparseConformalClassifier` does this around any
classifier. We compare its sets with MAPIE's LAC and APS sets on the same
fitted model, the same calibration points and the same test points.
"""

# %%
# A model and a calibration split
# -------------------------------
# A logistic regression on a noisy 6-class problem (its accuracy is far from
# perfect, so the sets have to grow to reach 90% coverage).
import matplotlib.pyplot as plt
import numpy as np
from mapie.classification import SplitConformalClassifier
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from sksparsemax.conformal import SparseConformalClassifier

X, y = make_classification(
    4000, n_features=20, n_informative=10, n_classes=6, class_sep=1.5, flip_y=0.05,
    random_state=0,
)
X_train, X_rest, y_train, y_rest = train_test_split(X, y, train_size=1000, random_state=0)
model = LogisticRegression(max_iter=1000).fit(X_train, y_train)
print(f"accuracy of the model: {model.score(X_rest, y_rest):.3f}")

COVERAGE = 0.9

# %%
# Calibrating the temperature
# ---------------------------
# ``cv="prefit"``: the model is fitted; ``fit`` only calibrates
# :math:`\hat T` (``temperature_``) on the calibration points.
X_cal, X_test, y_cal, y_test = train_test_split(X_rest, y_rest, test_size=0.5, random_state=1)
sparse = SparseConformalClassifier(model, coverage=COVERAGE, cv="prefit").fit(X_cal, y_cal)
print(f"calibrated temperature: {sparse.temperature_:.3f}")

sets = sparse.predict_set(X_test)
proba = sparse.predict_proba(X_test)
assert ((proba > 0) == sets).all()  # the support *is* the set
i = int(np.argmax(sets.sum(axis=1) == 3))
print("a test point with three labels in its set:")
print("  set:", np.flatnonzero(sets[i]), " true label:", y_test[i])
print("  calibrated sparsemax probabilities:", proba[i].round(3))

# %%
# Four methods on the same model and data
# ---------------------------------------
# Sparsemax and 1.5-entmax supports (ours), and MAPIE's LAC
# (:math:`1 - p_y`) and APS (cumulated probability) scores, each calibrated
# on the same points. We repeat over 30 random calibration/test splits of the
# held-out data.


def predictors(X_cal, y_cal):
    ours = {
        "sparsemax": SparseConformalClassifier(model, coverage=COVERAGE, cv="prefit"),
        "entmax-1.5": SparseConformalClassifier(
            model, mapping="entmax", alpha=1.5, coverage=COVERAGE, cv="prefit"
        ),
    }
    out = {name: clf.fit(X_cal, y_cal).predict_set for name, clf in ours.items()}
    for score in ("lac", "aps"):
        mapie = SplitConformalClassifier(
            model, confidence_level=COVERAGE, conformity_score=score, prefit=True
        ).conformalize(X_cal, y_cal)
        out[f"MAPIE {score.upper()}"] = lambda X, m=mapie: m.predict_set(X)[1][:, :, 0]
    return out


coverage, size, sizes = {}, {}, {}
for seed in range(30):
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, test_size=0.5, random_state=seed
    )
    for name, predict_set in predictors(X_cal, y_cal).items():
        s = predict_set(X_test)
        coverage.setdefault(name, []).append(s[np.arange(len(y_test)), y_test].mean())
        size.setdefault(name, []).append(s.sum(axis=1).mean())
        sizes.setdefault(name, []).append(s.sum(axis=1))

for name in coverage:
    print(
        f"{name:11s} coverage {np.mean(coverage[name]):.3f} (sd {np.std(coverage[name]):.3f})"
        f"   mean set size {np.mean(size[name]):.2f}"
    )

# %%
# Coverage and set sizes
# ----------------------
# The guarantee is on the expectation over calibration sets: the coverages of
# the splits (left) scatter around a mean at or just above the target (the
# splits share one held-out set, so their mean carries that set's noise).
# APS is conservative here (MAPIE's default ``include_last_label=True``). The
# set sizes differ (right): at the same coverage, smaller sets are more
# informative. ``benchmarks/bench_conformal.py`` makes this comparison on
# more data sets and models (see the user guide).
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
names = list(coverage)
ax1.boxplot([coverage[n] for n in names])
ax1.set_xticks(range(1, len(names) + 1), names)
ax1.axhline(COVERAGE, color="k", ls="--", lw=1, label="target")
ax1.set_ylabel("coverage of the test half")
ax1.legend()
bins = np.arange(0.5, 7.5)
for n in names:
    ax2.hist(np.concatenate(sizes[n]), bins=bins, histtype="step", lw=2, density=True, label=n)
ax2.set_xlabel("set size")
ax2.set_ylabel("share of test points")
ax2.legend()
fig.tight_layout()
plt.show()
