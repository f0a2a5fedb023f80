"""Noise calibration of Zhang & Zhu's dual (DVP) and primal (PVP) variable perturbation.

Equation numbers are given as J(n) for the journal version (seed 000) and C(n) for the conference
version (seed 003); section and gap numbers refer to ``notes/zhang_zhu.md``. Both mechanisms
draw noise with density proportional to exp(-zeta ||e||) (``samplers.norm_exponential``) and
are alpha-DP per release by the papers' proofs (not Laplace mechanisms), so a PVP iteration is
``PrivacyEvent("pure", 1 / alpha)`` and a DVP iteration ``PrivacyEvent("pure", 1 /
calibration.epsilon_spent)`` (equal to 1 / alpha under the default ``dvp_zeta_mode``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpdl.privacy import _checks

DvpZetaMode = Literal["alpha_hat_half", "alpha_hat"]
Branch = Literal["no_ridge", "ridge"]

LOGISTIC_C1 = 0.25  # c1 = sup |L''| of the logistic loss (zhang_zhu.md 1.3)


@dataclass(frozen=True, slots=True)
class DvpCalibration:
    """One node's DVP noise calibration at one iteration.

    Attributes
    ----------
    alpha_hat : float
        alpha-hat_p(t), the part of alpha spent through the noise density.
    phi : float
        Phi, the extra ridge coefficient added as (Phi / 2) ||f||^2; 0 in the ``"no_ridge"`` branch.
    zeta : float
        Rate of the noise density exp(-zeta ||e||).
    branch : {"no_ridge", "ridge"}
        ``"no_ridge"`` when alpha exceeds the Jacobian term alpha-bar_0, else ``"ridge"``.
    epsilon_spent : float
        The per-release epsilon the proof of Theorem 1 gives for this zeta: 2 zeta (the noise
        density, sensitivity 2) plus the Jacobian term alpha - alpha-hat. It equals alpha for
        ``dvp_zeta_mode="alpha_hat_half"`` and alpha + alpha-hat for ``"alpha_hat"``; account a
        release as ``PrivacyEvent("pure", 1 / epsilon_spent)``.
    """

    alpha_hat: float
    phi: float
    zeta: float
    branch: Branch
    epsilon_spent: float


def dvp_jacobian_budget(
    *,
    n_samples: int,
    c_r: float,
    rho: float,
    eta: float,
    n_neighbours: int,
    c1: float = LOGISTIC_C1,
) -> float:
    """Return alpha-bar_0, the part of alpha that DVP's Jacobian term costs when Phi = 0.

    Parameters
    ----------
    n_samples : int
        B_p, node p's number of samples.
    c_r : float
        C^R, the loss scaling, > 0 (1750 for DVP in the paper).
    rho : float
        Regularization weight, > 0 (10^-2.5 for DVP).
    eta : float
        ADMM penalty, > 0 (not given in the paper).
    n_neighbours : int
        N_p, node p's degree, >= 1.
    c1 : float
        Bound on |L''|, > 0 (1/4 for logistic loss).

    Returns
    -------
    float
        2 ln(1 + c1 C^R / (B_p (rho + 2 eta N_p))).

    Notes
    -----
    References: Zhang & Zhu, Algorithm 2 box and Theorem 1 (C), proof J(30)/C(41); zhang_zhu.md
    section 3.1 and gap G2: the printed "ln(1 + ...)^2" has the square inside the logarithm.
    """
    n_samples = _checks.count("n_samples", n_samples)
    c_r = _checks.positive("c_r", c_r)
    rho = _checks.positive("rho", rho)
    eta = _checks.positive("eta", eta)
    n_neighbours = _checks.count("n_neighbours", n_neighbours)
    c1 = _checks.positive("c1", c1)
    return 2.0 * math.log1p(c1 * c_r / (n_samples * (rho + 2.0 * eta * n_neighbours)))  # J(30)


def dvp_calibration(
    alpha: float,
    *,
    n_samples: int,
    c_r: float,
    rho: float,
    eta: float,
    n_neighbours: int,
    c1: float = LOGISTIC_C1,
    dvp_zeta_mode: DvpZetaMode = "alpha_hat_half",
) -> DvpCalibration:
    """Return DVP's alpha-hat, extra ridge Phi and noise rate zeta for one node and iteration.

    Parameters
    ----------
    alpha : float
        alpha_p(t), the per-iteration privacy parameter, in (0, inf]; ``inf`` gives zeta = inf
        (no noise).
    n_samples, c_r, rho, eta, n_neighbours, c1
        As in :func:`dvp_jacobian_budget`.
    dvp_zeta_mode : {"alpha_hat_half", "alpha_hat"}
        ``"alpha_hat_half"`` (default, the note's resolution G1): zeta = alpha-hat / 2, which the
        proof of Theorem 1 needs (the noise's sensitivity is 2) and Lemma 8 / Theorem 4 use.
        ``"alpha_hat"``: zeta = alpha-hat as printed in the Algorithm 2 box, which doubles the
        privacy loss of the density part. The papers do not say which one their figures used.

    Returns
    -------
    DvpCalibration
        If alpha - alpha-bar_0 > 0: alpha-hat = alpha - alpha-bar_0 and Phi = 0 (``"no_ridge"``).
        Otherwise Phi = c1 / ((B_p / C^R)(e^(alpha / 4) - 1)) - rho - 2 eta N_p > 0 and
        alpha-hat = alpha / 2 (``"ridge"``).

    Notes
    -----
    References: Zhang & Zhu, Algorithm 2 box, Theorem 1 and its proof (J App. A/B, C App. B);
    zhang_zhu.md section 3.1. Just above the branch boundary alpha-hat is tiny and the noise is
    larger than just below it (the note's artefact G10); the paper's rule is kept and ``branch``
    lets a run log it. Switch name: ``dvp_zeta_mode``, as in the config.
    """
    alpha = _checks.positive("alpha", alpha, allow_inf=True)
    _checks.choice("dvp_zeta_mode", dvp_zeta_mode, ("alpha_hat_half", "alpha_hat"))
    jacobian_budget = dvp_jacobian_budget(
        n_samples=n_samples, c_r=c_r, rho=rho, eta=eta, n_neighbours=n_neighbours, c1=c1
    )
    if math.isinf(alpha):
        return DvpCalibration(math.inf, 0.0, math.inf, "no_ridge", math.inf)
    if alpha - jacobian_budget > 0:
        alpha_hat, phi, branch = alpha - jacobian_budget, 0.0, "no_ridge"
    else:
        # Algorithm 2 box: Phi = c1 / ((B_p / C^R)(e^(alpha/4) - 1)) - rho - 2 eta N_p
        phi = c1 / ((n_samples / c_r) * math.expm1(alpha / 4.0)) - rho - 2.0 * eta * n_neighbours
        alpha_hat, branch = alpha / 2.0, "ridge"
    zeta = alpha_hat / 2.0 if dvp_zeta_mode == "alpha_hat_half" else alpha_hat  # proof vs box, G1
    epsilon_spent = 2.0 * zeta + (alpha - alpha_hat)  # J(31) density part + J(30) Jacobian part
    return DvpCalibration(alpha_hat, phi, zeta, branch, epsilon_spent)


def pvp_noise_rate(alpha: float, *, rho: float, n_samples: int, c_r: float) -> float:
    """Return zeta, the rate of PVP's noise density exp(-zeta ||e||) for one node and iteration.

    Parameters
    ----------
    alpha : float
        alpha_p(t) in (0, inf]; ``inf`` gives zeta = inf (no noise).
    rho : float
        Regularization weight, > 0 (10^-1 for PVP in the paper).
    n_samples : int
        B_p.
    c_r : float
        C^R, > 0 (146 for PVP).

    Returns
    -------
    float
        rho B_p alpha / (2 C^R); the broadcast noise norm then has mean 2 d C^R / (rho B_p alpha).

    Notes
    -----
    References: Zhang & Zhu, Algorithm 3 box and proof of Theorem 2 (l2 sensitivity
    2 C^R / (rho B_p), J(33)/C(47)); zhang_zhu.md section 3.2 and gap G3: the conference
    statement of Theorem 2 drops C^R, the box and the proof keep it.
    """
    alpha = _checks.positive("alpha", alpha, allow_inf=True)
    rho = _checks.positive("rho", rho)
    n_samples = _checks.count("n_samples", n_samples)
    c_r = _checks.positive("c_r", c_r)
    return rho * n_samples * alpha / (2.0 * c_r)  # Algorithm 3: zeta = rho B_p alpha / (2 C^R)
