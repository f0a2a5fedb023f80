"""Where every artifact lives, and the list of artifacts a configuration promises.

The Snakefile's ``rule all`` and ``dpdl check`` both take their target lists from here.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from dpdl.data.availability import BUILD, FEMNIST, Availability, availability
from dpdl.data.fetch import mirror_from
from dpdl.data.prepared import options
from dpdl.paths import PROCESSED, audit_path, data_premises_path, scorecard_path, summary_table
from dpdl.readings import DEFAULT, READING_SEPARATOR, reading_scorecard, readings_path, study_readings
from dpdl.studies import ALL, prepared_dataset, prepared_datasets, prepared_names, study_module
from dpdl.studies.common import claims_path

RAW_DIR = Path("data/raw")
TABLES_DIR = Path("results/tables")
TABLE_EXTENSIONS = ("csv", "md")


def prepared_arrays(name: str) -> str:
    """Path of a prepared dataset's arrays, e.g. ``data/processed/wddp/kdd.npz``."""
    return str(PROCESSED / f"{name}.npz")


def prepared_card(name: str) -> str:
    """Path of a prepared dataset's JSON card."""
    return str(PROCESSED / f"{name}.json")


def datasets_table(ext: str) -> str:
    """Path of the table with one row per prepared dataset."""
    return str(TABLES_DIR / f"datasets.{ext}")


def card_table(study: str, name: str, ext: str) -> str:
    """Path of a table ``study`` writes from its datasets' cards alone (its ``CARD_TABLES``).

    dp_iadmm's Table 1, for example, is ``results/tables/dp_iadmm_table1.csv``.
    """
    return str(TABLES_DIR / f"{study}_{name}.{ext}")


def _enabled(config: dict) -> list[str]:
    """The studies ``config`` enables, in the registry's order."""
    return [study for study in ALL if study in config["studies"]]


def table_targets(config: dict) -> list[str]:
    """The dataset tables ``config`` promises: the datasets table and each enabled study's card tables."""
    paths = [datasets_table(ext) for ext in TABLE_EXTENSIONS]
    for study in _enabled(config):
        names = study_module(study).CARD_TABLES
        paths += [card_table(study, name, ext) for name in names for ext in TABLE_EXTENSIONS]
    return paths


def plan(config: dict, argv: list[str] | None = None) -> Availability:
    """Which prepared datasets of ``config`` can be built on this machine (cache, mirror, network).

    ``argv``, Snakemake's command line, is the build a fix suggests to rerun (see :func:`build_command`).
    """
    datasets = [prepared_dataset(name) for name in prepared_names(config)]
    result = availability(config, RAW_DIR, mirror_from(config["data"]["mirror"]), datasets)
    result.build = build_command(argv or [])
    return result


def build_command(argv: list[str]) -> str:
    """The build a fix reruns: the user's own ``snakemake`` command line when ``argv`` is one.

    Otherwise it is the README's (:data:`BUILD`).
    """
    program = Path(argv[0]).name if argv else ""
    if len(argv) > 1 and (program == "snakemake" or argv[0].endswith("snakemake/__main__.py")):
        return shlex.join(["snakemake", *argv[1:]])
    return BUILD


def prepare_options(name: str, config: dict, available: Callable[[], Availability]) -> dict:
    """The options of prepared dataset ``name``'s job (the rule's params: a change reruns it).

    Its config values and, for a FEMNIST built from the shards obtainable here, the files it is
    built without, so that obtaining one of them reruns it. ``available`` is called for FEMNIST only.
    """
    opts = options(prepared_dataset(name), config)
    if name == FEMNIST and opts["missing_shards"] == "use_available":
        if missing := available().missing_files(name):
            opts["missing_files"] = missing
    return opts


def missing_shards_stop(config: dict, available: Availability) -> str | None:
    """The one line that stops a build that needs a FEMNIST shard it cannot obtain; None otherwise.

    That is a build whose config says ``data.femnist.missing_shards: fail`` while a selected FEMNIST
    shard file cannot be obtained here and some output of the config uses FEMNIST.

    The planner would skip FEMNIST (its outputs are left out as unavailable data), which is what
    ``use_available`` does for a FEMNIST without any shard of a split, not what ``fail`` promises (issue 61
    item 7). A config narrowed to MNIST (``dp_iadmm.cells``) promises nothing of FEMNIST and is not stopped.
    """
    status = available.datasets.get(FEMNIST)
    if status is None or not status.missing or config["data"]["femnist"]["missing_shards"] != "fail":
        return None
    others = set(available.buildable) - {FEMNIST}
    studies = [study_module(study) for study in _enabled(config)]
    with_femnist = {p for m in studies for p in m.targets(config, others | {FEMNIST})}
    without = {p for m in studies for p in m.targets(config, others)}
    if with_femnist <= without:
        return None
    paths = [m.remote.path for m in status.missing]
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return (
        f"{FEMNIST}: {len(paths)} of its {status.files} selected shard files cannot be obtained "
        f"here ({shown}) and data.femnist.missing_shards is 'fail'; fix: {available.fix(FEMNIST)}; "
        "or set data.femnist.missing_shards: use_available to build it from the shards at hand"
    )


