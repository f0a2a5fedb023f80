"""Study dvp_pvp: Zhang & Zhu, dual (DVP) and primal (PVP) variable perturbation on Adult.

Gap numbers (G#) and outputs (O#) refer to ``notes/zhang_zhu.md``; J(n) / C(n) are equations of the
journal / conference version. The modules follow :mod:`dpdl.studies`: ``grid`` (settings, paths,
runs, Snakemake input functions), ``readings`` (the open settings), ``run`` (one run's trace and
provenance), ``tune`` (the ADMM penalty eta, G14), ``aggregate``, ``tables``, ``figures``,
``claims`` and ``cli`` (the ``dpdl dvp_pvp`` steps that ``workflow/rules/dvp_pvp.smk`` calls).
"""

from __future__ import annotations

from dpdl.studies.dvp_pvp.claims import CLAIMS
from dpdl.studies.dvp_pvp.cli import add_commands, judge_snapshot
from dpdl.studies.dvp_pvp.grid import STUDY, runs, targets
from dpdl.studies.dvp_pvp.readings import READINGS

__all__ = ["CLAIMS", "READINGS", "STUDY", "add_commands", "judge_snapshot", "runs", "targets"]
