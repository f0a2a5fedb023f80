"""The toy's grid: its paths, its prepared dataset and what a config promises."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dpdl.data.partition import size_summary
from dpdl.data.prepared import Built, PreparedDataset
from dpdl.errors import ConfigError
from dpdl.studies.common import PaperReference, claims_path

STUDY = "toy"
TITLE = "Toy, a Laplace-noised mean"  # the report's section and the scorecard's heading
REFERENCE = PaperReference(
    authors="C. Dwork, F. McSherry, K. Nissim and A. Smith",
    title="Calibrating Noise to Sensitivity in Private Data Analysis",
    venue="Theory of Cryptography Conference",
    locator="doi:10.1007/11681878_14",
)
CLAIMS_STEP_KEYS = ()
CARD_TABLES = {}  # no table is written from the dataset's card alone
SHARED_SEEDS = True  # every epsilon draws the seeds 0..seeds-1: a trend is judged within seeds
FIGURES = ("error",)
SEEDS_TABLE = f"results/{STUDY}/aggregates/error_seeds.csv"
BANDS_TABLE = f"results/{STUDY}/aggregates/error.csv"
STATED_EPSILON = 1.0  # the claim of a stated number reads this grid point


def build_synthetic(paths: list[Path], opts: dict) -> Built:
    """``records`` values drawn uniformly in [0, 1] (no raw file)."""
    x = np.random.default_rng(opts["seed"]).uniform(0.0, 1.0, size=(opts["records"], 1))
    stats = {
        "rows": opts["records"],
        "rows_train": opts["records"],
        "rows_test": 0,
        "features": 1,
        "classes": None,
        "class_balance": None,
        "agents": 1,
        "samples_per_agent": size_summary(np.array([opts["records"]])),
    }
    return {"X": x}, stats, ["generated: uniform records in [0, 1]"]


PREPARED = (  # the prepared datasets it reads (dpdl.data.prepared): each option -> the config key it comes from
    PreparedDataset(
        STUDY, "synthetic", build=build_synthetic, options={"records": "toy.records", "seed": "toy.data_seed"}
    ),
)


def check_config(config: dict) -> None:
    if STATED_EPSILON not in config[STUDY]["epsilons"]:
        raise ConfigError(f"toy.epsilons must hold {STATED_EPSILON} (the stated number's grid point)")


def figure_paths(figure: str) -> list[str]:
    return [f"figures/{STUDY}/{figure}.{ext}" for ext in ("png", "pdf")]


def targets(config: dict, buildable: set[str]) -> list[str]:
    if f"{STUDY}/synthetic" not in buildable:
        return []
    figures = [path for figure in FIGURES for path in figure_paths(figure)]
    return [SEEDS_TABLE, BANDS_TABLE, *figures, claims_path(STUDY, "csv"), claims_path(STUDY, "md")]


def runs(config: dict, buildable: set[str]) -> list[str]:
    return []  # one job draws every release; no run artifact


def table_runs(config: dict, table: str) -> list[str]:
    return []


def run_work(config: dict, path: str) -> tuple[str, int]:
    return "release", 1


def settings_json(config: dict) -> str:
    """The toy's config section as JSON (every step's ``--settings``)."""
    return json.dumps(config[STUDY], sort_keys=True)


def recorded_settings(config: dict, path: str) -> dict[str, tuple[str, object]]:
    return {}  # no run artifact
