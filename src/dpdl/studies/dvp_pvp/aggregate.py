"""dvp_pvp runs -> one tidy aggregate per figure: seed bands, the runs' composed privacy, the fits.

Each aggregate has the mean and the 20/80 percentile band over seeds
(:func:`dpdl.aggregate.seed_bands`; a non-private run's alpha is NaN, its own group) beside the
composed privacy of the runs it shows; the trade-off aggregates add the fitted exponential model
of C(30) and the paper-constant curves (G22).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpdl.aggregate import seed_bands
from dpdl.errors import ArtifactError, ConfigError
from dpdl.studies.dvp_pvp.grid import FIGURES

PVP_OFFSET_FIRST_ITERATION = 20  # PVP's c6 averages the loss over t = 20..100 (G22)
CURVE_POINTS = 200  # alphas at which fitted and paper curves are drawn
# rho values whose final loss equals the minimum to this relative precision all minimise it: DVP's
# ridge branch sets rho + Phi_p to a fixed value, so its loss does not depend on rho there (G1).
RHO_TIE_RTOL = 1e-9
TRADEOFF_COLUMNS = [
    "algorithm",
    "iteration",
    "series",
    "alpha",
    "mean",
    "lo",
    "hi",
    "n",
    "a",
    "b",
    "c",
    "a_se",
    "b_se",
    "c_se",
    "fit_ok",
    "releases",
    "eps_composed_rdp",
    "eps_composed_pld",
    "delta",
]


def load_runs(paths: list[str]) -> tuple[pd.DataFrame, list[dict]]:
    """Return all traces of ``paths`` in one frame (with algorithm, alpha, seed, rho) and provenances."""
    from dpdl.runs import read_run

    frames, provenances = [], []
    for path in paths:
        run = read_run(path)
        prov = run.provenance
        params = prov["params"]
        frame = run.trace.copy()
        frame["algorithm"] = prov["algorithm"]
        frame["alpha"] = math.nan if prov["epsilon"] is None else prov["epsilon"]
        frame["seed"] = prov["seed"]
        frame["rho"] = params["rho"]
        frame["T"] = params["iterations"]
        frames.append(frame)
        provenances.append(prov)
    if not frames:
        raise ArtifactError("no runs given; pass --runs")
    return pd.concat(frames, ignore_index=True), provenances


def privacy_columns(provenances: list[dict]) -> pd.DataFrame:
    """Return one row per (algorithm, alpha): the paper's alpha, releases and composed epsilons."""
    rows = {}
    for prov in provenances:
        alpha = math.nan if prov["epsilon"] is None else prov["epsilon"]
        rows[(prov["algorithm"], alpha)] = {
            "algorithm": prov["algorithm"],
            "alpha": alpha,
            "releases": prov["params"]["releases"],
            "eps_composed_rdp": _none_to_nan(prov["eps_composed_rdp"]),
            "eps_composed_pld": _none_to_nan(prov["eps_composed_pld"]),
            "delta": prov["delta"],
        }
    return pd.DataFrame(list(rows.values()))


def _none_to_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def with_privacy(frame: pd.DataFrame, provenances: list[dict]) -> pd.DataFrame:
    """Return ``frame`` with the composed privacy of its (algorithm, alpha) runs as columns."""
    return frame.merge(privacy_columns(provenances), on=["algorithm", "alpha"], how="left")


def aggregate_convergence(frame: pd.DataFrame, provenances: list[dict]) -> pd.DataFrame:
    """Return the convergence aggregate (O3): per algorithm, alpha, metric and iteration."""
    parts = []
    for metric in ("loss", "mer", "objective_gap"):
        bands = seed_bands(frame, ["algorithm", "alpha", "iteration"], metric)
        bands.insert(2, "metric", metric)
        parts.append(bands)
    return with_privacy(pd.concat(parts, ignore_index=True), provenances)


def aggregate_at_iteration(
    frame: pd.DataFrame, provenances: list[dict], metric: str, iteration: int | None
) -> pd.DataFrame:
    """Return ``metric`` at ``iteration`` (None: the final output t = T + 1) per algorithm and alpha."""
    chosen = frame[frame["iteration"] == (frame["T"] + 1 if iteration is None else iteration)]
    bands = seed_bands(chosen, ["algorithm", "alpha"], metric)
    bands.insert(2, "metric", metric)
    bands.insert(3, "iteration", int(chosen["iteration"].iloc[0]))
    return with_privacy(bands, provenances)


def paper_offset(frame: pd.DataFrame, mechanism: str) -> float:
    """Return the paper-constant curve's c6 from our runs (G22 (ii)).

    DVP: c6 = min over t and alpha of the seed-mean loss C-bar(t). PVP: the mean over
    t = 20..T (t = 20..100 in the paper) of C-bar(t) per alpha, averaged over alpha (all t >= 1
    when T < 20).
    """
    means = frame.groupby(["alpha", "iteration"])["loss"].mean().reset_index()
    if mechanism == "dvp":
        return float(means["loss"].min())
    first = PVP_OFFSET_FIRST_ITERATION if means["iteration"].max() - 1 >= PVP_OFFSET_FIRST_ITERATION else 1
    window = means[(means["iteration"] >= first) & (means["iteration"] <= means["iteration"].max() - 1)]
    return float(window.groupby("alpha")["loss"].mean().mean())


