"""dzoa's privacy audit: the first estimate an agent shares, run many times on neighbouring datasets.

Threat model (Section III-D): the adversary, a network member or an eavesdropper, sees every
shared local estimate beta_k^(m) (D-ZOA) or every perturbed primal w~_k^(m) (DP-ADMM, Section
I-B), never the data. Both papers state privacy per iteration, so each cell audits the first
release of the canary's agent, m = 1, from the known start (beta = gamma = 0, w~ = z = lambda = 0),
where the noiseless mean of the release is computable: D-ZOA's exact local ADMM update
beta_breve_k^(1) ((16)/(18); Lemma 1 models beta_k^(m) ~ N(beta_breve_k^(m), sigma_k^2 I), (21),
(25)), DP-ADMM's noise-free local step (note 4.3). A Theorem 2 cell audits the same first release
against the total epsilon-bar of (29): it is a post-processing of the whole run, so a lower bound
on its epsilon bounds the run's.

Data: trial 0 of the study's own lasso data (``dpdl.data.lasso``, the config's defaults: K = 5,
N_k = 20, P = 10, rows of norm <= 1). D' is that data; D replaces one record of agent
``CANARY_AGENT`` by the canary: ``extreme`` (a unit-norm feature vector opposite to the replaced
record's, with the data's largest |label|) or ``at_sensitivity`` (the same features, the label
moved until the noiseless release moves by exactly the declared sensitivity: Lemma 3's Delta_k
(24) for D-ZOA, Delta_1 = 2 c1 / (N_k (1/eta_1 + rho)) for DP-ADMM), which tests the noise alone.
Everything runs through the study's code: ``dpdl.algorithms.dzoa.dzoa`` with the step constants
of ``tune.step_scales`` ((27) inverted), ``dpdl.algorithms.dzoa_dpadmm.dp_admm`` with
``run.dpadmm_schedules``, and the study's config defaults (``dpdl/schemas/dzoa.schema.yaml``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from dpdl import schemas
from dpdl.algorithms import dzoa as dzoa_algorithm
from dpdl.algorithms import dzoa_dpadmm
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX, AuditCell, AuditSamples, PrivacyClaim
from dpdl.audit.data_premises import DataPremise
from dpdl.audit.premises import Premise, differing_records
from dpdl.audit.reach import CanaryLoss, gaussian_canary
from dpdl.data import lasso as lasso_data
from dpdl.models import lasso
from dpdl.privacy.accounting import PrivacyEvent, composed_epsilon
from dpdl.privacy.dp_iadmm import outp_sensitivity
from dpdl.privacy.dzoa import dzoa_noise_std, dzoa_sensitivity, dzoa_total_epsilon
from dpdl.privacy.theorems import classical_gaussian_noise_multiplier
from dpdl.studies.dzoa import grid, tune
from dpdl.studies.dzoa._dpadmm import dpadmm_schedules
from dpdl.studies.dzoa._inputs import split_agents

CANARY_AGENT = 1  # 0-indexed: agent 2, degree 2 on the default ring_chord graph (note 1.1)
DATA_SEED = 0  # the data of trial 0 under data.lasso's default seed 0
# DP-ADMM's (rho_DP, eta0) the published study tuned at eps 0.95, delta 1e-3
# (published/dzoa/aggregates/dpadmm_tuning.csv). At m = 1 the audit does not depend on them: the
# mean shift and the noise std both scale with 1 / (1/eta_1 + rho_DP) (note 4.3).
DPADMM_PENALTY, DPADMM_PROX_STEP = 10.0, 0.3
REFERENCE_STEP = 1.0  # h: dp_admm's error against beta_c = +-h e_p gives the release exactly
CHUNK = 2  # D-ZOA runs per call (dzoa's work arrays grow as runs x K x T x (P+1) x PJ)

PER_ITERATION, TOTAL, BASELINE = "dzoa.privacy.dzoa", "dzoa.privacy.dzoa_total", "dzoa.privacy.dpadmm"
PRIVACY_CLAIMS = (
    PrivacyClaim(
        PER_ITERATION,
        grid.STUDY,
        "Theorem 1, (25)-(26), with Lemma 1 (21) and Corollary 1 (27); Section IV-C (HTML version: no pages)",
        "'Under Assumption 3, at each iteration of D-ZOA, (epsilon, delta)-differential privacy is "
        "guaranteed': Pr[beta_k,D^(m)] <= e^epsilon Pr[beta_k,D'^(m)] + delta for datasets "
        "differing in one sample (26), the intrinsic zeroth-order perturbation of the shared "
        "beta_k^(m) being N(0, sigma_k^2 I) with sigma_k = c1 sqrt(2.1 log(1.25/delta)) / (rho "
        "|N_k| N_k epsilon) (25); alpha0 is set by (27), no noise is added",
    ),
    PrivacyClaim(
        TOTAL,
        grid.STUDY,
        "Theorem 2, (28)-(29); Section IV-D (HTML version: no pages)",
        "'Under Assumption 3, Algorithm 1 guarantees (epsilon-bar, delta)-differential privacy' "
        "over its M outer iterations, epsilon-bar = epsilon sqrt(M log(1/delta) / (1.05 "
        "log(1.25/delta))) (29), by the moments accountant 'in the same way as in [23, Theorem 2]'",
    ),
    PrivacyClaim(
        BASELINE,
        grid.STUDY,
        "Abstract and Section VI (DP-ADMM [23] at the same epsilon, delta as D-ZOA); "
        "calibration notes/dzoa.md 4.3-4.4",
        "DP-ADMM 'achieves differential privacy by adding noise to the primal variables' (Section "
        "I-B), D-ZOA 'yielding the same privacy guarantee' (abstract): each released w~_i^(m) = "
        "w_i^(m) + N(0, sigma_m^2 I), sigma_m = Delta_m sqrt(2.1 ln(1.25/delta)) / epsilon, "
        "Delta_m = 2 c1 / (N_i (1/eta_m + rho)), is (epsilon, delta)-DP",
    ),
)


# The papers' stated assumptions (issue 58's premise ledger), each measured on a cell's canary pair
# by premise_measures. Assumption 3 bounds every per-record loss gradient by c1, so one replaced
# record changes the gradient by at most 2 c1: the only use Lemma 3 (24) and DP-ADMM's Delta (note
# 4.3) make of it, measured here at the audited point beta = 0 (every cell audits the first release
# from the known start). Whether the paper's own records satisfy ||grad l|| <= c1 is a claim about
# the data, not about a canary pair (issue 58, item 3). The switches that change what an audited
# cell releases (its step sizes, noise and mixing): a reading that sets one (mean_loss, lipschitz_2,
# lipschitz_5, ring) is judged on cells run with its value (issue 58 item 6).
MECHANISM_SWITCHES = ("loss_scale", "lipschitz", "topology")


def mechanism(section: dict) -> dict:
    """The switch values of a dzoa config section, as the audited cells record them.

    A build with this section releases with them.
    """
    return {key: section[key] for key in MECHANISM_SWITCHES}


PREMISES = (
    Premise(
        "record_norm",
        "rows of norm at most 1",
        "Section VI",
        "'The data are preprocessed by ... normalizing the rows to enforce their l2-norm to be less than 1'",
        1.0,
        "the largest l2 norm of the replaced record on D and on D'",
    ),
    Premise(
        "gradient_bound",
        "gradient bound c1 = 1 (Assumption 3)",
        "Assumption 3, Lemma 3 (24) and Section VI",
        "'Under Assumption 3 ...' (Theorem 1); Section VI: 'Therefore, we have c1 = 1'",
        2.0 * grid.GRADIENT_BOUND,
        "||grad l(x_D, y_D; 0) - grad l(x_D', y_D'; 0)|| for the per-record loss l = (x'beta - "
        "y)^2 at the audited start beta = 0, against 2 c1",
    ),
    Premise(
        "neighbours",
        "replace-one neighbours",
        "Theorem 1, (26)",
        "'datasets D and D' differing in one sample'",
        1.0,
        "the number of records in which D and D' differ",
    ),
    Premise(
        "adversary",
        "the adversary sees the shared estimates",
        "Section III-D",
        "the adversary, a network member or an eavesdropper, sees every shared "
        "local estimate, never the data",
        math.nan,
        "by construction: the cell scores the canary agent's first shared release only",
    ),
)
_WITHIN = {"record_norm": True, "gradient_bound": True, "neighbours": True, "adversary": True}
_OUTSIDE_GRADIENT = {**_WITHIN, "gradient_bound": False}


def study_values() -> dict:
    """The dzoa config section's defaults: the paper's setting with the study's default switches."""
    return schemas.defaults("dzoa.schema.yaml")


