"""The study section's settings: the checks config validation runs, and the values each job reads.

A rule passes the config values its job depends on as its params, so a change of one of them
reruns the job and a change of any other does not: a run's params hold its algorithm's switches
only, so a reading reruns the runs its switch reaches and no others.
"""

from __future__ import annotations

from dpdl.errors import ConfigError
from dpdl.studies.common import check_labels
from dpdl.studies.dp_iadmm._cells import (
    AGGREGATES,
    HORIZON_KEYS,
    STUDY,
    cell_name,
    figure_cells,
    grid_aggregates,
    grid_gaps,
    horizon_settings,
)
from dpdl.studies.dp_iadmm._variants import NONPRIVATE, VARIANT_PATTERN

# IadmmParams
PARAM_SWITCHES = ("trust_radius", "outp_noise", "sensitivity", "outp_gradient", "outp_regulariser")
SWITCHES = (*PARAM_SWITCHES, "nonprivate_algorithm")
# Copied from the section into a run's settings (beside the horizon's keys).
RUN_SECTION_KEYS = ("mnist_agents", "beta", "delta", "outp_plus_factor", *PARAM_SWITCHES)
RUN_SETTING_KEYS = ("horizon", *HORIZON_KEYS, *RUN_SECTION_KEYS)
# The reference run (``nonprivate``) also names its algorithm.
REFERENCE_RUN_SETTING_KEYS = (*RUN_SETTING_KEYS, "nonprivate_algorithm")
# The switches each algorithm reads (IadmmParams); a run's params hold its algorithm's only
# (run_setting_keys).
ALGORITHM_SWITCHES = {
    "objp": ("sensitivity",),
    "objt": ("sensitivity", "trust_radius"),
    "outp": ("outp_noise", "outp_gradient", "outp_regulariser"),
}
# copied from the section
CLAIM_CONFIG_KEYS = ("iterations", "seeds", "long_iterations", "long_seeds", *SWITCHES)
CLAIM_SETTING_KEYS = (*CLAIM_CONFIG_KEYS, "grid_aggregates", "grid_gaps")
OPTIMUM_SETTING_KEYS = ("mnist_agents", "beta", "optimum_iterations")
DEFAULT_BACKEND = "numba"  # dp_iadmm.backend: the program that runs the iterations (numba, or jax for a GPU)


def check_config(config: dict) -> None:
    """The cross-key checks of the dp_iadmm section that the schema cannot express.

    Config validation runs them.
    """
    check_section(config[STUDY])


def check_section(section: dict) -> dict:
    """Cross-key checks of the dp_iadmm section (:func:`check_config`); return ``section``."""
    check_labels(
        section,
        STUDY,
        ("epsilons", "curve_epsilons", "remark3_epsilons"),
        ("a_values",),
        ("outp_static_rhos",),
    )
    for prefix in ("", "long_"):
        step = section[f"{prefix}log_every"]
        length = section[f"{prefix}iterations"]
        if step > length:
            raise ConfigError(
                f"dp_iadmm.{prefix}log_every ({step}) must not exceed "
                f"dp_iadmm.{prefix}iterations ({length}); lower {prefix}log_every"
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
                f"dp_iadmm.cells[{i}]: {name!r} is not a job of this config's grid; name a folder under "
                f"results/dp_iadmm/runs/ as the grid writes it (e.g. {', '.join(sorted(grid)[:2])}) or "
                "extend the grid"
            )
    return section


def run_setting_keys(variant_name: str) -> tuple[str, ...]:
    """The settings a run of ``variant_name`` reads.

    An algorithm's runs, private or not, read only its switches; the reference run reads them all.
    """
    if variant_name == NONPRIVATE:
        return REFERENCE_RUN_SETTING_KEYS
    # The algorithm is the pattern's group 1, with or without noise.
    match = VARIANT_PATTERN.match(variant_name.removeprefix(f"{NONPRIVATE}_"))
    if match is None:
        raise ValueError(
            f"unknown dp_iadmm variant {variant_name!r}; expected e.g. objt, outp_plus, nonprivate_outp"
        )
    read = ALGORITHM_SWITCHES[match.group(1)]
    return tuple(key for key in RUN_SETTING_KEYS if key not in PARAM_SWITCHES or key in read)


def run_settings(config: dict, horizon: str, variant_name: str) -> dict:
    """The config values a run job of ``variant_name`` depends on (its rule's params: a change reruns it).

    The keys are :func:`run_setting_keys`: a reading reruns the runs its switch reaches and no others.
    The backend is among them only where it is not the default (numba), so that the runs built
    before the key existed keep their params and their cache.
    """
    section = config[STUDY]
    derived = {"horizon": horizon, **horizon_settings(section, horizon)}
    copied = {key: section[key] for key in run_setting_keys(variant_name) if key not in derived}
    backend = section.get("backend", DEFAULT_BACKEND)
    return {**derived, **copied} | ({} if backend == DEFAULT_BACKEND else {"backend": backend})


def optimum_settings(config: dict) -> dict:
    """The config values the minimiser table depends on (its rule's params); keys OPTIMUM_SETTING_KEYS."""
    return {key: config[STUDY][key] for key in OPTIMUM_SETTING_KEYS}


def claim_settings(config: dict) -> dict:
    """The config values the claims depend on (the claims rule's params); keys CLAIM_SETTING_KEYS.

    ``grid_aggregates`` (each aggregate of the grid with the datasets its jobs reach) tells an
    aggregate or a dataset ``cells`` leave out (its claims: not run at this scale) from one without data;
    ``grid_gaps`` (:func:`grid_gaps`) the cells ``cells`` leaves out of an aggregate it keeps.
    """
    section = config[STUDY]
    copied = {key: section[key] for key in CLAIM_CONFIG_KEYS}
    return copied | {"grid_aggregates": grid_aggregates(section), "grid_gaps": grid_gaps(section)}


def claim_scale(settings: dict, femnist_train_shards: int) -> dict[str, float]:
    """The scale the claims are judged at: the horizons and seeds of ``settings``, FEMNIST shards."""
    horizons = {key: settings[key] for key in ("iterations", "seeds", "long_iterations", "long_seeds")}
    return horizons | {"femnist_train_shards": femnist_train_shards}
