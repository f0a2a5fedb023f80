"""dzoa's privacy audit (dpdl.studies.dzoa.audit): cells, determinism, declared sensitivities, planted bugs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpdl.algorithms import dzoa as dzoa_module
from dpdl.algorithms.dzoa_dpadmm import dp_admm
from dpdl.audit.bounds import epsilon_lower_bound
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX
from dpdl.data.lasso import generate
from dpdl.privacy import dp_iadmm as dp_iadmm_privacy
from dpdl.privacy import dzoa as dzoa_privacy
from dpdl.privacy.dp_iadmm import outp_noise_std, outp_sensitivity
from dpdl.privacy.dzoa import dzoa_sensitivity, dzoa_step_scale, dzoa_total_epsilon
from dpdl.studies.dzoa import audit, grid

VALUES = audit.study_values()
OPTIONS = audit.data_options()
K, N_K, P = OPTIONS["agents"], OPTIONS["samples_per_agent"], OPTIONS["features"]
CELLS = {cell.name: cell for cell in (*audit.AUDIT_CELLS, *audit.EXTRA_CELLS)}
DZOA_NOISE = "dzoa_eps0.95_delta0.001_at_sensitivity"
DPADMM_NOISE = "dpadmm_eps0.95_delta0.001_at_sensitivity"
PAIRS_PER_KIND = 400  # three kinds of neighbouring pairs: 1,200 per mechanism


def _scale(loss_scale: str) -> float:
    return grid.loss_scale({"loss_scale": loss_scale}, N_K)


def test_cells_name_their_claims_and_epsilons():
    claims = {claim.id for claim in audit.PRIVACY_CLAIMS}
    assert {cell.claim for cell in audit.AUDIT_CELLS} == claims  # every claim is audited
    assert len(CELLS) == len(audit.AUDIT_CELLS) + len(audit.EXTRA_CELLS)
    for cell in CELLS.values():
        assert cell.study == "dzoa" and cell.iterations == 1 and cell.noise == "gaussian"
        assert cell.algorithm in grid.ALGORITHMS and cell.delta in VALUES["deltas"]
        assert 0 < cell.accountant_epsilon < cell.claimed_epsilon  # the classical calibration is conservative
    total = CELLS["dzoa_eps0.15_delta0.001_extreme_total"]
    assert total.claimed_epsilon == pytest.approx(dzoa_total_epsilon(0.15, 1e-3, n_outer=200))  # (29)
    assert CELLS[DZOA_NOISE].claimed_epsilon == 0.95


def test_theorem_2_is_audited_within_the_premises_and_its_reach_is_the_declared_noises():
    """Theorem 2 has an audited cell within every premise (issue 58 item 4); at sensitivity the canary's loss under the
    declared noise is the accountant's epsilon of one release (Balle & Wang exact against the PLD grid)."""
    within = [c for c in audit.AUDIT_CELLS if c.claim == audit.TOTAL and all(c.premises.values())]
    assert [c.name for c in within] == ["dzoa_eps0.15_delta0.001_at_sensitivity_total"]
    for name in (DZOA_NOISE, DPADMM_NOISE):
        loss = audit.canary_loss(CELLS[name])
        assert loss.epsilon == pytest.approx(CELLS[name].accountant_epsilon, rel=1e-4)
        assert (
            1 < loss.divisor < 2
        )  # the classical calibration's slack: noise / 1.52 reaches the claimed 0.95
    # one release at eps 0.15's noise is far below the total 2.04: only noise divided by 18 or more reaches it
    theorem_2 = audit.canary_loss(within[0])
    assert theorem_2.epsilon < 0.1 < within[0].claimed_epsilon and 15 < theorem_2.divisor < 20


def test_bad_input_is_one_clear_error():
    cell = CELLS[DPADMM_NOISE]
    with pytest.raises(ValueError, match="unknown dzoa audit cell"):
        audit.audit_scores(dataclasses.replace(cell, name="nope"), 10, 0)
    for runs in (1, 0, -3, 2.5):
        with pytest.raises(ValueError, match="at least 2 runs"):
            audit.audit_scores(cell, runs, 0)