def default_targets(config: dict, available: Availability) -> list[str]:
    """Everything the default target builds: buildable prepared datasets, tables, study outputs."""
    paths = []
    for name in prepared_names(config):
        if name in available.buildable:
            paths += [prepared_arrays(name), prepared_card(name)]
    return paths + table_targets(config) + default_study_targets(config, available) + summary_targets(config)


def default_study_targets(config: dict, available: Availability) -> list[str]:
    """What the studies ``config`` enables promise, given the datasets that can be built here."""
    buildable = set(available.buildable)
    return [path for study in _enabled(config) for path in study_module(study).targets(config, buildable)]


def summary_targets(config: dict) -> list[str]:
    """The cross-study outputs: the merged scorecard, the privacy and provenance tables (and the readings)."""
    paths = [scorecard_path(ext) for ext in ("csv", "md", "html")]
    paths += [readings_path(ext) for ext in TABLE_EXTENSIONS] if config["readings"] else []
    paths += audit_tables(config, (*TABLE_EXTENSIONS, "json")) if config["audit"]["enabled"] else []
    paths += data_premise_tables(config) if config["audit"]["enabled"] else []
    return paths + [
        summary_table(name, ext) for name in ("privacy", "provenance") for ext in TABLE_EXTENSIONS
    ]


def audit_tables(config: dict, extensions=("csv",)) -> list[str]:
    """The audit tables of the studies ``config`` enables.

    The audit needs no dataset: its data are generated.
    """
    return [audit_path(study, ext) for study in _enabled(config) for ext in extensions]


def data_premise_tables(config: dict) -> list[str]:
    """The tables of the premises measured on the data of the studies ``config`` enables.

    There is one per study, written from the datasets that can be built here
    (:mod:`dpdl.audit.data_premises`).
    """
    return [data_premises_path(study) for study in _enabled(config)]


def study_prepared_data(study: str, available: Availability) -> dict[str, list[str]]:
    """The arrays and cards of ``study``'s prepared datasets that can be built here."""
    names = [name for name in available.buildable if name.split("/")[0] == study]
    return {"arrays": [prepared_arrays(n) for n in names], "cards": [prepared_card(n) for n in names]}


def skipped_data(study: str, available: Availability, config: dict | None = None) -> dict[str, str]:
    """Each prepared dataset of ``study`` that cannot be built here -> the data report's one line on it.

    With ``config``, it also maps each one its config leaves out (``wddp.datasets``) to a line that says so.
    """
    ours = [name for name in available.skipped if name.split("/")[0] == study]
    lines = {name.split("/")[1]: available.headline(name) for name in ours}
    if config is not None:
        selected = set(prepared_names(config))
        for name, record in prepared_datasets().items():
            if record.study == study and name not in selected:
                lines[record.dataset] = f"{name}: not built, {study}.datasets in the config leaves it out"
    return lines


def reading_scorecards(config: dict, available: Availability) -> dict[str, str]:
    """``<study>__<reading> -> scorecard`` for each reading of each study whose scorecard the config promises.

    The default reading's scorecard is the main build's; the others are built in their own folders.
    """
    cards = {}
    for path in study_scorecards(config, available):
        study = Path(path).stem
        for reading in study_readings(study):
            own = path if reading.name == DEFAULT else reading_scorecard(study, reading.name)
            cards[f"{study}{READING_SEPARATOR}{reading.name}"] = own
    return cards


def study_scorecards(config: dict, available: Availability) -> list[str]:
    """The per-study scorecards ``config`` promises (none for a study whose data cannot be built)."""
    promised = set(default_study_targets(config, available))
    return [claims_path(s, "csv") for s in ALL if claims_path(s, "csv") in promised]


def study_runs(config: dict, buildable: set[str]) -> list[str]:
    """Every run artifact of the studies ``config`` enables."""
    return [path for study in _enabled(config) for path in study_module(study).runs(config, buildable)]
