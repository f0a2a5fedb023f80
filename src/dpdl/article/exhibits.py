"""The claims by figure and table of the paper: one section per exhibit, beside our figure named for it."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from dpdl.article.blocks import Block
from dpdl.article.claim_text import claims_table
from dpdl.article.compute import figure_compute
from dpdl.claims import PREMISE_CLAIM, PRIVACY_CLAIM
from dpdl.io import read_json
from dpdl.publishing.layout import MANIFEST

# J, C: Zhang & Zhu's versions
EXHIBIT = re.compile(r"\b([JC] )?(Fig(?:ure|s|\.)?|Table)\s*(\d+(?:[a-z]|\([a-z]\))?)")


def _exhibit(where: str) -> str:
    """The first figure or table of the paper a claim's ``where`` names ("J Fig. 4a", "Table 1"), or ""."""
    found = EXHIBIT.search(where)
    if found is None:
        return ""
    version, kind, number = found.groups()
    return (
        f"{version or ''}{'Table' if kind == 'Table' else 'Fig.'} {number.replace('(', '').replace(')', '')}"
    )


def _figure_exhibit(name: str) -> str:
    """The exhibit label of one of our figures named for the paper's (``fig02.png`` -> "Fig. 2"), or ""."""
    found = re.fullmatch(r"fig0*(\d+[a-z]?)", Path(name).stem)
    return f"Fig. {found.group(1)}" if found else ""


def exhibit_sections(card: pd.DataFrame, folder: Path, compute: dict | None) -> list[Block]:
    """One section per figure or table of the paper, beside our figure.

    A claim belongs to the first figure or table its ``where`` names.

    Each section shows our figure named for the exhibit and the compute behind the figure's table
    (``compute``: the manifest's ``aggregate_compute``, None in a snapshot published before it was
    recorded); the claims that name none, and our figures no section shows, come last.
    """
    listed = set(read_json(folder / MANIFEST)["files"])  # only what the manifest vouches for, never a link
    figures = sorted(
        name
        for p in (folder / "figures").glob("*.png")
        if not p.is_symlink() and (name := p.relative_to(folder).as_posix()) in listed
    )
    paper = card[~card["kind"].isin((PRIVACY_CLAIM, PREMISE_CLAIM))]
    exhibits = paper["where"].map(_exhibit)
    order = [e for e in dict.fromkeys(exhibits) if e] + ([""] if (exhibits == "").any() else [])
    blocks = [
        Block("heading", "Claims by figure and table of the paper", level=2),
        Block(
            "text",
            "Each section sets the values the paper states for one of its figures or tables beside "
            "ours, with the verdict, the interval and the test, then our figure. The paper's own "
            "figures are not shown: this project holds the papers as text, so their plotted curves "
            "are compared through the values and orderings the text states, not by eye.",
        ),
    ]
    placed = set()
    for exhibit in order:
        rows = paper[exhibits == exhibit]
        blocks += [
            Block("heading", exhibit or "Claims that name no figure or table", level=3),
            Block("table", table=claims_table(rows)),
        ]
        label = exhibit.removeprefix("J ").removeprefix("C ")
        for name in (n for n in figures if exhibit and _figure_exhibit(n) == label and n not in placed):
            blocks += [Block("figure", name), *figure_compute(name, compute)]
            placed.add(name)
    others = [name for name in figures if name not in placed]
    if others:
        blocks += [Block("heading", "Our other figures", level=3), *(Block("figure", n) for n in others)]
    return blocks
