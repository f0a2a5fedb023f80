"""The studies: the registry of papers, one package per paper, every package the same shape.

This module is the one place that lists the studies (:data:`ALL`); everything that needs "each
study" (config validation, the workflow's targets, ``dpdl status`` and ``dpdl check``, the
scorecard and the report, the readings and the audit, publishing) iterates over it through
:func:`study_module`, which returns the package as a :class:`Study`.

``dpdl.studies.<study>`` is a package with these modules, each holding one concern:

================  =================================================================================
``grid.py``       the runs, paths and Snakemake input functions a config implies; ``targets``,
                  ``runs``, ``table_runs``, ``run_work``, ``recorded_settings`` and ``check_config``
``run.py``        one run (or one batch of seeds): arrays and parameters in, trace and provenance out
``aggregate.py``  runs -> one tidy aggregate per figure or table (bands over seeds)
``figures.py``    aggregate -> figure (PNG and PDF); plotting computes no statistics
``claims.py``     ``CLAIMS``: the paper's checkable statements, judged from the aggregates
``cli.py``        ``add_commands``: the ``dpdl <study> <step>`` subcommands its rule file calls
``audit.py``      ``PRIVACY_CLAIMS``, ``AUDIT_CELLS``, ``audit_scores``: the empirical privacy audit;
                  ``PREMISES`` and ``premise_measures`` (the premise ledger), ``mechanism`` (the switch
                  values a config's build releases with, by which each reading's privacy is judged)
``readings.py``   ``READINGS``: the paper's open settings as named switch sets, the default first;
                  ``DATA_DEVIATIONS``: the declared departures from the paper's data (often none)
``tune.py``       optional: hyperparameter selection and the reference solutions runs are compared to
``tables.py``     optional: the study's tables beyond its figures
``extract.py``    optional: the extractors the claims declare (per-seed tables -> the forms' inputs)
``_*.py``         optional, private: a further concern of the study's own (imported by its modules)
================  =================================================================================

A study's ``__init__`` holds only its docstring: :func:`study_module` gives each name of
:class:`Study` from the module :data:`PROTOCOL` names, imported on first use, so a run job (which
needs the grid and the run) never imports the claims, pandas' statistics or the other studies.

Besides its modules, a study has three files the top level reads, found by the registry
(:func:`study_files`): its config schema (the section ``<study>:`` of the config), its Snakemake rule file
(the Snakefile includes every registered study's) and its documentation page. The config's ``studies``
enum and per-study sections come from :data:`ALL` (:func:`config_schema`), and so do the prepared
datasets (each study's ``PREPARED``: :func:`prepared_datasets`) and the tables written from their cards (each
study's ``CARD_TABLES``: :func:`card_tables`). Adding a paper inside the project means
writing its package and those three files and naming it in :data:`BUILTIN`; a package outside
``dpdl.studies`` (a test's toy study) is registered by naming it in the environment variable
``DPDL_EXTRA_STUDIES`` (:data:`EXTRA_STUDIES`), with its three files inside the package. Pieces several
studies share (bands over seeds, trend tests, settings parsing, the reading type, number formatting, the
command skeleton) live below the studies: :mod:`dpdl.aggregate`, :mod:`dpdl.claims` and
:mod:`dpdl.studies.common`.
"""

from __future__ import annotations

import argparse
import copy
import functools
import importlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, cast

from dpdl import schemas
from dpdl.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from dpdl.claims import Claim
    from dpdl.data.prepared import PreparedDataset
    from dpdl.studies.common import DataDeviation, PaperReference, Reading

BUILTIN = ("dvp_pvp", "wddp", "dp_iadmm", "dzoa")  # the papers of dpdl.studies, in data-flow order
# Importable packages outside dpdl.studies to register after them, comma-separated (a test's toy study): each
# package's last name is its study id, and its files lie inside it (STUDY_FILES)
EXTRA_STUDIES = "DPDL_EXTRA_STUDIES"


def _packages() -> dict[str, str]:
    """Each registered study -> its package.

    The studies of :data:`BUILTIN`, in ``dpdl.studies``, come first, then those :data:`EXTRA_STUDIES` names.
    """
    packages = {name: f"{__name__}.{name}" for name in BUILTIN}
    for package in filter(None, (item.strip() for item in os.environ.get(EXTRA_STUDIES, "").split(","))):
        name = package.rpartition(".")[2]
        if name in packages or importlib.util.find_spec(package) is None:
            raise ConfigError(
                f"{EXTRA_STUDIES}: {package!r} is "
                + ("a study registered already" if name in packages else "not an importable package")
                + "; name importable study packages, comma-separated, each once"
            )
        packages[name] = package
    return packages


PACKAGES = _packages()
ALL = tuple(PACKAGES)  # every registered study, in data-flow order
# every study has these
MODULES = ("grid", "readings", "run", "aggregate", "figures", "claims", "cli", "audit")
OPTIONAL_MODULES = ("tune", "tables", "extract")  # and may have these; besides them, only private _<name>.py
LONG_MODULE_LINES = 800  # past this a module is worth a look for a second concern (a warning, not a limit)


