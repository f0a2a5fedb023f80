"""Declared data deviations (issue 62): the registry, and their verdicts shown beside the default's."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpdl.studies import ALL, study_module
from dpdl.studies.common import DataDeviation

ROOT = Path(__file__).resolve().parents[2]


def test_each_declared_deviation_is_built_by_a_config_file_that_enables_its_study() -> None:
    from dpdl.config import load_config

    declared = {(study, d.name): d for study in ALL for d in study_module(study).DATA_DEVIATIONS}
    assert ("dp_iadmm", "writers_at_hand") in declared
    for (study, _), deviation in declared.items():
        for configfile in deviation.configfiles:
            assert study in load_config(ROOT / configfile)["studies"]


@pytest.mark.parametrize(
    ("name", "why", "configfiles"),
    [
        ("at hand", "a reason", ("config/x.yaml",)),
        ("a__b", "a reason", ("config/x.yaml",)),
        ("a", " ", ("config/x.yaml",)),
        ("a", "a reason", ("x.yaml",)),
        ("a", "a reason", ()),
    ],
)
def test_a_deviation_names_a_folder_and_gives_its_reason_and_config_files(name, why, configfiles) -> None:
    with pytest.raises(ValueError, match="data deviation"):
        DataDeviation(name, why, configfiles)


def test_a_deviations_verdicts_stand_beside_the_defaults_in_the_readings_column(tmp_path: Path) -> None:
    """Only the claims the deviation's runs judged are shown, each with the deviation's name."""
    from dpdl.publishing.merged import deviation_verdicts

    folder = tmp_path / "dp_iadmm" / "deviations" / "writers_at_hand"
    folder.mkdir(parents=True)
    (folder / "claims.csv").write_text(
        "id,verdict\n"
        "dp_iadmm.a,reproduced\n"
        "dp_iadmm.b,not run at this scale\n"
        "dp_iadmm.c,data unavailable\n"
        "dp_iadmm.d,not reproduced\n"
    )
    manifests = {"dp_iadmm": {"deviations": {"writers_at_hand": {}}}, "dzoa": {}}
    assert deviation_verdicts(tmp_path, manifests) == {
        "dp_iadmm.a": "data deviation writers_at_hand: reproduced",
        "dp_iadmm.d": "data deviation writers_at_hand: not reproduced",
    }
