"""``dpdl publish``: the small artifacts of a finished build, stamped, under ``published/``.

A researcher who cannot spend the CPU-hours still wants the answers, and a reader must be able to
check them. :func:`publish_study` copies one study's outputs from a finished build (its scorecard
under every reading that was built, the aggregates and tables its figures are drawn from, the
privacy rows of its runs, the figures as PNG; never run arrays) into
``published/<study>/``, with a ``MANIFEST.json`` that stamps them with the code version,
the config and the machine that made them, and the sha256 of every file. :func:`write_merged`
then writes, from every published study, the merged scorecard, the readings table and
``RESULTS.md``, the README's results section (:func:`splice_readme` copies it in; a test fails
when the two disagree). :func:`published_problems` is what ``dpdl check published`` runs.
"""

from __future__ import annotations

import logging
import os
import platform
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from dpdl.audit.data_premises import read_data_premises
from dpdl.audit_report import privacy_with_audit, read_audit, reading_privacy_rows, study_ledger
from dpdl.claims import MECHANISM_PROPERTY, PREMISE_CLAIM, PRIVACY_CLAIM, SUBSTANTIVE_KINDS
from dpdl.errors import ArtifactError, DpdlError
from dpdl.io import atomic_path, markdown_table, read_json, sha256_file, write_json, write_text
from dpdl.judgement import NOT_RUN
from dpdl.paths import ARTICLE_FILES, PUBLISHED, audit_path, data_premises_path, summary_table
from dpdl.readings import (
    CURRENT_ENGINE,
    DEFAULT,
    judged_readings,
    reading_config,
    reading_folder,
    reading_mechanisms,
    reading_scorecard,
    study_readings,
)
from dpdl.runs import read_run, run_charge, run_gpu
from dpdl.studies import ALL, study_module
from dpdl.studies.common import claims_path
from dpdl.summary import (
    counted,
    headline,
    merge_scorecards,
    privacy_headline,
    scorecard_markdown,
    scorecard_problems,
    verdict_counts,
)
from dpdl.verdict_check import card_text, judged_card, judging_plan, refuse_misjudged, scorecard_name, snapshot_problems

MANIFEST = "MANIFEST.json"
log = logging.getLogger("dpdl")
RESULTS = "RESULTS.md"
README_BEGIN = "<!-- results: begin (written by `dpdl publish --readme README.md` from published; do not edit) -->"
README_END = "<!-- results: end -->"
AUDIT_TABLE = "audit/audit.csv"  # a study's published audit (publish_audits)
DATA_PREMISES = "audit/data_premises.csv"  # its premises measured on its prepared data (publish_audits)
PREMISE_SHOWN = ["id", "verdict", "paper_value", "our_value", "detail"]
PRIVACY_SHOWN = ["id", "verdict", "paper_value", "our_value", "deciding_cell", "detail", "post_hoc"]
PAPER_CONFIG = Path("config/paper.yaml")  # the papers' full grids: what the claims not run here would take
PUBLISHED_SUFFIXES = (".csv", ".md", ".png")  # figures as PNG only: the PDFs repeat them


def published_name(path: str | Path, study: str) -> str:
    """Where a build output of ``study`` goes inside ``published/<study>/``."""
    path = Path(path)
    prefixes = {
        Path("figures", study): "figures",
        Path("results", "tables", study): "tables",
        Path("results", study, "aggregates"): "aggregates",
    }
    if path == Path(claims_path(study, "csv")):
        return "claims.csv"
    for prefix, folder in prefixes.items():
        if path.parent == prefix:
            return f"{folder}/{path.name}"
    raise ArtifactError(f"{path}: not an output dpdl publishes for {study} (figures, tables, aggregates, claims)")


def study_outputs(study: str, config: dict, buildable: Iterable[str]) -> dict[str, Path]:
    """The outputs of ``study`` a snapshot holds (name inside the study folder -> build path)."""
    targets = [Path(t) for t in study_module(study).targets(config, set(buildable))]
    aggregates = sorted(Path("results", study, "aggregates").glob("*.csv"))
    outputs = {}
    for path in [*targets, *aggregates]:
        if path.suffix in PUBLISHED_SUFFIXES and path != Path(claims_path(study, "csv")).with_suffix(".md"):
            outputs[published_name(path, study)] = path
    missing = sorted(str(path) for path in outputs.values() if not path.is_file())
    if missing:
        raise DpdlError(
            f"{study}: the build is not finished ({len(missing)} outputs missing, first {missing[0]}); "
            f"finish it with snakemake before publishing"
        )
    return outputs


def built_readings(study: str) -> dict[str, Path]:
    """Scorecards of the readings of ``study`` built here (the default is the main build's)."""
    found = {DEFAULT: Path(claims_path(study, "csv"))}
    for reading in study_readings(study)[1:]:
        path = Path(reading_scorecard(study, reading.name))
        if path.is_file():
            found[reading.name] = path
    return found


