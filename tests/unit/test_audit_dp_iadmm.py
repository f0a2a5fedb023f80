"""The dp_iadmm privacy audit: determinism, the declared sensitivities on neighbouring pairs, planted bugs.

The grey-box tests run each noisy mechanism's pre-noise computation with the functions
``run_iadmm`` uses (``chunk_gradients`` and ``chunk_sensitivities`` for the Laplace noise of ObjP
and ObjT, which share it; the compiled ``fused_step`` without noise and ``outp_calibration`` for
OutP's Gaussian noise) on D and D' at the same state, and compare the distance in the norm the
calibration uses (L1 for Laplace, L2 for Gaussian) with the sensitivity it declares.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpdl.algorithms import dp_iadmm as iadmm
from dpdl.algorithms import dp_iadmm_kernel as kernel
from dpdl.algorithms.dp_iadmm_data import (
    DTYPE,
    chunk_gradients,
    chunk_loss_gradients,
    chunk_sensitivities,
    federated_data,
)
from dpdl.audit.bounds import epsilon_lower_bound
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX
from dpdl.privacy.dp_iadmm import objp_sensitivity
from dpdl.studies.dp_iadmm import audit

CELLS = {cell.name: cell for cell in audit.AUDIT_CELLS}
J, K = audit.SIDE * audit.SIDE, audit.CLASSES
STATES = 128  # local iterates z per neighbouring pair (the replica axis); 10 pairs -> 1,280 pairs in all


def _separation(samples) -> float:
    """Standardised mean difference of the scores on D and D'."""
    pooled = np.sqrt((samples.canary.var(ddof=1) + samples.neighbour.var(ddof=1)) / 2)
    return float((samples.canary.mean() - samples.neighbour.mean()) / pooled)


# --- the audit itself ---------------------------------------------------------------------------


def test_claims_and_cells_are_consistent() -> None:
    claims = {claim.id for claim in audit.PRIVACY_CLAIMS}
    assert claims == {f"dp_iadmm.privacy.{a}" for a in ("objp", "objt", "outp", "outp_authors_code")}
    assert {cell.claim for cell in audit.AUDIT_CELLS} == claims
    for cell in audit.AUDIT_CELLS:
        assert cell.iterations == 1 and cell.study == "dp_iadmm"
        if cell.algorithm == "outp":
            assert cell.delta == 1e-6 and cell.noise == "gaussian" and cell.accountant_epsilon > 0
        else:
            assert cell.delta == 0 and cell.accountant_epsilon is None
    # the variance-as-std reading spends more than claimed by the accountant's own count
    assert CELLS["outp_variance_eps1"].accountant_epsilon > 1 > CELLS["outp_sigma_eps1"].accountant_epsilon


@pytest.mark.parametrize("name", ["objt_eps1", "outp_sigma_eps1"])
def test_scores_are_a_function_of_cell_runs_and_seed(name) -> None:
    first, again, other = (audit.audit_scores(CELLS[name], 4, seed) for seed in (0, 0, 1))
    for kind in (BLACK_BOX, WHITE_BOX):
        np.testing.assert_array_equal(first[kind].canary, again[kind].canary)
        np.testing.assert_array_equal(first[kind].neighbour, again[kind].neighbour)
        assert not np.array_equal(first[kind].canary, other[kind].canary)


def test_bad_input_is_one_clear_value_error() -> None:
    cell = CELLS["objp_eps1"]
    with pytest.raises(ValueError, match="unknown dp_iadmm audit cell"):
        audit.audit_scores(dataclasses.replace(cell, name="objp_eps7"), 10, 0)
    for runs in (1, 0, 2.5, True):
        with pytest.raises(ValueError, match="runs must be an integer >= 2"):
            audit.audit_scores(cell, runs, 0)


@pytest.mark.parametrize(
    "name", ["objp_eps1", "objp_worst_case_eps1", "outp_sigma_eps1", "outp_variance_eps1"]
)
def test_the_runs_release_the_declared_mean_and_the_scale_the_code_uses(name) -> None:
    """The white box's model (float64 reference, calibration) matches run_iadmm's messages."""
    setup = audit._SETUPS[name]
    params = audit.run_params(setup)
    for dataset in audit.neighbours(setup, np.random.default_rng(5)).values():
        declared = audit.declared_release(params, dataset)
        values = np.concatenate(list(audit.released_messages(params, dataset, np.random.SeedSequence(7), 8)))
        noise = (values - declared.mean) / declared.scale  # 8 x 7,840 draws
        assert abs(noise.mean()) < 0.05
        if declared.family == "laplace":
            assert np.mean(np.abs(noise)) == pytest.approx(1.0, abs=0.03)  # E|Laplace(b)| = b
        else:
            sigma_over_declared = declared.scale if setup.switches["outp_noise"] == "variance" else 1.0
            assert noise.std() == pytest.approx(
                sigma_over_declared, rel=0.03
            )  # the code's std: sigma or sigma^2


