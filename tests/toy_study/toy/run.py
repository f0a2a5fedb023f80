"""The mechanism: the mean of records in [0, 1] released with Laplace noise (sensitivity 1 / n)."""

from __future__ import annotations

import numpy as np


def release_errors(x: np.ndarray, epsilons: list[float], seeds: int) -> list[dict]:
    """One row per (epsilon, seed): the absolute error of the Laplace-noised mean."""
    scale = 1.0 / len(x)  # the mean's sensitivity for records in [0, 1]
    rows = []
    for epsilon in sorted(epsilons):
        for seed in range(seeds):
            noise = np.random.default_rng([seed, int(epsilon * 1e6)]).laplace(0.0, scale / epsilon)
            rows.append({"epsilon": epsilon, "seed": seed, "value": abs(float(noise))})
    return rows
