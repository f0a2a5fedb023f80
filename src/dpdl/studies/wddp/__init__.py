"""Study ``wddp``: Kang, Liu & Wang, Weighted Distributed Differential Privacy ERM (Figures 1-16, Table 1).

The modules (see :mod:`dpdl.studies`): ``grid`` (figures, batches, paths, settings, Snakemake input
functions), ``readings`` (the open settings), ``run`` (one batch of runs), ``tune`` (theta* and
step-size cross-validation), ``aggregate``, ``tables`` (Table 1), ``figures``, ``claims`` and
``cli``. Section and gap numbers refer to ``notes/wddp.md``.
"""

from __future__ import annotations

from dpdl.studies.wddp.claims import CLAIMS
from dpdl.studies.wddp.cli import add_commands, judge_snapshot
from dpdl.studies.wddp.grid import STUDY, runs, targets
from dpdl.studies.wddp.readings import READINGS

__all__ = ["CLAIMS", "READINGS", "STUDY", "add_commands", "judge_snapshot", "runs", "targets"]
