"""The dzoa rules end to end on generated lasso data, in a temporary copy of the project.

dzoa is the smallest complete study, so the cross-study outputs (scorecard, privacy table,
forcerun of one figure, the HTML report) are tested on it too.
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_project import ROOT, commit_build, dpdl, make_project, snakemake

from dpdl import paths, summary
from dpdl.audit_report import NOT_BUILT, PREMISES_NOT_BUILT
from dpdl.claims import PREMISE_CLAIM, PRIVACY_CLAIM
from dpdl.errors import DpdlError
from dpdl.report import SCORECARD_MARKER, find_browser, render, report_contents
from dpdl.runs import read_run
from dpdl.studies import ALL, study_module
from dpdl.summary import NOT_ENABLED
from dpdl.verdicts import NOT_AT_SCALE

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
    for name in ("scorecard.csv", *(f"{study}/MANIFEST.json" for study in ALL)):  # the snapshot's verdicts
        (project["work"] / "published" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "published" / name, project["work"] / "published" / name)
    done = snakemake(project)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {**project, "done": done}


def test_the_end_of_the_build_says_what_it_decided_and_where_the_published_verdicts_are(built: dict) -> None:
    end = built["done"].stderr[built["done"].stderr.index("dpdl: build finished") :].splitlines()
    decided = [line.removeprefix("dpdl: ").strip() for line in end if "claims.md" in line or "scale" in line]
    assert decided[0] == "The scorecard: results/claims.md (every column: results/claims.csv)."
    assert decided[1].startswith("At config/config.yaml's scale this build decided 0 of the papers' ")
    assert "no claim's rule is loosened" in decided[2] and "published/scorecard.md" in decided[3]
    card = pd.read_csv(built["work"] / "results/claims.csv", dtype=str, keep_default_na=False)
    published = pd.read_csv(ROOT / "published/scorecard.csv", dtype=str, keep_default_na=False).set_index(
        "id"
    )
    dzoa = card[card["study"] == "dzoa"]
    assert (dzoa["verdict"] == NOT_AT_SCALE).all()  # this build's own verdicts: the scale rule is unchanged
    assert list(dzoa["published_verdict"]) == list(published.loc[dzoa["id"], "verdict"])
    manifest = json.loads((ROOT / "published/dzoa/MANIFEST.json").read_text())
    commit, judged = manifest["code"]["commit"][:10], manifest.get("judged", {}).get("commit", "")[:10]
    stamp = f"published/dzoa at {commit}" + (f", judged at {judged}" if judged and judged != commit else "")
    assert set(dzoa["published_snapshot"]) == {stamp}  # the code that built the snapshot, and that judged it


def test_every_figure_and_the_claims_are_written(built: dict) -> None:
    work = built["work"]
    for figure in FIGURES:
        assert (work / f"figures/dzoa/{figure}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (work / f"figures/dzoa/{figure}.pdf").read_bytes()[:5] == b"%PDF-"
    for figure in ("fig2", "fig3a", "fig3b"):  # the per-seed tables the claims are judged from
        seeds = pd.read_csv(work / f"results/dzoa/aggregates/{figure}_seeds.csv")
        assert set(seeds["seed"]) == {1, 2} and seeds["value"].notna().all()
    claims = pd.read_csv(work / "results/claims/dzoa.csv")
    assert list(claims["id"]) == [claim.id for claim in study_module("dzoa").CLAIMS]
    assert set(claims["verdict"]) == {NOT_AT_SCALE}  # M = 10 and 2 trials: nothing is judged
    assert claims["test"].notna().all()  # ... but every claim was evaluated on its table
    assert json.loads(claims["switches"].iloc[0])["topology"] == "ring_chord"


def test_runs_carry_provenance_and_the_check_passes(built: dict) -> None:
    work = built["work"]
    runs = sorted((work / "results/dzoa/runs").rglob("*.npz"))
    assert (
        len(runs) == 2 * 10 * 2
    )  # algorithms x grid points (Fig. 2: 4, Fig. 3b: 2 more, Fig. 3a: 4) x trials 1, 2
    run = read_run(work / "results/dzoa/runs/dzoa/eps0.15-delta0.001/trial001.npz")
    prov = run.provenance
    assert prov["seed"] == 1 and prov["epsilon"] == 0.15 and prov["delta"] == 0.001
    assert prov["params"]["epsilon_total_29"] == pytest.approx(
        0.15 * (10 * 6.9078 / (1.05 * 7.1309)) ** 0.5, rel=1e-3
    )
    assert prov["eps_composed_pld"] > 0 and len(prov["params"]["step_scale_alpha0R"]) == 5
    assert list(run.trace["iteration"]) == list(range(11)) and run.trace["error"].iloc[0] == 5.0
    checked = dpdl(built, "check", "--configfile", "config/config.yaml")
    assert checked.returncode == 0, checked.stderr
    again = snakemake(built, "--dry-run")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_the_hash_chain_names_the_first_broken_link(built: dict, tmp_path) -> None:
    """#61 item 2: every output of the build records what it was made from; an edit anywhere is named by check."""
    from dpdl.chain import NO_RECORD, record_path

    work = tmp_path / "project"
    shutil.copytree(built["work"], work, symlinks=True)
    copy = {**built, "work": work}
    checked = dpdl(copy, "check", "--configfile", "config/config.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert NO_RECORD not in checked.stderr  # every output of this build has its record
    for name in ("results/dzoa/aggregates/fig2_seeds.csv", "results/claims/dzoa.csv", "results/claims.csv"):
        assert record_path(work / name).is_file(), name
    calibration = work / "results/dzoa/calibration.json"
    calibration.write_bytes(calibration.read_bytes()[:-40])  # truncated after the runs were made from it
    checked = dpdl(copy, "check", "--configfile", "config/config.yaml")
    assert checked.returncode == 1
    chain = [
        line for line in checked.stdout.splitlines() if "the first broken link of the hash chain" in line
    ]
    assert len(chain) == 1 and chain[0].startswith("results/dzoa/calibration.json: sha256 now "), (
        checked.stdout
    )
    assert "Traceback" not in checked.stderr


# The cross-study outputs, on the smallest complete study: the scorecard lists every registered
# claim, the privacy table agrees with the runs, one figure is redrawn alone, the report holds it all.


def test_scorecard_lists_every_registered_claim(built: dict) -> None:
    work = built["work"]
    card = pd.read_csv(work / "results/claims.csv", dtype=str, keep_default_na=False)
    assert list(card["id"]) == summary.registered_claim_ids()
    ours = pd.read_csv(work / "results/claims/dzoa.csv", dtype=str, keep_default_na=False)
    privacy = (card["study"] == "dzoa") & (card["kind"] == PRIVACY_CLAIM)
    premises = (card["study"] == "dzoa") & (card["kind"] == PREMISE_CLAIM)
    merged = card[(card["study"] == "dzoa") & ~privacy & ~premises].reset_index(drop=True)
    pd.testing.assert_frame_equal(merged[ours.columns], ours)  # the merged card adds columns (readings)
    assert set(card.loc[privacy, "detail"]) == {NOT_BUILT}  # this config leaves the audit off
    assert set(card.loc[premises, "detail"]) == {PREMISES_NOT_BUILT}  # and the premises measured on the data
    others = card[card["study"] != "dzoa"]
    assert set(others["verdict"]) == {NOT_AT_SCALE} and set(others["detail"]) == {NOT_ENABLED}
    assert "| dzoa | " in (work / "results/claims.md").read_text()
    # one table row per claim and per study, plus the total and the two header rows
    assert (work / "results/claims.html").read_text().count("<tr") == len(card) + len(ALL) + 1 + 2


def test_privacy_table_agrees_with_the_runs(built: dict) -> None:
    work = built["work"]
    table = pd.read_csv(work / "results/tables/privacy.csv")
    assert set(table["study"]) == {"dzoa"} and set(table["algorithm"]) == {"dzoa", "dpadmm"}
    assert (table["runs"] == 2).all()  # evaluation trials 1 and 2
    prov = read_run(work / "results/dzoa/runs/dpadmm/eps0.15-delta1e-06/trial002.npz").provenance
    row = table[(table["algorithm"] == "dpadmm") & (table["epsilon"] == 0.15) & (table["delta"] == 1e-6)]
    assert len(row) == 1
    assert row["eps_composed_pld"].iloc[0] == pytest.approx(prov["eps_composed_pld"], rel=1e-12)
    assert row["eps_per_iteration"].iloc[0] == pytest.approx(0.15) and row["iterations"].iloc[0] == 10


def test_forcerun_redraws_one_figure_and_nothing_upstream(built: dict) -> None:
    before = (built["work"] / "results/dzoa/aggregates/fig2.csv").stat().st_mtime_ns
    redrawn = snakemake(built, "figures/dzoa/fig2.png", "--forcerun", "dzoa_figure_fig2")
    output = redrawn.stdout + redrawn.stderr
    assert redrawn.returncode == 0, output[-3000:]
    assert "1 of 1 steps (100%) done" in output and "rule dzoa_figure_fig2:" in output
    assert (built["work"] / "results/dzoa/aggregates/fig2.csv").stat().st_mtime_ns == before


def test_report_holds_the_scorecard_and_every_figure(built: dict) -> None:
    made = snakemake(built, "--report", "report.html")
    assert made.returncode == 0, (made.stdout + made.stderr)[-3000:]
    assert "Missing metadata" not in made.stderr and "Warning" not in made.stderr
    contents = report_contents(built["work"] / "report.html")
    for figure in FIGURES:
        entry = contents["results"][f"figures/dzoa/{figure}.png"]
        assert entry["data_uri"].startswith("data:image/png;") and entry["caption"]
    # the menu lists categories by name: the scorecard first, the study, then data and provenance
    assert sorted(contents["categories"]) == [paths.REPORT_CATEGORIES[s] for s in ("summary", "dzoa", "data")]
    if find_browser_or_none() is None:
        pytest.skip("no Chromium here (CI installs it and sets DPDL_REQUIRE_BROWSER=1)")
    report = built["work"] / "report.html"
    with ThreadPoolExecutor(len(FIGURES)) as pool:  # a Chromium launch mostly waits: the renders at once
        shown = {figure: pool.submit(render, report, show=f"figures/dzoa/{figure}.png") for figure in FIGURES}
        dom = render(report, screenshot=built["work"] / "report.png")
    assert SCORECARD_MARKER in dom
    for claim in study_module("dzoa").CLAIMS:
        assert f"<td>{claim.id}</td>" in dom
    assert (built["work"] / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for figure in FIGURES:
        assert contents["results"][f"figures/dzoa/{figure}.png"]["data_uri"][:2000] in shown[figure].result()


def test_the_report_of_a_config_not_built_is_refused_in_one_line(built: dict) -> None:
    """Every config writes to the same paths: the report of one whose jobs are not built would pack another's."""
    other = yaml.safe_dump({"dzoa": {**CONFIG["dzoa"], "outer_iterations": 12}})
    (built["work"] / "config/other.yaml").write_text(other)
    refused = snakemake(built, "--configfile", "config/other.yaml", "--report", "other.html")
    assert refused.returncode == 1 and not (built["work"] / "other.html").exists()
    lines = [line for line in refused.stderr.splitlines() if line.startswith("dpdl: no report written")]
    assert len(lines) == 1 and "jobs of config/other.yaml are not built or out of date" in lines[0], (
        refused.stderr
    )
    assert "Missing metadata" not in refused.stderr and "Traceback" not in refused.stderr
    again = snakemake(built, "--dry-run")  # the refusal left no lock and changed nothing
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def find_browser_or_none() -> str | None:
    try:
        return find_browser()
    except DpdlError:
        if os.environ.get("DPDL_REQUIRE_BROWSER") == "1":
            raise
        return None


def test_publish_writes_a_snapshot_that_check_verifies(built: dict) -> None:
    from dpdl.publishing.layout import MANIFEST, RESULTS
    from dpdl.publishing.merged import README_BEGIN, README_END, readme_results

    work = built["work"]
    shutil.rmtree(
        work / "published"
    )  # the real snapshot's verdicts the build showed; this test publishes its own
    head = commit_build(built)
    (work / "README.md").write_text(f"# x\n\n{README_BEGIN}\nold text\n{README_END}\n\nafter\n")

    def publish() -> None:
        done = dpdl(
            built,
            "publish",
            "--configfile",
            "config/config.yaml",
            "--studies",
            "dzoa",
            "--readme",
            "README.md",
        )
        assert done.returncode == 0, done.stderr

    publish()
    out = work / "published"
    manifest = json.loads((out / "dzoa" / MANIFEST).read_text())
    assert manifest["code"] == {"commit": head, "modified_files": []}
    # the runs' wall time summed, to 0.1 s (not "> 0": a fast machine runs these small ones in under 0.05 s)
    wall = sum(read_run(path).provenance["timing"]["wall_time_s"] for path in paths.run_files("dzoa", work))
    assert manifest["readings"] == ["default"] and abs(manifest["run_compute_seconds"] - wall) <= 0.05 + 1e-9
    assert manifest["config"]["dzoa"]["outer_iterations"] == 10 and manifest["machine"]["cores"] >= 1
    # #39: the runs behind each table and their CPU time; Fig. 2 holds both algorithms at its 2 epsilons x 2
    # deltas x 2 evaluation trials (3 less 1 for tuning)
    settings = CONFIG["dzoa"]
    fig2 = [
        path
        for epsilon in settings["epsilons"]
        for delta in settings["deltas"]
        for path in sorted(work.glob(f"results/dzoa/runs/*/eps{epsilon:g}-delta{delta:g}/*.npz"))
    ]
    cpu = sum(read_run(path).provenance["timing"]["cpu_time_s"] for path in fig2)
    assert manifest["aggregate_compute"]["aggregates/fig2.csv"] == {
        "runs": len(fig2),
        "cpu_seconds": round(cpu, 1),
    }
    assert len(fig2) == 2 * 2 * 2 * 2 and manifest["aggregate_compute"]["aggregates/privacy.csv"]["runs"] == 0
    files = set(manifest["files"])
    assert {"claims.csv", "privacy.csv", "figures/fig2.png", "aggregates/fig2_seeds.csv"} <= files
    # #61 item 2: the top of the hash chain: the claims file as written, and the per-seed tables it judged
    top = manifest["chain"]["claims.csv"]
    assert top["sha256"] == manifest["files"]["claims.csv"]
    assert top["made_from"]["aggregates/fig2_seeds.csv"] == manifest["files"]["aggregates/fig2_seeds.csv"]
    assert not any(name.endswith((".npz", ".pdf")) for name in files)  # small: no run arrays
    readme = (work / "README.md").read_text()
    assert readme_results(work / "README.md") == (out / RESULTS).read_text() and readme.endswith("after\n")
    assert "| dzoa | config/config.yaml | " + head[:10] in readme
    card = pd.read_csv(out / "scorecard.csv", dtype=str, keep_default_na=False)
    assert list(card["id"]) == summary.registered_claim_ids()
    checked = dpdl(built, "check", "published")
    assert checked.returncode == 0, checked.stderr
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    publish()  # the same build publishes the same bytes
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    claims = (out / "dzoa" / "claims.csv").read_text()
    rejudged = dpdl(built, "publish", "--rejudge", "--out", "published")
    assert rejudged.returncode == 0, rejudged.stderr
    assert "dzoa/default: " in rejudged.stdout and "0 verdicts changed" in rejudged.stdout
    assert (out / "dzoa" / "claims.csv").read_text() == claims  # judging the snapshot = judging the build
    assert dpdl(built, "check", "published").returncode == 0

    tampered = out / "dzoa" / "aggregates" / "fig2.csv"
    tampered.write_text(tampered.read_text() + "\n")
    (out / "dzoa" / "extra.csv").write_text("a\n")
    (out / "notes.txt").write_text("a stray file\n")  # #36, case 6: extra entries at the top of the snapshot
    (out / "extra_study").mkdir()
    (out / "extra_study" / "claims.csv").write_text("id\n")
    checked = dpdl(built, "check", "published")
    assert checked.returncode == 1
    assert "aggregates/fig2.csv: sha256 differs from the manifest" in checked.stdout
    assert "extra.csv: not in dzoa's manifest" in checked.stdout
    for stray in ("notes.txt", "extra_study"):
        assert (
            f"published/{stray}: neither a published study nor a merged file of the snapshot"
            in checked.stdout
        )


def test_a_copied_run_stops_the_check_and_the_next_build(built: dict) -> None:
    """#36, case 1: trial001.npz copied over trial002.npz was "115 artifact(s) OK" and counted one trial twice."""
    runs = built["work"] / "results/dzoa/runs/dpadmm/eps0.15-delta1e-06"
    original = (runs / "trial002.npz").read_bytes()
    (runs / "trial002.npz").write_bytes((runs / "trial001.npz").read_bytes())
    message = (
        "results/dzoa/runs/dpadmm/eps0.15-delta1e-06/trial002.npz: holds the run written as "
        "results/dzoa/runs/dpadmm/eps0.15-delta1e-06/trial001.npz (a copied or swapped file); delete it and rerun"
    )
    try:
        checked = dpdl(built, "check", "--configfile", "config/config.yaml")
        assert checked.returncode == 1 and message in checked.stdout + checked.stderr
        # publish reads every run before it touches the snapshot, so a refusal leaves the snapshot as it was
        snapshot = built["work"] / "published"
        before = {path: path.read_bytes() for path in snapshot.rglob("*") if path.is_file()}
        published = dpdl(built, "publish", "--configfile", "config/config.yaml", "--studies", "dzoa")
        assert published.returncode == 1 and message in published.stderr
        assert {path: path.read_bytes() for path in snapshot.rglob("*") if path.is_file()} == before
        rebuilt = snakemake(built, "results/dzoa/aggregates/fig2.csv")
        assert (
            rebuilt.returncode != 0
            and message in (built["work"] / "logs/dzoa/aggregate/fig2.log").read_text()
        )
    finally:
        (runs / "trial002.npz").write_bytes(original)


def test_verify_reruns_jobs_and_names_the_array_or_field_that_differs(built: dict) -> None:
    """#61 item 4: `dpdl verify` reruns a run's job from Snakemake's record and compares its files bit for bit."""
    from dpdl.runs import RunResult, write_run

    work = built["work"]
    runs = sorted((work / "results/dzoa/runs").rglob("*.npz"))
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in runs}
    sampled = dpdl(built, "verify", "--sample", "2", "--seed", "0", "--configfile", "config/config.yaml")
    assert sampled.returncode == 0, sampled.stdout + sampled.stderr
    lines = [line for line in sampled.stdout.splitlines() if line.startswith("results/")]
    assert lines and all(line.endswith(": same") for line in lines), sampled.stdout
    assert "0 differ, 0 failed" in sampled.stdout.splitlines()[-1]
    assert {
        path: (path.read_bytes(), path.stat().st_mtime_ns) for path in runs
    } == before  # the build untouched

    trial = work / "results/dzoa/runs/dzoa"  # D-ZOA's trial-1 job writes every grid point's trial001.npz
    altered, edited = trial / "eps0.15-delta0.001/trial001.npz", trial / "eps0.95-delta0.001/trial001.npz"
    try:
        run = read_run(altered)
        trace = run.trace.copy()
        trace.loc[3, "error"] = np.nextafter(trace.loc[3, "error"], np.inf)
        write_run(altered, RunResult(trace, run.provenance))  # a valid run with one value changed
        run = read_run(edited)
        write_run(edited, RunResult(run.trace, {**run.provenance, "eps_composed_pld": 7.0}))
        checked = dpdl(built, "verify", str(altered.relative_to(work)), str(edited))
        assert checked.returncode == 1, checked.stdout + checked.stderr
        lines = dict(
            line.split(": ", 1) for line in checked.stdout.splitlines() if line.startswith("results/")
        )
        assert (
            sum(line.startswith("job ") for line in checked.stdout.splitlines()) == 1
        )  # both: one job, one rerun
        assert lines.pop(str(altered.relative_to(work))).startswith("DIFFERS: trace/error: row 3: ")
        assert lines.pop(str(edited.relative_to(work))).startswith(
            "DIFFERS: provenance.eps_composed_pld: 7.0 in the build, "
        )
        assert lines and set(lines.values()) == {"same"}  # the job's other grid points
        assert checked.stderr.splitlines()[-1].startswith(
            "dpdl verify: error: 2 problem(s), listed above; the first: "
        )
    finally:
        for path in (altered, edited):
            path.write_bytes(before[path][0])
            os.utime(path, ns=(before[path][1], before[path][1]))  # as built: Snakemake sees nothing to redo
