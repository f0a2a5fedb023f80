"""The runs, paths, settings and Snakemake input functions a config implies.

Runs are ``results/dp_iadmm/runs/{horizon}/{dataset}/{variant}/eps{epsilon}/seed{seed}.npz``:
``horizon`` is ``main`` (T = ``iterations``, Figs 1-4 and 6) or ``long`` (T = ``long_iterations``,
Fig. 5 and Remark 3; when the config's long horizon equals the main one, its figures read the
main runs); ``variant`` names the algorithm and its setting (``objp``, ``objt``, ``outp``,
``outp_plus``, ``outp_rho0.1``, ``objt_a100``, ``nonprivate``, and ``nonprivate_objp`` /
``nonprivate_outp``, ObjP and OutP without noise for the paper's "equivalent in a nonprivate
setting"); one job runs every seed of a (horizon, dataset, variant, epsilon) at once. The config's
``cells`` (null: all) narrows the grid to the jobs it names, e.g. ``main/mnist/objt/eps0.05``, and
the aggregates and figures to those that read one (``config/paper_mnist_cells.yaml``).

``section`` below is always the ``dp_iadmm`` section of a config (``config["dp_iadmm"]``), or the
run settings of one job, which repeat the keys a function reads.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dpdl.errors import ConfigError
from dpdl.studies.common import format_number

STUDY = "dp_iadmm"
DATASETS = ("mnist", "femnist")
HORIZONS = ("main", "long")
BASE_ALGORITHMS = ("objp", "objt", "outp")
NONPRIVATE = "nonprivate"
NOISELESS = ("nonprivate_objp", "nonprivate_outp")  # ObjP and OutP without noise (Section 4: "equivalent")
LABELS = {"objp": "ObjP", "objt": "ObjT", "outp": "OutP", "outp_plus": "OutP+", NONPRIVATE: "non-private"}
PARAM_SWITCHES = ("trust_radius", "outp_noise", "sensitivity", "outp_gradient")  # fields of IadmmParams
SWITCHES = (*PARAM_SWITCHES, "nonprivate_algorithm")
FIGURES = ("fig1", "fig2a", "fig2b", "fig3", "fig4", "fig5", "fig6")
AGGREGATES = FIGURES + ("remark3", "noiseless")
HORIZON_KEYS = ("iterations", "log_every", "seeds")  # each with a long_ twin for the long horizon
FIG5_VARIANTS = ("outp", "outp_plus", "objp", "objt")  # the series of Fig. 5
REMARK3_VARIANTS = ("objt", "outp", "objp")
VARIANT_PATTERN = re.compile(r"^(objp|objt|outp)(?:_(plus)|_rho([0-9.e+-]+)|_a([0-9.e+-]+))?$")
NOISELESS_RUN_PATH = "results/dp_iadmm/runs/main/{dataset}/nonprivate_{algorithm}/epsinf/seed0.npz"
RUN_PATH = "results/dp_iadmm/runs/{horizon}/{dataset}/{variant}/eps{epsilon}/seed{seed}.npz"
PRIVATE_VARIANT_REGEX = r"(objp|objt|outp)(_plus|_rho[0-9.e+-]+|_a[0-9.e+-]+)?"  # the run rules' {variant}
EPSILON_REGEX = r"[0-9.e+-]+"  # a finite epsilon-bar as format_number writes it
# Resources of a run job (for cluster profiles). Seconds per run-iteration on one core, from the
# benchmark (benchmarks/bench_dp_iadmm.py, paper sizes, 10 seeds), rounded up from 23.6 ms (MNIST)
# and 107 ms (FEMNIST) measured to cover slower machines; doubled for safety.
SECONDS_PER_RUN_ITERATION = {"mnist": 0.04, "femnist": 0.15}
RUNTIME_SAFETY = 2.0
# Largest sizes of the prepared data (rows, agents, classes) as the paper describes them (Table 1).
DATA_SIZES = {"mnist": (60_000, None, 10), "femnist": (36_708, 195, 62)}
BASE_MEMORY_MB = 1000  # interpreter, libraries, the data in uint8 and float32


# --- variants -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """What a variant name means: base algorithm, ADMM penalty setting and proximity scale a."""

    name: str
    algorithm: str
    a: float = 1.0
    rho_factor: float = 1.0
    rho_static: float | None = None

    @property
    def label(self) -> str:
        """Legend label (ObjP, ObjT, OutP, OutP+, non-private, "OutP without noise")."""
        if is_nonprivate(self.name) and self.name != NONPRIVATE:
            return f"{LABELS[self.algorithm]} without noise"
        return LABELS.get(self.name, LABELS[self.algorithm])

    @property
    def rho_setting(self) -> str:
        """Fig. 4's series name: rho-hat, rho-hat/100 or the constant."""
        if self.rho_static is not None:
            return format_number(self.rho_static)
        if self.rho_factor == 1.0:
            return "rho-hat"
        divisor = 1.0 / self.rho_factor
        return f"rho-hat/{divisor:g}" if divisor == round(divisor) else f"rho-hat*{self.rho_factor:g}"


