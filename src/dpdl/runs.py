"""The run contract every study uses: a run is a pure function of its parameters and seed.

A run returns a tidy trace (one row per logged iteration, one column per metric) and the run
records its provenance: study, dataset and its hash, algorithm, every hyperparameter, seed,
epsilon, delta, the privacy per iteration and composed over the run, noise scales, package
versions, wall and CPU time and iterations per second. :func:`write_run` stores both in one pickle-free
``.npz`` (``trace/<column>`` arrays and a ``provenance`` JSON string), atomically;
:func:`validate_run` checks a stored run against ``run.schema.json`` (:mod:`dpdl.schemas`).

Everything but ``provenance["timing"]`` is a deterministic function of the run's inputs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl import schemas
from dpdl.chain import run_record
from dpdl.data.prepared import card_problems
from dpdl.errors import ArtifactError
from dpdl.io import dumps_json, load_npz, read_json, save_npz

TRACE_PREFIX = "trace/"
VERSIONED_PACKAGES = ("dpdl", "numpy", "scipy", "pandas", "dp-accounting")


@dataclass(frozen=True)
class RunResult:
    """A finished run: its per-iteration trace and its provenance record."""

    trace: pd.DataFrame
    provenance: dict


def run_seed_sequence(
    study: str, dataset: str, algorithm: str, epsilon: float | None, seed: int
) -> np.random.SeedSequence:
    """The root ``SeedSequence`` of one run, derived from its identifying keys.

    The keys are hashed into SeedSequence entropy words; agents take ``.spawn(n)`` children.
    """
    key = json.dumps([study, dataset, algorithm, epsilon, seed]).encode()
    words = np.frombuffer(hashlib.sha256(key).digest(), dtype=np.uint32)
    return np.random.SeedSequence([int(w) for w in words])


def package_versions() -> dict[str, str]:
    """Versions of Python and of the packages that determine a run's numbers."""
    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def execute(run: Callable[[], pd.DataFrame], provenance: dict, *, iterations: int) -> RunResult:
    """Call ``run`` (a closure over the arrays, parameters and generator), time it, complete provenance.

    ``provenance`` holds the run's identity and privacy fields (see the schema); this adds
    ``versions`` and ``timing`` (wall and CPU time, iterations, iterations per second).
    """
    elapsed = stopwatch()
    trace = run()
    timing = run_timing(*elapsed(), iterations)
    return RunResult(trace, {**provenance, "versions": package_versions(), "timing": timing})


