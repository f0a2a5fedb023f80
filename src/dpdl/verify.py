"""``dpdl verify``: rerun some of a build's run jobs and compare their files with the build's.

The comparison is bit for bit.

A run is a pure function of its settings and seed (:mod:`dpdl.runs`), so the job that wrote a run
file, rerun, writes the same arrays and the same provenance but for the fields that record the
execution itself (:data:`EXECUTION_FIELDS`). This is how a reader checks a number without the whole
build.

Each run file's job comes from Snakemake's own record of the build, ``.snakemake/metadata``
(Snakemake's default file backend: one JSON record per output file, named by the urlsafe base64 of
its path, holding the rule, the inputs, the log and the shell command that made it). A job's outputs
are the files recorded with the same rule and command. The job reruns in a fresh temporary folder
holding a link to each of its inputs at its relative path and none of its outputs (so nothing is
written into the build), with this environment's ``python`` first on PATH, niced, and the thread
variables Snakemake sets for a one-thread job (every run rule declares ``threads: 1``). Then every
``.npz`` output is compared with the build's: each array's dtype, shape and bytes (NaNs compare
equal where the bits do, and -0.0 differs from 0.0), and the provenance as parsed JSON less
:data:`EXECUTION_FIELDS`.
"""

from __future__ import annotations

import base64
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpdl.errors import ArtifactError, ConfigError
from dpdl.io import load_npz
from dpdl.runs import package_versions, read_run, run_charge

METADATA = Path(".snakemake/metadata")
INCOMPLETE = Path(".snakemake/incomplete")  # a marker per output of a job that started and has not finished
# The provenance fields that by design record the execution rather than the run (the machine, the time, the
# environment), left out of the comparison; a dotted path names a field inside another.
EXECUTION_FIELDS = {
    "chain": "the hash chain (dpdl.chain): the sha256 of the arrays compared here bit for bit, "
    "and of the inputs the run read (dpdl check verifies them); runs made before it was recorded lack it",
    "timing": "wall and CPU seconds and iterations per second of this execution",
    "versions": "the executing environment's package versions (verify prints those that differ from its own)",
    "params.resumed_after_iteration": "dp_iadmm: the iteration an interrupted execution resumed after "
    "(null if none)",
    "params.backend.device": "dp_iadmm's JAX backend: the device the execution ran on",
    "params.backend.jax": "dp_iadmm's JAX backend: the JAX version of the executing environment",
}
# Snakemake runs a job's shell command with these set to the rule's threads (snakemake/shell.py);
# every rule that writes runs declares one thread.
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
NICENESS = 10
PROGRESS_EVERY_S = 60.0
LOG_TAIL_LINES = 3


@dataclass(frozen=True)
class Job:
    """One recorded Snakemake job: its rule, shell command, inputs, logs and outputs.

    The paths are as Snakemake wrote them.
    """

    rule: str
    shellcmd: str
    inputs: tuple[str, ...]
    logs: tuple[str, ...]
    outputs: tuple[str, ...]
    wall_s: float | None  # from its start to its last output, as Snakemake recorded them


@dataclass(frozen=True)
class Rerun:
    """A job rerun in ``folder``: its exit status, wall and CPU seconds, and its log's tail on failure."""

    folder: Path
    returncode: int
    wall_s: float
    cpu_s: float
    log_tail: str


def record_key(relative: Path) -> str:
    """The output path a record file under ``.snakemake/metadata`` stands for.

    Snakemake names it by the urlsafe base64 of the path, cut into folders of at most NAME_MAX - 1
    characters, each but the last prefixed ``@``.
    """
    encoded = "".join(part.removeprefix("@") for part in relative.parts)
    return base64.urlsafe_b64decode(encoded).decode()