def is_study_module(name: str) -> bool:
    """Whether ``name`` (a module's file stem) may stand in a study package: fixed, optional or private."""
    return name in MODULES or name in OPTIONAL_MODULES or (name.startswith("_") and name != "__init__")


class Study(Protocol):
    """What a study exposes, each name defined in the study module :data:`PROTOCOL` gives."""

    STUDY: str  # its id, the name of its package, config section, rule file and output folders
    TITLE: str  # authors and subject: the report's section and the scorecard's heading
    REFERENCE: PaperReference  # the original paper (authors, title, venue, locator): the article cites it
    CLAIMS: list[Claim]
    READINGS: tuple[Reading, ...]  # the default first
    DATA_DEVIATIONS: tuple[DataDeviation, ...]  # the declared departures from the paper's data (may be none)
    CLAIMS_STEP_KEYS: tuple[str, ...]  # config keys read by the claims step alone (a reading of these reuses
    # the default's tables)
    PREPARED: tuple[PreparedDataset, ...]  # the prepared datasets it reads (dpdl.data.prepared)
    SHARED_SEEDS: bool  # every grid point of a figure runs the same seeds (trials): a trend series must carry
    # its seed ids, so the engine judges it within seeds (dpdl.claims refuses one without them)
    CARD_TABLES: dict[
        str, str
    ]  # the paper's tables written from its prepared datasets' cards alone, each name ->
    # its title: `dpdl tables <name>` (the function <name> of its tables module, given its cards by
    # dataset) writes results/tables/<study>_<name>.csv and .md, promised while it is enabled
    # (card_tables)

    def check_config(self, config: dict) -> None:
        """Raise a one-line ConfigError for what the study's schema cannot state (relations between keys)."""
        ...

    def targets(self, config: dict, buildable: set[str]) -> list[str]:
        """Every artifact the study promises for ``config``, given the prepared datasets buildable here."""
        ...

    def runs(self, config: dict, buildable: set[str]) -> list[str]:
        """Every run artifact among the targets (the privacy table and ``dpdl status`` read them)."""
        ...

    def table_runs(self, config: dict, table: str) -> list[str]:
        """Every run artifact the aggregate table ``table`` (a claim's ``aggregate``) reads for ``config``.

        They are those on every dataset, whether or not it can be prepared here; a table not built from runs
        has none.
        """
        ...

    def run_work(self, config: dict, path: str) -> tuple[str, int]:
        """The rate group of the run at ``path`` and the iterations it makes under ``config``.

        Runs in one group cost about the same CPU per iteration: the two project the cost of a run not done
        (``dpdl publish``).
        """
        ...

    def recorded_settings(self, config: dict, path: str) -> dict[str, tuple[str, object]]:
        """What the run at ``path`` (as the build names it) records of ``config``.

        Each provenance field (dotted, ``params.iterations``) -> the config key (in the study's section)
        and the value ``config`` gives it.

        ``dpdl publish`` refuses a run whose field differs
        (:func:`dpdl.publishing.problems.settings_problems`).
        """
        ...

    def add_commands(self, commands: argparse._SubParsersAction) -> None:
        """Register ``dpdl <study>``."""
        ...

    def judge_snapshot(self, folder: Path, config: dict, cards: Path | None = None) -> pd.DataFrame:
        """The scorecard judged from a published study folder alone (``published/<study>``).

        ``config`` is the data and study sections its build used; ``cards`` the folder of the dataset cards it
        reads (a reading's are the study's); the same code path as the study's claims step.
        """
        ...


PROTOCOL = {  # each name of Study: the study module that defines it
    "STUDY": "grid",
    "TITLE": "grid",
    "REFERENCE": "grid",
    "CLAIMS_STEP_KEYS": "grid",
    "SHARED_SEEDS": "grid",
    "PREPARED": "grid",
    "CARD_TABLES": "grid",
    "check_config": "grid",
    "targets": "grid",
    "runs": "grid",
    "table_runs": "grid",
    "run_work": "grid",
    "recorded_settings": "grid",
    "READINGS": "readings",
    "DATA_DEVIATIONS": "readings",
    "CLAIMS": "claims",
    "add_commands": "cli",
    "judge_snapshot": "cli",
}


