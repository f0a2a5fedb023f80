"""Credit Card Fraud Detection (ULB / Worldline, ``creditcard.csv``): raw file, parser, wddp preprocessing.

The paper's Credit Card Fraud set has 984 rows (Section 5; Bontempi & Worldline 2018): a balanced
sample of the 284,807 transactions, all 492 frauds and 492 normal ones (wddp.md 4.2, A19). The file is
Kaggle's ``mlg-ulb/creditcardfraud`` (a download needs a Kaggle login, so by hand); OpenML's dataset
1597 ("creditcard") serves a copy as CSV, which is the automatic source. No copy could be hashed where
this was written, so the file is held to a content check of what is published about it (the 31
columns Time, V1..V28, Amount, Class; 284,807 rows; 492 with Class = 1) instead of a digest; the card
of the prepared dataset records the sha256 of the copy it was built from.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.data.fetch import ContentCheck, RemoteFile, Url
from dpdl.data.tabular import SPLIT_SEED, split_unit_rows
from dpdl.errors import DataFormatError

HOMEPAGE = "https://www.kaggle.com/datasets/mlg-ulb/creditcardfraud"
FILE_NAME = "creditcard.csv"
# OpenML's CSV of dataset 1597 (file 1673544), as third-party scripts fetch it: not verified from here.
OPENML_CSV = "https://www.openml.org/data/get_csv/1673544/creditcard.csv"
FEATURES = ("Time", *(f"V{i}" for i in range(1, 29)), "Amount")  # all 30 kept (wddp.md A19)
COLUMNS = (*FEATURES, "Class")
ROWS, FRAUDS = 284_807, 492  # Kaggle's page: "492 frauds out of 284,807 transactions"


def check_table(path: Path, rows: int = ROWS, frauds: int = FRAUDS) -> str | None:
    """``None`` if ``path`` is the published table, else how it is not.

    The published table has its header, ``rows`` rows and ``frauds`` with Class = 1.
    """
    try:
        frame = read_creditcard(path)
    except DataFormatError as err:
        return str(err)
    found = int((frame["Class"] == 1).sum())
    if len(frame) != rows or found != frauds:
        return f"{len(frame):,} rows with {found:,} frauds, expected {rows:,} with {frauds:,}"
    return None


CREDITCARD = RemoteFile(
    path=f"credit_card/{FILE_NAME}",
    pin=None,
    size=None,
    sources=(Url(OPENML_CSV),),
    homepage=HOMEPAGE,
    content=ContentCheck(
        f"header Time,V1..V28,Amount,Class; {ROWS:,} rows; {FRAUDS} with Class = 1, the others 0", check_table
    ),
)
FILES = (CREDITCARD,)


def read_creditcard(path: Path) -> pd.DataFrame:
    """Parse the CSV: the 31 columns, all numbers, Class 0 or 1.

    Quotes, as Kaggle's ``"0"`` or OpenML's ``'0'``, are removed.
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as err:
        raise DataFormatError(f"{path}: not a comma-separated table ({err})") from None
    frame.columns = [str(c).strip("'\" ") for c in frame.columns]
    if tuple(frame.columns) != COLUMNS:
        raise DataFormatError(f"{path}: header {list(frame.columns)}; expected {list(COLUMNS)}")
    for column in COLUMNS:
        values = pd.to_numeric(frame[column].str.strip("'\" "), errors="coerce")
        bad = values.isna() | (~values.isin((0, 1)) if column == "Class" else False)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            expected = "0 or 1" if column == "Class" else "a number"
            found = frame[column].iloc[row]
            raise DataFormatError(f"{path}: row {row + 1} has {column} = {found!r}; expected {expected}")
        frame[column] = values
    frame["Class"] = frame["Class"].astype(np.int8)
    return frame


def balanced_sample(frame: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """Row indices of every fraud and as many normal transactions drawn with ``rng``, in file order."""
    frauds = np.flatnonzero(frame["Class"].to_numpy() == 1)
    normal = np.flatnonzero(frame["Class"].to_numpy() == 0)
    if len(normal) < len(frauds):
        raise DataFormatError(
            f"{len(frauds)} frauds but only {len(normal)} normal transactions to pair them with"
        )
    return np.sort(np.concatenate([frauds, rng.choice(normal, size=len(frauds), replace=False)]))


def prepare_wddp(frame: pd.DataFrame, rng: np.random.Generator | None = None) -> dict[str, np.ndarray]:
    """Credit Card as wddp.md 4.2 and A19 recommend: the balanced sample (984 rows), 30 features, ||x|| = 1.

    One generator (seed :data:`~dpdl.data.tabular.SPLIT_SEED`) draws the 492 normal transactions, then
    the stratified 80/20 split; the 30 features are min-max scaled with the training ranges; every row
    is scaled to unit norm. Labels: 1 = fraud (Class = 1). ``sample_rows`` are the sample's rows in the file.
    """
    rng = np.random.default_rng(SPLIT_SEED) if rng is None else rng
    rows = balanced_sample(frame, rng)
    sample = frame.iloc[rows].reset_index(drop=True)
    arrays = split_unit_rows(sample, sample["Class"].to_numpy(np.int8), list(FEATURES), [], rng)
    return {**arrays, "sample_rows": rows}
