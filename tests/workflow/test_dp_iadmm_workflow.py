"""The dp_iadmm rules end to end on generated MNIST and FEMNIST files, in a copy of the project."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from workflow_project import (
    ROOT,
    TEST_CONFIG,
    commit_build,
    dpdl,
    judged_from_a_snapshot,
    make_project,
    snakemake,
)

FIGURES = ("fig1", "fig2a", "fig2b", "fig3", "fig4", "fig5", "fig6")
CONFIG = {
    **TEST_CONFIG,
    "studies": ["dp_iadmm"],
    "dp_iadmm": {
        "mnist_agents": 4,
        "epsilons": [0.05],
        "curve_epsilons": [0.05],
        "remark3_epsilons": [0.05],
        "seeds": 2,
        "iterations": 3,
        "log_every": 1,
        "long_iterations": 4,
        "long_seeds": 1,
        "long_log_every": 2,
        "a_values": [1, 100],
        "outp_static_rhos": [0.1],
        "optimum_iterations": 30,
    },
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    project = make_project(tmp_path_factory.mktemp("dp_iadmm_workflow"), CONFIG)
    done = snakemake(project)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return project


def test_every_figure_table_and_the_claims_are_built(built: dict) -> None:
    work = built["work"]
    for figure in FIGURES:
        for ext in ("png", "pdf"):
            assert (work / f"figures/dp_iadmm/{figure}.{ext}").stat().st_size > 0, figure
        assert (work / f"results/dp_iadmm/aggregates/{figure}.csv").is_file()
    for name in (*FIGURES, "remark3", "noiseless"):
        seeds = pd.read_csv(work / f"results/dp_iadmm/aggregates/{name}_seeds.csv")
        assert {"seed", "value"} <= set(seeds.columns) and not seeds.empty, name
    for dataset in ("mnist", "femnist"):
        for algorithm in ("objp", "outp"):
            assert (
                work / f"results/dp_iadmm/runs/main/{dataset}/nonprivate_{algorithm}/epsinf/seed0.npz"
            ).is_file()
    remark3 = pd.read_csv(work / "results/tables/dp_iadmm/remark3.csv")
    assert set(remark3["algorithm"]) == {"ObjT", "OutP", "ObjP"} and set(remark3["iterations"]) == {4}
    optimum = pd.read_csv(work / "results/tables/dp_iadmm/optimum.csv")
    assert list(optimum["dataset"]) == ["mnist", "femnist"] and (optimum["lbfgs_iterations"] <= 30).all()
    claims = pd.read_csv(work / "results/claims/dp_iadmm.csv")
    kinds = {"paper number", "paper statement", "mechanism property", "implementation check"}
    assert len(claims) >= 45 and set(claims["kind"]) == kinds
    assert (claims["verdict"] == "not run at this scale").all()  # both datasets build from the fixtures
    missing = claims.set_index("id").loc["dp_iadmm.mnist_long_objt_eps0.01", "detail"]
    assert missing.startswith(
        "not in this config's grid"
    )  # remark3_epsilons is [0.05] here, the paper's is 0.01
    assert (work / "results/dp_iadmm/runs/long/mnist/objt/eps0.05/seed0.npz").is_file()
    assert not (work / "results/dp_iadmm/runs/long/mnist/objt/eps0.05/seed1.npz").exists()  # long_seeds = 1


def test_judging_the_snapshot_gives_the_build_s_scorecard(built: dict) -> None:
    """`dpdl publish --rejudge` judges from what a snapshot holds: the same scorecard as the build's claims step."""
    judged, built_card = judged_from_a_snapshot(built, "dp_iadmm")
    assert judged == built_card


def test_dpdl_check_passes(built: dict) -> None:
    checked = dpdl(built, "check", "--configfile", "config/config.yaml")
    assert checked.returncode == 0, checked.stderr[-3000:]
    assert "artifact(s) OK" in checked.stdout


