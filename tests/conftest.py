"""Shared pytest fixtures; the raw-file generators live in ``fixtures.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fixtures import (  # noqa: F401  (re-exported for the test modules)
    ADULT_ROWS,
    KDD_LABELS,
    idx_bytes,
    leaf_shard,
    network_tests_enabled,
    write_adult,
    write_femnist,
    write_kdd,
    write_mnist,
    write_raw_mirror,
)

# The suite starts hundreds of `python -m dpdl` jobs: let them keep the bytecode of dpdl's own modules (an
# editable install, so not compiled at install). Where PYTHONDONTWRITEBYTECODE is set, as on the CI machine,
# each job compiled them anew: 0.3 s of a dp_iadmm run job's 3.4 s.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.fixture
def raw_mirror(tmp_path: Path) -> Path:
    """A generated mirror folder of every dataset, in the real formats."""
    return write_raw_mirror(tmp_path / "mirror")


@pytest.fixture(autouse=True)
def _no_mirror_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see a developer's DPDL_DATA_MIRROR (hermetic)."""
    monkeypatch.delenv("DPDL_DATA_MIRROR", raising=False)
