"""
====================================================================
Continuous sparsemax vs. softmax: densities and attention in 1D
====================================================================

Softmax and sparsemax have *continuous* counterparts (Martins et al.,
NeurIPS 2020): given a score function :math:`f(t)` over a domain instead of
a score vector, continuous :math:`\\alpha`-entmax returns the density

.. math::

    p(t) = \\left[(\\alpha - 1) f(t) - \\tau\\right]_+^{1/(\\alpha - 1)},

with :math:`\\tau` such that :math:`\\int p = 1` (for :math:`\\alpha = 1`,
:math:`p \\propto e^{f}`). With a quadratic score
:math:`f(t) = -(t - \\mu)^2 / (2\\sigma^2)`, :math:`\\alpha = 1` gives the
Gaussian :math:`N(\\mu, \\sigma^2)` and :math:`\\alpha = 2` a *truncated
parabola* with compact support :math:`[\\mu - a, \\mu + a]`,
:math:`a = (3\\sigma^2/2)^{1/3}`: continuous sparsemax. In between lie the
beta-Gaussians, :class:`~sksparsemax.continuous.BetaGaussian`.

Note that ``sigma2`` is the scale of the *score*, not the variance of the
density (the two coincide only for :math:`\\alpha = 1`).
"""

# %%
# The beta-Gaussian family
# ------------------------
import matplotlib.pyplot as plt
import numpy as np

from sksparsemax.continuous import BetaGaussian, ContinuousAttention1D, GaussianRBF1D

t = np.linspace(-3, 3, 1201)
fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
for alpha in (1.0, 1.25, 1.5, 2.0, 3.0):
    p = BetaGaussian(mu=0.0, sigma2=1.0, alpha=alpha)
    label = f"alpha = {alpha:g}"
    if alpha > 1:
        low, high = p.support()
        label += f", support [{float(low):.2f}, {float(high):.2f}]"
    ax.plot(t, p.pdf(t), label=label)
ax.set_xlabel("t")
ax.set_ylabel("density")
ax.set_title("Continuous alpha-entmax of $f(t) = -t^2/2$")
ax.legend()
plt.show()

# %%
# For :math:`\alpha > 1` the density is exactly zero outside a bounded
# interval, whose width shrinks as :math:`\alpha` grows. The density is a
# batched object: ``BetaGaussian(mu=[...], sigma2=[...])`` holds many
# densities at once, with ``pdf``, ``cdf``, ``ppf``, ``mean``, ``var`` and
# ``rvs``.
p = BetaGaussian(mu=[0.0, 1.0], sigma2=[1.0, 0.1], alpha=2.0)
print("batch shape", p.batch_shape, "| variances", p.var(), "| support", p.support())

# %%
# Continuous attention over a sequence
# ------------------------------------
# Continuous attention summarises a sequence of value vectors
# :math:`v_1, \dots, v_L`, observed at positions :math:`t_\ell \in [0, 1]`,
# by first fitting a smooth value function :math:`V(t) = B^\top \psi(t)`
# (ridge regression on Gaussian radial basis functions :math:`\psi`) and
# then taking its expectation under a density :math:`p`:
# :math:`c = \mathbb{E}_p[V(t)] = B^\top \mathbb{E}_p[\psi(t)]`. With
# :math:`\alpha = 2` the context only depends on the values inside the
# support of :math:`p`; with :math:`\alpha = 1` every position contributes.
#
# Here the "sequence" is a noisy one-dimensional signal (D = 1) of 120 steps.
rng = np.random.default_rng(0)
L = 120
positions = (np.arange(L) + 0.5) / L
signal = np.sin(6 * positions) + (positions > 0.6) * 1.5
values = (signal + 0.2 * rng.normal(size=L))[:, None]  # (L, D)

basis = GaussianRBF1D.uniform(32, widths=[0.02, 0.08])
attentions = {
    alpha: ContinuousAttention1D(basis, alpha=alpha, ridge=0.1).fit(values)
    for alpha in (1.0, 2.0)
}

# To compare like with like, both densities get the same variance v: the
# Gaussian has sigma2 = v; the truncated parabola has variance a**2 / 5, so
# its half-width is a = sqrt(5 v) and its score scale sigma2 = 2 a**3 / 3.
variance = 0.002
half_width = np.sqrt(5 * variance)
sigma2s = {1.0: variance, 2.0: 2 * half_width**3 / 3}
for alpha, s2 in sigma2s.items():
    print(f"alpha = {alpha:g}: sigma2 = {s2:.2e}, variance = {float(BetaGaussian(0.5, s2, alpha).var()):.4f}")

mu = 0.55
fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True, layout="constrained")
axes[0].plot(positions, values[:, 0], ".", color="0.6", label="values $v_\\ell$")
axes[0].plot(positions, basis(positions) @ attentions[2.0].coef_[:, 0], "k",
             label="fitted value function $V(t)$")
ax_density = axes[0].twinx()
for alpha, color in ((1.0, "C0"), (2.0, "C3")):
    density = BetaGaussian(mu, sigma2s[alpha], alpha=alpha)
    ax_density.fill_between(positions, density.pdf(positions), alpha=0.25, color=color,
                            label=f"attention density, alpha = {alpha:g}")
    c = attentions[alpha].context(mu, sigma2s[alpha])
    axes[0].axhline(c[0], color=color, linestyle="--", linewidth=1)
ax_density.set_ylabel("density")
ax_density.legend(loc="lower right", fontsize="small")
axes[0].legend(loc="upper left", fontsize="small")
axes[0].set_title(f"One query: mu = {mu}, variance {variance} (dashed: the context values)")

# The context as the query moves along the sequence: a smoothed signal.
mus = np.linspace(0.02, 0.98, 300)
axes[1].plot(positions, signal, color="0.6", label="noise-free signal")
for alpha, color in ((1.0, "C0"), (2.0, "C3")):
    axes[1].plot(mus, attentions[alpha].context(mus, sigma2s[alpha])[:, 0], color=color,
                 label=f"context, alpha = {alpha:g}")
axes[1].set_xlabel("position / query location mu")
axes[1].legend(fontsize="small")
plt.show()

# %%
# At equal variance, continuous sparsemax averages over a window of
# half-width :math:`a = \sqrt{5 v} \approx 0.1` and ignores everything
# outside it, while the Gaussian is more peaked but has tails that reach
# further. Note that the *same* ``sigma2`` would give very different
# widths: ``sigma2`` is the scale of the score, not the variance. Gradients
# with respect to the density parameters are available in closed form
# (:meth:`~sksparsemax.continuous.ContinuousAttention1D.context_vjp`), so
# ``mu`` and ``sigma2`` can be produced by a trained network.
