"""Which prepared datasets can be built here, decided without downloading, and the reports about it.

Every prepared dataset of a config gets one state:

- ``available``: every raw file is in the cache or the mirror at its pinned size, or a source answers;
- ``partial``: FEMNIST under ``data.femnist.missing_shards: use_available`` with shard files that
  cannot be obtained (each split keeps at least one); it is built without them;
- ``corrupt``: a copy of a raw file exists (cache or mirror) at another size and no source can
  replace it; the dataset stays in the build, whose job then fails with one line and the fix;
- ``skipped``: raw files cannot be obtained; the default target leaves the dataset out.

:meth:`Availability.report` is the short text printed before and after a build (a few lines per
dataset); :meth:`Availability.details` is ``dpdl availability``'s: one line per dataset (its state,
what it lacks, the one fix), and with ``verbose`` every missing file with every source tried.

The one fix per dataset, every command in the form the user runs (:func:`dpdl.hints.command`):

- a corrupt copy: replace or delete it (:func:`~dpdl.data.fetch.corrupt_message`);
- files missing and no mirror configured: rerun with ``DPDL_DATA_MIRROR`` set to a folder of
  verified copies (the footnote says where one comes from);
- files missing with a mirror that lacks them, and FEMNIST built without shards (no known mirror
  holds the 15 large training shards): download them by hand into the cache, the first file's URL
  given, every file's under ``--verbose``. A mirror is never suggested where it cannot help.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from dpdl.data import femnist
from dpdl.data.fetch import (
    MIRROR_ENV,
    Attempt,
    RemoteFile,
    Url,
    ZipMember,
    corrupt_message,
    describe,
    locate,
    unavailable_message,
)
from dpdl.data.prepared import PreparedDataset, options, raw_files
from dpdl.hints import command

FEMNIST = "dp_iadmm/femnist"
State = Literal["available", "partial", "corrupt", "skipped"]
REPORT_PREFIX = {"partial": "PARTIAL", "corrupt": "ERROR", "skipped": "SKIPPING"}
BUILD = "snakemake --cores 2"  # the build a fix reruns, unless the caller names the one it runs
FOLDER = "<folder>"
FOLDER_NOTE = (
    f"{FOLDER}: a folder of verified copies laid out as <dataset>/<file> (adult/adult.data, ...), "
    "such as the project's ../shared/data (its README lists every file and pin), "
    "or data/raw from a machine with internet after `{fetch}`"
)


@dataclass(frozen=True)
class MissingFile:
    """A raw file a dataset lacks, with every place checked for it."""

    remote: RemoteFile
    attempts: tuple[Attempt, ...]

    @property
    def corrupt(self) -> Attempt | None:
        """The copy that exists but fails its pinned size, if there is one."""
        return next((a for a in self.attempts if a.corrupt), None)


@dataclass(frozen=True)
class Status:
    """One prepared dataset's state, the number of raw files it needs and those it lacks."""

    state: State
    files: int = 0
    missing: tuple[MissingFile, ...] = ()


