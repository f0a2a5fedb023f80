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

import numpy as np
import pandas as pd

from dpdl import verdicts
from dpdl.claim_kinds import (  # noqa: F401  (the kinds are part of this module's face)
    HEADLINE_KINDS,
    IMPLEMENTATION_CHECK,
    KINDS,
    MECHANISM_PROPERTY,
    PAPER_NUMBER,
    PAPER_STATEMENT,
    PREMISE_CLAIM,
    PRIVACY_CLAIM,
    SUBSTANTIVE_KINDS,
)
from dpdl.seed_statistics import mean_interval
from dpdl.verdicts import Form, Judgement, StatedNumber, Unidentified

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
    "tolerance_reproduced",
    "tolerance_not_reproduced",
    "justification",
    "verdict",
    "seeds_to_decide",
    "cells_for",
    "cells_against",
    "deciding_cell",
    "premise",
    "reference",
    "same_runs_as",
    "same_runs_why",
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
    """A number shown beside a claim's values for scale, never used by its verdict.

    An example is a constant classifier's error beside every misclassification claim. Its ``compute`` reads
    the table ``aggregate``.
    """

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
    """The error of a constant classifier predicting the majority class in ``aggregate``.

    It comes from the class shares: what a misclassification rate is read against (a rate above it
    is worse than predicting one class).
    """
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
    same_runs_as: str = ""  # declared: the claim whose runs this one only re-reads (adds to what is derived,
    # :func:`derive_same_runs`): listed, not counted again
    same_runs_why: str = ""  # the reason for a declared same_runs_as (required with it)

    def __post_init__(self) -> None:
        """Refuse a claim without a known kind, verdict form, positive tolerance or margin and its reason."""
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
        if bool(self.same_runs_as) != bool(self.same_runs_why.strip()):
            raise ValueError(
                f"claim {self.id}: a declared same_runs_as needs its reason (same_runs_why), and only it"
            )

    @property
    def shown_paper_value(self) -> float | str | None:
        """The paper's value as the scorecard shows it (a stated number's value unless given)."""
        if self.paper_value is None and isinstance(self.form, StatedNumber):
            return self.form.paper_value
        return self.paper_value


class SeedsMissing(ValueError):
    """A trend claim's extractor gave a series without seed ids on a grid whose points share seeds."""


def _series_of(data: object) -> list[verdicts.Series]:
    """Every trend series in an extractor's output (a list of series, or the parts of a disjunction)."""
    if isinstance(data, verdicts.Series):
        return [data]
    if isinstance(data, list | tuple):
        return [series for part in data for series in _series_of(part)]
    return []