def read_records(root: Path = Path(), records: Path = METADATA) -> dict[str, dict]:
    """Every output Snakemake recorded in ``root``'s build, by path, with its record.

    ``records`` holds its metadata, or the outputs it marks incomplete.
    """
    folder = root / records
    if records == INCOMPLETE and not folder.is_dir():
        return {}
    if not folder.is_dir():
        raise ConfigError(
            f"no build here: {folder} does not exist (Snakemake's record of the jobs it ran); run "
            "dpdl verify in the folder whose build made the runs"
        )
    found = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = Path(dirpath, name)
            try:
                found[record_key(path.relative_to(folder))] = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, OSError):  # not a record (binascii.Error and JSONDecodeError are ValueErrors)
                continue
    return found


def job_of(path: str, records: dict[str, dict], incomplete: Iterable[str] = ()) -> Job:
    """The job that wrote ``path`` (relative to the build folder), from Snakemake's records.

    The records include the outputs it marks ``incomplete``; an error names why there is none to
    rerun.
    """
    record = records.get(path)
    if record is None:
        raise ArtifactError(
            f"{path}: Snakemake has no record of the job that wrote it ({METADATA}); rebuild it so "
            f"that it has one: snakemake --cores 2 --force {path} with the config that built it"
        )
    rule = record.get("rule") or "?"
    if record.get("incomplete") or path in incomplete:
        raise ArtifactError(
            f"{path}: its job ({rule}) has not finished (Snakemake marks it incomplete); let the "
            "build finish, or rerun it"
        )
    if not record.get("shellcmd"):
        raise ArtifactError(
            f"{path}: its rule {rule} records no shell command (dpdl verify reruns shell jobs only)"
        )
    key = (rule, record["shellcmd"])
    outputs = sorted(
        name for name, other in records.items() if (other.get("rule"), other.get("shellcmd")) == key
    )
    times = [(records[name].get("starttime"), records[name].get("endtime")) for name in outputs]
    ends = [end - start for start, end in times if isinstance(start, float) and isinstance(end, float)]
    inputs, logs = tuple(record.get("input") or ()), tuple(record.get("log") or ())
    return Job(rule, record["shellcmd"], inputs, logs, tuple(outputs), max(ends) if ends else None)


def build_relative(path: Path) -> str:
    """``path`` as Snakemake records it: relative to the build folder (the working directory)."""
    absolute = Path(os.path.abspath(path))
    if not absolute.is_relative_to(Path.cwd()):
        raise ConfigError(
            f"{path}: not in this folder ({Path.cwd()}); run dpdl verify in the folder that built it"
        )
    return absolute.relative_to(Path.cwd()).as_posix()


def checked_run_file(path: Path) -> str:
    """A run file named on the command line, as its build-relative path.

    An error is raised if the file is not a readable run.
    """
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    relative = build_relative(path)
    if path.suffix != ".npz":
        raise ArtifactError(f"{path}: not a run file (a run is an .npz under results/<study>/runs/)")
    try:
        read_run(path)
    except ArtifactError as err:
        raise ArtifactError(f"not a run file: {err}") from None
    except (ValueError, KeyError) as err:  # a provenance that is no JSON
        raise ArtifactError(f"{path}: not a run file ({err})") from None
    return relative


def sample_pool(configfile: Path | None) -> list[str]:
    """The run files a sample is drawn from: those ``configfile`` promises that exist, or every one here.

    Those promised are whatever data this machine can obtain, so that a seed draws the same sample
    anywhere.
    """
    if configfile is None:
        from dpdl.paths import run_files

        return sorted(path.as_posix() for path in run_files())
    from dpdl.config import load_config
    from dpdl.studies import prepared_datasets
    from dpdl.targets import study_runs

    return sorted(
        path for path in study_runs(load_config(configfile), set(prepared_datasets())) if Path(path).is_file()
    )


def draw(pool: list[str], n: int, seed: int) -> list[str]:
    """``n`` of ``pool`` (all of it if smaller), drawn uniformly without replacement.

    The generator is seeded ``seed``.
    """
    picks = np.random.default_rng(seed).choice(len(pool), size=min(n, len(pool)), replace=False)
    return [pool[i] for i in picks]


