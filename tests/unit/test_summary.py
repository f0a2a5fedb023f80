"""The cross-study outputs: merged scorecard, privacy table, provenance table, run status."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_runs import provenance, trace

from dpdl.audit_report import NOT_BUILT, PREMISES_NOT_BUILT
from dpdl.claims import HEADLINE_KINDS, IMPLEMENTATION_CHECK, PREMISE_CLAIM, PRIVACY_CLAIM, scorecard
from dpdl.config import load_config
from dpdl.errors import ArtifactError
from dpdl.io import write_json
from dpdl.judgement import NOT_PUBLISHED
from dpdl.runs import SEED_IN_NAME, RunResult, run_timing, write_run
from dpdl.studies import ALL, study_module
from dpdl.summary import (
    NOT_ENABLED,
    headline,
    merge_scorecards,
    privacy_table,
    provenance_table,
    registered_claim_ids,
    scorecard_html,
    scorecard_markdown,
    scorecard_problems,
    status,
    verdict_counts,
)
from dpdl.verdicts import NOT_AT_SCALE, NOT_REPRODUCED, REPRODUCED, UNAVAILABLE, VERDICTS

ROOT = Path(__file__).resolve().parents[2]


def judged(study: str, verdict: str, tmp_path: Path) -> Path:
    """A study scorecard CSV as its claims rule writes it, every claim with ``verdict``."""
    card = scorecard(
        study_module(study).CLAIMS, {}, scale={"seeds": 2}, switches={"s": "x"}, shared_seeds=True
    )
    card["verdict"], card["our_value"] = verdict, "0.5"
    path = tmp_path / f"{study}.csv"
    card.to_csv(path, index=False)
    return path


def test_merged_scorecard_has_every_registered_claim_with_the_reason_it_was_not_judged(
    tmp_path: Path,
) -> None:
    card = merge_scorecards(["dzoa", "wddp"], {"dzoa": judged("dzoa", REPRODUCED, tmp_path)})
    assert list(card["id"]) == registered_claim_ids()
    assert registered_claim_ids()[: len(study_module(ALL[0]).CLAIMS)] == [
        c.id for c in study_module(ALL[0]).CLAIMS
    ]
    privacy = card[card["kind"] == PRIVACY_CLAIM]  # no audit table given: not built, or not enabled
    assert set(privacy["verdict"]) == {NOT_AT_SCALE} and set(privacy["detail"]) == {NOT_BUILT, NOT_ENABLED}
    premises = card[card["kind"] == PREMISE_CLAIM]  # no data premise table: not measured, or not enabled
    assert set(premises["verdict"]) == {NOT_AT_SCALE} and set(premises["detail"]) == {
        PREMISES_NOT_BUILT,
        NOT_ENABLED,
    }
    card = card[~card["kind"].isin((PRIVACY_CLAIM, PREMISE_CLAIM))]
    by_study = card.groupby("study")["verdict"].agg(set)
    assert by_study["dzoa"] == {REPRODUCED}
    assert by_study["wddp"] == {UNAVAILABLE}  # enabled, but no scorecard: its data could not be built
    assert by_study["dvp_pvp"] == by_study["dp_iadmm"] == {NOT_AT_SCALE}
    assert set(card.loc[card["study"] == "dvp_pvp", "detail"]) == {NOT_ENABLED}
    assert set(card.loc[card["study"] == "dzoa", "our_value"]) == {"0.5"}


def test_a_claim_registered_after_its_scorecard_is_not_yet_published(tmp_path: Path) -> None:
    path = judged("dzoa", REPRODUCED, tmp_path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.drop(index=2).to_csv(path, index=False)  # as if claim 2 were added after the file was written
    card = merge_scorecards(["dzoa"], {"dzoa": path})
    dzoa = card[(card["study"] == "dzoa") & ~card["kind"].isin((PRIVACY_CLAIM, PREMISE_CLAIM))].reset_index(
        drop=True
    )
    assert list(dzoa["id"]) == list(frame["id"])  # in registration order
    assert dzoa.loc[2, "verdict"] == NOT_PUBLISHED and "dpdl publish --rejudge" in dzoa.loc[2, "detail"]
    assert set(dzoa.drop(index=2)["verdict"]) == {REPRODUCED}
    assert verdict_counts(card).set_index("study").loc["dzoa", NOT_PUBLISHED] == 1


def test_a_stale_or_foreign_scorecard_is_refused(tmp_path: Path) -> None:
    path = judged("dzoa", REPRODUCED, tmp_path)
    frame = pd.read_csv(path)
    for stale in (
        frame.iloc[::-1],
        frame.assign(id=frame["id"].str.replace("dzoa.", "dzoa.old.", regex=False)),
    ):
        stale.to_csv(path, index=False)  # out of order; claims no longer registered
        with pytest.raises(ArtifactError, match="not the scorecard of the registered claims"):
            merge_scorecards(["dzoa"], {"dzoa": path})
    frame.assign(verdict="holds").to_csv(path, index=False)
    with pytest.raises(ArtifactError, match=r"unknown verdicts \['holds'\]"):
        merge_scorecards(["dzoa"], {"dzoa": path})


def test_headline_counts_only_the_papers_claims_and_html(tmp_path: Path) -> None:
    card = merge_scorecards(["dzoa"], {"dzoa": judged("dzoa", NOT_REPRODUCED, tmp_path)})
    claims = study_module("dzoa").CLAIMS
    n_paper = sum(claim.kind in HEADLINE_KINDS for claim in claims)
    n_checks = sum(claim.kind == IMPLEMENTATION_CHECK for claim in claims)
    assert n_paper > 0 and n_paper + n_checks == len(claims)
    counts = verdict_counts(headline(card)).set_index("study")
    assert counts.loc["dzoa", NOT_REPRODUCED] == n_paper and counts.loc["dzoa", REPRODUCED] == 0
    assert counts.loc["all studies"].sum() == len(headline(card)) < len(card) or n_checks == 0
    markdown = scorecard_markdown(card)
    checks_section = markdown.split("## Implementation checks")[1]
    assert all(claim.id in checks_section for claim in claims if claim.kind == IMPLEMENTATION_CHECK)
    assert not any(f"| {claim.id} |" in checks_section for claim in claims if claim.kind in HEADLINE_KINDS)
    page = scorecard_html(card)
    assert page.count('style="background:#f7d4d0"') == len(claims)  # one red row per claim not reproduced
    hostile = scorecard_html(card.assign(our_value="<script>alert(1)</script>"))
    assert "<script>" not in hostile and "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile


def write_private_run(
    path: Path,
    *,
    algorithm: str,
    eps_pld: float,
    wall: float,
    cpu: float | None = None,
    study: str = "dzoa",
    device: str | None = None,
) -> None:
    """A run (of the seed or trial its file name says); with ``cpu`` None, one made before runs recorded their
    CPU time; with ``device``, one whose backend ran on it (``"gpu: NVIDIA H200"``)."""
    named = SEED_IN_NAME.search(path.name)
    seed = int(named.group(2)) if named else 0
    record = provenance(
        study=study, dataset=f"{study}/lasso", algorithm=algorithm, eps_composed_pld=eps_pld, seed=seed
    )
    if device is not None:
        record["params"] = {"backend": {"name": "jax", "device": device}}
    timing = run_timing(wall, cpu or 0.0, 3)
    if cpu is None:
        del timing["cpu_time_s"]
    write_run(
        path,
        RunResult(
            trace(), {**record, "versions": {"python": "3", "dpdl": "0", "numpy": "2"}, "timing": timing}
        ),
    )


def test_privacy_table_groups_runs_and_keeps_the_worst(tmp_path: Path) -> None:
    paths = [tmp_path / f"run{i}.npz" for i in range(4)]
    write_private_run(paths[0], algorithm="dzoa", eps_pld=1.0, wall=1)
    write_private_run(paths[1], algorithm="dzoa", eps_pld=1.5, wall=1)
    write_private_run(paths[2], algorithm="dpadmm", eps_pld=0.7, wall=1)
    nonprivate = provenance(
        study="dzoa",
        algorithm="nonprivate",
        epsilon=None,
        eps_per_iteration=None,
        eps_composed_rdp=None,
        eps_composed_pld=None,
    )
    write_run(
        paths[3],
        RunResult(
            trace(),
            {
                **nonprivate,
                "versions": {"python": "3", "dpdl": "0", "numpy": "2"},
                "timing": run_timing(1, 1, 3),
            },
        ),
    )
    table = privacy_table(paths).set_index("algorithm")
    assert list(table.index) == ["dpadmm", "dzoa"]  # the non-private run is left out
    assert table.loc["dzoa", "runs"] == 2 and table.loc["dzoa", "eps_composed_pld"] == 1.5
    assert table.loc["dpadmm", "eps_per_iteration"] == 0.1 and table.loc["dpadmm", "iterations"] == 3


def test_provenance_lists_raw_files_datasets_and_versions(tmp_path: Path) -> None:
    card = {
        "name": "wddp/kdd",
        "study": "wddp",
        "dataset": "kdd",
        **{"rows": 50, "rows_train": 40, "rows_test": 10, "features": 3, "classes": 2, "class_balance": None},
        **{"agents": None, "samples_per_agent": None, "options": {}, "notes": [], "arrays": {"X_train": {}}},
        "npz_sha256": "a" * 64,
        "dpdl_version": "0.1.0",
        "raw_inputs": [{"path": "kdd/kddcup.data_10_percent.gz", "algorithm": "sha256", "digest": "b" * 64}],
    }
    write_json(tmp_path / "kdd.json", card)
    write_json(tmp_path / "kdd-part.json", {key: card[key] for key in ("study", "raw_inputs")})
    with pytest.raises(
        ArtifactError, match=r"kdd-part\.json: not a prepared dataset's card \(.*'name' is a required"
    ):
        provenance_table([tmp_path / "kdd-part.json"])
    table = provenance_table([tmp_path / "kdd.json"])
    assert table.iloc[0].to_dict() == {
        "kind": "raw file",
        "name": "wddp/kdd: kdd/kddcup.data_10_percent.gz",
        "value": "b" * 64,
        "detail": "sha256",
    }
    assert table.iloc[1]["value"] == "a" * 64
    assert {"python", "numpy", "dp-accounting"} <= set(table.loc[table["kind"] == "package", "name"])


@pytest.mark.parametrize(("cpu", "charged"), [(3.0, 3.0), (None, 4.0)])
def test_status_counts_runs_and_estimates_time_left_from_finished_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cpu: float | None, charged: float
) -> None:
    """CPU time left = runs left x the measured CPU seconds per run (the wall time of a run that predates the
    CPU record)."""
    config = load_config(ROOT / "config/ci.yaml")
    monkeypatch.chdir(tmp_path)
    config["studies"] = ["dzoa"]
    runs = study_module("dzoa").runs(config, {"dzoa/lasso"})
    dzoa_runs = [p for p in runs if "/runs/dzoa/" in p]
    for path in dzoa_runs[:2]:
        write_private_run(Path(path), algorithm="dzoa", eps_pld=1.0, wall=4.0, cpu=cpu)
    table = status(config, {"dzoa/lasso"})[0].set_index("group")
    row = table.loc["results/dzoa/runs/dzoa"]
    assert (row["runs"], row["present"], row["left"]) == (len(dzoa_runs), 2, len(dzoa_runs) - 2)
    assert row["cpu_seconds_left"] == pytest.approx(charged * (len(dzoa_runs) - 2))
    # DP-ADMM has no finished run: its estimate falls back to the study's measured mean
    assert table.loc["results/dzoa/runs/dpadmm", "cpu_seconds_left"] == pytest.approx(
        charged * (len(runs) - len(dzoa_runs))
    )
    assert status(config, set())[0].empty  # nothing can be built: nothing to run


def test_status_rates_cpu_runs_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run made on a GPU is present but measures no CPU time (#37): its group's rate is its CPU runs'."""
    config = load_config(ROOT / "config/ci.yaml")
    monkeypatch.chdir(tmp_path)
    config["studies"] = ["dzoa"]
    dzoa_runs = [p for p in study_module("dzoa").runs(config, {"dzoa/lasso"}) if "/runs/dzoa/" in p]
    write_private_run(Path(dzoa_runs[0]), algorithm="dzoa", eps_pld=1.0, wall=4.0, cpu=3.0)
    write_private_run(
        Path(dzoa_runs[1]), algorithm="dzoa", eps_pld=1.0, wall=0.5, cpu=0.75, device="gpu: H200"
    )
    row = status(config, {"dzoa/lasso"})[0].set_index("group").loc["results/dzoa/runs/dzoa"]
    assert (row["present"], row["seconds_per_run"]) == (2, 3.0)
    assert row["cpu_seconds_left"] == pytest.approx(3.0 * (len(dzoa_runs) - 2))


