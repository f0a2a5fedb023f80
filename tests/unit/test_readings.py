"""Readings: named sets of switch values, their configs, and the table of verdicts per reading."""

from __future__ import annotations

import base64
import types
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dpdl import readings
from dpdl.errors import ConfigError
from dpdl.readings import DEFAULT, Reading, reading_config, readings_markdown, readings_table, sensitivity
from dpdl.verdicts import INCONCLUSIVE, NOT_AT_SCALE, NOT_REPRODUCED, REPRODUCED

DEMO = (
    Reading(DEFAULT, "the config as given"),
    Reading("eta_1", "note G14: fallback eta = 1", {"eta": 1.0}),
    Reading("plain", "Algorithm 3 as printed", {"pvp_center": "plain"}, post_hoc=True),
)


@pytest.fixture
def demo(monkeypatch: pytest.MonkeyPatch) -> None:
    """dvp_pvp's readings replaced by DEMO."""
    real = readings.study_readings
    monkeypatch.setattr(readings, "study_readings", lambda study: DEMO if study == "dvp_pvp" else real(study))


def test_a_reading_needs_a_folder_name_and_a_reason() -> None:
    with pytest.raises(ValueError, match="letters, digits and single underscores"):
        Reading("eta 1", "why")
    with pytest.raises(ValueError, match="single underscores"):
        Reading("eta__1", "why")  # "__" joins a study and a reading
    with pytest.raises(ValueError, match="needs the paper's text"):
        Reading("eta_1", "  ")


def test_the_reading_config_sets_only_its_switches(demo: None) -> None:
    config = {
        "studies": ["dvp_pvp", "wddp"],
        "readings": True,
        "audit": {"enabled": True, "runs": 200},
        "dvp_pvp": {"eta": "tuned", "pvp_center": "paper"},
    }
    built = reading_config(config, "dvp_pvp", "eta_1")
    assert built == {
        "studies": ["dvp_pvp"],
        "readings": False,
        "audit": {"enabled": False, "runs": 200},  # the main build audits; a reading would repeat it
        "dvp_pvp": {"eta": 1.0, "pvp_center": "paper"},
    }
    assert config["dvp_pvp"]["eta"] == "tuned"  # the caller's config is not changed
    with pytest.raises(ConfigError, match="dvp_pvp has no reading 'eta_3'; declared: default, eta_1, plain"):
        reading_config(config, "dvp_pvp", "eta_3")
    with pytest.raises(ConfigError, match=r"sets \['eta'\], which are not keys"):
        reading_config({**config, "dvp_pvp": {"pvp_center": "paper"}}, "dvp_pvp", "eta_1")


