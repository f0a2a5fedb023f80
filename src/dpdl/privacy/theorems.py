"""Closed-form privacy theorems: the classical Gaussian calibration, basic and advanced composition.

These need no accountant: the papers calibrate with the first, and the second and third put the
papers' per-iteration pure epsilon-DP claims on a whole-run footing beside the accountant's
numbers (:mod:`dpdl.privacy.accounting`).
"""

from __future__ import annotations

import math

from dpdl.privacy import _checks


def classical_gaussian_noise_multiplier(epsilon: float, delta: float, *, constant: float = 2.0) -> float:
    """Return sigma / Delta_2 of the classical one-release (epsilon, delta) Gaussian calibration.

    Parameters
    ----------
    epsilon : float
        Per-release epsilon in (0, inf]; ``inf`` gives 0 (no noise).
    delta : float
        Per-release delta in (0, 1).
    constant : float
        c in sqrt(c ln(1.25 / delta)) / epsilon: 2 in Dwork & Roth (Huang et al.'s DP-ADMM, the
        OutP baseline), 2.1 in Gratton et al.'s D-ZOA (25).

    Returns
    -------
    float
        sqrt(constant * ln(1.25 / delta)) / epsilon.

    Notes
    -----
    References: Dwork & Roth, The Algorithmic Foundations of Differential Privacy, Theorem A.1,
    which proves the bound for epsilon < 1 only; the papers also use it above 1, so there it is
    nominal. Compose such releases with :func:`composed_epsilon`, which needs no such assumption.
    """
    epsilon = _checks.positive("epsilon", epsilon, allow_inf=True)
    delta = _checks.open_unit("delta", delta)
    constant = _checks.positive("constant", constant)
    return math.sqrt(constant * math.log(1.25 / delta)) / epsilon  # Dwork & Roth Thm A.1


def basic_composition(epsilon: float, count: int) -> float:
    """Return the total epsilon of ``count`` epsilon-DP releases under basic composition.

    Parameters
    ----------
    epsilon : float
        Per-release epsilon in (0, inf].
    count : int
        Number of releases T >= 1.

    Returns
    -------
    float
        T * epsilon (pure DP, delta = 0).

    Notes
    -----
    References: Dwork & Roth, Theorem 3.16.
    """
    epsilon = _checks.positive("epsilon", epsilon, allow_inf=True)
    count = _checks.count("count", count)
    return count * epsilon


def advanced_composition(epsilon: float, count: int, delta_prime: float) -> float:
    """Return the total epsilon of ``count`` epsilon-DP releases under advanced composition.

    Parameters
    ----------
    epsilon : float
        Per-release epsilon in (0, inf].
    count : int
        Number of releases T >= 1.
    delta_prime : float
        The composition's delta' in (0, 1); the result holds at (epsilon', delta').

    Returns
    -------
    float
        epsilon' = sqrt(2 T ln(1 / delta')) epsilon + T epsilon (e^epsilon - 1).

    Notes
    -----
    References: Dwork, Rothblum & Vadhan (FOCS 2010), Theorem III.3; Dwork & Roth, Theorem 3.20
    with per-release delta = 0. It exceeds :func:`basic_composition` for large epsilon; report both.
    """
    epsilon = _checks.positive("epsilon", epsilon, allow_inf=True)
    count = _checks.count("count", count)
    delta_prime = _checks.open_unit("delta_prime", delta_prime)
    if math.isinf(epsilon):
        return math.inf
    # Dwork & Roth Thm 3.20: sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1)
    return math.sqrt(2.0 * count * math.log(1.0 / delta_prime)) * epsilon + count * epsilon * math.expm1(
        epsilon
    )