def is_nonprivate(name: str) -> bool:
    """Whether a variant runs without noise (epsilon-bar = inf): ``nonprivate`` and ``nonprivate_<algorithm>``."""
    return name == NONPRIVATE or name.startswith(f"{NONPRIVATE}_")


def variant(name: str, section: dict) -> Variant:
    """Parse a variant name (``objt``, ``outp_plus``, ``outp_rho0.1``, ``objp_a100``, ``nonprivate_outp``, ...).

    ``nonprivate`` is the switch's ``nonprivate_algorithm``; ``nonprivate_<algorithm>`` names its algorithm.
    """
    if name == NONPRIVATE:  # note 2.5 [R]: ObjP (default) or ObjT with xi = 0 and rho without c2
        return Variant(NONPRIVATE, section["nonprivate_algorithm"])
    if is_nonprivate(name):  # one algorithm without noise, whatever the switch says
        algorithm = name.removeprefix(f"{NONPRIVATE}_")
        if algorithm not in BASE_ALGORITHMS:
            raise ValueError(f"unknown dp_iadmm variant {name!r}; expected nonprivate_objp, _objt or _outp")
        return Variant(name, algorithm)
    match = VARIANT_PATTERN.match(name)
    if match is None:
        raise ValueError(f"unknown dp_iadmm variant {name!r}; expected e.g. objt, outp_plus, outp_rho0.1, objp_a100")
    algorithm, plus, rho, a = match.groups()
    if (plus or rho) and algorithm != "outp":
        raise ValueError(f"variant {name!r}: only OutP has penalty variants")
    if plus:
        return Variant(name, algorithm, rho_factor=section["outp_plus_factor"])
    if rho:
        return Variant(name, algorithm, rho_static=float(rho))
    return Variant(name, algorithm, a=float(a) if a else 1.0)


def a_variant(algorithm: str, a: float) -> str:
    """The variant of ``algorithm`` with proximity scale a (the plain name for a = 1)."""
    return algorithm if a == 1 else f"{algorithm}_a{format_number(a)}"


# --- what each aggregate reads ------------------------------------------------------------------


@dataclass(frozen=True)
class FigureSpec:
    """Which runs an aggregate reads and what it keeps."""

    horizon: str
    datasets: tuple[str, ...]
    final_only: bool
    metrics: tuple[str, ...]
    runs: Callable[[dict], list[tuple[str, float]]]  # config section -> (variant, epsilon) pairs
    nonprivate: bool = False


def _pairs(variants: Iterable[str], epsilons: Iterable[float]) -> list[tuple[str, float]]:
    return [(v, float(e)) for v in variants for e in epsilons]


def _runs(variants: Iterable[str], epsilons: str) -> Callable[[dict], list[tuple[str, float]]]:
    """``variants`` at every epsilon-bar of the config list ``epsilons``."""
    return lambda section: _pairs(variants, section[epsilons])


