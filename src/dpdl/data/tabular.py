"""Encoding of tabular data shared by the Adult and KDD preparations."""

from __future__ import annotations

import numpy as np
import pandas as pd


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
    values outside the training range are kept as they are (the row scaling bounds them).
    """
    low = train[numeric].min()
    span = train[numeric].max() - low
    span = span.where(span > 0, 1.0)  # constant columns: (x - low) is 0 on train
    levels = {column: sorted(train[column].unique()) for column in categorical}

    def encode(frame: pd.DataFrame) -> np.ndarray:
        blocks = [((frame[numeric] - low) / span).to_numpy(float)]
        blocks += [one_hot(frame, column, levels[column])[0] for column in categorical]
        features = np.hstack(blocks)
        return features / np.linalg.norm(features, axis=1, keepdims=True)  # ||x|| = 1, so G = 1

    names = list(numeric) + [name for c in categorical for name in one_hot(train.head(0), c, levels[c])[1]]
    return {"X_train": encode(train), "X_test": encode(test), "feature_names": np.array(names)}
