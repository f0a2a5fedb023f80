"""The papers' premises tested on their own data (issue 58, item 3).

A privacy guarantee holds under its paper's assumptions: bounded records (c1 = 1 for D-ZOA's lasso, G = 1 for
WD-DP, ||x|| <= 1 for Zhang & Zhu and for OutP's [10]), labels in a domain. The premise ledger
(:mod:`dpdl.audit.premises`) checks them on each audited cell's canary pair; this module checks the ones that
concern the data on the data the paper uses, as the study prepares it. Each study declares, in
``dpdl.studies.<study>.audit``, ``DATA_PREMISES``: :class:`DataPremise` objects, each naming one of its
``PREMISES``, the prepared datasets it is measured on, the bound one record must keep, and the function that
gives one value per record from the prepared arrays.

:func:`data_premise_table` measures them: one row per (dataset, premise) with the records, how many exceed the
bound, the largest value and whether it holds (largest <= bound, within the ledger's :data:`TOLERANCE`), and
the privacy claims whose premise it is (derived from the cells that declare it). A dataset that cannot be
built here gets a row with no measurement and the one-line reason. The table is a function of the prepared
arrays alone; the scorecard's premise rows are judged from it (:func:`dpdl.audit_report.premise_claim_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.audit.premises import TOLERANCE
from dpdl.chain import note_read
from dpdl.errors import ArtifactError

DATA_PREMISE_COLUMNS = [
    "study",
    "dataset",
    "premise",
    "claims",
    "assumption",
    "where",
    "measure",
    "records",
    "above",
    "share_above",
    "largest",
    "bound",
    "holds",
    "runs",
    "note",
]


@dataclass(frozen=True)
class DataPremise:
    """One premise of a study (an id of its ``PREMISES``) measured on each record of its prepared data.

    ``values`` maps the prepared arrays (``np.load`` of ``data/processed/<study>/<dataset>.npz``) to
    one value per record; the premise holds on a record whose value is at most ``bound`` (a record's
    bound, which may differ from the canary pair's: c1 per record against 2 c1 for a replaced one).
    ``runs`` names the runs whose privacy rests on it on each dataset (one text for all, or dataset
    -> text), said when it fails.
    """

    premise: str
    datasets: tuple[str, ...]
    bound: float
    measure: str
    values: Callable[[Mapping[str, np.ndarray]], np.ndarray]
    runs: str | Mapping[str, str]

    def runs_on(self, dataset: str) -> str:
        return self.runs if isinstance(self.runs, str) else self.runs[dataset]


def exceeds(values: np.ndarray, bound: float) -> np.ndarray:
    """Which values break ``bound`` (above it by more than the ledger's relative :data:`TOLERANCE`)."""
    return np.asarray(values, dtype=float) > bound * (1 + TOLERANCE)


def measured(values: np.ndarray, bound: float) -> dict:
    """records, above, share_above, largest, bound, holds of per-record ``values`` against ``bound``."""
    values = np.asarray(values, dtype=float).ravel()
    if not len(values):
        raise ArtifactError("no records to measure a premise on")
    if not np.isfinite(values).all():
        raise ArtifactError(f"{int((~np.isfinite(values)).sum())} records give a non-finite value")
    above = int(np.count_nonzero(exceeds(values, bound)))
    return {
        "records": len(values),
        "above": above,
        "share_above": above / len(values),
        "largest": float(values.max()),
        "bound": float(bound),
        "holds": above == 0,
    }


def premise_claims(module, premise: str) -> str:
    """The privacy claims whose guarantee rests on ``premise``.

    Those are the claims with an audited cell that declares it.
    """
    cells = (*module.AUDIT_CELLS, *getattr(module, "EXTRA_CELLS", ()))
    return ";".join(dict.fromkeys(cell.claim for cell in cells if premise in cell.premises))


def data_premise_table(
    module, study: str, prepared: Mapping[str, Mapping[str, np.ndarray]], skipped: Mapping[str, str]
) -> pd.DataFrame:
    """One row per (dataset, data premise) of ``study``'s audit ``module``, measured on ``prepared``.

    ``prepared`` maps a dataset to its arrays; a dataset in ``skipped`` (dataset -> why it cannot be
    built here) gets a row without a measurement, its reason in ``note``.
    """
    premises = {premise.id: premise for premise in module.PREMISES}
    rows = []
    for data in module.DATA_PREMISES:
        if data.premise not in premises:
            raise ArtifactError(
                f"{study}: data premise {data.premise!r} is not one of PREMISES {sorted(premises)}"
            )
        premise = premises[data.premise]
        for dataset in data.datasets:
            row = {
                "study": study,
                "dataset": dataset,
                "premise": data.premise,
                "claims": premise_claims(module, data.premise),
                "assumption": premise.assumption,
                "where": premise.where,
                "measure": data.measure,
                "runs": data.runs_on(dataset),
                "note": "",
            }
            if dataset in prepared:
                row |= measured(data.values(prepared[dataset]), data.bound)
            elif dataset in skipped:
                row |= {"records": 0, "above": 0, "share_above": math.nan, "largest": math.nan,
                        "bound": data.bound, "holds": "", "note": skipped[dataset]}  # fmt: skip
            else:
                raise ArtifactError(
                    f"{study}/{dataset}: neither prepared nor skipped; pass its arrays or its reason"
                )
            rows.append(row)
    return pd.DataFrame(rows, columns=DATA_PREMISE_COLUMNS)


def read_data_premises(path: str | Path) -> pd.DataFrame:
    """A table written from :func:`data_premise_table`, checked for its columns (``holds`` as text)."""
    try:
        frame = pd.read_csv(path, dtype={"holds": str, "claims": str, "note": str}, keep_default_na=False,
                            na_values={"share_above": [""], "largest": [""]})  # fmt: skip
    except (OSError, pd.errors.ParserError) as err:
        raise ArtifactError(f"{path}: cannot read the data premise table ({err})") from err
    note_read(path)
    if list(frame.columns) != DATA_PREMISE_COLUMNS:
        raise ArtifactError(
            f"{path}: not a data premise table (columns differ); rebuild it with `snakemake audit`"
        )
    return frame
