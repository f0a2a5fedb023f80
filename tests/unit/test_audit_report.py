"""The audit stage on a made-up study: bounds per cell, the privacy claims' verdicts, the privacy table."""

from __future__ import annotations

import math
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpdl import audit_report
from dpdl.audit.bounds import gaussian_dp_epsilon
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX, AuditCell, AuditSamples, PrivacyClaim
from dpdl.audit.premises import Premise
from dpdl.claims import PRIVACY_CLAIM, SCORECARD_COLUMNS
from dpdl.judgement import NOT_AT_SCALE, NOT_REFUTED, REFUTED

CLAIMED = 1.0
SIGMA = 1 / 0.2  # mu = 0.2: 0.2-GDP is (0.75, 1e-5)-DP, within the claimed 1


def _cell(name: str, claim: str) -> AuditCell:
    return AuditCell(
        study="fake",
        name=name,
        claim=claim,
        algorithm="gauss",
        claimed_epsilon=CLAIMED,
        delta=1e-5,
        iterations=1,
        released="one Gaussian value",
        canary="mean shifted by 1",
        accountant_epsilon=gaussian_dp_epsilon(1 / SIGMA, 1e-5),
        noise="gaussian",
        premises={"neighbours": True},
    )


def _fake_study(bug_factor: float) -> SimpleNamespace:
    """One claim tested by one cell; the cell's noise is ``bug_factor`` times smaller than declared."""

    def audit_scores(cell: AuditCell, runs: int, seed: int) -> dict[str, AuditSamples]:
        rng = np.random.default_rng(seed)
        sigma = SIGMA / bug_factor
        canary, neighbour = rng.normal(1.0, sigma, runs), rng.normal(0.0, sigma, runs)
        llr = lambda x: (x - 0.5) / SIGMA**2  # noqa: E731  (log-likelihood ratio under the declared sigma)
        return {
            BLACK_BOX: AuditSamples(canary, neighbour, "the value"),
            WHITE_BOX: AuditSamples(llr(canary), llr(neighbour), "its log-likelihood ratio"),
        }

    claim = PrivacyClaim(id="fake.privacy.gauss", study="fake", where="Theorem 1", statement="(1, 1e-5)-DP")
    return SimpleNamespace(
        PRIVACY_CLAIMS=(claim,),
        AUDIT_CELLS=(_cell("gauss_eps1", claim.id),),
        audit_scores=audit_scores,
        PREMISES=(
            Premise("neighbours", "replace-one", "Def. 1", "one record replaced", 1.0, "records differing"),
        ),
        premise_measures=lambda cell: {
            "neighbours": 1.0
        },  # the premise ledger is tested in test_audit_premises
    )


@pytest.fixture
def study(monkeypatch: pytest.MonkeyPatch):
    def use(bug_factor: float) -> None:
        monkeypatch.setattr(audit_report, "audit_module", lambda name: _fake_study(bug_factor))

    return use


def test_a_correct_mechanism_is_not_refuted_and_its_table_says_why(study) -> None:
    study(1.0)
    table, _ = audit_report.audit_study("fake", 2000, seed=3)
    assert list(table.columns) == audit_report.AUDIT_COLUMNS
    assert list(table["score"]) == [BLACK_BOX, WHITE_BOX]
    assert not table["refutes"].any()
    assert (table["eps_lb"] <= table["ceiling"]).all()
    assert table["confidence"].tolist() == pytest.approx([0.975, 0.975])  # Bonferroni over 2 scores
    assert math.isnan(table.loc[0, "gdp_mu"]) and table.loc[1, "gdp_mu"] == pytest.approx(0.2, abs=0.1)
    rows = audit_report.privacy_claim_rows("fake", table)
    assert list(rows.columns) == SCORECARD_COLUMNS
    assert rows.loc[0, "verdict"] == NOT_REFUTED and rows.loc[0, "kind"] == PRIVACY_CLAIM


def test_noise_10x_smaller_than_declared_is_refuted(study) -> None:
    study(10.0)
    table, _ = audit_report.audit_study("fake", 2000, seed=3)
    assert table["refutes"].all()
    rows = audit_report.privacy_claim_rows("fake", table)
    assert rows.loc[0, "verdict"] == REFUTED
    assert float(rows.loc[0, "effect"]) > CLAIMED and rows.loc[0, "cells_for"] == 2


def test_an_audit_is_a_pure_function_of_its_seed(study) -> None:
    study(1.0)
    first, provenance = audit_report.audit_study("fake", 100, seed=5)
    pd.testing.assert_frame_equal(first, audit_report.audit_study("fake", 100, seed=5)[0])
    assert not first["threshold"].equals(audit_report.audit_study("fake", 100, seed=6)[0]["threshold"])
    assert (provenance["runs"], provenance["seed"], list(provenance["timing"]["cells"])) == (
        100,
        5,
        ["gauss_eps1"],
    )


def test_a_claim_without_an_audit_is_not_run(study) -> None:
    study(1.0)
    rows = audit_report.privacy_claim_rows("fake", None)
    assert rows.loc[0, "verdict"] == NOT_AT_SCALE and "snakemake audit" in rows.loc[0, "detail"]


