"""Every figure the default config can build reads well: its text on the canvas, apart, and named.

Each study's figures are drawn from aggregates that its own aggregate functions make from
fabricated runs of the default config's grid (``read_run`` is replaced; the run paths, columns
and reductions are the real ones): with every dataset, and once with one dataset alone (wddp: Adult;
dp_iadmm: MNIST, which drops its FEMNIST figures and Fig. 4's FEMNIST row; dvp_pvp and dzoa have one
dataset). After ``fig.draw_without_rendering()`` (the layout the saved files get, with no pixels
rasterized):

(a) every visible text (titles, axis and tick labels, legend entries, notes, table cells) lies
    inside the figure;
(b) no two texts overlap, except tick labels of one axis among themselves (matplotlib spaces
    those, and a log axis may set its minor labels close);
(c) no free text inside a plotting area (``ax.text``) covers a point of a drawn line;
(d) the suptitle names the paper and the figure it reproduces ("Kang, Liu & Wang, Figure 12");
(e) a figure drawn without one of its datasets says which panel is not drawn and why;
(f) dp_iadmm's legends cover no point of a drawn line (its curve grids have one legend, outside the
    panels), and Fig. 4 names each penalty setting in its notes as its legend does (OutP+ is OutP at
    rho-hat/100: one name in both).

Extents may cross by ``SLACK`` pixels (rounding); a real collision is many pixels deep.
"""

from __future__ import annotations

import importlib
import math
import re
import zlib
from itertools import combinations
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.table import Table
from matplotlib.text import Text

from dpdl.config import load_config
from dpdl.runs import RunResult

matplotlib.use("Agg")
from matplotlib import pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_config(ROOT / "config" / "config.yaml")
SLACK = 1.0  # pixels


def _rng(path: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(path.encode()))


def _seed(name: str) -> int:
    return int(re.search(r"\d+", name).group())


def _fake_runs(monkeypatch, make) -> None:
    """``dpdl.runs.read_run`` returns ``make(path)``: a run fabricated from its path."""
    monkeypatch.setattr("dpdl.runs.read_run", lambda path, study=None: make(str(path)))


def _privacy(epsilon: float | None, delta: float, releases: int) -> dict:
    """Provenance privacy fields: composed epsilons growing like sqrt(releases); None without noise."""
    if epsilon is None:
        return {"epsilon": None, "delta": delta, "eps_composed_rdp": None, "eps_composed_pld": None}
    rdp = epsilon * math.sqrt(releases)
    return {"epsilon": epsilon, "delta": delta, "eps_composed_rdp": rdp, "eps_composed_pld": 0.9 * rdp}


# ------------------------------------------------------------------ fabricated aggregates per study