def stopwatch() -> Callable[[], tuple[float, float]]:
    """Start a clock; the function returned gives the wall and CPU seconds since.

    The CPU seconds are this process's user + system time, all its threads.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    return lambda: (time.perf_counter() - wall, time.process_time() - cpu)


def run_timing(wall: float, cpu: float, iterations: int, runs: int = 1) -> dict:
    """The ``timing`` block of each of ``runs`` runs of ``iterations`` computed together.

    Together they took ``wall`` seconds of wall time and ``cpu`` of CPU time.

    Each run is charged its share of both, so summing ``cpu_time_s`` over runs gives the compute
    spent (``dpdl status`` estimates what is left from it; on a shared machine the wall time is
    longer); a batch also records its size and totals.
    """
    timing = {
        "wall_time_s": wall / runs,
        "cpu_time_s": cpu / runs,
        "iterations": iterations,
        "iterations_per_second": iterations * runs / max(wall, 1e-9),
    }
    if runs > 1:
        timing |= {"batch_runs": runs, "batch_wall_time_s": wall, "batch_cpu_time_s": cpu}
    return timing


def run_cpu_seconds(timing: dict) -> float:
    """The compute a run's ``timing`` block charges it.

    It is the run's CPU seconds, or its wall time for a run made before CPU time was recorded.
    """
    return timing.get("cpu_time_s", timing["wall_time_s"])


def run_gpu(provenance: dict) -> str | None:
    """The GPU a run's iterations ran on (``"NVIDIA H200"``), or None for a run on the CPU.

    It is read from the run's backend record (dp_iadmm's jax backend writes
    ``params.backend.device = "gpu: NVIDIA H200"``).
    """
    backend = provenance.get("params", {}).get("backend")
    device = backend.get("device", "") if isinstance(backend, dict) else ""
    return device.removeprefix("gpu: ") if device.startswith("gpu") else None


def run_charge(provenance: dict) -> tuple[str, float]:
    """The compute a run is charged, as ``(unit, seconds)``.

    ``("cpu_seconds", its CPU seconds)`` (:func:`run_cpu_seconds`) for a run on the CPU;
    ``("gpu_seconds", its share of its batch's wall time)`` for a run on a GPU, whose host CPU time
    only waits on the card.
    """
    timing = provenance["timing"]
    if run_gpu(provenance):
        return "gpu_seconds", timing["wall_time_s"]
    return "cpu_seconds", run_cpu_seconds(timing)


SEED_IN_NAME = re.compile(r"(seed|trial)(\d+)\.npz$")  # a run file's name: the seed (trial) it holds


def write_run(path: str | Path, result: RunResult) -> None:
    """Store a run as ``.npz`` (trace columns and provenance JSON), atomically, after validating it."""
    errors = _schema_errors(result)
    if errors:
        raise ArtifactError(f"run for {path} does not satisfy the run schema:\n  " + "\n  ".join(errors))
    arrays = trace_arrays(result.trace)
    chain = run_record(path, arrays)  # its arrays' sha256 and, in a step, its inputs' (dpdl.chain)
    arrays["provenance"] = np.array(
        dumps_json({**result.provenance, "stored_as": stored_name(path), "chain": chain})
    )
    save_npz(path, arrays)


def trace_arrays(trace: pd.DataFrame) -> dict[str, np.ndarray]:
    """A run's trace as the arrays its file stores (``trace/<column>``, in order)."""
    return {TRACE_PREFIX + column: trace[column].to_numpy() for column in trace.columns}


def stored_name(path: str | Path) -> str:
    """What a run is stored as: its path from ``results/<study>/runs/`` on, else its file name.

    In that path, the folders and the name spell its study, cell and seed; the file name is used
    where the run lies elsewhere.
    """
    parts = Path(path).parts
    for i in range(len(parts) - 3, -1, -1):
        if parts[i] == "results" and parts[i + 2] == "runs":
            return "/".join(parts[i:])
    return parts[-1]


def read_run(path: str | Path, study: str | None = None) -> RunResult:
    """Load a stored run.

    Refused, so that every step that reads runs stops at a copied or swapped file: a run held under
    another path than it was written to (the ``stored_as`` its provenance records: another cell or
    seed), or whose file name (``seed3.npz``, ``trial003.npz``) says another seed or trial than it
    holds; and, with ``study``, a run of another study (a step given the wrong study's runs).
    """
    arrays = load_npz(path)
    if "provenance" not in arrays:
        raise ArtifactError(f"{path}: no provenance record; not a dpdl run artifact")
    columns = {k[len(TRACE_PREFIX) :]: v for k, v in arrays.items() if k.startswith(TRACE_PREFIX)}
    result = RunResult(pd.DataFrame(columns), json.loads(str(arrays["provenance"])))
    if study is not None and result.provenance.get("study") != study:
        raise ArtifactError(
            f"{path}: a run of {result.provenance.get('study')}, not of {study}; "
            f"give this step {study}'s runs"
        )
    stored_as = str(result.provenance.get("stored_as", ""))
    here, there = Path(stored_name(path)).parts, Path(stored_as).parts
    common = min(len(here), len(there))
    if stored_as and here[-common:] != there[-common:]:
        raise ArtifactError(
            f"{path}: holds the run written as {stored_as} (a copied or swapped file); delete it and rerun, "
            "Snakemake rebuilds it"
        )
    named = SEED_IN_NAME.search(Path(path).name)
    if named and int(named.group(2)) != result.provenance.get("seed"):
        kind = named.group(1)
        raise ArtifactError(
            f"{path}: named {kind} {int(named.group(2))} but holds {kind} {result.provenance.get('seed')} "
            "(a copied or swapped file); delete it and rerun, Snakemake rebuilds it"
        )
    return result


def checked_run(path: str | Path) -> tuple[RunResult | None, list[str]]:
    """A stored run (None where it cannot be read) and its problems, each naming the file."""
    try:
        result = read_run(path)
    except ArtifactError as err:  # its message names the file
        return None, [str(err)]
    except json.JSONDecodeError as err:
        return None, [f"{path}: its provenance is not valid JSON ({err})"]
    return result, [f"{path}: {error}" for error in _schema_errors(result)]


def validate_run(path: str | Path) -> list[str]:
    """Problems with a stored run, each naming the file (empty if it satisfies the contract)."""
    return checked_run(path)[1]


def read_card(path: str | Path) -> dict:
    """A prepared dataset's card, checked against its schema and its path.

    An ArtifactError names the first problem.
    """
    card = read_json(path)
    errors = schema_errors(card, load_schema("card"))
    if errors:
        raise ArtifactError(
            f"{path}: not a prepared dataset's card ({errors[0]}); "
            "rebuild it: snakemake --forcerun data_prepare"
        )
    if problems := card_problems(card, Path(path)):
        raise ArtifactError(problems[0])
    return card


def load_schema(name: str) -> dict:
    """A JSON schema shipped with the package (``run``, ``card``)."""
    return schemas.load(f"{name}.schema.json")


def schema_errors(instance: object, schema: dict) -> list[str]:
    """Every violation of ``schema`` by ``instance``, each with its dotted key path."""
    validator = schemas.validator(schema, strict=False)
    return [
        f"{'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}"
        for e in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.absolute_path)))
    ]


def _schema_errors(result: RunResult) -> list[str]:
    errors = schema_errors(result.provenance, load_schema("run"))
    trace = result.trace
    if "iteration" not in trace.columns:
        errors.append("trace: no 'iteration' column")
    elif len(trace) and not (np.diff(trace["iteration"].to_numpy()) > 0).all():
        errors.append("trace: 'iteration' must be strictly increasing")
    for column in trace.columns:
        if not pd.api.types.is_numeric_dtype(trace[column]):
            errors.append(f"trace: column {column!r} is not numeric ({trace[column].dtype})")
    return errors
