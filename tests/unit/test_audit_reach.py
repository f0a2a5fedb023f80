"""What an audit could reach (issue 58 item 4): the canary's own privacy loss beside the run-count ceiling."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpdl.audit.bounds import epsilon_lower_bound
from dpdl.audit.cells import AuditSamples, PrivacyClaim
from dpdl.audit.premises import WITHIN
from dpdl.audit.reach import (
    detects_noise_divisor,
    gaussian_canary,
    gaussian_loss,
    laplace_canary,
    laplace_loss,
    reachable_epsilon,
    study_reach,
)
from dpdl.audit_report import privacy_verdict, with_reach
from dpdl.judgement import NOT_REFUTED, NOT_TESTABLE
from dpdl.privacy.accounting import noise_for_target_epsilon
from dpdl.privacy.exact import gaussian_exact_epsilon
from dpdl.privacy.theorems import classical_gaussian_noise_multiplier
from dpdl.studies import audit_module


def test_laplace_reach_is_shift_over_scale_and_no_audit_beats_it():
    """A Laplace release with shift d, scale b has maximal loss d / b; an audit at many runs stays below it."""
    d, b = 0.5, 1.0
    assert laplace_loss(d, b) == pytest.approx(0.5)
    assert reachable_epsilon(5.28, laplace_loss(d, b)) == pytest.approx(0.5)  # not the ceiling
    rng = np.random.default_rng(0)
    runs = 20_000
    samples = AuditSamples(rng.laplace(d, b, runs), rng.laplace(0.0, b, runs), what="the release")
    bound = epsilon_lower_bound(samples, 0.0, 0.95)
    assert bound.epsilon <= laplace_loss(d, b) < bound.ceiling


def test_gaussian_reach_is_balle_wang_at_the_claims_delta_and_composes():
    assert gaussian_loss(1.0, 2.0, 1e-5) == pytest.approx(gaussian_exact_epsilon(2.0, 1, 1e-5))
    assert gaussian_loss(1.0, 2.0, 1e-5, releases=4) == pytest.approx(gaussian_exact_epsilon(1.0, 1, 1e-5))
    assert gaussian_loss(0.0, 1.0, 1e-5) == 0.0
    assert (
        math.isnan(float("nan")) and reachable_epsilon(5.0, float("nan")) == 5.0
    )  # no exact form: the ceiling


def _claim() -> PrivacyClaim:
    return PrivacyClaim("s.privacy.x", "s", "Theorem 1", "alpha-DP")


def _own(ceiling: float) -> pd.DataFrame:
    return pd.DataFrame(
        [{"cell": "c", "score": "white_box", "eps_lb": 0.3, "claimed_epsilon": 1.0, "ceiling": ceiling,
          "refutes": False}]
    )  # fmt: skip


def _ledger() -> pd.DataFrame:
    return pd.DataFrame(
        [{"cell": "c", "premise": "p", "assumption": "a", "where": "w", "declared": WITHIN, "measured": 0.1,
          "bound": 1.0}]
    )  # fmt: skip


def test_a_canary_that_cannot_reach_the_claim_is_not_testable():
    reach = pd.DataFrame([{"cell": "c", "canary_loss": laplace_loss(0.5, 1.0), "loss_how": "Laplace d / b"}])
    verdict, deciding, rests = privacy_verdict(_claim(), _own(5.28), _ledger(), reach)
    assert verdict == NOT_TESTABLE and deciding["reachable"] == pytest.approx(0.5)
    assert "reaches 0.5 against 1" in rests
    # the run-count ceiling alone caps it too: 20 runs reach at most about 0.7
    assert privacy_verdict(_claim(), _own(0.7), _ledger())[0] == NOT_TESTABLE
    # a canary that can reach the claim, with enough runs: not refuted
    strong = reach.assign(canary_loss=2.0)
    assert privacy_verdict(_claim(), _own(5.28), _ledger(), strong)[0] == NOT_REFUTED


def test_planted_error_the_ceiling_alone_calls_the_dvp_claim_not_refuted():
    """Planted error: using the run-count ceiling alone (no canary loss) gives 'not refuted' for DVP at 2,000 runs;
    with the canary's loss (at most 0.83 < alpha = 1) it is not testable."""
    table = pd.read_csv("published/dvp_pvp/audit/audit.csv")
    own = table[table["claim"] == "dvp_pvp.privacy.dvp"]
    from dpdl.audit_report import study_ledger

    ledger = study_ledger("dvp_pvp")
    reach = study_reach(audit_module("dvp_pvp"))
    assert privacy_verdict(_claim(), own, ledger, reach)[0] == NOT_TESTABLE
    assert (
        privacy_verdict(_claim(), own, ledger, None)[0] == NOT_REFUTED
    )  # the ceiling alone: the old verdict