def test_one_figure_rebuilds_only_what_it_needs(built: dict) -> None:
    figure = built["work"] / "figures/dp_iadmm/fig2a.png"
    aside = figure.with_suffix(".aside")
    figure.rename(aside)  # missing for the plan; put back after it, as built (a rename keeps its mtime)
    try:
        planned = snakemake(built, "figures/dp_iadmm/fig2a.png", "--dry-run")
    finally:
        aside.rename(figure)
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert "dp_iadmm_figure_fig2a" in planned.stdout
    for other in ("dp_iadmm_run", "dp_iadmm_aggregate", "dp_iadmm_figure_fig1", "dp_iadmm_claims"):
        assert f"rule {other}:" not in planned.stdout and f"rule {other}\n" not in planned.stdout, other


def test_publish_projects_what_the_claims_not_run_would_cost(built: dict) -> None:
    """#39: the manifest projects the runs of config/paper.yaml's grid each claim not run would need, at the CPU
    time per run-iteration the build's runs spent on the same dataset, and the article tabulates it. Every claim
    of this build is not run at this scale (T = 3), so each needs all its table's paper runs (T = 2e4 or 1e6)."""
    from dpdl.config import load_config
    from dpdl.publishing.layout import MANIFEST
    from dpdl.runs import read_run
    from dpdl.studies import study_module

    work = built["work"]
    shutil.copy(ROOT / "config" / "paper.yaml", work / "config" / "paper.yaml")
    commit_build(built)
    done = dpdl(built, "publish", "--configfile", "config/config.yaml", "--studies", "dp_iadmm")
    assert done.returncode == 0, done.stderr[-3000:]
    cost = json.loads((work / "published" / "dp_iadmm" / MANIFEST).read_text())["not_run_cost"]

    spent, iterations = {}, {}
    for path in work.glob("results/dp_iadmm/runs/**/*.npz"):
        timing, dataset = read_run(path).provenance["timing"], path.relative_to(work).parts[4]
        spent[dataset] = spent.get(dataset, 0.0) + timing["cpu_time_s"]
        iterations[dataset] = iterations.get(dataset, 0) + timing["iterations"]
    rate = {dataset: spent[dataset] / iterations[dataset] for dataset in spent}
    assert cost["ms_per_run_iteration"] == {d: round(1000 * rate[d], 2) for d in ("femnist", "mnist")}
    claims = pd.read_csv(work / "results/claims/dp_iadmm.csv")
    assert set(cost["claims"]) == set(claims["id"])  # every claim is not run here
    # Remark 3 at the paper's epsilon-bar 0.01: ObjT, OutP and ObjP on MNIST, 10 seeds of T = 1e6 each
    remark3 = cost["claims"]["dp_iadmm.mnist_long_objt_eps0.01"]
    assert remark3 == {
        "runs": 30,
        "cpu_hours": round(30 * 1e6 * rate["mnist"] / 3600, 1),
        "runs_not_projected": {},
    }
    paper = load_config(ROOT / "config" / "paper.yaml")
    grid = study_module("dp_iadmm").runs(paper, {"dp_iadmm/mnist", "dp_iadmm/femnist"})
    assert cost["all"]["runs"] == len(set(grid))  # the claims' tables read every run of the paper grid

    done = dpdl(built, "article", "dp_iadmm", "--published", "published")
    assert done.returncode == 0, done.stderr[-3000:]
    article = (work / "published" / "dp_iadmm" / "ARTICLE.md").read_text()
    rows = [line for line in article.splitlines() if line.startswith("| remark3_seeds | ")]
    assert len(rows) == 1 and rows[0].endswith(
        f" | 30 | {remark3['cpu_hours']} | none |"
    )  # one row per table
    assert "dp_iadmm.mnist_long_objt_eps0.01, " in rows[0] and "dp_iadmm.mnist_long_outp_eps0.01" in rows[0]
    assert f"{cost['all']['runs']} runs, {cost['all']['cpu_hours']} CPU-hours" in article


