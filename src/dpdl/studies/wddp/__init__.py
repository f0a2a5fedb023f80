"""Study ``wddp``: Kang, Liu & Wang, Weighted Distributed Differential Privacy ERM (Figures 1-16, Table 1).

The modules (see :mod:`dpdl.studies`): ``grid`` (figures, batches, paths, settings, Snakemake input
functions), ``run`` (one batch of runs), ``tune`` (theta* and step-size cross-validation),
``aggregate``, ``tables`` (Table 1), ``figures``, ``claims`` and ``cli``. Section and gap numbers
refer to ``notes/wddp.md``.
"""

from __future__ import annotations

from dpdl.studies.wddp.claims import CLAIMS
from dpdl.studies.wddp.cli import add_commands, judge_snapshot
from dpdl.studies.wddp.grid import CLAIMS_STEP_KEYS, STUDY, check_config, runs, targets
from dpdl.studies.wddp.readings import READINGS

TITLE = "Kang, Liu & Wang, weighted DP-ERM"  # the report's section and the scorecard's heading

__all__ = [
    "CLAIMS",
    "CLAIMS_STEP_KEYS",
    "READINGS",
    "STUDY",
    "TITLE",
    "add_commands",
    "check_config",
    "judge_snapshot",
    "runs",
    "targets",
]
