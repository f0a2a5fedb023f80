"""The studies: one package per paper, every package the same shape, one concern per module.

``dpdl.studies.<study>`` is a package whose modules each hold one concern. Every study has the
fixed modules (``MODULES``), may have the optional ones (``OPTIONAL_MODULES``), and nothing else
but private helpers:

================  =================================================================================
``grid.py``       the runs, paths and Snakemake input functions a config implies (the names the rule
                  file reads); ``targets`` and ``runs`` below
``readings.py``   ``READINGS``: the settings the paper leaves open, one reading per resolution
                  (:mod:`dpdl.readings`)
``run.py``        one run (or one batch of seeds): arrays and parameters in, trace and provenance out
``tune.py``       optional: hyperparameter selection and the reference solutions runs are compared to
``aggregate.py``  runs -> one tidy aggregate per figure or table (bands over seeds)
``tables.py``     optional: the study's tables beyond its figures
``figures.py``    aggregate -> figure (PNG and PDF); plotting computes no statistics
``claims.py``     ``CLAIMS``: the paper's checkable statements, judged from the aggregates
``extract.py``    optional: the extractors the claims declare (per-seed tables -> the forms' inputs)
``audit.py``      the study's part of the privacy audit
``cli.py``        ``add_commands``: the ``dpdl <study> <step>`` subcommands its rule file calls
``_<name>.py``    private: a concern of its own that none of the names above says (e.g. a study's
                  variant grammar or its rules' params), imported by the module it serves; the
                  public module (usually ``grid``) re-exports what callers read
================  =================================================================================

Modules are split by concern, not by length: there is no line cap, only a soft warning in the
tests for a module past ``LONG_MODULE_LINES`` lines (a sign that it may hold two concerns).

The package's ``__init__`` exposes the :class:`Study` protocol, which is all that the workflow's
default target, ``dpdl status``, ``dpdl check`` and the scorecard use. Adding a paper means
filling in the same files and listing it in ``ALL``. Pieces several studies share (bands over
seeds, trend tests, settings parsing, number formatting, the command skeleton) live below the
studies: :mod:`dpdl.aggregate`, :mod:`dpdl.claims` and :mod:`dpdl.studies.common`.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from dpdl.claims import Claim

if TYPE_CHECKING:
    import pandas as pd

    from dpdl.readings import Reading

ALL = ("dvp_pvp", "wddp", "dp_iadmm", "dzoa")  # in data-flow order
MODULES = ("grid", "readings", "run", "aggregate", "figures", "claims", "cli", "audit")  # every study has these
OPTIONAL_MODULES = ("tune", "tables", "extract")  # and may have these; besides them, only private _<name>.py
LONG_MODULE_LINES = 800  # past this a module is worth a look for a second concern (a warning, not a limit)


def is_study_module(name: str) -> bool:
    """Whether ``name`` (a module's file stem) may stand in a study package: fixed, optional or private."""
    return name in MODULES or name in OPTIONAL_MODULES or (name.startswith("_") and name != "__init__")


class Study(Protocol):
    """What a study package exposes (its ``__init__`` re-exports these from its modules)."""

    STUDY: str
    CLAIMS: list[Claim]
    READINGS: tuple[Reading, ...]

    def targets(self, config: dict, buildable: set[str]) -> list[str]:
        """Every artifact the study promises for ``config``, given the prepared datasets buildable here."""
        ...

    def runs(self, config: dict, buildable: set[str]) -> list[str]:
        """Every run artifact among the targets (the privacy table and ``dpdl status`` read them)."""
        ...

    def add_commands(self, commands: argparse._SubParsersAction) -> None:
        """Register ``dpdl <study> <step>``."""
        ...

    def judge_snapshot(self, folder: Path, config: dict) -> pd.DataFrame:
        """The scorecard judged from a published study folder alone (``published/<study>``), with ``config``
        the data and study sections its build used: the same code path as the study's claims step."""
        ...


def study_module(name: str) -> Study:
    """The package of a study."""
    if name not in ALL:
        raise KeyError(f"study {name!r} is not implemented; implemented: {', '.join(ALL)}")
    return cast(Study, importlib.import_module(f"dpdl.studies.{name}"))
