"""The wddp rules end to end on a generated KDD file and Breast Cancer table, in a temporary copy of the project.

The generated mirror's Adult and Credit Card files are removed and the config leaves Bank out, so the run
also shows that a missing dataset drops its panels (and its claims say "data unavailable") instead of
failing the study, and that Breast Cancer runs the u of the grid up to 5 only (Section 5).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from fixtures import write_kdd
from workflow_project import _pin, commit_build, dpdl, judged_from_a_snapshot, make_project, snakemake

from dpdl.runs import read_run

CONFIG = {
    "studies": ["wddp"],
    "data": {"mirror": None, "kdd": {"sample_size": 300, "train_size": 240, "seed": 0}},
    "dvp_pvp": {},
    "wddp": {
        "epsilons": [0.05, 1.0],
        "clients": [2],
        "datasets": ["kdd", "adult", "breast_cancer", "credit_card"],  # Bank left out
        "unevenness": [1, 3, 7],  # Breast Cancer: 1 and 3 only
        "seeds": 2,
        "iterations": 12,
        "trace_points": 3,
        "step_sizes": [0.5, 1.0],
        "tuning": {"folds": 2, "seeds": 1, "epsilon": 0.1, "clients": 4},
    },
    "dp_iadmm": {},
    "dzoa": {},
}
FIGURES = ("fig02", "fig04", "fig05", "fig12", "fig13", "fig14", "fig15", "fig16")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("wddp")
    project = make_project(base, CONFIG)
    mirror = project["mirror"]
    kdd = write_kdd(
        mirror / "kdd" / "kddcup.data_10_percent.gz", rows=320
    )  # Experiment B at m = 32 needs rows
    for path in [*(mirror / "adult").iterdir(), *(mirror / "credit_card").iterdir()]:
        path.unlink()
    pins = json.loads((base / "pins.json").read_text())
    pins["kdd/kddcup.data_10_percent.gz"] = [_pin(kdd, "sha256"), kdd.stat().st_size]
    (base / "pins.json").write_text(json.dumps(pins))
    done = snakemake(project)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    project["stderr"] = done.stderr
    return project


def test_every_figure_table_and_the_claims_are_written(built: dict) -> None:
    work = built["work"]
    assert "SKIPPING wddp/adult" in built["stderr"] and "SKIPPING wddp/credit_card" in built["stderr"]
    assert "wddp/bank" not in built["stderr"]  # not selected: nothing to skip
    for figure in FIGURES:
        assert (work / f"figures/wddp/{figure}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (work / f"figures/wddp/{figure}.pdf").read_bytes()[:5] == b"%PDF-"
        bands = pd.read_csv(work / f"results/wddp/aggregates/{figure}.csv")
        assert set(bands["dataset"]) == {"kdd", "breast_cancer"}
        seeds = pd.read_csv(work / f"results/wddp/aggregates/{figure}_seeds.csv")
        assert set(seeds["dataset"]) == {"kdd", "breast_cancer"} and set(seeds["seed"].dropna()) == {0, 1}
        if "unevenness" in seeds and seeds["unevenness"].notna().any():
            by_dataset = seeds.dropna(subset=["unevenness"]).groupby("dataset")["unevenness"].unique()
            assert sorted(by_dataset["kdd"]) == [1, 3, 7] and sorted(by_dataset["breast_cancer"]) == [1, 3]
    table = pd.read_csv(work / "results/tables/wddp/table1.csv")
    assert (table["cell"] == "bound").sum() == 5 and set(table["dataset"].dropna()) == {
        "kdd",
        "breast_cancer",
    }
    card = json.loads((work / "data/processed/wddp/breast_cancer.json").read_text())
    assert (card["rows"], card["rows_train"], card["rows_test"], card["features"]) == (699, 559, 140, 9)
    claims = pd.read_csv(work / "results/claims/wddp.csv").set_index("id")
    assert claims.loc["wddp.nonprivate_accuracy_adult", "verdict"] == "data unavailable"
    assert (
        claims.loc["wddp.panel_credit_card", "verdict"]
        == claims.loc["wddp.panel_bank", "verdict"]
        == ("data unavailable")
    )
    assert claims.loc["wddp.panel_breast_cancer", "verdict"] == "not run at this scale"  # built, at toy scale
    assert "breast_cancer 699" in claims.loc["wddp.dataset_sizes", "our_value"]
    assert claims.loc["wddp.equal_at_u1_accuracy", "verdict"] == "not run at this scale"
    assert claims.loc["wddp.wddp_matches_central_accuracy", "kind"] == "implementation check"
    assert claims.loc["wddp.dataset_sizes", "verdict"] == "not reproduced"  # a 300-row KDD sample, not 70000
    assert claims.loc["wddp.privacy_within_budget", "verdict"] == "reproduced"
    assert json.loads(claims["switches"].iloc[0]) == {
        "aggregation": "per_round",
        "calibration": "closed_form",
        "tuning_protocol": "per_epsilon",
        "tuning_scope": "per_method",
    }


def test_judging_the_snapshot_gives_the_build_s_scorecard(built: dict) -> None:
    """`dpdl publish --rejudge` judges from what a snapshot holds: the same scorecard as the build's claims step."""
    judged, built_card = judged_from_a_snapshot(built, "wddp")
    assert judged == built_card


