"""Aggregate -> figure (PNG and PDF): one plotting function per figure.

Each figure notes below its panels the composed privacy of the plotted runs. Plotting computes no
statistics: every number drawn is in the figure's aggregate.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.studies.dp_iadmm.aggregate import PRIVACY_METRICS
from dpdl.studies.dp_iadmm.grid import DATASETS, FIGURE_SPECS

SERIES_ORDER = ["ObjT", "ObjP", "OutP", "OutP+"]
PALETTE = {
    "ObjT": "#d62728",
    "ObjP": "#1f77b4",
    "OutP": "#2ca02c",
    "OutP+": "#9467bd",
    "non-private": "black",
}
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
        ax.fill_between(
            group["iteration"], group["lo"], group["hi"], color=palette[label], alpha=0.2, linewidth=0
        )


def rho_name(algorithm: str, rho_setting: str) -> str:
    """Fig. 4's name of a penalty setting, in its legend and its notes alike: OutP+ is OutP at rho-hat/100."""
    return f"{rho_setting} (OutP+)" if algorithm == "OutP+" else rho_setting


def plot_curve_grid(agg: pd.DataFrame, axes, rows: list[tuple[dict, str, bool]], series: str) -> None:
    """Panels of mean curves: one row per (filter, y label, log y), one column per epsilon-bar.

    One legend for the figure, outside the panels on the right, so that it covers no curve.
    """
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
    found = {}  # every panel's series: one a narrowed build ran at some epsilon-bars only is named too
    for ax in np.ravel(axes):
        found |= {label: handle for handle, label in zip(*ax.get_legend_handles_labels(), strict=True)}
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    labels = [s for s in SERIES_ORDER if s in found] + [s for s in found if s not in SERIES_ORDER]
    title = "rho" if series == "rho_setting" else None
    axes[0][0].figure.legend([found[s] for s in labels], labels, title=title, loc="outside right center")


def plot_fig1(agg: pd.DataFrame, axes) -> None:
    """Fig. 1 [MNIST]: average noise magnitude (top) and testing error (bottom) against t."""
    rows = [({"metric": m}, METRIC_LABELS[m], False) for m in ("noise_magnitude", "test_error")]
    plot_curve_grid(agg, axes, rows, "algorithm")


def _broken_at_gaps(group: pd.DataFrame, left_out: list[float]) -> tuple[list[float], list[float]]:
    """One series' (epsilon-bar, mean) points, a NaN between two of them with a left-out cell between."""
    xs, ys = [], []
    for eps, mean in zip(group["epsilon"], group["mean"], strict=True):
        if xs and any(xs[-1] < gap < eps for gap in left_out):
            xs.append(math.nan)  # matplotlib breaks the line at a NaN
            ys.append(math.nan)
        xs.append(eps)
        ys.append(mean)
    return xs, ys


def plot_fig2(agg: pd.DataFrame, ax, gaps=()) -> None:
    """Fig. 2 (a MNIST, b FEMNIST): final testing error against epsilon-bar, non-private dashed.

    ``gaps``: cells of the grid not run ([dataset, variant, epsilon] each); no line crosses one.
    """
    errors = agg[agg["metric"] == "test_error"]
    private = errors[np.isfinite(errors["epsilon"])].sort_values("epsilon")
    labels = [s for s in SERIES_ORDER if s in set(private["algorithm"])]
    for label in labels:
        group = private[private["algorithm"] == label]
        cells = set(zip(group["dataset"], group["variant"], strict=True))
        left_out = [float(eps) for dataset, variant, eps in gaps if (dataset, variant) in cells]
        ax.plot(*_broken_at_gaps(group, left_out), marker="o", color=PALETTE[label], label=label)
        band = [group["mean"] - group["lo"], group["hi"] - group["mean"]]
        ax.errorbar(
            group["epsilon"],
            group["mean"],
            yerr=band,
            fmt="none",
            ecolor=PALETTE[label],
            capsize=3,
            linewidth=1,
        )
    for _, row in errors[~np.isfinite(errors["epsilon"])].iterrows():
        ax.axhline(
            row["mean"], color=PALETTE["non-private"], linestyle="--", linewidth=1, label="non-private"
        )
    ax.set_xscale("log")
    ax.set_xlabel(r"$\bar\epsilon$ (per iteration)")
    ax.set_ylabel(f"testing error at t = {int(errors['iteration'].max())}")
    ax.legend()


