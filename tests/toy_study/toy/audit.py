"""The toy's privacy audit: its Laplace-noised mean released on two neighbouring generated datasets.

The claim: releasing the mean of n records in [0, 1] with Laplace noise of scale (1 / n) / epsilon (the
calibration of ``run.noise_scale``) is epsilon-DP for datasets that differ in one record (Dwork, McSherry,
Nissim & Smith 2006, the Laplace mechanism). One cell: the toy's generated records at its schema's defaults,
record 1 set to 1 on D and to 0 on D' (the two ends of [0, 1]), so the mean moves by 1 / n, the sensitivity
the noise is calibrated to; each run is one release through the study's own ``run.release`` at epsilon =
:data:`EPSILON`. The score is the released value itself (black box: it is all that is released); a threshold
on it is the most powerful test between two shifted Laplace laws, and the canary's privacy loss is exactly
the claimed epsilon (:func:`canary_loss`). A correct mechanism gives eps_LB below the claim; noise of half the
scale doubles the loss, and :data:`RUNS_SCALE` x ``audit.runs`` (400 a side at the default 200) refutes it.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from dpdl import schemas
from dpdl.audit.cells import BLACK_BOX, AuditCell, AuditSamples, PrivacyClaim
from dpdl.audit.data_premises import DataPremise
from dpdl.audit.premises import Premise, differing_records
from dpdl.audit.reach import CanaryLoss, laplace_canary
from toy import run
from toy.grid import PREPARED, STUDY, build_synthetic

CLAIM = f"{STUDY}.privacy.laplace_mean"
EPSILON = (
    2.0  # the grid's epsilon audited: e^2 is a rate ratio 400 runs a side resolve when the noise is halved
)
RUNS_SCALE = 2  # audit.runs x 2 runs a side (a run is one Laplace draw)
CANARY_ROW = 0  # the replaced record

PRIVACY_CLAIMS = (
    PrivacyClaim(
        CLAIM,
        STUDY,
        "Proposition 1 (the Laplace mechanism)",
        "the mean of n records in [0, 1] plus Laplace noise of scale S(f) / epsilon, S(f) = 1 / n, is "
        "epsilon-differentially private",
    ),
)

PREMISES = (
    Premise(
        "record_domain",
        "records in [0, 1]",
        "the toy's calibration (run.noise_scale)",
        "S(f) = 1 / n: one record in [0, 1] moves the mean of n by at most 1 / n",
        0.0,
        "the number of the replaced record's values (on D and D') outside [0, 1]",
    ),
    Premise(
        "neighbours",
        "replace-one neighbours",
        "Definition 1",
        "D and D' differ in a single record",
        1.0,
        "the number of records in which D and D' differ",
    ),
    Premise(
        "adversary",
        "the released mean",
        "Proposition 1",
        "the mechanism's output is the noisy value alone",
        math.nan,
        "by construction: the cell scores the one value released",
    ),
)


def mechanism(section: dict) -> dict:
    """The switch values a build releases with: the toy has none (every reading runs the one cell)."""
    return {}


@functools.cache
def _defaults() -> dict:
    """The toy's config section as a config that leaves out every key reads (its ``schema.yaml``)."""
    file = Path(__file__).with_name("schema.yaml")
    return schemas.fill_defaults({}, schemas.read(file), file.parent)


def neighbours() -> tuple[np.ndarray, np.ndarray]:
    """(D, D'): the toy's generated records (its prepared dataset at the schema's defaults), record
    :data:`CANARY_ROW` set to 1 on D and to 0 on D'."""
    defaults = _defaults()
    x, _, _ = build_synthetic([], {"records": defaults["records"], "seed": defaults["data_seed"]})
    x_d, x_n = x["X"][:, 0].copy(), x["X"][:, 0].copy()
    x_d[CANARY_ROW], x_n[CANARY_ROW] = 1.0, 0.0
    return x_d, x_n


CELL = AuditCell(
    study=STUDY,
    name=f"laplace_mean_eps{EPSILON:g}_n{_defaults()['records']}",
    claim=CLAIM,
    algorithm="laplace_mean",
    claimed_epsilon=EPSILON,  # the epsilon run.noise_scale calibrates the release's noise to
    delta=0.0,
    iterations=1,
    released="the mean of the n records plus Laplace noise of scale run.noise_scale(n, epsilon), once",
    canary=f"record {CANARY_ROW + 1} of the generated records: 1 on D, 0 on D' (the ends of [0, 1]): the mean "
    "moves by 1 / n, the sensitivity the noise is calibrated to",
    noise="norm_exponential",  # Laplace in one dimension: the black-box score gets a Laplace fit
    runs_scale=RUNS_SCALE,
    premises={premise.id: True for premise in PREMISES},
    project_premises=(
        f"the toy's generated records at its schema's defaults (n = {_defaults()['records']}, "
        f"data_seed {_defaults()['data_seed']})",
    ),
)
AUDIT_CELLS = (CELL,)


def _check(cell: AuditCell) -> None:
    if cell.name != CELL.name:
        raise ValueError(f"unknown toy audit cell {cell.name!r}; expected {CELL.name!r}")


def audit_scores(cell: AuditCell, runs: int, seed: int) -> dict[str, AuditSamples]:
    """The released values of ``runs`` releases on D and on D', a function of (cell, runs, seed)."""
    _check(cell)
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 2:
        raise ValueError(f"an audit needs at least 2 runs per side; got runs={runs!r}")
    sides = np.random.SeedSequence(seed).spawn(2)  # canary side, neighbour side
    canary, neighbour = (
        run.release(x, cell.claimed_epsilon, np.random.default_rng(side), int(runs))
        for x, side in zip(neighbours(), sides, strict=True)
    )
    return {BLACK_BOX: AuditSamples(canary, neighbour, what="the released noisy mean")}


def premise_measures(cell: AuditCell) -> dict[str, float]:
    """Each premise's bound computed on the cell's canary pair (:data:`PREMISES`), from its data alone."""
    _check(cell)
    x_d, x_n = neighbours()
    replaced = np.array([x_d[CANARY_ROW], x_n[CANARY_ROW]])
    labels = np.zeros(len(x_d))  # the toy's records have no label
    return {
        "record_domain": float(np.count_nonzero((replaced < 0) | (replaced > 1))),
        "neighbours": differing_records(x_d[:, None], labels, x_n[:, None], labels),
    }


def canary_loss(cell: AuditCell) -> CanaryLoss:
    """The canary's privacy loss at the declared noise: its shift of the mean over the Laplace scale.

    The shift is the replaced values' difference over n, (1 - 0) / n, by construction (the means computed from
    the records differ from it by rounding, which would set the loss a hair below the claim).
    """
    _check(cell)
    x_d, x_n = neighbours()
    shift = abs(x_d[CANARY_ROW] - x_n[CANARY_ROW]) / len(x_d)
    scale = run.noise_scale(len(x_d), cell.claimed_epsilon)
    return laplace_canary(shift, scale, cell, f"Laplace: shift {shift:.3g} of the mean at scale {scale:.3g}")


DATA_PREMISES = (
    DataPremise(
        "record_domain",
        tuple(record.dataset for record in PREPARED),
        0.0,
        "1 for each record outside [0, 1]",
        lambda arrays: ((arrays["X"] < 0) | (arrays["X"] > 1)).any(axis=1).astype(float),
        "every release of the error figure and both claims",
    ),
)
