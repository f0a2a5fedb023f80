"""What an audited cell could reach at all: the smaller of its run-count ceiling and its canary's own privacy loss.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from dpdl.privacy.accounting import gaussian_exact_epsilon

REACH_COLUMNS = ["cell", "canary_loss", "loss_how"]


@dataclass(frozen=True)
class CanaryLoss:
    """The canary pair's maximal privacy loss (NaN where no exact form applies) and how it was computed."""

    epsilon: float
    how: str


def laplace_loss(shift: float, scale: float) -> float:
    """Maximal privacy loss of a Laplace (or norm-exponential) release whose mean moves by ``shift``: shift / scale."""
    if scale <= 0 or shift < 0:
        raise ValueError(f"laplace_loss needs shift >= 0 and scale > 0; got {shift!r}, {scale!r}")
    return shift / scale


def gaussian_loss(shift: float, sigma: float, delta: float, releases: int = 1) -> float:
    """Epsilon at ``delta`` of ``releases`` Gaussian releases whose mean moves by ``shift`` (l2) at std ``sigma``.

    A Gaussian's privacy loss is unbounded, so its epsilon at the claim's delta (Balle & Wang, exact).
    """
    if shift <= 0:
        return 0.0
    return gaussian_exact_epsilon(sigma / shift, releases, delta)


def reachable_epsilon(ceiling: float, loss: float) -> float:
    """The largest eps_LB a cell could give: the smaller of the run-count ceiling and the canary's loss (if known)."""
    return float(ceiling) if math.isnan(loss) else float(min(ceiling, loss))


def study_reach(module) -> pd.DataFrame:
    """One row per audited cell of a study's audit module: its canary's loss (NaN: not derived) and how."""
    rows = []
    for cell in (*module.AUDIT_CELLS, *getattr(module, "EXTRA_CELLS", ())):
        loss = module.canary_loss(cell) if hasattr(module, "canary_loss") else None
        if loss is None:
            loss = CanaryLoss(math.nan, "no exact form derived: the run-count ceiling alone")
        rows.append({"cell": cell.name, "canary_loss": float(loss.epsilon), "loss_how": loss.how})
    return pd.DataFrame(rows, columns=REACH_COLUMNS)
