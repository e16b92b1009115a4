"""Fixtures of the datasets tests: the MULAN files under ../shared/data/multilabel."""

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
MULAN_DIR = SHARED / "data" / "multilabel"


@pytest.fixture(scope="session")
def mulan_dir():
    """The folder of the MULAN data sets; skips the test when it is absent."""
    if not MULAN_DIR.is_dir():
        pytest.skip(f"MULAN data not found at {MULAN_DIR} (the ../shared checkout is absent)")
    return MULAN_DIR