@pytest.mark.parametrize(("name", "runs"), [(DPADMM_NOISE, 50), ("dzoa_eps0.15_delta0.001_extreme_total", 3)])
def test_scores_are_a_function_of_cell_runs_and_seed(name, runs):
    cell = CELLS[name]
    first, again, other = (audit.audit_scores(cell, runs, seed) for seed in (7, 7, 8))
    assert set(first) == {BLACK_BOX, WHITE_BOX}
    for kind in first:
        assert first[kind].canary.size == first[kind].neighbour.size == runs
        np.testing.assert_array_equal(first[kind].canary, again[kind].canary)
        np.testing.assert_array_equal(first[kind].neighbour, again[kind].neighbour)
        assert not np.array_equal(first[kind].canary, other[kind].canary)


def test_canaries_are_neighbours_as_declared():
    X, y = audit.audit_data(VALUES)
    assert X.shape == (K, N_K, P) and np.all(np.linalg.norm(X, axis=-1) <= 1 + 1e-12)
    scale = _scale(VALUES["loss_scale"])
    for name in ("dzoa_eps0.95_delta0.001_extreme", DZOA_NOISE, DPADMM_NOISE):
        spec = audit._SPECS[name]
        (X_d, y_d), (X_n, y_n) = audit.neighbours(spec, VALUES, scale)
        np.testing.assert_array_equal(X_n, X)
        assert np.sum(np.any(X_d != X_n, axis=-1) | (y_d != y_n)) == 1  # one record differs (Definition 1)
        if spec.canary == "extreme":
            j = audit.replaced_record(X, y)
            assert np.linalg.norm(X_d[audit.CANARY_AGENT, j]) == pytest.approx(1.0)
            assert abs(y_d[audit.CANARY_AGENT, j]) == pytest.approx(np.max(np.abs(y)))
        else:  # the noiseless release moves by exactly the declared sensitivity
            moved = audit._noiseless(X_d, y_d, spec, VALUES, scale) - audit._noiseless(
                X_n, y_n, spec, VALUES, scale
            )
            assert np.linalg.norm(moved) == pytest.approx(audit.declared(spec, VALUES)[0], rel=1e-9)


def test_dpadmm_release_read_back_matches_the_five_agent_run():
    """Agent k alone at m = 1 releases what it releases in the study's 5-agent dp_admm call."""
    X, y = audit.audit_data(VALUES)
    inverse, noise = audit.dpadmm_schedule(0.95, 1e-3, VALUES)
    seeds = np.random.SeedSequence(3).spawn(K)
    alone = np.concatenate(
        [
            audit.dpadmm_releases(
                X[k][None],
                y[k][None],
                [seeds[k]],
                inverse_prox_step=inverse,
                noise_std=noise,
                values=VALUES,
                scale=1.0,
            )
            for k in range(K)
        ]
    )
    reference = np.linspace(-1.0, 1.0, P)
    full = dp_admm(
        X[None],
        y[None],
        reference[None],
        [[np.random.default_rng(seed) for seed in seeds]],
        penalty=np.array([audit.DPADMM_PENALTY]),
        inverse_prox_step=np.array([[inverse]]),
        noise_std=np.array([[noise]]),
        l1_weight=VALUES["eta"],
        loss_scale=1.0,
    )
    expected = full.error[0, 0, 1] * np.sum(reference**2)
    assert np.sum((alone - reference) ** 2) == pytest.approx(expected, rel=1e-10)


# ----------------------------------------------------------------- grey-box sensitivity (>= 1,000 pairs)


