"""KDD Cup 1999 (10% file): raw file, parser, and the wddp preprocessing.

Home page: https://archive.ics.uci.edu/dataset/130/kdd+cup+1999+data. scikit-learn's fetcher
uses the same file from its figshare mirror (same sha256).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.data.fetch import Pin, RemoteFile, Url, ZipMember
from dpdl.data.tabular import encode_unit_rows
from dpdl.errors import ConfigError, DataFormatError

HOMEPAGE = "https://archive.ics.uci.edu/dataset/130/kdd+cup+1999+data"
FILE_NAME = "kddcup.data_10_percent.gz"
TEN_PERCENT = RemoteFile(
    path=f"kdd/{FILE_NAME}",
    pin=Pin("sha256", "8045aca0d84e70e622d1148d7df782496f6333bf6eb979a1b0837c42a9fd9561"),
    size=2_144_903,
    sources=(
        ZipMember("https://archive.ics.uci.edu/static/public/130/kdd+cup+1999+data.zip", FILE_NAME),
        Url(f"http://kdd.ics.uci.edu/databases/kddcup99/{FILE_NAME}"),
        Url("https://ndownloader.figshare.com/files/5976042"),  # scikit-learn's mirror of the same file
    ),
    homepage=HOMEPAGE,
)
FILES = (TEN_PERCENT,)

# Column names from the KDD Cup 99 task description (kddcup.names); the 42nd column is the label.
FEATURE_NAMES = (
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land", "wrong_fragment",
    "urgent", "hot", "num_failed_logins", "logged_in", "num_compromised", "root_shell", "su_attempted",
    "num_root", "num_file_creations", "num_shells", "num_access_files", "num_outbound_cmds",
    "is_host_login", "is_guest_login", "count", "srv_count", "serror_rate", "srv_serror_rate",
    "rerror_rate", "srv_rerror_rate", "same_srv_rate", "diff_srv_rate", "srv_diff_host_rate",
    "dst_host_count", "dst_host_srv_count", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate",
)  # fmt: skip
N_FEATURES = len(FEATURE_NAMES)
CATEGORICAL = ("protocol_type", "service", "flag")
NORMAL = "normal."


def read_kdd(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """Parse the gzip CSV: 41 feature columns (3 categorical) and the label (``normal.``, ``smurf.``, ...)."""
    frame = pd.read_csv(path, header=None, compression="gzip", dtype={i: str for i in (1, 2, 3)})
    if frame.shape[1] != N_FEATURES + 1:
        raise DataFormatError(f"{path}: expected {N_FEATURES + 1} columns, found {frame.shape[1]}")
    labels = frame.pop(N_FEATURES).astype(str).to_numpy()
    frame.columns = list(FEATURE_NAMES)
    if not all(label.endswith(".") for label in np.unique(labels)):
        raise DataFormatError(f"{path}: labels must end in '.', found {sorted(set(labels))[:5]}")
    return frame, labels


def prepare_wddp(
    features: pd.DataFrame, labels: np.ndarray, *, sample_size: int, train_size: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """KDD as wddp.md section 4.2 recommends: a seeded sample split into train and test, ||x|| = 1.

    A seeded permutation of all rows; its first ``sample_size`` rows are the sample, of which the
    first ``train_size`` train (Jayaraman's ``X[:50000]``) and the rest test. The three categoricals
    are one-hot encoded with the training levels; the 38 numeric columns are min-max scaled with the
    training ranges (constant columns become 0); every row is scaled to unit norm. Labels: 1 = attack
    (any label but ``normal.``), 0 = normal.
    """
    if not 0 < train_size < sample_size <= len(features):
        raise ConfigError(
            f"need 0 < train_size < sample_size <= {len(features)} rows; got {train_size} and {sample_size}"
        )
    order = rng.permutation(len(features))[:sample_size]
    sample, y = features.iloc[order].reset_index(drop=True), (labels[order] != NORMAL).astype(np.int8)
    train, test = sample.iloc[:train_size], sample.iloc[train_size:]
    numeric = [c for c in features.columns if c not in CATEGORICAL]
    return {
        **encode_unit_rows(train, test, numeric, list(CATEGORICAL)),
        "y_train": y[:train_size],
        "y_test": y[train_size:],
        "sample_rows": order,
    }
