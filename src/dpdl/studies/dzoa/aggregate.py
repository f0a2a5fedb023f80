"""dzoa's aggregates: the runs of a figure -> a tidy table of bands and one of per-trial values.

The bands are for the figures, the per-trial values for the claims.

The banded table (mean and 20/80 bands over trials) is what a figure draws; the per-seed table
(one row per run, its trial in ``seed``) is what the claims are judged from, never the bands.
:func:`perturbation_table` sets D-ZOA's realised zeroth-order perturbation beside the sigma_k of
(25) its epsilon assumes (one row per run and agent).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpdl.errors import ArtifactError, ConfigError
from dpdl.studies.dzoa.grid import STUDY, graph_edges

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
SEED_ITERATION_STEP = 10  # the per-seed table of Fig. 2 keeps m = 0, 10, 20, ..., M (and M)
FIGURE_KEYS = {
    "fig2": ["algorithm", "epsilon", "delta", "iteration"],
    "fig3a": ["algorithm", "delta", "epsilon_total_given", "epsilon", "measure"],
    "fig3b": ["algorithm", "epsilon", "delta", "measure"],
}


def aggregate(values: dict, figure: str, run_files: list[str], n_agents: int | None = None) -> pd.DataFrame:
    """The tidy table a figure reads (see :func:`tables`).

    It has one row per group with mean, lo, hi, n over trials.
    """
    return tables(values, figure, run_files, n_agents)[0]


def tables(
    values: dict, figure: str, run_files: list[str], n_agents: int | None = None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A figure's banded table and its per-seed table (None for fig1), from one read of its runs.

    fig1: the assumed graph's edges. fig2: error per (algorithm, epsilon, delta, iteration). fig3a,
    fig3b: the final error (``measure = final``) and the mean over the last 10 outer iterations
    (``last10``, G14) per grid point. Non-finite errors (divergences) are counted in
    ``n_diverged`` and left out of the bands; every banded row carries the privacy of its runs.
    The per-seed table has the figure's keys (:data:`FIGURE_KEYS`), ``seed`` (the trial) and
    ``value``, divergences kept as they are; Fig. 2's keeps every ``SEED_ITERATION_STEP``-th
    iteration and the last.
    """
    if figure == "fig1":
        return topology_table(values, n_agents), None
    rows = [_run_row(path) for path in run_files]
    if not rows:
        raise ArtifactError(f"no runs to aggregate for {figure}")
    frame = pd.DataFrame(rows)
    keys = FIGURE_KEYS[figure]
    if figure == "fig2":
        traces = np.stack(frame.pop("trace").to_numpy())
        n_iterations = traces.shape[1]
        long = frame.loc[frame.index.repeat(n_iterations), [*RUN_KEYS, "trial"]].reset_index(drop=True)
        long["iteration"] = np.tile(np.arange(n_iterations), len(frame))
        long["value"] = traces.ravel()
        kept = (long["iteration"] % SEED_ITERATION_STEP == 0) | (long["iteration"] == n_iterations - 1)
        return bands(long, keys), seed_table(long[kept], keys)
    long = frame.drop(columns="trace").melt(
        id_vars=[*RUN_KEYS, "trial"], value_vars=["final", "last10"], var_name="measure", value_name="value"
    )
    return bands(long, keys), seed_table(long, keys)