def test_dvp_pvp_canaries_reach_at_most_0_43_to_0_83():
    reach = study_reach(audit_module("dvp_pvp")).set_index("cell")["canary_loss"]
    assert reach.min() == pytest.approx(0.433, abs=1e-3) and reach.max() == pytest.approx(0.829, abs=1e-3)


def _cell(claimed: float, delta: float) -> SimpleNamespace:
    """What the reach reads of an AuditCell: its claimed epsilon and delta."""
    return SimpleNamespace(claimed_epsilon=claimed, delta=delta)


def test_a_gaussian_cell_detects_its_noise_divided_by_the_classical_over_the_exact_multiplier():
    """Shift 1 at the classical (1, 1e-5) std sqrt(2 ln(1.25/delta)) = 4.84 (Dwork & Roth, Theorem A.1): the exact
    std for epsilon 1 is 3.73 (Balle & Wang), so dividing the noise by 4.84 / 3.73 = 1.30 lifts the canary's loss to
    the claim. Planted error: noise x k instead of noise / k would give a loss below the claim, not at it."""
    sigma = classical_gaussian_noise_multiplier(1.0, 1e-5)
    loss = gaussian_canary(1.0, sigma, _cell(1.0, 1e-5), "Gaussian")
    exact = noise_for_target_epsilon(1.0, 1e-5, count=1, accountant="pld", rtol=1e-9)
    assert sigma == pytest.approx(4.845, abs=1e-3) and exact == pytest.approx(3.730, abs=1e-3)
    assert loss.epsilon == pytest.approx(gaussian_loss(1.0, sigma, 1e-5)) and loss.epsilon < 1.0
    assert loss.divisor == pytest.approx(sigma / exact, rel=1e-5)  # the PLD grid: within 1e-5
    assert loss.divisor == pytest.approx(1.299, abs=1e-3)
    assert gaussian_loss(1.0, sigma / loss.divisor, 1e-5) == pytest.approx(
        1.0, rel=1e-6
    )  # at noise / k: the claim
    assert gaussian_loss(1.0, sigma / (0.99 * loss.divisor), 1e-5) < 1.0  # the smallest such k
    # composed: 4 releases at 2 sigma have the loss of one at sigma, so the same divisor
    assert gaussian_canary(1.0, 2 * sigma, _cell(1.0, 1e-5), "", releases=4).divisor == pytest.approx(
        loss.divisor
    )
    # a canary already above the claim at the declared noise: k = 1
    assert gaussian_canary(1.0, sigma, _cell(0.5, 1e-5), "").divisor == 1.0


def test_a_laplace_cell_detects_claimed_over_loss():
    loss = laplace_canary(0.5, 1.0, _cell(1.0, 0.0), "Laplace")
    assert loss.epsilon == pytest.approx(0.5) and loss.divisor == pytest.approx(2.0)
    assert laplace_loss(0.5, 1.0 / loss.divisor) == pytest.approx(1.0)
    assert laplace_canary(2.0, 1.0, _cell(1.0, 0.0), "").divisor == 1.0


def test_the_ceiling_decides_whether_any_noise_error_is_detected():
    assert detects_noise_divisor(5.28, 1.0, 1.3) == 1.3
    assert detects_noise_divisor(0.7, 1.0, 1.3) == math.inf  # 20 runs: no planted error can be seen
    assert math.isnan(detects_noise_divisor(5.28, 1.0, math.nan))  # no exact canary loss
    own = _own(5.28).assign(cell=["c"])
    reach = pd.DataFrame(
        [{"cell": "c", "canary_loss": 0.5, "loss_how": "Laplace d / b", "loss_divisor": 2.0}]
    )
    assert with_reach(own, reach)["detects_noise_divisor"].item() == 2.0
    assert math.isnan(with_reach(own, None)["detects_noise_divisor"].item())
    assert with_reach(_own(0.7), reach)["detects_noise_divisor"].item() == math.inf