def _base(epsilons: str) -> Callable[[dict], list[tuple[str, float]]]:
    """ObjP, ObjT and OutP at every epsilon-bar of the config list ``epsilons``."""
    return _runs(BASE_ALGORITHMS, epsilons)


def _rho_runs(section: dict) -> list[tuple[str, float]]:
    """Fig. 4: OutP with rho-hat, rho-hat times outp_plus_factor and each constant rho."""
    rhos = [f"outp_rho{format_number(r)}" for r in section["outp_static_rhos"]]
    return _pairs(["outp", "outp_plus", *rhos], section["curve_epsilons"])


def _a_runs(section: dict) -> list[tuple[str, float]]:
    """Fig. 6: the three algorithms at each proximity scale a."""
    variants = [a_variant(algorithm, a) for a in section["a_values"] for algorithm in BASE_ALGORITHMS]
    return _pairs(variants, section["curve_epsilons"])


FIGURE_SPECS: dict[str, FigureSpec] = {
    "fig1": FigureSpec("main", ("mnist",), False, ("noise_magnitude", "test_error"), _base("curve_epsilons")),
    "fig2a": FigureSpec("main", ("mnist",), True, ("test_error",), _base("epsilons"), nonprivate=True),
    "fig2b": FigureSpec("main", ("femnist",), True, ("test_error",), _base("epsilons"), nonprivate=True),
    "fig3": FigureSpec("main", ("femnist",), False, ("test_error",), _base("curve_epsilons")),
    "fig4": FigureSpec("main", ("mnist", "femnist"), False, ("test_error",), _rho_runs),
    "fig5": FigureSpec("long", ("mnist",), False, ("cv_sum", "test_error"), _runs(FIG5_VARIANTS, "curve_epsilons")),
    "fig6": FigureSpec("main", ("femnist",), False, ("test_error",), _a_runs),
    "remark3": FigureSpec("long", ("mnist",), True, ("test_error",), _runs(REMARK3_VARIANTS, "remark3_epsilons")),
    "noiseless": FigureSpec("main", DATASETS, False, ("test_error",), lambda section: _pairs(NOISELESS, [math.inf])),
}
CLAIM_METRICS = {"fig5": ("rho",)}  # trace columns the claims read beyond the plotted ones (per-seed tables only)


# --- horizons and seeds -------------------------------------------------------------------------


def horizon_settings(section: dict, horizon: str) -> dict:
    """T, trace step and seed count of a horizon (``main`` or ``long``)."""
    prefix = "long_" if horizon == "long" else ""
    return {key: section[prefix + key] for key in HORIZON_KEYS}


def resolved_horizon(section: dict, horizon: str) -> str:
    """The horizon whose runs serve ``horizon``: ``long`` only if it differs from ``main``.

    A config whose long horizon equals the main one (as ``ci.yaml`` does) computes each run once.
    """
    distinct = horizon_settings(section, "long") != horizon_settings(section, "main")
    return "long" if horizon == "long" and distinct else "main"


def check_settings(section: dict) -> dict:
    """Cross-key checks the schema cannot state (run by the config validation); return ``section``."""
    for prefix in ("", "long_"):
        step, length = section[f"{prefix}log_every"], section[f"{prefix}iterations"]
        if step > length:
            raise ConfigError(
                f"dp_iadmm.{prefix}log_every ({step}) must not exceed dp_iadmm.{prefix}iterations ({length}); "
                f"lower {prefix}log_every"
            )
    if section["long_iterations"] < section["iterations"]:
        raise ConfigError(
            f"dp_iadmm.long_iterations ({section['long_iterations']}) must not be below dp_iadmm.iterations "
            f"({section['iterations']}): the long horizon (Fig. 5, Remark 3) extends the main one; raise it "
            "(equal to iterations reuses the main runs)"
        )
    grid = {cell_name(*cell) for name in AGGREGATES for cell in figure_cells(name, section, narrowed=False)}
    for i, name in enumerate(section.get("cells") or []):
        if name not in grid:
            raise ConfigError(
                f"dp_iadmm.cells[{i}]: {name!r} is not a job of this config's grid; name a folder under results/"
                f"dp_iadmm/runs/ as the grid writes it (e.g. {', '.join(sorted(grid)[:2])}) or extend the grid"
            )
    return section


