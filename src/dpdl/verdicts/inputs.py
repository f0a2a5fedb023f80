"""What the forms judge: the per-seed values an extractor hands a claim's form, or why there are none."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpdl.seed_statistics import Difference
from dpdl.seed_statistics import difference as _difference


@dataclass(frozen=True)
class Pair:
    """One cell of an ordering or equivalence claim: per-seed values of the two sides.

    For an ordering the claim is ``mean(low) < mean(high)``; for an equivalence the sides are
    symmetric. ``paired`` says the two arrays hold the same seeds in the same order.
    """

    name: str
    low: np.ndarray
    high: np.ndarray
    paired: bool = True


@dataclass(frozen=True)
class Series:
    """One curve of a trend claim: the grid values and the per-seed values at each.

    ``seeds`` (optional) names the seed (trial) of every value at every grid point; where every
    point holds the same seeds, the trend is tested within seeds.
    """

    name: str
    x: Sequence[float]
    samples: Sequence[np.ndarray]
    seeds: Sequence[np.ndarray] | None = None


@dataclass(frozen=True)
class Unidentified:
    """What an extractor returns when the quantity does not depend on what the claim is about."""

    reason: str


@dataclass(frozen=True)
class Outcome:
    """The result of an exact (deterministic) check."""

    holds: bool
    value: str
    detail: str = ""


def difference(pair: Pair) -> Difference:
    """``high - low`` of one cell over its seeds: paired, or Welch's when the seeds are not paired."""
    return _difference(pair.low, pair.high, pair.paired)
