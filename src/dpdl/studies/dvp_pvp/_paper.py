"""The values the paper prints that the tables, figures and claims compare with.

[PAPER] C Tables 1-2 and the paper-constant reference values derived in ``notes/zhang_zhu.md`` 6.4.
"""

from __future__ import annotations

PAPER_RHO_EXPONENT = {"nonprivate": -10.0, "dvp": -2.5, "pvp": -1.0}
PAPER_C_R = {"nonprivate": 1750, "dvp": 1750, "pvp": 146}
PAPER_OPTIMAL_ALPHA = {"dvp": 0.1422, "pvp": 0.4533}
