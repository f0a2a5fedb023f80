"""The wddp readings: the paper's open settings, one reading per reasonable resolution.

:func:`dpdl.readings.study_readings` reads ``READINGS``; the default reading comes first.
"""

from __future__ import annotations

from dpdl.studies.common import DEFAULT, DataDeviation, Reading
from dpdl.studies.wddp.grid import PER_SETTING

# The paper's open settings as readings (dpdl.readings): the default first, then one per other
# reasonable resolution. Section numbers are the paper's; A numbers are gaps of notes/wddp.md.
READINGS = (
    Reading(
        DEFAULT,
        "the config: per-round aggregation (A1: the proof of Theorem 1, eq. 4, analyses the query "
        "'M_t = sum_j (n_j/n)[...]' at the common model theta_t^(c) every round); step sizes "
        "cross-validated at m = tuning.clients (random sizes) for every epsilon a figure uses, "
        "each method its own (A16; the paper: 'learning rate eta is chosen by cross-validation "
        "from 0.01, 0.05, 0.1, 0.5 and 1', Section 5)",
        post_hoc=True,
    ),
    Reading(
        PER_SETTING,
        "Section 5: 'In all the experiments, ... learning rate eta is chosen by cross-validation "
        "from 0.01, 0.05, 0.1, 0.5 and 1', read as a cross-validation in every experiment setting: "
        "each (m, epsilon) of Figs 1, 3-11 and each (m, epsilon, u) of Figs 2, 12-16 on its own "
        "partition (the note's 'Option: tune per cell', wddp.md 4.4). Declared after the default's "
        "u = 1 verdicts were seen",
        {"tuning": {"protocol": PER_SETTING}},
        post_hoc=True,
    ),
    Reading(
        "shared_step",
        "one eta for all methods: Algorithm 1 and Section 5 name a single 'learning rate eta', and "
        "Related Work (Distributed Setting) calls Jayaraman et al.'s method 'a special case of our "
        "method WD-DP under average setting', which it is only with WD-DP's eta (A16 leaves "
        "per-method or shared open). Declared after the default's u = 1 verdicts were seen",
        {"tuning": {"scope": "shared"}},
        post_hoc=True,
    ),
    Reading(
        "reference_step",
        "the note's recommendation for the unstated protocol (wddp.md 4.4, A16): 'per (dataset, "
        "method), by 5-fold CV on the training set at a reference configuration (epsilon = 0.1, m "
        "= 16, Experiment A partition) ... Then fix eta everywhere'",
        {"tuning": {"protocol": "reference"}},
    ),
    Reading(
        "one_shot",
        "Algorithm 1 as printed (A1): 'Party j executes at round t: theta_{t+1}^(j) = theta_t^(j) - eta(grad "
        "L_Dj(theta_t^(j)) + z_t)' and 'Server executes after T local rounds: theta^(c) = sum_j (n_j/n) "
        "theta_T^(j)' (also eq. 2, 'the updating criteria on server after T local iterations'); "
        "the paper proves no DP guarantee for it (wddp.md 2.2)",
        {"aggregation": "one_shot"},
    ),
)

DATA_DEVIATIONS: tuple[DataDeviation, ...] = ()  # the paper's data is here, or none of it