def run_compute(
    study: str, readings: Iterable[str], narrowed: Mapping[str, Iterable[str]] | None = None
) -> tuple[float, dict[str, dict]]:
    """Wall seconds of every run of ``study`` here and in its built ``readings`` (each run's share of its job's
    wall time), and the runs made on each GPU (``{"NVIDIA H200": {"runs": 340, "wall_seconds": 412.3}}``); a
    reading still building is not counted, nor twice a run a reading reuses from the main build (the same file:
    :func:`dpdl.readings.seed_from_main_build` links it). A reading in ``narrowed`` (``reading_cells``: reading ->
    the run paths of its cells) counts only those runs, not the ones it has made of the cells it leaves out."""
    narrowed = narrowed or {}
    paths = list(Path().glob(f"results/{study}/runs/**/*.npz"))
    for name in (name for name in readings if name != DEFAULT):
        folder = reading_folder(study, name)
        if name in narrowed:
            paths += [folder / path for path in narrowed[name] if (folder / path).is_file()]
        else:
            paths += folder.glob(f"results/{study}/runs/**/*.npz")
    runs = {}
    for path in paths:
        stat = path.stat()
        runs.setdefault((stat.st_dev, stat.st_ino), path)
    total, gpus = 0.0, {}
    for path in runs.values():
        provenance = read_run(path).provenance
        wall = provenance["timing"]["wall_time_s"]
        total += wall
        if gpu := run_gpu(provenance):
            entry = gpus.setdefault(gpu, {"runs": 0, "wall_seconds": 0.0})
            entry["runs"] += 1
            entry["wall_seconds"] += wall
    return total, {gpu: {**entry, "wall_seconds": round(entry["wall_seconds"], 1)} for gpu, entry in gpus.items()}


def charged(provenances: Iterable[dict]) -> dict:
    """Runs and their compute (:func:`dpdl.runs.run_charge`): ``{"runs": 10, "cpu_seconds": 3456.1}``, with
    ``gpu_seconds`` beside it where some ran on a GPU."""
    provenances = list(provenances)
    seconds = defaultdict(float)
    for provenance in provenances:
        unit, value = run_charge(provenance)
        seconds[unit] += value
    entry = {"runs": len(provenances), "cpu_seconds": round(float(seconds["cpu_seconds"]), 1)}
    if "gpu_seconds" in seconds:
        entry["gpu_seconds"] = round(float(seconds["gpu_seconds"]), 1)
    return entry


