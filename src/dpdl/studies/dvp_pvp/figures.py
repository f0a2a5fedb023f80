"""dvp_pvp figures from their aggregates.

Convergence (J Fig. 3), trade-off (J Fig. 4), risk and error against alpha (J Fig. 5), rho selection
(O1). Plotting computes no statistics.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpdl.errors import ConfigError
from dpdl.studies.dvp_pvp.grid import ALGORITHM_NAMES, ALGORITHMS, FIGURES, PAPER_RHO_EXPONENT, PRIVATE

COLORS = {"nonprivate": "0.3", "dvp": "tab:blue", "pvp": "tab:orange"}
CURVE_COLORS = {"utility": "tab:green", "objective_fit": "k", "objective_paper": "tab:red"}
TOP_AXIS_ALPHAS = (0.01, 0.1, 0.3, 0.5, 1.0)  # alphas labelled with their composed epsilon
PAPER = "Zhang & Zhu"
PAPER_ITEMS = {  # figure: (the journal version's figure, subject naming the conference version's)
    "convergence": ("Figure 3", "convergence at each alpha (conference version: Figure 4)"),
    "tradeoff_dvp": ("Figure 4(a, b)", "privacy-accuracy trade-off of DVP (conference version: Figure 5)"),
    "tradeoff_pvp": ("Figure 4(c, d)", "privacy-accuracy trade-off of PVP (conference version: Figure 6)"),
    "final_risk": (
        "Figure 5(a)",
        "empirical risk of the final output against alpha (conference version: Figure 7)",
    ),
    "mer": ("Figure 5(b)", "misclassification rate against alpha (conference version: Figure 8)"),
    "rho_selection": ("Table 1 of the conference version", "the rho of each algorithm"),
}


def _composed_label(row: pd.Series) -> str:
    if pd.isna(row.get("eps_composed_pld")):
        return ""
    return (
        f"{row['releases']:.0f} releases: eps = {row['eps_composed_pld']:.3g} (PLD, delta = {row['delta']:g})"
    )


def _top_axis_privacy(ax, privacy: pd.DataFrame) -> None:
    """Label a few alphas on a top axis with the composed epsilon of their runs."""
    privacy = privacy.dropna(subset=["eps_composed_pld"]).drop_duplicates("alpha").sort_values("alpha")
    chosen = privacy[privacy["alpha"].round(6).isin(TOP_AXIS_ALPHAS)]
    if chosen.empty:
        return
    top = ax.secondary_xaxis("top")
    top.set_xticks(chosen["alpha"].to_numpy(), [f"{e:.3g}" for e in chosen["eps_composed_pld"]])
    row = chosen.iloc[0]
    top.set_xlabel(
        f"composed eps over {row['releases']:.0f} releases (PLD, delta = {row['delta']:g})", fontsize=8
    )
    top.tick_params(labelsize=7)


# Below the convergence figure: why PVP's final point (t = T + 1) leaves its curve in every panel.
FINAL_STEP_NOTE = (
    "Markers at t = T + 1 = {final}: the final output, drawn apart from the lines (t = 0..T). PVP's final "
    "iteration is one DVP step (J(21)-(23); notes G6, G16), so PVP's last point leaves its curve by design, "
    "not by a logging error: up to t = T the curve is PVP's f_p(t), which PVP never releases (it releases "
    "V_p = f_p + noise), while its output f_p(T + 1) carries DVP's dual noise, calibrated at PVP's rho and "
    "C^R. DVP and the non-private run take one more identical step."
)


def plot_convergence(aggregate: pd.DataFrame, axes: np.ndarray) -> np.ndarray:
    """Draw the convergence figure (J Fig. 3): loss (top row) and error rate (bottom) against t.

    ``axes`` has shape (2, number of alphas); the non-private run is drawn in every panel. The
    iterations t = 0..T are lines with seed bands; the final output t = T + 1 (for PVP a DVP step,
    :data:`FINAL_STEP_NOTE`) is a marker with its band as an error bar, not joined to the line.
    """
    from matplotlib.lines import Line2D

    private = aggregate[aggregate["algorithm"] != "nonprivate"]
    alphas = sorted(private["alpha"].unique())
    reference = aggregate[aggregate["algorithm"] == "nonprivate"]
    final = int(aggregate["iteration"].max())  # T + 1
    for column, alpha in enumerate(alphas):
        for row, metric in enumerate(("loss", "mer")):
            ax = axes[row, column]
            for algorithm in ALGORITHMS:
                part = (
                    reference
                    if algorithm == "nonprivate"
                    else private[(private["algorithm"] == algorithm) & (private["alpha"] == alpha)]
                )
                part = part[part["metric"] == metric].sort_values("iteration")
                if part.empty:
                    continue
                color = COLORS[algorithm]
                steps, last = part[part["iteration"] < final], part[part["iteration"] == final]
                ax.plot(
                    steps["iteration"], steps["mean"], color=color, label=ALGORITHM_NAMES[algorithm], lw=1.2
                )
                ax.fill_between(steps["iteration"], steps["lo"], steps["hi"], color=color, alpha=0.2, lw=0)
                errors = [last["mean"] - last["lo"], last["hi"] - last["mean"]]
                ax.errorbar(
                    last["iteration"], last["mean"], yerr=errors, fmt="o", ms=3.5, color=color, capsize=2
                )
            ax.set_xlabel("iteration t")
            if metric == "loss":
                ax.set_yscale("log")
                rows = private[(private["alpha"] == alpha) & (private["metric"] == "loss")]
                composed = rows.loc[rows["eps_composed_pld"].idxmax()]  # DVP and PVP may differ (G1)
                ax.set_title(f"alpha = {alpha:g} per iteration\n{_composed_label(composed)}", fontsize=8)
        axes[0, column].set_ylabel("empirical loss (per sample)")
        axes[1, column].set_ylabel("misclassification rate")
    marker = Line2D([], [], color="0.4", marker="o", ms=3.5, ls="none", label=f"final output, t = {final}")
    handles, _ = axes[0, 0].get_legend_handles_labels()
    axes[0, 0].legend(handles=[*handles, marker], fontsize=7)
    return axes


def plot_tradeoff(aggregate: pd.DataFrame, axes: np.ndarray) -> np.ndarray:
    """Draw one mechanism's trade-off figure (J Fig. 4): points, our fit, the paper's curve; J.

    ``axes`` has shape (2, number of iterations): top, the loss at iteration t against alpha with
    the fitted a exp(-b alpha) + c and the paper-constant curve; bottom, U_priv and
    J = L_acc - U_priv for both sets of constants.
    """
    algorithm = aggregate["algorithm"].iloc[0]
    for column, (iteration, part) in enumerate(aggregate.groupby("iteration", sort=True)):
        ax = axes[0, column]
        points = part[part["series"] == "points"]
        errors = [points["mean"] - points["lo"], points["hi"] - points["mean"]]
        ax.errorbar(
            points["alpha"],
            points["mean"],
            yerr=errors,
            fmt="o",
            ms=4,
            color=COLORS[algorithm],
            label="runs (mean, 20-80%)",
        )
        for series, style, name in (("fit", "-", "our fit"), ("paper", "--", "paper a, b; c per G22")):
            curve = part[part["series"] == series]
            first = curve.iloc[0]
            text = f"{name}: a={first['a']:.3g}, b={first['b']:.3g}, c={first['c']:.3g}"
            ax.plot(
                curve["alpha"],
                curve["mean"],
                style,
                color="k" if series == "fit" else "tab:red",
                lw=1,
                label=text,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("alpha per iteration")
        ax.set_ylabel(f"empirical loss at t = {iteration}")
        ax.set_title(f"{ALGORITHM_NAMES[algorithm]}: t = {iteration}", fontsize=9)
        ax.legend(fontsize=6)
        _top_axis_privacy(ax, points)
        bottom = axes[1, column]
        for series, style, name in (
            ("utility", ":", "U_priv"),
            ("objective_fit", "-", "J, our fit"),
            ("objective_paper", "--", "J, paper constants"),
        ):
            curve = part[part["series"] == series]
            bottom.plot(curve["alpha"], curve["mean"], style, lw=1, label=name, color=CURVE_COLORS[series])
        bottom.set_xscale("log")
        bottom.set_yscale("symlog", linthresh=0.01)
        bottom.set_xlabel("alpha per iteration")
        bottom.set_ylabel("U_priv and J = L_acc - U_priv")
        bottom.legend(fontsize=6)
    return axes


def plot_against_alpha(aggregate: pd.DataFrame, ax, ylabel: str, log_y: bool) -> object:
    """Draw DVP and PVP against alpha with seed bands and the non-private run as a line (J Fig. 5).

    The first metric of the aggregate is drawn for every algorithm; where the aggregate also has
    ``mer_broadcast`` (the MER figure), PVP's released V_p is drawn dashed beside its f_p.
    """
    metrics = list(dict.fromkeys(aggregate["metric"])) if "metric" in aggregate else []
    released = aggregate[(aggregate["metric"] == "mer_broadcast") & (aggregate["algorithm"] == "pvp")]
    aggregate = aggregate[aggregate["metric"] == metrics[0]] if metrics else aggregate
    for algorithm in PRIVATE:
        part = aggregate[aggregate["algorithm"] == algorithm].sort_values("alpha")
        label = ALGORITHM_NAMES[algorithm] + (
            ": its f_p, not released" if algorithm == "pvp" and len(released) else ""
        )
        ax.plot(part["alpha"], part["mean"], "o-", ms=3, color=COLORS[algorithm], label=label)
        ax.fill_between(part["alpha"], part["lo"], part["hi"], color=COLORS[algorithm], alpha=0.2, lw=0)
    if len(released):
        part = released.sort_values("alpha")
        label = f"{ALGORITHM_NAMES['pvp']}: released V_p"
        ax.plot(part["alpha"], part["mean"], "s--", ms=3, color=COLORS["pvp"], label=label)
        ax.fill_between(part["alpha"], part["lo"], part["hi"], color=COLORS["pvp"], alpha=0.1, lw=0)
    reference = aggregate[aggregate["algorithm"] == "nonprivate"]
    if len(reference):
        ax.axhline(
            reference["mean"].iloc[0],
            color=COLORS["nonprivate"],
            ls="--",
            lw=1,
            label=ALGORITHM_NAMES["nonprivate"],
        )
    ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel("alpha per iteration")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    _top_axis_privacy(ax, aggregate[aggregate["algorithm"] != "nonprivate"])
    return ax


def plot_rho_selection(aggregate: pd.DataFrame, ax) -> object:
    """Draw the final training loss against rho per algorithm, with the paper's rho marked (O1)."""
    for algorithm in ALGORITHMS:
        part = aggregate[aggregate["algorithm"] == algorithm].sort_values("rho_exponent")
        ax.plot(
            part["rho"], part["mean"], "o-", ms=3, color=COLORS[algorithm], label=ALGORITHM_NAMES[algorithm]
        )
        ax.fill_between(part["rho"], part["lo"], part["hi"], color=COLORS[algorithm], alpha=0.2, lw=0)
        ax.axvline(10.0 ** PAPER_RHO_EXPONENT[algorithm], color=COLORS[algorithm], ls=":", lw=1)
        best = part.loc[part["mean"].idxmin()]
        ax.plot(best["rho"], best["mean"], "*", ms=10, color=COLORS[algorithm])
    private = aggregate.dropna(subset=["eps_composed_pld"])
    if len(private):
        row = private.iloc[0]
        ax.set_title(
            f"DVP and PVP at alpha = {row['alpha']:g} per iteration\n{_composed_label(row)}", fontsize=8
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rho (dotted: the paper's choice; star: our argmin)")
    ax.set_ylabel("final empirical loss (per sample)")
    ax.legend(fontsize=7)
    return ax


def draw(figure: str, aggregate: pd.DataFrame):
    """Return the matplotlib figure ``figure`` drawn from its aggregate, titled with the paper's figure."""
    from dpdl.plotting import label_figure, new_figure

    notes = []
    if figure == "convergence":
        n_alphas = aggregate.loc[aggregate["algorithm"] != "nonprivate", "alpha"].nunique()
        fig, axes = new_figure(2, n_alphas, width=3.4, height=2.8)
        plot_convergence(aggregate, axes)
        notes = [FINAL_STEP_NOTE.format(final=int(aggregate["iteration"].max()))]
    elif figure in ("tradeoff_dvp", "tradeoff_pvp"):
        fig, axes = new_figure(2, aggregate["iteration"].nunique(), width=4.2, height=3.4)
        plot_tradeoff(aggregate, axes)
    elif figure == "final_risk":
        fig, axes = new_figure()
        plot_against_alpha(aggregate, axes[0, 0], "final empirical risk (t = T + 1)", log_y=True)
    elif figure == "mer":
        fig, axes = new_figure()
        iteration = int(aggregate["iteration"].iloc[0])
        plot_against_alpha(aggregate, axes[0, 0], f"misclassification rate at t = {iteration}", log_y=False)
    elif figure == "rho_selection":
        fig, axes = new_figure(width=5.0)
        plot_rho_selection(aggregate, axes[0, 0])
    else:
        raise ConfigError(f"unknown dvp_pvp figure {figure!r}; expected one of {', '.join(FIGURES)}")
    label_figure(fig, PAPER, *PAPER_ITEMS[figure], notes)
    return fig
