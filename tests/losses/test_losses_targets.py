"""Target validation: accepted forms, normalisation and every error."""

import numpy as np
import pytest

from sksparsemax import transforms
from sksparsemax.losses import (
    SoftmaxLoss,
    SparsemaxLoss,
    Target,
    check_target,
    entmax_loss,
    sparse_softmax_loss,
    sparsemax_loss,
)


def test_indices_are_a_private_read_only_intp_copy():
    y = np.array([2, 0, 1], dtype=np.int8)
    t = check_target(y, n_samples=3, n_classes=3)
    assert isinstance(t, Target) and t.is_indices and t.proba is None
    assert t.indices.dtype == np.intp
    np.testing.assert_array_equal(t.indices, [2, 0, 1])
    y[0] = 1  # the caller's array is not aliased ...
    assert t.indices[0] == 2
    with pytest.raises(ValueError):  # ... and the stored one cannot change
        t.indices[0] = 0


@pytest.mark.parametrize("y", [[1.0, 0.0, 2.0], [True, False, True]])
def test_integral_floats_and_booleans_are_indices(y):
    t = check_target(y, n_samples=3, n_classes=3)
    np.testing.assert_array_equal(t.indices, np.asarray(y).astype(int))


def test_one_hot_matrix_is_stored_as_indices():
    Q = np.eye(4)[[3, 1, 1, 0]]
    t = check_target(Q, n_samples=4, n_classes=4)
    assert t.is_indices
    np.testing.assert_array_equal(t.indices, [3, 1, 1, 0])


def test_proportions_are_renormalised_copies():
    Q = np.array([[0.2, 0.3, 0.5 + 4e-7], [0.0, 0.25, 0.75]])
    t = check_target(Q, n_samples=2, n_classes=3)
    assert not t.is_indices
    np.testing.assert_allclose(t.proba.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(t.proba, Q / Q.sum(axis=1, keepdims=True))
    assert not t.proba.flags.writeable
    Q[1, 1] = 9.0
    assert t.proba[1, 1] == 0.25


def test_default_tolerance_depends_on_precision_and_can_be_set():
    Q = np.array([[0.5, 0.5 + 5e-5]])
    with pytest.raises(ValueError, match="row 0 sums to"):
        check_target(Q, 1, 2)
    check_target(Q.astype(np.float32), 1, 2)  # float32: 1e-4
    check_target(Q, 1, 2, tol=1e-4)
    with pytest.raises(ValueError, match="tol"):
        check_target(Q, 1, 2, tol=-1.0)


def test_target_object_passes_through_or_reports_the_shape_mismatch():
    t = check_target([0, 1], 2, 3)
    assert check_target(t, 2, 3) is t
    with pytest.raises(ValueError, match="checked for 2 samples and 3 classes"):
        check_target(t, 2, 4)
    with pytest.raises(ValueError, match="checked for 2 samples"):
        SparsemaxLoss().loss(np.zeros((3, 3)), t)


def test_empty_target():
    t = check_target(np.zeros(0, dtype=int), 0, 3)
    assert t.indices.shape == (0,)
    assert SparsemaxLoss().loss(np.zeros((0, 3)), np.zeros((0, 3))).shape == (0,)


@pytest.mark.parametrize("backend_name", ["numpy", "numba"])
@pytest.mark.parametrize("K", [5, 30])  # the NumPy path's dense and flat rows
def test_empty_batch_loss_gradient_in_place(backend_name, K):
    # The in-place evaluation (out=) of the NumPy sparsemax loss splits the
    # rows into blocks: with no rows there is no block.
    if backend_name == "numba":
        pytest.importorskip("numba")
    Z = np.zeros((0, K))
    with transforms.backend(backend_name):
        losses, G = SparsemaxLoss().loss_gradient(Z, np.zeros(0, dtype=int), out=np.empty((0, K)))
    assert losses.shape == (0,) and G.shape == (0, K)


# ---------------------------------------------------------------- errors
Z3 = np.zeros((3, 4))

BAD_TARGETS = [
    # (target, regex the message must match)
    ([0, 1], r"2 class indices but the scores have 3 rows"),
    ([0, 1, 2, 3], r"4 class indices but the scores have 3 rows"),
    (np.full((2, 4), 0.25), r"2 rows but the scores have 3"),
    (np.full((3, 5), 0.2), r"5 columns but the scores have 4 \(n_classes\)"),
    (np.zeros((3, 1), dtype=int), r"1 columns.*1-D array"),
    ([0, 4, 1], r"class index 4 at position 1, outside \[0, 4\)"),
    ([0, 1, -1], r"class index -1 at position 2"),
    ([0.0, 1.5, 1.0], r"non-integer value 1\.5 at position 1"),
    ([0.0, np.nan, 1.0], r"NaN at position 1"),
    ([0.0, np.inf, 1.0], r"non-finite value inf at position 1"),
    ([[1, 0, 0, 0], [0.5, 0.6, -0.1, 0], [0, 0, 0, 1]],
     r"row 1 has the negative proportion -0\.1 \(column 2\)"),
    ([[1, 0, 0, 0], [0, 1, 0, 0], [0.5, 0.2, 0.2, 0.0]], r"row 2 sums to 0\.9"),
    ([[1, 0, 0, 0], [0.5, 0.5, 0.5, 0], [0, 0, 0, 1]], r"row 1 sums to 1\.5"),
    ([[1, 0, 0, 0], [0, 0, 0, 1], [np.nan, 1, 0, 0]], r"NaN in row 2"),
    ([[1, 0, 0, 0], [np.inf, 0, 0, 0], [0, 0, 0, 1]], r"infinite value in row 1"),
    (np.zeros((3, 4, 1)), r"got an array of shape \(3, 4, 1\)"),
    (np.array(1), r"got an array of shape \(\)"),
    (["a", "b", "c"], r"must contain numbers"),
    (np.array([0, None, 1], dtype=object), r"NaN at position 1"),
    (np.array([0, "x", 1], dtype=object), r"must contain numbers"),
]


@pytest.mark.parametrize("target, message", BAD_TARGETS)
def test_bad_targets_raise_a_named_value_error(target, message):
    with pytest.raises(ValueError, match=message):
        check_target(target, n_samples=3, n_classes=4)
    # every entry point validates the same way
    for call in (
        lambda: sparsemax_loss(Z3, target),
        lambda: sparse_softmax_loss(Z3, target, k=2),
        lambda: entmax_loss(Z3, target, alpha=1.5),
        lambda: SoftmaxLoss().loss_gradient(Z3, target),
        lambda: SparsemaxLoss().gradient(Z3, target),
    ):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize(
    "n_samples, n_classes, error",
    [(3, 0, ValueError), (-1, 4, ValueError), (3.0, 4, TypeError), (3, "4", TypeError)],
)
def test_bad_sizes(n_samples, n_classes, error):
    with pytest.raises(error):
        check_target([0, 1, 2], n_samples, n_classes)
