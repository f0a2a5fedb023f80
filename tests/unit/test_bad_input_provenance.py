"""#36, defect class 1: an artifact trusted to be what its path says.

A run copied over another's file (another seed or trial, or the same seed of another cell), a run of
another study, a run of an older prepared dataset, and tables given in each other's place.

Each case here failed on the code before its fix (the closing note of #36 shows it); a case that needs a
finished build lives beside it:
tests/workflow/test_dzoa_workflow.py: a copied trial stops `dpdl check` and the next build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from test_dzoa_claims import paper_values, write_claim_tables
from test_runs import provenance, trace

from dpdl.errors import ArtifactError
from dpdl.runs import execute, read_run, validate_run, write_run
from dpdl.studies.dzoa.cli import write_claims


def test_a_run_that_is_not_what_its_path_says_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#36, case 1: a run copied over another's file (another seed, or the same seed of another cell) is refused
    wherever it is read, so the aggregate step and ``dpdl check`` name it; a run of an older prepared dataset is
    named by ``dpdl check --configfile``."""
    from dpdl.check import run_problems
    from dpdl.io import write_json

    monkeypatch.chdir(tmp_path)
    runs = Path("results/wddp/runs/kdd/wddp/eps0.5")
    other_cell = Path("results/wddp/runs/kdd/wddp/eps1")
    for folder in (runs, other_cell):
        for seed in (0, 1):
            write_run(folder / f"seed{seed}.npz", execute(trace, provenance(seed=seed), iterations=3))
    write_json(Path("data/processed/wddp/kdd.json"), {"npz_sha256": "0" * 64})
    paths = sorted(runs.glob("*.npz"))
    assert run_problems(paths) == ([], []) and validate_run(paths[1]) == []
    assert read_run(runs / "seed1.npz").provenance["stored_as"] == f"{runs}/seed1.npz"
    (runs / "seed1.npz").write_bytes((runs / "seed0.npz").read_bytes())
    (other_cell / "seed0.npz").write_bytes((runs / "seed0.npz").read_bytes())
    for copy in (runs / "seed1.npz", other_cell / "seed0.npz"):
        message = f"{copy}: holds the run written as {runs}/seed0.npz (a copied or swapped file); delete it and rerun"
        with pytest.raises(ArtifactError, match=re.escape(message)):
            read_run(copy)
        assert validate_run(copy)[0].startswith(message)
    elsewhere = tmp_path / "kept" / "seed0.npz"  # a run moved out of results/ under its name: still readable
    elsewhere.parent.mkdir()
    elsewhere.write_bytes((runs / "seed0.npz").read_bytes())
    assert read_run(elsewhere).provenance["seed"] == 0
    with pytest.raises(
        ArtifactError, match=re.escape(f"{runs}/seed0.npz: a run of wddp, not of dzoa; give this step")
    ):
        read_run(runs / "seed0.npz", "dzoa")  # a wddp run given to a dzoa step (was a KeyError)
    write_json(Path("data/processed/wddp/kdd.json"), {"npz_sha256": "f" * 64})
    problems, _ = run_problems(paths)
    assert problems[0].startswith(
        f"{runs}/seed0.npz: made from wddp/kdd with sha256 000000000000, not the ffffff"
    )
    assert problems[1].startswith(f"{runs}/seed1.npz: holds the run written as {runs}/seed0.npz")


def test_a_run_without_its_stored_path_is_still_checked_by_its_seed(tmp_path: Path) -> None:
    """Runs made before ``stored_as`` was recorded: a file name that says another seed than the run holds."""
    from dpdl.io import save_npz

    write_run(tmp_path / "seed0.npz", execute(trace, provenance(seed=0), iterations=3))
    with np.load(tmp_path / "seed0.npz") as stored:
        arrays = dict(stored)
    record = json.loads(str(arrays["provenance"]))
    del record["stored_as"]
    save_npz(tmp_path / "seed2.npz", {**arrays, "provenance": np.array(json.dumps(record))})
    with pytest.raises(ArtifactError, match=re.escape("seed2.npz: named seed 2 but holds seed 0")):
        read_run(tmp_path / "seed2.npz")


def test_tables_given_in_each_others_place_are_refused(tmp_path: Path) -> None:
    """Swapped per-seed tables given to ``dzoa claims`` were a KeyError, or judged from the wrong table where the
    columns allowed it; each table must have the columns of the one it is given as."""
    paths = write_claim_tables(tmp_path)
    swapped = {**paths, "fig3a_seeds": paths["fig3b_seeds"], "fig3b_seeds": paths["fig3a_seeds"]}
    message = (
        f"{paths['fig3b_seeds']}: given as fig3a_seeds, but its columns (algorithm, epsilon, delta, measure, "
    )
    with pytest.raises(ArtifactError, match=re.escape(message)):
        write_claims(paper_values(), 100, swapped, str(tmp_path / "card.csv"), str(tmp_path / "card.md"))
    assert not (tmp_path / "card.csv").exists()
