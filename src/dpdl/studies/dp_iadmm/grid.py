"""The study's artifacts and the rule file's face: output paths, targets, runs and Snakemake inputs.

``workflow/rules/dp_iadmm.smk``, the config validation and the other modules read the grid from
here. What it is built from lives in private modules, one concern each, and is re-exported below:

- :mod:`._variants`: the variant names (``objt``, ``outp_plus``, ``nonprivate_outp``, ...) and
  what each means;
- :mod:`._cells`: the run grid, which run jobs (cells) each aggregate reads at which horizon and
  seeds, and the runs' paths;
- :mod:`._settings`: the section's cross-key checks and the config values each job's rule passes;
- :mod:`._resources`: memory and wall time of a run job.

``section`` below is always the ``dp_iadmm`` section of a config (``config["dp_iadmm"]``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from dpdl.data import prepared
from dpdl.data.prepared import PreparedDataset
from dpdl.studies import common

# The names the rule file, the config validation, the other modules and the tests read from ``grid``.
from dpdl.studies.dp_iadmm._cells import (  # noqa: F401
    AGGREGATES,
    CLAIM_METRICS,
    DATASETS,
    EPSILON_REGEX,
    FIG5_VARIANTS,
    FIGURE_SPECS,
    FIGURES,
    HORIZON_KEYS,
    HORIZONS,
    NOISELESS_RUN_PATH,
    REFERENCE,
    REMARK3_VARIANTS,
    RUN_PATH,
    STUDY,
    TITLE,
    FigureSpec,
    cell_name,
    figure_cells,
    figure_run_paths,
    grid_aggregates,
    grid_gaps,
    horizon_settings,
    job_seeds,
    long_horizon_distinct,
    resolved_horizon,
    run_path,
    seeds,
)
from dpdl.studies.dp_iadmm._resources import (  # noqa: F401
    BASE_MEMORY_MB,
    DATA_SIZES,
    RUNTIME_SAFETY,
    SECONDS_PER_RUN_ITERATION,
    run_memory_mb,
    run_minutes,
)
from dpdl.studies.dp_iadmm._settings import (  # noqa: F401
    ALGORITHM_SWITCHES,
    CLAIM_CONFIG_KEYS,
    CLAIM_SETTING_KEYS,
    DEFAULT_BACKEND,
    OPTIMUM_SETTING_KEYS,
    PARAM_SWITCHES,
    REFERENCE_RUN_SETTING_KEYS,
    RUN_SECTION_KEYS,
    RUN_SETTING_KEYS,
    SWITCHES,
    check_config,
    check_section,
    claim_scale,
    claim_settings,
    optimum_settings,
    run_setting_keys,
    run_settings,
)
from dpdl.studies.dp_iadmm._variants import (  # noqa: F401
    BASE_ALGORITHMS,
    LABELS,
    NOISELESS,
    NONPRIVATE,
    PRIVATE_VARIANT_REGEX,
    VARIANT_PATTERN,
    Variant,
    a_variant,
    is_nonprivate,
    variant,
    variant_a,
)

CLAIMS_STEP_KEYS = ()  # no key is read by the claims step alone: every reading is judged on its own tables
# written from the datasets' cards alone (tables.table1): results/tables/dp_iadmm_table1.{csv,md}
CARD_TABLES = {"table1": "# Ryu & Kim, Table 1: ours (I, J, K, P, mean, stdev) beside the paper's (paper_*)"}
SHARED_SEEDS = (
    True  # every variant and epsilon-bar runs the same seeds (the paper's 10 instances): a trend is judged
)
# within seeds, and a trend claim's extractor that hands the engine series without seed ids is refused
# the prepared datasets it reads (dpdl.data.prepared): each option -> the config key it comes from
PREPARED = (
    PreparedDataset(
        STUDY,
        "mnist",
        build=prepared.build_dp_iadmm_mnist,
        options={"agents": "dp_iadmm.mnist_agents"},
        files=prepared.mnist_files,
    ),
    PreparedDataset(  # built from the shards obtainable; "missing_files" (not a config key) lists the others
        STUDY,
        "femnist",
        prepare=prepared.prepare_femnist,
        options={"shards": "data.femnist.shards", "missing_shards": "data.femnist.missing_shards"},
        files=prepared.femnist_files,
        settle=prepared.settle_femnist,
        optional=frozenset({"missing_files"}),
    ),
)

# --- paths of the outputs -----------------------------------------------------------------------


def figure_paths(figure: str) -> list[str]:
    """The PNG and PDF of a figure."""
    return [f"figures/dp_iadmm/{figure}.{ext}" for ext in ("png", "pdf")]


def aggregate_path(name: str) -> str:
    """The tidy aggregate CSV (mean and 20/80 band over seeds) of a figure or of the Remark 3 table."""
    return f"results/dp_iadmm/aggregates/{name}.csv"


def seeds_path(name: str) -> str:
    """The per-seed table of an aggregate; the claims read it.

    It holds one value per (run, logged iteration, metric).
    """
    return f"results/dp_iadmm/aggregates/{name}_seeds.csv"


def remark3_paths() -> list[str]:
    """The Remark 3 table (CSV and Markdown)."""
    return [f"results/tables/dp_iadmm/remark3.{ext}" for ext in ("csv", "md")]


def optimum_paths() -> list[str]:
    """The table of the minimiser of (1) on each dataset (CSV and Markdown)."""
    return [f"results/tables/dp_iadmm/optimum.{ext}" for ext in ("csv", "md")]


def claims_path(ext: str) -> str:
    """Path of the study's scorecard: ``csv`` or ``md``."""
    return common.claims_path(STUDY, ext)