def recorded_charge(job: Job, root: Path = Path()) -> tuple[str, float]:
    """What the job's runs in the build record they cost, summed over its run files.

    It is ``("CPU", seconds)``, or ``("GPU", seconds)`` when any ran on a GPU (their share of its wall time).
    """
    units, total = set(), 0.0
    for output in job.outputs:
        provenance = provenance_of(root / output)
        if provenance is not None and "timing" in provenance:
            unit, seconds = run_charge(provenance)
            units.add(unit)
            total += seconds
    return ("GPU" if "gpu_seconds" in units else "CPU"), total


def provenance_of(path: Path) -> dict | None:
    """The provenance of a run file, or None where there is none (not a run, missing, unreadable)."""
    try:
        return json.loads(str(load_npz(path)["provenance"]))
    except (ArtifactError, KeyError, ValueError):
        return None


def say(line: str) -> None:
    """Print a line at once (progress on long work reaches a pipe as it happens)."""
    print(line, flush=True)


def rerun(job: Job, root: Path, folder: Path, progress: Callable[[str], None] = say) -> Rerun:
    """Run ``job``'s shell command in the empty ``folder`` with links to its inputs in ``root``.

    Its outputs are written there.
    """
    for name in job.inputs:
        source = Path(name) if Path(name).is_absolute() else root.absolute() / name
        if not source.exists():
            return Rerun(
                folder, -1, 0.0, 0.0, f"its input {name} is not in the build (deleted, or a temp() file)"
            )
        if not Path(name).is_absolute():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).symlink_to(source)
    for name in (*job.outputs, *job.logs):
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if Path(name).is_absolute() or not target.parent.resolve().is_relative_to(folder.resolve()):
            return Rerun(
                folder, -1, 0.0, 0.0, f"{name} would be written outside the rerun's folder (into the build)"
            )
    env = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, "1")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    process = subprocess.Popen(
        ["bash", "-c", "set -euo pipefail; " + job.shellcmd],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: os.nice(NICENESS),
    )
    while True:
        try:
            output, _ = process.communicate(timeout=PROGRESS_EVERY_S)
            break
        except subprocess.TimeoutExpired:
            progress(f"  still running after {time.perf_counter() - start:.0f} s")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = "" if process.returncode == 0 else log_tail(output, [folder / name for name in job.logs])
    return Rerun(folder, process.returncode, wall, cpu, tail)


