"""Exact epsilons without an accountant: Gaussian releases, no grid, no ``dp_accounting``.

The exact epsilon of Gaussian releases is Balle & Wang's Theorem 8.

The accountant (:mod:`dpdl.privacy.accounting`) composes a run's releases with ``dp_accounting``,
whose import (scipy's statistics and signal processing among it) is most of a run job's start-up.
What needs only the exact epsilon of Gaussian releases (dzoa's aggregates and claims, the audit's
reach) imports this module instead; the accountant uses it too, for Gaussian compositions past the
PLD grid's reach and for the root of pure releases.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import optimize, special

from dpdl.privacy import _checks

# Absolute and relative tolerance of the root that gives an exact epsilon (Gaussian and pure releases).
ROOT_XTOL = 1e-12


def gaussian_exact_epsilon(noise_multiplier: float, count: int, delta: float) -> float:
    """Exact epsilon at ``delta`` of ``count`` Gaussian releases with this noise multiplier (no grid).

    ``count`` releases at multiplier z compose to one release at z / sqrt(count) (Gaussian-DP),
    whose epsilon Balle & Wang's Theorem 8 gives exactly (:func:`gaussian_release_epsilon`).
    """
    noise_multiplier = _checks.positive("noise_multiplier", noise_multiplier)
    count = _checks.count("count", count)
    return gaussian_release_epsilon(noise_multiplier / math.sqrt(count), _checks.open_unit("delta", delta))


def gaussian_release_epsilon(noise_multiplier: float, delta: float) -> float:
    """Exact epsilon at ``delta`` of one Gaussian release with this noise multiplier (no grid).

    Balle & Wang (ICML 2018), Theorem 8: with mu = 1 / noise_multiplier,
    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu); the second term is computed in
    log space so that mu in the millions does not overflow. A composition of Gaussian releases is
    one Gaussian release with the merged multiplier, so this is what the PLD grid approximates.
    """
    mu = 1.0 / noise_multiplier

    def excess_delta(epsilon: float) -> float:
        tail_p = special.ndtr(mu / 2.0 - epsilon / mu)
        tail_q = math.exp(epsilon + special.log_ndtr(-mu / 2.0 - epsilon / mu))
        return tail_p - tail_q - delta

    # the loss N(mu^2/2, mu^2) rarely exceeds it
    high = mu * mu / 2.0 + mu * (1.0 + abs(special.ndtri(delta)))
    while excess_delta(high) > 0:
        high *= 2.0
    return epsilon_root(excess_delta, high)


def epsilon_root(excess_delta: Callable[[float], float], high: float) -> float:
    """The epsilon in [0, high] where the decreasing ``excess_delta`` (delta(eps) - target) crosses 0."""
    if excess_delta(0.0) <= 0:
        return 0.0
    root = optimize.brentq(excess_delta, 0.0, high, xtol=ROOT_XTOL, rtol=ROOT_XTOL)
    return root + 2.0 * ROOT_XTOL * max(1.0, root)  # step past brentq's tolerance: an upper bound