def test_the_privacy_table_gains_the_audits_bound_where_a_cell_matches(study, tmp_path) -> None:
    study(1.0)
    table, _ = audit_report.audit_study("fake", 200, seed=3)
    path = tmp_path / "fake.csv"
    table.to_csv(path, index=False)
    privacy = pd.DataFrame(
        {
            "study": ["fake"] * 3,
            "algorithm": ["gauss"] * 3,
            "epsilon": [1.0, 2.0, 1.0],
            "delta": [1e-5, 1e-5, 1e-3],
            "eps_per_iteration": [1.0, 2.0, 1.0],
        }
    )
    merged = audit_report.privacy_with_audit(privacy, {"fake": audit_report.read_audit(path)})
    assert (
        merged.loc[0, "audit_eps_lb"] == table["eps_lb"].max()
        and merged.loc[0, "audit_cells"] == "gauss_eps1"
    )
    for other in (1, 2):  # another epsilon, another delta
        assert math.isnan(merged.loc[other, "audit_eps_lb"]) and merged.loc[other, "audit_cells"] == ""
        assert merged.loc[other, "accountant_bound"] == ""
    assert merged.loc[0, "accountant_bound"] == audit_report.ACCOUNTANT_STANDS


def test_the_privacy_table_marks_an_accountant_value_the_audit_refutes(study, tmp_path) -> None:
    study(10.0)  # noise 10x smaller than declared: the audit refutes the per-release epsilon
    table, _ = audit_report.audit_study("fake", 2000, seed=3)
    privacy = pd.DataFrame(
        {
            "study": ["fake"],
            "algorithm": ["gauss"],
            "epsilon": [1.0],
            "delta": [1e-5],
            "eps_per_iteration": [1.0],
        }
    )
    merged = audit_report.privacy_with_audit(privacy, {"fake": table})
    assert merged.loc[0, "accountant_bound"] == audit_report.ACCOUNTANT_REFUTED


def test_an_audit_of_someones_code_is_not_the_builds_mechanism(monkeypatch, tmp_path) -> None:
    # The authors' code cells audit a mechanism the build does not run: their eps_LB must not mark its row.
    fake = _fake_study(10.0)
    coded = PrivacyClaim(
        id="fake.privacy.code", study="fake", where="code", statement="s", code="someone/repo at 1"
    )
    monkeypatch.setattr(
        audit_report,
        "audit_module",
        lambda name: SimpleNamespace(**{**vars(fake), "PRIVACY_CLAIMS": (coded,)}),
    )
    table = pd.DataFrame(
        {"claim": [coded.id], "cell": ["c"], "algorithm": ["gauss"], "claimed_epsilon": [1.0], "delta": [1e-5],
         "eps_lb": [7.0]}
    )  # fmt: skip
    privacy = pd.DataFrame(
        {
            "study": ["fake"],
            "algorithm": ["gauss"],
            "epsilon": [1.0],
            "delta": [1e-5],
            "eps_per_iteration": [1.0],
        }
    )
    merged = audit_report.privacy_with_audit(privacy, {"fake": table})
    assert math.isnan(merged.loc[0, "audit_eps_lb"]) and merged.loc[0, "accountant_bound"] == ""


def test_each_reading_is_judged_on_the_cells_that_ran_its_mechanism(monkeypatch) -> None:
    # Two cells of one claim: the mechanism "exact" (noise as declared) and "leaky" (10x less noise). A reading is
    # judged on its own mechanism's cell only: the default (exact) is not refuted, the reading "leaky" is.
    def cell(name: str, mechanism: str) -> AuditCell:
        return replace(_cell(name, "fake.privacy.gauss"), switches={"noise_mode": mechanism})

    exact, leaky = cell("exact_eps1", "exact"), cell("leaky_eps1", "leaky")
    fake = _fake_study(1.0)

    def audit_scores(c: AuditCell, runs: int, seed: int) -> dict[str, AuditSamples]:
        return _fake_study(10.0 if c.switches["noise_mode"] == "leaky" else 1.0).audit_scores(c, runs, seed)

    study = SimpleNamespace(**{**vars(fake), "AUDIT_CELLS": (exact, leaky), "audit_scores": audit_scores})
    monkeypatch.setattr(audit_report, "audit_module", lambda name: study)
    table, _ = audit_report.audit_study("fake", 2000, seed=3)
    mechanisms = {
        "default": ({"noise_mode": "exact"}, False),
        "leaky": ({"noise_mode": "leaky"}, True),
        "other": ({"noise_mode": "other"}, False),
    }
    rows = audit_report.reading_privacy_rows("fake", table, mechanisms).set_index("reading")
    assert rows.loc["default", "verdict"] == NOT_REFUTED and rows.loc["leaky", "verdict"] == REFUTED
    assert (rows.loc["leaky", "default_verdict"], rows.loc["leaky", "unchanged"]) == (NOT_REFUTED, "no")
    assert rows.loc["other", "verdict"] == NOT_AT_SCALE and rows.loc["leaky", "post_hoc"] == "yes"
    assert (
        audit_report.privacy_claim_rows("fake", table).loc[0, "verdict"] == REFUTED
    )  # the paper's: every cell
