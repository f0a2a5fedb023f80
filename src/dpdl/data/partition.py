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


def threshold_random_sizes(
    n_rows: int, agents: int, *, threshold_fraction: float, rng: np.random.Generator
) -> np.ndarray:
    """Random client sizes above a floor: Kang, Liu & Wang's Experiment A (wddp.md 4.3, gap A14).

    The floor is ``n_thr = max(2, ceil(threshold_fraction * n_rows / agents))``; the rest,
    ``n_rows - agents * n_thr``, is split by weights ``w ~ Dirichlet(1_agents)`` as
    ``n_j = n_thr + floor(rest * w_j)``, and the rounding remainder goes to the largest client.
    The sizes sum to ``n_rows`` and each is at least ``n_thr``.
    """
    if agents < 1:
        raise ConfigError(f"agents must be at least 1, got {agents}")
    if not 0 <= threshold_fraction <= 1:
        raise ConfigError(f"threshold_fraction must be in [0, 1], got {threshold_fraction}")
    floor = max(2, int(np.ceil(threshold_fraction * n_rows / agents)))
    if agents * floor > n_rows:
        raise ConfigError(
            f"{agents} clients of at least {floor} rows need {agents * floor} rows, but there are only "
            f"{n_rows}; use fewer clients or a smaller threshold_fraction"
        )
    rest = n_rows - agents * floor
    sizes = floor + np.floor(rest * rng.dirichlet(np.ones(agents))).astype(np.int64)
    sizes[np.argmax(sizes)] += n_rows - sizes.sum()
    return sizes


def two_group_sizes(n_rows: int, agents: int, unevenness: float) -> np.ndarray:
    """Client sizes of two equal-count groups with size ratio u: Experiment B (wddp.md 4.3, gap A15).

    The first ``agents / 2`` clients are small with ``n_small = floor(n_rows / ((agents / 2)(1 + u)))``
    rows each; the other ``agents / 2`` share the remaining rows as evenly as possible (the first
    of them take one extra row each until none is left), so all rows are used and the total does
    not depend on u. The realized ratio max / min is u up to rounding.
    """
    if agents < 2 or agents % 2:
        raise ConfigError(f"two groups need an even number of clients >= 2, got {agents}")
    if not unevenness >= 1:
        raise ConfigError(f"unevenness u = n_max / n_min must be >= 1, got {unevenness}")
    half = agents // 2
    small = int(n_rows // (half * (1 + unevenness)))
    if small < 1:
        raise ConfigError(
            f"{n_rows} rows cannot give {half} small clients of at least one row at u = {unevenness}; "
            "use fewer clients or a smaller u"
        )
    large_total = n_rows - half * small
    large = np.full(half, large_total // half, dtype=np.int64)
    large[: large_total % half] += 1
    return np.concatenate([np.full(half, small, dtype=np.int64), large])


def shards_of_sizes(sizes: np.ndarray, *, rng: np.random.Generator) -> list[np.ndarray]:
    """Row indices of one shard per client: a random permutation cut into chunks of ``sizes`` (IID)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.ndim != 1 or sizes.size == 0 or (sizes < 1).any():
        raise ConfigError(f"sizes must be a non-empty list of positive counts, got {sizes.tolist()}")
    order = rng.permutation(int(sizes.sum()))
    return np.split(order, np.cumsum(sizes)[:-1])