class _LazyStudy:
    """A study as :class:`Study`: each name imported from its module (:data:`PROTOCOL`) on first use."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> object:
        if attr not in PROTOCOL:
            raise AttributeError(f"a study exposes {', '.join(PROTOCOL)}; not {attr!r}")
        value = getattr(importlib.import_module(f"{PACKAGES[self.name]}.{PROTOCOL[attr]}"), attr)
        setattr(self, attr, value)  # the next lookup finds it without __getattr__
        return value


def _check_name(name: str) -> None:
    if name not in ALL:
        raise KeyError(f"study {name!r} is not implemented; implemented: {', '.join(ALL)}")


@functools.cache
def study_module(name: str) -> Study:
    """A study as :class:`Study`, each of its names imported on first use.

    A job of one study thus never loads the others, and a run job never loads the claims.
    """
    _check_name(name)
    return cast(Study, _LazyStudy(name))


def audit_module(name: str) -> ModuleType:
    """The study's ``audit`` module: the study's privacy claims, audited cells and scores.

    It is imported on first use: the audit's harness loads what the run jobs never need.
    """
    _check_name(name)
    return importlib.import_module(f"{PACKAGES[name]}.audit")


@dataclass(frozen=True)
class StudyFiles:
    """The files of a study that the top level reads: its config schema, rule file and documentation page.

    ``rules`` is relative to the Snakefile's folder for a study of :data:`BUILTIN`, absolute for another.
    """

    schema: Path
    rules: str
    docs: Path | None  # relative to the project's root for a study of BUILTIN


STUDY_FILES = ("schema.yaml", "rules.smk", "README.md")  # a study outside dpdl.studies: inside its package


def study_files(name: str) -> StudyFiles:
    """Where ``name``'s files lie.

    A study of :data:`BUILTIN` has them in the project's folders (``src/dpdl/schemas/``,
    ``workflow/rules/``, ``docs/studies/``), another inside its package (:data:`STUDY_FILES`).
    """
    _check_name(name)
    if name in BUILTIN:
        docs = Path(f"docs/studies/{name}.md")
        return StudyFiles(schemas.path(f"{name}.schema.yaml"), f"workflow/rules/{name}.smk", docs)
    spec = importlib.util.find_spec(PACKAGES[name])
    folder = Path(next(iter(spec.submodule_search_locations)))  # type: ignore[union-attr, arg-type]
    schema, rules, docs = (folder / file for file in STUDY_FILES)
    return StudyFiles(schema, str(rules), docs)


def config_schema() -> dict:
    """The workflow config's schema: ``config.schema.yaml`` with the studies of :data:`ALL` added.

    From :data:`ALL` it gets the ``studies`` enum and default, and one required section per study
    referencing its schema (:func:`study_files`). A new dict each call; its ``$ref`` resolve beside
    ``config.schema.yaml`` (an absolute path for a study outside it).
    """
    schema = copy.deepcopy(schemas.load("config.schema.yaml"))
    studies = schema["properties"]["studies"]
    studies["items"] = {"enum": list(ALL)}
    studies["default"] = list(ALL)
    schema["required"] = [*schema["required"], *ALL]
    for name in ALL:
        file = study_files(name).schema
        ref = file.name if file.parent == schemas.FOLDER else str(file)
        schema["properties"][name] = {"$ref": ref, "default": {}}
    return schema


@functools.cache
def prepared_datasets() -> dict[str, PreparedDataset]:
    """Every prepared dataset of every registered study by ``<study>/<dataset>``, in data-flow order."""
    return {record.name: record for name in ALL for record in study_module(name).PREPARED}


@functools.cache
def card_tables(studies: Sequence[str] = ALL) -> dict[str, str]:
    """The tables ``studies`` write from their prepared datasets' cards alone (each one's ``CARD_TABLES``).

    Each name maps to its study; a name two studies declare is a ConfigError (``dpdl tables <name>`` is one
    command).
    """
    found: dict[str, str] = {}
    for study in studies:
        for name in study_module(study).CARD_TABLES:
            if name in found:
                raise ConfigError(f"card table {name!r} is declared by {found[name]} and {study}; rename one")
            found[name] = study
    return found


def card_table(name: str) -> Callable[[dict[str, dict]], pd.DataFrame]:
    """The function that writes card table ``name`` (:func:`card_tables`).

    It is its study's ``tables.<name>``, given the study's cards by dataset.
    """
    return getattr(importlib.import_module(f"{PACKAGES[card_tables()[name]]}.tables"), name)


def prepared_dataset(name: str) -> PreparedDataset:
    """The record of prepared dataset ``name`` (``wddp/kdd``), or a ConfigError naming those there are.

    It is found in its own study's records (``<study>/<dataset>``): a ``dpdl prepare`` job imports no other
    study's grid.
    """
    study = name.partition("/")[0]
    record = next((r for r in study_module(study).PREPARED if r.name == name), None) if study in ALL else None
    if record is None:
        raise ConfigError(
            f"unknown prepared dataset {name!r}; expected one of {', '.join(prepared_datasets())}"
        )
    return record


def prepared_names(config: dict) -> list[str]:
    """The prepared datasets the enabled studies of ``config`` need, in data-flow order.

    For a study whose config section has a ``datasets`` key (wddp), they are only those it lists.
    """
    return [name for name, record in prepared_datasets().items() if selects(config, record)]


def selects(config: dict, record: PreparedDataset) -> bool:
    """Whether ``config`` needs prepared dataset ``record``.

    It does when its study is enabled and, where the study's section has a ``datasets`` key, lists it.
    """
    chosen = (config.get(record.study) or {}).get("datasets")
    return record.study in config["studies"] and (chosen is None or record.dataset in chosen)