def data_options() -> dict:
    """``dpdl.data.lasso`` options of the config's defaults (agents, samples per agent, features, ...)."""
    options = schemas.defaults("config.schema.yaml", "data", "lasso")
    return {key: value for key, value in options.items() if key not in ("trials", "seed")}


@dataclass(frozen=True)
class _Spec:
    algorithm: str  # "dzoa" or "dpadmm"
    claim: str
    epsilon: float  # the grid point's per-iteration epsilon
    delta: float
    canary: str  # "extreme" or "at_sensitivity"
    loss_scale: str = ""  # the reading mean_loss's "mean" (issue 58 item 6); empty: the study's default


_CANARIES = {
    "extreme": "agent {agent}'s record with the largest |y| ||x|| replaced by a unit-norm feature "
    "vector pointing opposite to it, with the data's largest |y| as label (D'; D holds the canary)",
    "at_sensitivity": "agent {agent}'s record with the largest |y| ||x|| with its label moved so "
    "that the noiseless release moves by exactly the declared sensitivity ({sensitivity}); the "
    "same features",
}
_LOSS_SCALES = {
    "sum": "loss_scale: sum (each agent's loss summed over its N_k records; the paper's Delta averages them)",
    "mean": "loss_scale: mean (each agent's loss averaged over its N_k records, as the paper's "
    "Delta; the reading mean_loss)",
}
_RELEASED = {
    "dzoa": "beta_k^(1), the estimate agent {agent} shares after the first outer iteration (T "
    "zeroth-order steps from 0; Algorithm 1), from the known start",
    "dpadmm": "w~_k^(1) = w_k^(1) + xi, agent {agent}'s first perturbed primal sent to the server, from the "
    "known start",
}