def long_horizon_distinct(config: dict) -> bool:
    """Whether the config needs the long-horizon run rule."""
    return resolved_horizon(config[STUDY], "long") == "long"


def job_seeds(variant_name: str, count: int) -> list[int]:
    """Seeds of one job: 0..count-1; only seed 0 for a run without noise."""
    return [0] if is_nonprivate(variant_name) else list(range(count))  # no noise: every seed gives the same run


def seeds(section: dict, horizon: str, variant_name: str) -> list[int]:
    """Seeds of a job of ``horizon`` (see :func:`job_seeds`)."""
    return job_seeds(variant_name, horizon_settings(section, horizon)["seeds"])


# --- paths and targets --------------------------------------------------------------------------


def run_path(horizon: str, dataset: str, variant_name: str, epsilon: float, seed: int) -> str:
    """Path of one run artifact."""
    return RUN_PATH.format(
        horizon=horizon, dataset=dataset, variant=variant_name, epsilon=format_number(epsilon), seed=seed
    )


def cell_name(horizon: str, dataset: str, variant_name: str, epsilon: float) -> str:
    """A cell (one run job, every seed) as ``cells`` names it: its folder under ``results/dp_iadmm/runs/``."""
    return f"{horizon}/{dataset}/{variant_name}/eps{format_number(epsilon)}"


def figure_cells(figure: str, section: dict, narrowed: bool = True) -> list[tuple[str, str, str, float]]:
    """(horizon, dataset, variant, epsilon) of the jobs of ``figure``: its grid's, only those ``cells`` names
    (if ``narrowed``); a section without ``cells`` (written by hand, as in a test) is the whole grid, as null."""
    spec, chosen = FIGURE_SPECS[figure], section.get("cells") if narrowed else None
    keys = spec.runs(section) + ([(NONPRIVATE, math.inf)] if spec.nonprivate else [])
    horizon = resolved_horizon(section, spec.horizon)
    found = [(horizon, dataset, name, eps) for dataset in spec.datasets for name, eps in dict.fromkeys(keys)]
    return [cell for cell in found if chosen is None or cell_name(*cell) in chosen]


def grid_aggregates(section: dict) -> list[str]:
    """The aggregates with a job on each of their datasets in the config's grid (all unless ``cells`` narrows it)."""
    return [n for n in AGGREGATES if {c[1] for c in figure_cells(n, section)} == set(FIGURE_SPECS[n].datasets)]


def figure_run_paths(figure: str, config: dict) -> list[str]:
    """Every run artifact the aggregate of ``figure`` reads, for ``config``."""
    section = config[STUDY]
    return [
        run_path(horizon, dataset, name, eps, seed)
        for horizon, dataset, name, eps in figure_cells(figure, section)
        for seed in seeds(section, horizon, name)
    ]


def run_output_patterns(config: dict, horizon: str) -> list[str]:
    """Output patterns of the run rule of ``horizon`` (one file per seed; wildcards stay)."""
    pattern = RUN_PATH.replace("{horizon}", horizon)
    return [pattern.replace("{seed}", str(seed)) for seed in seeds(config[STUDY], horizon, "any")]


def figure_paths(figure: str) -> list[str]:
    """The PNG and PDF of a figure."""
    return [f"figures/dp_iadmm/{figure}.{ext}" for ext in ("png", "pdf")]


def aggregate_path(name: str) -> str:
    """The tidy aggregate CSV (mean and 20/80 band over seeds) of a figure or of the Remark 3 table."""
    return f"results/dp_iadmm/aggregates/{name}.csv"


def seeds_path(name: str) -> str:
    """The per-seed table of an aggregate: one value per (run, logged iteration, metric); the claims read it."""
    return f"results/dp_iadmm/aggregates/{name}_seeds.csv"


