"""An article as a list of blocks: what every section returns and every renderer reads."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Block:
    """One piece of an article: a heading (``level`` > 0), a paragraph, a bullet list, a table or a figure."""

    kind: str  # "heading", "text", "list", "table", "figure"
    text: str = ""
    level: int = 0
    items: tuple[str, ...] = ()
    table: pd.DataFrame | None = None