def _spec_name(spec: _Spec) -> str:
    total = "_total" if spec.claim == TOTAL else ""
    scale = f"_{spec.loss_scale}_loss" if spec.loss_scale else ""
    return f"{spec.algorithm}_eps{spec.epsilon:g}_delta{spec.delta:g}_{spec.canary}{total}{scale}"


def _values(spec: _Spec) -> dict:
    """The study's values the cell runs with: the defaults, with the spec's loss_scale where it sets one."""
    values = study_values()
    return {**values, "loss_scale": spec.loss_scale} if spec.loss_scale else values


def _degree(values: dict) -> np.ndarray:
    agents = data_options()["agents"]
    return dzoa_algorithm.adjacency(grid.graph_edges(values, agents), agents).sum(axis=1).astype(int)


def _accountant_epsilon(spec: _Spec, values: dict) -> float:
    """dp-accounting's (PLD) epsilon for the releases the claim covers.

    It is computed at ``dzoa calibrate``'s sigma / Delta.
    """
    sensitivity, noise = declared(spec, values)
    count = values["outer_iterations"] if spec.claim == TOTAL else 1
    releases = PrivacyEvent("gaussian", noise / sensitivity, count)
    return composed_epsilon(releases, spec.delta, "pld")


def _label_beyond_c1(spec: _Spec) -> bool:
    """D-ZOA's at-sensitivity canary under loss_scale mean, outside Assumption 3.

    For the release to move by Delta_k of (24), the label moves so far that the gradient change is
    2.10 > 2 c1 (measured by the ledger).
    """
    return spec.algorithm == "dzoa" and spec.loss_scale == "mean" and spec.canary == "at_sensitivity"


