"""Aggregate -> figure (PNG and PDF): one plotting function per figure.

Each figure has a side table of the composed privacy of the plotted runs. Plotting computes no
statistics: every number drawn is in the figure's aggregate.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.studies.dp_iadmm.aggregate import PRIVACY_METRICS
from dpdl.studies.dp_iadmm.grid import DATASETS

SERIES_ORDER = ["ObjT", "ObjP", "OutP", "OutP+"]
PALETTE = {"ObjT": "#d62728", "ObjP": "#1f77b4", "OutP": "#2ca02c", "OutP+": "#9467bd", "non-private": "black"}
METRIC_LABELS = {
    "noise_magnitude": "average noise magnitude",
    "test_error": "testing error",
    "cv_sum": "consensus violation",
}


def _epsilons(agg: pd.DataFrame) -> list[float]:
    return sorted(e for e in agg["epsilon"].unique() if math.isfinite(e))


def _draw_curves(ax, frame: pd.DataFrame, series: str) -> None:
    """Mean over seeds (line) and 20/80 percentile band (shade) of each series against t."""
    import seaborn as sns

    labels = [s for s in SERIES_ORDER if s in set(frame[series])] or sorted(set(frame[series]), key=str)
    colors = sns.color_palette(n_colors=len(labels))
    palette = {label: PALETTE.get(label, colors[i]) for i, label in enumerate(labels)}
    frame = frame.sort_values("iteration")
    sns.lineplot(
        data=frame,
        x="iteration",
        y="mean",
        hue=series,
        hue_order=labels,
        palette=palette,
        errorbar=None,
        ax=ax,
        linewidth=1.2,
    )
    for label, group in frame.groupby(series):
        ax.fill_between(group["iteration"], group["lo"], group["hi"], color=palette[label], alpha=0.2, linewidth=0)
    if ax.get_legend() is not None:
        ax.get_legend().set_title("rho" if series == "rho_setting" else None)


def plot_curve_grid(agg: pd.DataFrame, axes, rows: list[tuple[dict, str, bool]], series: str) -> None:
    """Panels of mean curves: one row per (filter, y label, log y), one column per epsilon-bar."""
    for row, (selection, ylabel, log_y) in enumerate(rows):
        for col, eps in enumerate(_epsilons(agg)):
            ax = axes[row][col]
            mask = np.isclose(agg["epsilon"], eps)
            for key, value in selection.items():
                mask &= agg[key] == value
            _draw_curves(ax, agg[mask], series)
            ax.set_title(rf"$\bar\epsilon$ = {eps:g}")
            ax.set_xlabel("iteration t")
            ax.set_ylabel(ylabel)
            if log_y:
                ax.set_yscale("log")
            if (row, col) != (0, 0) and ax.get_legend() is not None:
                ax.get_legend().remove()


def plot_fig1(agg: pd.DataFrame, axes) -> None:
    """Fig. 1 [MNIST]: average noise magnitude (top) and testing error (bottom) against t."""
    rows = [({"metric": m}, METRIC_LABELS[m], False) for m in ("noise_magnitude", "test_error")]
    plot_curve_grid(agg, axes, rows, "algorithm")


def plot_fig2(agg: pd.DataFrame, ax) -> None:
    """Fig. 2 (a MNIST, b FEMNIST): final testing error against epsilon-bar, non-private dashed."""
    import seaborn as sns

    errors = agg[agg["metric"] == "test_error"]
    private = errors[np.isfinite(errors["epsilon"])].sort_values("epsilon")
    labels = [s for s in SERIES_ORDER if s in set(private["algorithm"])]
    sns.lineplot(
        data=private,
        x="epsilon",
        y="mean",
        hue="algorithm",
        hue_order=labels,
        palette=PALETTE,
        marker="o",
        errorbar=None,
        ax=ax,
    )
    for label, group in private.groupby("algorithm"):
        band = [group["mean"] - group["lo"], group["hi"] - group["mean"]]
        ax.errorbar(
            group["epsilon"], group["mean"], yerr=band, fmt="none", ecolor=PALETTE[label], capsize=3, linewidth=1
        )
    for _, row in errors[~np.isfinite(errors["epsilon"])].iterrows():
        ax.axhline(row["mean"], color=PALETTE["non-private"], linestyle="--", linewidth=1, label="non-private")
    ax.set_xscale("log")
    ax.set_xlabel(r"$\bar\epsilon$ (per iteration)")
    ax.set_ylabel(f"testing error at t = {int(errors['iteration'].max())}")
    ax.legend()


def plot_fig3(agg: pd.DataFrame, axes) -> None:
    """Fig. 3 [FEMNIST]: testing error against t."""
    plot_curve_grid(agg, axes, [({"metric": "test_error"}, METRIC_LABELS["test_error"], False)], "algorithm")


def plot_fig4(agg: pd.DataFrame, axes) -> None:
    """Fig. 4: OutP's testing error under five penalty settings (MNIST top, FEMNIST bottom)."""
    rows = [({"dataset": d, "metric": "test_error"}, f"{d.upper()} testing error", False) for d in DATASETS]
    plot_curve_grid(agg, axes, rows, "rho_setting")