def test_a_reading_narrowed_to_some_cells_is_built_published_and_judged_again_on_them(built: dict) -> None:
    """reading_cells (#38): outp_noise_variance narrowed to ObjP, ObjT and OutP at 0.05 reruns OutP there and no
    other cell; its Fig. 4 claim is "not run at this scale", naming a cell it leaves out; the snapshot holds its own
    tables only (not the default's Fig. 4 table linked into its folder) and the narrowing in its manifest, so that
    judging the snapshot again gives the reading's scorecard."""
    import os
    from pathlib import Path

    import yaml

    from dpdl.publishing.layout import MANIFEST
    from dpdl.readings import reading_folder

    work = built["work"]
    cells = ["main/mnist/objp/eps0.05", "main/mnist/objt/eps0.05", "main/mnist/outp/eps0.05"]
    config = yaml.safe_load((work / "config" / "config.yaml").read_text())
    (work / "config" / "narrowed.yaml").write_text(
        yaml.safe_dump({**config, "reading_cells": {"dp_iadmm/outp_noise_variance": cells}})
    )
    folder = reading_folder("dp_iadmm", "outp_noise_variance")
    done = snakemake(built, f"{folder}/results/claims/dp_iadmm.csv", "--configfile", "config/narrowed.yaml")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    runs = Path("results/dp_iadmm/runs/main/mnist")
    assert not os.path.samefile(
        work / folder / runs / "outp/eps0.05/seed0.npz", work / runs / "outp/eps0.05/seed0.npz"
    )
    assert (
        not (work / folder / runs / "outp/eps1").exists()
        and (work / folder / "results/dp_iadmm/runs").is_dir()
    )
    left_out = [
        p.relative_to(work / runs).parent.as_posix() for p in (work / runs).glob("outp_*/eps*/seed0.npz")
    ]
    assert left_out, "the fixture's grid has Fig. 4 cells"
    for cell in left_out:  # Fig. 4's other penalties: the main build's runs, linked in, not rerun
        assert os.path.samefile(
            work / folder / runs / cell / "seed0.npz", work / runs / cell / "seed0.npz"
        ), cell
    claim = "dp_iadmm.fig4_mnist_rho_insensitive"
    card = pd.read_csv(work / folder / "results/claims/dp_iadmm.csv").set_index("id")
    default = pd.read_csv(work / "results/claims/dp_iadmm.csv").set_index("id")
    assert card.loc[claim, "detail"].startswith("not in this config's grid (fig4, main horizon): ")
    assert not default.loc[claim, "detail"].startswith("not in this config's grid")

    commit_build(built)
    done = dpdl(built, "publish", "--configfile", "config/narrowed.yaml", "--studies", "dp_iadmm")
    assert done.returncode == 0, done.stderr[-3000:]
    snapshot = work / "published" / "dp_iadmm"
    manifest = json.loads((snapshot / MANIFEST).read_text())
    assert manifest["config"]["reading_cells"] == {"dp_iadmm/outp_noise_variance": cells}
    assert "outp_noise_variance" in manifest["readings"]
    tables = {p.name for p in (snapshot / "readings" / "outp_noise_variance" / "aggregates").glob("*.csv")}
    assert (
        work / folder / "results/dp_iadmm/aggregates/fig4_seeds.csv"
    ).is_file()  # the default's, linked in
    assert "fig4_seeds.csv" not in tables and {"fig1_seeds.csv", "fig2a_seeds.csv"} <= tables
    published = (snapshot / "readings" / "outp_noise_variance.csv").read_text()
    assert published == (work / folder / "results/claims/dp_iadmm.csv").read_text()
    done = dpdl(built, "publish", "--rejudge")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (snapshot / "readings" / "outp_noise_variance.csv").read_text() == published
    done = dpdl(built, "article", "dp_iadmm", "--published", "published")
    assert done.returncode == 0, done.stderr[-3000:]
    article = (snapshot / "ARTICLE.md").read_text()
    assert "outp_noise_variance on 3 cells of the grid: `main/mnist/objp/eps0.05`, " in article


