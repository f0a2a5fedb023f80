"""Composition of privacy events: the wrapper against dp_accounting used directly, invariants,
edge cases, composition theorems, noise calibration and the provenance record."""

from __future__ import annotations

import importlib.metadata
import json
import math

import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.privacy_accountant import NeighboringRelation
from dp_accounting.rdp import rdp_privacy_accountant

from dpdl.privacy.accounting import (
    PrivacyEvent,
    composed_epsilon,
    gaussian_composed_epsilon,
    laplace_composed_epsilon,
    noise_for_target_epsilon,
    privacy_record,
    to_dp_event,
)
from dpdl.privacy.exact import gaussian_release_epsilon
from dpdl.privacy.theorems import advanced_composition, basic_composition, classical_gaussian_noise_multiplier

DELTA = 1e-5
# Reference PLD grid for dp_accounting used directly: 10x coarser than its default (1e-4) keeps
# the test fast; the pessimistic estimate moves by less than 1e-6 relative at these sizes.
REFERENCE_PLD_STEP = 1e-3


def _rdp_direct(event: dp_event.DpEvent, relation=NeighboringRelation.ADD_OR_REMOVE_ONE) -> float:
    accountant = rdp_privacy_accountant.RdpAccountant(neighboring_relation=relation)
    return accountant.compose(event).get_epsilon(DELTA)


def _pld_direct(event: dp_event.DpEvent, relation=NeighboringRelation.ADD_OR_REMOVE_ONE) -> float:
    accountant = pld_privacy_accountant.PLDAccountant(relation, REFERENCE_PLD_STEP)
    return accountant.compose(event).get_epsilon(DELTA)


# ------------------------------------------------------------ the wrapper against dp_accounting


def test_gaussian_sigma_2_over_100_steps_matches_dp_accounting():
    direct = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 100)
    rdp_reference, pld_reference = _rdp_direct(direct), _pld_direct(direct)
    assert rdp_reference == pytest.approx(35.08, abs=0.005)
    assert pld_reference == pytest.approx(33.10, abs=0.005)
    assert gaussian_composed_epsilon(2.0, 100, DELTA, "rdp") == pytest.approx(rdp_reference, rel=0.01)
    assert gaussian_composed_epsilon(2.0, 100, DELTA, "pld") == pytest.approx(pld_reference, rel=0.01)
    # and much tighter than 1%: same RDP curve; PLD differs only by the grid
    assert gaussian_composed_epsilon(2.0, 100, DELTA, "rdp") == pytest.approx(rdp_reference, rel=1e-12)
    assert gaussian_composed_epsilon(2.0, 100, DELTA, "pld") == pytest.approx(pld_reference, rel=1e-4)


def test_exact_gaussian_epsilon_is_what_the_pld_grid_approximates():
    # Balle & Wang's Theorem 8 for the merged multiplier 2 / sqrt(100) against dp_accounting's
    # PLD of 100 releases at sigma = 2: the grid is pessimistic, so it may only lie a hair above.
    pld_reference = _pld_direct(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(2.0), 100))
    exact = gaussian_release_epsilon(2.0 / math.sqrt(100), DELTA)
    assert exact <= pld_reference <= exact * (1 + 1e-4)


def test_pld_of_a_huge_gaussian_loss_is_exact_instead_of_overflowing():
    # OutP at epsilon-bar 5 over 2e4 iterations: dp_accounting's grid step would overflow expm1.
    noise_multiplier, count = 1e-4, 20_000
    mu = math.sqrt(count) / noise_multiplier
    pld = gaussian_composed_epsilon(noise_multiplier, count, DELTA, "pld")
    assert mu**2 / 2 < pld < gaussian_composed_epsilon(noise_multiplier, count, DELTA, "rdp")
    assert pld == pytest.approx(
        gaussian_release_epsilon(noise_multiplier / math.sqrt(count), DELTA), rel=1e-12
    )
    record = privacy_record(
        [PrivacyEvent("gaussian", noise_multiplier, count)], delta=DELTA, eps_per_iteration=None
    )
    assert record["eps_composed_pld"] == pytest.approx(pld)


def test_laplace_epsilon_half_over_100_steps_matches_dp_accounting():
    direct = dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(2.0), 100)
    rdp_reference, pld_reference = _rdp_direct(direct), _pld_direct(direct)
    assert rdp_reference == pytest.approx(29.97, abs=0.005)
    assert pld_reference == pytest.approx(28.50, abs=0.005)
    assert laplace_composed_epsilon(0.5, 100, DELTA, "rdp") == pytest.approx(rdp_reference, rel=0.01)
    assert laplace_composed_epsilon(0.5, 100, DELTA, "pld") == pytest.approx(pld_reference, rel=0.01)
    assert laplace_composed_epsilon(0.5, 100, DELTA, "pld") >= pld_reference * (1 - 1e-9)  # pessimistic


