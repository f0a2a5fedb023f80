"""The readings as a sensitivity analysis, and the post hoc register's entries for the study."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from dpdl.article.blocks import Block
from dpdl.article.snapshot import readings_table
from dpdl.post_hoc import REGISTER, study_of
from dpdl.readings import READING_KEY, narrowed_cells, study_readings


def _narrowed(manifest: dict) -> list[Block]:
    """The readings built on some of the config's cells (``reading_cells``), and the cells each leaves out."""
    lines = [
        f"{key.partition(READING_KEY)[2]} on {len(cells)} cells of the grid: "
        + ", ".join(f"`{c}`" for c in cells)
        if left_out is None
        else f"{key.partition(READING_KEY)[2]} on {len(cells)} of the config's {len(cells) + len(left_out)} cells, "
        "leaving out " + ", ".join(f"`{c}`" for c in left_out)
        for key, (cells, left_out) in narrowed_cells(manifest["config"]).items()
    ]
    if not lines:
        return []
    text = (
        "Built on the cells it had finished (the config's `reading_cells`), so its claims on the "
        "cells left out are not run at this scale: "
    )
    return [Block("text", text + "; ".join(lines) + ".")]


def sensitivity(study: str, out: Path, manifest: dict) -> list[Block]:
    readings = study_readings(study)
    described = pd.DataFrame(
        [
            {
                "reading": r.name,
                "post hoc": "yes" if r.post_hoc else "",
                "switches": json.dumps(dict(r.switches)),
                "why": r.why,
            }
            for r in readings
        ]
    )
    return [
        Block("heading", "Readings: a sensitivity analysis", level=2),
        Block(
            "text",
            "Each reading sets the values the paper leaves open; the default gives the title and the "
            "counts above. The readings declared:",
        ),
        Block("table", table=described),
        *_narrowed(manifest),
        Block(
            "text",
            "Claims whose verdict differs from the default's under a built reading (published/readings.csv):",
        ),
        Block("table", table=readings_table(study, out)),
    ]


def post_hoc_register(study: str) -> list[Block]:
    entries = [e for e in REGISTER if any(study_of(c) == study for c in e.claims)]
    table = pd.DataFrame(
        [
            {
                "subject": e.subject,
                "kind": e.kind,
                "commit": e.commit,
                "claims": ", ".join(e.claims),
                "known": e.known,
                "what": e.what,
            }
            for e in entries
        ],
        columns=["subject", "kind", "commit", "claims", "known", "what"],
    )
    return [
        Block("heading", "Post hoc register", level=2),
        Block(
            "text",
            "Choices made after a relevant result was known (src/dpdl/post_hoc.yaml), for this study's claims:",
        ),
        Block("table", table=table),
    ]
