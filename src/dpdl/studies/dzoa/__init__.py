"""Study dzoa: Gratton et al., D-ZOA against DP-ADMM on distributed lasso (Figures 1-3).

Sections and gaps refer to ``notes/dzoa.md``. The pipeline (``workflow/rules/dzoa.smk``):
``centralized`` (the lasso solution (33) of every trial), ``calibrate`` (privacy per grid point
and D-ZOA's step constants from (27)) and ``tune`` (DP-ADMM's (rho, eta0) on the tuning trials)
in :mod:`.tune`; ``run`` in :mod:`.run` (D-ZOA one batch per evaluation trial with the whole
privacy grid, DP-ADMM one batch); then :mod:`.aggregate`, :mod:`.figures` and :mod:`.claims`,
one tidy CSV and one figure per paper figure, and the scorecard. :mod:`.grid` holds the grid
points, trials and paths; :mod:`.cli` the ``dpdl dzoa <step>`` commands.

Only light modules are imported at the top of each (no privacy accounting, plotting or scipy):
every ``dpdl`` command builds its parser from this package, and the per-trial D-ZOA jobs never
need them.
"""
