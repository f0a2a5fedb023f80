"""dzoa's figures: each drawn from its aggregate only (PNG and PDF); plotting computes no statistics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpdl.errors import ConfigError
from dpdl.studies.dzoa.grid import ALGORITHM_NAMES, FIGURES

PAPER = "Gratton et al."
SUBJECTS = {
    "fig1": "the network of agents",
    "fig2": "normalized error over the outer iterations",
    "fig3a": "final error against the total epsilon-bar",
    "fig3b": "final error against delta",
}


def plot_topology(ax, table: pd.DataFrame) -> None:
    """Fig. 1: the assumed graph (nodes on a circle, 1-indexed), labelled as an assumption."""
    nodes = sorted(set(table["node_a"]) | set(table["node_b"]))
    angles = {n: math.pi / 2 - 2 * math.pi * (n - 1) / len(nodes) for n in nodes}
    position = {n: (math.cos(a), math.sin(a)) for n, a in angles.items()}
    degree = {}
    for row in table.itertuples(index=False):
        (xa, ya), (xb, yb) = position[row.node_a], position[row.node_b]
        ax.plot([xa, xb], [ya, yb], color="0.35", linewidth=1.6, zorder=1)
        degree[row.node_a], degree[row.node_b] = row.degree_a, row.degree_b
    for n, (x, y) in position.items():
        ax.scatter([x], [y], s=700, color="tab:blue", zorder=2)
        ax.text(
            x, y, str(n), ha="center", va="center", color="white", fontsize=12, fontweight="bold", zorder=3
        )
        ax.text(1.28 * x, 1.28 * y, f"d={degree[n]}", ha="center", va="center", fontsize=9)
    edges = ", ".join(f"{a}-{b}" for a, b in zip(table["node_a"], table["node_b"], strict=True))
    ax.set_title(f"Assumed topology '{table['topology'].iloc[0]}' (not from the paper)", fontsize=10)
    ax.text(0, -1.6, f"K = {len(nodes)}, E = {len(table)}; edges {edges}", ha="center", fontsize=8)
    ax.set_xlim(-1.6, 1.6)
    ax.set_ylim(-1.75, 1.5)
    ax.set_aspect("equal")
    ax.axis("off")


_LINE = {"dzoa": "-", "dpadmm": "--"}
_MARKER = {"dzoa": "o", "dpadmm": "s"}
_COLORS = ("tab:red", "tab:blue", "tab:green", "tab:purple", "tab:orange", "tab:brown")
# the totals of Fig. 3's privacy panel: column, line style, marker, legend name
_TOTALS = (
    ("epsilon_total_29", "-", "o", "(29)"),
    ("eps_composed_rdp", ":", "^", "RDP"),
    ("eps_composed_pld", "--", "v", "PLD"),
)


def _series_colors(values) -> dict:
    return dict(zip(sorted(values), _COLORS, strict=False))


def plot_convergence(ax, table: pd.DataFrame, delta: float) -> None:
    """Fig. 2 panel: mean normalized error vs outer iteration at one delta, both algorithms, each epsilon."""
    panel = table[np.isclose(table["delta"], delta, rtol=1e-9, atol=0)]
    colors = _series_colors(panel["epsilon"].unique())
    for (algorithm, epsilon), curve in panel.groupby(["algorithm", "epsilon"], sort=True):
        ax.plot(
            curve["iteration"],
            curve["mean"],
            _LINE[algorithm],
            color=colors[epsilon],
            label=f"{ALGORITHM_NAMES[algorithm]}, eps={epsilon:g}",
        )
        ax.fill_between(
            curve["iteration"], curve["lo"], curve["hi"], color=colors[epsilon], alpha=0.12, linewidth=0
        )
    ax.set_yscale("log")
    ax.set_xlabel("outer iteration m")
    ax.set_ylabel("normalized error")
    ax.set_title(f"delta = {delta:g}")
    ax.legend(fontsize=7, loc="upper right")


def privacy_notes(table: pd.DataFrame) -> list[str]:
    """Fig. 2's notes: the total privacy over M of (29) and of the accountant.

    The first note says what the totals are; then one note per delta (in panel order) gives each epsilon's
    totals.
    """
    rows = table[table["algorithm"] == "dzoa"].drop_duplicates(["delta", "epsilon"])
    notes = [
        "Total privacy over M outer iterations of the plotted runs (both algorithms): "
        "the paper's (29), RDP, PLD."
    ]
    for delta in sorted(rows["delta"].unique(), reverse=True):
        totals = [
            f"eps={r.epsilon:.3g}: (29) {r.epsilon_total_29:.3g}, "
            f"RDP {r.eps_composed_rdp:.3g}, PLD {r.eps_composed_pld:.3g}"
            for r in rows[rows["delta"] == delta].sort_values("epsilon").itertuples(index=False)
        ]
        notes.append(f"delta = {delta:g}: " + "; ".join(totals))
    return notes


def plot_tradeoff(ax, table: pd.DataFrame, x: str, series: str) -> None:
    """Fig. 3 panel: final mean error vs ``x``.

    It draws one curve per algorithm (line style) and ``series`` value (colour).
    """
    final = table[table["measure"] == "final"]
    colors = _series_colors(final[series].unique())
    for (algorithm, value), curve in final.groupby(["algorithm", series], sort=True):
        curve = curve.sort_values(x)
        ax.errorbar(
            curve[x],
            curve["mean"],
            yerr=[curve["mean"] - curve["lo"], curve["hi"] - curve["mean"]],
            fmt=_LINE[algorithm],
            marker=_MARKER[algorithm],
            color=colors[value],
            markersize=4,
            capsize=2,
            label=f"{ALGORITHM_NAMES[algorithm]}, {series.replace('epsilon', 'eps')}={value:g}",
        )
    ax.set_yscale("log")
    ax.set_ylabel("normalized error at m = M")
    ax.legend(fontsize=7, loc="best")


def plot_totals(ax, table: pd.DataFrame, x: str, series: str) -> None:
    """Privacy panel of Fig. 3: the paper's total (29) and the accountant's (RDP, PLD) of the plotted runs."""
    rows = table[(table["measure"] == "final") & (table["algorithm"] == "dzoa")]
    colors = _series_colors(rows[series].unique())
    for value, group in rows.groupby(series, sort=True):
        group = group.sort_values(x)
        name = f"{series.replace('epsilon', 'eps')}={value:g}"
        for column, style, marker, total in _TOTALS:
            ax.plot(
                group[x],
                group[column],
                style,
                marker=marker,
                markersize=3,
                color=colors[value],
                label=f"{total}, {name}",
            )
    ax.set_ylabel("total epsilon over M outer iterations")
    ax.set_title("privacy of the plotted runs (both algorithms)", fontsize=9)
    ax.legend(fontsize=6, loc="best")


def epsilon_note(table: pd.DataFrame) -> str:
    """Fig. 3(a)'s note: the per-iteration epsilon behind each total epsilon-bar, per delta."""
    rows = table[(table["measure"] == "final") & (table["algorithm"] == "dzoa")]
    ranges = [
        f"delta={d:g}: {g['epsilon'].min():.3g} to {g['epsilon'].max():.3g}"
        for d, g in rows.groupby("delta", sort=True)
    ]
    return "Per-iteration epsilon of the plotted runs: " + "; ".join(ranges) + "."