def _make_cell(spec: _Spec) -> AuditCell:
    values = _values(spec)
    switches = grid.switches(values)
    if spec.algorithm == "dpadmm":
        switches = {**switches, "dpadmm_penalty": DPADMM_PENALTY, "dpadmm_step_size": DPADMM_PROX_STEP}
    claimed = spec.epsilon
    if spec.claim == TOTAL:
        # (29)
        claimed = dzoa_total_epsilon(spec.epsilon, spec.delta, n_outer=values["outer_iterations"])
    sensitivity = "Delta_k of (24)" if spec.algorithm == "dzoa" else "Delta_1 of note 4.3"
    released = _RELEASED[spec.algorithm].format(agent=CANARY_AGENT + 1)
    if spec.claim == TOTAL:
        released += f"; the first of the M = {values['outer_iterations']} iterations Theorem 2 covers"
    project = [
        _LOSS_SCALES[values["loss_scale"]],
        "the first release from the known start beta = gamma = 0",
    ]
    if spec.algorithm == "dpadmm":
        project.append(f"DP-ADMM's Gaussian constant {values['dpadmm_gauss_constant']} (note 4.4)")
    return AuditCell(
        study=grid.STUDY,
        name=_spec_name(spec),
        claim=spec.claim,
        algorithm=spec.algorithm,
        claimed_epsilon=claimed,
        delta=spec.delta,
        iterations=1,
        released=released,
        canary=_CANARIES[spec.canary].format(agent=CANARY_AGENT + 1, sensitivity=sensitivity),
        switches=switches,
        accountant_epsilon=_accountant_epsilon(spec, values),
        noise="gaussian",
        premises=_OUTSIDE_GRADIENT if spec.canary == "extreme" or _label_beyond_c1(spec) else _WITHIN,
        project_premises=tuple(project),
    )


_EPSILONS, _DELTAS = study_values()["epsilons"], study_values()["deltas"]
_LOW, _HIGH, _DELTA = min(_EPSILONS), max(_EPSILONS), _DELTAS[0]  # Fig. 2's grid: 0.15, 0.95 at delta 1e-3
# Five D-ZOA cells (about 6.6 ms of CPU per D-ZOA run of 5 agents: 26 s per cell at 2,000 runs per
# side, 130 s the study); the per-iteration extreme cell is in EXTRA_CELLS. Theorem 2 is decided by
# the at-sensitivity cell, within Assumption 3 (issue 58 item 4); the extreme total cell stays,
# outside it.
_AUDITED = (
    _Spec("dzoa", PER_ITERATION, _HIGH, _DELTA, "at_sensitivity"),
    _Spec("dzoa", TOTAL, _LOW, _DELTA, "at_sensitivity"),
    _Spec("dzoa", TOTAL, _LOW, _DELTA, "extreme"),
    _Spec("dpadmm", BASELINE, _HIGH, _DELTA, "extreme"),
    _Spec("dpadmm", BASELINE, _HIGH, _DELTA, "at_sensitivity"),
    # the reading mean_loss's mechanism, at sensitivity (issue 58 item 6); last, so the cells above
    # keep their seeds
    _Spec("dzoa", PER_ITERATION, _HIGH, _DELTA, "at_sensitivity", loss_scale="mean"),
    _Spec("dzoa", TOTAL, _LOW, _DELTA, "at_sensitivity", loss_scale="mean"),
    _Spec("dpadmm", BASELINE, _HIGH, _DELTA, "at_sensitivity", loss_scale="mean"),
)
_EXTRA = (_Spec("dzoa", PER_ITERATION, _HIGH, _DELTA, "extreme"),)
_SPECS = {_spec_name(spec): spec for spec in (*_AUDITED, *_EXTRA)}


# ------------------------------------------------------------------------------------ the problem


def audit_data(values: dict) -> tuple[np.ndarray, np.ndarray]:
    """D': the study's lasso data of trial 0, split by agent: X (K, N_k, P), y (K, N_k)."""
    options = data_options()
    data = lasso_data.generate(trials=1, seed=DATA_SEED, **options)
    X, y = split_agents(data["X"], data["y"], options["agents"])
    return X[0], y[0]


