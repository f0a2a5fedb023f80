"""Encoding of tabular data shared by wddp's preparations.

The preparations are those of KDD Cup 99, Adult, Bank, Breast Cancer and Credit Card.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.errors import DataFormatError


def one_hot(frame: pd.DataFrame, column: str, levels: list[str]) -> tuple[np.ndarray, list[str]]:
    """One indicator column per level (no level dropped); values outside ``levels`` give all zeros."""
    codes = pd.Index(levels).get_indexer(frame[column])  # -1 for values outside levels
    indicators = (codes[:, None] == np.arange(len(levels))[None, :]).astype(float)
    return indicators, [f"{column}={level}" for level in levels]


def encode_unit_rows(
    train: pd.DataFrame, test: pd.DataFrame, numeric: list[str], categorical: list[str]
) -> dict[str, np.ndarray]:
    """wddp.md section 4.2 steps 3-5: one-hot, min-max, then every row scaled to unit L2 norm.

    Levels and ranges are fitted on ``train`` only; constant numeric columns become 0; test
    values outside the training range are kept as they are (the row scaling bounds them). A row that
    is all zeros after scaling (every feature at its training minimum and no categorical: four Breast
    Cancer rows whose nine features are all 1) cannot be scaled to norm 1 and stays zero, ||x|| = 0: G = 1
    needs ||x|| <= 1 only (wddp.md 1.3).
    """
    low = train[numeric].min()
    span = train[numeric].max() - low
    span = span.where(span > 0, 1.0)  # constant columns: (x - low) is 0 on train
    levels = {column: sorted(train[column].unique()) for column in categorical}

    def encode(frame: pd.DataFrame) -> np.ndarray:
        blocks = [((frame[numeric] - low) / span).to_numpy(float)]
        blocks += [one_hot(frame, column, levels[column])[0] for column in categorical]
        features = np.hstack(blocks)
        norms = np.linalg.norm(features, axis=1, keepdims=True)
        return features / np.where(norms > 0, norms, 1.0)  # ||x|| = 1 (0 for a zero row), so G = 1

    names = list(numeric) + [name for c in categorical for name in one_hot(train.head(0), c, levels[c])[1]]
    return {"X_train": encode(train), "X_test": encode(test), "feature_names": np.array(names)}


# wddp.md 4.2: Bank, Breast Cancer and Credit Card are split "stratified 80/20 with a fixed seed"
TEST_FRACTION = 0.2
SPLIT_SEED = 0  # the fixed seed of that split (and of Credit Card's sample of normal transactions)


def stratified_split(
    y: np.ndarray, test_fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices ``(train, test)``, each in file order, of a seeded stratified split.

    Per class (in sorted order), a seeded choice of ``round(test_fraction * n_class)`` of its rows
    is the test set.
    """
    y = np.asarray(y)
    chosen = [rng.permutation(np.flatnonzero(y == label))[: round(test_fraction * int((y == label).sum()))]
              for label in np.unique(y)]  # fmt: skip
    test = np.sort(np.concatenate(chosen)) if chosen else np.array([], dtype=int)
    return np.setdiff1d(np.arange(len(y)), test), test


def split_unit_rows(
    frame: pd.DataFrame,
    y: np.ndarray,
    numeric: list[str],
    categorical: list[str],
    rng: np.random.Generator,
    *,
    impute_median: tuple[str, ...] = (),
) -> dict[str, np.ndarray]:
    """wddp.md 4.2 for a dataset without an official split: split, impute, encode.

    :func:`stratified_split` (80/20), the missing values of the ``impute_median`` columns filled
    with their training median, then :func:`encode_unit_rows` fitted on the training rows.
    ``train_rows`` / ``test_rows`` index ``frame``.
    """
    train, test = stratified_split(y, TEST_FRACTION, rng)
    medians = {column: frame[column].iloc[train].median() for column in impute_median}
    train_frame, test_frame = frame.iloc[train].fillna(medians), frame.iloc[test].fillna(medians)
    encoded = encode_unit_rows(train_frame, test_frame, numeric, categorical)
    labels = np.asarray(y, dtype=np.int8)
    return {
        **encoded,
        "y_train": labels[train],
        "y_test": labels[test],
        "train_rows": train,
        "test_rows": test,
    }


def check_columns_and_labels(
    path: Path, frame: pd.DataFrame, columns: tuple, label: str, labels: tuple
) -> None:
    """Raise :class:`DataFormatError` unless ``frame`` has exactly ``columns`` and valid labels.

    ``frame`` is read from ``path``; every ``label`` value must be one of ``labels``. The message
    names the file and the first offending row.
    """
    if tuple(frame.columns) != tuple(columns):
        raise DataFormatError(f"{path}: header {list(frame.columns)}; expected {list(columns)}")
    bad = ~frame[label].isin(labels)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataFormatError(
            f"{path}: row {row + 1} has {label} = {frame[label].iloc[row]!r}; expected one of {labels}"
        )