def plot_fig5(agg: pd.DataFrame, axes) -> None:
    """Fig. 5 [MNIST]: consensus violation (top, log scale) and testing error (bottom) against t."""
    rows = [
        ({"metric": "cv_sum"}, METRIC_LABELS["cv_sum"], True),
        ({"metric": "test_error"}, METRIC_LABELS["test_error"], False),
    ]
    plot_curve_grid(agg, axes, rows, "algorithm")


def plot_fig6(agg: pd.DataFrame, axes) -> None:
    """Fig. 6 [FEMNIST]: testing error with proximity parameters scaled by a (one row per a)."""
    rows = [({"a": a, "metric": "test_error"}, f"testing error (a = {a:g})", False) for a in sorted(agg["a"].unique())]
    plot_curve_grid(agg, axes, rows, "algorithm")


def plot_privacy_table(agg: pd.DataFrame, ax) -> None:
    """Side table: composed epsilon of the plotted runs (RDP / PLD) per series and epsilon-bar."""
    ax.axis("off")
    privacy = agg[agg["metric"].isin(PRIVACY_METRICS)]
    if privacy.empty:
        return
    wide = privacy.pivot_table(
        index=["dataset", "algorithm", "a", "rho_setting", "epsilon"],
        columns="metric",
        values="mean",
        dropna=False,
        observed=True,
    ).reset_index()
    wide = wide[wide["privacy_delta"].notna()]  # combinations that were run
    wide["series"] = wide["dataset"] + " " + wide["algorithm"]
    for key, fmt in (("a", "a = {:g}"), ("rho_setting", "rho = {}")):
        if wide[key].nunique() > 1:
            wide["series"] += ", " + wide[key].map(fmt.format)
    wide["cell"] = [
        "non-private" if not np.isfinite(rdp) else f"{rdp:.3g} / {pld:.3g}"
        for rdp, pld in zip(wide["eps_composed_rdp"], wide["eps_composed_pld"], strict=True)
    ]
    table = wide.pivot(index="series", columns="epsilon", values="cell").fillna("")
    headers = ["non-private" if math.isinf(e) else rf"$\bar\epsilon$ = {e:g}" for e in table.columns]
    drawn = ax.table(cellText=table.to_numpy(), rowLabels=list(table.index), colLabels=headers, loc="center")
    drawn.auto_set_font_size(False)
    drawn.set_fontsize(7)
    t_max, delta = int(privacy["iteration"].max()), float(wide["privacy_delta"].max())
    title = f"composed epsilon per run, T = {t_max}, delta = {delta:g} (RDP / PLD);\n"
    ax.set_title(title + r"the paper states $\bar\epsilon$ per iteration", fontsize=8)


FIGURE_LAYOUT = {
    # figure: (plotting function, panel rows (None = one per a in the aggregate), one panel per epsilon-bar?)
    "fig1": (plot_fig1, 2, True),
    "fig2a": (plot_fig2, 1, False),
    "fig2b": (plot_fig2, 1, False),
    "fig3": (plot_fig3, 1, True),
    "fig4": (plot_fig4, 2, True),
    "fig5": (plot_fig5, 2, True),
    "fig6": (plot_fig6, None, True),
}


def draw_figure(figure: str, agg: pd.DataFrame, png: str | Path, pdf: str | Path) -> None:
    """Draw ``figure`` from its aggregate with the composed-privacy side table; write PNG and PDF."""
    from dpdl.plotting import new_figure, save_figure

    function, panel_rows, per_epsilon = FIGURE_LAYOUT[figure]
    panel_rows = panel_rows or agg["a"].nunique()
    cols = len(_epsilons(agg)) if per_epsilon else 1
    privacy_rows = agg[agg["metric"] == "eps_composed_rdp"][["dataset", "variant"]].drop_duplicates()
    table_height = 0.6 + 0.18 * len(privacy_rows)
    fig, axes = new_figure(
        panel_rows + 1,
        cols,
        width=4.2 if cols > 1 else 6.0,
        height=3.0,
        gridspec_kw={"height_ratios": [3.0] * panel_rows + [table_height]},
    )
    fig.set_figheight(3.0 * panel_rows + table_height + 0.4)
    gridspec = axes[0][0].get_gridspec()
    for ax in axes[-1]:
        ax.remove()
    if per_epsilon:
        function(agg, axes[:-1])
    else:
        function(agg, axes[0][0])
    plot_privacy_table(agg, fig.add_subplot(gridspec[-1, :]))
    save_figure(fig, png, pdf)