def require_seed_ids(claim: Claim, data: object) -> None:
    """Refuse (:class:`SeedsMissing`) a trend series without seed ids.

    The claim's study declares that its grid points share seeds, so a series without them would be
    judged unpaired (pooled tau and Welch) where the design is paired.
    """
    bare = [series.name for series in _series_of(data) if series.seeds is None]
    if bare:
        raise SeedsMissing(
            f"claim {claim.id}: trend series {', '.join(bare)} carry no seed ids, but study "
            f"{claim.study} declares "
            "that its grid points share seeds (SHARED_SEEDS): its extractor must pass them "
            "(Series(..., seeds=...) or dpdl.claims.trend_series with a seed column) so the trend "
            "is judged within seeds"
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
    """The judgement of ``claim`` on its per-seed table, our value as shown, and its premise check.

    The table is in ``tables`` (None or absent: data unavailable); the premise check's findings are
    empty without a premise.

    ``shared_seeds`` (what the claim's study declares, its ``SHARED_SEEDS``) refuses a trend series without
    seed ids (:func:`require_seed_ids`)."""
    judgement, value, premise, _ = _judged(claim, tables, scale, shared_seeds)
    return judgement, value, premise


def _judged(
    claim: Claim, tables: Mapping[str, pd.DataFrame | None], scale: Mapping[str, float], shared_seeds: bool
) -> tuple[Judgement, str, str, object]:
    """:func:`judge`, and the extractor's output the form judged (None when no table was there)."""
    table = tables.get(claim.aggregate)
    if table is None:
        return Judgement(verdicts.UNAVAILABLE), "", "", None
    data = claim.extract(table)
    if shared_seeds:
        require_seed_ids(claim, data)
    if isinstance(data, Unidentified):
        unidentified = Judgement(
            verdicts.NOT_IDENTIFIABLE, test="the quantity does not depend on the parameter"
        )
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
    return judgement, value, premise, data


SUBSTANTIVE, MECHANISM = "substantive", "mechanism"  # the headline's two counts (implementation checks and
# privacy claims are counted elsewhere or never, so they are grouped with nothing)
COUNT_OF = dict.fromkeys(SUBSTANTIVE_KINDS, SUBSTANTIVE) | {MECHANISM_PROPERTY: MECHANISM}


def evidence(data: object) -> frozenset[bytes]:
    """The per-seed cells a claim's form judged, each as the fingerprint of its per-seed values.

    The values are sorted, so the order the extractor read the seeds in does not matter. The cells
    are a stated number's values, each side of each cell of an ordering or equivalence, each grid
    point of a trend series, the parts of a disjunction. Two claims that read the same runs the same
    way hand the engine bit-identical vectors. A vector with fewer than two distinct finite values
    (a deterministic run, a constant threshold) names no runs and is left out; an exact check or an
    unidentified quantity has no per-seed cells.
    """
    vectors: list = []
    if isinstance(data, verdicts.Pair):
        vectors = [data.low, data.high]
    elif isinstance(data, verdicts.Series):
        vectors = list(data.samples)
    elif isinstance(data, list | tuple):
        return frozenset().union(*(evidence(part) for part in data))
    elif isinstance(data, np.ndarray | pd.Series):
        vectors = [data]
    found = set()
    for vector in vectors:
        values = np.sort(np.asarray(vector, dtype=float))
        if len(np.unique(values[np.isfinite(values)])) >= 2:
            found.add(values.tobytes())
    return frozenset(found)


def derive_same_runs(
    claims: list[Claim], evidence_of: Mapping[str, frozenset[bytes]]
) -> dict[str, tuple[str, str]]:
    """Which claims only re-read another's runs, and why.

    They are derived from the cells each claim judged (:func:`evidence`).

    Within each headline count (substantive claims; mechanism properties) and each form (a stated
    number, an ordering, a trend, an equivalence: claims of one form test the same kind of
    statement), a claim whose cells are all among another's (a subset, or the same cells with the
    other declared first) re-reads it: it names the first declared counted claim whose cells hold
    all of its own, and is listed, not counted. Claims of different forms on the same runs test
    different statements (a printed number against an ordering of the same cells) and are both
    counted: grouping them would count one verdict for both and hide the other. The counted claims
    are the rest: no two of them rest on the same or nested cells. A declared ``same_runs_as`` (with
    its reason) adds to this for a claim that derives none. Returns {claim id: (the claim it
    re-reads, why)}.
    """
    order = {claim.id: i for i, claim in enumerate(claims)}
    judged = [c for c in claims if COUNT_OF.get(c.kind) and evidence_of.get(c.id)]

    def covers(b: Claim, a: Claim) -> bool:
        """Whether ``a`` re-reads ``b``: ``b``'s cells hold all of ``a``'s.

        The two claims share a headline count and a form, and ``b`` either has more cells than ``a`` or has
        the same cells and is declared first.
        """
        ea, eb = evidence_of[a.id], evidence_of[b.id]
        return (
            b is not a
            and COUNT_OF[b.kind] == COUNT_OF[a.kind]
            and type(b.form) is type(a.form)
            and ea <= eb
            and (ea < eb or order[b.id] < order[a.id])
        )

    rereads = {a.id for a in judged if any(covers(b, a) for b in judged)}
    found = {}
    for a in judged:
        if a.id in rereads:
            b = next(b for b in judged if b.id not in rereads and b is not a and COUNT_OF[b.kind] == COUNT_OF[a.kind]
                     and type(b.form) is type(a.form) and evidence_of[a.id] <= evidence_of[b.id])  # fmt: skip
            n_a, n_b = len(evidence_of[a.id]), len(evidence_of[b.id])
            how = "the same" if n_a == n_b else f"{n_a} of the {n_b}"
            found[a.id] = (b.id, f"derived: it judges {how} per-seed cells (bit-identical values) as {b.id}")
    for claim in claims:
        if claim.same_runs_as and claim.id not in found:
            found[claim.id] = (claim.same_runs_as, f"declared: {claim.same_runs_why}")
    return found


def tolerance_reach(form: Form, judgement: Judgement) -> tuple[float | None, float | None]:
    """How far a stated number's verdict can be pushed, from its interval of ours - paper.

    The interval is [lo, hi] (absolute, the value's units). The result is the smallest tolerance at
    which it is reproduced (the interval inside ± it: max(-lo, hi)) and the largest below which it
    is not reproduced (the interval wholly outside ± it: max(lo, -hi), None when the interval holds
    the paper's value, so no tolerance makes it not reproduced). None for other forms or without an
    interval.
    """
    low, high = judgement.ci_low, judgement.ci_high
    if not isinstance(form, StatedNumber) or math.isnan(low) or math.isnan(high):
        return None, None
    apart = max(low, -high)
    return max(-low, high), (apart if apart > 0 else None)


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

    cells = {}
    for claim in claims:
        judgement, value, premise, data = _judged(claim, tables, scale, shared_seeds)
        cells[claim.id] = evidence(data)
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
                **dict(
                    zip(
                        ("tolerance_reproduced", "tolerance_not_reproduced"),
                        tolerance_reach(claim.form, judgement),
                        strict=True,
                    )
                ),
                "justification": claim.justification,
                "verdict": judgement.verdict,
                "seeds_to_decide": judgement.seeds_to_decide,
                "cells_for": judgement.cells_for,
                "cells_against": judgement.cells_against,
                "deciding_cell": judgement.deciding,
                "premise": premise,
                "reference": "" if claim.reference is None else claim.reference.shown(tables),
                "same_runs_as": "",
                "same_runs_why": "",
                "post_hoc": flags(claim.id),
                "detail": judgement.detail,
                "switches": json.dumps(dict(switches), sort_keys=True),
                "scale": json.dumps(dict(scale), sort_keys=True),
            }
        )
    same = derive_same_runs(claims, cells)
    for row in rows:
        row["same_runs_as"], row["same_runs_why"] = same.get(row["id"], ("", ""))
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS)


