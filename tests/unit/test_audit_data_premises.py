"""The papers' premises tested on their own data (issue 58, item 3): the measure, each study's declarations on
generated data of known norms, the scorecard rows judged from a small table, and the command on a prepared fixture."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdl.audit import data_premises
from dpdl.audit.data_premises import DATA_PREMISE_COLUMNS, measured, read_data_premises
from dpdl.audit_report import premise_claim_ids, premise_claim_rows, study_data_premises
from dpdl.claims import PREMISE_CLAIM, PRIVACY_CLAIM, SCORECARD_COLUMNS
from dpdl.cli import main
from dpdl.data import lasso
from dpdl.errors import ArtifactError
from dpdl.judgement import NOT_AT_SCALE, PREMISE_BROKEN, PREMISE_HOLDS, UNAVAILABLE, VERDICTS
from dpdl.studies import ALL, audit_module

# Norms known by construction: at the bound, within the ledger's tolerance of it, just past it, well past it.
KNOWN = np.array([0.25, 1.0, 1.0 + 1e-9, 1.0 + 1e-4, 3.0])
KNOWN_ABOVE, KNOWN_LARGEST = 2, 3.0


def measure_problems(measure=measured) -> list[str]:
    """What is wrong with ``measure`` on the values of known norms (empty: right)."""
    found, problems = measure(KNOWN, 1.0), []
    if found["records"] != len(KNOWN) or found["above"] != KNOWN_ABOVE or found["holds"]:
        problems.append(f"records/above/holds {found['records']}/{found['above']}/{found['holds']}")
    if found["largest"] != KNOWN_LARGEST or not math.isclose(found["share_above"], KNOWN_ABOVE / len(KNOWN)):
        problems.append(f"largest {found['largest']}, share {found['share_above']}")
    kept = measure(KNOWN[:3], 1.0)  # at the bound and within tolerance of it: kept
    if kept["above"] != 0 or not kept["holds"]:
        problems.append(f"a record at the bound counted above ({kept['above']})")
    return problems


def test_the_measure_counts_the_records_above_the_bound() -> None:
    assert measure_problems() == []
    zero = measured(np.array([0.0, 0.0, 1.0]), 0.0)  # a domain count: any record outside breaks it
    assert (zero["above"], zero["holds"], zero["largest"]) == (1, False, 1.0)


@pytest.mark.parametrize(
    "wrong",
    [
        lambda values, bound: np.asarray(values, dtype=float) >= bound,  # a record at the bound counted
        lambda values, bound: np.asarray(values, dtype=float) > bound,  # no tolerance
        lambda values, bound: (
            np.asarray(values, dtype=float) > 2 * bound
        ),  # the pair's 2 c1 for a record's c1
    ],
)
def test_a_planted_wrong_comparison_fails_the_measure_check(wrong, monkeypatch) -> None:
    monkeypatch.setattr(data_premises, "exceeds", wrong)
    assert measure_problems(data_premises.measured)


def test_the_measure_refuses_what_it_cannot_measure() -> None:
    with pytest.raises(ArtifactError, match="no records"):
        measured(np.array([]), 1.0)
    with pytest.raises(ArtifactError, match="non-finite"):
        measured(np.array([0.5, np.nan]), 1.0)


def _dzoa_arrays() -> dict[str, np.ndarray]:
    """Two trials of three records with known norms and labels: gradients 2 |y| ||x|| = 0.6, 1.0, 8.0 / 0, 2, 0.5."""
    X = np.zeros((2, 3, 2))
    X[0, :, 0] = [0.3, 0.5, 0.8]
    X[1, :, 1] = [1.0, 1.0, 0.25]
    y = np.array([[1.0, -1.0, 5.0], [0.0, 1.0, -1.0]])
    return {"X": X, "y": y}


def test_dzoa_gradient_bound_on_data_of_known_norms() -> None:
    table = study_data_premises("dzoa", {"lasso": _dzoa_arrays()}, {})
    rows = table.set_index("premise")
    assert rows.loc["record_norm", "holds"] and rows.loc["record_norm", "largest"] == 1.0
    gradient = rows.loc["gradient_bound"]
    assert (gradient["records"], gradient["above"], gradient["largest"]) == (6, 2, 8.0)
    assert gradient["bound"] == 1.0 and not gradient["holds"]  # c1 per record, not the pair's 2 c1
    claims = set(gradient["claims"].split(";"))
    assert claims == {
        claim.id for claim in audit_module("dzoa").PRIVACY_CLAIMS
    }  # every guarantee rests on c1


def test_the_lasso_data_keep_their_rows_but_not_c1() -> None:
    arrays = lasso.generate(trials=2, seed=0, agents=5, samples_per_agent=20, features=10, noise_variance=0.1)
    rows = study_data_premises("dzoa", {"lasso": arrays}, {}).set_index("premise")
    assert rows.loc["record_norm", "holds"]  # projected to norm <= 1 (Section VI)
    assert not rows.loc["gradient_bound", "holds"] and rows.loc["gradient_bound", "share_above"] > 0.5


def test_wddp_and_dvp_pvp_on_records_of_known_norms() -> None:
    x = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 2.0]])
    wddp = {"X_train": x, "y_train": np.array([0, 1, 1])}
    why = {
        d: f"wddp/{d}: 1 of 1 raw files cannot be obtained here"
        for d in ("kdd", "bank", "breast_cancer", "credit_card")
    }
    rows = study_data_premises("wddp", {"adult": wddp}, why)
    measured_rows = rows[rows["dataset"] == "adult"].set_index("premise")
    assert (
        measured_rows.loc["record_norm", "largest"] == 2.0 and measured_rows.loc["record_norm", "above"] == 1
    )
    assert measured_rows.loc["label_domain", "holds"]
    assert measured_rows.loc["gradient_bound", "largest"] == 2.0  # ||x|| max(|y|, |1 - y|)
    skipped = rows[rows["dataset"] == "kdd"]
    assert (skipped["records"] == 0).all() and skipped["note"].str.contains("cannot be obtained").all()
    dvp = study_data_premises("dvp_pvp", {"adult": {"X": x[:2], "y": np.array([1, 0])}}, {}).set_index(
        "premise"
    )
    assert dvp.loc["record_norm", "holds"] and dvp.loc["label_domain", "above"] == 1


def test_dp_iadmm_pixels_and_outp_norm() -> None:
    pixels = np.zeros((3, 784), dtype=np.uint8)
    pixels[1, :4] = 255  # ||x|| = 2 after / 255
    pixels[2, 0] = 255
    arrays = {"X_train": pixels, "y_train": np.array([0, 9, 3]), "pixel_divisor": np.array(255)}
    rows = study_data_premises("dp_iadmm", {"mnist": arrays, "femnist": arrays}, {})
    mnist = rows[rows["dataset"] == "mnist"].set_index("premise")
    assert mnist.loc["record_domain", "holds"] and mnist.loc["label_domain", "holds"]
    assert (
        mnist.loc["outp_record_norm", "largest"] == pytest.approx(2.0)
        and mnist.loc["outp_record_norm", "above"] == 1
    )
    assert set(mnist.loc["outp_record_norm", "claims"].split(";")) == {
        "dp_iadmm.privacy.outp",
        "dp_iadmm.privacy.outp_authors_code",
    }


def test_every_data_premise_is_a_stated_premise_measured_on_a_dataset_of_its_study() -> None:
    from dpdl.studies import study_module

    for study in ALL:
        module = audit_module(study)
        stated = {premise.id for premise in module.PREMISES}
        for data in module.DATA_PREMISES:
            assert data.premise in stated and set(data.datasets) <= {
                d.dataset for d in study_module(study).PREPARED
            }
        assert premise_claim_ids(study)


def _table(tmp_path: Path, largest: float, skipped_too: bool = False) -> pd.DataFrame:
    """dzoa's table with the gradient's largest value ``largest``, written and read back as the snapshot holds it."""
    arrays = _dzoa_arrays()
    arrays["y"] = np.where(
        np.abs(arrays["y"]) > 0, largest / 2, 0.0
    )  # the unit-norm rows give 2 |y| = largest
    arrays["X"][0, :, 0] = 1.0
    table = study_data_premises("dzoa", {"lasso": arrays}, {})
    if skipped_too:
        table = study_data_premises("dzoa", {}, {"lasso": "dzoa/lasso: why it is not here"})
    path = tmp_path / "dzoa_data_premises.csv"
    path.write_text(table.to_csv(index=False, lineterminator="\n"))
    return read_data_premises(path)


def test_premise_rows_from_a_small_table(tmp_path: Path) -> None:
    rows = premise_claim_rows("dzoa", _table(tmp_path, largest=4.0)).set_index("id")
    assert list(rows.reset_index().columns) == SCORECARD_COLUMNS and set(rows["kind"]) == {PREMISE_CLAIM}
    assert set(rows["verdict"]) <= set(VERDICTS)
    assert rows.loc["dzoa.premise.record_norm", "verdict"] == PREMISE_HOLDS
    broken = rows.loc["dzoa.premise.gradient_bound"]
    assert broken["verdict"] == PREMISE_BROKEN and "largest 4" in broken["our_value"]
    assert "dzoa.privacy.dpadmm" in broken["detail"] and "does not cover" in broken["detail"]
    assert "Figs 2-3" in broken["detail"]
    assert "does not cover" not in rows.loc["dzoa.premise.record_norm", "detail"]
    kept = premise_claim_rows("dzoa", _table(tmp_path, largest=1.0)).set_index("id")
    assert kept.loc["dzoa.premise.gradient_bound", "verdict"] == PREMISE_HOLDS


def test_premise_rows_without_a_table_or_data(tmp_path: Path) -> None:
    assert set(premise_claim_rows("dzoa", None)["verdict"]) == {NOT_AT_SCALE}
    unavailable = premise_claim_rows("dzoa", _table(tmp_path, 4.0, skipped_too=True))
    assert (
        set(unavailable["verdict"]) == {UNAVAILABLE}
        and unavailable["detail"].str.contains("why it is not").all()
    )


def test_a_table_whose_holds_does_not_follow_from_its_numbers_is_refused(tmp_path: Path) -> None:
    table = _table(tmp_path, largest=4.0)
    table.loc[table["premise"] == "gradient_bound", "holds"] = "True"  # tampered: 4 > 1 yet "holds"
    with pytest.raises(ArtifactError, match="gives holds False"):
        premise_claim_rows("dzoa", table)


def test_premise_claims_are_counted_apart_from_every_other_count(tmp_path: Path) -> None:
    from dpdl.summary import (
        counted,
        merge_scorecards,
        registered_claim_ids,
        scorecard_html,
        scorecard_markdown,
    )

    without = merge_scorecards(ALL, {})
    card = merge_scorecards(ALL, {}, data_premises={"dzoa": _table(tmp_path, largest=4.0)})
    assert list(card["id"]) == registered_claim_ids()
    premises = card[card["kind"] == PREMISE_CLAIM]
    assert set(premises["id"]) == {i for study in ALL for i in premise_claim_ids(study)}
    for kinds in ((), (PRIVACY_CLAIM,)):
        assert counted(card, *([kinds] if kinds else [])).equals(
            counted(without, *([kinds] if kinds else []))
        )
    assert card.set_index("id").loc["dzoa.premise.gradient_bound", "verdict"] == PREMISE_BROKEN
    assert "tested on their own data" in scorecard_markdown(card)
    assert html.escape(PREMISE_BROKEN) in scorecard_html(card)


def test_the_command_measures_a_prepared_dataset(tmp_path: Path, capsys) -> None:
    out, card = tmp_path / "dzoa" / "lasso.npz", tmp_path / "dzoa" / "lasso.json"
    options = {"trials": 2, "seed": 0, "agents": 5, "samples_per_agent": 4, "features": 3, "noise_variance": 0.1,
               "y_from": "raw", "col_norm": "maxabs", "row_norm": "project"}  # fmt: skip
    assert (
        main(
            [
                "prepare",
                "dzoa/lasso",
                "--options",
                json.dumps(options),
                "--out",
                str(out),
                "--card",
                str(card),
            ]
        )
        == 0
    )
    table_path = tmp_path / "dzoa_data_premises.csv"
    assert main(["data-premises", "--study", "dzoa", "--data", str(out), "--out", str(table_path)]) == 0
    table = read_data_premises(table_path)
    assert list(table.columns) == DATA_PREMISE_COLUMNS and (table["records"] == 40).all()
    skipped = tmp_path / "wddp_data_premises.csv"
    gone = {d: f"wddp/{d}: gone" for d in ("kdd", "bank", "breast_cancer", "credit_card")}
    why = json.dumps({"adult": "wddp/adult: 2 of 2 raw files cannot be obtained here", **gone})
    assert main(["data-premises", "--study", "wddp", "--skipped", why, "--out", str(skipped)]) == 0
    assert "SKIPPING wddp/adult: 2 of 2 raw files cannot be obtained here" in capsys.readouterr().err
    assert (read_data_premises(skipped)["records"] == 0).all()
