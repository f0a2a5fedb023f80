"""The article's title: [Re] or [¬Re] by :data:`TITLE_RULE` over the readings, and the scope it names."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from dpdl.article.snapshot import read_card
from dpdl.judgement import NOT_REPRODUCED, NOT_RUN, REPRODUCED, fmt
from dpdl.paths import PUBLISHED
from dpdl.readings import DEFAULT, study_readings
from dpdl.studies import study_module
from dpdl.summary import counted

DECISIVE = (REPRODUCED, NOT_REPRODUCED)
TITLE_RULE = (
    "The title is [Re] only when, under the default reading and under every reading not marked post hoc that "
    "the snapshot holds, both hold: (1) coverage: the substantive claims as the headline counts "
    "them (numbers the paper prints and comparisons between methods, each independent set of runs "
    "once) that received a decisive verdict (reproduced or not reproduced) are at least half of "
    "all of them; (2) outcome: of those decisive claims, strictly more than half are reproduced. "
    "Otherwise it is [¬Re]. ReScience C's template prescribes [Re] for a successful replication "
    "and [¬Re] for a failed one and sets no threshold for a partial one; the coverage threshold "
    "(half) and the requirement that every non-post-hoc reading agree are this project's choice, "
    "made after the results were seen (post hoc register). The title names its scope from the "
    "scorecard and the claims' registry: the tables of the counted claims that were run, at the "
    "scale their claims need, and those of the claims not run at this scale or whose data are "
    "unavailable, with the scale they would need beyond what was run."
)


def _claims_registry(study: str) -> dict:
    """The study's registered claims by id (their ``aggregate`` and ``needs``: code, not a result)."""
    return {claim.id: claim for claim in study_module(study).CLAIMS}


def _table_name(aggregate: str) -> str:
    return aggregate.removesuffix("_seeds")


def _scale_words(needs: dict) -> str:
    def number(value) -> str:
        return f"{int(value):,}" if float(value).is_integer() else fmt(value)

    return ", ".join(f"{key} = {number(value)}" for key, value in sorted(needs.items()))


def _ran_at(row: pd.Series) -> dict:
    """The scale a claim's row says its runs had (its ``scale`` column, JSON), or nothing where it says none."""
    text = row.get("scale")
    return json.loads(text) if isinstance(text, str) and text.startswith("{") else {}


def scope(study: str, card: pd.DataFrame) -> str:
    """What was tested, named from the counted substantive claims.

    The tables of those run and the scale they ran at (each key their claims need, at the largest value the
    rows' ``scale`` records, else the value needed); the tables of those not run (per verdict), each with the
    scale it needs beyond that.
    """
    registry = _claims_registry(study)
    substantive = counted(card)
    run = substantive[~substantive["verdict"].isin(NOT_RUN)]
    run_needs: dict = {}
    for _, row in run.iterrows():
        ran = _ran_at(row)
        for key, value in registry[row["id"]].needs.items() if row["id"] in registry else ():
            run_needs[key] = max(run_needs.get(key, 0), ran.get(key, value))
    tables = list(dict.fromkeys(_table_name(registry[c].aggregate) for c in run["id"] if c in registry))
    parts = [
        ("tested: " + ", ".join(tables) + (f" at {_scale_words(run_needs)}" if run_needs else ""))
        if tables
        else "nothing tested"
    ]
    for verdict in NOT_RUN:
        rows = substantive[substantive["verdict"] == verdict]
        groups: dict[str, list[str]] = {}
        for cid in rows["id"]:
            claim = registry.get(cid)
            if claim is None:
                continue
            beyond = {k: v for k, v in claim.needs.items() if k not in run_needs or v > run_needs[k]}
            table = _table_name(claim.aggregate)
            group = groups.setdefault(_scale_words(beyond), [])
            if table not in group:
                group.append(table)
        if groups:
            parts.append(
                f"{verdict}: "
                + "; ".join(", ".join(t) + (f" ({words})" if words else "") for words, t in groups.items())
            )
    return "; ".join(parts)


def mark(card: pd.DataFrame) -> tuple[str, str]:
    """[Re] or [¬Re] for one reading's claims by coverage and outcome (:data:`TITLE_RULE`), and why."""
    substantive = counted(card)
    decisive = substantive[substantive["verdict"].isin(DECISIVE)]
    reproduced = int((decisive["verdict"] == REPRODUCED).sum())
    covered = 2 * len(decisive) >= len(substantive) and len(decisive) > 0
    majority = 2 * reproduced > len(decisive)
    why = (
        f"{len(decisive)} of {len(substantive)} counted substantive claims decided "
        f"({'enough' if covered else 'fewer than half'}), {reproduced} of {len(decisive)} reproduced"
    )
    return ("[Re]" if covered and majority else "[¬Re]"), why


def reading_cards(study: str, card: pd.DataFrame, out: Path = PUBLISHED) -> dict[str, pd.DataFrame]:
    """The default's claims and each built reading not marked post hoc (``<study>/readings/<name>.csv``)."""
    cards = {DEFAULT: card}
    for reading in study_readings(study):
        path = out / study / "readings" / f"{reading.name}.csv"
        if reading.name != DEFAULT and not reading.post_hoc and path.is_file():
            cards[reading.name] = read_card(path)
    return cards


def title_marks(study: str, card: pd.DataFrame, out: Path = PUBLISHED) -> dict[str, tuple[str, str]]:
    """The mark each non-post-hoc reading (and the default) would give, with why."""
    return {name: mark(frame) for name, frame in reading_cards(study, card, out).items()}


def title(study: str, card: pd.DataFrame, out: Path = PUBLISHED) -> tuple[str, pd.DataFrame]:
    """The article's title by :data:`TITLE_RULE`, and the substantive claims it was decided over."""
    marks = title_marks(study, card, out)
    robust = all(m == "[Re]" for m, _ in marks.values())
    heading = f"{'[Re]' if robust else '[¬Re]'} {study_module(study).REFERENCE.title} ({scope(study, card)})"
    return heading, counted(card)
