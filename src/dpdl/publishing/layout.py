"""The published snapshot's layout: which build outputs a study's folder holds and under which names.

``published/<study>/`` holds a study's scorecard (``claims.csv``), its figures as PNG
(``figures/``), the tables and per-seed aggregates its figures and claims are drawn from
(``tables/``, ``aggregates/``), its dataset cards (``cards/``), its built readings (``readings/``),
its published data deviations (``deviations/<name>/``, each laid out as the study folder is), its
audit (``audit/``), the privacy of its runs (``privacy.csv``) and its :data:`MANIFEST`; the merged
files (:mod:`dpdl.publishing.merged`) sit beside the study folders. Nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dpdl.errors import ArtifactError, DataFormatError, DpdlError
from dpdl.io import read_json
from dpdl.paths import PUBLISHED, PUBLISHED_AGGREGATES, aggregates_folder, tables_folder
from dpdl.readings import DEFAULT, reading_config, reading_scorecard, study_readings
from dpdl.runs import load_schema, schema_errors
from dpdl.studies import ALL, study_module
from dpdl.studies.common import claims_path

MANIFEST = "MANIFEST.json"
RESULTS = "RESULTS.md"
AUDIT_TABLE = "audit/audit.csv"  # a study's published audit (publish_audits)
LEDGER = "audit/premises.csv"  # its premise ledger (written with the merged files: a function of the code)
DATA_PREMISES = "audit/data_premises.csv"  # its premises measured on its prepared data (publish_audits)
PUBLISHED_SUFFIXES = (".csv", ".md", ".png")  # figures as PNG only: the PDFs repeat them


def published_name(path: str | Path, study: str) -> str:
    """Where a build output of ``study`` goes inside ``published/<study>/``."""
    path = Path(path)
    prefixes = {
        Path("figures", study): "figures",
        tables_folder(study): "tables",
        aggregates_folder(study): PUBLISHED_AGGREGATES,
    }
    if path == Path(claims_path(study, "csv")):
        return "claims.csv"
    for prefix, folder in prefixes.items():
        if path.parent == prefix:
            return f"{folder}/{path.name}"
    raise ArtifactError(
        f"{path}: not an output dpdl publishes for {study} (figures, tables, aggregates, claims)"
    )


def study_outputs(study: str, config: dict, buildable: Iterable[str]) -> dict[str, Path]:
    """The outputs of ``study`` a snapshot holds (name inside the study folder -> build path)."""
    targets = [Path(t) for t in study_module(study).targets(config, set(buildable))]
    aggregates = sorted(aggregates_folder(study).glob("*.csv"))
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


def narrowed_readings(study: str, config: dict, buildable: Iterable[str]) -> dict[str, dict[str, set[str]]]:
    """The built readings of ``study`` that ``reading_cells`` narrows, with their own tables and runs.

    Each comes with the names of the per-seed tables and the run paths of its own grid: its folder
    also holds the main build's tables and runs of the cells it leaves out (linked in), which are
    not the reading's.
    """
    found = {}
    for name in built_readings(study):
        if f"{study}/{name}" in config.get("reading_cells", {}):
            settings, module = reading_config(config, study, name), study_module(study)
            tables = {Path(path).name for path in module.targets(settings, set(buildable))}
            found[name] = {"tables": tables, "runs": set(module.runs(settings, set(buildable)))}
    return found


def require_published(studies: Iterable[str], out: Path, fix: str) -> None:
    """Stop at the first of ``studies`` that ``out`` does not hold, saying ``fix``."""
    unpublished = [study for study in studies if not (out / study / MANIFEST).is_file()]
    if unpublished:
        raise DpdlError(f"{unpublished[0]}: not published in {out}; {fix}")


def manifest_problems(study: str, manifest: object) -> list[str]:
    """What is wrong with a study's manifest before any of it is trusted (issue 61 item 5).

    Its schema (``schemas/manifest.schema.json``: commits as hex, file names relative and inside the
    folder, the config file under ``config/``), its ``study`` the folder's, its readings the study's.
    """
    errors = schema_errors(manifest, load_schema("manifest"))
    if errors or not isinstance(manifest, dict):
        return errors
    declared = {reading.name for reading in study_readings(study)} | {DEFAULT}
    if manifest["study"] != study:
        errors.append(f"study: {manifest['study']!r}, but the manifest is in {study}'s folder")
    errors += [
        f"readings: {name!r} is not one of {study}'s readings"
        for name in manifest["readings"]
        if name not in declared
    ]
    deviations = {deviation.name for deviation in study_module(study).DATA_DEVIATIONS}
    errors += [
        f"deviations: {name!r} is not one of {study}'s data deviations"
        for name in manifest.get("deviations", {})
        if name not in deviations
    ]
    return errors


def read_manifest(out: Path, study: str) -> dict:
    """A study's manifest, checked (:func:`manifest_problems`); a DataFormatError naming the first problem."""
    path = out / study / MANIFEST
    manifest = read_json(path)
    problems = manifest_problems(study, manifest)
    if problems:
        raise DataFormatError(
            f"{path}: {problems[0]}; a manifest is written by `dpdl publish`: publish the study again"
        )
    return manifest  # type: ignore[return-value]


def published_studies(out: Path = PUBLISHED) -> dict[str, dict]:
    """The manifest of every study published in ``out``, in study order.

    Each is checked (:func:`read_manifest`).
    """
    return {study: read_manifest(out, study) for study in ALL if (out / study / MANIFEST).is_file()}