def draw(figure: str, table: pd.DataFrame):
    """Return one figure drawn from its aggregate table."""
    from dpdl.plotting import figure_item, label_figure, new_figure

    notes = []
    if figure == "fig1":
        fig, axes = new_figure(1, 1, width=4.6, height=4.6)
        plot_topology(axes[0, 0], table)
    elif figure == "fig2":
        deltas = sorted(table["delta"].unique(), reverse=True)
        fig, axes = new_figure(1, len(deltas), width=4.6, height=3.6)
        for ax, delta in zip(axes[0], deltas, strict=True):
            plot_convergence(ax, table, delta)
        notes += privacy_notes(table)
    elif figure == "fig3a":
        fig, axes = new_figure(1, 2, width=4.6, height=3.6)
        plot_tradeoff(axes[0, 0], table, "epsilon_total_given", "delta")
        plot_totals(axes[0, 1], table, "epsilon_total_given", "delta")
        for ax in axes[0]:
            ax.set_xlabel("total epsilon-bar of (29)")
        notes.append(epsilon_note(table))
    elif figure == "fig3b":
        fig, axes = new_figure(1, 2, width=4.6, height=3.6)
        plot_tradeoff(axes[0, 0], table, "delta", "epsilon")
        plot_totals(axes[0, 1], table, "delta", "epsilon")
        for ax in axes[0]:
            ax.set_xscale("log")
            ax.set_xlabel("delta")
    else:
        raise ConfigError(f"unknown figure {figure!r}; expected one of {FIGURES}")
    label_figure(fig, PAPER, figure_item(figure), SUBJECTS[figure], notes)
    return fig


def draw_figure(figure: str, table: pd.DataFrame, png: str, pdf: str) -> None:
    """Draw one figure (:func:`draw`) and write PNG and PDF."""
    from dpdl.plotting import save_figure

    save_figure(draw(figure, table), png, pdf)
