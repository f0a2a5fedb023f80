"""One dvp_pvp run: the card's partition and the seeded graph in, trace and provenance out.

A run job (``dpdl dvp_pvp run``) runs one algorithm at one alpha over its seeds, and optionally
over a grid of etas (the eta selection, G14) or of rho exponents (the rho selection, Table 1,
G23): :func:`job_runs` lists them, :func:`run_context` builds what they share (node data,
evaluation rows, graph), and :func:`execute_run` runs one of them.

Only light modules are imported at the top: every ``dpdl`` command builds its parser from this
package, so the algorithms and privacy accounting are imported where they are used.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpdl.errors import ConfigError
from dpdl.progress import Progress
from dpdl.studies.common import format_number
from dpdl.studies.dvp_pvp.grid import ALGORITHMS, DATASET, STUDY, switches

log = logging.getLogger(__name__)


def partition(arrays: dict, card: dict, values: dict) -> tuple[list[np.ndarray], np.ndarray]:
    """Return the node shards recorded by the card and the rows the error rate is measured on."""
    from dpdl.data.partition import equal_shards

    options = card.get("options", {})
    for key in ("agents", "partition_seed", "row_norm"):
        if options.get(key) != values[key]:
            raise ConfigError(
                f"the prepared dataset's card has {key} = {options.get(key)!r} but the config has "
                f"{values[key]!r}; rebuild it: snakemake --cores 1 data/processed/{DATASET}.npz"
            )
    rng = np.random.default_rng(values["partition_seed"])
    shards = equal_shards(len(arrays["y"]), values["agents"], rng=rng)  # the card's partition (G12)
    if values["evaluation"] == "in_sample":
        return shards, np.sort(np.concatenate(shards))
    from_test = arrays["from_test"].astype(bool)
    return [shard[~from_test[shard]] for shard in shards], np.flatnonzero(from_test)  # G19


@dataclass(frozen=True)
class RunContext:
    """What every run of a job shares: the node data, evaluation rows, graph and card.

    Attributes
    ----------
    data : NodeData
        The nodes' shards (the card's partition, G12; adult.data rows only under ``train_test``).
    eval_x, eval_y : numpy.ndarray
        Rows and labels the error rate is measured on (G19).
    x, y : numpy.ndarray
        All rows and labels (for the centralized optimum).
    shards : list of numpy.ndarray
        Row indices of each node.
    adjacency : numpy.ndarray
        The seeded connected graph (G13).
    card : dict
        The prepared dataset's card (its ``npz_sha256`` is the run's dataset hash).
    values : dict
        The run settings (:func:`dpdl.studies.dvp_pvp.grid.run_settings`).
    """

    data: object
    eval_x: np.ndarray
    eval_y: np.ndarray
    x: np.ndarray
    y: np.ndarray
    shards: list
    adjacency: np.ndarray
    card: dict
    values: dict


def run_context(arrays: dict, card: dict, values: dict) -> RunContext:
    """Return the shared :class:`RunContext` of the prepared arrays and card under ``values``."""
    from dpdl.algorithms.dvp_pvp_network import NodeData, connected_graph

    x, y = arrays["X"], arrays["y"].astype(float)
    shards, eval_rows = partition(arrays, card, values)
    graph_rng = np.random.default_rng(values["graph_seed"])
    try:
        adjacency = connected_graph(
            values["graph"], values["agents"], rng=graph_rng, edge_probability=values["edge_probability"]
        )
    except ValueError as err:
        raise ConfigError(f"dvp_pvp.graph: {err}") from None
    data = NodeData.from_shards(x, y, shards)
    return RunContext(data, x[eval_rows], y[eval_rows], x, y, shards, adjacency, card, values)


def job_runs(
    etas: list[tuple[float, str]], rho_exponents: list[float] | None, seeds: list[int]
) -> list[tuple[float, str, float | None, int]]:
    """Return a job's runs as (eta, eta source, rho, seed), eta-major then rho then seed.

    ``rho_exponents`` None keeps the algorithm's configured rho (rho None); otherwise each
    exponent e gives rho = 10^e. The job's ``--out`` files name the runs in this order.
    """
    rhos = [None] if not rho_exponents else [10.0**exponent for exponent in rho_exponents]
    return [(eta, source, rho, seed) for eta, source in etas for rho in rhos for seed in seeds]


def execute_run(
    context: RunContext,
    *,
    algorithm: str,
    alpha: float | None,
    seed: int,
    eta: float,
    eta_source: str,
    rho: float | None = None,
    purpose: str = "main",
    optima: dict | None = None,
):
    """Run one configuration and return its :class:`dpdl.runs.RunResult` (trace and provenance).

    Parameters
    ----------
    context : RunContext
        Data, graph and settings shared by the job's runs.
    algorithm : {"nonprivate", "dvp", "pvp"}
        The algorithm.
    alpha : float or None
        Per-iteration alpha (None for the non-private algorithm).
    seed : int
        Repetition number; the run's generators come from
        ``run_seed_sequence("dvp_pvp", "dvp_pvp/adult", algorithm, alpha, seed)``, one spawned
        child per node (so runs that differ only in rho or eta share their noise streams).
    eta : float
        ADMM penalty.
    eta_source : str
        Where eta came from (provenance).
    rho : float, optional
        Overrides the algorithm's rho (rho selection).
    purpose : {"main", "rho_selection", "eta_selection"}
        Which grid the run belongs to (provenance).
    optima : dict, optional
        Cache of centralized optima by (C^R, rho), shared by the job's runs.
    """
    from dpdl.algorithms.dvp_pvp import calibrate, run_admm
    from dpdl.algorithms.dvp_pvp_network import edge_list
    from dpdl.runs import execute, run_seed_sequence

    values, data = context.values, context.data
    admm = _admm_settings(values, algorithm, alpha, rho, eta)
    rho = admm.rho  # the algorithm's configured rho unless the run overrides it
    degrees = context.adjacency.sum(axis=1)
    calibration = calibrate(admm, data.sizes, degrees)
    children = run_seed_sequence(STUDY, DATASET, algorithm, alpha, seed).spawn(data.n_nodes)
    rngs = [np.random.default_rng(child) for child in children]
    optimum_value = _centralized_value(context, admm.c_r, rho, {} if optima is None else optima)
    provenance = run_provenance(
        context,
        admm,
        calibration,
        degrees,
        edge_list(context.adjacency),
        seed,
        eta_source,
        purpose,
        optimum_value,
    )
    label_text = f"{algorithm} alpha {format_number(alpha)} rho {rho:.3g} eta {eta:g} seed {seed}"

    def run() -> pd.DataFrame:
        result = run_admm(
            data,
            context.adjacency,
            admm,
            rngs=rngs,
            progress=Progress(label_text, admm.iterations + 1).update,
        )
        if not result.converged:
            worst = float(result.inner_grad_norm.max())
            log.warning(
                "%s: some local minimisations missed the tolerance (largest gradient norm %.3g)",
                label_text,
                worst,
            )
        return run_trace(result, data, context.eval_x, context.eval_y, optimum_value)

    return execute(run, provenance, iterations=admm.iterations + 1)


def _admm_settings(values: dict, algorithm: str, alpha: float | None, rho: float | None, eta: float):
    """The run's :class:`dpdl.algorithms.dvp_pvp.AdmmSettings`; a clear error for a wrong algorithm, alpha."""
    from dpdl.algorithms.dvp_pvp import AdmmSettings

    if algorithm not in ALGORITHMS:
        raise ConfigError(f"algorithm must be one of {ALGORITHMS}; got {algorithm!r}")
    if (algorithm == "nonprivate") != (alpha is None):
        raise ConfigError(
            f"--alpha must be 'inf' exactly for the non-private algorithm; got {algorithm} at {alpha}"
        )
    rho = values["rho"][algorithm] if rho is None else rho
    try:
        return AdmmSettings(
            algorithm,
            rho=rho,
            c_r=float(values["c_r"][algorithm]),
            eta=eta,
            iterations=values["iterations"],
            alpha=alpha,
            dvp_zeta_mode=values["dvp_zeta_mode"],
            pvp_center=values["pvp_center"],
            init=values["init"],
            init_scale=values["init_scale"],
        )
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _centralized_value(context: RunContext, c_r: float, rho: float, optima: dict) -> float:
    """The centralized optimum's value at (C^R, rho), from ``optima`` (the job's cache) or solved into it."""
    from dpdl.algorithms.dvp_pvp_network import centralized_optimum

    key = (c_r, rho)
    if key not in optima:
        optima[key] = centralized_optimum(context.x, context.y, context.shards, c_r=c_r, rho=rho)[1]
    return optima[key]