def replaced_record(X: np.ndarray, y: np.ndarray) -> int:
    """The canary agent's record with the largest |y| ||x|| (the one the canary replaces)."""
    return int(np.argmax(np.abs(y[CANARY_AGENT]) * np.linalg.norm(X[CANARY_AGENT], axis=1)))


def with_record(X, y, x_new, y_new) -> tuple[np.ndarray, np.ndarray]:
    """A copy of (X, y) with the canary agent's replaced record set to (x_new, y_new).

    It is a neighbour (Def. 1).
    """
    X, y, j = X.copy(), y.copy(), replaced_record(X, y)
    X[CANARY_AGENT, j], y[CANARY_AGENT, j] = x_new, y_new
    return X, y


def exact_update(X_k, y_k, *, degree: int, values: dict, scale: float, history=None) -> np.ndarray:
    """beta_breve_k: the exact minimiser of agent k's F_k (note 2.2), the noiseless mean of Lemma 1 (21).

    X_k (B, N_k, P), y_k (B, N_k); ``history`` (B, P) is gamma_k - rho v_k (0 at m = 1: gamma = v = 0).
    """
    X_k, y_k = np.asarray(X_k, dtype=float), np.asarray(y_k, dtype=float)
    n_params = X_k.shape[-1]
    # (7), (16)
    quad = scale * np.einsum("bnp,bnq->bpq", X_k, X_k) + values["rho"] * degree * np.eye(n_params)
    lin = -2.0 * scale * np.einsum("bnp,bn->bp", X_k, y_k)  # from s ||X_k beta - y_k||^2 (34)
    if history is not None:
        lin = lin + history  # + gamma_k - rho v_k (note 2.2)
    l1_weight = values["eta"] / data_options()["agents"]  # (34): (eta / K) ||beta||_1 at each agent
    start = np.zeros((len(X_k), 1, 1, n_params))
    return dzoa_algorithm.exact_local_minimizer(quad[:, None], lin[:, None, None], l1_weight, start)[:, 0, 0]


def dpadmm_schedule(spec_epsilon: float, delta: float, values: dict) -> tuple[float, float]:
    """(1/eta_1, sigma_1) of DP-ADMM's first iteration, from the run step's ``dpadmm_schedules``."""
    samples = data_options()["samples_per_agent"]
    inverse, noise = dpadmm_schedules(
        {**values, "outer_iterations": 1}, spec_epsilon, delta, samples, [DPADMM_PENALTY], [DPADMM_PROX_STEP]
    )
    return float(inverse[0, 0]), float(noise[0, 0])


def dpadmm_releases(
    X_k, y_k, seeds, *, inverse_prox_step: float, noise_std: float, values: dict, scale: float
):
    """Agent k's first released w~_k (B, P) from ``dp_admm``, read back exactly from its reported error.

    ``dp_admm`` reports only the normalised error sum_k ||w~_k - beta_c||^2 / ||beta_c||^2, so agent k
    runs alone (at m = 1 its release depends only on its own data: w~ = z = lambda = 0 and sign(0) = 0)
    against beta_c = +h e_p and -h e_p with the same noise: w~_p = (||w~ + h e_p||^2 - ||w~ - h e_p||^2) / 4h.
    X_k (B, N_k, P), y_k (B, N_k); ``seeds`` one SeedSequence per run, or None for one shared generator.
    """
    X_k, y_k = np.asarray(X_k, dtype=float), np.asarray(y_k, dtype=float)
    runs, n_params = X_k.shape[0], X_k.shape[-1]
    h, copies = REFERENCE_STEP, 2 * n_params
    references = np.tile(h * np.concatenate([np.eye(n_params), -np.eye(n_params)]), (runs, 1))
    shared = np.random.default_rng(0) if seeds is None else None
    rngs = [
        [shared if seeds is None else np.random.default_rng(seeds[b])]
        for b in range(runs)
        for _ in range(copies)
    ]
    result = dzoa_dpadmm.dp_admm(
        np.repeat(X_k, copies, axis=0)[:, None],
        np.repeat(y_k, copies, axis=0)[:, None],
        references,
        rngs,
        penalty=np.array([DPADMM_PENALTY]),
        inverse_prox_step=np.array([[inverse_prox_step]]),
        noise_std=np.array([[noise_std]]),
        l1_weight=values["eta"],
        loss_scale=scale,
    )
    distance = result.error[0, :, 1].reshape(runs, copies) * h**2  # ||w~ - c||^2
    return (distance[:, n_params:] - distance[:, :n_params]) / (4.0 * h)