def test_runs_carry_provenance_and_the_check_passes(built: dict) -> None:
    work = built["work"]
    runs = sorted((work / "results/wddp/runs").rglob("*.npz"))
    kdd = 3 * 2 * 2 + 3 * (3 * 3 * 2)  # Experiment A (m = 2) + Experiment B (3 settings, u = 1, 3, 7)
    assert len(runs) == kdd + 3 * 2 * 2 + 3 * (3 * 2 * 2)  # and Breast Cancer (u = 1, 3)
    assert not list((work / "results/wddp/runs/breast_cancer").glob("unevenness_*/*/u7"))
    run = read_run(work / "results/wddp/runs/kdd/unevenness_m32_eps0.1/dist_avg/u3/seed1.npz")
    prov = run.provenance
    assert prov["seed"] == 1 and prov["epsilon"] == 0.1 and prov["params"]["unevenness_nominal"] == 3
    assert prov["params"]["step_size"] in (0.5, 1.0) and prov["dataset"] == "wddp/kdd"
    assert run.trace["iteration"].tolist() == [0, 4, 8, 12]
    checked = dpdl(built, "check", "--configfile", "config/config.yaml")
    assert checked.returncode == 0, checked.stderr


def test_publish_records_the_compute_behind_each_claims_table(built: dict) -> None:
    """#39: a claim judged from a stack of the figures' tables (versus_epsilon, versus_unevenness, runs) gets the
    runs the grid says the stack reads and their CPU time: every run of the epsilon batches for one, of the
    unevenness batches for the other; no table that is a file of the build gets a second record."""
    from dpdl.publishing.layout import MANIFEST

    work = built["work"]
    commit_build(built)
    done = dpdl(built, "publish", "--configfile", "config/config.yaml", "--studies", "wddp")
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((work / "published" / "wddp" / MANIFEST).read_text())
    stacked, recorded = manifest["stacked_table_compute"], manifest["aggregate_compute"]
    assert set(stacked) == {"versus_epsilon", "versus_unevenness", "runs", "versus_epsilon_breast_cancer"}
    panel = sorted(work.glob("results/wddp/runs/breast_cancer/epsilon_m*/*/*/seed*.npz"))  # one panel's stack
    assert panel and stacked["versus_epsilon_breast_cancer"]["runs"] == len(panel)
    assert not {f"aggregates/{name}.csv" for name in stacked} & set(recorded)
    for experiment, batch in (("epsilon", "epsilon_m*"), ("unevenness", "unevenness_m*")):
        runs = sorted(work.glob(f"results/wddp/runs/*/{batch}/*/*/seed*.npz"))
        cpu = sum(read_run(path).provenance["timing"]["cpu_time_s"] for path in runs)
        assert runs and stacked[f"versus_{experiment}"] == {"runs": len(runs), "cpu_seconds": round(cpu, 1)}
    assert stacked["runs"]["runs"] == stacked["versus_epsilon"]["runs"] + stacked["versus_unevenness"]["runs"]
    done = dpdl(built, "article", "wddp", "--published", "published")
    assert done.returncode == 0, done.stderr[-3000:]
    article = (work / "published" / "wddp" / "ARTICLE.md").read_text()
    versus = stacked["versus_epsilon"]
    assert (
        f"| versus_epsilon (a stack of the figures' tables) | {versus['runs']} | {versus['cpu_seconds']} |"
        in article
    )


def test_publish_compute_adds_the_compute_to_a_snapshot_published_without_it(built: dict) -> None:
    """#39: `dpdl publish --compute` gives a snapshot that predates compute per table (wddp's at c323111) the
    compute this build measured, and only where the build made every per-seed table the snapshot holds with its
    numbers: a value that differs writes nothing; a float within 1e-9 relative is the same number, reported."""
    from dpdl.publishing.layout import MANIFEST

    work = built["work"]
    path = work / "published" / "wddp" / MANIFEST
    if not path.is_file():
        commit_build(built)
        assert (
            dpdl(built, "publish", "--configfile", "config/config.yaml", "--studies", "wddp").returncode == 0
        )
    full = json.loads(path.read_text())
    added = ("aggregate_compute", "stacked_table_compute", "not_run_cost")
    old = {key: value for key, value in full.items() if key not in added}
    path.write_text(json.dumps(old))
    compute = ("publish", "--compute", "--configfile", "config/config.yaml", "--studies", "wddp")
    table = work / "results/wddp/aggregates/fig02_seeds.csv"
    kept = table.read_bytes()
    seeds = pd.read_csv(table)
    seeds.loc[0, "value"] += 0.01  # a build whose numbers are not the snapshot's
    seeds.to_csv(table, index=False)
    refused = dpdl(built, *compute)
    assert (
        refused.returncode != 0
        and "did not make aggregates/fig02_seeds.csv with the snapshot's numbers" in (refused.stderr)
    )
    assert json.loads(path.read_text()) == old  # nothing written
    seeds.loc[0, "value"] -= 0.01
    seeds.loc[0, "eps_composed_pld"] *= 1 + 4e-12  # the accountant's last digits, as wddp's rebuild gave
    seeds.to_csv(table, index=False)
    done = dpdl(built, *compute)
    table.write_bytes(kept)
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads(path.read_text())
    assert {key: manifest[key] for key in added if key in full} == {
        key: full[key] for key in added if key in full
    }
    measured = manifest["compute_measured"]
    tables = [name for name in full["files"] if name.startswith("aggregates/")]
    assert measured["tables"] == len(tables) and measured["tables_same_bytes"] == len(tables) - 1
    assert list(measured["largest_relative_difference"]) == ["eps_composed_pld"]
    assert 1e-12 < measured["largest_relative_difference"]["eps_composed_pld"] < 1e-11
    assert manifest["files"] == full["files"]
    assert dpdl(built, "check", "published").returncode == 0
    article = (work / "published" / "wddp" / "ARTICLE.md").read_text()
    assert (
        "This compute per claim was measured after the snapshot, by a rebuild of its default grid on"
        in article
    )
    assert "the others differ only in eps_composed_pld by at most 4e-12 relative (within 1e-09)" in article
