"""The compute a snapshot records.

The runs behind its tables and what they cost, and what the claims not run would cost at the
papers' scale.

:func:`run_compute` is the wall time of a study's runs (the manifest's ``run_compute_seconds``),
:func:`charged` a set of runs' CPU or GPU seconds, :func:`compute_record` the manifest's
``aggregate_compute``, ``stacked_table_compute`` and ``not_run_cost``; :func:`table_difference`
whether a rebuilt table holds a snapshot's numbers (``dpdl publish --compute``).
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from dpdl.errors import DpdlError
from dpdl.judgement import NOT_RUN
from dpdl.paths import aggregates_folder, is_run_file, published_aggregate, run_files
from dpdl.publishing.layout import published_name
from dpdl.readings import DEFAULT, reading_folder, snakemake_command
from dpdl.runs import read_run, run_charge, run_gpu
from dpdl.studies import study_module

PAPER_CONFIG = Path("config/paper.yaml")  # the papers' full grids: what the claims not run here would take


# How far a rebuilt table's floats may be from the snapshot's and still be its numbers (relative).
# Set on 2026-11-27 after wddp's rebuild was seen to differ from its c323111 snapshot only in the
# composed PLD epsilon, by at most 1e-11 relative (the accountant's floating point); no verdict
# depends on it.
SAME_NUMBERS_RTOL = 1e-9


def run_compute(
    study: str,
    readings: Iterable[str],
    narrowed: Mapping[str, Iterable[str]] | None = None,
    provenances: Mapping[str, dict] | None = None,
) -> tuple[float, dict[str, dict]]:
    """Wall seconds of every run of ``study`` here and in its built ``readings``, and the runs per GPU.

    A run's wall seconds are its share of its job's wall time; the runs made on each GPU come as
    ``{"NVIDIA H200": {"runs": 340, "wall_seconds": 412.3}}``. A reading still building is not
    counted, nor twice a run a reading reuses from the main build (the same file:
    :func:`dpdl.readings.seed_from_main_build` links it). A reading in ``narrowed``
    (``reading_cells``: reading -> the run paths of its cells) counts only those runs, not the ones
    it has made of the cells it leaves out. A run in ``provenances`` (:func:`run_provenances`) is
    not read again.
    """
    narrowed, provenances = narrowed or {}, provenances or {}
    paths = run_files(study)
    for name in (name for name in readings if name != DEFAULT):
        paths += reading_run_files(study, name, narrowed.get(name))
    runs = {}
    for path in paths:
        stat = path.stat()
        runs.setdefault((stat.st_dev, stat.st_ino), path)
    total, gpus = 0.0, {}
    for path in runs.values():
        provenance = _provenance(path.as_posix(), provenances)
        wall = provenance["timing"]["wall_time_s"]
        total += wall
        if gpu := run_gpu(provenance):
            entry = gpus.setdefault(gpu, {"runs": 0, "wall_seconds": 0.0})
            entry["runs"] += 1
            entry["wall_seconds"] += wall
    return total, {
        gpu: {**entry, "wall_seconds": round(entry["wall_seconds"], 1)} for gpu, entry in gpus.items()
    }


def reading_run_files(study: str, name: str, narrowed: Iterable[str] | None = None) -> list[Path]:
    """The run files of ``study``'s built reading ``name`` in its folder.

    They are all of them or, for a reading ``reading_cells`` narrows, those of its own cells (``narrowed``:
    their paths as the build names them).
    """
    folder = reading_folder(study, name)
    if narrowed is None:
        return run_files(study, folder)
    return [folder / path for path in sorted(narrowed) if (folder / path).is_file()]


def reading_provenances(study: str, name: str, narrowed: Iterable[str] | None = None) -> dict[str, dict]:
    """The provenance of every run of ``study``'s built reading ``name``, by its path here.

    The runs are those of :func:`reading_run_files`; the paths are
    ``results/readings/<study>/<reading>/results/<study>/runs/...``.
    """
    return {path.as_posix(): read_run(path).provenance for path in reading_run_files(study, name, narrowed)}


def _provenance(path: str, provenances: Mapping[str, dict]) -> dict:
    """The provenance of the run at ``path``, from ``provenances`` where it was read already.

    Otherwise it is read (and kept there, where ``provenances`` is a dict: a cache the caller reads
    again).
    """
    if path in provenances:
        return provenances[path]
    provenance = read_run(path).provenance
    if isinstance(provenances, dict):
        provenances[path] = provenance
    return provenance


def charged(provenances: Iterable[dict]) -> dict:
    """Runs and their compute (:func:`dpdl.runs.run_charge`): ``{"runs": 10, "cpu_seconds": 3456.1}``.

    ``gpu_seconds`` is beside it where some ran on a GPU.
    """
    provenances = list(provenances)
    seconds = defaultdict(float)
    for provenance in provenances:
        unit, value = run_charge(provenance)
        seconds[unit] += value
    entry = {"runs": len(provenances), "cpu_seconds": round(float(seconds["cpu_seconds"]), 1)}
    if "gpu_seconds" in seconds:
        entry["gpu_seconds"] = round(float(seconds["gpu_seconds"]), 1)
    return entry


def aggregate_compute(
    study: str, configfile: str, provenances: Mapping[str, dict] | None = None
) -> dict[str, dict]:
    """The runs behind each aggregate table of ``study`` in the build here, and their compute.

    They are keyed by the table's name in the snapshot:
    ``{"aggregates/fig2.csv": {"runs": 1100, "cpu_seconds": 812.5}}``.

    Which runs a table was made from is what Snakemake recorded for its job
    (``--detailed-summary``: each output's inputs), followed down through intermediate files to the
    run files; a table whose inputs it did not record (made outside this build's Snakemake) is left
    out. A run in ``provenances`` (:func:`run_provenances`) is not read again.
    """
    command = [*snakemake_command(), "--detailed-summary", "--quiet", "--configfile", configfile]
    done = subprocess.run([*command, "--config", f'studies=["{study}"]'], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise DpdlError(
            f"{study}: Snakemake could not list the build's inputs ({last}); publish from the build folder"
        )
    return compute_by_aggregate(study, done.stdout, provenances)


def compute_by_aggregate(
    study: str, summary: str, provenances: Mapping[str, dict] | None = None
) -> dict[str, dict]:
    """:func:`aggregate_compute` from the text of ``snakemake --detailed-summary``.

    The text is a header, then one line per output, its fields joined by tabs as they are
    (unquoted: a shell command may hold quotes), the output first and its inputs fifth, joined by
    commas.
    """
    lines = summary.splitlines()
    if not lines or lines[0].split("\t")[:5] != [
        "output_file",
        "date",
        "rule",
        "log-file(s)",
        "input-file(s)",
    ]:
        raise DpdlError(f"{study}: not Snakemake's detailed summary: {lines[:1]}")
    fields = [line.split("\t") for line in lines[1:] if line]
    recorded = {row[0]: row[4] for row in fields}  # "-": no record, "": no inputs
    inputs = {
        output: [p for p in listed.split(",") if p] for output, listed in recorded.items() if listed != "-"
    }
    tables = f"{aggregates_folder(study).as_posix()}/"
    behind = {}  # each aggregate table -> the run files it was made from
    for output in sorted(inputs):
        if not (output.startswith(tables) and output.endswith(".csv")):
            continue
        runs, seen, stack = set(), set(), list(inputs[output])
        while stack:
            path = stack.pop()
            if path in seen:
                continue
            seen.add(path)
            if is_run_file(path, study):
                runs.add(path)
            else:
                stack += inputs.get(path, [])
        behind[output] = runs
    known = {} if provenances is None else provenances  # a dict given is filled with the runs read here
    # read once
    provenance = {path: _provenance(path, known) for path in sorted(set().union(*behind.values()))}
    return {
        published_name(output, study): charged(provenance[path] for path in sorted(runs))
        for output, runs in behind.items()
    }


def compute_record(
    study: str, config: dict, compute: dict[str, dict], provenances: dict[str, dict], claims: Path
) -> dict:
    """The manifest's compute of ``study``'s build here.

    ``aggregate_compute`` (``compute``), ``stacked_table_compute`` where there are stacks, and,
    with :data:`PAPER_CONFIG`, ``not_run_cost`` of the scorecard ``claims`` (``provenances``:
    :func:`run_provenances`).
    """
    from dpdl.config import load_config

    record = {"aggregate_compute": compute}
    stacked = stacked_table_compute(study, config, record["aggregate_compute"], provenances)
    if stacked:
        record["stacked_table_compute"] = stacked
    if PAPER_CONFIG.is_file():
        card = pd.read_csv(claims, dtype=str, keep_default_na=False)
        record["not_run_cost"] = not_run_cost(study, card, load_config(PAPER_CONFIG), provenances)
    return record


def run_provenances(study: str, known: Mapping[str, dict] | None = None) -> dict[str, dict]:
    """The provenance of every run of ``study``'s main build here, by its path.

    Those in ``known`` are not read again.
    """
    return {path.as_posix(): _provenance(path.as_posix(), known or {}) for path in sorted(run_files(study))}


def stacked_table_compute(
    study: str, config: dict, compute: dict[str, dict], provenances: dict[str, dict]
) -> dict:
    """The runs behind each table of ``study``'s claims that is no aggregate file, and their compute.

    These are the tables a claim of ``study`` is judged from that are no aggregate file of the
    build (``compute`` holds those: :func:`aggregate_compute`), such as wddp's stacks of its
    figures' tables; their compute is :func:`charged`. The runs are those the study's grid says the
    table reads (:meth:`Study.table_runs`) that the build holds (``provenances``:
    :func:`run_provenances`).
    """
    module = study_module(study)
    stacked = {}
    for table in dict.fromkeys(claim.aggregate for claim in module.CLAIMS):
        if published_aggregate(f"{table}.csv") in compute:
            continue
        runs = [path for path in module.table_runs(config, table) if path in provenances]
        if runs:
            stacked[table] = charged(provenances[path] for path in runs)
    return stacked


def not_run_cost(study: str, card: pd.DataFrame, paper: dict, provenances: dict[str, dict]) -> dict:
    """What the claims of ``card`` that no run decided would take under the papers' full grids.

    The claims are those not run at this scale or whose data is unavailable; the grids are
    ``paper`` (:data:`PAPER_CONFIG`); the cost is projected from the build's runs
    (``provenances``: :func:`run_provenances`).

    For each such claim: the run files its table reads under ``paper`` (:meth:`Study.table_runs`)
    that this build did not make at the grid's iterations (a smaller config's run at the same path
    does not count), and their CPU time projected at the CPU seconds per iteration this build's CPU
    runs of the same rate group spent (:meth:`Study.run_work`: one dataset); runs of a group with no
    CPU run here are counted, not projected. Where the build has runs of the group made on a GPU,
    their GPU time is projected the same way from those (``gpu_hours``). ``all`` is the same for
    every such claim's runs together (claims share runs).
    """
    module = study_module(study)
    spent = {"cpu_seconds": defaultdict(float), "gpu_seconds": defaultdict(float)}
    iterations = {"cpu_seconds": defaultdict(int), "gpu_seconds": defaultdict(int)}
    for path, provenance in provenances.items():
        group = module.run_work(paper, path)[0]
        unit, seconds = run_charge(provenance)
        spent[unit][group] += seconds
        iterations[unit][group] += provenance["timing"]["iterations"]
    rate = {unit: {g: spent[unit][g] / n for g, n in iterations[unit].items() if n} for unit in spent}

    def projected(paths: list[str]) -> dict:
        seconds, unmeasured = defaultdict(float), defaultdict(int)
        for path in paths:
            group, work = module.run_work(paper, path)
            for unit in rate:
                seconds[unit] += work * rate[unit].get(group, 0.0)
            if group not in rate["cpu_seconds"]:
                unmeasured[group] += 1
        entry = {"runs": len(paths), "cpu_hours": round(seconds["cpu_seconds"] / 3600, 1)}
        if rate["gpu_seconds"]:
            entry["gpu_hours"] = round(seconds["gpu_seconds"] / 3600, 2)
        return entry | {"runs_not_projected": dict(unmeasured)}

    done = {path: provenance["timing"]["iterations"] for path, provenance in provenances.items()}

    def missing(table: str) -> list[str]:
        return [
            path
            for path in module.table_runs(paper, table)
            if done.get(path) != module.run_work(paper, path)[1]
        ]

    tables = {claim.id: claim.aggregate for claim in module.CLAIMS}
    not_run = list(card.loc[card["verdict"].isin(NOT_RUN), "id"])
    not_done = {table: missing(table) for table in dict.fromkeys(tables[claim] for claim in not_run)}
    # a table's claims share its runs
    by_table = {table: projected(paths) for table, paths in not_done.items()}
    union = dict.fromkeys(path for paths in not_done.values() for path in paths)
    cost = {
        "configfile": PAPER_CONFIG.as_posix(),
        "ms_per_run_iteration": {
            group: round(1000 * value, 2) for group, value in sorted(rate["cpu_seconds"].items())
        },
    }
    if rate["gpu_seconds"]:
        gpu_rates = sorted(rate["gpu_seconds"].items())
        cost["gpu_ms_per_run_iteration"] = {group: round(1000 * value, 4) for group, value in gpu_rates}
    return cost | {
        "claims": {claim: by_table[tables[claim]] for claim in not_run},
        "all": projected(list(union)),
    }


def table_difference(built: Path, published: Path) -> dict[str, float] | None:
    """Whether the CSV table ``built`` holds the numbers of ``published``.

    ``{}`` for the same bytes, ``{column: largest relative difference}`` for the same columns, rows
    and text with every float within :data:`SAME_NUMBERS_RTOL` (NaN where the other has NaN), None
    otherwise (or when ``built`` is missing).
    """
    import numpy as np

    if not built.is_file():
        return None
    if built.read_bytes() == published.read_bytes():
        return {}
    ours, theirs = pd.read_csv(built), pd.read_csv(published)
    if list(ours.columns) != list(theirs.columns) or ours.shape != theirs.shape:
        return None
    found = {}
    for column in ours.columns:
        a, b = ours[column], theirs[column]
        if a.dtype.kind != "f" or b.dtype.kind != "f":
            if not a.equals(b):
                return None
            continue
        a, b = a.to_numpy(), b.to_numpy()
        if not np.allclose(a, b, rtol=SAME_NUMBERS_RTOL, atol=0.0, equal_nan=True):
            return None
        differing = ~np.isnan(a) & (a != b)
        if differing.any():
            found[column] = float(np.max(np.abs(a[differing] - b[differing]) / np.abs(b[differing])))
    return found
