"""Real faults in ``dpdl publish`` (issue 61 item 6): killed (SIGKILL) at each point of writing a study's
snapshot, or out of disk space, it leaves the study's old snapshot or its new one, whole, and the next command
says what it found and finishes the job.

The fixture is a one-study snapshot (wddp's committed folder and the merged files written from it); the new
snapshot that ``dpdl publish`` writes is the same with one figure and the machine changed, given in place of a
finished build (what is replaced is what reads the build: :func:`dpdl.publishing.snapshot.study_snapshot`, and the
checks of the build before anything is written, ``run_provenances`` and ``refuse_misjudged``, tested elsewhere).
The process kills itself at the named point through ``DPDL_TEST_KILL_AT`` (:mod:`dpdl.publishing.staging`).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import warm_python

from dpdl.cli import main
from dpdl.errors import DpdlError
from dpdl.io import sha256_file
from dpdl.paths import ARTICLE_FILES, PUBLISHED
from dpdl.publishing import snapshot
from dpdl.publishing.layout import LEDGER, MANIFEST, RESULTS
from dpdl.publishing.merged import splice_readme, write_merged
from dpdl.publishing.problems import published_problems
from dpdl.publishing.staging import FAULT_POINTS, KILL_AT, leftover_kind

ROOT = Path(__file__).resolve().parents[2]
STUDY = "wddp"  # the smallest published study
CHANGED_FIGURE = "figures/fig05.png"
MERGED = ("readings.csv", "scorecard.csv", "scorecard.md", RESULTS)
# The child: `python -m dpdl publish`, this sitecustomize (on its PYTHONPATH) replacing the build's reading by the
# plan's files (DPDL_TEST_PLAN); DPDL_TEST_NO_EXCHANGE makes it swap by two renames, as where the system has no
# atomic exchange. Run through the worker's warm server where there is one (tests/warm_python.py): forked, not cold.
DRIVER = """
import json, os
from pathlib import Path
from dpdl.publishing import snapshot, staging
plan = json.loads(Path(os.environ["DPDL_TEST_PLAN"]).read_text())
def study_snapshot(study, config, configfile, buildable, provenances, in_readings=None):
    outputs = {name: Path(path) for name, path in plan["outputs"].items()}
    return snapshot.StudySnapshot(outputs, dict(plan["texts"]), json.loads(json.dumps(plan["manifest"])))
snapshot.study_snapshot = study_snapshot
snapshot.run_provenances = lambda study: {}  # the checks of the build before writing read the build too
snapshot.refuse_misjudged = lambda builds, config: None
if os.environ.get("DPDL_TEST_NO_EXCHANGE"):
    staging.renameat2 = None
"""


def small_snapshot(root: Path) -> tuple[Path, Path]:
    """A snapshot of wddp alone (its committed folder without the articles, the merged files written from it) in
    ``root/published``, and a README whose results block is that snapshot's."""
    out = root / "published"
    shutil.copytree(PUBLISHED / STUDY, out / STUDY, ignore=shutil.ignore_patterns(*ARTICLE_FILES))
    write_merged(out)
    readme = root / "README.md"
    shutil.copyfile(ROOT / "README.md", readme)
    splice_readme(readme, (out / RESULTS).read_text(encoding="utf-8"))
    return out, readme


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The old snapshot (the fixture), the plan of the new one, and the new one as an uninterrupted publish
    writes it: each study manifest, each merged file's bytes and the README."""
    root = tmp_path_factory.mktemp("publish")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        out, readme = small_snapshot(root / "old")
        old = state(out, readme)
        source = root / "source"  # the new snapshot's files, as a finished build would give them
        manifest = json.loads((out / STUDY / MANIFEST).read_text())
        texts = {name: (out / STUDY / name).read_text(encoding="utf-8") for name in ("privacy.csv", LEDGER)}
        outputs = {}
        for name in manifest.pop("files"):
            if name not in texts:
                outputs[name] = str(source / name)
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(out / STUDY / name, source / name)
        with open(source / CHANGED_FIGURE, "ab") as stream:
            stream.write(b"a newer figure")
        manifest["machine"]["processor"] = "a newer processor"  # in RESULTS.md: the merged files change too
        plan = root / "plan.json"
        plan.write_text(json.dumps({"outputs": outputs, "texts": texts, "manifest": manifest}))
        shutil.copytree(root / "old", root / "new")
        publish_here(plan, root / "new" / "published", root / "new" / "README.md", patch)
        new = state(root / "new" / "published", root / "new" / "README.md")
    assert new["manifest"] != old["manifest"] and new["merged"] != old["merged"]
    assert new["manifest"]["files"][CHANGED_FIGURE] != old["manifest"]["files"][CHANGED_FIGURE]
    return {"root": root, "plan": plan, "old": old, "new": new}