READING_SNAKEFILE = """
rule claims:
    input: expand("results/dzoa/runs/dzoa/{run}.npz", run=["a/seed0", "a/seed1", "b/seed2"])
    output: "results/claims/dzoa.csv"
    shell: "touch {output}"

rule run:
    output: "results/dzoa/runs/dzoa/{cell}/{name}.npz"
    shell: "touch {output}"
"""


def test_status_counts_a_started_readings_own_runs_as_snakemake_plans_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#38: a reading's runs are those Snakemake will make in its folder (left) and those it made there (present);
    a run linked in from the main build is the main build's, and a reading with no folder is not started."""
    config = load_config(ROOT / "config/ci.yaml") | {"studies": ["dzoa"], "readings": True}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Snakefile").write_text(READING_SNAKEFILE)
    folder = tmp_path / "results/readings/dzoa/mean_loss"
    (folder / "results/dzoa/runs/dzoa/a").mkdir(parents=True)
    (folder / "config.yaml").write_text("studies: [dzoa]\n")
    shared = Path("results/dzoa/runs/dzoa/a/seed0.npz")
    write_private_run(shared, algorithm="dzoa", eps_pld=1.0, wall=4.0, cpu=3.0)
    (folder / shared).hardlink_to(shared)
    write_private_run(
        folder / "results/dzoa/runs/dzoa/a/seed1.npz", algorithm="dzoa", eps_pld=1.0, wall=6, cpu=5.0
    )
    table, not_started = status(config, {"dzoa/lasso"}, tmp_path / "Snakefile")
    row = table.set_index("reading").loc["mean_loss"]
    assert (row["group"], row["runs"], row["present"], row["left"]) == ("results/dzoa/runs/dzoa", 2, 1, 1)
    assert row["seconds_per_run"] == pytest.approx(
        5.0
    )  # the group's one measured run: the reading's own (5 s)
    assert row["cpu_seconds_left"] == pytest.approx(5.0)
    assert not_started == ["dzoa/lipschitz_2", "dzoa/lipschitz_5", "dzoa/ring"]
    assert set(table["reading"]) == {"default", "mean_loss"}


