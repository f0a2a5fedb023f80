"""dvp_pvp runs -> one tidy aggregate per figure and its per-seed table.

The aggregate has the seed bands, for the figures; the per-seed table is for the claims.

Each aggregate has the mean and the 20/80 percentile band over seeds
(:func:`dpdl.aggregate.seed_bands`; a non-private run's alpha is NaN, its own group) beside the
composed privacy of the runs it shows; the trade-off aggregates add the fitted exponential model
of C(30) and the paper-constant curves (G22). Beside it, :func:`figure_seeds` writes one row per
run and metric (``SEED_COLUMNS``) from the same runs: the claims are judged on those per-seed
values, never on bands. Every empirical loss is in the config's ``loss_unit``
(:func:`in_loss_unit`; runs store the natural-log loss).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpdl.aggregate import seed_bands
from dpdl.errors import ArtifactError, ConfigError
from dpdl.studies.dvp_pvp.grid import FIGURES, STUDY

PVP_OFFSET_FIRST_ITERATION = 20  # PVP's c6 averages the loss over t = 20..100 (G22)
CURVE_POINTS = 200  # alphas at which fitted and paper curves are drawn
# rho values whose final loss equals the minimum to this relative precision all minimise it: DVP's
# ridge branch sets rho + Phi_p to a fixed value, so its loss does not depend on rho there (G1).
RHO_TIE_RTOL = 1e-9
# The settled part of a trace starts at t = 20: the paper averages PVP's loss over t = 20..100 for
# its c6 (J Section 5, C(30)); a shorter run uses its second half.
SETTLED_FIRST_ITERATION = 20
# trace columns of the MER figure: f_p's error rate, the released one's
MER_METRICS = ("mer", "mer_broadcast")
SEED_COLUMNS = ["algorithm", "alpha", "rho_exponent", "iteration", "metric", "seed", "value"]
RUN_KEYS = ["algorithm", "alpha", "rho_exponent", "seed"]
# The metrics of the per-seed tables: what one run's value is (``iteration`` says where it is read).
SEED_METRICS = {
    "loss": "per-sample training loss of the nodes' f_p, mean over nodes, at ``iteration``",
    "loss_mean": "mean of that loss over t = 1..T (the area under the convergence curve; iteration = T)",
    "oscillation": "the loss's variation beyond its net change over the settled "
    "window, per step (iteration = T)",
    "objective_gap": "(Z(f-bar) - Z*) / |Z*| of the consensus objective (G15) at ``iteration``",
    "mer": "misclassification rate of the nodes' f_p, mean over nodes (for PVP: not what it releases)",
    "mer_released": "misclassification rate of what each node releases: f_p for DVP, V_p for PVP",
}
# The trace columns holding the per-sample logistic loss (runs store it in ln, C(26)), besides loss_node<p>.
LOSS_COLUMNS = ("loss", "loss_broadcast", "loss_average")
# Divisor of the stored ln loss per config ``loss_unit`` (G21, note 5.3): log10(u) = ln(u) / ln(10).
LOSS_UNIT_DIVISORS = {"ln": 1.0, "log10": math.log(10.0)}
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
        run = read_run(path, STUDY)
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


def in_loss_unit(frame: pd.DataFrame, unit: str) -> pd.DataFrame:
    """Return ``frame`` with its empirical-loss columns in ``unit``.

    ``ln``: unchanged; ``log10``: divided by ln 10.

    The logistic loss of C(26), L(z) = log(1 + exp(-z)), is stored in ln, the unit of the bounds
    the paper states (|L'| <= 1, L'' <= c1 = 1/4); the paper prints no base, and its c3 = 0.135
    fits a log10 loss on Adult better (note 5.3, G21). Only the loss columns change: the error
    rates and the relative objective gap keep their values, and the runs are not touched.
    """
    if unit not in LOSS_UNIT_DIVISORS:
        raise ConfigError(f"dvp_pvp.loss_unit must be one of {', '.join(LOSS_UNIT_DIVISORS)}; got {unit!r}")
    if unit == "ln":
        return frame
    columns = [c for c in frame.columns if c in LOSS_COLUMNS or c.startswith("loss_node")]
    return frame.assign(**{column: frame[column] / LOSS_UNIT_DIVISORS[unit] for column in columns})


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
    frame = in_loss_unit(frame, values["loss_unit"])
    if figure == "convergence":
        return aggregate_convergence(frame, provenances)
    if figure in ("tradeoff_dvp", "tradeoff_pvp"):
        mechanism = figure.removeprefix("tradeoff_")
        return aggregate_tradeoff(frame, provenances, mechanism, values["tradeoff_iterations"])
    if figure == "final_risk":
        return aggregate_at_iteration(frame, provenances, "loss", None)
    if figure == "mer":  # the error rate of f_p, and of what is released (PVP: V_p, G21)
        parts = [aggregate_at_iteration(frame, provenances, m, values["mer_iteration"]) for m in MER_METRICS]
        return pd.concat(parts, ignore_index=True)
    if figure == "rho_selection":
        return aggregate_rho_selection(frame, provenances)
    raise ConfigError(f"unknown dvp_pvp figure {figure!r}; expected one of {', '.join(FIGURES)}")


def rho_argmins(part: pd.DataFrame) -> pd.DataFrame:
    """The rows of one algorithm's rho grid whose mean final loss is the minimum.

    Ties are within ``RHO_TIE_RTOL``.
    """
    least = part["mean"].min()
    return part[part["mean"] <= least + RHO_TIE_RTOL * abs(least)]


def exponent_range(argmins: pd.DataFrame) -> str:
    """The rho of ``argmins`` as text: ``10^-2.5``, or ``10^-4..10^-2.5 (4 tied)``."""
    low, high = argmins["rho_exponent"].min(), argmins["rho_exponent"].max()
    return f"10^{low:g}" if len(argmins) == 1 else f"10^{low:g}..10^{high:g} ({len(argmins)} tied)"


# ------------------------------------------------------------------------------ per-seed tables


def oscillation(values) -> float:
    """The variation of a sequence beyond its net change, per step: (sum |diff| - |sum diff|) / steps.

    It is zero for a monotone sequence however steep, so a converging or decaying curve is not counted as
    oscillating, and NaN with fewer than two values.
    """
    steps = np.diff(np.asarray(values, dtype=float))
    if len(steps) == 0:
        return math.nan
    return float((np.abs(steps).sum() - abs(steps.sum())) / len(steps))


def settled_window(iterations: int) -> tuple[int, int]:
    """The iterations (first, last) whose oscillation a run's settled behaviour is judged on.

    The window is t = 20..T (:data:`SETTLED_FIRST_ITERATION`), or T/2..T when T/2 is below 20.
    """
    return max(1, min(SETTLED_FIRST_ITERATION, iterations // 2)), iterations


def _run_rows(frame: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """One row per run and metric: ``metrics`` maps a metric to ``trace -> (iteration, value)``."""
    frame = frame.assign(rho_exponent=np.round(np.log10(frame["rho"]), 6))
    rows = []
    for key, trace in frame.groupby(RUN_KEYS, dropna=False, sort=True):
        trace = trace.sort_values("iteration")
        for metric, compute in metrics.items():
            iteration, value = compute(trace)
            rows.append(
                dict(zip(RUN_KEYS, key, strict=True), iteration=iteration, metric=metric, value=value)
            )
    return pd.DataFrame(rows, columns=SEED_COLUMNS)


def _at(column: str, iteration: int | None):
    """Metric: ``column`` at ``iteration`` (None: the final output t = T + 1)."""

    def compute(trace: pd.DataFrame) -> tuple[int, float]:
        t = int(trace["T"].iloc[0]) + 1 if iteration is None else iteration
        return t, float(trace.loc[trace["iteration"] == t, column].iloc[0])

    return compute


def _loss_mean(trace: pd.DataFrame) -> tuple[int, float]:
    last = int(trace["T"].iloc[0])
    return last, float(trace.loc[trace["iteration"].between(1, last), "loss"].mean())


def _oscillation(trace: pd.DataFrame) -> tuple[int, float]:
    first, last = settled_window(int(trace["T"].iloc[0]))
    return last, oscillation(trace.loc[trace["iteration"].between(first, last), "loss"])


def _last_iteration(column: str):
    def compute(trace: pd.DataFrame) -> tuple[int, float]:
        return _at(column, int(trace["T"].iloc[0]))(trace)

    return compute


def figure_seeds(figure: str, frame: pd.DataFrame, values: dict) -> pd.DataFrame:
    """Return the per-seed table of ``figure``: one row per run and metric.

    Its columns are ``SEED_COLUMNS``, its metrics ``SEED_METRICS``.

    convergence: the oscillation of the loss over the settled window and the objective gap at
    t = T; trade-off: the loss at each trade-off iteration; final risk: the loss of the final
    output, its mean over t = 1..T and its oscillation; MER: the error rate of f_p and of what is
    released at the MER iteration; rho selection: the loss of the final output. Losses are in
    the config's ``loss_unit``.
    """
    frame = in_loss_unit(frame, values["loss_unit"])
    if figure == "convergence":
        metrics = {"oscillation": _oscillation, "objective_gap": _last_iteration("objective_gap")}
    elif figure in ("tradeoff_dvp", "tradeoff_pvp"):
        parts = [_run_rows(frame, {"loss": _at("loss", t)}) for t in values["tradeoff_iterations"]]
        return pd.concat(parts, ignore_index=True)
    elif figure == "final_risk":
        metrics = {"loss": _at("loss", None), "loss_mean": _loss_mean, "oscillation": _oscillation}
    elif figure == "mer":
        t = values["mer_iteration"]
        metrics = {"mer": _at("mer", t), "mer_released": _at("mer_broadcast", t)}
    elif figure == "rho_selection":
        metrics = {"loss": _at("loss", None)}
    else:
        raise ConfigError(f"unknown dvp_pvp figure {figure!r}; expected one of {', '.join(FIGURES)}")
    return _run_rows(frame, metrics)
