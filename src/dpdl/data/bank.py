"""UCI Bank Marketing (``bank-additional-full.csv``, Moro et al. 2014): raw file, parser, wddp preprocessing.

The paper's Bank set has 41,188 rows (Section 5), which is ``bank-additional-full.csv`` (20 inputs),
not the older 45,211-row ``bank-full.csv`` (wddp.md 4.2, A19). UCI serves it inside
``bank-additional.zip``, itself inside the dataset's ``bank+marketing.zip`` (and, at the older
address, ``bank-additional.zip`` alone). No copy could be hashed where this was written (no internet
but the package index), so the file is held to a content check of what UCI publishes about it (the
header, 41,188 rows, labels yes / no, 11.3% yes as wddp.md 4.2 gives it) instead of a digest; the
card of the prepared dataset records the sha256 of the copy it was built from.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.data.fetch import ContentCheck, RemoteFile, ZipMember
from dpdl.data.tabular import SPLIT_SEED, check_columns_and_labels, split_unit_rows
from dpdl.errors import DataFormatError

HOMEPAGE = "https://archive.ics.uci.edu/dataset/222/bank+marketing"
FILE_NAME = "bank-additional-full.csv"
NUMERIC = (
    "age", "duration", "campaign", "pdays", "previous", "emp.var.rate", "cons.price.idx", "cons.conf.idx",
    "euribor3m", "nr.employed",
)  # fmt: skip
CATEGORICAL = (
    "job", "marital", "education", "default", "housing", "loan", "contact", "month", "day_of_week", "poutcome",
)  # fmt: skip
COLUMNS = (  # the file's order (bank-additional-names.txt); duration is kept (wddp.md A19)
    "age", "job", "marital", "education", "default", "housing", "loan", "contact", "month", "day_of_week",
    "duration", "campaign", "pdays", "previous", "poutcome", "emp.var.rate", "cons.price.idx", "cons.conf.idx",
    "euribor3m", "nr.employed", "y",
)  # fmt: skip
LABELS = ("no", "yes")  # yes = 1
ROWS = 41_188  # UCI: "bank-additional-full.csv with all examples (41188) and 20 inputs"; Section 5's 41188
POSITIVE_PERCENT = 11.3  # wddp.md 4.2's positive rate, to one decimal


def check_table(
    path: Path, rows: int = ROWS, positive_percent: float | None = POSITIVE_PERCENT
) -> str | None:
    """``None`` if ``path`` is the published table (header, ``rows`` rows, labels, share of yes), else how not."""
    try:
        frame = read_bank(path)
    except DataFormatError as err:
        return str(err)
    if len(frame) != rows:
        return f"{len(frame):,} rows, expected {rows:,}"
    percent = round(100 * float((frame["y"] == "yes").mean()), 1)
    if positive_percent is not None and percent != positive_percent:
        return f"{percent}% of rows have y = yes, expected {positive_percent}%"
    return None


FULL = RemoteFile(
    path=f"bank/{FILE_NAME}",
    pin=None,
    size=None,
    sources=(
        ZipMember(
            "https://archive.ics.uci.edu/static/public/222/bank+marketing.zip",
            ("bank-additional.zip", f"bank-additional/{FILE_NAME}"),
        ),
        ZipMember(
            "https://archive.ics.uci.edu/ml/machine-learning-databases/00222/bank-additional.zip",
            f"bank-additional/{FILE_NAME}",
        ),
    ),
    homepage=HOMEPAGE,
    content=ContentCheck(
        f"';'-separated, header {','.join(COLUMNS)}; {ROWS:,} rows; y yes or no, {POSITIVE_PERCENT}% yes",
        check_table,
    ),
)
FILES = (FULL,)


def read_bank(path: Path) -> pd.DataFrame:
    """Parse the ``;``-separated CSV (quoted strings): the 21 named columns, numeric inputs numbers, y yes / no."""
    path = Path(path)
    try:
        frame = pd.read_csv(path, sep=";", dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as err:
        raise DataFormatError(f"{path}: not a ';'-separated table ({err})") from None
    check_columns_and_labels(path, frame, COLUMNS, "y", LABELS)
    for column in NUMERIC:
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any():
            row = int(np.flatnonzero(values.isna())[0])
            found = frame[column].iloc[row]
            raise DataFormatError(f"{path}: row {row + 1} has {column} = {found!r}; expected a number")
        frame[column] = values
    return frame


def prepare_wddp(frame: pd.DataFrame, rng: np.random.Generator | None = None) -> dict[str, np.ndarray]:
    """Bank as wddp.md 4.2 and A19 recommend: all rows, ``duration`` kept, ||x|| = 1.

    A stratified 80/20 split with seed :data:`~dpdl.data.tabular.SPLIT_SEED`; the ten numeric columns
    min-max scaled and the ten categoricals one-hot encoded ("unknown" is a level), both fitted on the
    training rows; every row scaled to unit norm. Labels: 1 = yes, 0 = no.
    """
    rng = np.random.default_rng(SPLIT_SEED) if rng is None else rng
    y = (frame["y"] == "yes").to_numpy(np.int8)
    return split_unit_rows(frame, y, list(NUMERIC), list(CATEGORICAL), rng)