@dataclass
class Availability:
    """The state of every prepared dataset of a config, in data-flow order, and where files were sought."""

    datasets: dict[str, Status] = field(default_factory=dict)
    cache: Path = Path("data/raw")
    mirror: Path | None = None
    build: str = BUILD

    @property
    def buildable(self) -> list[str]:
        """The datasets the default target builds (a corrupt one too: its job fails with the fix)."""
        return [name for name, status in self.datasets.items() if status.state != "skipped"]

    @property
    def skipped(self) -> list[str]:
        """The datasets whose raw files cannot be obtained here."""
        return [name for name, status in self.datasets.items() if status.state == "skipped"]

    @property
    def corrupt(self) -> list[str]:
        """The datasets with a copy of a raw file that fails its pinned size."""
        return [name for name, status in self.datasets.items() if status.state == "corrupt"]

    def missing_files(self, name: str) -> list[str]:
        """The raw files buildable dataset ``name`` is built without.

        These are FEMNIST shards that cannot be obtained.
        """
        status = self.datasets.get(name)
        if status is None or status.state == "skipped":
            return []
        return [m.remote.path for m in status.missing if m.corrupt is None]

    def _by_hand(self, name: str) -> bool:
        """Whether ``name``'s fix is a download by hand.

        It is when a mirror is set, or when FEMNIST is built without shards.
        """
        return self.mirror is not None or self.datasets[name].state == "partial"

    def fix(self, name: str) -> str:
        """The one fix for dataset ``name`` (not available), every command in the form the user runs."""
        status = self.datasets[name]
        if status.state == "corrupt":
            first = next(m for m in status.missing if m.corrupt)
            return corrupt_message(first.remote, first.corrupt).partition("; fix: ")[2]
        if not self._by_hand(name):
            return command(self.build, {MIRROR_ENV: FOLDER})
        paths = [PurePosixPath(m.remote.path) for m in status.missing]
        folder = self.cache / os.path.commonpath([str(p.parent) for p in paths])
        first = status.missing[0].remote
        url = next((s.url for s in first.sources if isinstance(s, (Url, ZipMember))), first.homepage)
        lacks = " (the mirror lacks them)" if self.mirror is not None else ""
        return (
            f"download them by hand{lacks} into {folder}/, e.g. {url}; "
            f"every file and URL: {command('dpdl availability --verbose')}"
        )

    def headline(self, name: str) -> str:
        """One line on dataset ``name``: its state's reason and, for a missing file, the one fix."""
        status = self.datasets[name]
        if status.state == "available":
            return name
        if status.state == "corrupt":
            first = next(m for m in status.missing if m.corrupt)
            return f"{name}: {corrupt_message(first.remote, first.corrupt)}"
        if status.state == "partial":
            reason = (
                f"built without {len(status.missing)} of {status.files} shard files "
                "(data.femnist.missing_shards: use_available)"
            )
        else:
            reason = f"{len(status.missing)} of {status.files} raw files cannot be obtained here"
        return f"{name}: {reason}; fix: {self.fix(name)}"

    def notes(self) -> list[str]:
        """The footnote a mirror fix needs: where a folder of verified copies comes from."""
        if any(s.state == "skipped" and not self._by_hand(n) for n, s in self.datasets.items()):
            return [FOLDER_NOTE.format(fetch=command("dpdl fetch"))]
        return []

    def report(self) -> str:
        """The short report: per dataset not available, its headline and its first missing file's sources."""
        lines = []
        for name, status in self.datasets.items():
            if status.state != "available":
                lines.append(f"{REPORT_PREFIX[status.state]} {self.headline(name)}")
            if status.state in ("partial", "skipped"):
                lines.append(
                    f"  first: {status.missing[0].remote.path}; sources: {_sources(status.missing[0])}"
                )
        lines += self.notes()
        if any(status.state in ("partial", "skipped") for status in self.datasets.values()):
            lines.append(
                f"Every missing file and every source tried: {command('dpdl availability --verbose')}"
            )
        return "\n".join(lines)

    def summary(self) -> str:
        """One line: the studies built with all their data, in part, or not at all."""
        studies: dict[str, list[str]] = {}
        for name in self.datasets:
            studies.setdefault(name.split("/")[0], []).append(name)
        built, skipped = [], []
        for study, names in studies.items():
            lacking = [name for name in names if name in self.skipped]
            if len(lacking) == len(names):
                skipped.append(study)
            else:
                built.append(f"{study} (without {', '.join(lacking)})" if lacking else study)
        return (
            f"Studies with their data: {', '.join(built) or 'none'}. "
            f"Skipped for lack of data: {', '.join(skipped) or 'none'}."
        )

    def details(self, verbose: bool = False) -> str:
        """``dpdl availability``: one line per dataset (state, what it lacks, the fix).

        ``verbose`` adds every missing file with every source tried.
        """
        lines = [f"{status.state:<10} {self.headline(name)}" for name, status in self.datasets.items()]
        lines += self.notes()
        missing = [(n, s) for n, s in self.datasets.items() if s.state in ("partial", "skipped")]
        if missing and not verbose:
            lines.append(
                f"Every missing file and every source tried: {command('dpdl availability --verbose')}"
            )
        for name, status in missing if verbose else ():
            lines.append(f"\n{name} ({status.state}), every missing file:")
            lines += [
                unavailable_message(
                    m.remote, self.cache / m.remote.path, m.attempts, mirror=not self._by_hand(name)
                )
                for m in status.missing
            ]
        return "\n".join(lines)


def _sources(missing: MissingFile) -> str:
    """The sources tried for a missing file, with why each failed (once, when they all failed alike)."""
    names = {describe(source) for source in missing.remote.sources}
    tried = [a for a in missing.attempts if a.where in names]
    if not tried:
        return "none besides the cache and a mirror"
    if len({a.reason for a in tried}) == 1:
        return f"{', '.join(a.where for a in tried)}: {tried[0].reason}"
    return ", ".join(f"{a.where} ({a.reason})" for a in tried)


def availability(
    config: dict, cache: Path, mirror: Path | None, datasets: Iterable[PreparedDataset]
) -> Availability:
    """Decide, without downloading, which of ``datasets`` can be built here.

    ``datasets`` are the prepared datasets ``config`` needs (:func:`dpdl.studies.prepared_names`).
    """
    result = Availability(cache=Path(cache), mirror=mirror)
    for record in datasets:
        name = record.name
        opts = options(record, config)
        files = raw_files(record, opts)
        missing = []
        for remote in files:
            found, attempts = locate(remote, cache, mirror)
            if not found:
                missing.append(MissingFile(remote, tuple(attempts)))
        result.datasets[name] = Status(_state(name, opts, missing), len(files), tuple(missing))
    return result


def _state(name: str, opts: dict, missing: list[MissingFile]) -> State:
    if not missing:
        return "available"
    if any(m.corrupt for m in missing):
        return "corrupt"
    if name == FEMNIST and opts["missing_shards"] == "use_available":
        paths = {m.remote.path for m in missing}
        splits_kept = [
            any(femnist.FILES[s, k].path not in paths for k in opts["shards"]) for s in ("train", "test")
        ]
        if all(splits_kept):
            return "partial"
    return "skipped"
