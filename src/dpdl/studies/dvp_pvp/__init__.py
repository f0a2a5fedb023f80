"""Study dvp_pvp: Zhang & Zhu, dual (DVP) and primal (PVP) variable perturbation on Adult.

Gap numbers (G#) and outputs (O#) refer to ``notes/zhang_zhu.md``; J(n) / C(n) are equations of
the journal / conference version. The modules follow :mod:`dpdl.studies`: ``grid`` (settings,
paths, runs, Snakemake input functions), ``run`` (one run's trace and provenance), ``tune`` (the
ADMM penalty eta, G14), ``aggregate``, ``tables``, ``figures``, ``claims`` and ``cli`` (the
``dpdl dvp_pvp`` steps that ``workflow/rules/dvp_pvp.smk`` calls).
"""

from __future__ import annotations

from dpdl.studies.dvp_pvp.claims import CLAIMS
from dpdl.studies.dvp_pvp.cli import add_commands, judge_snapshot
from dpdl.studies.dvp_pvp.grid import CLAIMS_STEP_KEYS, STUDY, check_config, runs, targets
from dpdl.studies.dvp_pvp.readings import READINGS

TITLE = "Zhang & Zhu, DVP and PVP on Adult"  # the report's section and the scorecard's heading

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
