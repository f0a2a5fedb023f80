"""What ``dpdl check published`` reports of a snapshot.

Each study's files against its manifest, its recorded config against the config file at the commit
it names, and the merged files against the study folders.
"""

from __future__ import annotations

import logging
import re
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from dpdl.chain import published_breaks
from dpdl.errors import ArtifactError, DpdlError
from dpdl.io import sha256_file
from dpdl.paths import ARTICLE_FILES, PUBLISHED
from dpdl.publishing.layout import MANIFEST, read_manifest
from dpdl.publishing.merged import merged_files
from dpdl.publishing.staging import leftover_kind, leftover_problem
from dpdl.studies import ALL, study_module
from dpdl.summary import scorecard_problems
from dpdl.verdict_check import snapshot_problems

log = logging.getLogger("dpdl")

COMMIT = re.compile(r"[0-9a-f]{7,40}")  # what a manifest's code.commit may be: git reaches it unquoted
# a manifest's configfile: a file under config/
CONFIGFILE = re.compile(r"config/[A-Za-z0-9_][A-Za-z0-9_.-]*\.ya?ml")


def committed_config_problems(study: str, manifest: dict, out: Path = PUBLISHED) -> list[str]:
    """Where a manifest's ``config`` is not what its ``configfile`` set at the commit it records.

    Each value the file sets in the manifest's sections must be the manifest's (which adds the
    schema's defaults). Nothing to compare where that file was modified at publication, or outside a
    git checkout (a warning); a commit or file the checkout lacks is a problem. Each published data
    deviation's record (``deviations``) is compared with its own config file and commit alike.
    """
    where = out / study / MANIFEST
    problems = _config_file_problems(study, manifest, where)
    for name, record in manifest.get("deviations", {}).items():
        problems += [
            f"{line} (data deviation {name})" for line in _config_file_problems(study, record, where)
        ]
    return problems


def _config_file_problems(study: str, manifest: Mapping, where: Path) -> list[str]:
    """:func:`committed_config_problems` of one record: its ``code``, ``configfile`` and ``config``."""
    import yaml

    commit, configfile = manifest["code"]["commit"], manifest["configfile"]
    if not (isinstance(commit, str) and COMMIT.fullmatch(commit)):
        return [f"{where}: code.commit {commit!r} is not a git commit hash (7 to 40 hex digits)"]
    if not (isinstance(configfile, str) and CONFIGFILE.fullmatch(configfile)):
        return [f"{where}: configfile {configfile!r} is not a file under config/ (config/<name>.yaml)"]
    # `git status --porcelain` lines
    if configfile in {line[3:] for line in manifest["code"]["modified_files"]}:
        return []
    if not _in_git_checkout():  # an installed dpdl checking a snapshot elsewhere: nothing to compare with
        log.warning(
            "%s: not in a git checkout of dpdl, so %s at %s is not compared", study, configfile, commit[:12]
        )
        return []
    try:
        text = _git("show", "--end-of-options", f"{commit}:{configfile}")
        committed = yaml.safe_load(text) or {}
    # issue 61: a problem, no longer a warning
    except (OSError, subprocess.CalledProcessError, yaml.YAMLError):
        return [
            f"{where}: {configfile} at {commit[:12]} cannot be read in this checkout "
            "(the commit is not in its history, or the file is not in the commit); "
            "publish again from a commit of this history"
        ]
    return [
        f"{where}: config {key} is {recorded!r}, but {configfile} at {commit[:12]} sets {value!r}; "
        "publish again with `dpdl publish`"
        for section in manifest["config"]
        for key, value, recorded in _set_values(committed.get(section), manifest["config"][section], section)
    ]


def _git(*arguments: str) -> str:
    """The output of a git command run here; CalledProcessError or OSError where it fails."""
    return subprocess.run(["git", *arguments], capture_output=True, text=True, check=True).stdout


def _in_git_checkout() -> bool:
    """Whether the current folder is inside a git work tree (where a manifest's commit can be looked up)."""
    try:
        return _git("rev-parse", "--is-inside-work-tree").strip() == "true"
    except (OSError, subprocess.CalledProcessError):
        return False


def _set_values(committed: object, recorded: object, key: str) -> Iterable[tuple[str, object, object]]:
    """``(dotted key, committed value, recorded value)`` wherever a value ``committed`` sets differs."""
    if isinstance(committed, dict):
        for name, value in committed.items():
            below = recorded.get(name) if isinstance(recorded, dict) else None
            yield from _set_values(value, below, f"{key}.{name}")
    elif committed is not None and committed != recorded:
        yield key, committed, recorded


MISSING = object()  # a field a run does not record (made before it was recorded): nothing to compare


def _recorded(provenance: object, field: str) -> object:
    """The value at the dotted ``field`` of a run's provenance, or :data:`MISSING`."""
    for part in field.split("."):
        if not isinstance(provenance, dict) or part not in provenance:
            return MISSING
        provenance = provenance[part]
    return provenance


