"""The dzoa rules end to end on generated lasso data, in a temporary copy of the project."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dpdl.runs import read_run
from workflow_project import dpdl, make_project, snakemake

CONFIG = {
    "studies": ["dzoa"],
    "data": {"mirror": None, "lasso": {"trials": 3, "seed": 0}},
    "dvp_pvp": {},
    "wddp": {},
    "dp_iadmm": {},
    "dzoa": {
        "epsilons": [0.15, 0.95],
        "deltas": [0.001, 0.000001],
        "epsilon_totals": [1.0, 2.5],  # (29) for M = 10 is about 3 epsilon: per-iteration epsilon <= 1
        "delta_sweep": [0.000001, 0.01],
        "outer_iterations": 10,
        "inner_iterations": 20,
        "directions": 10,
        "tuning_trials": 1,
        "dpadmm_penalties": [1, 10],
        "dpadmm_step_sizes": [0.1],
    },
}
FIGURES = ("fig1", "fig2", "fig3a", "fig3b")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    project = make_project(tmp_path_factory.mktemp("dzoa"), CONFIG)
    done = snakemake(project)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return project


def test_every_figure_and_the_claims_are_written(built: dict) -> None:
    work = built["work"]
    for figure in FIGURES:
        assert (work / f"figures/dzoa/{figure}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (work / f"figures/dzoa/{figure}.pdf").read_bytes()[:5] == b"%PDF-"
    claims = pd.read_csv(work / "results/claims/dzoa.csv")
    assert len(claims) == 6
    assert set(claims.loc[claims["id"] != "dzoa.privacy.total_29", "verdict"]) == {"not run at this scale"}
    assert json.loads(claims["switches"].iloc[0])["topology"] == "ring_chord"


def test_runs_carry_provenance_and_the_check_passes(built: dict) -> None:
    work = built["work"]
    runs = sorted((work / "results/dzoa/runs").rglob("*.npz"))
    assert len(runs) == 2 * 10 * 2  # algorithms x grid points (Fig. 2: 4, Fig. 3b: 2 more, Fig. 3a: 4) x trials 1, 2
    run = read_run(work / "results/dzoa/runs/dzoa/eps0.15-delta0.001/trial001.npz")
    prov = run.provenance
    assert prov["seed"] == 1 and prov["epsilon"] == 0.15 and prov["delta"] == 0.001
    assert prov["params"]["epsilon_total_29"] == pytest.approx(0.15 * (10 * 6.9078 / (1.05 * 7.1309)) ** 0.5, rel=1e-3)
    assert prov["eps_composed_pld"] > 0 and len(prov["params"]["step_scale_alpha0R"]) == 5
    assert list(run.trace["iteration"]) == list(range(11)) and run.trace["error"].iloc[0] == 5.0
    checked = dpdl(built, "check", "--configfile", "config/config.yaml")
    assert checked.returncode == 0, checked.stderr
    again = snakemake(built, "--dry-run")
    assert "Nothing to be done" in again.stdout + again.stderr
