"""Which prepared datasets can be built here, decided without downloading, and the reports about it.

Every prepared dataset of a config gets one state:

- ``available``: every raw file is in the cache or the mirror at its pinned size, or a source answers;
- ``partial``: FEMNIST under ``data.femnist.missing_shards: use_available`` with shard files that
  cannot be obtained (each split keeps at least one); it is built without them;
- ``corrupt``: a copy of a raw file exists (cache or mirror) at another size and no source can
  replace it; the dataset stays in the build, whose job then fails with one line and the fix;
- ``skipped``: raw files cannot be obtained; the default target leaves the dataset out.

:meth:`Availability.report` is the short text printed before and after a build (a few lines per
dataset); :meth:`Availability.details` is ``dpdl availability``'s, with every file and source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dpdl.data import femnist
from dpdl.data.fetch import MIRROR_ENV, Attempt, RemoteFile, corrupt_message, describe, locate, unavailable_message
from dpdl.data.prepared import options, prepared_names, raw_files

FEMNIST = "dp_iadmm/femnist"
State = Literal["available", "partial", "corrupt", "skipped"]
REPORT_PREFIX = {"partial": "PARTIAL", "corrupt": "ERROR", "skipped": "SKIPPING"}


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
        """The raw files buildable dataset ``name`` is built without (FEMNIST shards that cannot be obtained)."""
        status = self.datasets.get(name)
        if status is None or status.state == "skipped":
            return []
        return [m.remote.path for m in status.missing if m.corrupt is None]

    def headline(self, name: str) -> str:
        """One line on dataset ``name``: its state's reason and, for a missing file, the command that fixes it."""
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
        if self.mirror is None:
            fix = f"{MIRROR_ENV}=<folder of verified copies> snakemake ..."
        else:
            fix = f"dpdl fetch {name} where there is internet (the mirror lacks them)"
        return f"{name}: {reason}; fix: {fix}"

    def report(self) -> str:
        """The short report: per dataset not available, its headline and its first missing file's sources."""
        lines = []
        for name, status in self.datasets.items():
            if status.state != "available":
                lines.append(f"{REPORT_PREFIX[status.state]} {self.headline(name)}")
            if status.state in ("partial", "skipped"):
                lines.append(f"  first: {status.missing[0].remote.path}; sources: {_sources(status.missing[0])}")
        if any(status.state in ("partial", "skipped") for status in self.datasets.values()):
            lines.append("Every missing file and every source tried: dpdl availability")
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

    def details(self) -> str:
        """``dpdl availability``: one state per dataset, then every missing file with every source tried."""
        lines = [f"{status.state:<10} {self.headline(name)}" for name, status in self.datasets.items()]
        for name, status in self.datasets.items():
            if status.state in ("partial", "skipped"):
                lines.append(f"\n{name} ({status.state}), every missing file:")
                lines += [unavailable_message(m.remote, self.cache / m.remote.path, m.attempts) for m in status.missing]
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


def availability(config: dict, cache: Path, mirror: Path | None) -> Availability:
    """Decide, without downloading, which prepared datasets of ``config`` can be built here."""
    result = Availability(cache=Path(cache), mirror=mirror)
    for name in prepared_names(config):
        opts = options(name, config)
        files = raw_files(name, opts)
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
        splits_kept = [any(femnist.FILES[s, k].path not in paths for k in opts["shards"]) for s in ("train", "test")]
        if all(splits_kept):
            return "partial"
    return "skipped"
