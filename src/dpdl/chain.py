"""The hash chain: each step records the sha256 of every input it read beside each output.

Each output it wrote has such a record, and :func:`breaks` finds the first link that no longer
holds, from prepared data to the merged scorecard.

A step is one ``dpdl`` command (:func:`dpdl.cli.main` runs each inside :func:`step`). While it runs,
every file it reads through :mod:`dpdl.io` under ``results/`` or ``data/processed/`` is hashed once
(its *inputs*), and every file it writes under ``results/`` gets its record:

- a run (``results/<study>/runs/**.npz``, :func:`dpdl.runs.write_run`) in its provenance, ``chain``: the
  sha256 of its own trace arrays (:func:`arrays_sha256`: a file cannot hold its own hash) and its inputs (the
  prepared arrays and card, the calibration, tuning or optimum it was run with);
- any other output (a per-seed or banded aggregate, an audit table, an intermediate such as a calibration, a
  study's claims CSV, the merged scorecard) in a hidden file beside it, ``.<name>.chain.json``
  (:func:`record_path`): its own sha256 and its inputs'. Snakemake does not know these files, so recording
  them changes no rule and reruns no cached job.

A file edited after it was written no longer has its recorded hash (a run: its arrays); a file edited after a
later step read it no longer has the hash that step recorded. :func:`breaks` orders the records from the
prepared data up and names the first broken link of each chain in one line; files built before the chain was
recorded have no record and are counted apart (:data:`NO_RECORD`), never passed in silence.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dpdl import io
from dpdl.errors import ArtifactError

RECORDED_ROOT = "results"  # the outputs a step records
READ_ROOTS = ("results", "data/processed")  # the inputs it records: the build's outputs and the prepared data
RECORD_SUFFIX = ".chain.json"
# the readings' nested builds, each with its own chain under its folder
READINGS = Path("results", "readings")
NO_RECORD = "built before the hash chain; rebuild to verify"
SHORT = 12  # hex characters of a hash shown in a message


@dataclass
class _Step:
    # path from the working folder -> sha256 (None: not hashed yet; hashed once an output is
    # written, so that a step that writes nothing, ``dpdl check``, hashes nothing)
    inputs: dict[str, str | None] = field(default_factory=dict)
    embedded: set[str] = field(default_factory=set)  # outputs that hold their record themselves (runs)


_current: _Step | None = None


@contextmanager
def step() -> Iterator[None]:
    """Record the hash chain of the files read and written until the block ends (one ``dpdl`` command)."""
    global _current
    outer, _current = _current, _Step()
    io.READ_OBSERVERS.append(_on_read)
    io.WRITE_OBSERVERS.append(_on_write)
    try:
        yield
    finally:
        io.READ_OBSERVERS.remove(_on_read)
        io.WRITE_OBSERVERS.remove(_on_write)
        _current = outer


def chained(path: str | os.PathLike, roots: Iterable[str]) -> str | None:
    """``path`` from the working folder (``results/...``) where it lies under one of ``roots``, else None.

    A hidden or temporary file (a checkpoint, a record, an interrupted write) is None too.
    """
    absolute = Path(os.path.abspath(path))
    here = Path.cwd()
    if not absolute.is_relative_to(here) or absolute.name.startswith(".") or ".part-" in absolute.name:
        return None
    relative = absolute.relative_to(here).as_posix()
    return relative if any(relative.startswith(f"{root}/") for root in roots) else None


def note_read(path: str | os.PathLike) -> None:
    """Count ``path`` as read by the current step (for a read that bypasses :mod:`dpdl.io`)."""
    if _current is not None:
        _on_read(Path(path), None)


def _on_read(path: Path, digest: str | None) -> None:
    relative = chained(path, READ_ROOTS)
    if _current is None or relative is None or _current.inputs.get(relative):
        return
    _current.inputs[relative] = digest


def _inputs(step: _Step) -> dict[str, str]:
    """What ``step`` has read so far, each with its sha256 (hashed now where the read did not hash it)."""
    for name, digest in step.inputs.items():
        if digest is None:
            step.inputs[name] = io.sha256_file(name, read=False)
    return dict(sorted(step.inputs.items()))


def _on_write(path: Path) -> None:
    relative = chained(path, (RECORDED_ROOT,))
    if _current is None or relative is None or relative in _current.embedded:
        return
    record = {"file": relative, "sha256": io.sha256_file(path, read=False), "inputs": _inputs(_current)}
    io.write_json(record_path(path), record)  # a hidden file: not recorded in turn


def record_path(path: str | os.PathLike) -> Path:
    """Where the record of the output ``path`` lies: ``.<name>.chain.json`` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}{RECORD_SUFFIX}")


