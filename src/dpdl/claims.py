"""Claims: what each paper states, declared once in code and judged by the one verdict engine.

Each study lists its :class:`Claim` objects in ``dpdl.studies.<study>.claims.CLAIMS``. A claim
says where the paper makes it, its *kind* (a number the paper prints, a statement the paper
makes, or a check of our implementation that is not a reproduction), its *form* (a
:mod:`dpdl.verdicts` form carrying the tolerance or margin), why that tolerance, the per-seed
table it is judged from, the function that extracts the form's input from that table, and the
scale it needs. :func:`scorecard` turns claims and tables into rows; nothing in a scorecard is
typed in by hand, and only :mod:`dpdl.verdicts` decides a verdict.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import pandas as pd

from dpdl import verdicts
from dpdl.seed_statistics import mean_interval
from dpdl.verdicts import Form, Judgement, StatedNumber, Unidentified

PAPER_NUMBER = "paper number"  # the paper prints this number
PAPER_STATEMENT = "paper statement"  # the paper says this of its methods (a comparison, an ordering, an equivalence)
MECHANISM_PROPERTY = "mechanism property"  # the paper says this, but any working calibrated mechanism does it
# (the error falls as the budget grows, the iterates converge): reported apart from the substantive claims
IMPLEMENTATION_CHECK = "implementation check"  # holds by construction, a sanity range, a textbook fact
PRIVACY_CLAIM = "privacy claim"  # the paper's (epsilon, delta)-DP guarantee, tested by the audit (dpdl.audit_report)
KINDS = (PAPER_NUMBER, PAPER_STATEMENT, MECHANISM_PROPERTY, IMPLEMENTATION_CHECK, PRIVACY_CLAIM)
SUBSTANTIVE_KINDS = (PAPER_NUMBER, PAPER_STATEMENT)  # what the headline counts
HEADLINE_KINDS = (*SUBSTANTIVE_KINDS, MECHANISM_PROPERTY)  # the paper's own claims, shown and counted by kind

SCORECARD_COLUMNS = [
    "id",
    "study",
    "kind",
    "form",
    "where",
    "statement",
    "paper_value",
    "our_value",
    "effect",
    "ci_low",
    "ci_high",
    "test",
    "n_seeds",
    "tolerance",
    "justification",
    "verdict",
    "seeds_to_decide",
    "cells_for",
    "cells_against",
    "deciding_cell",
    "premise",
    "reference",
    "same_runs_as",
    "post_hoc",
    "detail",
    "switches",
    "scale",
]


@dataclass(frozen=True)
class Premise:
    """What a comparison "at the same privacy" assumes of the runs, checked on them.

    ``check`` reads the table named ``aggregate`` and says whether the runs met the premise. A
    claim whose numbers are reproduced but whose premise failed is not counted as reproduced.
    """

    statement: str
    aggregate: str
    check: Callable[[pd.DataFrame], verdicts.Outcome]


@dataclass(frozen=True)
class Reference:
    """A number shown beside a claim's values for scale, never used by its verdict (e.g. a constant
    classifier's error beside every misclassification claim): ``compute`` reads the table ``aggregate``."""

    label: str
    aggregate: str
    compute: Callable[[pd.DataFrame], float | str]

    def shown(self, tables: Mapping[str, pd.DataFrame | None]) -> str:
        table = tables.get(self.aggregate)
        if table is None:
            return ""
        value = self.compute(table)
        return f"{self.label}: {value:.4g}" if isinstance(value, float) else f"{self.label}: {value}"


def class_shares(card: Mapping) -> pd.DataFrame:
    """A dataset card's class balance as a table (label, share): the input of :func:`majority_class_error`."""
    return pd.DataFrame({"label": list(card["class_balance"]), "share": list(card["class_balance"].values())})