def card(path: Path, verdicts: list[str], effects: list[str] | None = None) -> Path:
    rows = [
        {
            "id": f"c{i}",
            "study": "dvp_pvp",
            "kind": "paper statement",
            "verdict": v,
            "our_value": "",
            "effect": e,
        }
        | {"ci_low": "", "ci_high": "", "n_seeds": "10", "test": "t", "detail": f"cell {e}", "tolerance": "x"}
        for i, (v, e) in enumerate(zip(verdicts, effects or ["1"] * len(verdicts), strict=True))
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_readings_are_a_sensitivity_analysis_not_a_vote(tmp_path: Path, demo: None) -> None:
    """Each reading's verdict beside the default's; n/a derived where its row equals the default's; no count."""
    cards = {
        ("dvp_pvp", DEFAULT): card(
            tmp_path / "a.csv", [REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_AT_SCALE]
        ),
        ("dvp_pvp", "eta_1"): card(
            tmp_path / "b.csv", [REPRODUCED, REPRODUCED, INCONCLUSIVE, NOT_AT_SCALE], ["2", "2", "1", "1"]
        ),
    }
    table = readings_table(cards)
    assert len(table) == 8 and set(table["reading"]) == {DEFAULT, "eta_1"}
    eta_1 = table[table["reading"] == "eta_1"].set_index("id")
    assert list(eta_1["unchanged"]) == ["no", "no", "yes", "yes"]  # c2, c3: the same row as the default's
    assert list(eta_1["default_verdict"]) == [REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_AT_SCALE]
    summary = sensitivity(table, {"dvp_pvp": DEMO}).set_index("id")
    assert summary.loc["c0", "readings"] == "same: eta_1; not built: plain*; * post hoc"
    assert summary.loc["c1", "readings"] == "differs: eta_1: reproduced; not built: plain*; * post hoc"
    assert summary.loc["c2", "readings"] == "n/a: eta_1; not built: plain*; * post hoc"
    assert "holds under" not in "".join(summary["readings"])
    assert summary.loc["c1", "default_verdict"] == NOT_REPRODUCED
    page = readings_markdown(table, summary.reset_index(), {"dvp_pvp": DEMO})
    assert "yes (post hoc)" in page and "note G14: fallback eta = 1" in page and "| n/a |" in page


def test_a_reading_judged_by_the_retired_engine_is_compared_with_the_default_judged_alike(
    tmp_path: Path, demo: None
) -> None:
    """A reading the snapshot cannot judge again keeps its old verdict; its baseline is the old default's."""
    cards = {
        ("dvp_pvp", DEFAULT): card(tmp_path / "now.csv", [NOT_REPRODUCED]),
        ("dvp_pvp", "eta_1"): card(tmp_path / "eta_1.csv", [REPRODUCED]),
    }
    old_default = card(tmp_path / "old.csv", [REPRODUCED])
    table = readings_table(
        cards, {("dvp_pvp", "eta_1"): old_default}, {("dvp_pvp", "eta_1"): "retired (abc1234)"}
    )
    row = table[table["reading"] == "eta_1"].iloc[0]
    assert (row["default_verdict"], row["unchanged"], row["engine"]) == (
        REPRODUCED,
        "yes",
        "retired (abc1234)",
    )
    summary = sensitivity(table, {"dvp_pvp": DEMO}).set_index("id")
    assert summary.loc["c0", "readings"].startswith("n/a: eta_1 (retired engine)")


def test_post_hoc_readings_and_defaults_are_those_the_register_lists() -> None:
    from dpdl.post_hoc import REGISTER
    from dpdl.studies import ALL

    for study in ALL:
        registered = {
            e.subject.removeprefix(f"{study} reading ")
            for e in REGISTER
            if e.subject.startswith(f"{study} reading ")
        }
        has_default = any(e.kind == "default" and e.subject.startswith(f"{study} default") for e in REGISTER)
        declared = readings.study_readings(study)
        assert {r.name for r in declared[1:] if r.post_hoc} == registered, study
        assert declared[0].post_hoc == has_default, study


def test_every_study_declares_a_default_first_and_valid_switches() -> None:
    from dpdl.config import load_config
    from dpdl.studies import ALL

    config = load_config(Path(__file__).resolve().parents[2] / "config/config.yaml")
    for study in ALL:
        found = readings.study_readings(study)
        assert found[0].name == DEFAULT and len(found) >= 2, study
        for reading in found[1:]:
            built = reading_config(config, study, reading.name)
            assert built[study] != config[study], f"{study}/{reading.name} changes nothing"


def test_a_study_without_a_default_reading_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.SimpleNamespace(READINGS=(Reading("eta_1", "why", {"eta": 1}),))
    monkeypatch.setattr(readings, "study_module", lambda name: fake)
    with pytest.raises(ValueError, match="the first reading must be 'default'"):
        readings.study_readings("dvp_pvp")


def test_a_nested_switch_sets_only_its_own_key(monkeypatch: pytest.MonkeyPatch) -> None:
    nested = (Reading(DEFAULT, "config"), Reading("shared", "A16", {"tuning": {"scope": "shared"}}))
    monkeypatch.setattr(readings, "study_readings", lambda study: nested)
    config = {"studies": ["wddp"], "readings": True, "wddp": {"tuning": {"scope": "per_method", "folds": 5}}}
    assert reading_config(config, "wddp", "shared")["wddp"]["tuning"] == {"scope": "shared", "folds": 5}


SEED_SNAKEFILE = """
rule claims:
    input: "results/toy/runs/a.txt", "results/toy/runs/b.txt"
    output: "results/claims/toy.csv"
    shell: "cat {input} > {output}"

rule run:
    output: "results/toy/runs/{name}.txt"
    params: value=lambda wildcards: config[f"run_{wildcards.name}"]
    shell: "echo {params.value} > {output}.tmp && mv {output}.tmp {output}"
"""


def test_a_reading_reruns_only_the_jobs_its_switches_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded from the main build, a reading's build reruns the job whose params changed and keeps the other's
    output (the main build's file), and the main build's files are left as they were."""
    import subprocess
    import sys

    (tmp_path / "Snakefile").write_text(SEED_SNAKEFILE)

    def snakemake(folder: Path, a: int, b: int) -> str:
        command = [sys.executable, "-m", "snakemake", "results/claims/toy.csv", "--cores", "1", "--directory"]
        command += [
            str(folder),
            "--snakefile",
            str(tmp_path / "Snakefile"),
            "--config",
            f"run_a={a}",
            f"run_b={b}",
        ]
        subprocess.run(command, check=True, capture_output=True, text=True, cwd=tmp_path)  # no profile here
        return (folder / "results/claims/toy.csv").read_text()

    assert snakemake(tmp_path, a=1, b=1) == "1\n1\n"
    (tmp_path / "results/toy/runs/c.txt").write_text("partial\n")  # no job recorded it: not reused
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "results/readings/toy/b2"
    assert readings.seed_from_main_build("toy", folder) == 2
    assert not (folder / "results/toy/runs/c.txt").exists() and not (folder / "results/claims").exists()
    assert snakemake(folder, a=1, b=2) == "1\n2\n"
    runs = tmp_path / "results/toy/runs"
    assert (folder / "results/toy/runs/a.txt").samefile(runs / "a.txt")  # reused, not rerun
    assert not (folder / "results/toy/runs/b.txt").samefile(runs / "b.txt")
    assert (runs / "b.txt").read_text() == "1\n"
    assert readings.seed_from_main_build("toy", folder) == 0  # what the reading has is never replaced
    # the reading's own job for a.txt killed or still running (its output gone, Snakemake's marker left):
    # the main build's file is not linked in its place
    records = folder / ".snakemake/metadata"
    record = next(
        p for p in records.iterdir() if base64.urlsafe_b64decode(p.name).decode().endswith("runs/a.txt")
    )
    marker = folder / ".snakemake/incomplete" / record.name
    output = folder / "results/toy/runs/a.txt"
    output.unlink()
    marker.write_text("")
    assert readings.seed_from_main_build("toy", folder) == 0 and not output.exists()


def test_the_nested_build_finds_a_mirror_given_as_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading builds in its own folder: ``DPDL_DATA_MIRROR=../shared/data`` (as CI sets it) and a relative
    ``data.mirror`` reach it as absolute paths, or the mirror check there refuses them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "mirror").mkdir()
    monkeypatch.setenv("DPDL_DATA_MIRROR", "mirror")
    seen = {}

    def run(command: list, check: bool, env: dict) -> types.SimpleNamespace:
        seen["env"] = env
        return types.SimpleNamespace(returncode=0)

    monkeypatch.setattr("subprocess.run", run)
    name = readings.study_readings("dzoa")[1].name
    readings.build_reading("dzoa", name, {"data": {"mirror": "mirror"}}, "Snakefile", 1)
    assert seen["env"]["DPDL_DATA_MIRROR"] == str(tmp_path / "mirror")
    written = yaml.safe_load((readings.reading_folder("dzoa", name) / "config.yaml").read_text())
    assert written["data"]["mirror"] == str(tmp_path / "mirror")
