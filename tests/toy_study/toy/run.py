"""The mechanism: the mean of records in [0, 1] released with Laplace noise (sensitivity 1 / n)."""

from __future__ import annotations

import numpy as np


def noise_scale(records: int, epsilon: float) -> float:
    """The Laplace scale of an epsilon release: the mean's sensitivity for records in [0, 1], 1 / n, over epsilon."""
    return 1.0 / records / epsilon


def release(x: np.ndarray, epsilon: float, rng: np.random.Generator, draws: int) -> np.ndarray:
    """``draws`` independent releases of the mean of ``x`` at ``epsilon`` (the audit's runs on one dataset)."""
    return float(np.mean(x)) + rng.laplace(0.0, noise_scale(len(x), epsilon), size=draws)


def release_errors(x: np.ndarray, epsilons: list[float], seeds: int) -> list[dict]:
    """One row per (epsilon, seed): the absolute error of the Laplace-noised mean."""
    rows = []
    for epsilon in sorted(epsilons):
        for seed in range(seeds):
            noise = np.random.default_rng([seed, int(epsilon * 1e6)]).laplace(
                0.0, noise_scale(len(x), epsilon)
            )
            rows.append({"epsilon": epsilon, "seed": seed, "value": abs(float(noise))})
    return rows