def seed_table(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per-seed rows for the claims: ``keys``, ``seed`` (the trial) and ``value``, sorted."""
    table = frame[[*keys, "trial", "value"]].rename(columns={"trial": "seed"})
    return table.sort_values([*keys, "seed"], kind="stable").reset_index(drop=True)


def _run_row(path: str) -> dict:
    from dpdl.runs import read_run

    result = read_run(path, STUDY)
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
    """Bands of ``value`` over the finite values of each group, with ``n_diverged``.

    The group's privacy columns are beside them.
    """
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


PERTURBATION_COLUMNS = [
    "label",
    "epsilon",
    "delta",
    "epsilon_total_given",
    "seed",
    "agent",
    "degree",
    "outer_iterations",
    "n_params",
    "sensitivity",
    "sigma_assumed",
    "perturbation_rms",
    "perturbation_rms_last10",
    "ratio",
    "eps_per_iteration",
    "eps_composed_pld",
    "eps_realised_iteration",
    "eps_realised_total",
]


def perturbation_table(run_files: list[str]) -> pd.DataFrame:
    """D-ZOA's realised perturbation against the sigma_k of (25), one row per (run, agent).

    Lemma 1 (21) models agent k's shared iterate as beta_breve + xi with xi ~ N(0, sigma_k^2 I_P),
    and Corollary 1 (27) sets sigma_k to the value (25) that gives the target epsilon. Per run and
    agent: ``perturbation_rms``, the root mean square over m = 1..M and the P coordinates of the
    realised xi_k^(m) (the run's trace columns, ``dzoa run``); ``..._last10`` over the last 10
    outer iterations (G14); ``ratio`` = perturbation_rms / sigma_assumed; and the exact epsilon of
    one (``eps_realised_iteration``) and of M (``eps_realised_total``) Gaussian releases whose
    standard deviation is the realised one (multiplier perturbation_rms / Delta_k of (24); Balle &
    Wang 2018, Thm. 8), beside the nominal per-iteration epsilon and PLD total. Those exact values
    say what the run's epsilon would be *if* its perturbation were Gaussian of the size it has; they
    are not a privacy guarantee of the run (the perturbation is not shown to be Gaussian).
    Divergent runs keep NaN.
    """
    from dpdl.privacy.exact import gaussian_exact_epsilon
    from dpdl.runs import read_run
    from dpdl.studies.dzoa.run import perturbation_column

    rows = []
    for path in run_files:
        result = read_run(path, STUDY)
        prov, trace = result.provenance, result.trace
        params = prov["params"]
        if prov["algorithm"] != "dzoa":
            raise ArtifactError(
                f"{path}: a {prov['algorithm']} run; the perturbation table reads D-ZOA runs only"
            )
        n_outer = int(params["outer_iterations"])
        n_params = int(params["n_params"])
        for k, (degree, sigma, delta_k) in enumerate(
            zip(params["degrees"], params["modelled_noise_std"], params["sensitivity"], strict=True)
        ):
            column = perturbation_column(k)
            if column not in trace.columns:
                raise ArtifactError(
                    f"{path}: no trace column {column!r}; rerun dzoa run (the runs predate it)"
                )
            realised = trace[column].to_numpy(float)[1:]  # m = 1..M
            rms = float(np.sqrt(np.mean(realised**2)))
            last = float(np.sqrt(np.mean(realised[-LAST_ITERATIONS:] ** 2)))
            finite = np.isfinite(rms) and rms > 0
            rows.append(
                {
                    "label": params["grid_point"],
                    "epsilon": prov["epsilon"],
                    "delta": prov["delta"],
                    "epsilon_total_given": params.get("epsilon_total_given"),
                    "seed": prov["seed"],
                    "agent": k + 1,
                    "degree": int(degree),
                    "outer_iterations": n_outer,
                    "n_params": n_params,
                    "sensitivity": float(delta_k),
                    "sigma_assumed": float(sigma),
                    "perturbation_rms": rms,
                    "perturbation_rms_last10": last,
                    "ratio": rms / float(sigma),
                    "eps_per_iteration": prov["eps_per_iteration"],
                    "eps_composed_pld": prov["eps_composed_pld"],
                    "eps_realised_iteration": (
                        gaussian_exact_epsilon(rms / delta_k, 1, prov["delta"]) if finite else np.nan
                    ),
                    "eps_realised_total": (
                        gaussian_exact_epsilon(rms / delta_k, n_outer, prov["delta"]) if finite else np.nan
                    ),
                }
            )
    if not rows:
        raise ArtifactError("no D-ZOA runs to tabulate the perturbation of")
    table = pd.DataFrame(rows, columns=PERTURBATION_COLUMNS)
    return table.sort_values(["label", "seed", "agent"], kind="stable").reset_index(drop=True)


# Lemma 1's model xi_k^(m) ~ N(0, sigma_k^2 I_P) at every m: the RMS over M P draws estimates sigma_k
# with relative standard error 1/sqrt(2 M P) (1.6% at M = 200, P = 10); six of them is the slack.
PERTURBATION_STANDARD_ERRORS = 6


def perturbation_floor(outer_iterations: int, n_params: int) -> float:
    """Least realised / assumed ratio consistent with Lemma 1's N(0, sigma_k^2 I_P) at every m.

    Consistent means within :data:`PERTURBATION_STANDARD_ERRORS` (6) standard errors.
    """
    return 1.0 - PERTURBATION_STANDARD_ERRORS / math.sqrt(2.0 * outer_iterations * n_params)