def log_tail(output: str, logs: Iterable[Path]) -> str:
    """The last lines a failed job wrote (its logs, then its own output), on one line."""
    text = output
    for path in logs:
        if path.is_file():
            text += "\n" + path.read_text(encoding="utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-LOG_TAIL_LINES:])[-600:] or "no output"


def array_difference(name: str, built: np.ndarray, again: np.ndarray) -> str | None:
    """How the array ``again`` differs from ``built``, bit for bit, or None if it does not.

    It compares dtype, shape, then each element's bytes, and names the first differing element.
    """
    if built.dtype != again.dtype:
        return f"{name}: dtype {built.dtype} in the build, {again.dtype} rerun"
    if built.shape != again.shape:
        return f"{name}: shape {built.shape} in the build, {again.shape} rerun"
    if built.tobytes() == again.tobytes():
        return None
    flat_built, flat_again = np.ascontiguousarray(built).reshape(-1), np.ascontiguousarray(again).reshape(-1)
    raw_built = flat_built.view(np.uint8).reshape(flat_built.size, -1)
    raw_again = flat_again.view(np.uint8).reshape(flat_again.size, -1)
    differs = (raw_built != raw_again).any(axis=1)
    first = int(np.argmax(differs))
    index = tuple(int(i) for i in np.unravel_index(first, built.shape))
    where = f"row {first}" if built.ndim == 1 else f"element {index}"
    return (
        f"{name}: {where}: {flat_built[first].item()!r} in the build, {flat_again[first].item()!r} rerun "
        f"({int(differs.sum())} of {differs.size} differ)"
    )


def without_execution_fields(provenance: dict) -> dict:
    """``provenance`` less :data:`EXECUTION_FIELDS` (a copy)."""
    provenance = json.loads(json.dumps(provenance))
    for field in EXECUTION_FIELDS:
        *parents, last = field.split(".")
        holder = provenance
        for key in parents:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            holder.pop(last, None)
    return provenance


def value_difference(path: str, built: object, again: object) -> str | None:
    """The first place two parsed JSON values differ (keys in any order; 1 and 1.0 differ), or None."""
    if isinstance(built, dict) and isinstance(again, dict):
        for key in [*built, *(k for k in again if k not in built)]:
            where = f"{path}.{key}"
            if key not in again:
                return f"{where}: in the build ({short(built[key])}), not rerun"
            if key not in built:
                return f"{where}: rerun ({short(again[key])}), not in the build"
            if found := value_difference(where, built[key], again[key]):
                return found
        return None
    if isinstance(built, list) and isinstance(again, list):
        if len(built) != len(again):
            return f"{path}: {len(built)} items in the build, {len(again)} rerun"
        for i, (a, b) in enumerate(zip(built, again, strict=True)):
            if found := value_difference(f"{path}[{i}]", a, b):
                return found
        return None
    both_nan = (
        isinstance(built, float) and isinstance(again, float) and math.isnan(built) and math.isnan(again)
    )
    if both_nan or (type(built) is type(again) and built == again):
        return None
    return f"{path}: {short(built)} in the build, {short(again)} rerun"


def short(value: object, limit: int = 80) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def file_difference(built_path: Path, again_path: Path) -> str | None:
    """The first difference between a build's ``.npz`` and its rerun's, or None.

    Arrays are compared in the build's order, then any the build lacks; a run's provenance as parsed
    JSON less :data:`EXECUTION_FIELDS`.
    """
    built, again = load_npz(built_path), load_npz(again_path)
    for name in [*built, *(n for n in again if n not in built)]:
        if name not in again:
            return f"{name}: in the build, not rerun"
        if name not in built:
            return f"{name}: rerun, not in the build"
        if name == "provenance":
            found = value_difference(
                "provenance",
                without_execution_fields(json.loads(str(built[name]))),
                without_execution_fields(json.loads(str(again[name]))),
            )
        else:
            found = array_difference(name, built[name], again[name])
        if found:
            return found
    return None


def version_notes(job: Job, root: Path, here: dict[str, str]) -> list[str]:
    """The package versions the job's runs record that differ from this environment's.

    Each note reads ``name X (here Y)``.
    """
    notes = set()
    for output in job.outputs:
        provenance = provenance_of(root / output) or {}
        for name, version in (provenance.get("versions") or {}).items():
            if here.get(name) not in (None, version):
                notes.add(f"{name} {version} (here {here[name]})")
    return sorted(notes)


def verify(
    paths: list[Path],
    *,
    sample: int | None = None,
    seed: int | None = None,
    configfile: Path | None = None,
    max_cpu_seconds: float | None = None,
    out: Callable[[str], None] = say,
) -> list[str]:
    """Rerun the jobs of the run files ``paths`` and print, per output file, whether it is the same.

    The run files are ``paths``, or ``sample`` run files drawn with ``seed``. Each output gets
    ``same`` or ``DIFFERS: <array or field>: <first difference>``; return the lines that are
    problems (a difference, a failed job).
    """
    if bool(paths) == (sample is not None):
        raise ConfigError("name run files to verify, or --sample N (not both)")
    if sample is not None and sample < 1:
        raise ConfigError(f"--sample {sample}: give a number of run files, 1 or more")
    records = read_records()
    if paths:
        chosen = [checked_run_file(path) for path in paths]
    else:
        pool = sample_pool(configfile)
        if not pool:
            where = f"the runs {configfile} promises" if configfile else "results/*/runs/"
            raise ConfigError(f"no run files to sample: none of {where} exist here; build first")
        seed = random.SystemRandom().randrange(2**31) if seed is None else seed
        chosen = draw(pool, sample, seed)
        out(f"dpdl verify: {len(chosen)} of {len(pool)} run files drawn (--seed {seed} draws them again)")
    jobs: dict[tuple[str, str], Job] = {}
    incomplete = set(read_records(Path(), INCOMPLETE))
    for path in chosen:
        job = job_of(path, records, incomplete)
        jobs.setdefault((job.rule, job.shellcmd), job)
    return run_jobs(list(jobs.values()), max_cpu_seconds, out)


def run_jobs(jobs: list[Job], max_cpu_seconds: float | None, out: Callable[[str], None]) -> list[str]:
    """Rerun each job and compare its outputs; print one line per file and a summary; the problem lines."""
    root, here = Path(), package_versions()
    problems, counts, skipped = [], {"same": 0, "differ": 0, "failed": 0}, 0
    wall = cpu = 0.0
    for number, job in enumerate(jobs, 1):
        unit, recorded = recorded_charge(job, root)
        took = "" if job.wall_s is None else f", the job {job.wall_s:.1f} s wall"
        head = (
            f"job {number} of {len(jobs)}: {job.rule}, {len(job.outputs)} file(s); recorded: its "
            f"runs {recorded:.1f} s {unit}{took}"
        )
        if max_cpu_seconds is not None and recorded > max_cpu_seconds:
            out(f"{head}: skipped (over --max-cpu-seconds {max_cpu_seconds:g})")
            skipped += 1
            continue
        out(f"{head}: rerunning")
        with tempfile.TemporaryDirectory(prefix="dpdl-verify-") as folder:
            done = rerun(job, root, Path(folder), out)
            wall, cpu = wall + done.wall_s, cpu + done.cpu_s
            if done.returncode == 0:
                out(f"  reran in {done.wall_s:.1f} s wall, {done.cpu_s:.1f} s CPU")
            for output in job.outputs:
                line = file_line(output, root, done)
                out(line)
                kind = "same" if line.endswith(": same") else "failed" if ": FAILED: " in line else "differ"
                counts[kind] += 1
                if kind != "same":
                    problems.append(line)
        if notes := version_notes(job, root, here):
            out(f"  note: the build's runs record other versions: {', '.join(notes)}")
    verified = len(jobs) - skipped
    summary = (
        f"dpdl verify: {verified} job(s) rerun ({wall:.1f} s wall, {cpu:.1f} s CPU), "
        f"{sum(counts.values())} file(s): {counts['same']} same, {counts['differ']} differ, "
        f"{counts['failed']} failed"
    )
    out(summary + (f"; {skipped} job(s) skipped (over --max-cpu-seconds)" if skipped else ""))
    if not verified:
        problems.append("nothing verified: every job is over --max-cpu-seconds")
    return problems


def file_line(output: str, root: Path, done: Rerun) -> str:
    """One output's line: ``<path>: same``, ``<path>: DIFFERS: ...`` or ``<path>: FAILED: ...``."""
    if done.returncode != 0:
        return f"{output}: FAILED: the job exited with {done.returncode}: {done.log_tail}"
    built, again = root / output, done.folder / output
    if not built.is_file():
        return f"{output}: FAILED: not in the build (its job's record names it)"
    if not again.is_file():
        return f"{output}: DIFFERS: not written by the rerun"
    if not output.endswith(".npz"):
        same = built.read_bytes() == again.read_bytes()
        return f"{output}: " + ("same" if same else "DIFFERS: its bytes")
    try:
        found = file_difference(built, again)
    except ArtifactError as err:
        return f"{output}: DIFFERS: {err}"
    return f"{output}: " + ("same" if found is None else f"DIFFERS: {found}")
