"""What ``dpdl check published`` reports of a snapshot (dpdl.publishing.problems), on planted copies of the
committed one."""

from __future__ import annotations

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
    else:
        manifest[key] = value
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    monkeypatch.chdir(at_root)
    problems = published_problems(out)
    assert any(said in problem and "dzoa" in problem for problem in problems), problems
    assert not (at_root / "planted.txt").exists()


def test_a_symlink_in_a_study_folder_is_reported_and_never_embedded(tmp_path: Path) -> None:
    # issue 61: a symlinked PNG was embedded in ARTICLE.html; check said nothing.
    import shutil

    from dpdl.article.write import write_article

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


def test_runs_made_with_another_switch_value_than_the_config_are_named() -> None:
    # issue 61 item 1: a build made with one config could be published with another
    from dpdl.publishing.problems import settings_problems

    config = {"dvp_pvp": {"graph": "erdos_renyi", "agents": 10}}
    runs = {
        "results/dvp_pvp/runs/a.npz": {"switches": {"graph": "ring", "agents": 10, "not_a_key": 1}},
        "results/dvp_pvp/runs/b.npz": {"switches": {"graph": "ring", "agents": 10}},
        "results/dvp_pvp/runs/c.npz": {"switches": {"graph": "erdos_renyi", "agents": 10}},
    }
    assert settings_problems("dvp_pvp", config, runs) == [
        "results/dvp_pvp/runs/a.npz: made with dvp_pvp.graph = 'ring' (2 run(s) so), but the config being published "
        "sets 'erdos_renyi'; publish with the config the build ran (--configfile), or rebuild"
    ]
    assert settings_problems("dvp_pvp", config, {"c": runs["results/dvp_pvp/runs/c.npz"]}) == []


def test_publish_refuses_runs_of_another_config_before_writing(
    at_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpdl.publishing.snapshot as snapshot
    from dpdl.errors import DpdlError

    monkeypatch.chdir(at_root)
    monkeypatch.setattr(snapshot, "run_provenances", lambda study: {"r.npz": {"switches": {"graph": "ring"}}})
    monkeypatch.setattr("dpdl.targets.plan", lambda config: type("Plan", (), {"buildable": set()})())  # no probes
    out = tmp_path / "published"
    with pytest.raises(DpdlError, match=r"r.npz: made with dvp_pvp.graph = 'ring'"):
        snapshot.publish(["dvp_pvp"], Path("config/ci.yaml"), out)
    assert not out.exists() or not any(out.iterdir())
