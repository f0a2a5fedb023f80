"""A wddp figure aggregate -> PNG and PDF: one panel per dataset, mean lines with seed bands."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpdl.errors import ArtifactError
from dpdl.studies.common import format_number
from dpdl.studies.wddp.grid import DATASETS, FIGURES, METRICS, NONPRIVATE, PRIVATE_METHODS, FigureSpec

PAPER = "Kang, Liu & Wang"
DATASET_TITLES = {
    "kdd": "KDD Cup 99",
    "adult": "Adult",
    "bank": "Bank",
    "breast_cancer": "Breast Cancer",
    "credit_card": "Credit Card Fraud",
}
METHOD_LABELS = {
    "wddp": "WD-DP",
    "dist_avg": "Jayaraman et al. (averaged)",
    "central": "centralized DP-GD",
    NONPRIVATE: "non-private optimum (added)",
}
METHOD_COLORS = {"wddp": "tab:blue", "dist_avg": "tab:red", "central": "tab:green", NONPRIVATE: "0.3"}


def plot_figure(agg: pd.DataFrame, ax, spec: FigureSpec):
    """Draw one dataset's panel of a figure from its aggregate rows: mean lines with seed bands.

    Accuracy panels add theta*'s test accuracy as a dashed line; gap panels use a log y axis
    (runs whose mean gap is <= 0 would not show; none is expected, since theta* is the minimum).
    """
    import seaborn as sns

    private = agg[agg["algorithm"] != NONPRIVATE]
    hue_order = [m for m in PRIVATE_METHODS if m in set(private["algorithm"])]
    palette = {m: METHOD_COLORS[m] for m in hue_order}
    sns.lineplot(
        data=private,
        x=spec.x,
        y="mean",
        hue="algorithm",
        hue_order=hue_order,
        palette=palette,
        style="algorithm",
        markers=True,
        dashes=False,
        errorbar=None,
        ax=ax,
    )
    for method in hue_order:
        rows = private[private["algorithm"] == method].sort_values(spec.x)
        ax.fill_between(rows[spec.x], rows["lo"], rows["hi"], color=palette[method], alpha=0.2, linewidth=0)
    for _, row in agg[agg["algorithm"] == NONPRIVATE].iterrows():
        ax.axhline(
            row["mean"], color=METHOD_COLORS[NONPRIVATE], linestyle="--", linewidth=1, label=NONPRIVATE
        )
    if spec.metric == "gap":
        ax.set_yscale("log")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [METHOD_LABELS.get(label, label) for label in labels], fontsize="small")
    ax.set_xlabel("privacy budget ε" if spec.x == "epsilon" else "unevenness u = n_max / n_min")
    ax.set_ylabel(METRICS[spec.metric])
    return ax


def draw(figure: str, agg: pd.DataFrame):
    """Return one figure: a panel per dataset in the aggregate, lettered as in the paper.

    A dataset missing from the aggregate gets a note in place of its panel.
    """
    from dpdl.plotting import label_figure, new_figure

    spec = FIGURES[figure]
    datasets = [d for d in DATASETS if d in set(agg["dataset"])]
    if not datasets:
        raise ArtifactError(f"{figure}: the aggregate has no dataset rows")
    fig, axes = new_figure(1, len(datasets), width=4.6, height=3.4)
    for dataset, ax in zip(datasets, axes[0], strict=True):
        plot_figure(agg[agg["dataset"] == dataset], ax, spec)
        ax.set_title(f"{_panel(dataset)} {DATASET_TITLES[dataset]}")
    missing = [
        f"Panel {_panel(d)}, {DATASET_TITLES[d]}, is not drawn: its dataset was not available to this build "
        "(its raw file could not be obtained here, or wddp.datasets leaves it out)."
        for d in DATASETS
        if d not in datasets
    ]
    fixed = f"m = {spec.clients}" + ("" if spec.epsilon is None else f", ε = {format_number(spec.epsilon)}")
    subject = f"{METRICS[spec.metric]}, {fixed}"
    label_figure(fig, PAPER, f"Figure {spec.number}", subject, [*missing, privacy_footnote(agg)])
    return fig


def draw_figure(figure: str, agg: pd.DataFrame, png: str | Path, pdf: str | Path) -> None:
    """Write one figure (:func:`draw`) as PNG and PDF."""
    from dpdl.plotting import save_figure

    save_figure(draw(figure, agg), png, pdf)


def _panel(dataset: str) -> str:
    return f"({chr(ord('a') + DATASETS.index(dataset))})"


def privacy_footnote(agg: pd.DataFrame) -> str:
    """The footnote on the composed privacy of the plotted runs.

    It gives, per nominal epsilon, the largest RDP and PLD epsilon and why they differ from the nominal one.

    The x axis is the paper's epsilon, which sets sigma through the calibration (``calibration``: the
    zCDP conversion epsilon = rho + 2 sqrt(rho ln(1/delta)) of Theorem 1's proof, or eq. (3)): an upper
    bound. dp-accounting bounds the same noise more tightly, so a run spends less than its nominal
    epsilon, the less the smaller epsilon (at 0.01 and delta = 1e-3, delta alone nearly covers the
    mechanism: the PLD epsilon is 0.00015). A run whose composed epsilon is above its nominal one (a
    calibration that does not cover its releases) is named instead.
    """
    from dpdl.studies.wddp.run import BUDGET_RELATIVE_SLACK

    private = agg[agg["algorithm"] != NONPRIVATE]
    spent = private.groupby("epsilon").agg(rdp=("eps_composed_rdp", "max"), pld=("eps_composed_pld", "max"))
    parts = [
        f"ε = {format_number(e)}: {row.rdp:.3g} (RDP), {row.pld:.3g} (PLD)" for e, row in spent.iterrows()
    ]
    delta = format_number(float(private["delta"].max()))
    tighter = spent[["rdp", "pld"]].min(axis=1)
    over = [format_number(e) for e, value in tighter.items() if value > e * (1 + BUDGET_RELATIVE_SLACK)]
    if over:
        why = (
            f"Above the nominal ε at ε = {', '.join(over)}: these runs spend more privacy than the paper's "
            "calibration claims."
        )
    else:
        why = (
            "Each is below its nominal ε (the x axis: the paper's ε for a whole run), as expected: σ is set "
            "from the nominal ε by the paper's bound (Theorem 1's zCDP conversion ε = ρ + 2√(ρ ln(1/δ)), or "
            "eq. (3)), which is loose; the accountants bound the same noise more tightly, the more so the "
            "smaller ε, where δ alone nearly covers the mechanism."
        )
    return (
        f"Composed privacy of the plotted runs (dp-accounting, δ = {delta}): " + "; ".join(parts) + ". " + why
    )
