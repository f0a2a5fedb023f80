"""Each paper's calibration against hand-computed values, quoted numbers, limits and monotonicity.

Quoted numbers come from the extraction notes (iadmm.md, wddp.md, zhang_zhu.md, dzoa.md); the
expected values are written out from the paper formulas, not taken from the implementation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdl.privacy.accounting import PrivacyEvent, composed_epsilon
from dpdl.privacy.dp_iadmm import (
    PENALTY_CONSTANTS,
    iadmm_penalty,
    objp_laplace_scale,
    objp_sensitivity,
    outp_inverse_proximity,
    outp_noise_std,
    outp_sensitivity,
)
from dpdl.privacy.dvp_pvp import dvp_calibration, dvp_jacobian_budget, pvp_noise_rate
from dpdl.privacy.dzoa import (
    dzoa_epsilon_for_total,
    dzoa_epsilon_per_iteration,
    dzoa_noise_std,
    dzoa_sensitivity,
    dzoa_step_scale,
    dzoa_total_epsilon,
    dzoa_variance_constant,
)
from dpdl.privacy.wddp import wddp_effective_sample_size, wddp_noise_std, wddp_sensitivity

EPSILONS = [0.01, 0.05, 0.1, 1.0, 3.0, 5.0]

# ---------------------------------------------------------------- dp_iadmm: ObjP / ObjT Laplace


def test_objp_sensitivity_eq20_is_max_of_l1_products_over_global_i():
    features = np.array([[1.0, 0.5, 0.0], [0.2, 0.2, 0.2]])
    residuals = np.array([[0.3, -0.5, 0.2], [-0.9, 0.45, 0.45]])
    # (20) as written: sum_jk |x_ij (h_k - y_ik)| / I, maximised over the agent's samples
    by_hand = max(np.abs(np.outer(x, r)).sum() for x, r in zip(features, residuals, strict=False)) / 10
    assert by_hand == pytest.approx(0.15)  # sample 1: 1.5 * 1.0; sample 2: 0.6 * 1.8 = 1.08
    assert objp_sensitivity(np.abs(features).sum(1), residuals, n_total=10) == pytest.approx(by_hand)


def test_objp_sensitivity_batches_agents_and_replicas_like_a_loop():
    rng = np.random.default_rng(1)
    norms = rng.random((3, 1, 5)) * 100  # 3 agents (broadcast over replicas), 5 samples
    residuals = rng.standard_normal((3, 2, 5, 4))  # 2 replicas, K = 4
    batched = objp_sensitivity(norms, residuals, n_total=40)
    assert batched.shape == (3, 2)
    for p in range(3):
        for b in range(2):
            assert batched[p, b] == objp_sensitivity(norms[p, 0], residuals[p, b], n_total=40)
    worst = objp_sensitivity(norms, residuals, n_total=40, mode="worst_case", feature_l1_bound=100)
    np.testing.assert_array_equal(worst, np.full((3, 2), 4 * 100 / 40))


def test_objp_mnist_scale_at_zero_matches_the_authors_log():
    # iadmm.md 2.1: at z = 0, ||h - y||_1 = 1.8 and max ||x||_1 = 262 give b = 0.157 at 0.05.
    residuals = np.array([[0.1] * 10]) - np.eye(10)[[3]]
    sensitivity = objp_sensitivity([262.0], residuals, n_total=60_000)
    assert sensitivity == pytest.approx(262 * 1.8 / 60_000)
    assert objp_laplace_scale(sensitivity, 0.05) == pytest.approx(0.157, abs=5e-4)


def test_objp_worst_case_is_four_j_bound_over_i_and_dominates_eq20():
    rng = np.random.default_rng(0)
    features = rng.random((50, 784))
    probabilities = rng.dirichlet(np.ones(10), size=50)
    residuals = probabilities - np.eye(10)[rng.integers(0, 10, 50)]
    norms = features.sum(1)
    worst = objp_sensitivity(norms, residuals, n_total=60_000, mode="worst_case", feature_l1_bound=784)
    assert worst == pytest.approx(4 * 784 / 60_000)
    assert worst >= 2 * objp_sensitivity(norms, residuals, n_total=60_000)


def test_objp_laplace_scale_limits_and_monotonicity():
    scales = [objp_laplace_scale(0.01, eps) for eps in EPSILONS]
    assert scales == pytest.approx([0.01 / eps for eps in EPSILONS])
    assert all(a > b for a, b in zip(scales, scales[1:], strict=False))  # more noise for smaller epsilon
    assert objp_laplace_scale(0.01, math.inf) == 0.0


@pytest.mark.parametrize(
    ("dataset", "expected"),
    [
        ("mnist", [502, 102, 52, 7, 3 + 2 / 3, 3]),
        ("femnist", [5.005, 1.005, 0.505, 0.055, 0.005 + 0.05 / 3, 0.015]),
    ],
    ids=["mnist", "femnist"],
)
def test_penalty_starting_values_quoted_in_the_note(dataset, expected):
    constants = PENALTY_CONSTANTS[dataset]
    assert [iadmm_penalty(1, eps, **constants) for eps in EPSILONS] == pytest.approx(expected)


def test_penalty_growth_cap_and_nonprivate():
    mnist = PENALTY_CONSTANTS["mnist"]
    assert iadmm_penalty(9_999, 0.05, **mnist) == pytest.approx(102)
    assert iadmm_penalty(20_000, 0.05, **mnist) == pytest.approx(2 * 1.44 + 100)  # 1.2^2
    assert iadmm_penalty(1_090_000, math.inf, **mnist) == pytest.approx(2 * 1.2**109)
    assert iadmm_penalty(1_100_000, math.inf, **mnist) == 1e9  # cap binds at t = 1.1e6
    assert iadmm_penalty(10**12, 0.05, **mnist) == 1e9
    assert iadmm_penalty(1, math.inf, **mnist) == 2.0


# ---------------------------------------------------------------------- dp_iadmm: OutP Gaussian


def test_outp_inverse_proximity_paper_era_mnist():
    # iadmm.md 2.5: 1/eta-hat = I_p/4 + 2 sqrt(t ln(1.25/delta)) / eps = 1500 + 7.494 sqrt(t)/eps
    value = outp_inverse_proximity(1, 0.05, n_samples=6000, n_params=7840)
    assert value == pytest.approx(1500 + 2 * math.sqrt(math.log(1.25e6)) / 0.05)
    assert value == pytest.approx(1650, abs=0.5)
    assert outp_inverse_proximity(4, 0.05, n_samples=6000, n_params=7840, a=100) == pytest.approx(
        (1500 + 2 * 2 * math.sqrt(math.log(1.25e6)) / 0.05) / 100
    )
    assert outp_inverse_proximity(7, math.inf, n_samples=6000, n_params=7840) == 1500.0


def test_outp_inverse_proximity_explicit_constants():
    value = outp_inverse_proximity(9, 1.0, 1e-3, n_samples=100, n_params=16, c1=4.0, c3=16.0, c_w=16.0)
    assert value == pytest.approx(16 + 4 * 4 * math.sqrt(16 * 9 * math.log(1250)) / (100 * 16))


def test_outp_noise_mnist_sigma_and_code_variance():
    # iadmm.md 7.5(b): MNIST, eps 0.05, t = 1: sigma about 0.12 while sigma^2 about 0.015.
    rho = iadmm_penalty(1, 0.05, **PENALTY_CONSTANTS["mnist"])
    sensitivity = outp_sensitivity(
        rho, outp_inverse_proximity(1, 0.05, n_samples=6000, n_params=7840), n_samples=6000
    )
    sigma = (
        2 * math.sqrt(2 * math.log(1.25e6)) / (0.05 * (102 + 1500 + 2 * math.sqrt(math.log(1.25e6)) / 0.05))
    )
    assert outp_noise_std(0.05, sensitivity=sensitivity, outp_noise="sigma") == pytest.approx(sigma)
    assert sigma == pytest.approx(0.121, abs=1e-3)
    assert outp_noise_std(0.05, sensitivity=sensitivity) == pytest.approx(sigma**2)  # default: the code
    assert outp_noise_std(math.inf, sensitivity=sensitivity) == 0.0


def test_outp_noise_decays_with_t_and_grows_as_epsilon_shrinks():
    def sigma(t, eps):
        inverse = outp_inverse_proximity(t, eps, n_samples=6000, n_params=7840)
        rho = iadmm_penalty(t, eps, **PENALTY_CONSTANTS["mnist"])
        return outp_noise_std(
            eps, sensitivity=outp_sensitivity(rho, inverse, n_samples=6000), outp_noise="sigma"
        )

    over_time = [sigma(t, 0.1) for t in (1, 10, 100, 10_000)]
    assert all(a > b for a, b in zip(over_time, over_time[1:], strict=False))
    over_eps = [sigma(1, eps) for eps in EPSILONS]
    assert all(a > b for a, b in zip(over_eps, over_eps[1:], strict=False))


# ------------------------------------------------------------------------------------- wddp


# wddp.md 2.3 table: sigma * N for G = 1, T = 1000, delta = 1e-3.
WDDP_TABLE = [
    (0.01, 23516.4, 33245.2),
    (0.05, 4710.1, 6649.0),
    (0.10, 2359.3, 3324.5),
    (0.15, 1575.7, 2216.3),
    (0.20, 1183.8, 1662.3),
    (0.25, 948.7, 1329.8),
]


@pytest.mark.parametrize(("eps", "closed", "eq3"), WDDP_TABLE, ids=[f"eps_{row[0]}" for row in WDDP_TABLE])
def test_wddp_sigma_table_of_the_note(eps, closed, eq3):
    log_inv = math.log(1e3)
    by_hand = math.sqrt(2000) / (math.sqrt(log_inv + eps) - math.sqrt(log_inv))
    assert wddp_noise_std(eps, 1e-3, n_eff=1, n_iterations=1000) == pytest.approx(by_hand, rel=1e-9)
    assert wddp_noise_std(eps, 1e-3, n_eff=1, n_iterations=1000) == pytest.approx(closed, abs=0.06)
    assert wddp_noise_std(eps, 1e-3, n_eff=1, n_iterations=1000, calibration="eq3") == pytest.approx(
        eq3, abs=0.06
    )
    effective_c = (closed * eps) ** 2 / (1000 * log_inv)
    assert 8.0 < effective_c < 8.15


def test_wddp_eq3_constant_and_kdd_sigma():
    assert wddp_noise_std(
        0.1, 1e-3, n_eff=50_000, n_iterations=1000, calibration="eq3", c=8.0
    ) == pytest.approx(math.sqrt(8 * 1000 * math.log(1e3) / (50_000**2 * 0.01)))
    assert wddp_noise_std(0.01, 1e-3, n_eff=50_000, n_iterations=1000) == pytest.approx(0.47, abs=0.005)
    assert wddp_noise_std(math.inf, 1e-3, n_eff=10, n_iterations=5) == 0.0


def test_wddp_closed_form_round_trips_through_zcdp_and_the_accountant():
    sigma = wddp_noise_std(0.1, 1e-3, n_eff=30_162, n_iterations=1000)
    multiplier = sigma / wddp_sensitivity(30_162)
    rho = 1000 / (2 * multiplier**2)
    assert rho + 2 * math.sqrt(rho * math.log(1e3)) == pytest.approx(0.1, rel=1e-9)
    assert composed_epsilon(PrivacyEvent("gaussian", multiplier, 1000), 1e-3) <= 0.1


def test_wddp_effective_sizes_and_noise_ratio():
    sizes = [100, 300, 100, 300]  # two groups, u = 3: n / (m n_(1)) = (1 + u) / 2 = 2
    assert wddp_effective_sample_size(sizes, "wddp") == 800
    assert wddp_effective_sample_size(sizes, "central") == 800
    assert wddp_effective_sample_size(sizes, "dist_avg") == 400
    ratio = wddp_noise_std(0.05, 1e-3, n_eff=400, n_iterations=1000) / wddp_noise_std(
        0.05, 1e-3, n_eff=800, n_iterations=1000
    )
    assert ratio == pytest.approx(2.0)
    assert wddp_sensitivity(800, lipschitz=1.0) == pytest.approx(2 / 800)


def test_wddp_more_noise_for_smaller_epsilon():
    sigmas = [wddp_noise_std(eps, 1e-3, n_eff=1000, n_iterations=1000) for eps in EPSILONS]
    assert all(a > b for a, b in zip(sigmas, sigmas[1:], strict=False))


# -------------------------------------------------------------------------------- dvp / pvp

DVP_EXAMPLE = {"n_samples": 1750, "c_r": 1750, "rho": 10**-2.5, "eta": 0.1, "n_neighbours": 2}


def test_dvp_jacobian_budget_note_example():
    by_hand = 2 * math.log(1 + 0.25 * 1750 / (1750 * (10**-2.5 + 2 * 0.1 * 2)))
    assert dvp_jacobian_budget(**DVP_EXAMPLE) == pytest.approx(by_hand)
    assert by_hand == pytest.approx(0.965, abs=5e-4)


def test_dvp_no_ridge_branch_above_the_boundary():
    calibration = dvp_calibration(1.0, **DVP_EXAMPLE)
    assert calibration.branch == "no_ridge" and calibration.phi == 0.0
    assert calibration.alpha_hat == pytest.approx(1.0 - dvp_jacobian_budget(**DVP_EXAMPLE))
    assert calibration.zeta == pytest.approx(calibration.alpha_hat / 2)
    assert 64 / calibration.zeta == pytest.approx(3654, rel=2e-3)  # E||e|| for d = 64
    assert calibration.epsilon_spent == pytest.approx(1.0)


def test_dvp_ridge_branch_below_the_boundary():
    calibration = dvp_calibration(0.3, **DVP_EXAMPLE)
    phi = 0.25 / (math.exp(0.3 / 4) - 1) - 10**-2.5 - 0.4
    assert calibration.branch == "ridge"
    assert calibration.phi == pytest.approx(phi) and calibration.phi > 0
    assert calibration.alpha_hat == pytest.approx(0.15)
    assert 64 / calibration.zeta == pytest.approx(853.3, abs=0.1)
    # With Phi, the Jacobian term 2 ln(1 + c1 C^R / (B (rho + Phi + 2 eta N))) is exactly alpha / 2.
    assert 2 * math.log(1 + 0.25 / (10**-2.5 + phi + 0.4)) == pytest.approx(0.15)


def test_dvp_branch_boundary_from_the_note_g14():
    params = {"n_samples": 4522, "c_r": 1750, "rho": 10**-2.5, "n_neighbours": 2}
    assert dvp_jacobian_budget(eta=1.0, **params) == pytest.approx(0.048, abs=5e-4)
    assert dvp_jacobian_budget(eta=0.1, **params) == pytest.approx(0.43, abs=5e-4)
    assert dvp_calibration(0.047, eta=1.0, **params).branch == "ridge"
    assert dvp_calibration(0.049, eta=1.0, **params).branch == "no_ridge"


def test_dvp_zeta_mode_algorithm_box_doubles_the_rate():
    half = dvp_calibration(0.3, **DVP_EXAMPLE)
    box = dvp_calibration(0.3, dvp_zeta_mode="alpha_hat", **DVP_EXAMPLE)
    assert box.zeta == pytest.approx(2 * half.zeta)
    assert box.epsilon_spent == pytest.approx(0.3 + 0.15)
    assert (box.alpha_hat, box.phi, box.branch) == (half.alpha_hat, half.phi, half.branch)


def test_dvp_nonprivate_limit():
    calibration = dvp_calibration(math.inf, **DVP_EXAMPLE)
    assert calibration.zeta == math.inf and calibration.phi == 0.0 and calibration.epsilon_spent == math.inf


def test_pvp_noise_rate_and_expected_norm():
    zeta = pvp_noise_rate(0.5, rho=0.1, n_samples=4522, c_r=146)
    assert zeta == pytest.approx(0.1 * 4522 * 0.5 / (2 * 146))
    assert 64 / zeta * 0.5 == pytest.approx(41.3, abs=0.05)  # E||e|| = 41 / alpha for d = 64
    rates = [pvp_noise_rate(a, rho=0.1, n_samples=4522, c_r=146) for a in EPSILONS]
    assert all(
        a < b for a, b in zip(rates, rates[1:], strict=False)
    )  # smaller alpha, smaller rate, more noise
    assert pvp_noise_rate(math.inf, rho=0.1, n_samples=4522, c_r=146) == math.inf


# ------------------------------------------------------------------------------------- dzoa

DZOA = {"n_samples": 20, "n_params": 10, "rho": 4.0}


def test_dzoa_variance_constant_and_sensitivity():
    assert dzoa_variance_constant(n_params=10, n_inner=100) == pytest.approx(3.2621, abs=1e-4)
    harmonic = sum(1 / t for t in range(1, 101))
    assert harmonic == pytest.approx(5.187378, abs=1e-6)
    assert dzoa_sensitivity(rho=4, n_neighbours=2, n_samples=20) == pytest.approx(1 / 160)


@pytest.mark.parametrize(
    ("delta", "ratio"),
    [(1e-2, 13.4786), (1e-3, 13.5837), (1e-4, 13.6371), (1e-5, 13.6695), (1e-6, 13.6912)],
    ids=["delta_1e-2", "delta_1e-3", "delta_1e-4", "delta_1e-5", "delta_1e-6"],
)
def test_dzoa_total_epsilon_ratio_for_200_outer_iterations(delta, ratio):
    assert dzoa_total_epsilon(0.15, delta, n_outer=200) == pytest.approx(0.15 * ratio, abs=2e-5)
    assert dzoa_epsilon_for_total(0.15 * ratio, delta, n_outer=200) == pytest.approx(0.15, abs=1e-5)


@pytest.mark.parametrize(
    ("delta", "eps", "d", "sigma"),
    [
        (1e-3, 0.15, 2, 0.161),
        (1e-3, 0.95, 3, 0.0170),
        (1e-6, 0.15, 2, 0.226),
        (1e-6, 0.95, 3, 0.0238),
    ],
    ids=["1e-3_0.15_d2", "1e-3_0.95_d3", "1e-6_0.15_d2", "1e-6_0.95_d3"],
)
def test_dzoa_noise_std_table(delta, eps, d, sigma):
    by_hand = math.sqrt(2.1 * math.log(1.25 / delta)) / (4 * d * 20 * eps)
    assert dzoa_noise_std(eps, delta, rho=4, n_neighbours=d, n_samples=20) == pytest.approx(by_hand)
    assert by_hand == pytest.approx(sigma, abs=6e-4)


@pytest.mark.parametrize(
    ("delta", "eps", "d", "beta_sq", "expected"),
    [
        (1e-3, 0.10, 1, 0.0, 4.64),
        (1e-3, 0.10, 1, 100.0, 4.77),
        (1e-3, 0.95, 4, 100.0, 1.11),
        (1e-6, 0.15, 3, 0.0, 1.45),
        (1e-6, 0.95, 2, 100.0, 1.16),
    ],
    ids=[
        "1e-3_0.10_d1",
        "1e-3_0.10_d1_beta",
        "1e-3_0.95_d4_beta",
        "1e-6_0.15_d3",
        "1e-6_0.95_d2_beta",
    ],
)
def test_dzoa_step_scale_table_and_round_trip(delta, eps, d, beta_sq, expected):
    params = {**DZOA, "n_neighbours": d, "beta_c_sq_norm": beta_sq}
    constant = dzoa_variance_constant(n_params=10, n_inner=100)
    by_hand = math.sqrt(
        (2.1 * 30 * 10 * math.log(1.25 / delta) / (16 * d**2 * 400 * eps**2) + beta_sq / 25) / constant
    )
    step = dzoa_step_scale(eps, delta, **params)
    assert step == pytest.approx(by_hand)
    assert step == pytest.approx(expected, abs=0.006)
    assert dzoa_epsilon_per_iteration(step, delta, **params) == pytest.approx(eps, rel=1e-12)


def test_dzoa_step_scale_limits_and_monotonicity():
    params = {**DZOA, "n_neighbours": 2, "beta_c_sq_norm": 100.0}
    steps = [dzoa_step_scale(eps, 1e-3, **params) for eps in EPSILONS]
    assert all(
        a > b for a, b in zip(steps, steps[1:], strict=False)
    )  # smaller epsilon, larger step, more noise
    floor = math.sqrt(4 * 100 / (100 * dzoa_variance_constant(n_params=10, n_inner=100)))
    assert dzoa_step_scale(math.inf, 1e-3, **params) == pytest.approx(floor)
    assert dzoa_epsilon_per_iteration(1.000001 * floor, 1e-3, **params) > 100  # blows up at the floor
    assert dzoa_epsilon_per_iteration(0.999 * floor, 1e-3, **params) == math.inf  # no certified noise


# ---------------------------------------------------------------------------- invalid input


INVALID_CALLS = [
    (lambda: objp_laplace_scale(0.1, 0.0), r"epsilon must be in \(0, inf\]; got 0.0"),
    (lambda: objp_laplace_scale(0.1, -1.0), r"epsilon must be in \(0, inf\]; got -1.0"),
    (lambda: objp_laplace_scale(-0.1, 1.0), r"sensitivity must be in \[0, inf\)"),
    (lambda: objp_sensitivity(np.ones(2), np.ones((3, 4)), n_total=10), "feature_l1_norms"),
    (lambda: objp_sensitivity(np.ones((3, 2)), np.ones((4, 2, 5)), n_total=10), "feature_l1_norms"),
    (lambda: objp_sensitivity(np.ones(2), np.ones((2, 4)), n_total=1), "n_total must be .* >= 2"),
    (lambda: objp_sensitivity(np.ones(2), np.ones((2, 4)), n_total=9, mode="max"), "mode must be"),
    (
        lambda: objp_sensitivity(np.ones(2), np.ones((2, 4)), n_total=9, mode="worst_case"),
        "feature_l1_bound must be given for mode 'worst_case'",
    ),
    (
        lambda: objp_sensitivity(
            np.full(2, 3.0), np.ones((2, 4)), n_total=9, mode="worst_case", feature_l1_bound=2.0
        ),
        "feature_l1_bound must be >= every",
    ),
    (
        lambda: iadmm_penalty(0, 0.1, **PENALTY_CONSTANTS["mnist"]),
        "t must be an integer >= 1; got 0",
    ),
    (
        lambda: iadmm_penalty(1.5, 0.1, **PENALTY_CONSTANTS["mnist"]),
        "t must be an integer >= 1; got 1.5",
    ),
    (
        lambda: outp_inverse_proximity(1, 0.1, 1.0, n_samples=10, n_params=4),
        r"delta must be in \(0, 1\); got 1.0",
    ),
    (
        lambda: outp_inverse_proximity(1, 0.1, 0.0, n_samples=10, n_params=4),
        r"delta must be in \(0, 1\); got 0.0",
    ),
    (
        lambda: outp_noise_std(0.1, sensitivity=1.0, outp_noise="sigma_sq"),
        "outp_noise must be one of",
    ),
    (lambda: wddp_noise_std(0.0, 1e-3, n_eff=10, n_iterations=5), r"epsilon must be in \(0, inf\]"),
    (lambda: wddp_noise_std(0.1, 2.0, n_eff=10, n_iterations=5), r"delta must be in \(0, 1\)"),
    (
        lambda: wddp_noise_std(0.1, 1e-3, n_eff=10, n_iterations=0),
        "n_iterations must be an integer >= 1; got 0",
    ),
    (lambda: wddp_noise_std(0.1, 1e-3, n_eff=10, n_iterations=5, c=-1), r"c must be in \(0, inf\)"),
    (
        lambda: wddp_effective_sample_size([3, 0], "wddp"),
        "party_sizes must be an integer >= 1; got 0",
    ),
    (lambda: wddp_effective_sample_size([3, 4], "mean"), "method must be one of"),
    (lambda: dvp_calibration(-0.1, **DVP_EXAMPLE), r"alpha must be in \(0, inf\]; got -0.1"),
    (lambda: dvp_calibration(0.1, dvp_zeta_mode="proof", **DVP_EXAMPLE), "dvp_zeta_mode must be one of"),
    (lambda: dvp_jacobian_budget(**{**DVP_EXAMPLE, "eta": 0.0}), r"eta must be in \(0, inf\)"),
    (lambda: pvp_noise_rate(0.0, rho=0.1, n_samples=10, c_r=1), r"alpha must be in \(0, inf\]"),
    (lambda: dzoa_total_epsilon(0.1, 1e-3, n_outer=0), "n_outer must be an integer >= 1; got 0"),
    (lambda: dzoa_total_epsilon(0.1, 1.5, n_outer=5), r"delta must be in \(0, 1\); got 1.5"),
    (
        lambda: dzoa_step_scale(0.0, 1e-3, n_neighbours=1, beta_c_sq_norm=0, **DZOA),
        r"epsilon must be in \(0, inf\]",
    ),
    (
        lambda: dzoa_epsilon_per_iteration(1.0, 1e-3, n_neighbours=1, beta_c_sq_norm=-1, **DZOA),
        r"beta_c_sq_norm must be in \[0, inf\)",
    ),
]


@pytest.mark.parametrize(
    ("call", "message"), INVALID_CALLS, ids=[message.split(" ")[0] for _, message in INVALID_CALLS]
)
def test_invalid_arguments_raise_value_error_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