def settings_problems(
    study: str, config: dict, provenances: Mapping[str, dict], grid: Iterable[str], reading: str | None = None
) -> list[str]:
    """Where a run of ``study``'s build was made with settings other than ``config``'s (issue 61 item 1).

    ``provenances``: each run by the path the build names it (``results/<study>/runs/...``);
    ``grid``: the runs ``config`` implies (the study's ``runs``). A run outside the grid is another
    config's seed or cell; for one in it, each provenance field the study says it records of the
    config (its ``recorded_settings``: the run's settings, switches, horizon, accounting delta) must
    hold the value ``config`` gives. ``reading``: the built reading whose nested build made the runs
    (``config`` is then the reading's). One line per key, naming the first run that differs and how
    many do; a field a run does not record (an older run) is not compared.
    """
    module, grid = study_module(study), set(grid)
    found: dict[tuple[str, str], tuple[str, int, object, object]] = {}
    for path, provenance in provenances.items():
        checks = {"(grid)": ("", None, None)} if path not in grid else {}
        for field, (key, value) in module.recorded_settings(config, path).items():
            ran = _recorded(provenance, field)
            if ran is not MISSING and ran != value:
                checks[field] = (key, ran, value)
        for field, (key, ran, value) in checks.items():
            first, count, _, _ = found.get((field, key), (path, 0, ran, value))
            found[(field, key)] = (first, count + 1, ran, value)
    built = f"reading {reading}'s build" if reading else "the build"
    given = "the config being published"
    if reading:
        given = f"reading {reading}'s config (the config with its switches set)"
    lines = []
    for (field, key), (first, count, ran, value) in sorted(
        found.items(), key=lambda item: item[0][0] != "(grid)"
    ):
        if field == "(grid)":
            lines.append(
                f"{study}: {first} in {built} is not a run of {given} "
                f"({count} run(s) are not: another config's seeds or cells); "
                "publish with the config that made them (--configfile), or remove them"
            )
        else:
            lines.append(
                f"{study}: {first} in {built} was made with {study}.{key} = {ran!r} "
                f"(its {field}; {count} of {len(provenances)} run(s) differ), but {given} gives {value!r}; "
                "publish with the config the build ran (--configfile), or rebuild"
            )
    return lines


def published_problems(out: Path = PUBLISHED) -> list[str]:
    """Problems with a snapshot, its studies and its verdicts.

    Each study's files against its manifest, the merged files against its studies, what an
    interrupted ``dpdl publish`` left (:mod:`dpdl.publishing.staging`), and each published verdict
    against its claim judged again from the per-seed tables (:mod:`dpdl.verdict_check`).
    """
    problems = []
    manifests = {}
    # each manifest checked before any of it is trusted; a bad one is named, its study skipped
    for study in ALL:
        if (out / study / MANIFEST).is_file():
            try:
                manifests[study] = read_manifest(out, study)
            except DpdlError as err:
                problems.append(str(err))
    entries = sorted(out.iterdir()) if out.is_dir() else []
    left = [leftover_problem(path) for path in entries if leftover_kind(path)]
    left += [
        f"{path}: a study folder without {MANIFEST} "
        "(an interrupted publish, or not written by `dpdl publish`); publish the study again, or remove it"
        for path in entries
        if path.name in ALL and path.is_dir() and not (path / MANIFEST).is_file()
    ]
    if not manifests:
        return [
            *problems,
            f"{out}: no published study (no <study>/{MANIFEST}); write one with `dpdl publish`",
            *left,
        ]
    for study, manifest in manifests.items():
        folder = out / study
        present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {
            MANIFEST,
            *ARTICLE_FILES,
        }
        for name in sorted(present - set(manifest["files"])):
            problems.append(f"{folder / name}: not in {study}'s manifest")
        for path in sorted(p for p in folder.rglob("*") if p.is_symlink()):
            problems.append(f"{path}: a symbolic link in the snapshot; replace it with the file or remove it")
        for path in sorted(p for p in folder.rglob("*") if not (p.is_symlink() or p.is_dir() or p.is_file())):
            problems.append(f"{path}: not a regular file (a pipe, socket or device); remove it")
        for name, digest in manifest["files"].items():
            path = folder / name
            if not path.is_file():
                problems.append(f"{path}: listed in the manifest but missing")
            elif sha256_file(path) != digest:
                problems.append(
                    f"{path}: sha256 differs from the manifest; publish again with `dpdl publish`"
                )
        problems += published_breaks(
            {name: folder / name for name in manifest["files"]}, manifest.get("chain", {})
        )
        problems += committed_config_problems(study, manifest, out)
    if len(manifests) < sum((out / study / MANIFEST).is_file() for study in ALL):
        return problems + left  # the merged files come from every manifest: not compared while one is refused
    try:
        merged = merged_files(out)
        for name, text in merged.items():
            path = out / name
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                problems.append(
                    f"{path}: missing or not what its study folders give; rewrite it with `dpdl publish`"
                )
        for path in entries:
            if path.is_symlink():
                problems.append(
                    f"{path}: a symbolic link in the snapshot; replace it with the file or remove it"
                )
            elif leftover_kind(path) or (path.name in ALL and path.is_dir()):
                continue  # a leftover or a study folder without its manifest: named above
            elif not (path.name in manifests and path.is_dir() or path.name in merged and path.is_file()):
                problems.append(
                    f"{path}: neither a published study nor a merged file of the snapshot; remove it"
                )
        scorecard = out / "scorecard.csv"  # a missing one is named among the merged files above
        found = scorecard_problems(scorecard) if scorecard.is_file() else []
        return problems + left + found + snapshot_problems(out, manifests)  # each verdict against its tables
    # an edited table that cannot be read (named above too, by its sha256 or its text)
    except ArtifactError as err:
        return [*problems, *left, f"{err}; publish again with `dpdl publish`"]
