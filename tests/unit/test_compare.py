"""`dpdl compare`: two builds are the same unless an artifact other than a run's timing differs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpdl.cli import main
from dpdl.compare import compare_builds
from dpdl.io import dumps_json, save_npz, write_text
from dpdl.plotting import new_figure, save_figure


def _run(path: Path, trace: np.ndarray, seconds: float, seed: int = 0) -> None:
    provenance = {"seed": seed, "study": "dzoa", "timing": {"wall_seconds": seconds}}
    save_npz(path, {"trace/error": trace, "provenance": np.array(dumps_json(provenance))})


def _build(root: Path, *, trace: np.ndarray, seconds: float, table: str, line_width: float = 1.0) -> Path:
    _run(root / "results" / "runs" / "seed0.npz", trace, seconds)
    write_text(root / "results" / "table.csv", table)
    write_text(root / "results" / "card.json", dumps_json({"rows": 3, "timing": {"wall_seconds": seconds}}))
    fig, axes = new_figure()
    axes[0, 0].plot([0, 1], [0, 1], linewidth=line_width)
    save_figure(fig, root / "figures" / "fig.png", root / "figures" / "fig.pdf")
    return root


def test_builds_that_differ_only_in_timing_are_the_same(tmp_path: Path) -> None:
    a = _build(tmp_path / "a", trace=np.arange(3.0), seconds=1.0, table="x,y\n1,2\n")
    b = _build(tmp_path / "b", trace=np.arange(3.0), seconds=9.0, table="x,y\n1,2\n")
    compared, differences = compare_builds(a, b, ["results", "figures"])
    assert compared == 5 and differences == []
    assert main(["compare", str(a), str(b)]) == 0


def test_the_hash_chain_which_hashes_whole_inputs_timing_included_is_left_out(tmp_path: Path) -> None:
    """A run's ``chain`` and the records beside other outputs hold the sha256 of input files, whose timing differs
    between two builds of the same inputs; the SLURM stage of .ci/run compares two such builds."""
    builds = []
    for name, digest in (("a", "1" * 64), ("b", "2" * 64)):
        root = _build(tmp_path / name, trace=np.arange(3.0), seconds=1.0, table="x,y\n1,2\n")
        provenance = {"seed": 0, "study": "dzoa", "chain": {"inputs": {"results/calibration.json": digest}}}
        save_npz(
            root / "results" / "runs" / "seed1.npz",
            {"trace/error": np.arange(3.0), "provenance": np.array(dumps_json(provenance))},
        )
        write_text(
            root / "results" / ".table.csv.chain.json",
            dumps_json({"inputs": {"results/runs/seed0.npz": digest}}),
        )
        builds.append(root)
    compared, differences = compare_builds(*builds, ["results", "figures"])
    assert compared == 6 and differences == []


def test_every_kind_of_difference_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _build(tmp_path / "a", trace=np.arange(3.0), seconds=1.0, table="x,y\n1,2\n")
    b = _build(tmp_path / "b", trace=np.arange(3.0) + 1e-9, seconds=1.0, table="x,y\n1,3\n", line_width=4.0)
    _run(b / "results" / "runs" / "seed1.npz", np.arange(3.0), 1.0, seed=1)
    _, differences = compare_builds(a, b, ["results", "figures"])
    reasons = {d.path: d.reason for d in differences}
    assert reasons["results/runs/seed0.npz"].startswith(
        "trace/error: values differ (largest difference 1e-09"
    )
    assert reasons["results/table.csv"] == "line 2 differs: '1,2' vs '1,3'"
    assert reasons["results/runs/seed1.npz"] == "only in the second build"
    assert "pixels differ" in reasons["figures/fig.png"] and reasons["figures/fig.pdf"] == "bytes differ"
    assert main(["compare", str(a), str(b)]) == 1
    assert "5 difference(s)" in capsys.readouterr().out


def test_a_provenance_field_other_than_timing_is_a_difference(tmp_path: Path) -> None:
    _run(tmp_path / "a" / "results" / "r.npz", np.zeros(2), 1.0, seed=0)
    _run(tmp_path / "b" / "results" / "r.npz", np.zeros(2), 1.0, seed=1)
    _, differences = compare_builds(tmp_path / "a", tmp_path / "b", ["results"])
    assert [d.reason for d in differences] == ["provenance: JSON fields differ: seed"]


def test_compare_refuses_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path), str(tmp_path / "nope")]) == 1
    assert "is not a folder" in capsys.readouterr().err