def majority_class_error(aggregate: str, percent: bool = False) -> Reference:
    """The error of a constant classifier predicting the majority class, from the class shares in ``aggregate``:
    what a misclassification rate is read against (a rate above it is worse than predicting one class)."""
    scale = 100.0 if percent else 1.0
    label = "majority-class error" + (" (%)" if percent else "")
    return Reference(label, aggregate, lambda table: scale * (1.0 - float(table["share"].max())))


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper."""

    id: str
    study: str
    where: str
    statement: str
    kind: str
    form: Form
    justification: str
    aggregate: str
    extract: Callable[[pd.DataFrame], object]
    needs: Mapping[str, float] = field(default_factory=dict)
    paper_value: float | str | None = None
    premise: Premise | None = None
    reference: Reference | None = None
    same_runs_as: str = ""  # the claim whose runs this one only re-reads: listed, not counted again

    def __post_init__(self) -> None:
        """Refuse a claim without a known kind, a verdict form, a positive tolerance or margin, and its reason."""
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} is not one of {KINDS}")
        if not isinstance(self.form, tuple(verdicts.FORMS.values())):
            raise ValueError(f"claim {self.id}: form {self.form!r} is not one of {sorted(verdicts.FORMS)}")
        if isinstance(self.form, StatedNumber) and not self.form.tolerance > 0:
            raise ValueError(f"claim {self.id}: a stated number needs a tolerance > 0")
        if isinstance(self.form, verdicts.Equivalence) and not self.form.margin > 0:
            raise ValueError(f"claim {self.id}: an equivalence needs a margin > 0")
        if not self.justification.strip() or not self.form.describe():
            raise ValueError(f"claim {self.id}: a tolerance or margin needs its justification")

    @property
    def shown_paper_value(self) -> float | str | None:
        """The paper's value as the scorecard shows it (a stated number's value unless given)."""
        if self.paper_value is None and isinstance(self.form, StatedNumber):
            return self.form.paper_value
        return self.paper_value


class SeedsMissing(ValueError):
    """A trend claim's extractor handed the engine a series without seed ids on a grid whose points share seeds."""


def _series_of(data: object) -> list[verdicts.Series]:
    """Every trend series in an extractor's output (a list of series, or the parts of a disjunction)."""
    if isinstance(data, verdicts.Series):
        return [data]
    if isinstance(data, list | tuple):
        return [series for part in data for series in _series_of(part)]
    return []


def require_seed_ids(claim: Claim, data: object) -> None:
    """Refuse (:class:`SeedsMissing`) a trend series without seed ids: the claim's study declares that its
    grid points share seeds, so a series without them would be judged unpaired (pooled tau and Welch)
    where the design is paired."""
    bare = [series.name for series in _series_of(data) if series.seeds is None]
    if bare:
        raise SeedsMissing(
            f"claim {claim.id}: trend series {', '.join(bare)} carry no seed ids, but study {claim.study} declares "
            "that its grid points share seeds (SHARED_SEEDS): its extractor must pass them (Series(..., seeds=...) "
            "or dpdl.claims.trend_series with a seed column) so the trend is judged within seeds"
        )


def at_scale(claim: Claim, scale: Mapping[str, float]) -> bool:
    """Whether the study's scale (its config values) reaches what ``claim`` needs to be judged."""
    return all(scale.get(key, 0) >= minimum for key, minimum in claim.needs.items())


def judge(
    claim: Claim,
    tables: Mapping[str, pd.DataFrame | None],
    scale: Mapping[str, float],
    shared_seeds: bool = False,
) -> tuple[Judgement, str, str]:
    """The judgement of ``claim`` on its per-seed table in ``tables`` (None or absent: data unavailable),
    our value as shown, and what its premise check found (empty without a premise).

    ``shared_seeds`` (what the claim's study declares, its ``SHARED_SEEDS``) refuses a trend series without
    seed ids (:func:`require_seed_ids`)."""
    table = tables.get(claim.aggregate)
    if table is None:
        return Judgement(verdicts.UNAVAILABLE), "", ""
    data = claim.extract(table)
    if shared_seeds:
        require_seed_ids(claim, data)
    if isinstance(data, Unidentified):
        unidentified = Judgement(verdicts.NOT_IDENTIFIABLE, test="the quantity does not depend on the parameter")
        judgement, value = replace(unidentified, detail=data.reason), ""
    else:
        judgement = claim.form.judge(data)
        value = _our_value(claim.form, data, judgement)
    premise = ""
    if claim.premise is not None:
        premise_table = tables.get(claim.premise.aggregate)
        if premise_table is None:
            premise = f"unchecked ({claim.premise.aggregate} unavailable): {claim.premise.statement}"
        else:
            outcome = claim.premise.check(premise_table)
            premise = f"{'met' if outcome.holds else 'not met'}: {claim.premise.statement}; {outcome.value}"
            if not outcome.holds and judgement.verdict == verdicts.REPRODUCED:
                judgement = replace(judgement, verdict=verdicts.PREMISE_FAILS)
    if not at_scale(claim, scale):
        judgement = replace(judgement, verdict=verdicts.NOT_AT_SCALE)
    return judgement, value, premise


