"""The dvp_pvp readings: the settings the papers leave open, one reading per reasonable resolution.

:func:`dpdl.readings.study_readings` reads ``READINGS``; the default reading comes first.
"""

from __future__ import annotations

from dpdl.studies.common import DEFAULT, DataDeviation, Reading
from dpdl.studies.dvp_pvp.grid import ETA_PER_ALGORITHM

# The eta grid of the per-algorithm reading: G14's 0.1 .. 10 and the default's extension below it.
WIDE_ETA_GRID = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10]

# The settings the papers leave open, one reading per reasonable resolution (dpdl.readings). The
# paper never gives the ADMM penalty eta (notes 5.2 'NOT given anywhere: eta'; G14) nor the base of
# the log in L_LR (C(26) prints 'log'; note 5.3, G21). Each cites the text behind it; the ones chosen or
# changed after a result was seen are post_hoc (the register, docs/post_hoc.md, says what was known).
READINGS = (
    Reading(
        DEFAULT,
        "the config: eta tuned once on the non-private run and frozen for all three algorithms "
        "(G14: 'Tune once on the non-private algorithm ... Criterion: gap to the centralised "
        "optimum at t = 100. Freeze it for all three algorithms'), over eta_grid; the loss in ln "
        "(C(26) L_LR = log(1 + exp(-y f'x)) with the stated |L'| <= 1 and L'' <= 1/4, c1 = 1/4, "
        "the natural-log logistic loss's bounds)",
        post_hoc=True,
    ),
    Reading(
        "eta_note_grid",
        "G14 taken literally: 'Tune once on the non-private algorithm over eta in {0.1, 0.3, 1, 3, 10}' (the "
        "default keeps G14's criterion but extends its grid below 0.1, where the gap keeps falling)",
        {"eta_grid": [0.1, 0.3, 1, 3, 10]},
    ),
    Reading(
        "eta_1",
        "G14: 'Fallback default eta = 1' for all three algorithms; the paper gives no eta (note "
        "5.2: 'NOT given anywhere: ... eta')",
        {"eta": 1.0},
        post_hoc=True,
    ),
    Reading(
        "eta_per_algorithm",
        "each algorithm its own eta, by the paper's own protocol for its other penalty (C Section "
        "5.3: 'we tried a few fixed values of rho and test the empirical loss ... selected the "
        "value of rho that minimizes the empirical loss for a fixed alpha_p (0.3 in this "
        "experiment) ... for each algorithm'): the mean final training loss at alpha = 0.3 and the "
        "algorithm's own rho and C^R, over G14's grid and the default's",
        {"eta": ETA_PER_ALGORITHM, "eta_grid": WIDE_ETA_GRID},
        post_hoc=True,
    ),
    Reading(
        "released",
        "PVP's error measured on what it broadcasts, V_p(t) = f_p(t) + noise (the default: G21's "
        "f_p(t)), in every claim on PVP's error (runs record f_p's loss only); chosen after DVP "
        "was below PVP at 0 of 16 alphas on f_p",
        {"pvp_error_of": "released"},
        post_hoc=True,
    ),
    Reading(
        "loss_log10",
        "the loss in log10 (note 5.3: the paper's c3 = 0.135 'is below the natural-log logistic "
        "training loss typical of linear models on Adult (~0.30-0.35) but close to that value in "
        "log10 (~0.13-0.15). The authors may have used log10'; G21: 'also store ... log10 "
        "variant'); C(26) prints 'log' without a base",
        {"loss_unit": "log10"},
    ),
)

DATA_DEVIATIONS: tuple[DataDeviation, ...] = ()  # the paper's data is here, or none of it
