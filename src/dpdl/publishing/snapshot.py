"""``dpdl publish``: the small artifacts of a finished build, stamped, under ``published/``.

A researcher who cannot spend the CPU-hours still wants the answers, and a reader must be able to
check them. :func:`publish_study` copies one study's outputs from a finished build (its scorecard
under every reading that was built, the aggregates and tables its figures are drawn from, the
privacy rows of its runs, the figures as PNG; never run arrays) into
``published/<study>/`` (:mod:`dpdl.publishing.layout`), with a ``MANIFEST.json`` that stamps them with the
code version, the config and the machine that made them, the compute behind them
(:mod:`dpdl.publishing.compute`), and the sha256 of every file. :func:`~dpdl.publishing.merged.write_merged`
then writes the merged files from every published study. :func:`publish_audits`,
:func:`publish_data_premises` and :func:`publish_compute` add to a published study; :func:`rejudge` judges a
snapshot again from what it holds.
"""

from __future__ import annotations

import io
import itertools
import os
import platform
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dpdl.audit.data_premises import read_data_premises
from dpdl.audit_report import privacy_with_audit, read_audit
from dpdl.chain import published_breaks, published_chain, rejudged
from dpdl.errors import ConfigError, DpdlError
from dpdl.io import read_json, sha256_file, write_json, write_text
from dpdl.paths import (
    PUBLISHED,
    PUBLISHED_AGGREGATES,
    PUBLISHED_DEVIATIONS,
    aggregates_folder,
    audit_path,
    cards_folder,
    data_premises_path,
    published_aggregate,
    published_deviation,
    published_reading,
    summary_table,
)
from dpdl.publishing.compute import (
    SAME_NUMBERS_RTOL,
    aggregate_compute,
    compute_record,
    reading_provenances,
    run_compute,
    run_provenances,
    table_difference,
)
from dpdl.publishing.layout import (
    AUDIT_TABLE,
    DATA_PREMISES,
    LEDGER,
    MANIFEST,
    RESULTS,
    built_readings,
    narrowed_readings,
    published_studies,
    require_published,
    study_outputs,
)
from dpdl.publishing.merged import ledger_text, splice_readme, write_merged
from dpdl.publishing.problems import settings_problems
from dpdl.publishing.staging import copy_into, disk_error, fault_point, recover, study_transaction
from dpdl.readings import CURRENT_ENGINE, DEFAULT, reading_config, reading_folder, study_readings
from dpdl.studies import study_module
from dpdl.studies.common import claims_path
from dpdl.verdict_check import (
    card_text,
    deviation_plan,
    judged_card,
    judging_plan,
    refuse_misjudged,
    scorecard_name,
)

AUDIT_FILES = (AUDIT_TABLE, "audit/audit.md", "audit/audit.json")  # a study's published audit


def audit_sources(study: str) -> dict[str, Path]:
    """The built audit files of ``study``, by the name each is published under (:data:`AUDIT_FILES`)."""
    return {name: Path(audit_path(study, Path(name).suffix.lstrip("."))) for name in AUDIT_FILES}


