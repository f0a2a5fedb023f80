"""dzoa's aggregates: the runs of a figure -> one tidy table (mean and 20/80 bands over trials)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpdl.errors import ArtifactError, ConfigError
from dpdl.studies.dzoa.grid import graph_edges

LAST_ITERATIONS = 10  # "last10" measure: mean error over the last 10 outer iterations (G14)
RUN_KEYS = [
    "algorithm",
    "epsilon",
    "delta",
    "epsilon_total_given",
    "epsilon_total_29",
    "eps_composed_rdp",
    "eps_composed_pld",
]
PRIVACY_COLUMNS = ["epsilon_total_29", "eps_composed_rdp", "eps_composed_pld"]


def aggregate(values: dict, figure: str, run_files: list[str], n_agents: int | None = None) -> pd.DataFrame:
    """The tidy table a figure reads: one row per group with mean, lo, hi, n over trials.

    fig1: the assumed graph's edges. fig2: error per (algorithm, epsilon, delta, iteration). fig3a,
    fig3b: the final error (``measure = final``) and the mean over the last 10 outer iterations
    (``last10``, G14) per grid point. Non-finite errors (divergences) are counted in
    ``n_diverged`` and left out of the statistics; every row carries the privacy of its runs.
    """
    if figure == "fig1":
        return topology_table(values, n_agents)
    rows = [_run_row(path) for path in run_files]
    if not rows:
        raise ArtifactError(f"no runs to aggregate for {figure}")
    frame = pd.DataFrame(rows)
    if figure == "fig2":
        traces = np.stack(frame.pop("trace").to_numpy())
        n_iterations = traces.shape[1]
        long = frame.loc[frame.index.repeat(n_iterations), RUN_KEYS].reset_index(drop=True)
        long["iteration"] = np.tile(np.arange(n_iterations), len(frame))
        long["value"] = traces.ravel()
        return bands(long, ["algorithm", "epsilon", "delta", "iteration"])
    long = frame.drop(columns="trace").melt(
        id_vars=[*RUN_KEYS, "trial"], value_vars=["final", "last10"], var_name="measure", value_name="value"
    )
    if figure == "fig3a":
        keys = ["algorithm", "delta", "epsilon_total_given", "epsilon"]
    else:
        keys = ["algorithm", "epsilon", "delta"]
    return bands(long, [*keys, "measure"])


def _run_row(path: str) -> dict:
    from dpdl.runs import read_run

    result = read_run(path)
    prov = result.provenance
    error = result.trace["error"].to_numpy()
    return {
        "algorithm": prov["algorithm"],
        "epsilon": prov["epsilon"],
        "delta": prov["delta"],
        "epsilon_total_given": prov["params"].get("epsilon_total_given"),
        "epsilon_total_29": prov["params"]["epsilon_total_29"],
        "eps_composed_rdp": prov["eps_composed_rdp"],
        "eps_composed_pld": prov["eps_composed_pld"],
        "trial": prov["seed"],
        "trace": error,
        "final": error[-1],
        "last10": float(np.mean(error[-LAST_ITERATIONS:])),
    }


def bands(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Bands of ``value`` over the finite values of each group, ``n_diverged``, and the group's privacy columns."""
    from dpdl.aggregate import seed_bands

    table = seed_bands(frame, keys, "value", finite_only=True)
    privacy = frame.groupby(keys, sort=True, dropna=False)[PRIVACY_COLUMNS].first().reset_index()
    table = table.merge(privacy, on=keys, how="left")
    return table[[*keys, "mean", "lo", "hi", "n", "n_diverged", *PRIVACY_COLUMNS]]


def topology_table(values: dict, n_agents: int | None) -> pd.DataFrame:
    """Fig. 1's aggregate: the assumed graph's edges (1-indexed) with both ends' degrees."""
    if n_agents is None:
        raise ConfigError("fig1 needs the number of agents (--agents)")
    edges = graph_edges(values, n_agents)
    degree = np.zeros(n_agents, dtype=int)
    for i, j in edges:
        degree[i] += 1
        degree[j] += 1
    return pd.DataFrame(
        [
            {
                "node_a": i + 1,
                "node_b": j + 1,
                "degree_a": int(degree[i]),
                "degree_b": int(degree[j]),
                "topology": values["topology"],
                "assumed": True,
            }
            for i, j in edges
        ]
    )