def state(out: Path, readme: Path) -> dict:
    """The study's manifest (every file it lists checked against it, nothing else there but the articles), the
    merged files' bytes and the README."""
    folder = out / STUDY
    manifest = json.loads((folder / MANIFEST).read_text())
    for name, digest in manifest["files"].items():
        assert sha256_file(folder / name) == digest, name
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}
    assert present - {MANIFEST, *ARTICLE_FILES} == set(manifest["files"])
    merged = {name: (out / name).read_bytes() for name in MERGED}
    return {"manifest": manifest, "merged": merged, "readme": readme.read_text(encoding="utf-8")}


def publish_args(out: Path, readme: Path) -> list[str]:
    return [
        "publish",
        "--configfile",
        "config/paper.yaml",
        "--studies",
        STUDY,
        "--out",
        str(out),
        "--readme",
        str(readme),
    ]


def publish_here(plan: Path, out: Path, readme: Path, patch: pytest.MonkeyPatch) -> int:
    """``dpdl publish`` in this process, the build's reading replaced by ``plan``'s files (as the DRIVER does)."""
    given = json.loads(plan.read_text())

    def study_snapshot(
        study: str,
        config: dict,
        configfile: str,
        buildable: object,
        provenances: object,
        in_readings: object = None,
    ) -> snapshot.StudySnapshot:
        outputs = {name: Path(path) for name, path in given["outputs"].items()}
        return snapshot.StudySnapshot(
            outputs, dict(given["texts"]), json.loads(json.dumps(given["manifest"]))
        )

    patch.setattr(snapshot, "study_snapshot", study_snapshot)
    patch.setattr(
        snapshot, "run_provenances", lambda study: {}
    )  # the checks before writing read the build too
    patch.setattr(snapshot, "refuse_misjudged", lambda builds, config: None)
    return main(publish_args(out, readme))


def publish_child(
    plan: Path, out: Path, readme: Path, *, no_exchange: bool = False, kill_at: str = "", limit=None
) -> subprocess.CompletedProcess:
    """``dpdl publish`` in a process of its own (the DRIVER's), which kills itself at ``kill_at``; ``limit`` (run
    in the child before it starts) makes it cold: a warm job is forked by the server, not by this process."""
    site = plan.parent / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")])}
    env.update(
        DPDL_TEST_PLAN=str(plan), DPDL_TEST_NO_EXCHANGE="1" if no_exchange else "", **{KILL_AT: kill_at}
    )
    env.update(warm_python.THREADS)  # as the warm server's numpy was imported
    env, python = (env, sys.executable) if limit is not None else warm_python.interpreter(env)
    command = [python, "-m", "dpdl", *publish_args(out, readme)]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env, preexec_fn=limit
    )


def leftovers(out: Path) -> list[str]:
    return sorted(path.name for path in out.iterdir() if leftover_kind(path))


# Where each kill leaves the study folder: the old snapshot, the new one, or (the two-rename fallback, between the
# renames) neither in place but both whole beside it; and how many leftovers the next publish reports.
KILLED = {
    "copying": ("old", 1),
    "manifest": ("old", 1),
    "swap": ("old", 1),
    "old-moved": ("beside", 2),
    "swapped": ("new", 1),
    "merged": ("new", 0),
}


