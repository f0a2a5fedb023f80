"""wddp's privacy audit (dpdl.studies.wddp.audit): cells, determinism, declared sensitivities, planted bugs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from dpdl.algorithms import wddp as algo
from dpdl.audit.bounds import epsilon_lower_bound, gaussian_dp_epsilon, gaussian_dp_fit
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX
from dpdl.privacy.wddp import METHODS, wddp_effective_sample_size, wddp_sensitivity
from dpdl.studies.wddp import audit
from dpdl.studies.wddp import run as study_run

ROOT = Path(__file__).resolve().parents[2]

CELLS = {cell.name: cell for cell in audit.AUDIT_CELLS}
PER_ROUND = "wddp_per_round_m4_eps0.25_T10_mirrored"
ONE_SHOT = "wddp_one_shot_m4_eps0.25_T10_mirrored"
ONE_SHOT_32 = "wddp_one_shot_m32_eps0.25_T10_mirrored"
FLIPPED = "wddp_per_round_m4_eps0.25_T10_flipped"
PARTY_DRAWS = "wddp_per_round_m32_eps0.25_T10_mirrored_party_draws"
CONSTRUCTED = "wddp_one_shot_m32_eps0.25_T10_constructed"
PAIRS_PER_KIND = 300  # four kinds of neighbouring pairs: 1,200 per mechanism
N, P, M = 64, 5, 4  # the sensitivity tests' datasets: 64 records, 5 features, 4 parties of uneven sizes


def test_cells_name_the_claim_and_the_whole_run():
    assert {cell.claim for cell in audit.AUDIT_CELLS} == {claim.id for claim in audit.PRIVACY_CLAIMS}
    for cell in audit.AUDIT_CELLS:
        assert cell.study == "wddp" and cell.algorithm == "wddp" and cell.noise == "gaussian"
        assert cell.iterations == audit.ITERATIONS and cell.delta == 1e-3
        assert cell.claimed_epsilon == 0.25  # the grid's largest epsilon, a total for the T-round run
        assert cell.switches["aggregation"] in ("per_round", "one_shot")
    # per round: the closed-form calibration (gap A3) is conservative, and theta^(c) is as private as the run
    assert 0 < CELLS[PER_ROUND].accountant_epsilon < 0.25
    assert audit.final_model_epsilon(audit._SPECS[PER_ROUND]) == pytest.approx(
        CELLS[PER_ROUND].accountant_epsilon
    )
    # one shot (Algorithm 1 as printed) overspends: the run's accountant, and theta^(c) alone
    for name in (ONE_SHOT, ONE_SHOT_32):
        final = audit.final_model_epsilon(audit._SPECS[name])
        assert 0.25 < final < CELLS[name].accountant_epsilon


def test_bad_input_is_one_clear_error():
    cell = CELLS[PER_ROUND]
    with pytest.raises(ValueError, match="unknown wddp audit cell"):
        audit.audit_scores(dataclasses.replace(cell, name="nope"), 10, 0)
    for runs in (1, 0, -3, 2.5, True):
        with pytest.raises(ValueError, match="at least 2 runs"):
            audit.audit_scores(cell, runs, 0)


@pytest.mark.parametrize("name", [PER_ROUND, ONE_SHOT_32])
def test_scores_are_a_function_of_cell_runs_and_seed(name):
    cell = CELLS[name]
    first, again, other = (audit.audit_scores(cell, 20, seed) for seed in (7, 7, 8))
    assert set(first) == {BLACK_BOX, WHITE_BOX}
    for kind in first:
        assert first[kind].canary.size == first[kind].neighbour.size == 20
        np.testing.assert_array_equal(first[kind].canary, again[kind].canary)
        np.testing.assert_array_equal(first[kind].neighbour, again[kind].neighbour)
        assert not np.array_equal(first[kind].canary, other[kind].canary)


@pytest.mark.parametrize("name", list(CELLS))
def test_canaries_are_neighbours_and_move_the_gradient_as_declared(name):
    spec = audit._SPECS[name]
    (x_d, y_d), (x_n, y_n) = audit.neighbours(spec)
    assert np.sum(np.any(x_d != x_n, axis=1) | (y_d != y_n)) == 1  # replace one record (Section 1.1)
    assert np.linalg.norm(x_d, axis=1).max() <= 1 + 1e-12 and np.linalg.norm(x_n, axis=1).max() <= 1 + 1e-12
    assert set(np.unique(np.concatenate([y_d, y_n]))) <= {0.0, 1.0}
    sizes = [len(shard) for shard in audit.shards(spec)]
    assert sum(sizes) == audit.N_ROWS and len(set(sizes)) == 1 and len(sizes) == spec.clients
    weights = algo.record_weights("wddp", audit.shards(spec), audit.N_ROWS)
    theta0 = audit.start(spec)[:, None]
    change = np.linalg.norm(
        algo.weighted_gradient(theta0, x_d, y_d, weights) - algo.weighted_gradient(theta0, x_n, y_n, weights)
    )
    declared = wddp_sensitivity(audit.N_ROWS, study_run.LIPSCHITZ)
    if spec.canary == "mirrored":  # a saturated mirror pair: nearly the whole declared 2G/n
        assert 0.99 <= change / declared <= 1.0
    else:  # a flipped label moves the gradient by ||x|| / n = G / n at every theta
        assert change / declared == pytest.approx(0.5, rel=1e-12)


# ----------------------------------------------------------------- grey-box sensitivity (>= 1,000 pairs)


def _pairs(seed: int):
    """PAIRS_PER_KIND pairs of each kind: (x_D, y_D, x_D', y_D', theta, row, shards) per pair.

    Kinds: a random record replaced by a random record (features in the unit ball, random labels);
    a unit-norm record with its label flipped; a saturated mirror pair (the audit's canary, at a
    random direction, theta of norm 10-1000); a unit-norm record replaced by its antipode, same
    label. theta ranges over norms 0.01 to 1000; the parties have uneven sizes (u = 3), and the
    replaced record sits in a random party.
    """
    rng = np.random.default_rng(seed)
    shards = study_run.partition("sensitivity", N, "unevenness", M, seed, unevenness=3)
    for kind in range(4):
        for _ in range(PAIRS_PER_KIND):
            x = rng.standard_normal((N, P))
            x *= rng.uniform(0, 1, size=(N, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
            y = rng.integers(0, 2, N).astype(float)
            theta = rng.standard_normal(P) * 10.0 ** rng.uniform(-2, 3)
            row = int(rng.integers(N))
            x_n, y_n = x.copy(), y.copy()
            unit = rng.standard_normal(P)
            unit /= np.linalg.norm(unit)
            if kind == 0:
                x[row] = unit * rng.uniform() ** (1 / P)
                y[row] = float(rng.integers(2))
            elif kind == 1:
                x[row] = x_n[row] = unit
                y_n[row], y[row] = 0.0, 1.0
            elif kind == 2:
                radius = 10.0 ** rng.uniform(1, 3)
                u = theta / np.linalg.norm(theta)
                v = unit - (unit @ u) * u
                v /= np.linalg.norm(v)
                sin = min(rng.uniform(3, 12) / radius, 0.5)
                theta = radius * u
                x[row], y[row] = np.sqrt(1 - sin**2) * v + sin * u, 0.0
                x_n[row], y_n[row] = np.sqrt(1 - sin**2) * v - sin * u, 1.0
            else:
                x[row], x_n[row] = unit, -unit
                y[row] = y_n[row]
            yield x, y, x_n, y_n, theta[:, None], row, shards


def _aggregate_ratios(method: str, seed: int = 11) -> np.ndarray:
    """||sum_i w_i grad l_i (D) - (D')|| / 2G/N_eff for the per-round aggregate of ``method`` (eq. 4), per pair."""
    ratios = []
    for x, y, x_n, y_n, theta, _, shards in _pairs(seed):
        weights = algo.record_weights(method, shards, N)
        moved = algo.weighted_gradient(theta, x, y, weights) - algo.weighted_gradient(
            theta, x_n, y_n, weights
        )
        sizes = [len(shard) for shard in shards]
        declared = wddp_sensitivity(wddp_effective_sample_size(sizes, method), study_run.LIPSCHITZ)
        ratios.append(np.linalg.norm(moved) / declared)
    return np.array(ratios)


def _local_ratios(against: str, seed: int = 12) -> np.ndarray:
    """||grad L_{D_j}(D) - grad L_{D_j}(D')|| of the canary's party (Algorithm 1 line 5), over a declared bound.

    ``against``: "accountant" (2G/n_(1), what ``run.privacy_events`` charges a one-shot run) or
    "calibration" (2G/n, the sensitivity sigma of eq. (3) is calibrated to, whatever the aggregation).
    """
    ratios = []
    for x, y, x_n, y_n, theta, row, shards in _pairs(seed):
        shard = next(shard for shard in shards if row in shard)
        weights = np.full(len(shard), 1.0 / len(shard))  # as one_shot_descent weights a party's records
        moved = algo.weighted_gradient(theta, x[shard], y[shard], weights) - algo.weighted_gradient(
            theta, x_n[shard], y_n[shard], weights
        )
        sizes = [len(s) for s in shards]
        n_eff = min(sizes) if against == "accountant" else sum(sizes)
        ratios.append(np.linalg.norm(moved) / wddp_sensitivity(n_eff, study_run.LIPSCHITZ))
    return np.array(ratios)


@pytest.mark.parametrize("method", METHODS)
def test_per_round_declared_sensitivity_holds_and_the_check_can_fail(method):
    ratios = _aggregate_ratios(method)
    assert ratios.size >= 1000
    assert np.max(ratios) <= 1 + 1e-9  # 2G / N_eff holds (measured worst: 0.99992)
    assert np.max(ratios * 4) > 1  # a planted 2G / (4 N_eff) is exceeded


def test_one_shot_local_steps_meet_the_accountants_sensitivity():
    ratios = _local_ratios("accountant")
    assert ratios.size >= 1000 and np.max(ratios) <= 1 + 1e-9 and np.max(ratios * 4) > 1


# Measured (seed 12, 1,200 pairs): worst ratio 7.9993 (saturated mirror pair in a party of 8), sizes 8, 8, 24, 24.
@pytest.mark.xfail(
    strict=True,
    reason="one_shot: a party's local gradient moves by up to 2G/n_j, but sigma of eq. (3) is calibrated to 2G/n: "
    "worst measured/declared 8.00 (n / n_(1) = 8 for these sizes)",
)
def test_one_shot_local_steps_meet_the_calibrations_sensitivity():
    assert np.max(_local_ratios("calibration")) <= 1 + 1e-9


def test_one_shot_average_carries_less_noise_than_eq4():
    """One round of Algorithm 1 as printed: theta^(c)'s noise is eta sigma sqrt(sum w_j^2), not eq. (4)'s eta sigma."""
    spec = dataclasses.replace(audit._SPECS[ONE_SHOT], clients=8)
    data = audit.neighbours(spec)[1]
    sigma, sizes = audit.declared_noise(spec)
    seeds = np.random.SeedSequence(4).spawn(4000)
    noisy = audit.released_models(spec, data, sigma, seeds, [1])[0]
    exact = audit.released_models(spec, data, 0.0, seeds[:1], [1])[0]
    spread = np.std(noisy - exact, axis=1, ddof=1) / (audit.STEP_SIZE * sigma)
    weights = sizes / sizes.sum()
    np.testing.assert_allclose(spread, np.sqrt(np.sum(weights**2)), rtol=0.05)  # 1 / sqrt(8) of eq. (4)'s


# ------------------------------------------------------------------------------------ planted bugs


def _eps_lb(name: str, runs: int) -> dict[str, float]:
    cell = CELLS[name]
    return {
        kind: epsilon_lower_bound(s, cell.delta).epsilon
        for kind, s in audit.audit_scores(cell, runs, 0).items()
    }


@pytest.mark.parametrize("name", [PER_ROUND, ONE_SHOT])
def test_planted_small_noise_is_refuted(monkeypatch, name):
    """10x less noise than declared (the descent's draws scaled down): eps_LB exceeds the claim; honest: not."""
    claimed = CELLS[name].claimed_epsilon
    honest = _eps_lb(name, 2000)
    real = algo._noise_block
    monkeypatch.setattr(algo, "_noise_block", lambda rngs, shape: real(rngs, shape) / 10)
    planted = _eps_lb(name, 2000)
    for kind in (BLACK_BOX, WHITE_BOX):
        assert honest[kind] <= claimed < planted[kind], (kind, honest, planted)


def test_the_constructed_canary_moves_the_gradient_by_g_over_n_whatever_the_data_and_theta(monkeypatch):
    """x = e_1 with its label flipped: the per-record gradient changes by exactly -e_1 at every theta (eq. (17)), and
    the record is the same whatever the data draw."""
    spec = audit._SPECS[CONSTRUCTED]
    (x_d, y_d), (x_n, y_n) = audit.neighbours(spec)
    weights = algo.record_weights("wddp", audit.shards(spec), audit.N_ROWS)
    thetas = np.random.default_rng(3).standard_normal((audit.FEATURES, 50)) * np.logspace(-2, 3, 50)
    change = algo.weighted_gradient(thetas, x_d, y_d, weights) - algo.weighted_gradient(
        thetas, x_n, y_n, weights
    )
    np.testing.assert_allclose(
        change, -np.eye(audit.FEATURES)[:, :1] / audit.N_ROWS * np.ones(50), atol=1e-15
    )
    row = int(audit.shards(spec)[audit.CANARY_PARTY][0])
    other = (
        np.random.default_rng(99).uniform(-0.4, 0.4, (audit.N_ROWS, audit.FEATURES)),
        np.zeros(audit.N_ROWS),
    )
    monkeypatch.setattr(audit, "audit_data", lambda: other)
    (x_other, _), _ = audit.neighbours(spec)
    np.testing.assert_array_equal(x_other[row], x_d[row])


def test_per_party_draws_per_round_carry_the_averaged_noise_and_meet_the_canary_loss():
    """Per round with per-party draws: the white-box Gaussian-DP mu is the canary's sqrt(T) shift / (sigma sqrt(sum
    w_j^2)), sqrt(32) times the one-draw cell's (the reach's Gaussian loss is this mu's epsilon)."""
    cell, spec = CELLS[PARTY_DRAWS], audit._SPECS[PARTY_DRAWS]
    sigma, sizes = audit.declared_noise(spec)
    assert audit.noise_weight(spec, sizes) == pytest.approx(1 / np.sqrt(32))
    loss = audit.canary_loss(cell)
    expected_mu = np.sqrt(audit.ITERATIONS) * np.linalg.norm(audit._gradient_change(spec)) / audit.N_ROWS
    expected_mu /= sigma * audit.noise_weight(spec, sizes)
    assert loss.epsilon == pytest.approx(gaussian_dp_epsilon(expected_mu, cell.delta), rel=1e-6)
    fit = gaussian_dp_fit(audit.audit_scores(cell, 4000, 5)[WHITE_BOX], cell.delta)
    assert abs(fit.mu - expected_mu) < 4 * np.sqrt(2 / 4000 + expected_mu**2 / 16000)
    assert cell.accountant_epsilon == pytest.approx(audit.final_model_epsilon(spec))
    assert "per-party noise draws" in " ".join(cell.project_premises)
    assert "one noise draw on the aggregate" in " ".join(CELLS[PER_ROUND].project_premises)


def test_white_box_matches_the_declared_noise():
    """Honest per-round run: the white-box LLR has Gaussian-DP mu near the declared 2G/n (sqrt(T) / multiplier)."""
    cell = CELLS[PER_ROUND]
    sigma, _ = audit.declared_noise(audit._SPECS[PER_ROUND])
    declared_mu = np.sqrt(audit.ITERATIONS) * wddp_sensitivity(audit.N_ROWS) / sigma
    fit = gaussian_dp_fit(audit.audit_scores(cell, 4000, 2)[WHITE_BOX], cell.delta)
    assert abs(fit.mu - 0.997 * declared_mu) < 4 * np.sqrt(2 / 4000)


def test_each_reading_selects_the_cells_of_its_own_mechanism() -> None:
    # issue 58 item 6: the default (per-round, one draw on the aggregate) is judged on the per-round cells without
    # per-party draws; the reading one_shot on the one-shot cells; the per-party per-round cell on neither.
    from dpdl.config import load_config
    from dpdl.readings import reading_mechanisms

    mechanisms = reading_mechanisms("wddp", load_config(ROOT / "config" / "config.yaml"))
    runs = {
        name: {c.name for c in audit.AUDIT_CELLS if all(c.switches.get(k) == v for k, v in values.items())}
        for name, (values, _) in mechanisms.items()
    }
    assert runs["default"] and all("per_round" in c and "party_draws" not in c for c in runs["default"])
    assert runs["one_shot"] and all("one_shot" in c for c in runs["one_shot"])
    assert not any("party_draws" in c for cells in runs.values() for c in cells)