# --- grey box: the declared sensitivities on >= 1,000 neighbouring pairs -----------------------


def _agent(pixels: np.ndarray) -> np.ndarray:
    return pixels.astype(np.float32) * np.float32(1.0 / audit.PIXEL_DIVISOR)


def _pairs(records: int, seed: int = 11) -> list[tuple[tuple, tuple]]:
    """Ten neighbouring (D, D') pairs of one agent: record 0 replaced, random and adversarial."""
    rng = np.random.default_rng(seed)
    pixels, labels = audit.synthetic_digits(rng, records + 8)
    base, spare, spare_labels = pixels[:records], pixels[records:], labels[records:]
    ones, zeros = np.full(J, 255, np.uint8), np.zeros(J, np.uint8)
    halves = (
        np.where(np.arange(J) < J // 2, 255, 0).astype(np.uint8),
        np.where(np.arange(J) >= J // 2, 255, 0),
    )
    y = labels[:records]
    flip = (y[0] + 1) % K
    replacements = [(spare[i], spare_labels[i], base[0], y[0]) for i in range(4)]  # random records
    replacements += [
        (ones, flip, base[0], y[0]),  # the audit's canary: max norm, other label
        (ones, y[0], base[0], y[0]),  # max norm, same label
        (base[0], flip, base[0], y[0]),  # the same digit with another label
        (zeros, flip, base[0], y[0]),  # an empty record
        (halves[0], flip, halves[1], y[0]),  # disjoint supports, other labels
        (ones, flip, ones, y[0]),  # max norm on both sides, label flipped
    ]
    pairs = []
    for x_d, y_d, x_n, y_n in replacements:
        d, n = base.copy(), base.copy()
        d[0], n[0] = x_d, x_n
        labels_d, labels_n = y.copy(), y.copy()
        labels_d[0], labels_n[0] = y_d, y_n
        pairs.append(((_agent(d), labels_d), (_agent(n), labels_n)))
    return pairs


def _states(seed: int = 3) -> np.ndarray:
    """STATES local iterates z (1, J, STATES, K): zero (t = 1) and random at several scales (later t)."""
    rng = np.random.default_rng(seed)
    scales = np.repeat([0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0], STATES // 8)
    return (rng.standard_normal((1, J, STATES, K)) * scales[None, None, :, None]).astype(DTYPE)


def _laplace_query(dataset, z: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """f'_p(z) (37) of a one-agent dataset at every state, and the Laplace sensitivity run_iadmm declares."""
    features, labels = dataset
    n = len(labels)
    data = federated_data(features, labels, np.array([0, n]), K, replicas=z.shape[2])
    (chunk,) = data.chunks
    gradient = np.zeros_like(z)
    residual_norms = chunk_gradients(chunk, z, np.array([1.0 / n]), iadmm.BETA, 1, gradient)  # (37), 1/I (2c)
    if mode == "eq20":
        declared = chunk_sensitivities(data, chunk, residual_norms)[0]  # (20)
    else:  # as run_iadmm computes the replace-one bound (note 7.3)
        declared = np.full(z.shape[2], objp_sensitivity(chunk.feature_l1[chunk.valid], np.zeros((n, 1)),
                           n_total=n, mode="worst_case", feature_l1_bound=J * 1.0))  # fmt: skip
    return gradient[0], declared


def _laplace_worst_ratio(mode: str, divisor: float = 1.0) -> float:
    """max over pairs, states and both directions of ||f'(D) - f'(D')||_1 / (declared on the run's dataset)."""
    z, worst = _states(), 0.0
    for on_d, on_n in _pairs(audit.RECORDS):
        (g_d, s_d), (g_n, s_n) = _laplace_query(on_d, z, mode), _laplace_query(on_n, z, mode)
        distance = np.abs(g_d.astype(np.float64) - g_n).sum(axis=(0, 2))  # L1, as (11a)-(11b) use
        worst = max(worst, float(np.max(distance / (np.minimum(s_d, s_n) / divisor))))
    return worst


def test_objp_objt_worst_case_sensitivity_holds_and_a_quarter_of_it_does_not() -> None:
    assert _laplace_worst_ratio("worst_case") <= 1.0
    assert _laplace_worst_ratio("worst_case", divisor=4.0) > 1.0


@pytest.mark.xfail(
    strict=True,
    reason="(20) is the largest gradient term among the agent's own records, not a replace-one bound: on these "
    "pairs ||f'(D) - f'(D')||_1 reaches 8.5 times the smaller side's Delta-bar (a max-norm record replacing a "
    "digit), and Delta-bar differs between D and D', so the noise scale shows the record (cells objp_eps*, objt_eps*)",
)
def test_objp_objt_eq20_sensitivity_holds() -> None:
    assert _laplace_worst_ratio("eq20") <= 1.0


def test_objp_objt_eq20_planted_quarter_sensitivity_is_exceeded() -> None:
    assert _laplace_worst_ratio("eq20", divisor=4.0) > 1.0


def _outp_worst_ratio(records: int, divisor: float = 1.0) -> float:
    """max over pairs and states of ||z-bar(D) - z-bar(D')||_2 / OutP's declared sensitivity (note 2.5).

    z-bar is the compiled kernel's prox step without noise at t = 1 (the audit's release) and, for
    the random states, as at a later iteration from the same z, lambda and w on both sides.
    """
    setup = audit._SETUPS["outp_sigma_eps1"]
    params = audit.run_params(setup)
    z = _states()
    rng = np.random.default_rng(4)
    lam = rng.standard_normal(z.shape).astype(DTYPE)
    w = rng.standard_normal(z.shape[1:]).astype(DTYPE)
    rho = params.penalty(1, params.epsilon)
    step = iadmm.fused_constants(params, 1, rho, None)
    inverse_eta, sensitivity, _ = iadmm.outp_calibration(params, 1, rho, np.array([records]), J * K)
    worst = 0.0
    for pair in _pairs(records):
        messages = []
        for features, labels in pair:
            data = federated_data(features, labels, np.array([0, records]), K, replicas=STATES)
            (chunk,) = data.chunks
            gradient, _ = chunk_loss_gradients(
                chunk, z, np.array([1.0 / records])
            )  # agent mean (note 7.5(c))
            new, sums = np.zeros_like(z), (np.zeros_like(w), np.zeros_like(w))
            kernel.fused_step(
                kernel.ALGORITHM_CODES["outp"], z.copy(), lam.copy(), w, gradient, chunk.feature_rows,
                np.float32(2 * params.beta), False, np.zeros((STATES, 0, 0, 0), DTYPE), np.zeros((0, STATES), DTYPE),
                step["rho"], step["inverse_rho"], step["radius"], inverse_eta.astype(DTYPE), step["objp_factor"],
                step["dual_rho"], new, *sums,
            )  # fmt: skip
            messages.append(new[0].astype(np.float64))
        distance = np.sqrt(((messages[0] - messages[1]) ** 2).sum(axis=(0, 2)))  # L2, as the Gaussian uses
        worst = max(worst, float(distance.max() / (sensitivity[0] / divisor)))
    return worst


def test_outp_sensitivity_holds_for_agents_of_40_records_and_a_quarter_of_it_does_not() -> None:
    # c1 = I_p bounds ||x (h - y)||_2 <= sqrt(784) sqrt(2) = 39.6 once I_p >= 40 (MNIST: 6,000)
    assert _outp_worst_ratio(40) <= 1.0
    assert _outp_worst_ratio(40, divisor=4.0) > 1.0


@pytest.mark.xfail(
    strict=True,
    reason="OutP's c1 = I_p (the authors' code) is no gradient bound below I_p = 40 for pixels in [0, 1]^784: with "
    "10 records ||z-bar(D) - z-bar(D')||_2 reaches 2.26 times the declared sensitivity (1.08 with 20; 8 of the 114 "
    "FEMNIST writers at hand have fewer than 40 samples)",
)
def test_outp_sensitivity_holds_for_agents_of_10_records() -> None:
    assert _outp_worst_ratio(10) <= 1.0


# --- planted bugs: 10 times less noise than declared ---------------------------------------------


def test_outp_with_a_tenth_of_the_noise_is_refuted_and_without_it_is_not(monkeypatch) -> None:
    cell = CELLS["outp_sigma_eps1"]
    clean = epsilon_lower_bound(audit.audit_scores(cell, 400, 0)[WHITE_BOX], cell.delta)
    declared = iadmm.outp_noise_std
    monkeypatch.setattr(iadmm, "outp_noise_std", lambda *args, **kwargs: declared(*args, **kwargs) / 10)
    planted = epsilon_lower_bound(audit.audit_scores(cell, 400, 0)[WHITE_BOX], cell.delta)
    assert clean.epsilon <= cell.claimed_epsilon < planted.epsilon


def test_objp_with_a_tenth_of_the_laplace_noise_separates_clearly_more(monkeypatch) -> None:
    # The canary's gradient difference spreads over 1,568 coordinates, so even 10x less Laplace noise
    # stays far from epsilon-bar-DP's worst case: the white box's separation grows, no bound exceeds 1.
    cell = CELLS["objp_label_only_eps1"]
    clean = _separation(audit.audit_scores(cell, 500, 0)[WHITE_BOX])
    declared = iadmm._laplace_scales
    monkeypatch.setattr(iadmm, "_laplace_scales", lambda *args: declared(*args) / 10)
    planted = _separation(audit.audit_scores(cell, 500, 0)[WHITE_BOX])
    assert planted > clean + 0.12 and planted > 0.15  # about 0.04 and 0.29 (3,000 runs); standard error 0.063