def dzoa_releases(X, y, seeds, spec: _Spec, values: dict, scale: float) -> np.ndarray:
    """Agent k's beta_k^(1) (runs, P): ``dzoa`` for one outer iteration, one run per SeedSequence.

    beta^c and alpha0 R per agent come from this dataset, as ``dzoa centralized`` and ``calibrate`` make them.
    """
    samples, n_params = X.shape[1], X.shape[2]
    # (33)
    solved = lasso.solve(X.reshape(1, -1, n_params), y.reshape(1, -1), l1_weight=values["eta"], scale=scale)
    steps = tune.step_scales(
        values, spec.epsilon, spec.delta, _degree(values), samples, n_params, solved.beta
    )
    beta_c, steps = solved.beta[0], steps[0]  # alpha0 R per agent from (27) inverted
    graph = dzoa_algorithm.adjacency(grid.graph_edges(values, X.shape[0]), X.shape[0])
    out = []
    for start in range(0, len(seeds), CHUNK):
        chunk = seeds[start : start + CHUNK]
        B = len(chunk)
        result = dzoa_algorithm.dzoa(
            np.broadcast_to(X, (B, *X.shape)),
            np.broadcast_to(y, (B, *y.shape)),
            np.broadcast_to(beta_c, (B, beta_c.size)),
            graph,
            np.broadcast_to(steps, (1, B, steps.size)).copy(),
            [[np.random.default_rng(child) for child in seed.spawn(X.shape[0])] for seed in chunk],
            **grid.dzoa_keywords(values, scale),
            n_outer=1,
        )
        out.append(result.beta[0, :, CANARY_AGENT])
    return np.concatenate(out)


def _noiseless(X, y, spec: _Spec, values: dict, scale: float) -> np.ndarray:
    """The release's noiseless mean (P,): beta_breve_k^(1) (D-ZOA) or the noise-free w_k^(1) (DP-ADMM)."""
    k = CANARY_AGENT
    if spec.algorithm == "dzoa":
        degree = int(_degree(values)[k])
        return exact_update(X[k][None], y[k][None], degree=degree, values=values, scale=scale)[0]
    inverse, _ = dpadmm_schedule(spec.epsilon, spec.delta, values)
    return dpadmm_releases(
        X[k][None], y[k][None], None, inverse_prox_step=inverse, noise_std=0.0, values=values, scale=scale
    )[0]


def declared(spec: _Spec, values: dict) -> tuple[float, float]:
    """(sensitivity, noise std) the calibration declares for the canary agent's first release."""
    samples = data_options()["samples_per_agent"]
    if spec.algorithm == "dzoa":
        degree, rho = int(_degree(values)[CANARY_AGENT]), values["rho"]
        sensitivity = dzoa_sensitivity(rho=rho, n_neighbours=degree, n_samples=samples)  # (24)
        noise = dzoa_noise_std(spec.epsilon, spec.delta, rho=rho, n_neighbours=degree, n_samples=samples)
        return sensitivity, noise  # (25)
    inverse, _ = dpadmm_schedule(spec.epsilon, spec.delta, values)
    sensitivity = outp_sensitivity(DPADMM_PENALTY, inverse, n_samples=samples, c1=grid.GRADIENT_BOUND)
    # sigma = Delta sqrt(c ln(1.25/delta)) / epsilon (note 4.4)
    constant = float(values["dpadmm_gauss_constant"])
    multiplier = classical_gaussian_noise_multiplier(spec.epsilon, spec.delta, constant=constant)
    return sensitivity, sensitivity * multiplier


