"""Where every artifact lives, and the list of artifacts a configuration promises.

The Snakefile's ``rule all`` and ``dpdl check`` both take their target lists from here.
"""

from __future__ import annotations

from pathlib import Path

from dpdl.data.fetch import mirror_from
from dpdl.data.prepared import Availability, availability, prepared_names
from dpdl.studies import IMPLEMENTED, study_module

RAW_DIR = Path("data/raw")
PROCESSED_DIR = Path("data/processed")
TABLES_DIR = Path("results/tables")
TABLE_EXTENSIONS = ("csv", "md")


def prepared_arrays(name: str) -> str:
    """Path of a prepared dataset's arrays, e.g. ``data/processed/wddp/kdd.npz``."""
    return str(PROCESSED_DIR / f"{name}.npz")


def prepared_card(name: str) -> str:
    """Path of a prepared dataset's JSON card."""
    return str(PROCESSED_DIR / f"{name}.json")


def datasets_table(ext: str) -> str:
    """Path of the table with one row per prepared dataset."""
    return str(TABLES_DIR / f"datasets.{ext}")


def table1(ext: str) -> str:
    """Path of Ryu & Kim's Table 1 as reproduced."""
    return str(TABLES_DIR / f"dp_iadmm_table1.{ext}")


def table_targets(config: dict) -> list[str]:
    """The dataset tables ``config`` promises (Table 1 only when dp_iadmm is enabled)."""
    paths = [datasets_table(ext) for ext in TABLE_EXTENSIONS]
    if "dp_iadmm" in config["studies"]:
        paths += [table1(ext) for ext in TABLE_EXTENSIONS]
    return paths


def plan(config: dict) -> Availability:
    """Which prepared datasets of ``config`` can be built on this machine (cache, mirror, network)."""
    return availability(config, RAW_DIR, mirror_from(config["data"]["mirror"]))


def default_targets(config: dict, available: Availability) -> list[str]:
    """Everything the default target builds: buildable prepared datasets, tables, study outputs."""
    paths = []
    for name in prepared_names(config):
        if name in available.buildable:
            paths += [prepared_arrays(name), prepared_card(name)]
    paths += table_targets(config)
    for study in IMPLEMENTED:
        if study in config["studies"]:
            paths += study_module(study).targets(config, set(available.buildable))
    return paths

