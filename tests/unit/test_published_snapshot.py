"""The committed snapshot (published) is intact and the README's results block is generated from it."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from dpdl.paths import PUBLISHED
from dpdl.publishing.layout import RESULTS
from dpdl.publishing.merged import readme_results
from dpdl.publishing.problems import published_problems
from dpdl.readings import DEFAULT, study_readings
from dpdl.verdicts import VERDICTS

ROOT = Path(__file__).resolve().parents[2]


def test_the_snapshot_matches_its_manifests_and_its_studies(at_root: Path) -> None:
    assert published_problems(PUBLISHED) == []


def test_the_readme_results_block_is_the_snapshots(at_root: Path) -> None:
    assert readme_results(at_root / "README.md") == (PUBLISHED / RESULTS).read_text(encoding="utf-8")


def _page_reading_cells(page: Path, study: str) -> list[tuple[str, str, str]]:
    """(claim id, reading, cell) of every table row on a study page that names one claim id (in backticks) in
    its first cell, for each column named after one of the study's readings."""
    names = {reading.name for reading in study_readings(study)}
    found, header = [], None
    for line in page.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        ids = re.findall(rf"`({study}\.[a-z0-9_.]+)`", cells[0])
        if len(ids) == 1 and DEFAULT in header:
            found += [(ids[0], name, cell) for name, cell in zip(header, cells, strict=True) if name in names]
    return found


def test_the_study_pages_reading_tables_give_the_published_verdicts(at_root: Path) -> None:
    """A verdict a study page's reading table gives (a row naming its claim id, a column per reading) starts with
    the verdict published/readings.csv holds for that claim and reading."""
    published = pd.read_csv(PUBLISHED / "readings.csv")
    verdicts = {(row.id, row.reading): row.verdict for row in published.itertuples()}
    longest_first = sorted(VERDICTS, key=len, reverse=True)
    checked = 0
    for study in published["study"].unique():
        for claim, reading, cell in _page_reading_cells(at_root / "docs" / "studies" / f"{study}.md", study):
            said = next((verdict for verdict in longest_first if cell.startswith(verdict)), cell)
            assert said == verdicts.get((claim, reading), "(not built)"), (study, claim, reading)
            checked += 1
    assert checked >= 20  # the dvp_pvp and wddp pages' reading tables