def test_pure_events_are_randomized_response_and_dominate_laplace():
    epsilon, count = 0.1, 30
    keep_noise = 2 / (1 + math.exp(epsilon))  # binary randomized response with e^eps odds
    response = dp_event.RandomizedResponseDpEvent(keep_noise, 2)
    rdp_reference = _rdp_direct(
        dp_event.SelfComposedDpEvent(response, count), NeighboringRelation.REPLACE_ONE
    )
    # the PLD accountant composes a list correctly (it ignores the count of a self-composed one)
    pld_reference = _pld_direct(dp_event.ComposedDpEvent([response] * count), NeighboringRelation.REPLACE_ONE)
    pure = PrivacyEvent("pure", 1 / epsilon, count)
    assert composed_epsilon(pure, DELTA, "rdp") == pytest.approx(rdp_reference, rel=1e-12)
    exact = composed_epsilon(pure, DELTA, "pld")
    # The accountant's pessimistic grid rounds each +-eps loss up by at most one step.
    assert exact <= pld_reference <= exact + count * REFERENCE_PLD_STEP
    laplace = PrivacyEvent("laplace", 1 / epsilon, count)
    for accountant in ("rdp", "pld"):
        assert composed_epsilon(pure, DELTA, accountant) >= composed_epsilon(laplace, DELTA, accountant)
        assert composed_epsilon(pure, DELTA, accountant) <= basic_composition(epsilon, count)


def test_pure_pld_is_the_optimal_composition_hand_computed_for_two_releases():
    # Two eps-DP releases: losses 2 eps, 0, -2 eps with P-probabilities q^2, 2q(1-q), (1-q)^2.
    # For 0 < e < 2 eps: delta(e) = q^2 - e^e (1-q)^2, so e = ln((q^2 - delta) / (1-q)^2).
    epsilon, delta = 1.0, 0.1
    q = math.exp(epsilon) / (1 + math.exp(epsilon))
    by_hand = math.log((q**2 - delta) / (1 - q) ** 2)
    assert composed_epsilon(PrivacyEvent("pure", 1 / epsilon, 2), delta, "pld") == pytest.approx(
        by_hand, abs=1e-9
    )


# ------------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("mechanism", ["gaussian", "laplace", "pure"])
@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_count_t_equals_t_single_compositions(mechanism, accountant):
    once = composed_epsilon(PrivacyEvent(mechanism, 3.0, 40), DELTA, accountant)
    listed = composed_epsilon([PrivacyEvent(mechanism, 3.0)] * 40, DELTA, accountant)
    assert listed == pytest.approx(once, rel=1e-12)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_count_t_equals_dp_accounting_composing_t_events(accountant):
    direct = dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(3.0)] * 40)
    reference = _rdp_direct(direct) if accountant == "rdp" else _pld_direct(direct)
    assert gaussian_composed_epsilon(3.0, 40, DELTA, accountant) == pytest.approx(reference, rel=1e-4)


def test_varying_gaussian_schedule_is_merged_exactly():
    multipliers = [1.0 + 0.5 * t for t in range(12)]  # a decaying-variance style schedule
    events = [PrivacyEvent("gaussian", s) for s in multipliers]
    direct = dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(s) for s in multipliers])
    assert composed_epsilon(events, DELTA, "rdp") == pytest.approx(_rdp_direct(direct), rel=1e-9)
    assert composed_epsilon(events, DELTA, "pld") == pytest.approx(_pld_direct(direct), rel=1e-4)
    merged = to_dp_event(events)
    assert isinstance(merged, dp_event.GaussianDpEvent)
    assert merged.noise_multiplier == pytest.approx(sum(s**-2 for s in multipliers) ** -0.5)


def test_mixed_gaussian_and_laplace_releases():
    events = [PrivacyEvent("gaussian", 4.0, 10), PrivacyEvent("laplace", 5.0, 10)]
    direct = dp_event.ComposedDpEvent(
        [
            dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(4.0), 10),
            dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(5.0), 10),
        ]
    )
    assert composed_epsilon(events, DELTA, "rdp") == pytest.approx(_rdp_direct(direct), rel=1e-9)
    assert composed_epsilon(events, DELTA, "pld") == pytest.approx(_pld_direct(direct), rel=1e-3)


def test_more_noise_less_epsilon_and_more_steps_more_epsilon():
    by_noise = [gaussian_composed_epsilon(s, 50, DELTA) for s in (0.5, 1.0, 2.0, 8.0)]
    assert all(a > b for a, b in zip(by_noise, by_noise[1:], strict=False))
    by_steps = [laplace_composed_epsilon(0.1, t, DELTA, "pld") for t in (1, 10, 100)]
    assert all(a < b for a, b in zip(by_steps, by_steps[1:], strict=False))