# --- targets and runs (the Study protocol) ------------------------------------------------------


def available_aggregates(config: dict, buildable: set[str]) -> list[str]:
    """Aggregates of the config's grid (:func:`grid_aggregates`) with a dataset that can be prepared here.

    An aggregate over two datasets is built from those at hand; its claims on the other say data
    unavailable.
    """
    found = grid_aggregates(config[STUDY])
    return [name for name, datasets in found.items() if any(f"{STUDY}/{d}" in buildable for d in datasets)]


def optimum_datasets(buildable: set[str]) -> list[str]:
    """The study's datasets that can be prepared here (the minimiser table covers these)."""
    return [dataset for dataset in DATASETS if f"{STUDY}/{dataset}" in buildable]


def targets(config: dict, buildable: set[str]) -> list[str]:
    """Every artifact the study promises for ``config`` given the buildable prepared datasets."""
    names = available_aggregates(config, buildable)
    paths = [path for name in names for path in (aggregate_path(name), seeds_path(name))]
    paths += [path for name in names if name in FIGURES for path in figure_paths(name)]
    if "remark3" in names:
        paths += remark3_paths()
    if optimum_datasets(buildable):
        paths += optimum_paths()
    if names:
        paths += [claims_path("csv"), claims_path("md")]
    return paths


def runs(config: dict, buildable: set[str]) -> list[str]:
    """Every run artifact the study makes for ``config`` (those of the buildable figures, once each)."""
    names = available_aggregates(config, buildable)
    paths = (path for name in names for path in figure_run_paths(name, config, buildable))
    return list(dict.fromkeys(paths))


def table_runs(config: dict, table: str) -> list[str]:
    """Every run artifact the aggregate table ``table`` reads for ``config``, on every dataset.

    ``table`` is ``fig4_seeds`` or a claim's ``aggregate``. Its runs count whether or not their data can be
    prepared here; none for a table not built from runs.
    """
    name = table.removesuffix("_seeds")
    return figure_run_paths(name, config) if name in AGGREGATES else []


def run_work(config: dict, path: str) -> tuple[str, int]:
    """The rate group of the run at ``path`` and the iterations it makes under ``config``.

    The rate group is its dataset (runs on one dataset cost about the same CPU per iteration); the
    iterations are its horizon's T.
    """
    _, _, _, horizon, dataset, *_ = Path(path).parts  # results/dp_iadmm/runs/<horizon>/<dataset>/...
    return dataset, horizon_settings(config[STUDY], horizon)["iterations"]


