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
