"""The committed snapshot (published) is intact and the README's results block is generated from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpdl.publish import PUBLISHED, RESULTS, published_problems, readme_results

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    return ROOT


def test_the_snapshot_matches_its_manifests_and_its_studies(at_root: Path) -> None:
    assert published_problems(PUBLISHED) == []


def test_the_readme_results_block_is_the_snapshots(at_root: Path) -> None:
    assert readme_results(at_root / "README.md") == (PUBLISHED / RESULTS).read_text(encoding="utf-8")