def run_trace(result, data, eval_x: np.ndarray, eval_y: np.ndarray, optimum_value: float) -> pd.DataFrame:
    """Return the tidy per-iteration trace of a finished run (t = 0..T+1).

    Columns: ``loss`` (per-sample training loss of each node's f_p on its shard, mean over
    nodes, G21), ``mer`` (error rate of each f_p on the evaluation rows, mean over nodes),
    ``loss_broadcast`` / ``mer_broadcast`` (the same for what was sent: V_p for PVP),
    ``loss_average`` / ``mer_average`` (the node average f-bar), ``objective_gap``
    ((Z(f-bar) - Z*) / |Z*| for the consensus objective of G15), ``consensus_error``,
    ``f_norm``, ``dual_norm``, ``noise_norm`` (means over nodes), the local solver's record, and
    per node ``loss_node<p>`` and ``noise_norm_node<p>``.
    """
    from dpdl.algorithms.dvp_pvp import iterate_error_rates, iterate_losses
    from dpdl.algorithms.dvp_pvp_network import consensus_objective

    admm = result.settings
    times = len(result.f)
    average = result.f.mean(axis=1)
    node_loss = iterate_losses(result.f, data)
    node_error = iterate_error_rates(result.f, eval_x, eval_y)
    if admm.algorithm == "pvp":
        broadcast_loss = iterate_losses(result.broadcast, data).mean(axis=1)
        broadcast_error = iterate_error_rates(result.broadcast, eval_x, eval_y).mean(axis=1)
    else:
        broadcast_loss, broadcast_error = node_loss.mean(axis=1), node_error.mean(axis=1)
    replicated = np.broadcast_to(average[:, np.newaxis, :], result.f.shape)
    objective = consensus_objective(average, data, c_r=admm.c_r, rho=admm.rho)
    columns = {
        "iteration": np.arange(times),
        "loss": node_loss.mean(axis=1),
        "mer": node_error.mean(axis=1),
        "loss_broadcast": broadcast_loss,
        "mer_broadcast": broadcast_error,
        "loss_average": iterate_losses(replicated, data).mean(axis=1),
        "mer_average": iterate_error_rates(average[:, np.newaxis, :], eval_x, eval_y)[:, 0],
        "objective_gap": (np.atleast_1d(objective) - optimum_value) / abs(optimum_value),
        "consensus_error": np.linalg.norm(result.f - average[:, np.newaxis, :], axis=2).mean(axis=1),
        "f_norm": np.linalg.norm(result.f, axis=2).mean(axis=1),
        "dual_norm": result.dual_norm.mean(axis=1),
        "noise_norm": result.noise_norm.mean(axis=1),
        "inner_iterations": result.inner_iterations.mean(axis=1),
        "inner_iterations_max": result.inner_iterations.max(axis=1),
        "inner_hessians": result.inner_hessians.mean(axis=1),
        "inner_grad_norm_max": result.inner_grad_norm.max(axis=1),
        "inner_converged": result.inner_converged.mean(axis=1),
    }
    for p in range(data.n_nodes):
        columns[f"loss_node{p}"] = node_loss[:, p]
    for p in range(data.n_nodes):
        columns[f"noise_norm_node{p}"] = result.noise_norm[:, p]
    return pd.DataFrame(columns)


