"""What ``dpdl check published`` reports of a snapshot (dpdl.publishing.problems), on planted copies of the
committed one."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import pytest

from dpdl.paths import PUBLISHED
from dpdl.publishing.problems import published_problems


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("commit", "--output=planted.txt", "code.commit: '--output=planted.txt' does not match"),
        ("configfile", "../../etc/passwd", "configfile: '../../etc/passwd' does not match"),
        ("file", "../../outside.csv", "files: '../../outside.csv' does not match"),
        ("reading", "../../published/wddp", "readings.1: '../../published/wddp' does not match"),
        ("reading", "ring_of_ten", "readings: 'ring_of_ten' is not one of dzoa's readings"),
        ("study", "wddp", "study: 'wddp', but the manifest is in dzoa's folder"),
        ("extra", "x", "Additional properties are not allowed ('extra' was unexpected)"),
        ("commit", "0000000", "config/paper.yaml at 0000000 cannot be read in this checkout"),
        ("configfile", "config/never_committed.yaml", "config/never_committed.yaml at "),
        (
            "deviation",
            "writers_at_hand",
            "deviations: 'writers_at_hand' is not one of dzoa's data deviations",
        ),
    ],
)
def test_a_manifest_is_checked_before_any_of_it_is_trusted(
    at_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str, said: str
) -> None:
    # issue 61 items 3 and 5: a code.commit beginning with --output= made `dpdl check` write a file through
    # `git show`; a file name or reading outside the folder was read; an unreadable configfile only warned.
    import json
    import shutil

    out = Path(shutil.copytree(PUBLISHED, tmp_path / "published"))
    manifest_path = out / "dzoa" / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if key == "commit":
        manifest["code"]["commit"] = value
    elif key == "file":
        (tmp_path / "outside.csv").write_text("x\n")
        manifest["files"][value] = hashlib.sha256(b"x\n").hexdigest()
    elif key == "reading":
        manifest["readings"].insert(1, value)
    elif key == "extra":
        manifest["extra"] = value
    elif key == "deviation":  # issue 62: a data deviation the study does not declare
        record = {k: manifest[k] for k in ("code", "configfile", "config")}
        manifest["deviations"] = {value: {**record, "run_compute_seconds": 0.0}}
    else:
        manifest[key] = value
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.chdir(at_root)
    # the verdicts judged again (test_verdict_check) are not what is tested here, and take 10 of this test's 12 s
    monkeypatch.setattr("dpdl.publishing.problems.snapshot_problems", lambda out, manifests: [])
    problems = published_problems(out)
    assert any(said in problem and "dzoa" in problem for problem in problems), problems
    assert not (at_root / "planted.txt").exists()


def test_a_symlink_in_a_study_folder_is_reported_and_never_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 61: a symlinked PNG was embedded in ARTICLE.html; check said nothing.
    import shutil

    from dpdl.article.write import write_article

    monkeypatch.setattr(
        "dpdl.publishing.problems.snapshot_problems", lambda out, manifests: []
    )  # not tested here
    out = Path(shutil.copytree(PUBLISHED, tmp_path / "published"))
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG planted")
    (out / "dzoa" / "figures" / "zz_planted.png").symlink_to(secret)
    assert any("zz_planted.png: a symbolic link" in problem for problem in published_problems(out))
    write_article("dzoa", out)
    assert "zz_planted" not in (out / "dzoa" / "ARTICLE.md").read_text(encoding="utf-8")


def test_what_an_interrupted_publish_left_is_named_in_one_line_each(tmp_path: Path, at_root: Path) -> None:
    # issue 61 item 6: the new or old folder of a swap not finished, a file half written, a study folder without
    # its manifest, and an entry that is not a regular file.
    import os

    from test_publishing_faults import small_snapshot

    out, _ = small_snapshot(tmp_path)
    for name in (".wddp.new-4000001", ".wddp.old-4000001", "dzoa"):
        (out / name).mkdir()
    (out / "scorecard.md.part-0123abcd").write_text("half")
    os.mkfifo(out / "wddp" / "figures" / "zz.png")
    again = "the next `dpdl publish` removes it (or remove it)"
    assert published_problems(out) == [
        f"{out / 'wddp/figures/zz.png'}: not a regular file (a pipe, socket or device); remove it",
        f"{out / '.wddp.new-4000001'}: a new snapshot an interrupted `dpdl publish` had not swapped in; {again}",
        f"{out / '.wddp.old-4000001'}: an old snapshot an interrupted `dpdl publish` had not removed; {again}",
        f"{out / 'scorecard.md.part-0123abcd'}: a file an interrupted `dpdl publish` had not finished writing; {again}",
        f"{out / 'dzoa'}: a study folder without MANIFEST.json (an interrupted publish, or not written by "
        "`dpdl publish`); publish the study again, or remove it",
    ]
    (out / "wddp" / "MANIFEST.json").unlink()  # no study published: still each leftover named
    assert published_problems(out)[1:] == [
        f"{out / '.wddp.new-4000001'}: a new snapshot an interrupted `dpdl publish` had not swapped in; {again}",
        f"{out / '.wddp.old-4000001'}: an old snapshot an interrupted `dpdl publish` had not removed; {again}",
        f"{out / 'scorecard.md.part-0123abcd'}: a file an interrupted `dpdl publish` had not finished writing; {again}",
        f"{out / 'dzoa'}: a study folder without MANIFEST.json (an interrupted publish, or not written by "
        "`dpdl publish`); publish the study again, or remove it",
        f"{out / 'wddp'}: a study folder without MANIFEST.json (an interrupted publish, or not written by "
        "`dpdl publish`); publish the study again, or remove it",
    ]


def _runs_as_made(study: str, config: dict, count: int = 3) -> dict[str, dict]:
    """The first ``count`` runs of ``study``'s grid under ``config``, each provenance holding exactly what the study
    says a run records of the config (its ``recorded_settings``), as a build made with that config has them."""
    from dpdl.studies import prepared_datasets, study_module

    module = study_module(study)
    runs = {}
    for path in module.runs(config, set(prepared_datasets()))[:count]:
        provenance: dict = {
            "timing": {"wall_time_s": 1.0},
            "versions": {"dpdl": "0"},
        }  # not settings: never compared
        for field, (_, value) in module.recorded_settings(config, path).items():
            *parents, last = field.split(".")
            below = provenance
            for part in parents:
                below = below.setdefault(part, {})
            below[last] = copy.deepcopy(value)
        runs[path] = provenance
    return runs


NON_SWITCHES = {  # a setting that is no switch, as each study's runs record it: (provenance field, config key)
    "dvp_pvp": ("params.iterations", "iterations"),
    "wddp": ("params.step_size_selection.grid", "step_sizes"),
    "dp_iadmm": ("params.iterations", "iterations"),
    "dzoa": ("params.outer_iterations", "outer_iterations"),
}


@pytest.mark.parametrize("study", list(NON_SWITCHES))
def test_runs_made_with_another_value_of_a_setting_are_named(study: str, at_root: Path) -> None:
    # issue 61 item 1: a build made with one config could be published with another
    from dpdl.config import load_config
    from dpdl.publishing.problems import settings_problems

    config = load_config(Path("config/ci.yaml"))
    runs = _runs_as_made(study, config)
    assert settings_problems(study, config, runs, runs) == []  # the build's own config: nothing differs
    field, key = NON_SWITCHES[study]
    first, second, _ = runs
    for path in (first, second):
        *parents, last = field.split(".")
        below = runs[path]
        for part in parents:
            below = below[part]
        ran = below[last] = [0.5] if key == "step_sizes" else below[last] * 2
    expected = repr(config[study][key])
    assert settings_problems(study, config, runs, runs) == [
        f"{study}: {first} in the build was made with {study}.{key} = {ran!r} (its {field}; 2 of 3 run(s) differ), "
        f"but the config being published gives {expected}; publish with the config the build ran (--configfile), "
        "or rebuild"
    ]


def test_a_run_outside_the_configs_grid_is_named_and_a_run_without_a_field_is_not_compared(
    at_root: Path,
) -> None:
    from dpdl.config import load_config
    from dpdl.publishing.problems import settings_problems

    config = load_config(Path("config/ci.yaml"))
    runs = _runs_as_made("dvp_pvp", config)
    grid = list(runs)
    extra = grid[0].replace("seed0", "seed7")  # seeds: 2 in ci.yaml
    runs[extra] = copy.deepcopy(runs[grid[0]])
    del runs[grid[1]]["params"]["iterations"]  # a run made before the field was recorded
    runs[grid[1]]["switches"]["graph"] = "ring"  # a switch: compared as every setting is
    assert settings_problems("dvp_pvp", config, runs, grid) == [
        f"dvp_pvp: {extra} in the build is not a run of the config being published (1 run(s) are not: another "
        "config's seeds or cells); publish with the config that made them (--configfile), or remove them",
        f"dvp_pvp: {grid[1]} in the build was made with dvp_pvp.graph = 'ring' (its switches.graph; 1 of 4 run(s) "
        "differ), but the config being published gives 'erdos_renyi'; publish with the config the build ran "
        "(--configfile), or rebuild",
    ]


def test_a_readings_runs_are_compared_with_the_readings_config(at_root: Path) -> None:
    # the nested build of a reading sets its switches: what differs from the study's config is the reading
    from dpdl.config import load_config
    from dpdl.publishing.problems import settings_problems
    from dpdl.readings import reading_config

    config = load_config(Path("config/ci.yaml"))
    settings = reading_config(config, "dzoa", "lipschitz_2")
    runs = _runs_as_made("dzoa", settings)
    assert settings_problems("dzoa", settings, runs, runs, reading="lipschitz_2") == []
    refused = settings_problems(
        "dzoa", config, runs, runs
    )  # the study's config would refuse the reading's runs
    assert [line.split(" (its ")[0].split(" was made with ")[1] for line in refused] == [
        "dzoa.lipschitz = 2",
        "dzoa.lipschitz = 2",
    ]


def test_publish_refuses_runs_of_another_config_before_writing(
    at_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpdl.publishing.snapshot as snapshot
    from dpdl.config import load_config
    from dpdl.errors import DpdlError
    from dpdl.studies import prepared_datasets

    monkeypatch.chdir(at_root)
    config = load_config(Path("config/ci.yaml"))
    runs = _runs_as_made("wddp", config)
    later = {
        path: provenance | {"params": {**provenance["params"], "iterations": 7}}
        for path, provenance in runs.items()
    }
    runs |= dict(list(later.items())[1:])  # all but the first made at another horizon
    monkeypatch.setattr(snapshot, "run_provenances", lambda study: runs)
    monkeypatch.setattr(
        "dpdl.targets.plan", lambda config: type("Plan", (), {"buildable": set(prepared_datasets())})()
    )
    out = tmp_path / "published"
    with pytest.raises(DpdlError) as refused:
        snapshot.publish(["wddp"], Path("config/ci.yaml"), out)
    second = list(runs)[1]
    assert str(refused.value).startswith(
        f"wddp: {second} in the build was made with wddp.iterations = 7 (its params.iterations; 2 of 3 run(s) "
        f"differ), but the config being published gives {config['wddp']['iterations']};"
    )
    assert not out.exists() or not any(out.iterdir())


def test_publish_compares_each_built_readings_runs_with_its_config(
    at_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpdl.publishing.snapshot as snapshot
    from dpdl.config import load_config
    from dpdl.errors import DpdlError
    from dpdl.readings import reading_config, reading_folder
    from dpdl.studies import prepared_datasets

    monkeypatch.chdir(at_root)
    config = load_config(Path("config/ci.yaml"))
    within = reading_folder("dzoa", "ring").as_posix()
    made = _runs_as_made("dzoa", reading_config(config, "dzoa", "ring"))
    in_reading = {f"{within}/{path}": provenance for path, provenance in made.items()}
    monkeypatch.setattr(snapshot, "run_provenances", lambda study: _runs_as_made("dzoa", config))
    monkeypatch.setattr(
        snapshot, "built_readings", lambda study: {"default": Path("x.csv"), "ring": Path("y.csv")}
    )
    monkeypatch.setattr(snapshot, "reading_provenances", lambda study, name, narrowed: in_reading)
    monkeypatch.setattr(
        "dpdl.targets.plan", lambda config: type("Plan", (), {"buildable": set(prepared_datasets())})()
    )

    def compared(builds: dict, config: dict) -> None:
        raise DpdlError("settings compared")  # the next check: every run was what its config gives

    monkeypatch.setattr(snapshot, "refuse_misjudged", compared)
    with pytest.raises(DpdlError, match="^settings compared$"):
        snapshot.publish(["dzoa"], Path("config/ci.yaml"), tmp_path / "published")
    first = next(iter(made))
    made[first]["switches"]["topology"] = "ring_chord"  # a reading's run made with the study's own topology
    with pytest.raises(DpdlError) as refused:
        snapshot.publish(["dzoa"], Path("config/ci.yaml"), tmp_path / "published")
    assert str(refused.value).startswith(
        f"dzoa: {first} in reading ring's build was made with dzoa.topology = 'ring_chord' (its switches.topology; "
        "1 of 3 run(s) differ), but reading ring's config (the config with its switches set) gives 'ring';"
    )


def test_a_seed_of_the_main_build_outside_a_readings_grid_is_not_the_readings_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 59: dvp_pvp's eta_note_grid was seeded with the main build's runs of etas its grid leaves out, and
    # `dpdl publish` refused them as another config's runs
    from dpdl.publishing.snapshot import unused_seed

    monkeypatch.chdir(tmp_path)
    within = "results/readings/toy/narrow/"
    for eta in ("0.001", "0.1"):
        main = Path(f"results/toy/runs/eta{eta}/seed0.npz")
        main.parent.mkdir(parents=True)
        main.write_bytes(b"run")
        (Path(within) / main).parent.mkdir(parents=True)
        (Path(within) / main).hardlink_to(main)
    own = (
        Path(within) / "results/toy/runs/eta0.01/seed0.npz"
    )  # made by the reading's build: no main build's file
    own.parent.mkdir(parents=True)
    own.write_bytes(b"run")
    grid = {"results/toy/runs/eta0.1/seed0.npz"}
    assert unused_seed(f"{within}results/toy/runs/eta0.001/seed0.npz", within, grid)
    assert not unused_seed(f"{within}results/toy/runs/eta0.1/seed0.npz", within, grid)  # in its grid: shared
    assert not unused_seed(own.as_posix(), within, grid)  # outside it, its own: another config's, refused
    (Path(within) / "results/toy/runs/eta0.001/seed0.npz").unlink()
    (Path(within) / "results/toy/runs/eta0.001/seed0.npz").write_bytes(b"run")  # a copy, not the main's file
    assert not unused_seed(f"{within}results/toy/runs/eta0.001/seed0.npz", within, grid)


@pytest.mark.parametrize("row", [1, 4])
@pytest.mark.parametrize("table", ["wddp/claims.csv", "scorecard.csv", "readings.csv"])
def test_a_table_edited_into_no_csv_is_named_not_a_traceback(
    tmp_path: Path, at_root: Path, table: str, row: int
) -> None:
    # 2026-11-30: a scorecard given two fields more than its header on one row made `dpdl check published` end
    # in a traceback: pandas' ParserError, or on the first row (taken for an index) an InvalidIndexError. The
    # edited file is named (by its sha256 or its text), and the reader names it again in one line.
    from test_publishing_faults import small_snapshot

    from dpdl.article.write import write_article
    from dpdl.check import check_artifacts

    out, _ = small_snapshot(tmp_path)
    write_article("wddp", out)
    assert check_artifacts([out]) == []
    path = out / table
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[row] = lines[row].rstrip("\n") + ",x,y\n"  # a data row with more fields than the header
    path.write_text("".join(lines), encoding="utf-8")
    problems = check_artifacts([out])
    assert any(problem.startswith(f"{path}: ") for problem in problems), problems
    assert f"{path}: not a CSV table" in "\n".join(problems), problems
