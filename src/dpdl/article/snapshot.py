"""What the article reads of the published snapshot: a study's folder, checked, and its merged tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpdl.errors import DpdlError
from dpdl.io import read_text_table
from dpdl.paths import PUBLISHED
from dpdl.publishing.layout import MANIFEST
from dpdl.readings import DEFAULT
from dpdl.studies import ALL


def read_card(path: Path) -> pd.DataFrame:
    """A snapshot table as text, as written: no value parsed.

    A table is a scorecard, a reading's claims or readings.csv.
    """
    return read_text_table(path)


def study_folder(study: str, out: Path = PUBLISHED) -> Path:
    """``out/<study>``, checked: a known study with a published manifest."""
    if study not in ALL:
        raise DpdlError(f"unknown study {study!r}; expected one of {', '.join(ALL)}")
    folder = snapshot_folder(out) / study
    if not (folder / MANIFEST).is_file():
        raise DpdlError(f"{folder / MANIFEST}: not found; {study} is not published in {out}")
    return folder


def snapshot_folder(out: Path) -> Path:
    """``out``, checked: a snapshot folder that exists."""
    if not out.is_dir():
        raise DpdlError(
            f"{out}: no such snapshot folder; publish one with `dpdl publish` or pass --published"
        )
    return out


def readings_table(study: str, out: Path) -> pd.DataFrame:
    """The claims of ``study`` whose verdict differs from the default's under another built reading."""
    table = read_card(out / "readings.csv")
    table = table[(table["study"] == study) & (table["reading"] != DEFAULT)]
    differs = table[(table["unchanged"] != "yes") & (table["verdict"] != table["default_verdict"])]
    return differs[["id", "reading", "engine", "default_verdict", "verdict"]]
