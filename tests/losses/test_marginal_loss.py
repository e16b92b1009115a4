"""MarginalLoss: per-label losses, each label's score against the score 0 of its absence.

References written here from the formulas, not from the library: the binary
sparsemax marginal ``clip((z + 1) / 2, 0, 1)`` and its loss (the convex
conjugate of ``Omega(p) = p^2 - p`` on [0, 1] is 0, ``(z + 1)^2 / 4`` and
``z`` on ``z <= -1``, ``|z| <= 1`` and ``z >= 1``), the logistic sigmoid and
the binary cross-entropy, finite differences for the gradients and the
Hessian products.
"""

import numpy as np
import pytest
from scipy.special import expit

from sksparsemax.losses import EntmaxLoss, MarginalLoss, check_marginals


def _sparsemax_reference(Z, Y):
    conj = np.where(Z <= -1, 0.0, np.where(Z >= 1, Z, (Z + 1) ** 2 / 4))
    return (conj + Y**2 - Y - Y * Z).sum(axis=1), np.clip((Z + 1) / 2, 0, 1)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((40, 5)) * 2
    Z[0] = [-3.0, -1.0, 0.0, 1.0, 3.0]  # every piece and both kinks
    Y = (rng.random((40, 5)) < 0.4).astype(float)
    Yf = rng.random((40, 5))  # marginal targets
    return Z, Y, Yf


def test_sparsemax_marginals_and_loss_match_the_closed_form(data):
    Z, Y, Yf = data
    loss = MarginalLoss("sparsemax")
    for T in (Y, Yf):
        ref_value, ref_p = _sparsemax_reference(Z, T)
        np.testing.assert_allclose(loss.predict_proba(Z), ref_p, rtol=0, atol=1e-15)
        np.testing.assert_allclose(loss.loss(Z, T), ref_value, rtol=0, atol=1e-12)
        np.testing.assert_allclose(loss.gradient(Z, T), ref_p - T, rtol=0, atol=1e-15)
    P = loss.predict_proba(Z)
    assert np.any(P == 0) and np.any(P == 1)  # exact 0s and 1s
    np.testing.assert_array_equal(P[0], [0.0, 0.0, 0.5, 1.0, 1.0])


def test_softmax_is_the_logistic_loss(data):
    Z, Y, _ = data
    loss = MarginalLoss("softmax")
    np.testing.assert_allclose(loss.predict_proba(Z), expit(Z), rtol=1e-14, atol=0)
    ref = (np.logaddexp(0.0, Z) - Y * Z).sum(axis=1)
    np.testing.assert_allclose(loss.loss(Z, Y), ref, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("base", ["sparsemax", "softmax", "entmax", EntmaxLoss(alpha=1.3)])
def test_gradient_and_hessian_match_finite_differences(data, base):
    Z, _, Yf = data
    Z = Z[1:]  # away from the kinks of row 0
    Yf = Yf[1:]
    loss = MarginalLoss(base)
    losses, G = loss.loss_gradient(Z, Yf)
    h = 1e-6
    for j in range(Z.shape[1]):
        E = np.zeros_like(Z)
        E[:, j] = h
        fd = (loss.loss(Z + E, Yf) - loss.loss(Z - E, Yf)) / (2 * h)
        np.testing.assert_allclose(G[:, j], fd, rtol=0, atol=1e-6)
    V = np.random.default_rng(1).standard_normal(Z.shape)
    HV = loss.hessian_product(loss.predict_proba(Z), V)
    fd = (loss.gradient(Z + h * V, Yf) - loss.gradient(Z - h * V, Yf)) / (2 * h)
    np.testing.assert_allclose(HV, fd, rtol=0, atol=1e-5)
    assert np.all(losses >= -1e-12)


def test_convex_in_the_scores(data):
    Z, _, Yf = data
    rng = np.random.default_rng(2)
    Z2 = Z + 2 * rng.standard_normal(Z.shape)
    for base in ("sparsemax", "softmax", "entmax"):
        loss = MarginalLoss(base)
        mid = loss.loss((Z + Z2) / 2, Yf)
        assert np.all(mid <= (loss.loss(Z, Yf) + loss.loss(Z2, Yf)) / 2 + 1e-12)


def test_out_buffer_float32_and_masks(data):
    Z, Y, _ = data
    loss = MarginalLoss("sparsemax")
    Z32 = Z.astype(np.float32)
    values, G = loss.loss_gradient(Z32, Y)
    assert values.dtype == np.float32 and G.dtype == np.float32
    buf = Z.copy()
    v2, g2 = loss.loss_gradient(buf, Y, out=buf)
    assert g2 is buf
    np.testing.assert_array_equal(g2, loss.gradient(Z, Y))
    Zm = Z.copy()
    Zm[3, 2] = -np.inf  # surely absent
    assert loss.predict_proba(Zm)[3, 2] == 0.0
    Ym = Y.copy()
    Ym[3, 2] = 0.0
    assert np.isfinite(loss.loss(Zm, Ym)[3])
    assert not loss.shift_invariant


def test_errors_name_the_entry():
    loss = MarginalLoss("sparsemax")
    with pytest.raises(ValueError, match=r"Z\[1, 0\] = nan"):
        loss.predict_proba([[0.0, 1.0], [np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"Z\[0, 1\] = inf"):
        loss.loss([[0.0, np.inf]], [[0, 1]])
    with pytest.raises(ValueError, match=r"Y\[0, 1\] = 1.5"):
        loss.loss([[0.0, 1.0]], [[0, 1.5]])
    with pytest.raises(ValueError, match=r"must have shape \(1, 2\)"):
        loss.loss([[0.0, 1.0]], [[0, 1, 1]])
    with pytest.raises(ValueError, match="Target of 2 x 3 indices"):
        from sksparsemax.losses import check_target

        check_marginals(check_target([0, 1], 2, 3), 2, 3)


@pytest.mark.parametrize("base", ["sparsemax", "softmax"])
def test_closed_forms_equal_the_generic_two_class_path(data, base, monkeypatch):
    """The shipped losses' entrywise closed forms (``_versus_zero``) give the
    values of the generic path, the base loss on the rows (z, 0)."""
    Z, Y, Yf = data
    Z = Z.copy()
    Z[5, 1] = -np.inf  # a surely absent label
    Y = Y.copy()
    Y[5, 1] = 0.0
    fast = MarginalLoss(base)
    assert fast._closed_form() is not None
    generic = MarginalLoss(base)
    monkeypatch.setattr(generic, "_closed_form", lambda: None)
    for T in (Y, np.where(np.isinf(Z), 0.0, Yf)):
        np.testing.assert_allclose(fast.predict_proba(Z), generic.predict_proba(Z),
                                   rtol=0, atol=1e-15)
        v1, g1 = fast.loss_gradient(Z, T)
        v2, g2 = generic.loss_gradient(Z, T)
        np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=0, atol=1e-15)
        np.testing.assert_allclose(fast.loss(Z, T), v2, rtol=1e-12, atol=1e-12)
    Z32 = np.where(np.isinf(Z), 0, Z).astype(np.float32)
    v, g = fast.loss_gradient(Z32, Y)
    assert v.dtype == np.float32 and g.dtype == np.float32


def test_a_subclass_does_not_inherit_the_closed_form():
    from sksparsemax.losses import SparsemaxLoss

    class Tempered(SparsemaxLoss):
        def predict_proba(self, Z):
            return super().predict_proba(np.asarray(Z) / 2)

    assert MarginalLoss(Tempered())._closed_form() is None
    assert MarginalLoss("entmax")._closed_form() is None
