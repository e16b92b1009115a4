"""rbf_expectation_1d meets its documented error bound for every input, or raises.

The reference is independent of the code under test: the beta-Gaussian density is
written out here (half-width from the normalisation, by quad) and r_j = int p psi_j
is integrated with scipy.integrate.quad.
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from sksparsemax.continuous import (
    GaussianRBF1D,
    rbf_expectation_1d,
    rbf_expectation_and_jacobian_1d,
)

BASIS = GaussianRBF1D.uniform(16)  # 32 functions, widths 0.1 and 0.5
SIGMA2 = [1e-12, 1e-8, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6]


def _quad(f, lo, hi, points):
    pts = sorted(p for p in points if lo < p < hi)
    val, _ = quad(f, lo, hi, points=pts or None, limit=800, epsabs=1e-15, epsrel=1e-13)
    return val


def _reference(mu, sigma2, alpha, basis):
    """r_j = int p(t) psi_j(t) dt, p(t) = [(alpha - 1)(-tau - (t - mu)^2 / (2 sigma2))]_+^(1/(alpha - 1))."""
    if alpha == 1:
        s = math.sqrt(sigma2)
        lo, hi = mu - 40 * s, mu + 40 * s
        pdf = lambda t: math.exp(-0.5 * (t - mu) ** 2 / sigma2) / math.sqrt(2 * math.pi * sigma2)  # noqa: E731
    else:
        b = 1 / (alpha - 1)
        # p = K^b (1 - x^2)^b, x = (t - mu) / a, K = (alpha - 1) a^2 / (2 sigma2), int p = 1
        c_b, _ = quad(lambda x: (1 - x * x) ** b, -1, 1, epsabs=0, epsrel=1e-13)
        a = ((2 * sigma2 / (alpha - 1)) ** b / c_b) ** (1 / (1 + 2 * b))
        lo, hi = mu - a, mu + a

        def pdf(t):
            x = (t - mu) / a
            return (1 - x * x) ** b / (a * c_b) if abs(x) < 1 else 0.0

    out = []
    for mj, sj in zip(basis.mu, basis.sigma):
        # psi_j is below exp(-800) past 40 sigma_j: integrate over the overlap only
        l, h = max(lo, mj - 40 * sj), min(hi, mj + 40 * sj)
        if l >= h:
            out.append(0.0)
            continue
        psi = lambda t: math.exp(-0.5 * ((t - mj) / sj) ** 2) / (math.sqrt(2 * math.pi) * sj)  # noqa: E731
        pts = [mu] + [mj + k * sj for k in (-6, -3, -1, 0, 1, 3, 6)]
        out.append(_quad(lambda t: pdf(t) * psi(t), l, h, pts))
    return np.array(out)


def _call_with_enough_nodes(fun, *args, **kwargs):
    """Call ``fun``; if it asks for more nodes, check the message and pass what it asks."""
    try:
        return fun(*args, **kwargs)
    except ValueError as err:
        msg = str(err)
        assert "quadrature nodes" in msg and "n_max=" in msg
        needed = int(msg.split("pass n_max=")[1].split()[0])
        return fun(*args, **kwargs, n_max=needed)


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 3.0])
@pytest.mark.parametrize("sigma2", SIGMA2)
def test_1d_expectation_meets_tol_for_every_sigma2(alpha, sigma2):
    mu = 0.4
    ref = _reference(mu, sigma2, alpha, BASIS)
    r = _call_with_enough_nodes(rbf_expectation_1d, mu, sigma2, BASIS, alpha)
    scale = 1 / (math.sqrt(2 * math.pi) * BASIS.sigma)  # max psi_j: tol is relative to it
    # documented tol 1e-12, plus the reference's own rounding
    assert np.all(np.abs(r - ref) <= 2e-12 * scale), np.max(np.abs(r - ref) / scale)


def test_1d_wide_support_past_n_max_raises_instead_of_losing_accuracy():
    # the case of the issue: 33% wrong with the default n_max, silently
    with pytest.raises(ValueError, match=r"needs about \d+ quadrature nodes.*n_max=4096"):
        rbf_expectation_1d(0.0, 1e6, BASIS, 1.5)
    with pytest.raises(ValueError, match=r"batch index \(1,\).*pass n_max="):
        rbf_expectation_1d([0.0, 0.0], [1.0, 1e6], BASIS, 1.5)
    with pytest.raises(ValueError, match="n_max"):
        rbf_expectation_and_jacobian_1d(0.0, 1e6, BASIS, 1.5)
    # a looser tolerance needs fewer nodes; the bound then holds at that tolerance
    r = rbf_expectation_1d(0.0, 1e2, BASIS, 1.5, tol=1e-6)
    ref = _reference(0.0, 1e2, 1.5, BASIS)
    assert np.all(np.abs(r - ref) <= 1e-6 / (math.sqrt(2 * math.pi) * BASIS.sigma))


def test_1d_fixed_node_count_too_small_raises():
    with pytest.raises(ValueError, match=r"n_max=8\b"):
        rbf_expectation_1d(0.0, 1.0, BASIS, 1.5, n_min=8, n_max=8)
    # enough nodes for this density: no error
    r = rbf_expectation_1d(0.0, 1e-4, BASIS, 1.5, n_min=8, n_max=8)
    assert np.all(np.abs(r - _reference(0.0, 1e-4, 1.5, BASIS)) <= 1e-12 * 4)