def test_single_laplace_release_by_hand():
    # One Laplace release has loss exactly eps on x <= 0 (P-mass 1/2), so for e just below eps
    # delta(e) = (1 - e^(e - eps)) / 2 + O((eps - e)^2) and the PLD epsilon is eps - 2 delta.
    assert laplace_composed_epsilon(0.3, 1, DELTA, "pld") == pytest.approx(0.3 - 2 * DELTA, abs=1e-7)


# ----------------------------------------------------------------------------- non-private


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_zero_noise_or_infinite_epsilon_is_non_private(accountant):
    assert (
        composed_epsilon([PrivacyEvent("gaussian", 1.0, 5), PrivacyEvent("gaussian", 0.0)], DELTA, accountant)
        == math.inf
    )
    assert laplace_composed_epsilon(math.inf, 10, DELTA, accountant) == math.inf
    assert isinstance(to_dp_event(PrivacyEvent("laplace", 0.0)), dp_event.NonPrivateDpEvent)


# ----------------------------------------------------------------------- composition theorems


def test_basic_and_advanced_composition_values():
    assert basic_composition(0.05, 20_000) == pytest.approx(1000.0)  # iadmm.md 3: T eps-bar
    by_hand = math.sqrt(2 * 100 * math.log(1e5)) * 0.1 + 100 * 0.1 * (math.exp(0.1) - 1)
    assert advanced_composition(0.1, 100, 1e-5) == pytest.approx(by_hand)
    assert advanced_composition(math.inf, 3, 1e-5) == math.inf == basic_composition(math.inf, 3)


def test_composition_theorems_bracket_the_accountants():
    # small eps, many steps: accountants <= advanced < basic
    small_pld = laplace_composed_epsilon(0.01, 10_000, DELTA, "pld")
    small_rdp = laplace_composed_epsilon(0.01, 10_000, DELTA, "rdp")
    advanced = advanced_composition(0.01, 10_000, DELTA)
    assert small_pld <= small_rdp <= advanced < basic_composition(0.01, 10_000)
    # large eps: advanced exceeds basic, which the accountants never do (pure DP, delta >= 0)
    assert advanced_composition(2.0, 10, DELTA) > basic_composition(2.0, 10)
    assert laplace_composed_epsilon(2.0, 10, DELTA, "pld") <= basic_composition(2.0, 10)


# ---------------------------------------------------------------------------- calibration


def test_classical_gaussian_noise_multiplier():
    assert classical_gaussian_noise_multiplier(0.5, 1e-6) == pytest.approx(
        math.sqrt(2 * math.log(1.25e6)) / 0.5
    )
    assert classical_gaussian_noise_multiplier(0.5, 1e-3, constant=2.1) == pytest.approx(
        math.sqrt(2.1 * math.log(1250)) / 0.5
    )
    assert classical_gaussian_noise_multiplier(math.inf, 1e-3) == 0.0


@pytest.mark.parametrize(("mechanism", "accountant"), [("gaussian", "rdp"), ("laplace", "pld")])
def test_noise_for_target_epsilon_hits_the_target_from_below(mechanism, accountant):
    rtol = 1e-6
    noise = noise_for_target_epsilon(
        2.0, DELTA, count=50, mechanism=mechanism, accountant=accountant, rtol=rtol
    )
    assert composed_epsilon(PrivacyEvent(mechanism, noise, 50), DELTA, accountant) <= 2.0
    slightly_less = PrivacyEvent(mechanism, noise / (1 + 2 * rtol), 50)
    assert composed_epsilon(slightly_less, DELTA, accountant) > 2.0


def test_noise_for_target_epsilon_monotone_and_sqrt_t_scaling():
    noises = [noise_for_target_epsilon(eps, DELTA, count=100) for eps in (0.5, 1.0, 4.0)]
    assert all(a > b for a, b in zip(noises, noises[1:], strict=False))  # more noise for smaller epsilon
    # Gaussian RDP of T releases at s equals one release at s / sqrt(T): 4x steps, 2x noise.
    assert noise_for_target_epsilon(1.0, DELTA, count=400) == pytest.approx(2 * noises[1], rel=1e-5)
    assert noise_for_target_epsilon(math.inf, DELTA, count=3) == 0.0


# ------------------------------------------------------------------------------- provenance


def test_privacy_record_keys_values_and_json():
    events = [PrivacyEvent("laplace", 20.0, 200)]
    record = privacy_record(events, delta=1e-6, eps_per_iteration=0.05)
    assert list(record) == [
        "eps_per_iteration",
        "eps_composed_rdp",
        "eps_composed_pld",
        "delta",
        "accountant",
        "noise_scales",
    ]
    assert record["eps_per_iteration"] == 0.05 and record["delta"] == 1e-6
    assert record["eps_composed_rdp"] == pytest.approx(laplace_composed_epsilon(0.05, 200, 1e-6, "rdp"))
    assert record["eps_composed_pld"] == pytest.approx(laplace_composed_epsilon(0.05, 200, 1e-6, "pld"))
    assert record["accountant"] == {
        "name": "dp_accounting",
        "version": importlib.metadata.version("dp-accounting"),
    }
    assert record["noise_scales"] == [{"mechanism": "laplace", "noise_multiplier": 20.0, "count": 200}]
    json.dumps(record, allow_nan=False)


