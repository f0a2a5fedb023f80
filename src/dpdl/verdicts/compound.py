"""The forms without statistics of their own: a disjunction of forms and an exact check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dpdl.judgement import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, Judgement
from dpdl.verdicts.inputs import Outcome


@dataclass(frozen=True)
class AnyOf:
    """One sentence "A or B": holds when any part holds, each part tested at ``alpha`` / parts.

    Its input is a tuple with one input per part, in order. Not reproduced when every part is not
    reproduced; else inconclusive.
    """

    parts: tuple
    name = "disjunction"

    def __post_init__(self) -> None:
        if len(self.parts) < 2 or any(isinstance(p, AnyOf | Exact) for p in self.parts):
            raise ValueError(
                "a disjunction needs at least two parts, none of them exact or itself a disjunction"
            )

    def describe(self) -> str:
        return " OR ".join(f"({part.describe()})" for part in self._split())

    def _split(self) -> list:
        return [replace(part, alpha=part.alpha / len(self.parts)) for part in self.parts]

    def judge(self, data: Sequence) -> Judgement:
        judged = [part.judge(d) for part, d in zip(self._split(), data, strict=True)]
        verdicts = [j.verdict for j in judged]
        if REPRODUCED in verdicts:
            verdict, chosen = REPRODUCED, verdicts.index(REPRODUCED)
        elif all(v == NOT_REPRODUCED for v in verdicts):
            verdict, chosen = NOT_REPRODUCED, 0
        else:
            verdict, chosen = INCONCLUSIVE, 0
        pick = judged[chosen]
        open_seeds = [j.seeds_to_decide for j in judged if j.verdict == INCONCLUSIVE and j.seeds_to_decide]
        return replace(
            pick,
            verdict=verdict,
            test=" OR ".join(f"part {i + 1} ({j.verdict}): {j.test}" for i, j in enumerate(judged)),
            detail=" | ".join(f"part {i + 1}: {j.detail}" for i, j in enumerate(judged)),
            seeds_to_decide=min(open_seeds) if verdict == INCONCLUSIVE and open_seeds else None,
            deciding=f"part {chosen + 1}" + (f", {pick.deciding}" if pick.deciding else ""),
        )


@dataclass(frozen=True)
class Exact:
    """A deterministic check (an exact computation; no seeds): holds or not.

    ``fails_as`` is the verdict when it does not hold: ``not reproduced``, or ``paper's bound does
    not hold`` for a bound the paper proves and an exact computation contradicts.
    """

    fails_as: str = NOT_REPRODUCED
    name = "exact"

    def describe(self) -> str:
        return "exact computation"

    def judge(self, outcome: Outcome) -> Judgement:
        verdict = REPRODUCED if outcome.holds else self.fails_as
        return Judgement(verdict, test="exact computation", detail=outcome.detail)
