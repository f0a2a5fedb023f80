"""The premise ledger: which of its paper's stated assumptions each audited cell stays within.

A privacy guarantee holds under its paper's premises (record and label domains, norm and gradient
bounds, the neighbouring relation, what the adversary sees). A refutation counts against the paper
only when the deciding cell's canary pair stays within every one of them (issue 58). Each study
declares, in ``dpdl.studies.<study>.audit``:

- ``PREMISES``: the paper's assumptions (:class:`Premise`), each with where the paper states it and
  its sentence, the bound, and how it is measured on a canary pair;
- on every :class:`~dpdl.audit.cells.AuditCell`, ``premises``: premise id -> True (declared within)
  or False (declared outside), and ``project_premises``: the project's own choices the cell rests
  on (named in the verdict's detail, not premises of the paper);
- ``premise_measures(cell) -> {premise id: measured value}``: each bound computed on the cell's actual
  canary pair, from its generated data alone (no audit run).

:func:`premise_ledger` puts them together, one row per (cell, premise); :func:`check_ledger` fails
when a declaration is contradicted by its measurement (a cell declared within a bound it breaks, or
declared outside one it keeps). The ledger is a function of the code alone, so verdicts can be
re-derived from a published audit table plus the ledger without rerunning.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpdl.errors import DpdlError

WITHIN, OUTSIDE, PROJECT = "within", "outside", "project's choice"
# Measured values are floats computed from float64 (or float32 pixel) data: a bound is kept up to this much.
TOLERANCE = 1e-6
LEDGER_COLUMNS = [
    "study",
    "claim",
    "cell",
    "premise",
    "assumption",
    "where",
    "paper_says",
    "declared",
    "measured",
    "bound",
    "holds",
    "measure",
]


@dataclass(frozen=True)
class Premise:
    """One assumption a paper's privacy guarantee states, and how it is measured on a canary pair.

    ``measured <= bound`` is the premise holding for the pair; ``measure`` says what is computed (a
    premise without a number, such as what the adversary sees, has ``bound`` NaN and holds by the
    cell's construction, stated in ``measure``).
    """

    id: str
    assumption: str  # a few words: "gradient bound c1 = 1 (Assumption 3)"
    where: str  # where the paper states it
    paper_says: str  # the paper's sentence
    bound: float
    measure: str
    algorithms: tuple[str, ...] = ()  # the algorithms whose guarantee rests on it (empty: every cell's)

    def applies(self, algorithm: str) -> bool:
        return not self.algorithms or algorithm in self.algorithms


class PremiseError(DpdlError):
    """A cell's premise declaration contradicts its canary pair."""


def differing_records(x_d, y_d, x_n, y_n) -> float:
    """How many records of D and D' differ (features or label): 1 for a replace-one neighbour."""
    x_d, x_n = np.asarray(x_d, dtype=float), np.asarray(x_n, dtype=float)
    y_d, y_n = np.asarray(y_d), np.asarray(y_n)
    if x_d.shape != x_n.shape or y_d.shape != y_n.shape:
        return math.inf  # not the same size: not a replace-one neighbour
    rows = np.any(x_d.reshape(len(x_d), -1) != x_n.reshape(len(x_n), -1), axis=1) | (y_d != y_n)
    return float(np.count_nonzero(rows))


def premise_ledger(module) -> pd.DataFrame:
    """One row per (cell, premise) of a study's audit module: declared, measured, the bound, whether it holds.

    Covers ``AUDIT_CELLS`` and any ``EXTRA_CELLS``. The project's own premises of a cell get rows with
    ``declared`` :data:`PROJECT` and no measurement.
    """
    rows = []
    for cell in (*module.AUDIT_CELLS, *getattr(module, "EXTRA_CELLS", ())):
        premises = {premise.id: premise for premise in module.PREMISES if premise.applies(cell.algorithm)}
        if set(cell.premises) != set(premises):
            raise PremiseError(
                f"{cell.study}/{cell.name}: declares premises {sorted(cell.premises)}, the study states "
                f"{sorted(premises)}: every cell declares each premise within or outside"
            )
        measured = module.premise_measures(cell)
        for premise_id, within in cell.premises.items():
            premise = premises[premise_id]
            value = float(measured.get(premise_id, math.nan))
            holds = math.nan if math.isnan(premise.bound) else bool(value <= premise.bound * (1 + TOLERANCE))
            rows.append(
                {
                    "study": cell.study,
                    "claim": cell.claim,
                    "cell": cell.name,
                    "premise": premise_id,
                    "assumption": premise.assumption,
                    "where": premise.where,
                    "paper_says": premise.paper_says,
                    "declared": WITHIN if within else OUTSIDE,
                    "measured": value,
                    "bound": premise.bound,
                    "holds": holds,
                    "measure": premise.measure,
                }
            )
        for choice in cell.project_premises:
            rows.append(
                {
                    **dict.fromkeys(LEDGER_COLUMNS, ""),
                    "study": cell.study,
                    "claim": cell.claim,
                    "cell": cell.name,
                    "premise": "project",
                    "assumption": choice,
                    "where": "the project's choice, not the paper's",
                    "declared": PROJECT,
                    "measured": math.nan,
                    "bound": math.nan,
                    "holds": math.nan,
                }
            )
    return pd.DataFrame(rows, columns=LEDGER_COLUMNS)


def ledger_problems(ledger: pd.DataFrame) -> list[str]:
    """Every declaration its measurement contradicts.

    A declaration is contradicted when it is declared within a bound the pair breaks, or outside one
    it keeps (a premise without a number is not checked).
    """
    problems = []
    for row in ledger[ledger["declared"].isin((WITHIN, OUTSIDE))].itertuples():
        if not isinstance(row.holds, bool | np.bool_):
            continue
        if row.declared == WITHIN and not row.holds:
            problems.append(
                f"{row.study}/{row.cell}: declared within {row.assumption} but its canary pair measures "
                f"{row.measured:.4g} > {row.bound:.4g} ({row.measure})"
            )
        elif row.declared == OUTSIDE and row.holds:
            problems.append(
                f"{row.study}/{row.cell}: declared outside {row.assumption} but its canary pair measures "
                f"{row.measured:.4g} <= {row.bound:.4g} ({row.measure})"
            )
    return problems


def check_ledger(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger, after failing on any contradicted declaration (:func:`ledger_problems`)."""
    problems = ledger_problems(ledger)
    if problems:
        raise PremiseError("premise ledger contradicted:\n  " + "\n  ".join(problems))
    return ledger


def cells_within(ledger: pd.DataFrame) -> set[str]:
    """The cells declared within every premise of their paper (the ones whose refutation counts)."""
    paper = ledger[ledger["declared"].isin((WITHIN, OUTSIDE))]
    return set(paper["cell"]) - set(paper.loc[paper["declared"] == OUTSIDE, "cell"])


def left_premises(ledger: pd.DataFrame, cell: str) -> list[str]:
    """What the cell leaves, in words: each premise declared outside, with its measure and bound."""
    rows = ledger[(ledger["cell"] == cell) & (ledger["declared"] == OUTSIDE)]
    return [
        f"{r.assumption}, {r.where} (measured {r.measured:.3g} > {r.bound:.3g})" for r in rows.itertuples()
    ]


def project_premises(ledger: pd.DataFrame, cell: str) -> list[str]:
    """The project's own choices the cell rests on."""
    return list(ledger.loc[(ledger["cell"] == cell) & (ledger["declared"] == PROJECT), "assumption"])


def ledger_shown(ledger: pd.DataFrame, cells: Iterable[str] | None = None) -> pd.DataFrame:
    """The ledger's rows for display: cell, assumption, declared, measured against the bound."""
    shown = ledger if cells is None else ledger[ledger["cell"].isin(list(cells))]
    return pd.DataFrame(
        {
            "cell": shown["cell"],
            "assumption": shown["assumption"],
            "where": shown["where"],
            "declared": shown["declared"],
            "measured": [
                "" if d == PROJECT else _value(m, b)
                for d, m, b in zip(shown["declared"], shown["measured"], shown["bound"], strict=True)
            ],
        }
    )


def _value(measured, bound) -> str:
    measured, bound = float(measured), float(bound)
    if math.isnan(bound):
        return "by construction" if math.isnan(measured) else f"{measured:.3g}"
    return f"{measured:.3g} (bound {bound:.3g})"