def privacy_events(admm, calibration) -> tuple[list, float | None, int]:
    """Return the per-node privacy events of a run, the paper's alpha and the number of releases.

    Every node releases T + 1 iterates (DVP: f_p(1..T+1); PVP: V_p(1..T) and its final f_p).
    Each release is accounted at the largest per-release epsilon over nodes and releases: the
    PLD accountant needs one epsilon for pure releases, and using the largest errs toward more
    privacy spent. In the default ``alpha_hat_half`` mode every release spends exactly alpha.
    """
    from dpdl.privacy.accounting import PrivacyEvent

    releases = admm.iterations + 1
    if admm.algorithm == "nonprivate":
        return [PrivacyEvent("pure", 0.0, releases)], None, releases
    spent = [node.epsilon_spent for node in calibration.dvp]
    if admm.algorithm == "pvp":
        spent.append(admm.alpha)  # the broadcasts V_p(t) are alpha-DP (Theorem 2)
    worst = max(spent)
    return [PrivacyEvent("pure", 1.0 / worst, releases)], admm.alpha, releases


def run_provenance(
    context, admm, calibration, degrees, edges, seed, eta_source, purpose, optimum_value
) -> dict:
    """Return a run's provenance: identity, every parameter, the noise calibration and its privacy."""
    from dpdl.algorithms.dvp_pvp_network import NEWTON_GRAD_RTOL, NEWTON_MAX_ITERATIONS
    from dpdl.privacy.accounting import privacy_record
    from dpdl.privacy.dvp_pvp import LOGISTIC_C1

    values, data = context.values, context.data
    events, alpha, releases = privacy_events(admm, calibration)
    privacy = privacy_record(events, delta=values["accounting_delta"], eps_per_iteration=alpha)
    dim = data.dim
    node_calibration = None
    if admm.algorithm != "nonprivate":
        node_calibration = {
            "alpha_bar0": calibration.jacobian_budget.tolist(),
            "alpha_hat": [node.alpha_hat for node in calibration.dvp],
            "phi": [node.phi for node in calibration.dvp],
            "zeta": [node.zeta for node in calibration.dvp],
            "branch": [node.branch for node in calibration.dvp],
            "expected_noise_norm": [dim / node.zeta for node in calibration.dvp],
            "epsilon_spent": [node.epsilon_spent for node in calibration.dvp],
            "applies_to": "every DVP step" if admm.algorithm == "dvp" else "PVP's final step (G6)",
        }
    pvp_calibration = None
    if admm.algorithm == "pvp":
        pvp_calibration = {
            "zeta": calibration.pvp_zeta.tolist(),
            "expected_noise_norm": (dim / calibration.pvp_zeta).tolist(),
            "sensitivity": [2.0 * admm.c_r / (admm.rho * int(b)) for b in data.sizes],
        }
    params = {
        "rho": admm.rho,
        "c_r": admm.c_r,
        "eta": admm.eta,
        "eta_source": eta_source,
        "iterations": admm.iterations,
        "releases": releases,
        "alpha": alpha,
        "purpose": purpose,
        "agents": data.n_nodes,
        "samples_per_node": data.sizes.tolist(),
        "features": dim,
        "degrees": degrees.tolist(),
        "edges": edges,
        "graph": values["graph"],
        "edge_probability": values["edge_probability"],
        "graph_seed": values["graph_seed"],
        "partition_seed": values["partition_seed"],
        "init": admm.init,
        "init_scale": admm.init_scale,
        "newton_grad_rtol": NEWTON_GRAD_RTOL,
        "newton_max_iterations": NEWTON_MAX_ITERATIONS,
        "c1": LOGISTIC_C1,
        "centralized_objective": optimum_value,
        "dvp_calibration": node_calibration,
        "pvp_calibration": pvp_calibration,
        "privacy_accounting": "each node's T + 1 releases at the largest per-release epsilon (pure DP)",
    }
    return {
        "study": STUDY,
        "dataset": DATASET,
        "dataset_sha256": context.card["npz_sha256"],
        "algorithm": admm.algorithm,
        "params": params,
        "seed": seed,
        "epsilon": alpha,
        **privacy,
        "switches": switches(values),
    }
