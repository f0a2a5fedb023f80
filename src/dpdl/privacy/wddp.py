"""Noise calibration of Kang, Liu & Wang's WD-DP, the averaged baseline and centralized DP-GD.

Equation numbers are the paper's (seed 001, arXiv 1910.10308 v2); section and gap numbers refer
to the extraction ``notes/wddp.md``. All three methods run T rounds of full-batch gradient
descent with one N(0, sigma^2 I) draw per round on an aggregate gradient of l2 sensitivity
2 G / N_eff (replace one record); they differ only in N_eff. Each round is
``PrivacyEvent("gaussian", sigma / wddp_sensitivity(...))``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

from dpdl.privacy import _checks

# WD-DP, Jayaraman et al.'s averaged baseline, centralized DP-GD
Method = Literal["wddp", "dist_avg", "central"]
METHODS: tuple[Method, ...] = get_args(Method)
Calibration = Literal["closed_form", "eq3"]

PROOF_CONSTANT = 16.0  # the c of (3) that the paper's own proof chain supports (wddp.md 2.3 step 6)


def wddp_effective_sample_size(party_sizes: Sequence[int], method: Method) -> int:
    """Return N_eff, the sample size that sets the gradient sensitivity 2 G / N_eff of a method.

    Parameters
    ----------
    party_sizes : sequence of int
        n_j for the m parties, each >= 1.
    method : {"wddp", "dist_avg", "central"}
        ``"wddp"`` (WD-DP, weights n_j / n) and ``"central"`` (Wang, Ye & Xu's DP-GD on the pooled
        data): n = sum_j n_j. ``"dist_avg"`` (Jayaraman et al.'s averaged baseline, weights 1 / m):
        m n_(1), with n_(1) = min_j n_j.

    Returns
    -------
    int
        N_eff.

    Notes
    -----
    References: Kang, Liu & Wang, Theorem 1 proof (4) and Table 1 rows 2, 4, 5; wddp.md
    sections 2.4 and A4.
    """
    _checks.choice("method", method, METHODS)
    sizes = [_checks.count("party_sizes", size) for size in party_sizes]
    if not sizes:
        raise ValueError("party_sizes must hold at least one party size; got none")
    if method == "dist_avg":
        return len(sizes) * min(sizes)  # m n_(1)
    return sum(sizes)  # n


def wddp_sensitivity(n_eff: int, lipschitz: float = 1.0) -> float:
    """Return the l2 sensitivity 2 G / N_eff of one round's aggregate gradient.

    Parameters
    ----------
    n_eff : int
        From :func:`wddp_effective_sample_size`, >= 1.
    lipschitz : float
        G, the Lipschitz constant of the per-record loss, > 0 (1 for logistic loss, ||x|| <= 1).

    Returns
    -------
    float
        2 G / N_eff.

    Notes
    -----
    References: Kang, Liu & Wang, Theorem 1 proof step "||grad L_D - grad L_D'|| <= 2G/n";
    wddp.md section 2.3 step 4.
    """
    n_eff = _checks.count("n_eff", n_eff)
    lipschitz = _checks.positive("lipschitz", lipschitz)
    return 2.0 * lipschitz / n_eff


def wddp_noise_std(
    epsilon: float,
    delta: float,
    *,
    n_eff: int,
    n_iterations: int,
    lipschitz: float = 1.0,
    calibration: Calibration = "closed_form",
    c: float = PROOF_CONSTANT,
) -> float:
    """Return sigma, the per-round Gaussian noise std giving (epsilon, delta)-DP after T rounds.

    Parameters
    ----------
    epsilon : float
        Total epsilon of the run in (0, inf]; ``inf`` gives 0.
    delta : float
        Total delta in (0, 1); 1e-3 in the paper.
    n_eff : int
        N_eff from :func:`wddp_effective_sample_size`.
    n_iterations : int
        T, the number of noisy rounds, >= 1 (1000 in the paper).
    lipschitz : float
        G, > 0.
    calibration : {"closed_form", "eq3"}
        ``"closed_form"`` (default, the note's recommendation and Jayaraman et al.'s code):
        sigma = sqrt(2 T) G / (N_eff (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))), the
        exact solution of the moments-accountant / zCDP condition epsilon = rho + 2 sqrt(rho
        ln(1/delta)) with rho = T (2G/N_eff)^2 / (2 sigma^2); its effective c is about 8.
        ``"eq3"``: the paper's (3), sigma^2 = c G^2 T ln(1/delta) / (N_eff^2 epsilon^2).
    c : float
        The unspecified constant of (3), > 0; 16 is what the paper's proof supports. Used by
        ``"eq3"`` only.

    Returns
    -------
    float
        sigma.

    Notes
    -----
    References: Kang, Liu & Wang, Theorem 1, eq. (3); wddp.md section 2.3 steps 6-7 and gap A3.
    The paper leaves c open; ``calibration`` and ``c`` are the switches.
    """
    _checks.choice("calibration", calibration, ("closed_form", "eq3"))
    epsilon = _checks.positive("epsilon", epsilon, allow_inf=True)
    delta = _checks.open_unit("delta", delta)
    n_eff = _checks.count("n_eff", n_eff)
    n_iterations = _checks.count("n_iterations", n_iterations)
    lipschitz = _checks.positive("lipschitz", lipschitz)
    c = _checks.positive("c", c)
    if math.isinf(epsilon):
        return 0.0
    log_inv_delta = math.log(1.0 / delta)
    if calibration == "eq3":
        variance = c * lipschitz**2 * n_iterations * log_inv_delta / (n_eff**2 * epsilon**2)  # (3)
        return math.sqrt(variance)
    # k = sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta)), written without the cancellation
    k = epsilon / (math.sqrt(log_inv_delta + epsilon) + math.sqrt(log_inv_delta))
    return math.sqrt(2.0 * n_iterations) * lipschitz / (n_eff * k)  # wddp.md 2.3 step 7