def wddp_aggregates(monkeypatch, datasets: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    from dpdl.studies.wddp import aggregate, grid

    settings = CONFIG["wddp"]
    iterations = settings["iterations"]

    def make(path: str) -> RunResult:
        dataset, batch, algorithm, cell, seed = path.split("/")[3:8]
        experiment, _, fixed = grid.parse_batch(batch)
        epsilon = float(cell[3:]) if experiment == "epsilon" else fixed
        u = None if experiment == "epsilon" else int(cell[1:])
        noise = {"wddp": 1.0, "dist_avg": 3.0, "central": 0.5}[algorithm] * (1 + (u or 1) / 10) / epsilon
        noise *= 1 + 0.2 * _rng(path).random()
        trace = pd.DataFrame(
            {
                "iteration": [iterations],
                "gap": [1e-3 * noise],
                "test_accuracy": [0.92 - 0.3 * (1 - math.exp(-noise / 50))],
            }
        )
        params = {"iterations": iterations, "unevenness_nominal": u, "unevenness_realized": u or 1.0}
        params |= {"noise_ratio": 1.2, "n": 5000, "n_min": 100, "sigma": noise}
        provenance = {
            "dataset": f"wddp/{dataset}",
            "algorithm": algorithm,
            "seed": _seed(seed),
            "params": params,
        }
        return RunResult(trace, provenance | _privacy(epsilon, settings["delta"], iterations))

    _fake_runs(monkeypatch, make)
    monkeypatch.setattr(aggregate, "read_optimum", lambda path: {"test_accuracy": 0.93})
    buildable = {f"wddp/{d}" for d in datasets}
    optima = {d: grid.optimum_path(d) for d in grid.available_datasets(buildable)}
    return {
        figure: aggregate.aggregate(figure, grid.aggregate_runs(settings, figure, buildable), optima)
        for figure in grid.figure_ids(settings)
    }


def dp_iadmm_aggregates(monkeypatch, datasets: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    from dpdl.studies.dp_iadmm import aggregate, grid

    section = CONFIG["dp_iadmm"]

    def make(path: str) -> RunResult:
        horizon, dataset, name, cell, seed = path.split("/")[3:8]
        variant = grid.variant(name, section)
        epsilon = None if cell == "epsinf" else float(cell[3:])
        length = grid.horizon_settings(section, horizon)
        t = np.arange(length["log_every"], length["iterations"] + 1, length["log_every"], dtype=float)
        noise = (
            0.0 if epsilon is None else {"objp": 1.0, "objt": 0.3, "outp": 3.0}[variant.algorithm] / epsilon
        )
        floor = 0.08 + 0.4 * noise / (1 + noise)
        error = floor + (0.9 - floor) * np.exp(-t / 20) + 0.01 * _rng(path).random(len(t))
        trace = pd.DataFrame(
            {
                "iteration": t,
                "test_error": error,
                "noise_magnitude": noise / np.sqrt(t),
                "cv_sum": (1 + noise) / t,
            }
        )
        trace["rho"] = 1.0 + t / t[-1]
        params = {"label": variant.label, "a": variant.a, "rho_setting": variant.rho_setting}
        provenance = {
            "dataset": f"dp_iadmm/{dataset}",
            "algorithm": name,
            "seed": _seed(seed),
            "params": params,
        }
        return RunResult(trace, provenance | _privacy(epsilon, section["delta"], int(t[-1])))

    _fake_runs(monkeypatch, make)
    buildable = {f"dp_iadmm/{d}" for d in datasets}
    return {
        figure: aggregate.aggregate(figure, grid.figure_run_paths(figure, CONFIG, buildable))
        for figure in grid.available_aggregates(CONFIG, buildable)
        if figure in grid.FIGURES
    }


def dvp_pvp_aggregates(monkeypatch, datasets: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    from dpdl.studies.dvp_pvp import aggregate, grid

    values = CONFIG["dvp_pvp"]
    iterations = values["iterations"]

    def make(path: str) -> RunResult:
        *_, kind, algorithm, cell, seed = path.split("/")
        if kind == "rho_selection":
            rho, alpha = 10.0 ** float(cell[3:]), values["rho_selection"]["alpha"]
        else:
            rho, alpha = 10.0**-2.5, float(cell[3:])
        alpha = None if algorithm == "nonprivate" else alpha
        level = 0.0 if alpha is None else (0.05 if algorithm == "dvp" else 0.1) / alpha
        level += 0.05 * abs(math.log10(rho) + 2.5)
        t = np.arange(iterations + 2, dtype=float)
        wiggle = 0.01 * _rng(path).random(len(t))
        loss = 0.33 + level + 0.4 * np.exp(-t / 15) + wiggle
        mer = 0.15 + min(level / 4, 0.3) + 0.1 * np.exp(-t / 15) + wiggle
        trace = pd.DataFrame(
            {
                "iteration": t,
                "loss": loss,
                "mer": mer,
                "mer_broadcast": mer + 0.02,
                "objective_gap": loss / 0.33 - 1,
            }
        )
        params = {"rho": rho, "iterations": iterations, "releases": iterations + 1}
        provenance = {"algorithm": algorithm, "seed": _seed(seed), "params": params}
        return RunResult(trace, provenance | _privacy(alpha, 1e-6, iterations + 1))

    _fake_runs(monkeypatch, make)
    aggregates = {}
    for figure in grid.FIGURES:
        frame, provenances = aggregate.load_runs(grid.figure_runs(values, figure))
        aggregates[figure] = aggregate.figure_aggregate(figure, frame, provenances, values)
    return aggregates


def dzoa_aggregates(monkeypatch, datasets: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    from dpdl.studies.dzoa import aggregate, grid

    values = CONFIG["dzoa"]
    points = {point.label: point for point in grid.grid(values)}
    n = values["outer_iterations"] + 1

    def make(path: str) -> RunResult:
        algorithm, label, trial = path.split("/")[-3:]
        point = points[label]
        epsilon = point.epsilon or point.epsilon_total / 20
        floor = (
            (1e-3 if algorithm == "dpadmm" else 1e-5) * (1 + 0.2 / epsilon) * (1 + 0.3 * _rng(path).random())
        )
        error = floor + (5.0 - floor) * np.exp(-np.arange(n) / (40 if algorithm == "dpadmm" else 10))
        params = {"epsilon_total_given": point.epsilon_total, "epsilon_total_29": 2 * epsilon * math.sqrt(n)}
        provenance = {"algorithm": algorithm, "seed": _seed(trial), "params": params}
        return RunResult(
            pd.DataFrame({"iteration": np.arange(n), "error": error}),
            provenance | _privacy(epsilon, point.delta, n),
        )

    _fake_runs(monkeypatch, make)
    trials, agents = grid.evaluation_trials(CONFIG), CONFIG["data"]["lasso"]["agents"]
    return {
        f: aggregate.aggregate(values, f, grid.figure_run_paths(values, trials, f), agents)
        for f in grid.FIGURES
    }


STUDIES = {
    "wddp": wddp_aggregates,
    "dp_iadmm": dp_iadmm_aggregates,
    "dvp_pvp": dvp_pvp_aggregates,
    "dzoa": dzoa_aggregates,
}
BUILDS = [  # (study, datasets available to the build)
    ("wddp", ("kdd", "adult", "bank", "breast_cancer", "credit_card")),  # the paper's five panels
    ("wddp", ("adult",)),  # one panel and four "not drawn" notes (a kdd-only build draws the same code)
    ("dp_iadmm", ("mnist", "femnist")),
    ("dp_iadmm", ("mnist",)),
    ("dvp_pvp", ("adult",)),
    ("dzoa", ("lasso",)),
]
DATASET_NAMES = {  # wddp's panel titles
    "kdd": "KDD Cup 99",
    "adult": "Adult",
    "bank": "Bank",
    "breast_cancer": "Breast Cancer",
    "credit_card": "Credit Card Fraud",
}
DVP_PVP_ITEMS = {
    "convergence": "Figure 3",
    "tradeoff_dvp": "Figure 4(a, b)",
    "tradeoff_pvp": "Figure 4(c, d)",
    "final_risk": "Figure 5(a)",
    "mer": "Figure 5(b)",
    "rho_selection": "Table 1",
}


def expected_title(study: str, figure: str) -> str:
    """The start of a figure's suptitle: the paper's authors and the figure (or table) it reproduces."""
    if study == "wddp":
        from dpdl.studies.wddp.grid import FIGURES

        return f"Kang, Liu & Wang, Figure {FIGURES[figure].number}"
    if study == "dvp_pvp":
        return f"Zhang & Zhu, {DVP_PVP_ITEMS[figure]}"
    number, panel = re.fullmatch(r"fig(\d)([ab]?)", figure).groups()
    authors = {"dp_iadmm": "Ryu & Kim", "dzoa": "Gratton et al."}[study]
    return f"{authors}, Figure {number}" + (f"({panel})" if panel else "")


# ------------------------------------------------------------------ the layout rules


def drawn_texts(fig) -> list[tuple[object, Text]]:
    """Every non-empty text the figure draws, with its group: tick labels of one axis share one."""
    found = []

    def walk(artist, axis_on: bool) -> None:
        for child in artist.get_children():
            if not child.get_visible():
                continue
            if isinstance(child, Axis):
                if axis_on:  # the ticks it draws (private, but what Axis.draw itself uses)
                    found.extend(
                        (child, label)
                        for tick in child._update_ticks()
                        for label in (tick.label1, tick.label2)
                    )
                    found.extend((label, label) for label in (child.label, child.offsetText))
                continue
            if isinstance(child, Table):
                found.extend((cell.get_text(), cell.get_text()) for cell in child.get_celld().values())
            if isinstance(child, Text):
                found.append((child, child))
            walk(child, child.axison if isinstance(child, Axes) else axis_on)

    walk(fig, True)
    return [(group, text) for group, text in found if text.get_visible() and text.get_text().strip()]


def _name(text: Text) -> str:
    return repr(text.get_text()[:50])


def layout_problems(fig) -> list[str]:
    """Rules (a) to (c) on a drawn figure: one line per broken rule."""
    canvas, problems = fig.bbox, []
    boxes = [(group, text, text.get_window_extent()) for group, text in drawn_texts(fig)]
    for _, text, box in boxes:
        if min(box.x0 - canvas.x0, box.y0 - canvas.y0, canvas.x1 - box.x1, canvas.y1 - box.y1) < -SLACK:
            problems.append(f"outside the canvas: {_name(text)}")
    for (group_a, a, box_a), (group_b, b, box_b) in combinations(boxes, 2):
        if group_a is group_b:
            continue
        width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if width > SLACK and height > SLACK:
            problems.append(f"overlap: {_name(a)} and {_name(b)}")
    for ax in fig.axes:
        for text in ax.texts if ax.axison else []:
            box = text.get_window_extent()
            for line in ax.get_lines():
                x, y = line.get_transform().transform(line.get_xydata()).T
                if ((x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)).any():
                    problems.append(f"on a line: {_name(text)}")
                    break
    return problems


def legends_on_lines(fig) -> list[str]:
    """Rule (f): a legend (the figure's or a panel's) that covers a point of a line drawn in any panel."""
    problems = []
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    for legend in legends:
        box = legend.get_window_extent()
        for ax in fig.axes:
            for line in ax.get_lines():
                x, y = line.get_transform().transform(line.get_xydata()).T
                if ((x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)).any():
                    problems.append(f"a legend covers the line {line.get_label()!r} of {ax.get_title()!r}")
    return problems


def fig4_names(fig) -> list[str]:
    """Rule (f): Fig. 4's legend entries that its notes do not name ("MNIST OutP, rho = <entry>: ...")."""
    (legend,) = fig.legends
    notes = " ".join(" ".join(text.get_text() for text in fig.texts).split())
    entries = [text.get_text() for text in legend.get_texts()]
    assert "rho-hat/100 (OutP+)" in entries
    return [
        f"fig4: the notes do not name the legend's {entry!r}"
        for entry in entries
        if f"rho = {entry}:" not in notes
    ]


@pytest.mark.parametrize(("study", "datasets"), BUILDS, ids=["-".join((s, *d)) for s, d in BUILDS])
def test_every_figure_keeps_its_text_on_the_canvas_apart_and_named(study, datasets, monkeypatch) -> None:
    figures = importlib.import_module(f"dpdl.studies.{study}.figures")
    problems = []
    for figure, aggregate in STUDIES[study](monkeypatch, datasets).items():
        fig = figures.draw(figure, aggregate)
        fig.draw_without_rendering()
        problems += [f"{figure}: {problem}" for problem in layout_problems(fig)]
        if not fig.get_suptitle().startswith(expected_title(study, figure)):
            problems.append(
                f"{figure}: the title {fig.get_suptitle()!r} does not start {expected_title(study, figure)!r}"
            )
        texts = [text.get_text() for _, text in drawn_texts(fig)]
        dropped = []
        if study == "wddp":
            dropped = [DATASET_NAMES[dataset] for dataset in sorted(set(DATASET_NAMES) - set(datasets))]
        if study == "dp_iadmm":
            dropped = [d.upper() for d in figures.FIGURE_SPECS[figure].datasets if d not in datasets]
            problems += [f"{figure}: {problem}" for problem in legends_on_lines(fig)]
            problems += fig4_names(fig) if figure == "fig4" else []
        for name in dropped:
            if not any(name in text and "not drawn" in text and "not available" in text for text in texts):
                problems.append(f"{figure}: nothing says the {name} panel is not drawn and why")
        plt.close(fig)
    assert not problems, "\n".join(problems)


def test_a_curve_grid_names_each_series_drawn_in_any_panel() -> None:
    """Fig. 3 with ObjP run at one of its epsilon-bars (a batch of a narrowed build): the legend names ObjP."""
    from dpdl.studies.dp_iadmm.aggregate import AGGREGATE_COLUMNS
    from dpdl.studies.dp_iadmm.figures import plot_fig3

    cells = (("ObjT", 0.05), ("OutP", 0.05), ("OutP", 1.0), ("ObjP", 1.0))
    rows = [
        {"dataset": "femnist", "variant": label.lower(), "algorithm": label, "epsilon": epsilon, "a": 1.0,
         "rho_setting": "rho-hat", "iteration": t, "metric": "test_error", "mean": 0.5, "lo": 0.4, "hi": 0.6, "n": 3}
        for label, epsilon in cells
        for t in (0, 100)
    ]  # fmt: skip
    fig, axes = plt.subplots(1, 2, squeeze=False, layout="constrained")
    plot_fig3(pd.DataFrame(rows)[AGGREGATE_COLUMNS], axes)
    named = [text.get_text() for legend in fig.legends for text in legend.get_texts()]
    plt.close(fig)
    assert sorted(named) == ["ObjP", "ObjT", "OutP"], named


def test_a_narrowed_build_names_in_a_note_the_cells_it_left_out(monkeypatch) -> None:
    """A build whose cells run part of a figure's grid names the cells left out (no line crosses them), and
    the note keeps rules (a) and (b) at the longest such list: Fig. 6 of the FEMNIST pilot's cells (its
    Fig. 2b has all run: two cells left out here name more than one series)."""
    from dpdl.studies.dp_iadmm import figures, grid

    gaps = grid.grid_gaps(load_config(ROOT / "config" / "paper_femnist_at_hand_pilot.yaml")[grid.STUDY])
    assert set(gaps) == {"fig6"} and len(gaps["fig6"]) == 18  # its a = 100 and 1000 series at 3 epsilon-bars
    gaps["fig2b"] = [["femnist", "objt", 3.0], ["femnist", "objp", 5.0]]
    aggregates = STUDIES["dp_iadmm"](monkeypatch, ("mnist", "femnist"))
    for figure, named in (
        ("fig2b", "FEMNIST objt at 3; FEMNIST objp at 5."),
        ("fig6", "FEMNIST objp_a1000 at 0.05, 0.1, 1"),
    ):
        fig = figures.draw(figure, aggregates[figure], gaps[figure])
        fig.draw_without_rendering()
        notes = " ".join(" ".join(text.get_text() for text in fig.texts).split())
        assert "Not run in this build" in notes and named in notes, notes
        assert not layout_problems(fig), layout_problems(fig)
        plt.close(fig)
    fig = figures.draw("fig2b", aggregates["fig2b"])
    assert not any("Not run" in text.get_text() for text in fig.texts)
    plt.close(fig)


def test_fig2s_line_is_broken_at_a_cell_not_run_and_only_there() -> None:
    """Fig. 2 joins a series' epsilon-bars with a line: not across a left-out cell, which would draw a point
    that was never run (ObjT ran at 0.05 and 5, not at 1; ObjP's 0.05 and 0.1 are neighbours in the grid)."""
    import matplotlib.pyplot as plt

    from dpdl.studies.dp_iadmm.aggregate import AGGREGATE_COLUMNS
    from dpdl.studies.dp_iadmm.figures import plot_fig2

    cells = [("objt", "ObjT", 0.05), ("objt", "ObjT", 5.0), ("objp", "ObjP", 0.05), ("objp", "ObjP", 0.1)]
    rows = [
        {"dataset": "femnist", "variant": variant, "algorithm": label, "epsilon": epsilon, "a": 1.0,
         "rho_setting": "rho-hat", "iteration": 100, "metric": "test_error", "mean": 0.5, "lo": 0.4, "hi": 0.6, "n": 3}
        for variant, label, epsilon in cells
    ]  # fmt: skip
    gaps = [
        ["femnist", "objt", 0.1],
        ["femnist", "objt", 1.0],
        ["femnist", "objp", 5.0],
        ["mnist", "objp", 0.07],
    ]
    fig, ax = plt.subplots()
    plot_fig2(pd.DataFrame(rows)[AGGREGATE_COLUMNS], ax, gaps)
    lines = {line.get_label(): list(line.get_xdata()) for line in ax.get_lines()}
    plt.close(fig)
    assert len(lines["ObjT"]) == 3 and np.isnan(lines["ObjT"][1]), lines  # broken between 0.05 and 5
    # a gap beyond its last point, or another dataset's, breaks nothing
    assert lines["ObjP"] == [0.05, 0.1], lines