def test_a_data_deviation_is_published_beside_the_default_kept_and_judged_again(built: dict) -> None:
    """#62: `dpdl publish --deviation` adds the build of the deviation's declared config file to the published
    study (deviations/<name>/: scorecard, per-seed tables, cards, tables, figures; the manifest's record) and
    leaves the default's verdicts as they were; --rejudge and dpdl check judge it again (an edited verdict there,
    its hash made to agree, fails the check); the default published again carries it; the article has its
    section. Here the declared file holds the test's grid, so this build is the deviation's."""
    from dpdl.io import sha256_file
    from dpdl.publishing.layout import MANIFEST

    work = built["work"]
    shutil.rmtree(
        work / "results" / "readings", ignore_errors=True
    )  # another test's reading: the default alone
    shutil.copy(work / "config" / "config.yaml", work / "config" / "paper_femnist_at_hand.yaml")
    commit_build(built)
    publish = ("publish", "--studies", "dp_iadmm", "--configfile")
    done = dpdl(built, *publish, "config/config.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    snapshot = work / "published" / "dp_iadmm"
    default = (snapshot / "claims.csv").read_text()
    for name, configfile, said in (
        (
            "writers_at_hand",
            "config/config.yaml",
            "is built from one of config/paper_femnist_at_hand_nonprivate",
        ),
        ("elsewhere", "config/paper_femnist_at_hand.yaml", "declares no data deviation 'elsewhere'"),
    ):
        refused = dpdl(built, *publish, configfile, "--deviation", name)
        assert refused.returncode != 0 and said in refused.stderr and "Traceback" not in refused.stderr
    done = dpdl(built, *publish, "config/paper_femnist_at_hand.yaml", "--deviation", "writers_at_hand")
    assert done.returncode == 0, done.stderr[-3000:]
    folder = snapshot / "deviations" / "writers_at_hand"
    assert (folder / "claims.csv").read_text() == (work / "results/claims/dp_iadmm.csv").read_text()
    tables = {p.name for p in (work / "results/dp_iadmm/aggregates").glob("*.csv")}
    assert {p.name for p in (folder / "aggregates").glob("*.csv")} == tables
    assert (folder / "cards" / "femnist.json").is_file() and any((folder / "figures").glob("*.png"))
    assert (folder / "tables" / "table1.csv").read_text() == (
        work / "results/tables/dp_iadmm_table1.csv"
    ).read_text()
    manifest = json.loads((snapshot / MANIFEST).read_text())
    record = manifest["deviations"]["writers_at_hand"]
    assert (
        record["configfile"] == "config/paper_femnist_at_hand.yaml"
        and record["config"]["dp_iadmm"]["seeds"] == 2
    )
    inside = sorted(p.relative_to(snapshot).as_posix() for p in folder.rglob("*") if p.is_file())
    assert inside and all(manifest["files"][name] == sha256_file(snapshot / name) for name in inside)
    assert (snapshot / "claims.csv").read_text() == default

    checked = dpdl(built, "check", "published")
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-3000:]
    rejudged = dpdl(built, "publish", "--rejudge")
    assert rejudged.returncode == 0, rejudged.stderr[-3000:]
    assert "dp_iadmm/deviation writers_at_hand: 45 claims, 0 verdicts changed" in rejudged.stdout
    scorecard = (folder / "claims.csv").read_text()
    edited = scorecard.replace("not run at this scale", "reproduced", 1)
    (folder / "claims.csv").write_text(edited)
    manifest = json.loads((snapshot / MANIFEST).read_text())
    manifest["files"]["deviations/writers_at_hand/claims.csv"] = sha256_file(folder / "claims.csv")
    (snapshot / MANIFEST).write_text(json.dumps(manifest))
    checked = dpdl(built, "check", "published")
    assert (
        checked.returncode != 0
        and "(dp_iadmm, data deviation writers_at_hand)" in checked.stdout + checked.stderr
    )
    (folder / "claims.csv").write_text(scorecard)
    manifest["files"]["deviations/writers_at_hand/claims.csv"] = sha256_file(folder / "claims.csv")
    (snapshot / MANIFEST).write_text(json.dumps(manifest))

    done = dpdl(built, *publish, "config/config.yaml")  # the default again: the deviation is carried
    assert done.returncode == 0, done.stderr[-3000:]
    assert (folder / "claims.csv").read_text() == scorecard
    assert json.loads((snapshot / MANIFEST).read_text())["deviations"]["writers_at_hand"] == record
    article = (snapshot / "ARTICLE.md").read_text()
    assert "## Declared data deviations" in article and "### writers_at_hand" in article
    assert "Its table1, from its dataset cards:" in article
    checked = dpdl(built, "check", "published")
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-3000:]
