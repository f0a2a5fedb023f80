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


def test_compute_counts_the_main_build_and_built_readings_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reading still building (its runs exist, its scorecard not yet) adds nothing to the published compute."""
    import numpy as np

    from dpdl.io import dumps_json, save_npz
    from dpdl.publish import run_compute_seconds

    def run(path: str, seconds: float) -> None:
        save_npz(tmp_path / path, {"provenance": np.array(dumps_json({"timing": {"wall_time_s": seconds}}))})

    run("results/wddp/runs/adult/a.npz", 2.0)
    run("results/readings/wddp/per_setting/results/wddp/runs/adult/a.npz", 3.0)
    run("results/readings/wddp/one_shot/results/wddp/runs/adult/a.npz", 5.0)
    monkeypatch.chdir(tmp_path)
    assert run_compute_seconds("wddp", ["default", "per_setting"]) == 5.0
    assert run_compute_seconds("wddp", ["default"]) == 2.0