def neighbours(spec: _Spec, values: dict, scale: float):
    """((X_D, y_D), (X_D', y_D')): the dataset with the canary and its neighbour."""
    X, y = audit_data(values)
    j, k = replaced_record(X, y), CANARY_AGENT
    x_old, y_old = X[k, j], y[k, j]
    if spec.canary == "extreme":
        x_new = -np.sign(y_old) * x_old / np.linalg.norm(x_old)  # max norm, opposite contribution x y
        return with_record(X, y, x_new, np.max(np.abs(y))), (X, y)
    target, _ = declared(spec, values)
    base = _noiseless(X, y, spec, values, scale)

    def excess(shift: float) -> float:
        moved = _noiseless(*with_record(X, y, x_old, y_old + shift), spec, values, scale)
        return float(np.linalg.norm(moved - base)) - target

    high = 1.0
    while excess(high) < 0:
        high *= 2.0
    shift = optimize.brentq(excess, 0.0, high, xtol=1e-14, rtol=1e-12)
    return with_record(X, y, x_old, y_old + shift), (X, y)


def _scores(released, means, sigma: float) -> dict[str, AuditSamples]:
    """The black-box and white-box scores of the released runs, canary side then neighbour side.

    The black-box score is the release's coordinate along the shift of the noiseless mean, from the two means'
    midpoint; the white-box score is the Gaussian LLR.
    """
    mean_d, mean_n = means
    direction = (mean_d - mean_n) / np.linalg.norm(mean_d - mean_n)
    middle = (mean_d + mean_n) / 2.0
    out = {BLACK_BOX: [], WHITE_BOX: []}
    for runs in released:  # canary side, then neighbour side
        out[BLACK_BOX].append((runs - middle) @ direction)
        # log N(r; mean_D, sigma^2 I) - log N(r; mean_D', sigma^2 I) (Lemma 1 (21) with sigma_k of (25))
        out[WHITE_BOX].append(
            (np.sum((runs - mean_n) ** 2, axis=1) - np.sum((runs - mean_d) ** 2, axis=1)) / (2 * sigma**2)
        )
    what = {
        BLACK_BOX: "the release's coordinate along mean_D - mean_D' (noiseless means) from their midpoint",
        WHITE_BOX: "log N(release; mean_D, s^2 I) - log N(release; mean_D', s^2 I), s the declared noise std",
    }
    return {kind: AuditSamples(*out[kind], what=what[kind]) for kind in (BLACK_BOX, WHITE_BOX)}


def audit_scores(cell: AuditCell, runs: int, seed: int) -> dict[str, AuditSamples]:
    """Scores of ``runs`` first releases on D (the canary) and on D'.

    They are a pure function of (cell, runs, seed).
    """
    if cell.name not in _SPECS:
        raise ValueError(f"unknown dzoa audit cell {cell.name!r}; expected one of {sorted(_SPECS)}")
    if not isinstance(runs, int | np.integer) or runs < 2:
        raise ValueError(f"an audit needs at least 2 runs per side; got runs={runs!r}")
    spec = _SPECS[cell.name]
    values = _values(spec)
    scale = grid.loss_scale(values, data_options()["samples_per_agent"])
    datasets = neighbours(spec, values, scale)
    sides = np.random.SeedSequence(seed).spawn(2)  # canary side, neighbour side
    released, means = [], []
    for (X, y), side in zip(datasets, sides, strict=True):
        seeds = side.spawn(int(runs))
        means.append(_noiseless(X, y, spec, values, scale))
        if spec.algorithm == "dzoa":
            released.append(dzoa_releases(X, y, seeds, spec, values, scale))
        else:
            inverse, noise = dpadmm_schedule(spec.epsilon, spec.delta, values)
            X_k, y_k = (np.broadcast_to(a[CANARY_AGENT], (runs, *a.shape[1:])) for a in (X, y))
            kwargs = {"inverse_prox_step": inverse, "noise_std": noise, "values": values, "scale": scale}
            released.append(dpadmm_releases(X_k, y_k, seeds, **kwargs))
    return _scores(released, means, declared(spec, values)[1])


