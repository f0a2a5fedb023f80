"""Study ``dp_iadmm``: Ryu & Kim, *Differentially Private Federated Learning via Inexact ADMM*.

Everything the workflow needs besides the algorithms (:mod:`dpdl.algorithms.dp_iadmm`), one concern
per module: the run grid of every figure and the rules' input functions (``grid``), the settings
the paper leaves open (``readings``), one run job with its provenance and privacy (``run``), the
minimiser of (1) that non-private runs approach (``tune``), the per-seed tables and their bands
over seeds (``aggregate``), the Remark 3 table (``tables``), one plotting function per figure
(``figures``), the claims judged from the per-seed tables (``claims``) and the ``dpdl dp_iadmm``
commands (``cli``). Section numbers refer to ``notes/iadmm.md``.
"""

from dpdl.studies.dp_iadmm.claims import CLAIMS
from dpdl.studies.dp_iadmm.cli import add_commands, judge_snapshot
from dpdl.studies.dp_iadmm.grid import STUDY, runs, targets
from dpdl.studies.dp_iadmm.readings import READINGS

__all__ = ["STUDY", "CLAIMS", "READINGS", "targets", "runs", "add_commands", "judge_snapshot"]
