"""The dvp_pvp rules end to end on generated Adult files, in a temporary copy of the project."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from workflow_project import TEST_CONFIG, commit_build, dpdl, judged_from_a_snapshot, make_project, snakemake

from dpdl.studies.dvp_pvp.aggregate import SEED_COLUMNS
from dpdl.studies.dvp_pvp.claims import CLAIMS
from dpdl.verdicts import NOT_AT_SCALE, NOT_IDENTIFIABLE

TINY = {
    "studies": ["dvp_pvp"],
    "data": TEST_CONFIG["data"],
    "dvp_pvp": {
        "agents": 2,
        "iterations": 3,
        "tradeoff_iterations": [2, 3],
        "mer_iteration": 3,
        "alphas": [0.1, 0.5, 1.0],
        "convergence_alphas": [0.1, 1.0],
        "seeds": 2,
        "eta_grid": [0.01, 0.1],
        "rho_selection": {"alpha": 0.3, "exponents": [-10, -1], "seeds": 1},
    },
    "wddp": {},
    "dp_iadmm": {},
    "dzoa": {},
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    project = make_project(tmp_path_factory.mktemp("dvp_pvp"), TINY)
    done = snakemake(project)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return project


def test_every_output_is_drawn_and_checked(built: dict) -> None:
    work = built["work"]
    for name in ("convergence", "tradeoff_dvp", "tradeoff_pvp", "final_risk", "mer", "rho_selection"):
        for ext in ("png", "pdf"):
            assert (work / f"figures/dvp_pvp/{name}.{ext}").stat().st_size > 0
    for name in ("table1_rho", "table2_cr", "optimal_alpha", "calibration", "privacy", "eta_selection"):
        assert (work / f"results/tables/dvp_pvp/{name}.md").is_file()
    for name in ("convergence", "tradeoff_dvp", "tradeoff_pvp", "final_risk", "mer", "rho_selection"):
        seeds = pd.read_csv(work / f"results/dvp_pvp/aggregates/{name}_seeds.csv")
        assert list(seeds.columns) == SEED_COLUMNS and seeds["value"].notna().any()
    claims = pd.read_csv(work / "results/claims/dvp_pvp.csv")
    assert list(claims["id"]) == [claim.id for claim in CLAIMS]
    # nothing is judged at this scale (an unidentified quantity is reported as such whatever the scale)
    assert claims["verdict"].isin([NOT_AT_SCALE, NOT_IDENTIFIABLE]).all()
    assert len(list((work / "results/dvp_pvp/runs").rglob("*.npz"))) == 2 + 3 * 2 * 2 + 2 + 3 * 2
    checked = dpdl(built, "check", "--configfile", "config/config.yaml")
    assert checked.returncode == 0, checked.stderr
    assert "artifact(s) OK" in checked.stdout


def test_judging_the_snapshot_gives_the_build_s_scorecard(built: dict) -> None:
    """`dpdl publish --rejudge` judges from what a snapshot holds: the same scorecard as the build's claims step."""
    judged, built_card = judged_from_a_snapshot(built, "dvp_pvp")
    assert judged == built_card


def test_adding_a_figure_change_reruns_only_what_depends_on_it(built: dict) -> None:
    done = snakemake(built, "--dry-run", "--forcerun", "dvp_pvp_figure_mer")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "dvp_pvp_figure_mer" in done.stdout and "dvp_pvp_run " not in done.stdout


def test_publish_records_the_trade_off_stack_as_the_runs_behind_both_trade_off_tables(built: dict) -> None:
    """#39: the claims' ``tradeoff`` table stacks both mechanisms' trade-off tables, so its compute, from the runs
    the grid says it reads, is what Snakemake recorded behind the two (disjoint: one mechanism each)."""
    from dpdl.publishing.layout import MANIFEST

    commit_build(built)
    done = dpdl(built, "publish", "--configfile", "config/config.yaml", "--studies", "dvp_pvp")
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((built["work"] / "published" / "dvp_pvp" / MANIFEST).read_text())
    stacked, recorded = manifest["stacked_table_compute"], manifest["aggregate_compute"]
    parts = [recorded[f"aggregates/tradeoff_{mechanism}_seeds.csv"] for mechanism in ("dvp", "pvp")]
    assert set(stacked) == {"tradeoff"} and stacked["tradeoff"]["runs"] == sum(p["runs"] for p in parts) > 0
    assert stacked["tradeoff"]["cpu_seconds"] == pytest.approx(sum(p["cpu_seconds"] for p in parts), abs=0.11)
