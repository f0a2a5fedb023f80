"""The dvp_pvp section's settings: its checks, the values each step reads and the switches in force.

Every step but a run takes the whole section as its ``--settings`` (:func:`settings_json`); a run
takes only the keys it depends on (:data:`RUN_KEYS`, :func:`run_settings_json`), so no other key
reruns it.
"""

from __future__ import annotations

import json

from dpdl.errors import ConfigError
from dpdl.studies.common import check_labels, parse_settings
from dpdl.studies.dvp_pvp._layout import STUDY

# Every key of the dvp_pvp config section (dpdl/schemas/dvp_pvp.schema.yaml fills them all in):
# the --settings of the aggregate, table and claims steps.
SETTINGS_KEYS = (
    "agents",
    "partition_seed",
    "row_norm",
    "graph",
    "edge_probability",
    "graph_seed",
    "alphas",
    "convergence_alphas",
    "seeds",
    "iterations",
    "tradeoff_iterations",
    "mer_iteration",
    "rho",
    "c_r",
    "eta",
    "eta_grid",
    "rho_selection",
    "dvp_zeta_mode",
    "pvp_center",
    "init",
    "init_scale",
    "evaluation",
    "loss_unit",
    "pvp_error_of",
    "accounting_delta",
)
# Config keys a run depends on (the --settings of run jobs; other keys never rerun a run).
RUN_KEYS = (
    "agents",
    "partition_seed",
    "row_norm",
    "graph",
    "edge_probability",
    "graph_seed",
    "iterations",
    "rho",
    "c_r",
    "eta",
    "dvp_zeta_mode",
    "pvp_center",
    "init",
    "init_scale",
    "evaluation",
    "accounting_delta",
)
SWITCH_KEYS = ("dvp_zeta_mode", "pvp_center", "graph", "agents", "evaluation", "init", "row_norm", "eta")
# Switches of the aggregates (loss_unit) and the claims (pvp_error_of): in the scorecard's
# provenance, not a run's.
AGGREGATE_SWITCH_KEYS = ("loss_unit", "pvp_error_of")
CLAIMS_STEP_KEYS = ("pvp_error_of",)  # read by the claims step alone: a reading of these needs no other table
# The eta modes of the config (G14): one eta tuned on the non-private run for all three algorithms
# (the note's resolution), or each algorithm's own (C Section 5.3's rho protocol applied to eta).
ETA_TUNED = "tuned"
ETA_PER_ALGORITHM = "tuned_per_algorithm"


def check_config(config: dict) -> None:
    """The cross-key checks of the dvp_pvp section that the schema cannot express.

    Config validation runs them.
    """
    settings(config)


def settings(config: dict) -> dict:
    """The dvp_pvp config section; ConfigError if a trade-off or MER iteration exceeds ``iterations``."""
    values = dict(config[STUDY])
    check_labels(values, STUDY, ("alphas", "convergence_alphas"), ("eta_grid",), ("rho_selection.exponents",))
    late = [t for t in values["tradeoff_iterations"] if t > values["iterations"]]
    if late:
        raise ConfigError(
            f"dvp_pvp.tradeoff_iterations {late} exceed dvp_pvp.iterations ({values['iterations']}); "
            "lower them or raise iterations"
        )
    if values["mer_iteration"] > values["iterations"]:
        raise ConfigError(
            f"dvp_pvp.mer_iteration ({values['mer_iteration']}) exceeds dvp_pvp.iterations "
            f"({values['iterations']}); lower it or raise iterations"
        )
    return values


def run_settings(config: dict) -> dict:
    """Return the config values a run depends on (the run jobs' ``--settings`` JSON)."""
    return {key: settings(config)[key] for key in RUN_KEYS}


def settings_json(config: dict) -> str:
    """Return the dvp_pvp section as JSON (``--settings`` of the aggregate, table and claims steps)."""
    return json.dumps(settings(config), sort_keys=True)


def run_settings_json(config: dict) -> str:
    """Return :func:`run_settings` as JSON (``--settings`` of the run jobs; a change reruns them)."""
    return json.dumps(run_settings(config), sort_keys=True)


def parse_section_settings(text: str) -> dict:
    """Parse ``--settings`` of the aggregate, table and claims steps: the whole section."""
    return parse_settings(text, SETTINGS_KEYS, STUDY, "dpdl.studies.dvp_pvp.grid.settings_json(config)")


def parse_run_settings(text: str) -> dict:
    """Parse ``--settings`` of a run job: exactly the keys of :data:`RUN_KEYS`."""
    return parse_settings(text, RUN_KEYS, STUDY, "dpdl.studies.dvp_pvp.grid.run_settings_json(config)")


def switches(values: dict) -> dict:
    """Return the fidelity switches in force (for run provenance and the scorecard).

    ``values`` is the run settings (run provenance: :data:`SWITCH_KEYS`) or the whole section
    (the scorecard: also :data:`AGGREGATE_SWITCH_KEYS`).
    """
    found = {key: values[key] for key in SWITCH_KEYS}
    if not eta_tuned(values):
        found["eta"] = f"fixed {values['eta']}"
    aggregate_switches = {key: values[key] for key in AGGREGATE_SWITCH_KEYS if key in values}
    return found | aggregate_switches


def eta_tuned(values: dict) -> bool:
    """Whether eta is selected by a grid of runs (either mode of G14) rather than fixed in the config."""
    return values["eta"] in (ETA_TUNED, ETA_PER_ALGORITHM)


def all_alphas(values: dict) -> list[float]:
    """Return every alpha the main grid runs: the figures' alphas and the convergence panels'."""
    return sorted(set(values["alphas"]) | set(values["convergence_alphas"]))