def _our_value(form: Form, data: object, judgement: Judgement) -> str:
    if isinstance(form, StatedNumber):
        mean = mean_interval(data)[0]
        return "" if math.isnan(mean) else f"{mean:.4g}"
    if isinstance(data, verdicts.Outcome):
        return data.value
    return "" if math.isnan(judgement.effect) else f"effect {judgement.effect:.4g}"


def _number(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def scorecard(
    claims: list[Claim],
    tables: Mapping[str, pd.DataFrame | None],
    *,
    scale: Mapping[str, float],
    switches: Mapping[str, object],
    shared_seeds: bool,
) -> pd.DataFrame:
    """One row per claim: the paper's value beside ours, the test, the verdict and the settings behind it.

    ``shared_seeds``: the study's ``SHARED_SEEDS`` (a required keyword, so no study's claims step can leave it
    out): a trend series without seed ids is then refused (:func:`require_seed_ids`)."""
    rows = []
    from dpdl.post_hoc import flags

    for claim in claims:
        judgement, value, premise = judge(claim, tables, scale, shared_seeds)
        rows.append(
            {
                "id": claim.id,
                "study": claim.study,
                "kind": claim.kind,
                "form": claim.form.name,
                "where": claim.where,
                "statement": claim.statement,
                "paper_value": claim.shown_paper_value,
                "our_value": value,
                "effect": _number(judgement.effect),
                "ci_low": _number(judgement.ci_low),
                "ci_high": _number(judgement.ci_high),
                "test": judgement.test,
                "n_seeds": judgement.n_seeds,
                "tolerance": claim.form.describe(),
                "justification": claim.justification,
                "verdict": judgement.verdict,
                "seeds_to_decide": judgement.seeds_to_decide,
                "cells_for": judgement.cells_for,
                "cells_against": judgement.cells_against,
                "deciding_cell": judgement.deciding,
                "premise": premise,
                "reference": "" if claim.reference is None else claim.reference.shown(tables),
                "same_runs_as": claim.same_runs_as,
                "post_hoc": flags(claim.id),
                "detail": judgement.detail,
                "switches": json.dumps(dict(switches), sort_keys=True),
                "scale": json.dumps(dict(scale), sort_keys=True),
            }
        )
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS)


def trend_series(
    table: pd.DataFrame, *, series: list[str], x: str, value: str = "value", seed: str = "seed"
) -> list[verdicts.Series]:
    """Per-seed rows (``series`` keys, ``x``, ``value``, ``seed``) as the :class:`~dpdl.verdicts.Series` a
    trend claim judges; with a ``seed`` column the series name each value's seed, so a grid whose points
    share seeds is tested within seeds."""
    found = []
    for key, part in table.groupby(series, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        grid = sorted(part[x].unique())
        rows = [part[part[x] == point] for point in grid]
        samples = [r[value].to_numpy(float) for r in rows]
        seeds = [r[seed].to_numpy() for r in rows] if seed in part.columns else None
        name = ", ".join(f"{k}={v}" for k, v in zip(series, key, strict=True))
        found.append(verdicts.Series(name, grid, samples, seeds))
    return found


def pairs(
    table: pd.DataFrame, *, side: str, low: str, high: str, cells: list[str], value: str = "value", seed: str = "seed"
) -> list[verdicts.Pair]:
    """Per-seed rows as the :class:`~dpdl.verdicts.Pair` cells of an ordering (``low`` below ``high``) or equivalence.

    ``side`` is the column naming the two sides; rows of a cell are paired on ``seed`` when both
    sides ran the same seeds.
    """
    found = []
    for key, part in table.groupby(cells, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        a = part[part[side] == low].sort_values(seed)
        b = part[part[side] == high].sort_values(seed)
        paired = len(a) == len(b) and a[seed].tolist() == b[seed].tolist()
        name = ", ".join(f"{k}={v}" for k, v in zip(cells, key, strict=True))
        found.append(verdicts.Pair(name, a[value].to_numpy(float), b[value].to_numpy(float), paired=paired))
    return found