def _neighbouring_pairs(seed: int):
    """Agent datasets (B, N_k, P) and (B, N_k) of D and D', each pair differing in one record.

    Three kinds, PAIRS_PER_KIND each, on fresh draws of the study's data: a random record (features
    uniform in the unit ball, label uniform in the data's range), the extreme canary of the audit
    (unit norm, opposite direction, the data's largest |label|), and a random unit vector with a
    label of the data's largest magnitude and a random sign.
    """
    rng = np.random.default_rng(seed)
    n = 3 * PAIRS_PER_KIND
    data = generate(trials=n // K + 1, seed=seed, **OPTIONS)
    X_n = data["X"].reshape(-1, K, N_K, P).reshape(-1, N_K, P)[:n]
    y_n = data["y"].reshape(-1, K, N_K).reshape(-1, N_K)[:n]
    agent = np.arange(n) % K
    rows = np.arange(n)
    j = rng.integers(N_K, size=n)
    y_max = np.max(np.abs(data["y"]), axis=1).repeat(K)[:n]
    direction = rng.standard_normal((n, P))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    x_new = direction * rng.uniform(0, 1, size=(n, 1)) ** (1 / P)
    y_new = rng.uniform(-1, 1, size=n) * y_max
    extreme = slice(PAIRS_PER_KIND, 2 * PAIRS_PER_KIND)
    old = X_n[rows, j]
    x_new[extreme] = (
        -np.sign(y_n[rows, j])[extreme, None] * old[extreme] / np.linalg.norm(old[extreme], axis=1)[:, None]
    )
    y_new[extreme] = y_max[extreme]
    unit = slice(2 * PAIRS_PER_KIND, n)
    x_new[unit] = direction[unit]
    y_new[unit] = np.where(rng.random(PAIRS_PER_KIND) < 0.5, -1, 1) * y_max[unit]
    X_d, y_d = X_n.copy(), y_n.copy()
    X_d[rows, j], y_d[rows, j] = x_new, y_new
    return X_d, y_d, X_n, y_n, agent


def _dzoa_ratios(loss_scale: str, seed: int = 5) -> np.ndarray:
    """||beta_breve_D - beta_breve_D'|| / Delta_k of (24) on every pair, at m = 1 and after a random history."""
    X_d, y_d, X_n, y_n, agent = _neighbouring_pairs(seed)
    degree = audit._degree(VALUES)[agent]
    history = np.random.default_rng(seed).normal(0, 30, size=(len(agent), P))  # gamma_k - rho v_k
    history[::2] = 0.0  # every other pair at m = 1
    ratios = np.empty(len(agent))
    for d in np.unique(degree):
        at = degree == d
        update = [
            audit.exact_update(
                Xs[at], ys[at], degree=int(d), values=VALUES, scale=_scale(loss_scale), history=history[at]
            )
            for Xs, ys in ((X_d, y_d), (X_n, y_n))
        ]
        declared = dzoa_sensitivity(rho=VALUES["rho"], n_neighbours=int(d), n_samples=N_K)
        ratios[at] = np.linalg.norm(update[0] - update[1], axis=1) / declared
    return ratios


def _dpadmm_ratios(loss_scale: str, seed: int = 6) -> np.ndarray:
    """||w_D - w_D'|| / Delta_1 of DP-ADMM's noise-free first local step on every pair."""
    X_d, y_d, X_n, y_n, _ = _neighbouring_pairs(seed)
    inverse, _ = audit.dpadmm_schedule(0.95, 1e-3, VALUES)
    step = [
        audit.dpadmm_releases(
            Xs, ys, None, inverse_prox_step=inverse, noise_std=0.0, values=VALUES, scale=_scale(loss_scale)
        )
        for Xs, ys in ((X_d, y_d), (X_n, y_n))
    ]
    declared = outp_sensitivity(audit.DPADMM_PENALTY, inverse, n_samples=N_K, c1=grid.GRADIENT_BOUND)
    return np.linalg.norm(step[0] - step[1], axis=1) / declared


# Measured (seeds 5 and 6, 1,200 pairs each; under loss_scale sum every pair exceeds, the least by 2.1x):
# the declared sensitivities assume ||grad l|| <= c1 = 1 (Assumption 3), which the squared loss on the
# paper's data (|y| up to ~10) violates (note 3.6); under sum the per-record loss is not divided by N_k either.
_DZOA_FAILS = (
    "Lemma 3's Delta_k = c1/(rho |N_k| N_k) does not hold: worst measured/declared {} under loss_scale {}"
)
_DPADMM_FAILS = (
    "DP-ADMM's Delta = 2 c1/(N_k (1/eta + rho)) does not hold: worst measured/declared {} under loss_scale {}"
)


@pytest.mark.parametrize(
    "loss_scale",
    [
        pytest.param("sum", marks=pytest.mark.xfail(strict=True, reason=_DZOA_FAILS.format(318, "sum"))),
        pytest.param("mean", marks=pytest.mark.xfail(strict=True, reason=_DZOA_FAILS.format(22.7, "mean"))),
    ],
)
def test_dzoa_declared_sensitivity_holds(loss_scale):
    assert np.max(_dzoa_ratios(loss_scale)) <= 1 + 1e-9


@pytest.mark.parametrize(
    "loss_scale",
    [
        pytest.param("sum", marks=pytest.mark.xfail(strict=True, reason=_DPADMM_FAILS.format(432, "sum"))),
        pytest.param("mean", marks=pytest.mark.xfail(strict=True, reason=_DPADMM_FAILS.format(21.6, "mean"))),
    ],
)
def test_dpadmm_declared_sensitivity_holds(loss_scale):
    assert np.max(_dpadmm_ratios(loss_scale)) <= 1 + 1e-9


def test_sensitivity_check_can_pass_and_fail():
    """At-sensitivity pairs meet the declared bound exactly; a planted Delta / 4 is exceeded on the 1,200 pairs."""
    scale = _scale(VALUES["loss_scale"])
    for name in (DZOA_NOISE, DPADMM_NOISE):
        spec = audit._SPECS[name]
        (X_d, y_d), (X_n, y_n) = audit.neighbours(spec, VALUES, scale)
        moved = audit._noiseless(X_d, y_d, spec, VALUES, scale) - audit._noiseless(
            X_n, y_n, spec, VALUES, scale
        )
        declared = audit.declared(spec, VALUES)[0]
        assert np.linalg.norm(moved) / declared <= 1 + 1e-9
        assert np.linalg.norm(moved) / (declared / 4) > 1
    for ratios in (_dzoa_ratios("sum"), _dpadmm_ratios("sum")):
        assert ratios.size >= 1000 and np.max(ratios * 4) > 1


# ------------------------------------------------------------------------------------ planted bugs


def test_planted_small_dpadmm_noise_is_refuted(monkeypatch):
    """DP-ADMM at the declared sensitivity: not refuted; with 10x less noise than declared, refuted."""
    cell = CELLS[DPADMM_NOISE]
    honest = epsilon_lower_bound(audit.audit_scores(cell, 400, 0)[WHITE_BOX], cell.delta)
    real = outp_noise_std
    monkeypatch.setattr(
        dp_iadmm_privacy, "outp_noise_std", lambda *args, **kwargs: real(*args, **kwargs) / 10
    )
    for kind, samples in audit.audit_scores(cell, 400, 0).items():
        assert epsilon_lower_bound(samples, cell.delta).epsilon > cell.claimed_epsilon, kind
    assert honest.epsilon <= cell.claimed_epsilon


def _mu(cell, runs: int) -> float:
    """The white-box scores' standardised mean difference (the Gaussian-DP mu of Dong, Roth & Su)."""
    samples = audit.audit_scores(cell, runs, 1)[WHITE_BOX]
    spread = np.sqrt((samples.canary.var(ddof=1) + samples.neighbour.var(ddof=1)) / 2)
    return float((samples.canary.mean() - samples.neighbour.mean()) / spread)


def test_planted_small_dzoa_perturbation_separates_more(monkeypatch):
    """D-ZOA with its zeroth-order perturbation shrunk 10x around the exact update: the scores separate ~10x more."""
    cell = CELLS[DZOA_NOISE]
    honest = _mu(cell, 25)
    real, k = dzoa_module.dzoa, audit.CANARY_AGENT
    degree = int(audit._degree(VALUES)[k])

    def shrunk(X, y, *args, **kwargs):
        result = real(X, y, *args, **kwargs)
        exact = audit.exact_update(X[:, k], y[:, k], degree=degree, values=VALUES, scale=kwargs["loss_scale"])
        beta = result.beta.copy()
        beta[0, :, k] = exact + (beta[0, :, k] - exact) / 10
        return dataclasses.replace(result, beta=beta)

    monkeypatch.setattr(dzoa_module, "dzoa", shrunk)
    assert _mu(cell, 25) > 5 * honest > 0


def test_dzoa_smaller_step_gives_more_perturbation_not_less(monkeypatch):
    """A finding: (27) models the noise std as growing with alpha0 R, but a 10x smaller step leaves more noise."""
    cell = CELLS[DZOA_NOISE]
    honest = _mu(cell, 25)
    real = dzoa_step_scale
    monkeypatch.setattr(dzoa_privacy, "dzoa_step_scale", lambda *args, **kwargs: real(*args, **kwargs) / 10)
    assert _mu(cell, 25) < honest / 2