def aggregate_compute(study: str, configfile: str) -> dict[str, dict]:
    """The runs behind each aggregate table of ``study`` in the build here and their compute, by the table's
    name in the snapshot: ``{"aggregates/fig2.csv": {"runs": 1100, "cpu_seconds": 812.5}}``. Which runs a
    table was made from is what Snakemake recorded for its job (``--detailed-summary``: each output's
    inputs), followed down through intermediate files to the run files; a table whose inputs it did not
    record (made outside this build's Snakemake) is left out."""
    command = [sys.executable, "-m", "snakemake", "--detailed-summary", "--quiet", "--configfile", configfile]
    done = subprocess.run([*command, "--config", f'studies=["{study}"]'], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise DpdlError(f"{study}: Snakemake could not list the build's inputs ({last}); publish from the build folder")
    return compute_by_aggregate(study, done.stdout)


def compute_by_aggregate(study: str, summary: str) -> dict[str, dict]:
    """:func:`aggregate_compute` from the text of ``snakemake --detailed-summary``: a header, then one line per
    output, its fields joined by tabs as they are (unquoted: a shell command may hold quotes), the output first
    and its inputs fifth, joined by commas."""
    lines = summary.splitlines()
    if not lines or lines[0].split("\t")[:5] != ["output_file", "date", "rule", "log-file(s)", "input-file(s)"]:
        raise DpdlError(f"{study}: not Snakemake's detailed summary: {lines[:1]}")
    fields = [line.split("\t") for line in lines[1:] if line]
    recorded = {row[0]: row[4] for row in fields}  # "-": no record, "": no inputs
    inputs = {output: [p for p in listed.split(",") if p] for output, listed in recorded.items() if listed != "-"}
    runs_folder = f"results/{study}/runs/"
    behind = {}  # each aggregate table -> the run files it was made from
    for output in sorted(inputs):
        if not (output.startswith(f"results/{study}/aggregates/") and output.endswith(".csv")):
            continue
        runs, seen, stack = set(), set(), list(inputs[output])
        while stack:
            path = stack.pop()
            if path in seen:
                continue
            seen.add(path)
            if path.startswith(runs_folder) and path.endswith(".npz"):
                runs.add(path)
            else:
                stack += inputs.get(path, [])
        behind[output] = runs
    provenance = {path: read_run(path).provenance for path in sorted(set().union(*behind.values()))}  # read once
    return {
        published_name(output, study): charged(provenance[path] for path in sorted(runs))
        for output, runs in behind.items()
    }


def compute_record(
    study: str, config: dict, compute: dict[str, dict], provenances: dict[str, dict], claims: Path
) -> dict:
    """The manifest's compute of ``study``'s build here: ``aggregate_compute`` (``compute``), ``stacked_table_compute``
    where there are stacks, and, with :data:`PAPER_CONFIG`, ``not_run_cost`` of the scorecard ``claims``
    (``provenances``: :func:`run_provenances`)."""
    from dpdl.config import load_config

    record = {"aggregate_compute": compute}
    stacked = stacked_table_compute(study, config, record["aggregate_compute"], provenances)
    if stacked:
        record["stacked_table_compute"] = stacked
    if PAPER_CONFIG.is_file():
        card = pd.read_csv(claims, dtype=str, keep_default_na=False)
        record["not_run_cost"] = not_run_cost(study, card, load_config(PAPER_CONFIG), provenances)
    return record


def run_provenances(study: str) -> dict[str, dict]:
    """The provenance of every run of ``study``'s main build here, by its path."""
    paths = sorted(Path().glob(f"results/{study}/runs/**/*.npz"))
    return {path.as_posix(): read_run(path).provenance for path in paths}


def stacked_table_compute(study: str, config: dict, compute: dict[str, dict], provenances: dict[str, dict]) -> dict:
    """The runs behind each table a claim of ``study`` is judged from that is no aggregate file of the build
    (``compute`` holds those: :func:`aggregate_compute`), such as wddp's stacks of its figures' tables, and their
    compute (:func:`charged`): the runs the study's grid says the table reads (:meth:`Study.table_runs`) that the
    build holds (``provenances``: :func:`run_provenances`)."""
    module = study_module(study)
    stacked = {}
    for table in dict.fromkeys(claim.aggregate for claim in module.CLAIMS):
        if f"aggregates/{table}.csv" in compute:
            continue
        runs = [path for path in module.table_runs(config, table) if path in provenances]
        if runs:
            stacked[table] = charged(provenances[path] for path in runs)
    return stacked


def not_run_cost(study: str, card: pd.DataFrame, paper: dict, provenances: dict[str, dict]) -> dict:
    """What the claims of ``card`` that no run decided (not run at this scale, data unavailable) would take under
    the papers' full grids (``paper``, :data:`PAPER_CONFIG`), projected from the build's runs (``provenances``:
    :func:`run_provenances`).

    For each such claim: the run files its table reads under ``paper`` (:meth:`Study.table_runs`) that this build
    did not make at the grid's iterations (a smaller config's run at the same path does not count), and their
    CPU time projected at the CPU seconds per iteration this build's CPU runs of the same rate group spent
    (:meth:`Study.run_work`: one dataset); runs of a group with no CPU run here are counted, not projected. Where
    the build has runs of the group made on a GPU, their GPU time is projected the same way from those
    (``gpu_hours``). ``all`` is the same for every such claim's runs together (claims share runs)."""
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
        return [path for path in module.table_runs(paper, table) if done.get(path) != module.run_work(paper, path)[1]]

    tables = {claim.id: claim.aggregate for claim in module.CLAIMS}
    not_run = list(card.loc[card["verdict"].isin(NOT_RUN), "id"])
    not_done = {table: missing(table) for table in dict.fromkeys(tables[claim] for claim in not_run)}
    by_table = {table: projected(paths) for table, paths in not_done.items()}  # a table's claims share its runs
    union = dict.fromkeys(path for paths in not_done.values() for path in paths)
    cost = {
        "configfile": PAPER_CONFIG.as_posix(),
        "ms_per_run_iteration": {group: round(1000 * value, 2) for group, value in sorted(rate["cpu_seconds"].items())},
    }
    if rate["gpu_seconds"]:
        gpu_rates = sorted(rate["gpu_seconds"].items())
        cost["gpu_ms_per_run_iteration"] = {group: round(1000 * value, 4) for group, value in gpu_rates}
    return cost | {"claims": {claim: by_table[tables[claim]] for claim in not_run}, "all": projected(list(union))}


def code_version() -> dict:
    """The git commit of the build's checkout and whether tracked files differed from it."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise DpdlError(f"cannot read the code version ({err}); publish from a git checkout of dpdl") from None
    return {"commit": commit.strip(), "modified_files": changed.splitlines()}


def machine() -> dict:
    """What a reader needs to compare speeds: processor, cores, memory, system, Python."""
    cpu = next((line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo") if line.startswith("model name")), "")
    memory = next((line.split()[1] for line in _lines("/proc/meminfo") if line.startswith("MemTotal")), "0")
    return {
        "processor": cpu or platform.processor(),
        "cores": os.cpu_count(),
        "memory_gib": round(int(memory) / 2**20, 1),
        "system": platform.platform(),
        "python": platform.python_version(),
    }


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []


def publish(studies: Iterable[str], configfile: Path, out: Path = PUBLISHED, readme: Path | None = None) -> None:
    """Publish each of ``studies`` from the finished build here, rewrite the merged files and the README block."""
    from dpdl.config import load_config
    from dpdl.targets import plan

    config = load_config(configfile)
    buildable = plan(config).buildable
    builds = {study: (built_readings(study), narrowed_readings(study, config, buildable)) for study in studies}
    refuse_misjudged(builds, config)  # every built verdict is what its tables give, before anything is written
    for study in builds:
        publish_study(study, config, configfile.as_posix(), buildable, out)
    write_merged(out)
    if readme is not None:
        splice_readme(readme, (out / RESULTS).read_text(encoding="utf-8"))


def narrowed_readings(study: str, config: dict, buildable: Iterable[str]) -> dict[str, dict[str, set[str]]]:
    """The built readings of ``study`` that ``reading_cells`` narrows, each with the names of the per-seed tables
    and the run paths of its own grid: its folder also holds the main build's tables and runs of the cells it
    leaves out (linked in), which are not the reading's."""
    found = {}
    for name in built_readings(study):
        if f"{study}/{name}" in config.get("reading_cells", {}):
            settings, module = reading_config(config, study, name), study_module(study)
            tables = {Path(path).name for path in module.targets(settings, set(buildable))}
            found[name] = {"tables": tables, "runs": set(module.runs(settings, set(buildable)))}
    return found


def publish_study(study: str, config: dict, configfile: str, buildable: Iterable[str], out: Path = PUBLISHED) -> dict:
    """Copy one study's outputs and built readings into ``out/<study>/`` and write its manifest.

    Besides the figures and tables, the snapshot holds everything the claims are judged from, so
    that :func:`rejudge` needs no build: the per-seed tables (``aggregates/``), the dataset cards
    of the study (``cards/``) and, for each built reading, its scorecard and its per-seed tables
    (``readings/<reading>/aggregates/``).
    """
    outputs = study_outputs(study, config, buildable)
    for card in sorted(Path("data", "processed", study).glob("*.json")):
        outputs[f"cards/{card.name}"] = card
    narrowed = narrowed_readings(study, config, buildable)
    for name, path in built_readings(study).items():
        if name != DEFAULT:
            outputs[f"readings/{name}.csv"] = path
            for table in sorted((reading_folder(study, name) / "results" / study / "aggregates").glob("*.csv")):
                if name not in narrowed or table.name in narrowed[name]["tables"]:
                    outputs[f"readings/{name}/aggregates/{table.name}"] = table
    for ext in ("csv", "md", "json") if Path(audit_path(study, "csv")).is_file() else ():
        outputs[f"audit/audit.{ext}"] = Path(audit_path(study, ext))
    if Path(data_premises_path(study)).is_file():
        outputs[DATA_PREMISES] = Path(data_premises_path(study))
    privacy = pd.read_csv(summary_table("privacy", "csv"))
    readings = sorted(built_readings(study), key=[r.name for r in study_readings(study)].index)
    manifest = {  # all of it read before the folder is touched, so that a failure leaves the snapshot whole
        "study": study,
        "code": code_version(),
        "machine": machine(),
        "configfile": configfile,
        "config": {key: config[key] for key in ("data", study)},
        "readings": readings,
    }
    if narrowed:  # recorded with the config, so that rejudge judges the reading on the same cells
        manifest["config"]["reading_cells"] = {
            key: cells for key, cells in config["reading_cells"].items() if key.startswith(f"{study}/")
        }
    wall, gpus = run_compute(study, readings, {name: found["runs"] for name, found in narrowed.items()})
    manifest["run_compute_seconds"] = round(wall, 1)
    if gpus:
        manifest["run_gpus"] = gpus
    compute, provenances = aggregate_compute(study, configfile), run_provenances(study)
    manifest |= compute_record(study, config, compute, provenances, Path(claims_path(study, "csv")))
    folder = out / study
    if folder.exists():
        shutil.rmtree(folder)
    for name, source in outputs.items():
        with atomic_path(folder / name) as tmp:
            shutil.copyfile(source, tmp)
    write_text(folder / "privacy.csv", privacy[privacy["study"] == study].to_csv(index=False, lineterminator="\n"))
    manifest["files"] = {name: sha256_file(folder / name) for name in sorted([*outputs, "privacy.csv"])}
    write_json(folder / MANIFEST, manifest)
    return manifest


def publish_audits(studies: Iterable[str], configfile: Path, out: Path = PUBLISHED, readme: Path | None = None) -> None:
    """Copy each study's audit (``results/audit/<study>.*``) and, where built, its premises measured on its data
    (``results/audit/<study>_data_premises.csv``) into ``out/<study>/audit/``, leaving the rest; every study's audit
    must be there before any is copied.

    The manifest gains ``audit`` (the code and config that ran it, its CPU seconds), the study's
    ``privacy.csv`` its eps_LB column, and the merged files are rewritten: the audit judges the
    study's privacy claims. The study must be published already.
    """
    from dpdl.config import load_config

    _require_published(studies, out, "publish the study before its audit")
    config = load_config(configfile)
    sources_of = {
        study: {f"audit/audit.{ext}": Path(audit_path(study, ext)) for ext in ("csv", "md", "json")}
        for study in studies
    }
    for study, sources in sources_of.items():  # every study's audit is there before any is copied
        missing = [str(p) for p in sources.values() if not p.is_file()]
        if missing:
            raise DpdlError(f"{study}: {missing[0]} not built; run `snakemake audit --configfile {configfile}` first")
    for study, sources in sources_of.items():
        folder = out / study
        for name, source in sources.items():
            with atomic_path(folder / name) as tmp:
                shutil.copyfile(source, tmp)
        audit = read_audit(folder / AUDIT_TABLE)
        privacy = privacy_with_audit(pd.read_csv(folder / "privacy.csv"), {study: audit})
        write_text(folder / "privacy.csv", privacy.to_csv(index=False, lineterminator="\n"))
        manifest = read_json(folder / MANIFEST)
        manifest["audit"] = {
            "code": _code_without(out, readme),
            "configfile": configfile.as_posix(),
            "config": config["audit"],
            "cpu_seconds": read_json(folder / "audit" / "audit.json")["timing"]["cpu_seconds"],
        }
        names = {*manifest["files"], *sources}
        manifest["files"] = {name: sha256_file(folder / name) for name in sorted(names)}
        write_json(folder / MANIFEST, manifest)
        if Path(data_premises_path(study)).is_file():  # built with the audit where its data could be prepared
            _copy_data_premises(study, config, configfile, out, readme)
    write_merged(out)
    if readme is not None:
        splice_readme(readme, (out / RESULTS).read_text(encoding="utf-8"))


def publish_data_premises(
    studies: Iterable[str], configfile: Path, out: Path = PUBLISHED, readme: Path | None = None
) -> None:
    """Copy each study's premises measured on its prepared data (``results/audit/<study>_data_premises.csv``) into
    ``out/<study>/audit/data_premises.csv`` alone (:func:`publish_audits` copies it with the audit), stamp the
    manifest's ``data_premises`` and rewrite the merged files: the table judges the study's premise claims."""
    from dpdl.config import load_config

    _require_published(studies, out, "publish the study before its data premises")
    config = load_config(configfile)
    for study in studies:
        _copy_data_premises(study, config, configfile, out, readme)
    write_merged(out)
    if readme is not None:
        splice_readme(readme, (out / RESULTS).read_text(encoding="utf-8"))


def _copy_data_premises(study: str, config: dict, configfile: Path, out: Path, readme: Path | None) -> None:
    """:func:`publish_data_premises` of one study, without the merged files."""
    source, folder = Path(data_premises_path(study)), out / study
    if not source.is_file():
        raise DpdlError(f"{study}: {source} not built; run `snakemake audit --configfile {configfile}` first")
    read_data_premises(source)  # a table of the right columns, before the manifest names it
    with atomic_path(folder / DATA_PREMISES) as tmp:
        shutil.copyfile(source, tmp)
    manifest = read_json(folder / MANIFEST)
    manifest["data_premises"] = {
        "code": _code_without(out, readme),
        "configfile": configfile.as_posix(),
        "data": config["data"],
    }
    names = {*manifest["files"], DATA_PREMISES}
    manifest["files"] = {name: sha256_file(folder / name) for name in sorted(names)}
    write_json(folder / MANIFEST, manifest)


# How far a rebuilt table's floats may be from the snapshot's and still be its numbers (relative). Set on
# 2026-11-27 after wddp's rebuild was seen to differ from its c323111 snapshot only in the composed PLD
# epsilon, by at most 1e-11 relative (the accountant's floating point); no verdict depends on it.
SAME_NUMBERS_RTOL = 1e-9


def publish_compute(studies: Iterable[str], configfile: Path, out: Path = PUBLISHED) -> None:
    """Add to each study's snapshot the compute behind its tables, measured by a rebuild here of its default grid.

    For a snapshot published before compute per table was recorded (no ``aggregate_compute``): the build
    here must have made, through Snakemake, every per-seed table the snapshot holds (``aggregates/``) with
    the snapshot's numbers (:func:`table_difference`), so that the compute it measured is theirs; a table
    that differs, or is missing, stops the study with its name, and nothing of it is written. The manifest
    gains ``aggregate_compute``, ``stacked_table_compute`` and ``not_run_cost`` as :func:`publish_study`
    writes them, and ``compute_measured``: the rebuild's code, machine, config and runs, how many tables
    were the same bytes, and the largest relative difference per column of the others. No file of the
    snapshot changes.
    """
    from dpdl.config import load_config

    _require_published(studies, out, "--compute adds to a published study")
    config = load_config(configfile)
    for study in studies:
        folder = out / study
        manifest = read_json(folder / MANIFEST)
        compute = aggregate_compute(study, configfile.as_posix())
        tables = sorted(name for name in manifest["files"] if name.startswith("aggregates/"))
        found = {name: table_difference(Path("results", study, name), folder / name) for name in tables}
        differ = [name for name, difference in found.items() if name not in compute or difference is None]
        if differ:
            raise DpdlError(
                f"{study}: the build here did not make {differ[0]} with the snapshot's numbers ({len(differ)} of "
                f"{len(tables)} tables differ or are missing), so its compute is not theirs; build "
                f"results/claims/{study}.csv with --configfile {configfile}, or publish this build"
            )
        largest: dict[str, float] = {}
        for difference in found.values():
            for column, value in difference.items():
                largest[column] = max(largest.get(column, 0.0), value)
        provenances = run_provenances(study)
        manifest |= compute_record(study, config, compute, provenances, folder / "claims.csv")
        manifest["compute_measured"] = {
            "code": _code_without(out, None),
            "machine": machine(),
            "configfile": configfile.as_posix(),
            "runs": len(provenances),
            "tables": len(tables),
            "tables_same_bytes": sum(not difference for difference in found.values()),
            "largest_relative_difference": {column: float(f"{value:.2g}") for column, value in sorted(largest.items())},
            "tolerance": SAME_NUMBERS_RTOL,
        }
        write_json(folder / MANIFEST, manifest)


def table_difference(built: Path, published: Path) -> dict[str, float] | None:
    """Whether the CSV table ``built`` holds the numbers of ``published``: ``{}`` for the same bytes, ``{column:
    largest relative difference}`` for the same columns, rows and text with every float within
    :data:`SAME_NUMBERS_RTOL` (NaN where the other has NaN), None otherwise (or when ``built`` is missing)."""
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


def _require_published(studies: Iterable[str], out: Path, fix: str) -> None:
    """Stop at the first of ``studies`` that ``out`` does not hold, saying ``fix``."""
    unpublished = [study for study in studies if not (out / study / MANIFEST).is_file()]
    if unpublished:
        raise DpdlError(f"{unpublished[0]}: not published in {out}; {fix}")


def _code_without(out: Path, readme: Path | None) -> dict:
    """The code version, not counting the snapshot and the README a command rewrites (its outputs)."""
    code = code_version()
    outputs = (f"{out.as_posix().rstrip('/')}/", *([readme.as_posix()] if readme is not None else []))
    code["modified_files"] = [f for f in code["modified_files"] if not f[3:].startswith(outputs)]
    return code


def rejudge(out: Path = PUBLISHED, readme: Path | None = None) -> list[str]:
    """Judge every claim of every published study again from the snapshot alone, and rewrite the merged files.

    Each study's default scorecard is judged by the study's claims code on the published per-seed
    tables, with the config its manifest records (missing keys take the schema's defaults). A
    declared reading is judged too where the snapshot holds its per-seed tables
    (``readings/<reading>/aggregates/``) or where its switches reach only the claims step (the
    study's ``CLAIMS_STEP_KEYS``: it is judged on the default's tables). A built reading that can be
    judged neither way keeps the scorecard the engine of its build gave it, and is compared with the
    default as that engine judged it, kept as ``readings/default.csv`` (:func:`merged_files`). The
    manifest keeps the build's code version and gains ``judged`` (the code that judged it) and
    ``reading_engines``; every file's sha256 is updated. Returns one line per scorecard judged: how
    many verdicts changed.
    """
    lines = []
    manifests = published_studies(out)
    if not manifests:
        raise DpdlError(f"{out}: no published study (no <study>/{MANIFEST}) to judge again")
    judged_by = _code_without(out, readme)
    for study, manifest in manifests.items():
        folder = out / study
        judged, engines = judging_plan(study, manifest, folder)
        baseline = folder / "readings" / "default.csv"
        if any(engine != CURRENT_ENGINE for engine in engines.values()) and not baseline.is_file():
            shutil.copyfile(folder / "claims.csv", baseline)  # the default as the retired engine judged it
            manifest["files"]["readings/default.csv"] = ""
        for name, (source, settings) in judged.items():
            target = folder / scorecard_name(name)
            before = pd.read_csv(target, dtype=str, keep_default_na=False) if target.is_file() else None
            card = judged_card(study, source, settings, folder)
            write_text(target, card_text(card))
            lines.append(f"{study}/{name}: {_changed(before, card)}")
            if name != DEFAULT:
                engines[name] = CURRENT_ENGINE
                manifest["files"][f"readings/{name}.csv"] = ""
        order = [r.name for r in study_readings(study)]
        manifest["readings"] = sorted({*manifest["readings"], *judged}, key=order.index)
        manifest["reading_engines"] = {name: engines[name] for name in manifest["readings"][1:]}
        manifest["judged"] = judged_by
        manifest["files"] = {name: sha256_file(folder / name) for name in sorted(manifest["files"])}
        write_json(folder / MANIFEST, manifest)
    write_merged(out)
    if readme is not None:
        splice_readme(readme, (out / RESULTS).read_text(encoding="utf-8"))
    return lines


def _changed(before: pd.DataFrame | None, after: pd.DataFrame) -> str:
    """How many verdicts differ from the scorecard ``before`` (by claim id), naming each change."""
    if before is None:
        return f"{len(after)} claims judged (no scorecard before)"
    old = dict(zip(before["id"], before["verdict"], strict=True))
    changes = [
        f"{i}: {old.get(i, '(new claim)')} -> {v}"
        for i, v in zip(after["id"], after["verdict"], strict=True)
        if old.get(i) != v
    ]
    return f"{len(after)} claims, {len(changes)} verdicts changed" + (": " + "; ".join(changes) if changes else "")


def published_studies(out: Path = PUBLISHED) -> dict[str, dict]:
    """The manifest of every study published in ``out``, in study order."""
    return {study: read_json(out / study / MANIFEST) for study in ALL if (out / study / MANIFEST).is_file()}


def merged_files(out: Path = PUBLISHED) -> dict[str, str]:
    """The snapshot's merged files, from its study folders: scorecard, readings table, ``RESULTS.md``."""
    manifests = published_studies(out)
    cards = {
        (study, name): out / study / ("claims.csv" if name == DEFAULT else f"readings/{name}.csv")
        for study, manifest in manifests.items()
        for name in manifest["readings"]
    }
    baselines = {
        (study, name): out / study / "readings" / "default.csv"
        for study, manifest in manifests.items()
        for name, engine in manifest.get("reading_engines", {}).items()
        if engine != CURRENT_ENGINE
    }
    engines = {
        (study, name): engine for study, m in manifests.items() for name, engine in m.get("reading_engines", {}).items()
    }
    audits = {
        study: read_audit(out / study / AUDIT_TABLE) for study in manifests if (out / study / AUDIT_TABLE).is_file()
    }
    privacy = [
        reading_privacy_rows(study, audit, reading_mechanisms(study, manifests[study]["config"]))
        for study, audit in audits.items()
    ]
    table, summary, readings_csv = judged_readings(cards, baselines, engines, privacy)
    data_premises = {
        study: read_data_premises(out / study / DATA_PREMISES)
        for study in manifests
        if (out / study / DATA_PREMISES).is_file()
    }
    scorecards = {study: out / study / "claims.csv" for study in manifests}
    card = merge_scorecards(manifests, scorecards, audits=audits, data_premises=data_premises)
    card["readings"] = card["id"].map(summary.set_index("id")["readings"]).fillna(card["readings"])
    ledgers = {f"{study}/audit/premises.csv": study_ledger(study) for study in audits}
    return {
        **{name: ledger.to_csv(index=False, lineterminator="\n") for name, ledger in ledgers.items()},
        "readings.csv": readings_csv,
        "scorecard.csv": card.to_csv(index=False, lineterminator="\n"),
        "scorecard.md": scorecard_markdown(card),
        RESULTS: results_markdown(card, table, manifests),
    }


def write_merged(out: Path = PUBLISHED) -> None:
    """Write :func:`merged_files` into ``out``; a study's premise ledger enters its manifest's files."""
    for name, text in merged_files(out).items():
        write_text(out / name, text)
        study, _, inner = name.partition("/")
        if inner == "audit/premises.csv":
            manifest = read_json(out / study / MANIFEST)
            manifest["files"] = {**manifest["files"], inner: sha256_file(out / name)}
            manifest["files"] = dict(sorted(manifest["files"].items()))
            write_json(out / study / MANIFEST, manifest)


def splice_readme(readme: Path, results: str) -> None:
    """Replace the README's results block (between :data:`README_BEGIN` and :data:`README_END`)."""
    text = readme.read_text(encoding="utf-8")
    before, begin, rest = text.partition(README_BEGIN + "\n")
    _, end, after = rest.partition(README_END)
    if not (begin and end):
        raise DpdlError(f"{readme}: no results block; add the lines {README_BEGIN!r} and {README_END!r} where it goes")
    write_text(readme, before + begin + results + end + after)


def readme_results(readme: Path) -> str:
    """The README's results block as it stands."""
    text = readme.read_text(encoding="utf-8")
    return text.partition(README_BEGIN + "\n")[2].partition(README_END)[0]


COMMIT = re.compile(r"[0-9a-f]{7,40}")  # what a manifest's code.commit may be: git reaches it unquoted
CONFIGFILE = re.compile(r"config/[A-Za-z0-9_][A-Za-z0-9_.-]*\.ya?ml")  # a manifest's configfile: a file under config/


def committed_config_problems(study: str, manifest: dict, out: Path = PUBLISHED) -> list[str]:
    """Where a manifest's ``config`` is not what its ``configfile`` set at the commit it records: each value the
    file sets in the manifest's sections must be the manifest's (which adds the schema's defaults). Nothing to
    compare where that file was modified at publication or the commit is not in this checkout (a warning)."""
    import yaml

    commit, configfile = manifest["code"]["commit"], manifest["configfile"]
    where = out / study / MANIFEST
    if not (isinstance(commit, str) and COMMIT.fullmatch(commit)):
        return [f"{where}: code.commit {commit!r} is not a git commit hash (7 to 40 hex digits)"]
    if not (isinstance(configfile, str) and CONFIGFILE.fullmatch(configfile)):
        return [f"{where}: configfile {configfile!r} is not a file under config/ (config/<name>.yaml)"]
    if configfile in {line[3:] for line in manifest["code"]["modified_files"]}:  # `git status --porcelain` lines
        return []
    try:
        text = subprocess.run(
            ["git", "show", "--end-of-options", f"{commit}:{configfile}"], capture_output=True, text=True, check=True
        ).stdout
        committed = yaml.safe_load(text) or {}
    except (OSError, subprocess.CalledProcessError, yaml.YAMLError):
        log.warning("%s: %s at %s cannot be read here; its config is not compared", study, configfile, commit[:12])
        return []
    return [
        f"{where}: config {key} is {recorded!r}, but {configfile} at {commit[:12]} sets {value!r}; "
        "publish again with `dpdl publish`"
        for section in manifest["config"]
        for key, value, recorded in _set_values(committed.get(section), manifest["config"][section], section)
    ]


def _set_values(committed: object, recorded: object, key: str) -> Iterable[tuple[str, object, object]]:
    """``(dotted key, committed value, recorded value)`` wherever a value ``committed`` sets differs."""
    if isinstance(committed, dict):
        for name, value in committed.items():
            below = recorded.get(name) if isinstance(recorded, dict) else None
            yield from _set_values(value, below, f"{key}.{name}")
    elif committed is not None and committed != recorded:
        yield key, committed, recorded


def published_problems(out: Path = PUBLISHED) -> list[str]:
    """Problems with a snapshot: each study's files against its manifest, the merged files against its studies,
    each published verdict against its claim judged again from the per-seed tables (:mod:`dpdl.verdict_check`)."""
    problems = []
    manifests = published_studies(out)
    if not manifests:
        return [f"{out}: no published study (no <study>/{MANIFEST}); write one with `dpdl publish`"]
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
        for name, digest in manifest["files"].items():
            path = folder / name
            if not path.is_file():
                problems.append(f"{path}: listed in the manifest but missing")
            elif sha256_file(path) != digest:
                problems.append(f"{path}: sha256 differs from the manifest; publish again with `dpdl publish`")
        problems += committed_config_problems(study, manifest, out)
    merged = merged_files(out)
    for name, text in merged.items():
        path = out / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            problems.append(f"{path}: missing or not what its study folders give; rewrite it with `dpdl publish`")
    for path in sorted(out.iterdir()):
        if not (path.name in manifests and path.is_dir() or path.name in merged and path.is_file()):
            problems.append(f"{path}: neither a published study nor a merged file of the snapshot; remove it")
    scorecard = out / "scorecard.csv"  # a missing one is named among the merged files above
    problems += scorecard_problems(scorecard) if scorecard.is_file() else []
    return problems + snapshot_problems(out, manifests)  # each verdict what its per-seed tables give


def results_markdown(card: pd.DataFrame, table: pd.DataFrame, manifests: dict[str, dict]) -> str:
    """The README's results section: what was published, the verdicts per kind, what the reading changes."""
    provenance = pd.DataFrame(
        [
            {
                "study": study,
                "config": m["configfile"],
                "code": m["code"]["commit"][:10] + (" (modified)" if m["code"]["modified_files"] else ""),
                "readings built": f"{len(m['readings'])} of {len(study_readings(study))}"
                + (f" ({len(narrowed)} on some cells)" if (narrowed := m["config"].get("reading_cells")) else ""),
                "runs' wall time (h)": f"{m['run_compute_seconds'] / 3600:.2f}",
                "machine": f"{m['machine']['processor']}, {m['machine']['cores']} cores"
                + "".join(f"; {g['runs']} runs on an {gpu}" for gpu, g in m.get("run_gpus", {}).items()),
            }
            for study, m in manifests.items()
        ],
        columns=["study", "config", "code", "readings built", "runs' wall time (h)", "machine"],
    )
    published = card[card["study"].isin(list(manifests))]
    groups = {
        "substantive": SUBSTANTIVE_KINDS,
        "mechanism property": (MECHANISM_PROPERTY,),
        "privacy claim": (PRIVACY_CLAIM,),
        "premise": (PREMISE_CLAIM,),
    }
    counts = [verdict_counts(counted(published, kinds)).assign(kind=name) for name, kinds in groups.items()]
    by_kind = pd.concat(counts, ignore_index=True).fillna(0)
    verdicts = [c for c in by_kind.columns if c not in ("study", "kind")]
    by_kind = by_kind[by_kind["study"] != "all studies"][["study", "kind", *verdicts]].astype(
        {v: int for v in verdicts}
    )
    return (
        f"Published: {', '.join(manifests) or 'none'}; not published: "
        f"{', '.join(s for s in ALL if s not in manifests) or 'none'}. Each study's `MANIFEST.json` holds "
        "its config, the machine, the code that built it and the code that last judged it, and the sha256 of "
        "every file.\n\n"
        + markdown_table(provenance)
        + "\nVerdicts of the papers' own claims under each study's default reading: the substantive claims (numbers "
        "the papers print, comparisons between methods) and, apart, the mechanism properties (what any working "
        "calibrated mechanism does). Claims judged on the same or nested per-seed cells count once (`same_runs_as`, "
        "derived from the cells each claim judged, or declared with a reason: `same_runs_why`); choices made "
        "after a result was seen are flagged per claim (`post_hoc`, docs/post_hoc.md).\n\n"
        + markdown_table(by_kind.sort_values(["study", "kind"], key=_study_order))
        + "\nThe papers' privacy claims, tested by the empirical audit (runs on neighbouring datasets; eps_LB is "
        "a 95% lower bound on epsilon; an audit can refute a claim, never prove it; `<study>/audit/`):\n\n"
        + markdown_table(published[published["kind"] == PRIVACY_CLAIM][PRIVACY_SHOWN])
        + "\n"
        + privacy_headline(published)
        + " Each audited cell's premises, measured on its canary pair: `<study>/audit/premises.csv`.\n"
        + "\nThe papers' premises tested on their own data (every record of each dataset as prepared; "
        "`<study>/audit/data_premises.csv`), counted apart:\n\n"
        + markdown_table(published[published["kind"] == PREMISE_CLAIM][PREMISE_SHOWN])
        + "\nHeadline claims whose verdict differs under another reading (a sensitivity analysis: the default "
        "gives the headline; n/a where the reading left the claim unchanged; * post hoc reading):\n\n"
        + _reading_dependent(table, set(headline(published)["id"]))
    )


def _study_order(column: pd.Series) -> pd.Series:
    return column.map({study: i for i, study in enumerate(ALL)}) if column.name == "study" else column


def _reading_dependent(table: pd.DataFrame, ids: set[str]) -> str:
    """Per study, one row per claim of ``ids`` whose verdict differs from the default's (judged by the same
    engine) under a built reading, one column per reading the study declares; where readings were judged by
    the retired engine, the default as that engine judged it is a column of its own."""
    table = table[table["id"].isin(ids)]
    other = table[table["reading"] != DEFAULT]
    differs = set(other.loc[(other["unchanged"] != "yes") & (other["verdict"] != other["default_verdict"]), "id"])
    if not differs:
        return "none\n"
    parts = []
    for study, rows in table[table["id"].isin(differs)].groupby("study", sort=False):
        built = set(rows["reading"])
        retired = rows[rows["engine"] != CURRENT_ENGINE]
        rows = rows.assign(cell=["n/a" if r.unchanged == "yes" else r.verdict for r in rows.itertuples()])
        wide = rows.pivot_table(index="id", columns="reading", values="cell", aggfunc="first", sort=False)
        declared = study_readings(study)
        names = {r.name: r.name + ("*" if r.post_hoc else "") for r in declared}
        for name in names:
            if name not in wide.columns:
                wide[name] = "(not built)" if name not in built else None
        wide = wide[list(names)].astype(object).fillna("(not in that build)")
        old = set(retired["reading"])
        labels = {n: label + (" (retired engine)" if n in old else "") for n, label in names.items()}
        wide = wide.rename(columns=labels)
        if old:
            wide.insert(1, "default (retired engine)", retired.groupby("id")["default_verdict"].first())
        parts.append(f"{study}:\n\n" + markdown_table(wide.fillna("").reset_index()))
    return "\n".join(parts)
