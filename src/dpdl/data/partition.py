"""Partitioning training rows among agents, and the per-agent size statistics of the dataset tables."""

from __future__ import annotations

import numpy as np

from dpdl.errors import ConfigError


def equal_shards(n_rows: int, agents: int, *, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Row indices of ``agents`` shards of ``n_rows // agents`` rows each; the remainder is dropped.

    With ``rng`` the rows are permuted first (Zhang & Zhu G12: shuffle, then equal shards);
    without it, shards are contiguous in file order (Ryu & Kim's ``np.split`` of MNIST).
    """
    if agents < 1 or agents > n_rows:
        raise ConfigError(f"agents must be between 1 and the number of rows ({n_rows}), got {agents}")
    order = np.arange(n_rows) if rng is None else rng.permutation(n_rows)
    size = n_rows // agents
    return [order[k * size : (k + 1) * size] for k in range(agents)]


def size_summary(sizes: np.ndarray) -> dict[str, float]:
    """Mean and standard deviation of samples per agent, with both stdev conventions."""
    sizes = np.asarray(sizes, dtype=float)
    return {
        "mean": float(sizes.mean()),
        "std_ddof0": float(sizes.std(ddof=0)),
        "std_ddof1": float(sizes.std(ddof=1)) if sizes.size > 1 else 0.0,
    }
