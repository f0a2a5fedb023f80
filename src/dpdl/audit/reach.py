"""What an audited cell could reach at all.

That is the smaller of its run-count ceiling and its canary's own privacy loss.

An audit's eps_LB can exceed neither the largest bound its runs allow (the ``ceiling`` of
:mod:`dpdl.audit.bounds`) nor the privacy loss its canary pair actually has: a canary whose two
datasets shift the released statistic by d under noise of scale b is, for that pair, at most
d / b-DP (Laplace, or any density proportional to exp(-||x|| / b)), and a Gaussian release of l2
shift d at standard deviation sigma is (eps, delta)-DP with Balle & Wang's exact eps at noise
multiplier sigma / d (composed over the iterations the score sees: sigma / (d sqrt(k)) for k
equal shifts). A claim whose cells can reach no more than the claimed epsilon cannot be refuted by
the audit however many runs it has: "not testable by this audit" (issue 58 item 4).

Each study may define ``canary_loss(cell) -> CanaryLoss`` in its audit module, computed from the
cell's definition and generated canary data alone (no audit run); a cell without one (or with a NaN
loss: no exact form) reaches its ceiling.

Each cell also states the smallest planted noise error it detects (issue 58 item 4): the smallest
k >= 1 such that, were the mechanism's noise divided by k, min(ceiling, canary loss at noise / k)
would exceed the claimed epsilon. The loss at noise / k is k times the Laplace loss, and the
Gaussian loss at k times the Gaussian-DP mu = shift sqrt(releases) / sigma (Dong, Roth & Su 2022,
Corollaries 2.13 and 3.3), so k is the claimed epsilon over the Laplace loss, or the mu whose
epsilon at delta is the claimed one over the canary's mu. ``loss_divisor`` is that k for the canary's
loss alone; :func:`detects_noise_divisor` adds the ceiling (infinite when the runs cannot reach the
claim at any k; NaN with no exact loss).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from scipy import optimize

from dpdl.audit.bounds import gaussian_dp_delta
from dpdl.privacy.exact import gaussian_exact_epsilon

REACH_COLUMNS = ["cell", "canary_loss", "loss_how", "loss_divisor"]


@dataclass(frozen=True)
class CanaryLoss:
    """The canary pair's maximal privacy loss (NaN where no exact form applies) and how it was computed.

    ``divisor``: the smallest k >= 1 with the loss at noise / k above the cell's claimed epsilon (NaN: no
    exact form); :func:`gaussian_canary` and :func:`laplace_canary` compute both.
    """

    epsilon: float
    how: str
    divisor: float = math.nan


def laplace_loss(shift: float, scale: float) -> float:
    """Maximal privacy loss of a Laplace release whose mean moves by ``shift``: shift / scale.

    The same holds for a norm-exponential release.
    """
    if scale <= 0 or shift < 0:
        raise ValueError(f"laplace_loss needs shift >= 0 and scale > 0; got {shift!r}, {scale!r}")
    return shift / scale


def gaussian_loss(shift: float, sigma: float, delta: float, releases: int = 1) -> float:
    """Epsilon at ``delta`` of ``releases`` Gaussian releases at std ``sigma``.

    The releases' mean moves by ``shift`` (l2). A Gaussian's privacy loss is unbounded, so this is its epsilon
    at the claim's delta (Balle & Wang, exact).
    """
    if shift <= 0:
        return 0.0
    return gaussian_exact_epsilon(sigma / shift, releases, delta)


def gaussian_mu_for(epsilon: float, delta: float) -> float:
    """The Gaussian-DP mu whose epsilon at ``delta`` is ``epsilon``.

    It inverts Corollary 2.13 (delta grows with mu).
    """
    if epsilon < 0 or not 0 < delta < 1:
        raise ValueError(f"gaussian_mu_for needs epsilon >= 0 and 0 < delta < 1; got {epsilon!r}, {delta!r}")
    high = 1.0
    while gaussian_dp_delta(high, epsilon) < delta:
        high *= 2.0
    return float(optimize.brentq(lambda mu: gaussian_dp_delta(mu, epsilon) - delta, 0.0, high, xtol=1e-12))


def gaussian_canary(shift: float, sigma: float, cell, how: str, releases: int = 1) -> CanaryLoss:
    """:func:`gaussian_loss` of ``releases`` releases at the cell's delta, and its noise divisor.

    The divisor lifts the loss above the cell's claimed epsilon: mu(claimed) / mu, mu = shift
    sqrt(releases) / sigma.
    """
    loss = gaussian_loss(shift, sigma, cell.delta, releases)
    mu = shift * math.sqrt(releases) / sigma
    divisor = math.inf if mu == 0 else gaussian_mu_for(cell.claimed_epsilon, cell.delta) / mu
    return CanaryLoss(loss, how, max(1.0, divisor))


def laplace_canary(shift: float, scale: float, cell, how: str) -> CanaryLoss:
    """:func:`laplace_loss` and its noise divisor.

    The divisor lifts the loss above the cell's claimed epsilon: claimed / loss.
    """
    loss = laplace_loss(shift, scale)
    return CanaryLoss(loss, how, max(1.0, math.inf if loss == 0 else cell.claimed_epsilon / loss))


def detects_noise_divisor(ceiling: float, claimed: float, divisor: float) -> float:
    """The smallest k >= 1 such that noise / k lets the cell exceed ``claimed``.

    It is the canary's ``divisor`` when the run-count ceiling is above the claim, else infinite (no
    k helps); NaN when the canary has no exact loss.
    """
    if math.isnan(divisor):
        return math.nan
    return float(divisor) if ceiling > claimed else math.inf


def reachable_epsilon(ceiling: float, loss: float) -> float:
    """The largest eps_LB a cell could give if the noise is as declared.

    It is the smaller of the run-count ceiling and the canary's loss (if known). A release with less
    noise than declared can exceed it (dzoa's D-ZOA cells do).
    """
    return float(ceiling) if math.isnan(loss) else float(min(ceiling, loss))


def study_reach(module) -> pd.DataFrame:
    """One row per audited cell of a study's audit module: its canary's loss, how, and its noise divisor.

    The loss is NaN where it is not derived; the noise divisor is the one that would lift that loss
    above the claimed epsilon (NaN: no exact form).
    """
    rows = []
    for cell in (*module.AUDIT_CELLS, *getattr(module, "EXTRA_CELLS", ())):
        loss = module.canary_loss(cell) if hasattr(module, "canary_loss") else None
        if loss is None:
            loss = CanaryLoss(math.nan, "no exact form derived: the run-count ceiling alone")
        rows.append(
            {
                "cell": cell.name,
                "canary_loss": float(loss.epsilon),
                "loss_how": loss.how,
                "loss_divisor": loss.divisor,
            }
        )
    return pd.DataFrame(rows, columns=REACH_COLUMNS)