def remark3_paths() -> list[str]:
    """The Remark 3 table (CSV and Markdown)."""
    return [f"results/tables/dp_iadmm/remark3.{ext}" for ext in ("csv", "md")]


def optimum_paths() -> list[str]:
    """The table of the minimiser of (1) on each dataset (CSV and Markdown)."""
    return [f"results/tables/dp_iadmm/optimum.{ext}" for ext in ("csv", "md")]


def claims_paths() -> list[str]:
    """The claims scorecard of this study (CSV and Markdown)."""
    return [f"results/claims/dp_iadmm.{ext}" for ext in ("csv", "md")]


def available_aggregates(config: dict, buildable: set[str]) -> list[str]:
    """Aggregates of the config's grid (:func:`grid_aggregates`) whose datasets can be prepared here."""
    names = grid_aggregates(config[STUDY])
    return [name for name in names if all(f"{STUDY}/{d}" in buildable for d in FIGURE_SPECS[name].datasets)]


def optimum_datasets(buildable: set[str]) -> list[str]:
    """The study's datasets that can be prepared here (the minimiser table covers these)."""
    return [dataset for dataset in DATASETS if f"{STUDY}/{dataset}" in buildable]


def targets(config: dict, buildable: set[str]) -> list[str]:
    """Every artifact the study promises for ``config`` given the buildable prepared datasets."""
    names = available_aggregates(config, buildable)
    paths = [path for name in names for path in (aggregate_path(name), seeds_path(name))]
    paths += [p for name in names if name in FIGURES for p in figure_paths(name)]
    if "remark3" in names:
        paths += remark3_paths()
    if optimum_datasets(buildable):
        paths += optimum_paths()
    if names:
        paths += claims_paths()
    return paths


def runs(config: dict, buildable: set[str]) -> list[str]:
    """Every run artifact the study makes for ``config`` (those of the buildable figures, once each)."""
    paths = (path for name in available_aggregates(config, buildable) for path in figure_run_paths(name, config))
    return list(dict.fromkeys(paths))


# --- settings: the config values each job depends on (its rule's params) ------------------------

RUN_SECTION_KEYS = ("mnist_agents", "beta", "delta", "outp_plus_factor", *PARAM_SWITCHES)  # copied from the section
RUN_SETTING_KEYS = ("horizon", *HORIZON_KEYS, *RUN_SECTION_KEYS)
REFERENCE_RUN_SETTING_KEYS = (*RUN_SETTING_KEYS, "nonprivate_algorithm")  # the reference run names its algorithm
# The switches each algorithm reads (IadmmParams); a run's params hold its algorithm's only (run_setting_keys).
ALGORITHM_SWITCHES = {
    "objp": ("sensitivity",),
    "objt": ("sensitivity", "trust_radius"),
    "outp": ("outp_noise", "outp_gradient"),
}
CLAIM_CONFIG_KEYS = ("iterations", "seeds", "long_iterations", "long_seeds", *SWITCHES)  # copied from the section
CLAIM_SETTING_KEYS = (*CLAIM_CONFIG_KEYS, "grid_aggregates")
OPTIMUM_SETTING_KEYS = ("mnist_agents", "beta", "optimum_iterations")


def run_setting_keys(variant_name: str) -> tuple[str, ...]:
    """The settings a run of ``variant_name`` reads: its algorithm's switches only; all for the reference run."""
    if variant_name == NONPRIVATE:
        return REFERENCE_RUN_SETTING_KEYS
    match = VARIANT_PATTERN.match(variant_name.removeprefix(f"{NONPRIVATE}_"))  # the algorithm is its group 1
    if match is None:
        raise ValueError(f"unknown dp_iadmm variant {variant_name!r}; expected e.g. objt, outp_plus, nonprivate_outp")
    read = ALGORITHM_SWITCHES[match.group(1)]
    return tuple(key for key in RUN_SETTING_KEYS if key not in PARAM_SWITCHES or key in read)


