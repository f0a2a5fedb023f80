"""The premise ledger (issue 58): declarations checked on the canary pairs, and verdicts that say under what."""

from __future__ import annotations

import dataclasses
import types

import pandas as pd
import pytest

from dpdl.audit.cells import PrivacyClaim
from dpdl.audit.premises import OUTSIDE, WITHIN, PremiseError, check_ledger, premise_ledger
from dpdl.audit_report import privacy_verdict
from dpdl.judgement import CODE_REFUTED, NOT_REFUTED, REFUTED, REFUTED_OUTSIDE
from dpdl.studies import audit_module


@pytest.mark.parametrize("study", ["dvp_pvp", "wddp", "dp_iadmm", "dzoa"])
def test_every_cell_declares_its_premises_as_its_canary_pair_measures(study):
    ledger = check_ledger(premise_ledger(audit_module(study)))
    module = audit_module(study)
    assert set(module.AUDIT_CELLS[0].premises) <= set(ledger["premise"])
    assert set(ledger["cell"]) >= {cell.name for cell in module.AUDIT_CELLS}


def test_dzoa_extreme_canary_leaves_the_gradient_bound():
    ledger = premise_ledger(audit_module("dzoa"))
    row = ledger[
        (ledger["cell"] == "dpadmm_eps0.95_delta0.001_extreme") & (ledger["premise"] == "gradient_bound")
    ]
    assert row["declared"].item() == OUTSIDE
    assert row["measured"].item() == pytest.approx(37.6, abs=0.1)  # issue 58: about 19 x 2 c1
    at_sensitivity = ledger[
        (ledger["cell"] == "dpadmm_eps0.95_delta0.001_at_sensitivity")
        & (ledger["premise"] == "gradient_bound")
    ]
    assert at_sensitivity["declared"].item() == WITHIN and at_sensitivity["measured"].item() <= 2.0


def test_a_canary_beyond_the_gradient_bound_declared_within_fails_the_check():
    """Planted error: the extreme canary (gradient change 37.6 > 2 c1) declared within Assumption 3."""
    module = audit_module("dzoa")
    extreme = next(cell for cell in module.AUDIT_CELLS if cell.name == "dpadmm_eps0.95_delta0.001_extreme")
    planted = dataclasses.replace(extreme, premises={**extreme.premises, "gradient_bound": True})
    fake = types.SimpleNamespace(
        PREMISES=module.PREMISES, AUDIT_CELLS=(planted,), premise_measures=module.premise_measures
    )
    with pytest.raises(PremiseError, match="declared within gradient bound"):
        check_ledger(premise_ledger(fake))


def test_a_cell_declared_outside_a_premise_it_keeps_fails_the_check():
    module = audit_module("wddp")
    cell = module.AUDIT_CELLS[0]
    planted = dataclasses.replace(cell, premises={**cell.premises, "record_norm": False})
    fake = types.SimpleNamespace(
        PREMISES=module.PREMISES, AUDIT_CELLS=(planted,), premise_measures=module.premise_measures
    )
    with pytest.raises(PremiseError, match="declared outside"):
        check_ledger(premise_ledger(fake))


def _ledger(**declared: str) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"cell": cell, "premise": "gradient_bound", "assumption": "gradient bound", "where": "A3",
             "declared": how, "measured": 37.6 if how == OUTSIDE else 0.1, "bound": 2.0}
            for cell, how in declared.items()
        ]
    )  # fmt: skip


def _audit(*rows: tuple[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"cell": cell, "eps_lb": eps, "claimed_epsilon": 0.95, "refutes": eps > 0.95} for cell, eps in rows]
    )


CLAIM = PrivacyClaim("x.privacy.y", "x", "Theorem 1", "eps-DP")


def test_a_refutation_outside_a_premise_is_counted_apart():
    audit = _audit(("extreme", 5.3), ("at_sensitivity", 0.0))
    verdict, deciding, rests = privacy_verdict(CLAIM, audit, _ledger(extreme=OUTSIDE, at_sensitivity=WITHIN))
    assert verdict == REFUTED_OUTSIDE and deciding["cell"] == "extreme"
    assert "gradient bound" in rests and "at_sensitivity" in rests
    # the same counts with the extreme canary (wrongly) within the premises would refute the paper
    assert privacy_verdict(CLAIM, audit, _ledger(extreme=WITHIN, at_sensitivity=WITHIN))[0] == REFUTED


def test_the_strongest_cell_within_the_premises_decides_a_refutation():
    audit = _audit(("extreme", 5.3), ("at_sensitivity", 4.2))
    verdict, deciding, _ = privacy_verdict(CLAIM, audit, _ledger(extreme=OUTSIDE, at_sensitivity=WITHIN))
    assert verdict == REFUTED and deciding["cell"] == "at_sensitivity"


def test_an_audit_of_someones_code_is_an_implementation_finding():
    code = dataclasses.replace(CLAIM, code="owner/repo at 0123abc")
    audit = _audit(("variance", 7.1))
    verdict, _, rests = privacy_verdict(code, audit, _ledger(variance=WITHIN))
    assert verdict == CODE_REFUTED and "owner/repo at 0123abc" in rests
    assert privacy_verdict(code, _audit(("variance", 0.1)), _ledger(variance=WITHIN))[0] == NOT_REFUTED


def test_a_cell_without_a_ledger_is_an_error():
    from dpdl.errors import ArtifactError

    with pytest.raises(ArtifactError, match="no premise ledger"):
        privacy_verdict(CLAIM, _audit(("unknown", 5.0)), _ledger(extreme=OUTSIDE))