def premise_measures(cell: AuditCell) -> dict[str, float]:
    """Each premise's bound computed on the cell's canary pair (:data:`PREMISES`), from its data alone."""
    spec = _SPECS[cell.name]
    values = _values(spec)
    scale = grid.loss_scale(values, data_options()["samples_per_agent"])
    (X_d, y_d), (X_n, y_n) = neighbours(spec, values, scale)
    k, j = CANARY_AGENT, replaced_record(X_n, y_n)
    x_d, x_n = X_d[k, j], X_n[k, j]
    gradient_change = 2.0 * (x_d * y_d[k, j] - x_n * y_n[k, j])  # grad (x'b - y)^2 = 2 x (x'b - y), at b = 0
    return {
        "record_norm": float(max(np.linalg.norm(x_d), np.linalg.norm(x_n))),
        "gradient_bound": float(np.linalg.norm(gradient_change)),
        "neighbours": differing_records(X_d.reshape(-1, X_d.shape[-1]), y_d.ravel(),
                                        X_n.reshape(-1, X_n.shape[-1]), y_n.ravel()),
    }  # fmt: skip


def canary_loss(cell: AuditCell) -> CanaryLoss:
    """The canary pair's privacy loss in the audited release, under the declared noise.

    See :mod:`dpdl.audit.reach`.

    The release is modelled as N(noiseless mean, sigma^2 I) (Lemma 1 (21) with sigma_k of (25) for
    D-ZOA; note 4.3's sigma_1 for DP-ADMM), so its loss is Gaussian: the l2 shift of the noiseless
    means on D and D' at the declared std, exact epsilon at the claim's delta (one release: the cell
    scores the first). At sensitivity the shift is Delta; a release noisier or quieter than declared
    is what an eps_LB above this loss reveals.
    """
    spec = _SPECS[cell.name]
    values = _values(spec)
    scale = grid.loss_scale(values, data_options()["samples_per_agent"])
    on_d, on_n = (_noiseless(X, y, spec, values, scale) for X, y in neighbours(spec, values, scale))
    shift, sigma = float(np.linalg.norm(on_d - on_n)), declared(spec, values)[1]
    model = "Lemma 1 (21), (25)" if spec.algorithm == "dzoa" else "note 4.3"
    return gaussian_canary(
        shift,
        sigma,
        cell,
        f"Gaussian ({model}): shift {shift:.3g} at the declared std {sigma:.3g}, one release",
    )


AUDIT_CELLS = tuple(_make_cell(spec) for spec in _AUDITED)
EXTRA_CELLS = tuple(_make_cell(spec) for spec in _EXTRA)  # accepted by audit_scores, not in the default audit


# The premises that concern the data, measured on every record of the prepared lasso data (issue 58, item 3):
# Section VI's rows of norm <= 1, and Assumption 3's ||grad l|| <= c1 = 1 per record at the audited start
# beta = 0, where grad (x'b - y)^2 = 2 x (x'b - y) has norm 2 |y| ||x||.
_FIGS_2_3 = "every D-ZOA and DP-ADMM run of Figs 2-3 (every trial)"
DATA_PREMISES = (
    DataPremise(
        "record_norm",
        ("lasso",),
        1.0,
        "||x_i|| of every record of every trial",
        lambda arrays: np.linalg.norm(arrays["X"], axis=-1).ravel(),
        _FIGS_2_3,
    ),
    DataPremise(
        "gradient_bound",
        ("lasso",),
        grid.GRADIENT_BOUND,
        "||grad l(x_i, y_i; 0)|| = 2 |y_i| ||x_i|| of every record of every trial, for the per-record loss "
        "l = (x'beta - y)^2 at the audited start beta = 0, against c1",
        lambda arrays: (2.0 * np.abs(arrays["y"]) * np.linalg.norm(arrays["X"], axis=-1)).ravel(),
        _FIGS_2_3,
    ),
)