def aggregate_tradeoff(
    frame: pd.DataFrame, provenances: list[dict], mechanism: str, iterations: list[int]
) -> pd.DataFrame:
    """Return the trade-off aggregate of one mechanism (O4/O5).

    Rows by ``series``: ``points`` (seed bands of the loss at each alpha and iteration),
    ``fit`` (our least-squares a exp(-b alpha) + c, with a, b, c and standard errors),
    ``paper`` (the paper's a, b with c per G22), ``utility`` (U_priv), ``objective_fit`` and
    ``objective_paper`` (J = L_acc - U_priv); curves on ``CURVE_POINTS`` alphas.
    """
    from dpdl.algorithms.dvp_pvp_tradeoff import (
        PAPER_AMPLITUDE_DECAY,
        accuracy_curve,
        fit_accuracy_curve,
        privacy_utility,
        tradeoff_objective,
    )

    frame = frame[frame["algorithm"] == mechanism]
    alphas = np.sort(frame["alpha"].unique())
    dense = np.geomspace(alphas.min(), alphas.max(), CURVE_POINTS) if len(alphas) > 1 else alphas
    offset = paper_offset(frame, mechanism)
    paper_a, paper_b = PAPER_AMPLITUDE_DECAY[mechanism]
    parts = []
    for iteration in iterations:
        points = seed_bands(frame[frame["iteration"] == iteration], ["algorithm", "alpha"], "loss")
        points = with_privacy(points, provenances).assign(series="points", iteration=iteration)
        parts.append(points)
        fit = fit_accuracy_curve(points["alpha"].to_numpy(), points["mean"].to_numpy())
        ours, paper = (fit.a, fit.b, fit.c), (paper_a, paper_b, offset)
        curves = {
            "fit": (accuracy_curve(dense, *ours), ours),  # C(30): a exp(-b alpha) + c
            "paper": (accuracy_curve(dense, *paper), paper),
            "utility": (privacy_utility(dense), (math.nan,) * 3),
            "objective_fit": (tradeoff_objective(dense, *ours), ours),
            "objective_paper": (tradeoff_objective(dense, *paper), paper),
        }
        for series, (curve, (a, b, c)) in curves.items():
            fitted = series in ("fit", "objective_fit")
            errors = (fit.a_se, fit.b_se, fit.c_se) if fitted else (math.nan,) * 3
            parts.append(
                pd.DataFrame(
                    {
                        "algorithm": mechanism,
                        "iteration": iteration,
                        "series": series,
                        "alpha": dense,
                        "mean": curve,
                        "lo": curve,
                        "hi": curve,
                        "n": len(points),
                        "a": a,
                        "b": b,
                        "c": c,
                        "a_se": errors[0],
                        "b_se": errors[1],
                        "c_se": errors[2],
                        "fit_ok": fit.ok if fitted else True,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True).reindex(columns=TRADEOFF_COLUMNS)


def aggregate_rho_selection(frame: pd.DataFrame, provenances: list[dict]) -> pd.DataFrame:
    """Return the final training loss per algorithm and rho (O1), with the runs' composed privacy."""
    final = frame[frame["iteration"] == frame["T"] + 1].copy()
    final["rho_exponent"] = np.round(np.log10(final["rho"]), 6)
    bands = seed_bands(final, ["algorithm", "rho_exponent"], "loss")
    bands.insert(2, "rho", 10.0 ** bands["rho_exponent"])
    alphas = final.groupby("algorithm")["alpha"].first()
    bands.insert(3, "alpha", bands["algorithm"].map(alphas))
    return with_privacy(bands, provenances)


def figure_aggregate(figure: str, frame: pd.DataFrame, provenances: list[dict], values: dict) -> pd.DataFrame:
    """Return the aggregate of ``figure`` from its runs (``values``: the dvp_pvp config section)."""
    if figure == "convergence":
        return aggregate_convergence(frame, provenances)
    if figure in ("tradeoff_dvp", "tradeoff_pvp"):
        mechanism = figure.removeprefix("tradeoff_")
        return aggregate_tradeoff(frame, provenances, mechanism, values["tradeoff_iterations"])
    if figure == "final_risk":
        return aggregate_at_iteration(frame, provenances, "loss", None)
    if figure == "mer":
        return aggregate_at_iteration(frame, provenances, "mer", values["mer_iteration"])
    if figure == "rho_selection":
        return aggregate_rho_selection(frame, provenances)
    raise ConfigError(f"unknown dvp_pvp figure {figure!r}; expected one of {', '.join(FIGURES)}")


def rho_argmins(part: pd.DataFrame) -> pd.DataFrame:
    """The rows of one algorithm's rho grid whose mean final loss is the minimum (ties within ``RHO_TIE_RTOL``)."""
    least = part["mean"].min()
    return part[part["mean"] <= least + RHO_TIE_RTOL * abs(least)]


def exponent_range(argmins: pd.DataFrame) -> str:
    """The rho of ``argmins`` as text: ``10^-2.5``, or ``10^-4..10^-2.5 (4 tied)``."""
    low, high = argmins["rho_exponent"].min(), argmins["rho_exponent"].max()
    return f"10^{low:g}" if len(argmins) == 1 else f"10^{low:g}..10^{high:g} ({len(argmins)} tied)"