@pytest.mark.parametrize("point", FAULT_POINTS)
def test_a_publish_killed_at_any_point_leaves_a_whole_snapshot_and_the_next_finishes_it(
    point: str, states: dict, tmp_path: Path, at_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copytree(states["root"] / "old", tmp_path, dirs_exist_ok=True)
    out, readme = tmp_path / "published", tmp_path / "README.md"
    killed = publish_child(states["plan"], out, readme, no_exchange=point == "old-moved", kill_at=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    where, reported = KILLED[point]
    if (
        where == "beside"
    ):  # both whole under the leftover names; the new one is put in place by the next command
        assert not (out / STUDY).exists()
        (new,) = out.glob(f".{STUDY}.new-*")
        (old,) = out.glob(f".{STUDY}.old-*")
        new.rename(out / STUDY)
        assert state(out, readme)["manifest"] == states["new"]["manifest"]
        (out / STUDY).rename(new)
        old.rename(out / STUDY)
        assert state(out, readme)["manifest"] == states["old"]["manifest"]
        (out / STUDY).rename(old)
    else:
        found = state(out, readme)
        assert found["manifest"] == states[where]["manifest"]
        for name in MERGED:  # each merged file whole: the old or the new
            assert found["merged"][name] in (states["old"]["merged"][name], states["new"]["merged"][name]), (
                name
            )
    assert len(leftovers(out)) == reported
    with pytest.MonkeyPatch.context() as patch:  # the verdicts judged again: not what is tested here
        patch.setattr("dpdl.publishing.problems.snapshot_problems", lambda out, manifests: [])
        problems = published_problems(out)  # `dpdl check published` names each leftover
    assert sum("interrupted `dpdl publish`" in problem for problem in problems) == reported
    caplog.clear()
    with pytest.MonkeyPatch.context() as patch:
        assert publish_here(states["plan"], out, readme, patch) == 0
    found = [r.getMessage() for r in caplog.records if "interrupted `dpdl publish`" in r.getMessage()]
    assert len(found) == reported and all(str(out) in line and "\n" not in line for line in found)
    assert state(out, readme) == states["new"] and leftovers(out) == []


def test_a_full_disk_leaves_the_old_snapshot_and_says_so_in_one_line(
    states: dict, tmp_path: Path, at_root: Path
) -> None:
    """A real limit on the child's file size (RLIMIT_FSIZE: EFBIG, as a full disk's ENOSPC) stops the copy of the
    first figure: one line, no traceback, the old snapshot whole and nothing left beside it."""
    shutil.copytree(states["root"] / "old", tmp_path, dirs_exist_ok=True)
    out, readme = tmp_path / "published", tmp_path / "README.md"

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))  # below the figures' size

    done = publish_child(states["plan"], out, readme, limit=limited)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "error" in line]
    assert line.startswith(
        f"dpdl publish: error: {out / STUDY}: not written (File too large); the snapshot there"
    )
    assert "free some space" in line
    assert state(out, readme) == states["old"] and leftovers(out) == []


