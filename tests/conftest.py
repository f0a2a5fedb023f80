"""Shared pytest fixtures; the raw-file generators live in ``fixtures.py``."""

from __future__ import annotations

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


@pytest.fixture
def raw_mirror(tmp_path: Path) -> Path:
    """A generated mirror folder of every dataset, in the real formats."""
    return write_raw_mirror(tmp_path / "mirror")


@pytest.fixture(autouse=True)
def _no_mirror_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see a developer's DPDL_DATA_MIRROR (hermetic)."""
    monkeypatch.delenv("DPDL_DATA_MIRROR", raising=False)