def arrays_sha256(arrays: Mapping[str, np.ndarray]) -> str:
    """The sha256 of named arrays, in order: each name, dtype, shape and bytes (a run's trace columns)."""
    digest = hashlib.sha256()
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        digest.update(json.dumps([name, array.dtype.str, list(array.shape)]).encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def run_record(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> dict:
    """The ``chain`` a run written to ``path`` records in its provenance.

    It holds its arrays' sha256 and, inside a step, what the step read before (a run written outside
    a step records its arrays only).
    """
    record = {"arrays_sha256": arrays_sha256(arrays)}
    if _current is not None:
        record["inputs"] = _inputs(_current)
        if (relative := chained(path, (RECORDED_ROOT,))) is not None:
            _current.embedded.add(relative)
    return record


@dataclass(frozen=True)
class Record:
    """One file's link in the chain.

    Its path from the build's folder, the sha256 it was written with and the one it has now (a run:
    of its arrays), and the sha256 of each input when its step read it.
    """

    file: str
    recorded: str
    found: str
    inputs: Mapping[str, str]
    what: str = "sha256"  # what ``recorded`` hashes: "sha256" (the file) or "arrays sha256" (a run's arrays)


def sidecar_records(root: Path = Path(), skip: Path | None = READINGS) -> tuple[list[Record], list[str]]:
    """The records beside the outputs under ``root/results``, and a problem for each bad one.

    ``skip`` leaves out the readings' own builds; a problem is a file that is not a record or whose
    file is gone.
    """
    records, problems = [], []
    for sidecar in sorted((root / RECORDED_ROOT).rglob(f".*{RECORD_SUFFIX}")):
        if skip is not None and sidecar.is_relative_to(root / skip):
            continue
        output = sidecar.with_name(sidecar.name[1 : -len(RECORD_SUFFIX)])
        try:
            record = io.read_json(sidecar)
        except ArtifactError as err:
            problems.append(f"{err}; delete it and rerun the step that writes {output}")
            continue
        if not isinstance(record, dict) or not {"file", "sha256", "inputs"} <= set(record):
            problems.append(
                f"{sidecar}: not a hash-chain record; delete it and rerun the step that writes {output}"
            )
            continue
        if output.is_file():
            found = io.sha256_file(output, read=False)
            records.append(
                Record(output.relative_to(root).as_posix(), record["sha256"], found, record["inputs"])
            )
    return records, problems


def run_link(run: str | os.PathLike, provenance: Mapping, arrays: Mapping[str, np.ndarray]) -> Record | None:
    """A run's link from its provenance's ``chain`` and its trace ``arrays`` as read, or None.

    None is for a run written before the chain was recorded.
    """
    chain = provenance.get("chain")
    if not isinstance(chain, Mapping):
        return None
    found = arrays_sha256(arrays)
    return Record(
        Path(run).as_posix(), str(chain.get("arrays_sha256")), found, chain.get("inputs", {}), "arrays sha256"
    )


def unrecorded(root: Path, records: Iterable[Record], skip: Path | None = READINGS) -> list[str]:
    """The data files under ``root/results`` without a record.

    Data files are ``.csv``, ``.json``, ``.npz``; those without a record were built before the hash
    chain (or by hand).
    """
    known = {record.file for record in records}
    found = []
    for path in sorted((root / RECORDED_ROOT).rglob("*")):
        if path.suffix not in {".csv", ".json", ".npz"} or not path.is_file():
            continue
        if (
            path.name.startswith(".")
            or ".part-" in path.name
            or (skip is not None and path.is_relative_to(root / skip))
        ):
            continue
        relative = path.relative_to(root).as_posix()
        if relative not in known:
            found.append(relative)
    return found


def no_record_note(files: list[str]) -> str | None:
    """One line saying which files have no record (None if every file has one)."""
    if not files:
        return None
    return f"{len(files)} files under results/ have no hash-chain record ({NO_RECORD}); the first: {files[0]}"


def rebuild(file: str, source: str) -> str:
    """What to do about a broken link of a build: rerun the step that wrote the file, or rebuild its input."""
    if source == file:
        return f"delete {file} and rerun"
    return f"rebuild {source} and what is made from it"


def breaks(
    records: Iterable[Record], root: Path = Path(), fix: Callable[[str, str], str] = rebuild
) -> list[str]:
    """The first broken link of each chain among ``records``, one line each.

    A link breaks where a file no longer has the hash its step recorded when it wrote it (edited
    since), or where an input no longer has the hash a later step recorded when it read it (edited,
    or rebuilt without what was made from it). The records are walked from the prepared data up
    (inputs before what they made), and what is made, directly or not, from a broken link is counted
    with it, not named again.
    """
    by_file = {record.file: record for record in records}
    depth: dict[str, int] = {}

    def level(name: str, seen: frozenset = frozenset()) -> int:
        if name not in by_file or name in seen:
            return 0
        if name not in depth:
            depth[name] = 1 + max((level(i, seen | {name}) for i in by_file[name].inputs), default=0)
        return depth[name]

    hashes: dict[str, str | None] = {}

    def now(name: str) -> str | None:
        if name not in hashes:
            path = root / name
            hashes[name] = io.sha256_file(path, read=False) if path.is_file() else None
        return hashes[name]

    found = []  # (depth, file, source of the break, line)
    for record in by_file.values():
        if record.found != record.recorded:
            line = (
                f"{record.file}: {record.what} now {record.found[:SHORT]}, not the "
                f"{record.recorded[:SHORT]} its step recorded when it wrote it (edited since)"
            )
            found.append((level(record.file), record.file, record.file, line))
            continue
        for name, recorded in sorted(record.inputs.items()):
            current = now(name)
            if current != recorded:
                state = "missing now" if current is None else f"now {current[:SHORT]}"
                change = "removed" if current is None else "changed"
                line = (
                    f"{record.file}: made from {name}, read with sha256 {recorded[:SHORT]}, {state} "
                    f"({change} after {record.file} was made from it)"
                )
                found.append((level(record.file), record.file, name, line))
                break
    consumers: dict[str, set[str]] = {}
    for record in by_file.values():
        for name in record.inputs:
            consumers.setdefault(name, set()).add(record.file)

    def made_from(name: str) -> set[str]:
        reached, stack = set(), [name]
        while stack:
            for consumer in consumers.get(stack.pop(), ()):
                if consumer not in reached:
                    reached.add(consumer)
                    stack.append(consumer)
        return reached

    lines, covered = [], set()
    for _, file, source, line in sorted(found):
        if file in covered:
            continue
        downstream = made_from(source)
        covered |= downstream | {source}
        also = len(downstream - {file})
        more = f"; {also} more files made from it break with it" if also else ""
        lines.append(f"{line}: the first broken link of the hash chain; {fix(file, source)}{more}")
    return lines


def read_record(path: str | os.PathLike) -> tuple[dict, Path] | None:
    """The record beside the output ``path`` and the folder of the build that wrote it, or None.

    Its paths are relative to that folder: a reading's nested build has its own. None where it has
    no record.
    """
    sidecar = record_path(path)
    if not sidecar.is_file():
        return None
    record = io.read_json(sidecar)
    if not isinstance(record, dict) or not {"file", "sha256", "inputs"} <= set(record):
        return None
    absolute, parts = Path(os.path.abspath(path)), Path(str(record["file"])).parts
    if not parts or absolute.parts[-len(parts) :] != parts:
        return None
    return record, Path(*absolute.parts[: -len(parts)])


def published_chain(outputs: Mapping[str, str | os.PathLike]) -> dict[str, dict]:
    """The top of the chain a snapshot carries (its manifest's ``chain``), from ``outputs``.

    ``outputs`` maps a name in the study's folder to the build's file. For each output with a
    record: the sha256 it was written with, the sha256 of everything it was made from
    (``inputs_sha256``: the runs behind a per-seed table are not published), and each input the
    snapshot holds by its name there with its sha256 when read (``made_from``).
    """
    names = {Path(os.path.abspath(path)): name for name, path in outputs.items()}
    top = {}
    for name, path in sorted(outputs.items()):
        found = read_record(path)
        if found is None:
            continue
        record, root = found
        made_from = {}
        for source, digest in record["inputs"].items():
            published = names.get(Path(os.path.abspath(root / source)))
            if published is not None:
                made_from[published] = digest
        top[name] = {
            "sha256": record["sha256"],
            "inputs_sha256": hashlib.sha256(
                json.dumps(record["inputs"], sort_keys=True).encode()
            ).hexdigest(),
            "made_from": dict(sorted(made_from.items())),
        }
    return top


def rejudged(entry: Mapping, folder: Path, scorecard: Path) -> dict:
    """The chain entry of a ``scorecard`` judged again in the snapshot ``folder``.

    It is judged (``dpdl publish --rejudge``) from the files its build judged it from
    (``made_from``), as they are there: their own entries still hold the build's hashes, so a table
    edited in the snapshot breaks there.
    """
    sources = [source for source in entry.get("made_from", {}) if (folder / source).is_file()]
    made_from = {source: io.sha256_file(folder / source, read=False) for source in sources}
    inputs_sha256 = hashlib.sha256(json.dumps(made_from, sort_keys=True).encode()).hexdigest()
    return {
        "sha256": io.sha256_file(scorecard, read=False),
        "inputs_sha256": inputs_sha256,
        "made_from": made_from,
    }


def published_breaks(
    files: Mapping[str, str | os.PathLike], top: Mapping[str, Mapping], fix: str = "publish the study again"
) -> list[str]:
    """The first broken link of each chain among a snapshot's files.

    ``files`` maps a name in the study's folder to the file, in the snapshot or in the build it is
    published from; ``top`` is its manifest's ``chain``. A link breaks at a file whose sha256 is not
    the one its build recorded, or that was made from one of ``files`` with another sha256 than it
    has now. A file missing is the manifest's to name.
    """
    records = []
    for name, entry in sorted(top.items()):
        path = Path(files[name]) if name in files else None
        if path is not None and path.is_file():
            made_from = {
                Path(files[s]).as_posix(): digest for s, digest in entry["made_from"].items() if s in files
            }
            records.append(
                Record(path.as_posix(), entry["sha256"], io.sha256_file(path, read=False), made_from)
            )
    return breaks(records, fix=lambda file, source: fix)