def code_version() -> dict:
    """The git commit of the build's checkout and whether tracked files differed from it."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise DpdlError(
            f"cannot read the code version ({err}); publish from a git checkout of dpdl"
        ) from None
    return {"commit": commit.strip(), "modified_files": changed.splitlines()}


def machine() -> dict:
    """What a reader needs to compare speeds: processor, cores, memory, system, Python."""
    cpu = next(
        (line.split(":", 1)[1].strip() for line in _lines("/proc/cpuinfo") if line.startswith("model name")),
        "",
    )
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


def _seal(folder: Path, manifest: dict, names: Iterable[str]) -> None:
    """Stamp ``manifest`` with the sha256 of each of ``names`` in ``folder`` and write it there, last.

    ``folder`` is a study's new snapshot; a folder with its manifest is whole.
    """
    manifest["files"] = {name: sha256_file(folder / name) for name in sorted(set(names))}
    write_json(folder / MANIFEST, manifest)


def _rewrite_merged(out: Path, readme: Path | None) -> None:
    """Rewrite the merged files from every study published in ``out``.

    Given a ``readme``, its results block is rewritten too.
    """
    write_merged(out)
    if readme is not None:
        splice_readme(readme, (out / RESULTS).read_text(encoding="utf-8"))


def publish(
    studies: Iterable[str], configfile: Path, out: Path = PUBLISHED, readme: Path | None = None
) -> None:
    """Publish each of ``studies`` from the finished build here.

    Then rewrite the merged files and the README block.
    """
    from dpdl.config import load_config
    from dpdl.targets import plan

    recover(out, *([readme] if readme is not None else []))
    config = load_config(configfile)
    buildable = plan(config).buildable
    builds = {
        study: (built_readings(study), narrowed_readings(study, config, buildable)) for study in studies
    }
    # each run file read once: for this check and for the compute record
    provenances, in_readings = {}, {}
    # the runs were made with the config published, before writing
    for study, (built, narrowed) in builds.items():
        provenances[study] = run_provenances(study)
        different = settings_problems(
            study, config, provenances[study], study_module(study).runs(config, buildable)
        )
        in_readings[study] = {}
        # each reading's runs, with the reading's config
        for name in (name for name in built if name != DEFAULT):
            runs = reading_provenances(study, name, narrowed[name]["runs"] if name in narrowed else None)
            within = reading_folder(study, name).as_posix() + "/"
            settings = reading_config(config, study, name)
            grid = set(study_module(study).runs(settings, buildable))
            runs = {path: run for path, run in runs.items() if not unused_seed(path, within, grid)}
            in_readings[study] |= runs
            named = {path.removeprefix(within): provenance for path, provenance in runs.items()}
            different += settings_problems(study, settings, named, grid, reading=name)
        if different:
            raise DpdlError(different[0])
    # every built verdict is what its tables give, before anything is written
    refuse_misjudged(builds, config)
    for study in builds:
        publish_study(
            study, config, configfile.as_posix(), buildable, provenances[study], out, in_readings[study]
        )
    _rewrite_merged(out, readme)


def unused_seed(path: str, within: str, grid: set[str]) -> bool:
    """Whether the run at ``path`` in a reading's folder (``within``) is the main build's, outside its grid.

    A reading's folder is seeded with every finished output of the main build
    (:func:`dpdl.readings.seed_from_main_build`); one of its grid shares the main build's file, one outside it
    (a narrower grid: dvp_pvp's eta_note_grid) is a seed the reading's build never read, neither its run nor
    another config's.
    """
    name = path.removeprefix(within)
    return name not in grid and Path(name).is_file() and Path(path).samefile(name)


def publish_study(
    study: str,
    config: dict,
    configfile: str,
    buildable: Iterable[str],
    provenances: Mapping[str, dict],
    out: Path = PUBLISHED,
    in_readings: Mapping[str, dict] | None = None,
) -> dict:
    """Copy one study's outputs and built readings into ``out/<study>/`` and write its manifest.

    All in one swap: the old snapshot stays whole until the new one is (:func:`write_study`).
    ``provenances``: its main build's runs (:func:`~dpdl.publishing.compute.run_provenances`), and
    ``in_readings`` its built readings' (by their path here), read once by :func:`publish`.

    Besides the figures and tables, the snapshot holds everything the claims are judged from, so
    that :func:`rejudge` needs no build: the per-seed tables (``aggregates/``), the dataset cards
    of the study (``cards/``) and, for each built reading, its scorecard and its per-seed tables
    (``readings/<reading>/aggregates/``).
    """
    snapshot = study_snapshot(study, config, configfile, buildable, provenances, in_readings)
    keep_published_audit(study, snapshot, out / study)
    keep_published_deviations(snapshot, out / study)
    return write_study(out, study, snapshot)


@dataclass
class StudySnapshot:
    """What :func:`publish_study` writes into a study folder.

    All of it is read from the build before the folder is touched.
    """

    outputs: dict[str, Path]  # name in the folder -> the build's file copied there
    texts: dict[str, str]  # name in the folder -> the text written there
    manifest: dict  # the manifest, but its files' sha256


def study_snapshot(
    study: str,
    config: dict,
    configfile: str,
    buildable: Iterable[str],
    provenances: Mapping[str, dict],
    in_readings: Mapping[str, dict] | None = None,
) -> StudySnapshot:
    """Everything :func:`publish_study` writes for ``study``, read from the finished build here.

    Its main build's runs are read already (``provenances``); its built readings' runs are
    ``in_readings``, else read here.
    """
    outputs = study_outputs(study, config, buildable)
    for card in sorted(cards_folder(study).glob("*.json")):
        outputs[f"cards/{card.name}"] = card
    narrowed = narrowed_readings(study, config, buildable)
    for name, path in built_readings(study).items():
        if name != DEFAULT:
            outputs[f"readings/{name}.csv"] = path
            for table in sorted(aggregates_folder(study, reading_folder(study, name)).glob("*.csv")):
                if name not in narrowed or table.name in narrowed[name]["tables"]:
                    outputs[published_aggregate(table.name, name)] = table
    if Path(audit_path(study, "csv")).is_file():
        outputs.update(audit_sources(study))
    if Path(data_premises_path(study)).is_file():
        outputs[DATA_PREMISES] = Path(data_premises_path(study))
    privacy = pd.read_csv(summary_table("privacy", "csv"))
    readings = sorted(built_readings(study), key=[r.name for r in study_readings(study)].index)
    manifest = {
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
    narrowed_runs = {name: found["runs"] for name, found in narrowed.items()}
    wall, gpus = run_compute(study, readings, narrowed_runs, {**provenances, **(in_readings or {})})
    manifest["run_compute_seconds"] = round(wall, 1)
    if gpus:
        manifest["run_gpus"] = gpus
    compute = aggregate_compute(study, configfile, dict(provenances))  # a copy: it keeps what it reads
    manifest |= compute_record(study, config, compute, provenances, Path(claims_path(study, "csv")))
    chain = published_chain(outputs)  # the top of the build's hash chain (none from a build made before it)
    broken = published_breaks(outputs, chain, fix="rebuild it with snakemake before publishing")
    if broken:  # a file edited in the build after its step wrote it, or after another step read it
        raise DpdlError(f"{study}: not published: {broken[0]}")
    if chain:
        manifest["chain"] = chain
    texts = {"privacy.csv": privacy[privacy["study"] == study].to_csv(index=False, lineterminator="\n")}
    # the premise ledger of its audited cells (else write_merged adds it: one more swap)
    if AUDIT_TABLE in outputs:
        texts[LEDGER] = ledger_text(study)
    built = StudySnapshot(outputs, texts, manifest)
    stamp_built_audit(built, config, configfile)
    return built


def stamp_built_audit(snapshot: StudySnapshot, config: dict, configfile: str) -> None:
    """Stamp the manifest's ``audit`` and ``data_premises`` where ``snapshot`` holds its build's own.

    As :func:`publish_audits` stamps them (the code that published, the config file, the audit's config and
    CPU seconds; the data section the premises were measured with), so that a build made with the audit is
    published whole by one command.
    """
    manifest = snapshot.manifest
    if AUDIT_TABLE in snapshot.outputs:
        audit_json = snapshot.outputs["audit/audit.json"]
        manifest["audit"] = _audit_stamp(manifest["code"], configfile, config, audit_json)
    if DATA_PREMISES in snapshot.outputs:
        manifest["data_premises"] = _premises_stamp(manifest["code"], configfile, config)


def _audit_stamp(code: dict, configfile: str, config: dict, audit_json: Path) -> dict:
    """The manifest's ``audit``: the code and config file that published it, the audit's config, its CPU seconds."""
    cpu_seconds = read_json(audit_json)["timing"]["cpu_seconds"]
    return {"code": code, "configfile": configfile, "config": config["audit"], "cpu_seconds": cpu_seconds}


def _premises_stamp(code: dict, configfile: str, config: dict) -> dict:
    """The manifest's ``data_premises``: the code and config file that published them, the data section."""
    return {"code": code, "configfile": configfile, "data": config["data"]}


def keep_published_audit(study: str, snapshot: StudySnapshot, folder: Path) -> None:
    """Carry the audit and data premises published in ``folder`` into ``snapshot`` where its build has none.

    Each was published by its own command (``dpdl publish --audit``, ``--data-premises``) with the code and
    config that made it, the manifest's ``audit`` and ``data_premises``, and tests the mechanism or the data,
    not the runs: a build run without the audit (``audit.enabled: false``) republishes the runs and keeps them,
    byte for byte with their stamps and chain records, the privacy table's audit columns and the ledger
    recomputed as ``publish --audit`` computes them. A carried file that is not what the old manifest says is
    refused.
    """
    if not (folder / MANIFEST).is_file():
        return
    previous = read_json(folder / MANIFEST)
    carried = {
        key: names
        for key, names, built in (
            ("audit", AUDIT_FILES, AUDIT_TABLE),
            ("data_premises", (DATA_PREMISES,), DATA_PREMISES),
        )
        if key in previous and built not in snapshot.outputs
    }
    chain = dict(snapshot.manifest.get("chain", {}))
    for key, names in carried.items():
        for name in names:
            if previous["files"].get(name) != sha256_file(folder / name):
                raise DpdlError(
                    f"{folder / name}: not the file its manifest names, so its {key} is not carried into the new "
                    f"snapshot; publish it again (`dpdl publish --{key.replace('_', '-')}`) or restore it"
                )
            snapshot.texts[name] = (folder / name).read_text(encoding="utf-8")
            if name in previous.get("chain", {}):
                chain[name] = previous["chain"][name]
        snapshot.manifest[key] = previous[key]
    if chain:
        snapshot.manifest["chain"] = dict(sorted(chain.items()))
    if "audit" in carried:
        privacy = pd.read_csv(io.StringIO(snapshot.texts["privacy.csv"]))
        audited = privacy_with_audit(privacy, {study: read_audit(folder / AUDIT_TABLE)})
        snapshot.texts["privacy.csv"] = audited.to_csv(index=False, lineterminator="\n")
        snapshot.texts[LEDGER] = ledger_text(study)


def keep_published_deviations(snapshot: StudySnapshot, folder: Path) -> None:
    """Carry the data deviations published in ``folder`` into ``snapshot``, byte for byte with their stamps.

    Each was published from a build of its own (:func:`publish_deviation`), which a build of the study's
    default does not replace; a carried file that is not what the old manifest says is refused.
    """
    if not (folder / MANIFEST).is_file():
        return
    previous = read_json(folder / MANIFEST)
    names = [name for name in previous["files"] if name.startswith(f"{PUBLISHED_DEVIATIONS}/")]
    for name in names:
        if previous["files"][name] != sha256_file(folder / name):
            raise DpdlError(
                f"{folder / name}: not the file its manifest names, so its data deviation is not carried into "
                "the new snapshot; publish it again (`dpdl publish --deviation`) or restore it"
            )
        snapshot.outputs[name] = folder / name
    chain = {name: entry for name, entry in previous.get("chain", {}).items() if name in names}
    if chain:
        snapshot.manifest["chain"] = dict(sorted({**snapshot.manifest.get("chain", {}), **chain}.items()))
    if "deviations" in previous:
        snapshot.manifest["deviations"] = previous["deviations"]


def publish_deviation(
    study: str, name: str, configfile: Path, out: Path = PUBLISHED, readme: Path | None = None
) -> None:
    """Add the data deviation ``name`` of ``study``, built here, to its published snapshot (issue 62).

    The build here is the deviation's own, of a config file it declares
    (:class:`~dpdl.studies.common.DataDeviation`), checked as :func:`publish` checks a build: its runs
    made with that config, its verdicts what its per-seed tables give. Its scorecard, per-seed tables,
    tables (with those written from its dataset cards, such as dp_iadmm's Table 1), figures and dataset
    cards go into ``out/<study>/deviations/<name>/`` (replacing an earlier one's), and the manifest's
    ``deviations`` records the code and config that made them and their runs' compute. The study's
    default and readings are left as they are, and the merged files rewritten.
    """
    from dpdl.config import load_config
    from dpdl.targets import card_table, plan

    recover(out, *([readme] if readme is not None else []))
    require_published([study], out, "publish the study before a data deviation of it")
    declared = {deviation.name: deviation for deviation in study_module(study).DATA_DEVIATIONS}
    if name not in declared:
        raise ConfigError(
            f"--deviation: {study} declares no data deviation {name!r}; declared: {', '.join(declared) or 'none'}"
        )
    if configfile.as_posix() not in declared[name].configfiles:
        raise ConfigError(
            f"--configfile: {study}'s data deviation {name} is built from one of "
            f"{', '.join(declared[name].configfiles)}, not {configfile}"
        )
    config = load_config(configfile)
    buildable = plan(config).buildable
    provenances = run_provenances(study)
    different = settings_problems(study, config, provenances, study_module(study).runs(config, buildable))
    if different:
        raise DpdlError(different[0])
    refuse_misjudged({study: ({DEFAULT: Path(claims_path(study, "csv"))}, {})}, config)
    outputs = study_outputs(study, config, buildable)
    for card in sorted(cards_folder(study).glob("*.json")):
        outputs[f"cards/{card.name}"] = card
    for table, ext in itertools.product(study_module(study).CARD_TABLES, ("csv", "md")):
        written = Path(card_table(study, table, ext))  # from its dataset cards: dp_iadmm's Table 1
        if written.is_file():
            outputs[f"tables/{table}.{ext}"] = written
    prefix = published_deviation(name)
    sources = {f"{prefix}/{inner}": path for inner, path in outputs.items()}
    chain = published_chain(sources)
    broken = published_breaks(sources, chain, fix="rebuild it with snakemake before publishing")
    if broken:
        raise DpdlError(f"{study}: data deviation {name} not published: {broken[0]}")
    wall, gpus = run_compute(study, [DEFAULT], None, provenances)
    record = {
        "code": _code_without(out, readme),
        "configfile": configfile.as_posix(),
        "config": {key: config[key] for key in ("data", study)},
        "run_compute_seconds": round(wall, 1),
        **({"run_gpus": gpus} if gpus else {}),
    }
    manifest = read_json(out / study / MANIFEST)
    with study_transaction(out, study, keep=True) as folder:
        shutil.rmtree(folder / prefix, ignore_errors=True)  # published again: its files replaced
        kept = {n: digest for n, digest in manifest["files"].items() if not n.startswith(f"{prefix}/")}
        for inner, source in sources.items():
            copy_into(source, folder / inner)
        old_chain = {n: e for n, e in manifest.get("chain", {}).items() if not n.startswith(f"{prefix}/")}
        if old_chain or chain:
            manifest["chain"] = dict(sorted({**old_chain, **chain}.items()))
        manifest["deviations"] = {**manifest.get("deviations", {}), name: record}
        _seal(folder, manifest, {*kept, *sources})
    _rewrite_merged(out, readme)


def write_study(out: Path, study: str, snapshot: StudySnapshot) -> dict:
    """Write ``snapshot`` as ``out/<study>``, whole, in one swap; return the manifest written.

    The swap is :func:`dpdl.publishing.staging.study_transaction`: killed or out of disk space at
    any point, ``out/<study>`` is the old snapshot or the new one.
    """
    manifest = dict(snapshot.manifest)
    with study_transaction(out, study) as staged:
        for count, (name, source) in enumerate(snapshot.outputs.items()):
            copy_into(source, staged / name)
            if count == 0:
                fault_point("copying")
        for name, text in snapshot.texts.items():
            write_text(staged / name, text)
        manifest["files"] = {
            name: sha256_file(staged / name) for name in sorted([*snapshot.outputs, *snapshot.texts])
        }
        fault_point("manifest")
        write_json(staged / MANIFEST, manifest)  # last: a folder with its manifest is whole
    return manifest


def publish_audits(
    studies: Iterable[str], configfile: Path, out: Path = PUBLISHED, readme: Path | None = None
) -> None:
    """Copy each study's audit and, where built, its data premises into ``out/<study>/audit/``.

    The audit is ``results/audit/<study>.*``; the premises measured on its data,
    ``results/audit/<study>_data_premises.csv``. The rest is left; every study's audit must be there
    before any is copied.

    The manifest gains ``audit`` (the code and config that ran it, its CPU seconds), the study's
    ``privacy.csv`` its eps_LB column, and the merged files are rewritten: the audit judges the
    study's privacy claims. The study must be published already.
    """
    from dpdl.config import load_config

    recover(out, *([readme] if readme is not None else []))
    require_published(studies, out, "publish the study before its audit")
    config = load_config(configfile)
    sources_of = {study: audit_sources(study) for study in studies}
    for study, sources in sources_of.items():  # every study's audit is there before any is copied
        missing = [str(p) for p in sources.values() if not p.is_file()]
        if missing:
            raise DpdlError(
                f"{study}: {missing[0]} not built; run `snakemake audit --configfile {configfile}` first"
            )
    for study, sources in sources_of.items():
        manifest = read_json(out / study / MANIFEST)
        # the study's next snapshot, swapped in whole
        with study_transaction(out, study, keep=True) as folder:
            for name, source in sources.items():
                copy_into(source, folder / name)
            _chain_of(manifest, sources)
            audit = read_audit(folder / AUDIT_TABLE)
            privacy = privacy_with_audit(pd.read_csv(folder / "privacy.csv"), {study: audit})
            write_text(folder / "privacy.csv", privacy.to_csv(index=False, lineterminator="\n"))
            write_text(folder / LEDGER, ledger_text(study))
            manifest["audit"] = _audit_stamp(
                _code_without(out, readme), configfile.as_posix(), config, folder / "audit" / "audit.json"
            )
            names = {*manifest["files"], *sources, LEDGER}
            # built with the audit where its data could be prepared
            if Path(data_premises_path(study)).is_file():
                _add_data_premises(study, config, configfile, folder, manifest, out, readme)
                names.add(DATA_PREMISES)
            _seal(folder, manifest, names)
    _rewrite_merged(out, readme)


def publish_data_premises(
    studies: Iterable[str], configfile: Path, out: Path = PUBLISHED, readme: Path | None = None
) -> None:
    """Copy each study's premises measured on its prepared data into its snapshot, alone.

    ``results/audit/<study>_data_premises.csv`` is copied into
    ``out/<study>/audit/data_premises.csv`` alone (:func:`publish_audits` copies it with the audit);
    the manifest's ``data_premises`` is stamped and the merged files rewritten: the table judges the
    study's premise claims.
    """
    from dpdl.config import load_config

    recover(out, *([readme] if readme is not None else []))
    require_published(studies, out, "publish the study before its data premises")
    config = load_config(configfile)
    for study in studies:
        manifest = read_json(out / study / MANIFEST)
        with study_transaction(out, study, keep=True) as folder:
            _add_data_premises(study, config, configfile, folder, manifest, out, readme)
            _seal(folder, manifest, {*manifest["files"], DATA_PREMISES})
    _rewrite_merged(out, readme)


def _add_data_premises(
    study: str, config: dict, configfile: Path, folder: Path, manifest: dict, out: Path, readme: Path | None
) -> None:
    """Copy ``study``'s data premises into the new snapshot ``folder``; stamp the manifest's.

    The premises are those measured on its data; the stamp is ``manifest``'s ``data_premises``. Its
    files' sha256 are the caller's, with the manifest written last.
    """
    source = Path(data_premises_path(study))
    if not source.is_file():
        raise DpdlError(f"{study}: {source} not built; run `snakemake audit --configfile {configfile}` first")
    read_data_premises(source)  # a table of the right columns, before the manifest names it
    copy_into(source, folder / DATA_PREMISES)
    _chain_of(manifest, {DATA_PREMISES: source})
    manifest["data_premises"] = _premises_stamp(_code_without(out, readme), configfile.as_posix(), config)


def publish_compute(studies: Iterable[str], configfile: Path, out: Path = PUBLISHED) -> None:
    """Add to each study's snapshot the compute behind its tables, measured by a rebuild here.

    The rebuild builds the study's default grid.

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

    recover(out)
    require_published(studies, out, "--compute adds to a published study")
    config = load_config(configfile)
    for study in studies:
        folder = out / study
        manifest = read_json(folder / MANIFEST)
        # the runs behind its tables, read once (a bad one is named before the tables)
        read: dict[str, dict] = {}
        compute = aggregate_compute(study, configfile.as_posix(), read)
        tables = sorted(name for name in manifest["files"] if name.startswith(f"{PUBLISHED_AGGREGATES}/"))
        built = aggregates_folder(study)
        found = {name: table_difference(built / Path(name).name, folder / name) for name in tables}
        differ = [name for name, difference in found.items() if name not in compute or difference is None]
        if differ:
            raise DpdlError(
                f"{study}: the build here did not make {differ[0]} with the snapshot's numbers "
                f"({len(differ)} of {len(tables)} tables differ or are missing), "
                f"so its compute is not theirs; "
                f"build {claims_path(study, 'csv')} with --configfile {configfile}, or publish this build"
            )
        largest: dict[str, float] = {}
        for difference in found.values():
            for column, value in difference.items():
                largest[column] = max(largest.get(column, 0.0), value)
        provenances = run_provenances(study, read)  # then the others, after the tables were compared
        manifest |= compute_record(study, config, compute, provenances, folder / "claims.csv")
        manifest["compute_measured"] = {
            "code": _code_without(out, None),
            "machine": machine(),
            "configfile": configfile.as_posix(),
            "runs": len(provenances),
            "tables": len(tables),
            "tables_same_bytes": sum(not difference for difference in found.values()),
            "largest_relative_difference": {
                column: float(f"{value:.2g}") for column, value in sorted(largest.items())
            },
            "tolerance": SAME_NUMBERS_RTOL,
        }
        try:
            write_json(folder / MANIFEST, manifest)  # its one file changed: written beside it, then renamed
        except OSError as err:
            raise disk_error(folder / MANIFEST, err, "it is left as it was") from None


def _chain_of(manifest: dict, sources: dict[str, Path]) -> None:
    """Put in ``manifest``'s chain the records of the build's ``sources`` it now holds.

    ``sources`` maps a name in the study folder to a file; their records take the place of those of
    the files they replace.
    """
    chain = {name: entry for name, entry in manifest.get("chain", {}).items() if name not in sources}
    chain |= published_chain(sources)
    manifest.pop("chain", None)
    if chain:
        manifest["chain"] = dict(sorted(chain.items()))


def _code_without(out: Path, readme: Path | None) -> dict:
    """The code version, not counting the snapshot and the README a command rewrites (its outputs)."""
    code = code_version()
    outputs = (f"{out.as_posix().rstrip('/')}/", *([readme.as_posix()] if readme is not None else []))
    code["modified_files"] = [f for f in code["modified_files"] if not f[3:].startswith(outputs)]
    return code


def rejudge(out: Path = PUBLISHED, readme: Path | None = None) -> list[str]:
    """Judge every claim of every published study again from the snapshot alone; rewrite merged files.

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
    recover(out, *([readme] if readme is not None else []))
    manifests = published_studies(out)
    if not manifests:
        raise DpdlError(f"{out}: no published study (no <study>/{MANIFEST}) to judge again")
    judged_by = _code_without(out, readme)
    for study, manifest in manifests.items():
        # the study's next snapshot, swapped in whole
        with study_transaction(out, study, keep=True) as folder:
            lines += _rejudge_study(study, manifest, folder, judged_by)
    _rewrite_merged(out, readme)
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
    return f"{len(after)} claims, {len(changes)} verdicts changed" + (
        ": " + "; ".join(changes) if changes else ""
    )


def _rejudge_study(study: str, manifest: dict, folder: Path, judged_by: dict) -> list[str]:
    """:func:`rejudge` of one study, in ``folder``.

    ``folder`` is a copy of its snapshot without the manifest, which is written last.
    """
    lines = []
    judged, engines = judging_plan(study, manifest, folder)
    baseline = folder / f"{published_reading(DEFAULT)}.csv"
    if any(engine != CURRENT_ENGINE for engine in engines.values()) and not baseline.is_file():
        shutil.copyfile(folder / "claims.csv", baseline)  # the default as the retired engine judged it
        manifest["files"][f"{published_reading(DEFAULT)}.csv"] = ""
    for name, (source, settings) in judged.items():
        target = folder / scorecard_name(name)
        before = pd.read_csv(target, dtype=str, keep_default_na=False) if target.is_file() else None
        card = judged_card(study, source, settings, folder)
        write_text(target, card_text(card))
        # judged from the tables its build judged it from
        if scorecard_name(name) in manifest.get("chain", {}):
            manifest["chain"][scorecard_name(name)] = rejudged(
                manifest["chain"][scorecard_name(name)], folder, target
            )
        lines.append(f"{study}/{name}: {_changed(before, card)}")
        if name != DEFAULT:
            engines[name] = CURRENT_ENGINE
            manifest["files"][scorecard_name(name)] = ""
    for name, (source, settings) in deviation_plan(study, manifest, folder).items():
        target = source / scorecard_name(DEFAULT)
        before = pd.read_csv(target, dtype=str, keep_default_na=False)
        card = judged_card(study, source, settings, source)  # its cards are in its folder
        write_text(target, card_text(card))
        inner = f"{published_deviation(name)}/{scorecard_name(DEFAULT)}"
        if inner in manifest.get("chain", {}):
            manifest["chain"][inner] = rejudged(manifest["chain"][inner], folder, target)
        lines.append(f"{study}/deviation {name}: {_changed(before, card)}")
    order = [r.name for r in study_readings(study)]
    manifest["readings"] = sorted({*manifest["readings"], *judged}, key=order.index)
    manifest["reading_engines"] = {name: engines[name] for name in manifest["readings"][1:]}
    manifest["judged"] = judged_by
    _seal(folder, manifest, manifest["files"])
    return lines