def first_values(seeds: np.ndarray, points: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per-seed rows as a seeds x points matrix of values, with its sorted seeds and points.

    Each pair's first non-missing value (NaN: none), as ``pivot_table(..., aggfunc="first",
    dropna=False)`` gives it, in a tenth of its time (the claims step reshapes hundreds of cells).
    """
    seeds, seed_at = np.unique(seeds, return_inverse=True)
    points, point_at = np.unique(points, return_inverse=True)
    values = np.asarray(values, dtype=float)
    flat = np.full(len(seeds) * len(points), np.nan)
    present = ~np.isnan(values)
    cells, first = np.unique((seed_at * len(points) + point_at)[present], return_index=True)
    flat[cells] = values[present][first]
    return flat.reshape(len(seeds), len(points)), seeds, points


def trend_series(
    table: pd.DataFrame, *, series: list[str], x: str, value: str = "value", seed: str = "seed"
) -> list[verdicts.Series]:
    """Per-seed rows as the :class:`~dpdl.verdicts.Series` a trend claim judges.

    The rows have ``series`` keys, ``x``, ``value`` and ``seed``; with a ``seed`` column the series
    name each value's seed, so a grid whose points share seeds is tested within seeds.
    """
    found = []
    for key, part in table.groupby(series, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        grid = sorted(part[x].unique())
        points = part[x].to_numpy()
        at = [points == point for point in grid]
        samples = [part[value].to_numpy(float)[rows] for rows in at]
        seeds = [part[seed].to_numpy()[rows] for rows in at] if seed in part.columns else None
        name = ", ".join(f"{k}={v}" for k, v in zip(series, key, strict=True))
        found.append(verdicts.Series(name, grid, samples, seeds))
    return found


def pairs(
    table: pd.DataFrame,
    *,
    side: str,
    low: str,
    high: str,
    cells: list[str],
    value: str = "value",
    seed: str = "seed",
) -> list[verdicts.Pair]:
    """Per-seed rows as the :class:`~dpdl.verdicts.Pair` cells of an ordering or equivalence.

    In an ordering ``low`` is below ``high``.

    ``side`` is the column naming the two sides; rows of a cell are paired on ``seed`` when both
    sides ran the same seeds.
    """
    found = []
    for key, part in table.groupby(cells, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        sides, seeds, values = part[side].to_numpy(), part[seed].to_numpy(), part[value].to_numpy(float)
        a, b = (np.flatnonzero(sides == which) for which in (low, high))
        a, b = a[_seed_order(seeds[a])], b[_seed_order(seeds[b])]
        paired = len(a) == len(b) and seeds[a].tolist() == seeds[b].tolist()
        name = ", ".join(f"{k}={v}" for k, v in zip(cells, key, strict=True))
        found.append(verdicts.Pair(name, values[a], values[b], paired=paired))
    return found


def _seed_order(seeds: np.ndarray) -> np.ndarray:
    """The positions sorting ``seeds`` as ``DataFrame.sort_values`` does: numpy's default sort, NaN last."""
    missing = pd.isna(seeds)
    present = np.flatnonzero(~missing)
    return np.concatenate([present[np.argsort(seeds[present])], np.flatnonzero(missing)])