def plot_fig3(agg: pd.DataFrame, axes) -> None:
    """Fig. 3 [FEMNIST]: testing error against t."""
    plot_curve_grid(agg, axes, [({"metric": "test_error"}, METRIC_LABELS["test_error"], False)], "algorithm")


def _datasets(agg: pd.DataFrame) -> list[str]:
    """The study's datasets the aggregate has rows of, in the paper's order."""
    return [dataset for dataset in DATASETS if dataset in set(agg["dataset"])]


def plot_fig4(agg: pd.DataFrame, axes) -> None:
    """Fig. 4: OutP's testing error under five penalty settings.

    MNIST top, FEMNIST bottom; a row per dataset run.
    """
    rows = [
        ({"dataset": d, "metric": "test_error"}, f"{d.upper()} testing error", False) for d in _datasets(agg)
    ]
    named = agg.assign(
        rho_setting=[rho_name(a, r) for a, r in zip(agg["algorithm"], agg["rho_setting"], strict=True)]
    )
    plot_curve_grid(named, axes, rows, "rho_setting")


def plot_fig5(agg: pd.DataFrame, axes) -> None:
    """Fig. 5 [MNIST]: consensus violation (top, log scale) and testing error (bottom) against t."""
    rows = [
        ({"metric": "cv_sum"}, METRIC_LABELS["cv_sum"], True),
        ({"metric": "test_error"}, METRIC_LABELS["test_error"], False),
    ]
    plot_curve_grid(agg, axes, rows, "algorithm")


def plot_fig6(agg: pd.DataFrame, axes) -> None:
    """Fig. 6 [FEMNIST]: testing error with proximity parameters scaled by a (one row per a)."""
    rows = [
        ({"a": a, "metric": "test_error"}, f"testing error (a = {a:g})", False)
        for a in sorted(agg["a"].unique())
    ]
    plot_curve_grid(agg, axes, rows, "algorithm")


def privacy_notes(agg: pd.DataFrame) -> list[str]:
    """Notes: the composed epsilon (RDP / PLD) of the plotted noisy runs, one line per series."""
    privacy = agg[agg["metric"].isin(PRIVACY_METRICS)]
    if privacy.empty:
        return []
    wide = privacy.pivot_table(
        index=["dataset", "algorithm", "a", "rho_setting", "epsilon"],
        columns="metric",
        values="mean",
        dropna=False,
        observed=True,
    ).reset_index()
    # noisy combinations that were run
    wide = wide[wide["privacy_delta"].notna() & np.isfinite(wide["epsilon"])]
    wide = wide.sort_values("dataset", key=lambda names: names.map(DATASETS.index), kind="stable")
    wide["series"] = wide["dataset"].str.upper() + " " + wide["algorithm"]
    if wide["a"].nunique() > 1:
        wide["series"] += ", " + wide["a"].map("a = {:g}".format)
    if wide["rho_setting"].nunique() > 1:  # Fig. 4: OutP under each penalty, named as in its legend
        names = [rho_name(a, r) for a, r in zip(wide["algorithm"], wide["rho_setting"], strict=True)]
        wide["series"] = wide["dataset"].str.upper() + " OutP, rho = " + pd.Series(names, index=wide.index)
    t_max, delta = int(privacy["iteration"].max()), float(wide["privacy_delta"].max())
    head = (
        f"Composed epsilon of each plotted run over T = {t_max} iterations (RDP / PLD, delta = {delta:g}); "
        r"the paper states $\bar\epsilon$ per iteration."
    )
    lines = [
        f"{series}: "
        + "; ".join(
            rf"$\bar\epsilon$ = {r.epsilon:g}: {r.eps_composed_rdp:.3g} / {r.eps_composed_pld:.3g}"
            for r in rows.itertuples()
        )
        for series, rows in wide.groupby("series", sort=False)
    ]
    return [head, *lines]