def test_saved_runs_lists_each_checkpoint_and_skips_an_unreadable_one(tmp_path: Path) -> None:
    import numpy as np

    from dpdl.checkpoint import Checkpoint
    from dpdl.studies.dp_iadmm.run import CHECKPOINT_NAME
    from dpdl.summary import saved_runs

    job = tmp_path / "results/dp_iadmm/runs/main/mnist/objp/eps0.05"
    checkpoint = Checkpoint(job / CHECKPOINT_NAME, key="k", every_s=0.0)
    checkpoint.earlier_cpu_s = 600.0
    checkpoint.save(1478, {"z": np.zeros(3)})
    broken = tmp_path / "results/dp_iadmm/runs/main/mnist/outp/eps0.05" / CHECKPOINT_NAME
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"cut short")
    table = saved_runs(tmp_path / "results")
    assert list(table["job"]) == [str(job)] and table.loc[0, "saved_after_iteration"] == 1478
    assert table.loc[0, "cpu_minutes_so_far"] >= 10.0
    assert saved_runs(tmp_path / "nothing").empty


def test_check_wants_one_scorecard_row_per_registered_claim(tmp_path: Path) -> None:
    card = merge_scorecards([], {})
    path = tmp_path / "claims.csv"
    card.to_csv(path, index=False)
    assert scorecard_problems(path) == []
    card.drop(index=3).to_csv(path, index=False)
    assert "missing: ['" + card.loc[3, "id"] + "']" in scorecard_problems(path)[0]
    card.assign(verdict="maybe").to_csv(path, index=False)
    assert scorecard_problems(path) == [f"{path}: verdicts ['maybe'] are not among {VERDICTS}"]


def test_a_claim_without_a_form_or_margin_is_refused_and_dpdl_check_flags_a_repeated_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dpdl.check import claim_problems
    from dpdl.claims import PAPER_STATEMENT, Claim
    from dpdl.verdicts import Equivalence, StatedNumber

    def claim(id_: str, form: object) -> Claim:
        return Claim(id_, "dzoa", "Fig. 2", "x", PAPER_STATEMENT, form, "why", "fig2", lambda table: [])

    with pytest.raises(ValueError, match="claim a: form '±2 pp' is not one of"):
        claim("a", "±2 pp")
    with pytest.raises(ValueError, match="claim b: an equivalence needs a margin > 0"):
        claim("b", Equivalence(margin=0.0))
    with pytest.raises(ValueError, match="claim c: a stated number needs a tolerance > 0"):
        claim("c", StatedNumber(paper_value=1.0, tolerance=0.0))
    assert claim_problems() == []  # the registered claims as they are
    monkeypatch.setattr(study_module("dzoa"), "CLAIMS", [claim("b", Equivalence(margin=0.1))] * 2)
    assert claim_problems() == ["claim b (dzoa): its id is registered twice"]
