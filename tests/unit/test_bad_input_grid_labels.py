"""#36, defect class 2: grid values that print alike collide, and grid lists without bound.

Two values of one list (or of lists that share a folder) that paths write alike would share one folder
and be counted twice; every grid list has a maximum length.

Each case here failed on the code before its fix (the closing note of #36 shows it).
"""

from __future__ import annotations

import re

import pytest
from test_config import changed, one_line_error

COLLISIONS = {
    "dzoa_labels": ({"dzoa.epsilons": [0.15, 0.1500000001]}, r"share the label"),
    # two values written alike in paths would share one folder (#36, case 2)
    "dvp_pvp_alpha_labels": (
        {"dvp_pvp.alphas": [0.1, 0.10000000001, 1]},
        r"^dvp_pvp\.alphas value 0\.1 and dvp_pvp\.alphas value 0\.10000000001 are both written '0\.1' in paths",
    ),
    "dvp_pvp_rho_labels": (
        {"dvp_pvp.rho_selection.exponents": [-10, -10.0000001]},
        r"dvp_pvp\.rho_selection\.exponents value -10 and dvp_pvp\.rho_selection\.exponents value -10\.0000001",
    ),
    "dp_iadmm_epsilon_labels": (
        {"dp_iadmm.epsilons": [0.05, 0.0500000001, 5]},
        r"dp_iadmm\.epsilons value 0\.05 and dp_iadmm\.epsilons value 0\.0500000001",
    ),
    "dp_iadmm_curve_labels": (
        {"dp_iadmm.curve_epsilons": [0.0500000001]},
        r"dp_iadmm\.epsilons value 0\.05 and dp_iadmm\.curve_epsilons value 0\.0500000001",
    ),
    "wddp_epsilon_labels": (
        {"wddp.epsilons": [0.01, 0.0100000001, 0.25]},
        r"wddp\.epsilons value 0\.01 and wddp\.epsilons value 0\.0100000001",
    ),
    "grid_list_maximum": (
        {"wddp.epsilons": [i / 10 for i in range(1, 3001)]},
        r"^invalid configuration: wddp\.epsilons: a list of 3000 values is too long",
    ),
}


@pytest.mark.parametrize(("changes", "message"), COLLISIONS.values(), ids=COLLISIONS.keys())
def test_values_written_alike_in_paths_are_one_line_naming_both(changes: dict, message: str) -> None:
    assert re.search(message, one_line_error(changed(changes)))
