"""Fixtures shared by every test module.

The compiled kernels of the numba backend are used only from a problem size
on (below it the NumPy path is as fast, and a first fit on small data
compiles nothing: ``losses/_compiled.py``, ``losses/_scores.py``,
``linear_model/_preconditioner.py``).
The tests' problems are small, so the size rules are lifted for every test,
and the kernels are exercised on them; ``tests/linear_model/test_size_rules.py``
checks the rules themselves with the ``real_size_rules`` fixture.
"""

import pytest


@pytest.fixture(autouse=True)
def _kernels_on_every_size(request, monkeypatch):
    if "real_size_rules" in request.fixturenames:
        return
    from sksparsemax.linear_model import _preconditioner
    from sksparsemax.losses import _compiled

    monkeypatch.setattr(_compiled, "MIN_FUSED_WORK", 0)
    monkeypatch.setattr(_compiled, "MIN_ROWS_ENTRIES", 0)
    monkeypatch.setattr(_preconditioner, "_MIN_KERNEL_FEATURES", 0)


@pytest.fixture
def real_size_rules():
    """Keep the library's size rules (see the module docstring)."""