def test_no_space_for_the_merged_files_leaves_each_whole_and_says_so_in_one_line(
    states: dict,
    tmp_path: Path,
    at_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    from dpdl.publishing import merged

    shutil.copytree(states["root"] / "old", tmp_path, dirs_exist_ok=True)
    out, readme = tmp_path / "published", tmp_path / "README.md"

    def full(path: Path, text: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(merged, "write_text", full)
    assert publish_here(states["plan"], out, readme, monkeypatch) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"dpdl publish: error: {out}: not written (No space left on device); each merged file is whole, the old or "
        "the new; run the command again; free some space and run it again"
    )
    found = state(out, readme)
    assert found["manifest"] == states["new"]["manifest"] and found["merged"] == states["old"]["merged"]


def test_no_space_while_judging_again_leaves_the_old_snapshot(
    states: dict,
    tmp_path: Path,
    at_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    """``dpdl publish --rejudge`` rewrites a study folder the same way: its scorecards and manifest swap in whole."""
    shutil.copytree(states["root"] / "old", tmp_path, dirs_exist_ok=True)
    out, readme = tmp_path / "published", tmp_path / "README.md"
    writes = []

    def full(
        path: Path, text: str
    ) -> None:  # its one scorecard judged again (wddp's readings: a retired engine's)
        writes.append(path)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(snapshot, "write_text", full)
    assert main(["publish", "--rejudge", "--out", str(out), "--readme", str(readme)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        f"dpdl publish: error: {out / STUDY}: not written (No space left on device); the snapshot"
    )
    assert writes and all(f".{STUDY}.new-" in str(path) for path in writes)  # written inside the new folder
    assert state(out, readme) == states["old"] and leftovers(out) == []


def test_the_next_publish_removes_a_half_written_file_and_says_so(
    states: dict, tmp_path: Path, at_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shutil.copytree(states["root"] / "old", tmp_path, dirs_exist_ok=True)
    out, readme = tmp_path / "published", tmp_path / "README.md"
    planted = [out / "scorecard.csv.part-0123abcd", tmp_path / "README.md.part-89abcdef"]
    for path in planted:
        path.write_text("half")
    assert any(f"{planted[0]}: a file an interrupted" in problem for problem in published_problems(out))
    with pytest.MonkeyPatch.context() as patch:
        assert publish_here(states["plan"], out, readme, patch) == 0
    lines = [r.getMessage() for r in caplog.records if "interrupted" in r.getMessage()]
    assert lines == [
        f"{path}: removed (a file an interrupted `dpdl publish` had not finished writing)" for path in planted
    ]
    assert not any(path.exists() for path in planted) and state(out, readme) == states["new"]


def _snapshot_and_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict]:
    """:func:`small_snapshot` from the repository root: the snapshot, its study's folder and its manifest."""
    monkeypatch.chdir(ROOT)
    out, _ = small_snapshot(tmp_path)
    folder = out / STUDY
    return out, folder, json.loads((folder / MANIFEST).read_text())


def _unstamped(manifest: dict) -> dict:
    """``manifest`` as a build gives it: without its files and its audit's stamps."""
    return {k: v for k, v in manifest.items() if k not in ("files", "audit", "data_premises")}


def test_a_build_without_the_audit_republishes_the_runs_and_keeps_the_published_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 59: dvp_pvp rebuilt with audit.enabled false and published again lost its audit, its data premises,
    # the privacy table's audit columns and the manifest's stamps of both
    out, folder, old = _snapshot_and_manifest(tmp_path, monkeypatch)
    before = {name: (folder / name).read_bytes() for name in old["files"]}
    source = (
        tmp_path / "build"
    )  # what the build gives: every file but the audit's, a privacy table without it
    outputs = {}
    for name in old["files"]:
        if not name.startswith("audit/") and name != "privacy.csv":
            outputs[name] = source / name
            outputs[name].parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / name, outputs[name])
    audited = ["audit_eps_lb", "audit_cells", "accountant_bound"]
    privacy = (
        pd.read_csv(folder / "privacy.csv").drop(columns=audited).to_csv(index=False, lineterminator="\n")
    )
    manifest = _unstamped(old)
    built = snapshot.StudySnapshot(outputs, {"privacy.csv": privacy}, manifest)
    snapshot.keep_published_audit(STUDY, built, folder)
    written = snapshot.write_study(out, STUDY, built)
    assert written["audit"] == old["audit"] and written["data_premises"] == old["data_premises"]
    assert written["files"] == old["files"]
    assert {name: (folder / name).read_bytes() for name in old["files"]} == before
    # a carried file edited since it was published is refused, not carried
    (folder / "audit/audit.md").write_text("edited\n")
    with pytest.raises(DpdlError, match="audit.md: not the file its manifest names"):
        snapshot.keep_published_audit(
            STUDY, snapshot.StudySnapshot(outputs, {"privacy.csv": privacy}, manifest), folder
        )


def test_a_build_with_its_audit_is_published_with_the_stamps_publish_audit_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # wddp's rebuild (2026-11-30) was published with its audit's files but without the manifest's audit and
    # data_premises records until `dpdl publish --audit` ran; the plain publish now stamps them alike
    _, folder, old = _snapshot_and_manifest(tmp_path, monkeypatch)
    config = {"audit": old["audit"]["config"], "data": old["data_premises"]["data"]}
    built = snapshot.StudySnapshot({name: folder / name for name in old["files"]}, {}, _unstamped(old))
    snapshot.stamp_built_audit(built, config, old["configfile"])
    assert built.manifest["audit"] == {**old["audit"], "code": old["code"]}
    assert built.manifest["data_premises"] == {**old["data_premises"], "code": old["code"]}
    without = {name: folder / name for name in old["files"] if not name.startswith("audit/")}
    bare = snapshot.StudySnapshot(without, {}, _unstamped(old))
    snapshot.stamp_built_audit(bare, config, old["configfile"])
    assert "audit" not in bare.manifest and "data_premises" not in bare.manifest
