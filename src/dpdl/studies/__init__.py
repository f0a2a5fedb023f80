"""The studies: one package per paper, every package the same shape.

``dpdl.studies.<study>`` is a package with these modules, each holding one concern:

==============  ===================================================================================
``grid.py``     the runs, paths and Snakemake input functions a config implies; ``targets`` and
                ``runs`` below
``run.py``      one run (or one batch of seeds): arrays and parameters in, trace and provenance out
``tune.py``     optional: hyperparameter selection and the reference solutions runs are compared to
``aggregate.py``  runs -> one tidy aggregate per figure or table (bands over seeds)
``tables.py``   optional: the study's tables beyond its figures
``figures.py``  aggregate -> figure (PNG and PDF); plotting computes no statistics
``claims.py``   ``CLAIMS``: the paper's checkable statements, judged from the aggregates
``extract.py``  optional: the extractors the claims declare (per-seed tables -> the forms' inputs)
``cli.py``      ``add_commands``: the ``dpdl <study> <step>`` subcommands its rule file calls
==============  ===================================================================================

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

ALL = ("dvp_pvp", "wddp", "dp_iadmm", "dzoa")  # in data-flow order
MODULES = ("grid", "run", "aggregate", "figures", "claims", "cli", "audit")  # every study package has these
OPTIONAL_MODULES = ("tune", "tables", "extract")  # and may have these, under these names only


class Study(Protocol):
    """What a study package exposes (its ``__init__`` re-exports these from its modules)."""

    STUDY: str
    CLAIMS: list[Claim]

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
