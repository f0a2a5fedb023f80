"""The one statistical verdict engine: per-seed values in; effect, interval, test and verdict out.

Every claim of every study declares a *form*, and only this module turns per-seed values into a
verdict. Each form tests at its level ``alpha`` (``ALPHA`` = 0.05, 95% intervals over seeds;
a part of a disjunction at ``alpha`` divided by the parts):

- :class:`StatedNumber` (the paper prints a number): reproduced when the t-interval of our mean
  lies inside paper value ± tolerance; not reproduced when it lies wholly outside; else
  inconclusive.
- :class:`Ordering` ("A below B" in each cell): a one-sided t-test per cell, paired on seeds when
  both sides ran the same seeds, else Welch.
- :class:`Equivalence` ("A matches B"): two one-sided tests (TOST) per cell against a margin
  declared with the claim.
- :class:`Trend` ("falls with epsilon"), per series: where every grid point ran the same seeds
  (trials), the test is *within* each seed: Page's L test of the ordered alternative over the
  seeds as blocks, and a paired t-test that the end-to-end change goes the claimed way and exceeds
  the declared minimum (none unless the claim declares one, absolute or relative to the start).
  Otherwise (seeds not shared) Kendall's tau pooled over seeds (Jonckheere-Terpstra) and a Welch
  end-to-end test.
- :class:`AnyOf` (a sentence "A or B"): one claim that holds when either part holds, each part at
  ``alpha`` / parts.
- :class:`Exact` (a deterministic computation: a bound checked exactly, an implementation
  check): holds or not, no seeds involved.

A claim over several cells (or series) holds "in at least k of m cells", tested as one hypothesis;
the rule, the typical cell the effect shows and the deciding cell are in :mod:`dpdl.judgement`.

This package is the engine's face (``from dpdl.verdicts import ...``); its modules hold one concern
each: :mod:`.inputs` (what an extractor hands a form), :mod:`.comparisons` (stated numbers,
orderings, equivalences), :mod:`.trend` (trends) and :mod:`.compound` (disjunctions, exact checks).
"""

from __future__ import annotations

from dpdl.judgement import (  # noqa: F401  (the verdict words and Judgement are part of this module's face)
    BOUND_FAILS,
    INCONCLUSIVE,
    NOT_AT_SCALE,
    NOT_IDENTIFIABLE,
    NOT_REPRODUCED,
    PREMISE_FAILS,
    REPRODUCED,
    UNAVAILABLE,
    VERDICTS,
    Cell,
    Judgement,
)
from dpdl.verdicts.comparisons import Equivalence, Ordering, StatedNumber
from dpdl.verdicts.compound import AnyOf, Exact
from dpdl.verdicts.inputs import Outcome, Pair, Series, Unidentified, difference  # noqa: F401
from dpdl.verdicts.trend import Trend

Form = StatedNumber | Ordering | Equivalence | Trend | AnyOf | Exact
FORMS = {form.name: form for form in (StatedNumber, Ordering, Equivalence, Trend, AnyOf, Exact)}
