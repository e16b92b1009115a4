"""
=====================================================================
Label proportions: the paper's protocol, scaled down
=====================================================================

A small version of ``benchmarks/bench_label_proportions.py``, which
reproduces the label-proportion simulation of Martins & Astudillo (2016,
§5.1) in full. The protocol is the same, only smaller:

* documents from :func:`~sksparsemax.datasets.make_label_proportions`
  (K = 10 labels, vocabulary size V = K), training, development and test
  documents drawn **in one call** so that they share the class prior and the
  word distributions;
* :class:`~sksparsemax.linear_model.SparsemaxMultiLabel` fitted on the
  proportion matrix :math:`Q` with ``loss="sparsemax"`` or
  ``loss="softmax"``, standardised word counts;
* the L2 strength :math:`\\lambda` chosen on the development documents.
  The paper minimises :math:`\\frac{\\lambda}{2}\\|W\\|^2 + \\frac1N\\sum_i
  L_i`; the estimator minimises :math:`\\frac1n\\sum_i L_i +
  \\frac{1}{2Cn}\\|W\\|^2`, so :math:`C = 1/(\\lambda n)`;
* test MSE :math:`= \\sum (p - q)^2 / (N K)` and Jensen-Shannon divergence
  (natural logarithm), mean and standard deviation over a few seeds.

Here: 400 training / 150 development / 400 test documents, three document
lengths, three values of :math:`\\lambda` and three seeds, instead of
1200/200/1000 documents, ten lengths, :math:`\\lambda \\in \\{10^{-9}, \\dots,
1\\}`, K = 10 and 50 and five seeds (see :doc:`/reproductions` for the full
run).
"""

# %%
# The experiment
# --------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sksparsemax.datasets import make_label_proportions
from sksparsemax.linear_model import SparsemaxMultiLabel


def jensen_shannon(P, Q):
    """Mean Jensen-Shannon divergence (natural log) between rows of P and Q."""
    M = (P + Q) / 2

    def kl(A, B):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(A > 0, A * np.log(A / B), 0.0).sum(axis=1)

    return float(np.mean((kl(P, M) + kl(Q, M)) / 2))


def mse(P, Q):
    return float(np.mean((P - Q) ** 2))


n_train, n_dev, n_test, n_labels = 400, 150, 400, 10
lengths = [200, 1000, 2000]
lambdas = [1e-5, 1e-3, 1e-1]
seeds = [0, 1, 2]
losses = ("softmax", "sparsemax")

# results[proportions, loss, metric] -> array (n_seeds, n_lengths)
results = {}


def run(proportions):
    for s, seed in enumerate(seeds):
        for j, length in enumerate(lengths):
            X, _, Q = make_label_proportions(
                n_train + n_dev + n_test, n_labels, document_length=length,
                proportions=proportions, random_state=seed,
            )
            scaler = StandardScaler().fit(X[:n_train])
            X_tr = scaler.transform(X[:n_train])
            X_dv = scaler.transform(X[n_train : n_train + n_dev])
            X_te = scaler.transform(X[n_train + n_dev :])
            Q_tr, Q_dv, Q_te = Q[:n_train], Q[n_train : n_train + n_dev], Q[n_train + n_dev :]
            for loss in losses:
                fits = []
                for lam in lambdas:
                    model = SparsemaxMultiLabel(C=1.0 / (lam * n_train), loss=loss)
                    model.fit(X_tr, Q_tr)
                    fits.append((model.predict_proba(X_dv), model.predict_proba(X_te)))
                # lambda chosen on the development documents, for each metric
                for name, metric in (("JSD", jensen_shannon), ("MSE", mse)):
                    best = min(fits, key=lambda f: metric(f[0], Q_dv))
                    key = (proportions, loss, name)
                    results.setdefault(key, np.zeros((len(seeds), len(lengths))))
                    results[key][s, j] = metric(best[1], Q_te)


# The problems are tiny (10 features): a multi-threaded BLAS only adds
# overhead, a lot of it on a busy machine, so use one thread.
with threadpool_limits(limits=1, user_api="blas"):
    for proportions in ("uniform", "random"):
        run(proportions)

for (proportions, loss, name), values in sorted(results.items()):
    cells = "  ".join(
        f"{m:.4f}±{sd:.4f}" for m, sd in zip(values.mean(0), values.std(0, ddof=1))
    )
    print(f"{proportions:7s} {loss:9s} {name}  {cells}")

# %%
# JSD and MSE against the document length
# ---------------------------------------
# Solid lines: JSD (left axis); dashed lines: MSE (right axis); error bars:
# one standard deviation over the seeds.
colors = {"softmax": "tab:blue", "sparsemax": "tab:red"}
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
twins = []
for ax, proportions in zip(axes, ("uniform", "random")):
    ax2 = ax.twinx()
    twins.append(ax2)
    for loss in losses:
        for name, axis, style in (("JSD", ax, "o-"), ("MSE", ax2, "s--")):
            values = results[proportions, loss, name]
            axis.errorbar(
                lengths, values.mean(0), yerr=values.std(0, ddof=1), fmt=style,
                color=colors[loss], capsize=2, markersize=4, label=f"{name} {loss}",
            )
    ax.set_title(f"K = {n_labels}, {proportions} proportions")
    ax.set_xlabel("document length L")
    ax.set_ylabel("JSD (solid)")
    ax2.set_ylabel("MSE (dashed)")
    ax.set_ylim(bottom=0)
    ax2.set_ylim(bottom=0)
h1, l1 = axes[0].get_legend_handles_labels()
h2, l2 = twins[0].get_legend_handles_labels()
axes[0].legend(h1 + h2, l1 + l2, fontsize=8)
plt.show()

# %%
# Both errors fall as the documents get longer (more words, more evidence
# about the mixture). With sparse targets, sparsemax can put exact zeros on
# the inactive labels, so its advantage over softmax tends to grow with the
# document length; on short documents the two are close. The full benchmark
# (K = 10 and 50, ten lengths, five seeds) is on :doc:`/reproductions`.