def test_privacy_record_summarises_a_long_varying_schedule():
    events = [PrivacyEvent("gaussian", 1.0 + math.sqrt(t)) for t in range(1, 2001)]
    record = privacy_record(events, delta=1e-6, eps_per_iteration=None)
    assert record["eps_per_iteration"] is None
    assert record["noise_scales"] == {
        "min": 2.0,
        "max": 1.0 + math.sqrt(2000),
        "first": 2.0,
        "last": 1.0 + math.sqrt(2000),
        "count": 2000,
        "mechanisms": ["gaussian"],
    }
    assert 0 < record["eps_composed_pld"] <= record["eps_composed_rdp"]
    json.dumps(record, allow_nan=False)


def test_privacy_record_of_a_non_private_run_is_json_safe():
    record = privacy_record(PrivacyEvent("gaussian", 0.0, 100), delta=1e-5, eps_per_iteration=math.inf)
    assert record["eps_per_iteration"] is None
    assert record["eps_composed_rdp"] is None and record["eps_composed_pld"] is None
    json.dumps(record, allow_nan=False)


# ---------------------------------------------------------------------------- invalid input

INVALID_CALLS = [
    (lambda: PrivacyEvent("exponential", 1.0), "mechanism must be one of"),
    (lambda: PrivacyEvent("gaussian", -1.0), r"noise_multiplier must be in \[0, inf\); got -1.0"),
    (lambda: PrivacyEvent("gaussian", math.inf), r"noise_multiplier must be in \[0, inf\)"),
    (lambda: PrivacyEvent("gaussian", 1.0, 0), "count must be an integer >= 1; got 0"),
    (lambda: PrivacyEvent("gaussian", 1.0, 2.5), "count must be an integer >= 1; got 2.5"),
    (lambda: composed_epsilon([], DELTA), "events must hold at least one PrivacyEvent"),
    (
        lambda: composed_epsilon(PrivacyEvent("gaussian", 1.0), 0.0),
        r"delta must be in \(0, 1\); got 0.0",
    ),
    (
        lambda: composed_epsilon(PrivacyEvent("gaussian", 1.0), 1.0),
        r"delta must be in \(0, 1\); got 1.0",
    ),
    (
        lambda: composed_epsilon(PrivacyEvent("gaussian", 1.0), DELTA, "moments"),
        "accountant must be one of",
    ),
    (
        lambda: composed_epsilon([PrivacyEvent("pure", 1.0), PrivacyEvent("laplace", 1.0)], DELTA, "pld"),
        "must be 'pure' releases with one noise_multiplier",
    ),
    (
        lambda: laplace_composed_epsilon(0.0, 10, DELTA),
        r"epsilon_per_iteration must be in \(0, inf\]",
    ),
    (lambda: gaussian_composed_epsilon(1.0, 0, DELTA), "count must be an integer >= 1; got 0"),
    (lambda: basic_composition(-0.1, 10), r"epsilon must be in \(0, inf\]; got -0.1"),
    (lambda: basic_composition(0.1, 0), "count must be an integer >= 1; got 0"),
    (lambda: advanced_composition(0.0, 10, 1e-5), r"epsilon must be in \(0, inf\]; got 0.0"),
    (lambda: advanced_composition(0.1, 10, 1.0), r"delta_prime must be in \(0, 1\); got 1.0"),
    (
        lambda: noise_for_target_epsilon(0.0, DELTA, count=5),
        r"target_epsilon must be in \(0, inf\]",
    ),
    (lambda: noise_for_target_epsilon(1.0, DELTA, count=0), "count must be an integer >= 1; got 0"),
    (lambda: classical_gaussian_noise_multiplier(1.0, 2.0), r"delta must be in \(0, 1\); got 2.0"),
    (
        lambda: privacy_record([PrivacyEvent("gaussian", 1.0)], delta=1e-5, eps_per_iteration=0.0),
        "eps_per_iteration",
    ),
]


@pytest.mark.parametrize(
    ("call", "message"), INVALID_CALLS, ids=[message.split(" ")[0] for _, message in INVALID_CALLS]
)
def test_invalid_arguments_raise_value_error_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_events_must_be_privacy_events():
    with pytest.raises(TypeError, match="events must be PrivacyEvent values; got tuple"):
        composed_epsilon([("gaussian", 1.0, 1)], DELTA)
