"""Writing figures: one style for every study, PNG and PDF written atomically.

Each figure has a title naming the paper figure and notes below the panels.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # files only; no display is ever needed

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from dpdl.io import atomic_path  # noqa: E402

DPI = 150
MARGIN = 0.08  # inches between a title or note and the figure's edge
NOTE_SIZE = 7.5  # points


def new_figure(
    n_rows: int = 1, n_cols: int = 1, *, width: float = 4.2, height: float = 3.2, **kwargs
) -> tuple[Figure, object]:
    """A figure of ``n_rows x n_cols`` panels of ``width x height`` inches each, in the dpdl style.

    Its constrained layout keeps every label inside the figure and apart (done at each draw).
    """
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    size = (width * n_cols, height * n_rows)
    return plt.subplots(n_rows, n_cols, figsize=size, dpi=DPI, squeeze=False, layout="constrained", **kwargs)


def _wrapped(fig: Figure, text: str, **props) -> str:
    """``text`` with its lines broken between words to fit the figure's width less the margins.

    Each line takes as many words as fit (at least one), found by bisection: a text's width grows with
    every word added, so this breaks exactly where a word-by-word scan would, with a few measurements.
    """
    renderer, probe = fig.canvas.get_renderer(), Text(figure=fig, **props)
    room = (fig.get_figwidth() - 2 * MARGIN) * fig.dpi

    def fits(words: list[str]) -> bool:
        probe.set_text(" ".join(words))
        return probe.get_window_extent(renderer).width <= room

    lines = []
    for paragraph in text.split("\n"):
        words = paragraph.split(" ")
        while True:
            low, high = 1, len(words)  # words[:low] is a line; find the most words that fit
            while low < high:
                middle = (low + high + 1) // 2
                low, high = (middle, high) if fits(words[:middle]) else (low, middle - 1)
            lines.append(" ".join(words[:low]))
            words = words[low:]
            if not words:
                break
    return "\n".join(lines)


def figure_item(figure: str) -> str:
    """The paper's name of a figure id ``fig<number>[<panel>]``: fig3 -> Figure 3, fig2a -> Figure 2(a)."""
    number, panel = re.fullmatch(r"fig(\d+)([a-z]?)", figure).groups()
    return f"Figure {number}" + (f"({panel})" if panel else "")


def label_figure(fig: Figure, paper: str, item: str, subject: str, notes: Sequence[str] = ()) -> None:
    """Title ``fig`` "<paper>, <item>: <subject>" (the paper figure it reproduces) and set ``notes`` below it.

    Both are wrapped to the figure's width. The figure grows by the notes' height and the layout
    keeps the panels above them, so no note covers an axis label.
    """
    title = f"{paper}, {item}: {subject}"
    if "\n" in _wrapped(fig, title, fontsize="large"):  # too long for one line: the subject on the next
        title = f"{paper}, {item}:\n{subject}"
    fig.suptitle(_wrapped(fig, title, fontsize="large"))
    if not notes:
        return
    text = fig.text(
        0, 0, _wrapped(fig, "\n".join(notes), fontsize=NOTE_SIZE), fontsize=NOTE_SIZE, va="bottom"
    )
    height = text.get_window_extent(fig.canvas.get_renderer()).height / fig.dpi + 2 * MARGIN
    fig.set_figheight(fig.get_figheight() + height)
    text.set_position((MARGIN / fig.get_figwidth(), MARGIN / fig.get_figheight()))
    reserved = height / fig.get_figheight()
    fig.get_layout_engine().set(rect=(0, reserved, 1, 1 - reserved))


def save_figure(fig: Figure, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Write ``fig`` as PNG and PDF through temporary names, then close it."""
    try:
        for path, fmt in ((png, "png"), (pdf, "pdf")):
            with atomic_path(path) as tmp:
                fig.savefig(
                    tmp, format=fmt, dpi=DPI, metadata={"CreationDate": None} if fmt == "pdf" else None
                )
    finally:
        plt.close(fig)