def run_settings(config: dict, horizon: str, variant_name: str) -> dict:
    """The config values a run job of ``variant_name`` depends on (its rule's params: a change reruns it), keys
    :func:`run_setting_keys`: a reading reruns the runs its switch reaches and no others."""
    derived = {"horizon": horizon, **horizon_settings(config[STUDY], horizon)}
    return {**derived, **{key: config[STUDY][key] for key in run_setting_keys(variant_name) if key not in derived}}


def optimum_settings(config: dict) -> dict:
    """The config values the minimiser table depends on (its rule's params); keys OPTIMUM_SETTING_KEYS."""
    return {key: config[STUDY][key] for key in OPTIMUM_SETTING_KEYS}


def claim_settings(config: dict) -> dict:
    """The config values the claims depend on (the claims rule's params); keys CLAIM_SETTING_KEYS. ``grid_aggregates``
    tells an aggregate ``cells`` leave out (its claims: not run at this scale) from one without data."""
    section = config[STUDY]
    return {key: section[key] for key in CLAIM_CONFIG_KEYS} | {"grid_aggregates": grid_aggregates(section)}


def claim_scale(settings: dict, femnist_train_shards: int) -> dict[str, float]:
    """The scale the claims are judged at: the horizons and seeds of ``settings``, FEMNIST shards."""
    horizons = {key: settings[key] for key in ("iterations", "seeds", "long_iterations", "long_seeds")}
    return horizons | {"femnist_train_shards": femnist_train_shards}


# --- resources of a run job ---------------------------------------------------------------------


def run_memory_mb(config: dict, dataset: str, horizon: str) -> int:
    """Memory (MB) of a run job: data, z, z-next and lambda of every seed and the result's copies."""
    section = config[STUDY]
    rows, agents, classes = DATA_SIZES[dataset]
    agents = agents or section["mnist_agents"]
    replicas = horizon_settings(section, horizon)["seeds"]
    state = 5 * agents * 784 * replicas * classes * 4  # z, z-next, lambda, the result's z and lambda
    scores = 2 * rows * replicas * classes * 4
    return int(BASE_MEMORY_MB + (state + scores) / 1e6)


def run_minutes(config: dict, dataset: str, horizon: str) -> int:
    """Expected wall minutes of a run job, from ``SECONDS_PER_RUN_ITERATION`` (doubled)."""
    settings = horizon_settings(config[STUDY], horizon)
    work = settings["iterations"] * settings["seeds"]
    return int(5 + RUNTIME_SAFETY * work * SECONDS_PER_RUN_ITERATION[dataset] / 60)


# --- input and resource functions of the rules (bound with functools.partial in dp_iadmm.smk) ---


def figure_runs_input(config: dict, wildcards) -> list[str]:
    """Run artifacts the aggregate of ``wildcards.figure`` reads."""
    return figure_run_paths(wildcards.figure, config)


def claim_aggregates_input(config: dict, availability: Callable, wildcards) -> list[str]:
    """Per-seed tables of the config's aggregates whose data can be prepared here (the claims judge what exists)."""
    return [seeds_path(name) for name in available_aggregates(config, set(availability().buildable))]


def cards_input(availability: Callable, wildcards) -> list[str]:
    """The cards of the study's datasets that can be prepared here (class shares; FEMNIST's lists its shards)."""
    return [f"data/processed/{STUDY}/{d}.json" for d in DATASETS if f"{STUDY}/{d}" in availability().buildable]


def optimum_data_input(availability: Callable, wildcards) -> list[str]:
    """The prepared datasets the minimiser table covers (those that can be prepared here)."""
    return [f"data/processed/{STUDY}/{d}.npz" for d in optimum_datasets(set(availability().buildable))]


def run_memory_input(config: dict, horizon: str, wildcards) -> int:
    """``mem_mb`` of a run job (see :func:`run_memory_mb`)."""
    return run_memory_mb(config, wildcards.dataset, horizon)


def run_minutes_input(config: dict, horizon: str, wildcards) -> int:
    """``runtime`` of a run job (see :func:`run_minutes`)."""
    return run_minutes(config, wildcards.dataset, horizon)
