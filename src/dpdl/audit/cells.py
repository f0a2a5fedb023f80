"""What an audit runs and what it measures: the audited cell, the privacy claim it tests, the scores.

Each study declares, in ``dpdl.studies.<study>.audit``, the paper's privacy claims
(:class:`PrivacyClaim`, one per theorem or stated guarantee) and the cells that test them
(:class:`AuditCell`: one algorithm under one set of switches, a few iterations, a canary), and one
function ``audit_scores(cell, runs, seed) -> dict[str, AuditSamples]`` that runs the algorithm
``runs`` times on each of two neighbouring datasets and scores what the paper's threat model
releases. :mod:`dpdl.audit.bounds` turns the scores into an epsilon lower bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

BLACK_BOX = "black_box"  # a score any observer of the released values can compute
WHITE_BOX = "white_box"  # the log-likelihood ratio of the released values given the declared noise
SCORE_KINDS = (BLACK_BOX, WHITE_BOX)


@dataclass(frozen=True)
class AuditSamples:
    """One score per run: on D (the dataset holding the canary) and on its neighbour D'.

    A large score is the auditor's evidence for D. ``what`` says in words what the score reads.
    """

    canary: np.ndarray
    neighbour: np.ndarray
    what: str

    def __post_init__(self) -> None:
        for name in ("canary", "neighbour"):
            values = np.asarray(getattr(self, name), dtype=float)
            if values.ndim != 1 or values.size < 2 or not np.all(np.isfinite(values)):
                raise ValueError(f"AuditSamples.{name} must be a 1-D array of at least 2 finite scores")
            object.__setattr__(self, name, values)
        if self.canary.size != self.neighbour.size:
            raise ValueError("AuditSamples needs as many runs on D as on D'")


@dataclass(frozen=True)
class AuditCell:
    """One audited configuration of one algorithm, and what the paper claims for what it releases.

    ``claimed_epsilon`` is the epsilon the paper's theorem gives the released values audited here
    (per iteration when ``iterations`` is 1 and the paper states privacy per iteration; the total
    when it states a total), at ``delta`` (0 for a pure-DP claim). ``accountant_epsilon`` is
    dp-accounting's epsilon for the same releases at ``delta`` (None for a pure-DP claim the
    accountant does not compose differently). ``switches`` are the study's fidelity switches the
    cell runs under.
    """

    study: str
    name: str
    claim: str
    algorithm: str
    claimed_epsilon: float
    delta: float
    iterations: int
    released: str
    canary: str
    switches: Mapping[str, str] = field(default_factory=dict)
    accountant_epsilon: float | None = None
    # the release's noise: "gaussian" (a Gaussian-DP fit applies), "norm_exponential" (a Laplace fit
    # applies to the black-box score), "laplace" (Laplace noise inside an objective: no fit), ""
    # (none declared)
    noise: str = ""
    # this cell runs audit.runs x runs_scale per side (cheap cells with a small claimed epsilon)
    runs_scale: int = 1
    # premise id -> True (the canary pair stays within the paper's assumption) or False (it leaves
    # it), for every premise of the study's PREMISES; checked on the pair by dpdl.audit.premises
    premises: Mapping[str, bool] = field(default_factory=dict)
    # the project's own choices the cell rests on (named in the verdict)
    project_premises: tuple[str, ...] = ()


@dataclass(frozen=True)
class PrivacyClaim:
    """A paper's privacy guarantee (a theorem or a stated (epsilon, delta)), tested by its cells."""

    id: str
    study: str
    where: str
    statement: str
    # an audit of someone's code rather than of a guarantee the paper states: the code and its commit
    # (its refutation is an implementation finding, counted apart)
    code: str = ""