# --- input and resource functions of the rules (bound with functools.partial in dp_iadmm.smk) ---


def figure_runs_input(config: dict, availability: Callable, wildcards) -> list[str]:
    """Run artifacts the aggregate of ``wildcards.figure`` reads.

    They are those of its jobs on the datasets that can be prepared here.
    """
    return figure_run_paths(wildcards.figure, config, set(availability().buildable))


def claim_aggregates_input(config: dict, availability: Callable, wildcards) -> list[str]:
    """Per-seed tables of the config's aggregates whose data can be prepared here.

    The claims are judged on the tables that exist.
    """
    buildable = set(availability().buildable)
    return [seeds_path(name) for name in available_aggregates(config, buildable)]


def cards_input(availability: Callable, wildcards) -> list[str]:
    """The cards of the study's datasets that can be prepared here.

    Each card holds its dataset's class shares; FEMNIST's also lists its shards.
    """
    buildable = availability().buildable
    return [
        f"data/processed/{STUDY}/{dataset}.json" for dataset in DATASETS if f"{STUDY}/{dataset}" in buildable
    ]


def optimum_data_input(availability: Callable, wildcards) -> list[str]:
    """The prepared datasets the minimiser table covers (those that can be prepared here)."""
    buildable = set(availability().buildable)
    return [f"data/processed/{STUDY}/{dataset}.npz" for dataset in optimum_datasets(buildable)]


def run_memory_input(config: dict, horizon: str, wildcards) -> int:
    """``mem_mb`` of a run job (see :func:`run_memory_mb`)."""
    return run_memory_mb(config, wildcards.dataset, horizon)


def run_gpus_input(config: dict, wildcards) -> int:
    """``gpu`` of a run job: 1 with a jax backend, else 0.

    ``--resources gpu=1`` runs one at a time on the card.
    """
    return int(config[STUDY].get("backend", DEFAULT_BACKEND) != DEFAULT_BACKEND)  # jax or jax_tf32


def run_minutes_input(config: dict, horizon: str, wildcards) -> int:
    """``runtime`` of a run job (see :func:`run_minutes`)."""
    return run_minutes(config, wildcards.dataset, horizon)


def run_settings_param(config: dict, horizon: str, wildcards) -> str:
    """``settings`` of a run job: :func:`run_settings` of its variant as JSON (a change reruns it)."""
    return json.dumps(run_settings(config, horizon, wildcards.variant))


def nonprivate_settings_param(config: dict, wildcards) -> str:
    """``settings`` of the non-private reference run of ``wildcards.algorithm``: noiseless ObjP or ObjT."""
    return json.dumps(run_settings(config, "main", f"nonprivate_{wildcards.algorithm}"))


def recorded_settings(config: dict, path: str) -> dict[str, tuple[str, object]]:
    """What the run at ``path`` records of ``config``.

    ``path`` is ``results/dp_iadmm/runs/<horizon>/<dataset>/<variant>/...``. Each provenance field
    (dotted) -> the config key (in the section) and the value it gives; its horizon's T and trace step,
    beta and delta, MNIST's agents and the switches its variant reads.
    """
    _, _, _, horizon, dataset, variant_name, *_ = Path(path).parts
    values, prefix = run_settings(config, horizon, variant_name), "long_" if horizon == "long" else ""
    found = {f"params.{key}": (prefix + key, values[key]) for key in ("iterations", "log_every")}
    found |= {"params.beta": ("beta", values["beta"]), "params.outp_delta": ("delta", values["delta"])}
    found["delta"] = ("delta", values["delta"])
    if dataset == "mnist":
        found["params.agents"] = ("mnist_agents", values["mnist_agents"])
    return found | {f"switches.{name}": (name, values[name]) for name in SWITCHES if name in values}