PAPER = "Ryu & Kim"
FIGURE_LAYOUT = {
    # figure: (plotting function, panel rows (a column: one row per value of it in the aggregate),
    # one panel per epsilon-bar?, subject)
    "fig1": (plot_fig1, 2, True, "average noise magnitude (top) and testing error (bottom) [MNIST]"),
    "fig2a": (plot_fig2, 1, False, r"testing error against $\bar\epsilon$ [MNIST]"),
    "fig2b": (plot_fig2, 1, False, r"testing error against $\bar\epsilon$ [FEMNIST]"),
    "fig3": (plot_fig3, 1, True, "testing error [FEMNIST]"),
    "fig4": (
        plot_fig4,
        "dataset",
        True,
        "OutP's testing error under each penalty setting, a row per dataset (MNIST, FEMNIST)",
    ),
    "fig5": (plot_fig5, 2, True, "consensus violation (top) and testing error (bottom) [MNIST]"),
    "fig6": (plot_fig6, "a", True, "testing error with the proximity parameters scaled by a [FEMNIST]"),
}


def not_run_note(gaps) -> list[str]:
    """The note naming the cells of the figure's grid a narrowed build left out ([dataset, variant, epsilon] each)."""
    if not gaps:
        return []
    found: dict[tuple[str, str], list[float]] = {}
    for dataset, name, epsilon in gaps:
        found.setdefault((dataset, name), []).append(float(epsilon))
    cells = "; ".join(
        f"{dataset.upper()} {name} at {', '.join(f'{e:g}' for e in sorted(grid))}"
        for (dataset, name), grid in found.items()
    )
    return [f"Not run in this build (its cells leave them out; no line crosses them): {cells}."]


def draw(figure: str, agg: pd.DataFrame, gaps=()):
    """Return ``figure`` drawn from its aggregate, with the composed privacy of its runs in notes below.

    ``gaps``: the cells of its grid the build's ``cells`` left out (:func:`grid.grid_gaps`), named in a note.
    """
    from dpdl.plotting import figure_item, label_figure, new_figure

    function, panel_rows, per_epsilon, subject = FIGURE_LAYOUT[figure]
    if isinstance(panel_rows, str):
        panel_rows = agg[panel_rows].nunique()
    cols = len(_epsilons(agg)) if per_epsilon else 1
    fig, axes = new_figure(panel_rows, cols, width=4.2 if cols > 1 else 6.0, height=3.0)
    if per_epsilon:  # a panel per epsilon-bar: a cell not run draws nothing
        function(agg, axes)
    else:  # one line per series across the epsilon-bars: broken at a cell not run
        function(agg, axes[0][0], gaps)
    left_out = [
        f"{dataset.upper()}'s row is not drawn: no {dataset.upper()} run in this build (its data was not "
        "available here, or the config's cells leave it out)."
        for dataset in FIGURE_SPECS[figure].datasets
        if dataset not in set(agg["dataset"])
    ]
    notes = [*left_out, *not_run_note(gaps), *privacy_notes(agg)]
    label_figure(fig, PAPER, figure_item(figure), subject, notes)
    return fig


def draw_figure(figure: str, agg: pd.DataFrame, png: str | Path, pdf: str | Path, gaps=()) -> None:
    """Draw ``figure`` (:func:`draw`) and write PNG and PDF."""
    from dpdl.plotting import save_figure

    save_figure(draw(figure, agg, gaps), png, pdf)
