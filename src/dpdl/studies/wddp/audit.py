"""wddp's privacy audit: WD-DP's whole short run, per round and one shot, on neighbouring datasets.

Theorem 1 (Section 3) states one (epsilon, delta) for the whole of Algorithm 1 (T rounds), so each
cell runs all T rounds of a short run (T = ``ITERATIONS``) and compares with that total. Threat
model: a trusted server aggregates; Algorithm 1 returns theta^(c) and Definition 1 bounds the
distribution of that output. Under ``per_round`` aggregation (gap A1, what the proof's eq. (4)
analyses) the server also broadcasts the common model theta_t^(c) to the parties every round, so
the noisy aggregates M_t of eq. (4) are released and the proof composes them over the T rounds;
under ``one_shot`` (Algorithm 1 as printed) the local models go to the trusted server only and
theta^(c) is all that is released.

Noise draws: the study's ``per_round`` adds one N(0, sigma^2 I) draw to the aggregate (eq. (4)); under
``one_shot`` every party draws its own. A ``party_draws`` per-round cell has each party draw its own
N(0, sigma^2 I) and the server sum them with the weights w_j = n_j / n: the aggregate's noise is
N(0, sigma^2 sum_j w_j^2 I), so it runs the study's per-round descent with that one draw (the same
distribution), and isolates the per-party draws from the one-shot schedule (issue 58 item 4).

Canaries. A replaced record moves the aggregate gradient by (1/n) [x_D (h(x_D . theta) - y_D) - x_D'
(h(x_D' . theta) - y_D')] (eqs. (4), (17)), at most 2G/n (both terms saturated, opposite). ``mirrored``
reaches nearly 2G/n by moving the start far from the origin (a project choice). ``constructed`` is
derived to need neither the data nor the start: with the same features x on both sides and the label
flipped (1 on D, 0 on D'), the change is exactly -x / n at every theta, so its shift ||x|| / n = G / n
(x = e_1, unit norm) does not depend on the data draw, the start or the run; no pair does better at the
study's own start (theta_0 ~ N(0, 0.01^2 I), h ~ 1/2: each term has |h - y| <= 1/2 + o(1), so the
change is at most (||x_D|| + ||x_D'||) / 2n = G/n). ``flipped`` is the same pair on a data record's
direction.

Scores: the black box reads the released theta^(c) only: its coordinate against the canary's
gradient change at the known start. The white box is the log-likelihood ratio of what is
released given the declared sigma: per round, the sum over t of the Gaussian LLR of
M_t = (theta_t - theta_{t+1}) / eta under N(grad L_D(theta_t), sigma^2 I) against
N(grad L_D'(theta_t), sigma^2 I) (eqs. (4), (7)), exact given the history; one shot, the LLR of
theta^(c) under N(mean_D, s^2 I) against N(mean_D', s^2 I), mean the noiseless run and
s = eta sigma sqrt(T sum_j (n_j/n)^2) the declared per-party noise carried through the average
(linearised: exact where the gradients are constant along the run).

Everything runs through the study's code: ``run.partition`` (two groups, u = 1: equal sizes),
``run.noise_std`` and ``run.privacy_events`` with the config defaults
(``dpdl/schemas/wddp.schema.yaml``), and ``run.descend``, which dispatches to
``per_round_descent`` or ``one_shot_descent`` as the run step does. Section and gap numbers refer
to ``notes/wddp.md``; equation numbers are the paper's (arXiv 1910.10308 v2).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from dpdl import schemas
from dpdl.algorithms import wddp as algo
from dpdl.audit.cells import BLACK_BOX, WHITE_BOX, AuditCell, AuditSamples, PrivacyClaim
from dpdl.audit.data_premises import DataPremise
from dpdl.audit.premises import Premise, differing_records
from dpdl.audit.reach import CanaryLoss, gaussian_canary
from dpdl.privacy.accounting import PrivacyEvent, composed_epsilon
from dpdl.privacy.wddp import wddp_sensitivity
from dpdl.studies.wddp import grid
from dpdl.studies.wddp import run as study_run

AUDIT_DATASET = "audit"  # the dataset name the run step's seed streams are keyed by
N_ROWS, FEATURES = 128, 5  # n records (divisible by every m of the grid), p features
ITERATIONS = 10  # T of the audited run (the paper's 1000 would cost 100x for the same mu)
STEP_SIZE = 0.1  # eta, from the paper's grid; privacy does not depend on it
CANARY_PARTY = 0  # the party holding the canary (its shard's first row)
DATA_SEED = 0  # the synthetic data and the study's partition / theta_0 streams
START_NORM = 100.0  # R: ||theta_0 - init|| for the "mirrored" canary
CANARY_LOGIT = 8.0  # x . theta_0 of the mirrored canary (h = 0.9997: its gradient saturates)
CLAIM = f"{grid.STUDY}.privacy.wddp"
# 50x audit.runs per cell: a run costs ~0.1 ms, and the claimed 0.25 is a rate ratio of e^0.25 = 1.28,
# which Clopper-Pearson resolves only with ~1e5 runs (post hoc: docs/post_hoc.md)
RUNS_SCALE = 50

PRIVACY_CLAIMS = (
    PrivacyClaim(
        CLAIM,
        grid.STUDY,
        "Theorem 1, eq. (3), Section 3 'Differential Privacy' (proof: eqs. (4)-(7)); "
        "the text has no page numbers",
        "'In Algorithm 1, for epsilon, delta >= 0, if l(theta, x, y) is G-Lipschitz over theta and "
        "sigma^2 = c G^2 T ln(1/delta) / (n^2 epsilon^2) (3), it is (epsilon, delta)-DP for some "
        "constant c': one (epsilon, delta) for the whole T-round run, n the total number of "
        "records, whatever m and the n_j",
    ),
)


# The paper's stated assumptions (issue 58's premise ledger), measured on each cell's canary pair.
# What changes what an audited cell releases: per-round or one-shot aggregation, and who draws the
# noise. The reading one_shot is judged on the one-shot cells, the default (per_round) on the
# per-round cells with the study's one draw on the aggregate (issue 58 item 6); the tuning readings
# change the step size, which every cell fixes.


def mechanism(section: dict) -> dict:
    """The switch values of a wddp config section, as the audited cells record them.

    A build with this section releases with them: its aggregation, and its noise draws (one on the
    aggregate per round, eq. (4); each party's own one shot).
    """
    aggregation = section["aggregation"]
    draws = "aggregate" if aggregation == "per_round" else "per_party"
    return {"aggregation": aggregation, "noise_draws": draws}


PREMISES = (
    Premise(
        "record_norm",
        "features of norm at most 1",
        "Appendix A.2",
        "'x is normalized', which with 0 < h < 1 and |y| <= 1 gives G = 1",
        1.0,
        "the largest l2 norm of the replaced record on D and on D'",
    ),
    Premise(
        "label_domain",
        "labels in {0, 1}",
        "Appendix A.2, eq. (17)",
        "the cross-entropy loss -[y log h(z) + (1 - y) log(1 - h(z))] of binary labels y",
        0.0,
        "the number of the replaced record's labels (on D and D') outside {0, 1}",
    ),
    Premise(
        "gradient_bound",
        "G-Lipschitz loss, G = 1",
        "Theorem 1 and Appendix A.2",
        "'if l(theta, x, y) is G-Lipschitz over theta ...'; 'G = 1' in all experiments",
        1.0,
        "sup over theta of ||grad l|| = ||x|| max(|y|, |1 - y|) for the replaced record on D and on D'",
    ),
    Premise(
        "neighbours",
        "replace-one neighbours",
        "Section 3, Theorem 1's proof (eqs. 4-7)",
        "D and D' differ in a single element (the proof's sensitivity 2G/n)",
        1.0,
        "the number of records in which D and D' differ",
    ),
    Premise(
        "adversary",
        "the released aggregated model",
        "Section 3",
        "a trusted server aggregates; differential privacy protects the released aggregated model",
        math.nan,
        "by construction: the cell scores the models the server releases "
        "(per_round: every broadcast theta_t)",
    ),
)
_WITHIN = {premise.id: True for premise in PREMISES}


@dataclass(frozen=True)
class _Spec:
    aggregation: str  # the study's A1 switch: "per_round" or "one_shot"
    clients: int  # m, equal sizes n / m
    epsilon: float  # the run's total epsilon (Theorem 1)
    canary: str  # "mirrored", "flipped" or "constructed"
    party_draws: bool = False  # per_round: each party draws its own noise (one_shot always does)


_CANARIES = {
    "mirrored": "party {party}'s first record: on D, x_a = cos(phi) e_2 + sin(phi) e_1 with label "
    "0; on D', its mirror image x_b = cos(phi) e_2 - sin(phi) e_1 with label 1 (both unit norm), "
    "from the start theta_0 = {R:g} e_1 + the study's N(0, init_std^2 I) draw with R sin(phi) = "
    "{logit:g}: both gradients saturate, so one record changes the aggregate gradient by nearly "
    "2G/n = the declared sensitivity, at every round",
    "flipped": "party {party}'s first record, a unit-norm feature vector x: label 1 on D, label 0 "
    "on D' (flipped), from the study's own start theta_0 ~ N(0, init_std^2 I): the aggregate "
    "gradient moves by exactly ||x||/n = G/n at every theta, half the declared 2G/n",
    "constructed": "party {party}'s first record replaced on both sides by x = e_1 (constructed, "
    "not from the data): label 1 on D, label 0 on D', from the study's own start theta_0 ~ N(0, "
    "init_std^2 I): the aggregate gradient moves by exactly ||x|| / n = G / n at every theta, "
    "whatever the data draw (module docstring)",
}
_RELEASED = {
    "per_round": "the T aggregated models theta_t^(c) the server broadcasts (equivalently the "
    "noisy aggregates M_t of eq. (4) the proof composes); black box: the returned theta^(c) = "
    "theta_T alone",
    "one_shot": "theta^(c) = sum_j (n_j/n) theta_T^(j), the model Algorithm 1 returns (local "
    "models go only to the trusted server); white box linearised (module docstring)",
}


def _spec_name(spec: _Spec) -> str:
    draws = "_party_draws" if spec.party_draws else ""
    return f"wddp_{spec.aggregation}_m{spec.clients}_eps{spec.epsilon:g}_T{ITERATIONS}_{spec.canary}{draws}"


@functools.cache
def _schema_defaults() -> dict:
    return schemas.defaults("wddp.schema.yaml")


def study_settings(spec: _Spec) -> dict:
    """The wddp config section's defaults with the cell's T and aggregation switch."""
    return {**_schema_defaults(), "iterations": ITERATIONS, "aggregation": spec.aggregation}


def audit_data() -> tuple[np.ndarray, np.ndarray]:
    """D' before its canary: N_ROWS synthetic records, ||x|| <= 1 (gap A8) and labels in {0, 1} (eq. 17)."""
    rng = np.random.default_rng(DATA_SEED)
    x = rng.standard_normal((N_ROWS, FEATURES))
    x *= rng.uniform(0.2, 1.0, size=(N_ROWS, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
    labels = (x @ rng.standard_normal(FEATURES) + 0.1 * rng.standard_normal(N_ROWS) > 0).astype(float)
    return x, labels


def shards(spec: _Spec) -> list[np.ndarray]:
    """The parties' rows: the run step's Experiment B partition at u = 1 (m equal shards, wddp.md 4.3)."""
    return study_run.partition(AUDIT_DATASET, N_ROWS, "unevenness", spec.clients, DATA_SEED, unevenness=1)


def start(spec: _Spec) -> np.ndarray:
    """theta_0: the study's ``initial_model`` draw (gap A6), moved by R e_1 for the mirrored canary."""
    theta0 = study_run.initial_model(AUDIT_DATASET, DATA_SEED, FEATURES, _schema_defaults()["init_std"])
    if spec.canary == "mirrored":
        theta0 = theta0 + START_NORM * np.eye(FEATURES)[0]
    return theta0


def neighbours(spec: _Spec) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """((x_D, y_D), (x_D', y_D')): one record of party CANARY_PARTY replaced (Section 1.1 adjacency)."""
    x, labels = audit_data()
    row = int(shards(spec)[CANARY_PARTY][0])
    x_d, y_d, x_n, y_n = x.copy(), labels.copy(), x.copy(), labels.copy()
    if spec.canary == "mirrored":
        sin = CANARY_LOGIT / START_NORM
        base = math.sqrt(1 - sin**2) * np.eye(FEATURES)[1]
        x_d[row], y_d[row] = base + sin * np.eye(FEATURES)[0], 0.0
        x_n[row], y_n[row] = base - sin * np.eye(FEATURES)[0], 1.0
    else:
        unit = np.eye(FEATURES)[0] if spec.canary == "constructed" else x[row] / np.linalg.norm(x[row])
        x_d[row], y_d[row] = unit, 1.0
        x_n[row], y_n[row] = unit, 0.0
    return (x_d, y_d), (x_n, y_n)


def declared_noise(spec: _Spec) -> tuple[float, np.ndarray]:
    """(sigma, n_j): the run step's sigma for WD-DP at the cell's epsilon (eq. (3), gap A3) and the sizes."""
    sizes = np.array([len(shard) for shard in shards(spec)])
    sigma, _ = study_run.noise_std(study_settings(spec), "wddp", spec.epsilon, sizes)
    return sigma, sizes


def noise_weight(spec: _Spec, sizes: np.ndarray) -> float:
    """How the parties' draws scale the aggregate's noise.

    It is sqrt(sum_j w_j^2), w_j = n_j / n, when each party draws its own (one shot, or
    ``party_draws``); 1 for the study's one draw on the aggregate (eq. (4)).
    """
    weights = sizes / sizes.sum()
    return math.sqrt(np.sum(weights**2)) if noise_weight_applies(spec) else 1.0


def noise_weight_applies(spec: _Spec) -> bool:
    """Whether each party draws its own noise: one shot always, per round in a ``party_draws`` cell."""
    return spec.aggregation == "one_shot" or spec.party_draws


def accountant_epsilon(spec: _Spec) -> float:
    """dp-accounting's (PLD) epsilon of the run, from ``run.privacy_events`` as the run records it.

    Per round: T Gaussian releases of sensitivity 2G/n. One shot: the study charges each party's
    T local steps (sensitivity 2G/n_(1), the local models as if released), an upper bound for
    theta^(c); :func:`final_model_epsilon` is the released model's own. Per round with per-party
    draws (no run records it): the T releases at the aggregate's noise, :func:`final_model_epsilon`.
    """
    if spec.party_draws:
        return final_model_epsilon(spec)
    sigma, sizes = declared_noise(spec)
    settings = study_settings(spec)
    events = study_run.privacy_events(settings, "wddp", sigma, sizes)
    return composed_epsilon(events, settings["delta"], "pld")


def final_model_epsilon(spec: _Spec) -> float:
    """PLD epsilon of theta^(c) alone, linearised.

    It composes T Gaussian releases of sensitivity 2G/n at noise sigma sqrt(sum w_j^2).

    Per round the aggregate carries one N(0, sigma^2 I) draw (eq. 4); one shot (or per round with
    per-party draws), party j's own draws enter with weight w_j = n_j / n, so the noise is
    sigma sqrt(sum_j w_j^2) (:func:`noise_weight`).
    """
    sigma, sizes = declared_noise(spec)
    sensitivity = wddp_sensitivity(int(sizes.sum()), study_run.LIPSCHITZ)
    multiplier = sigma * noise_weight(spec, sizes) / sensitivity
    event = PrivacyEvent("gaussian", multiplier, ITERATIONS)
    return composed_epsilon(event, study_settings(spec)["delta"], "pld")


def _make_cell(spec: _Spec) -> AuditCell:
    settings = study_settings(spec)
    return AuditCell(
        study=grid.STUDY,
        name=_spec_name(spec),
        claim=CLAIM,
        algorithm="wddp",
        claimed_epsilon=spec.epsilon,  # Theorem 1: the whole run's epsilon, T = ITERATIONS rounds
        delta=settings["delta"],
        iterations=ITERATIONS,
        released=_RELEASED[spec.aggregation],
        canary=_CANARIES[spec.canary].format(party=CANARY_PARTY + 1, R=START_NORM, logit=CANARY_LOGIT),
        switches={
            **grid.switches(settings),
            "clients": str(spec.clients),
            "step_size": str(STEP_SIZE),
            "noise_draws": "per_party" if noise_weight_applies(spec) else "aggregate",
        },
        accountant_epsilon=accountant_epsilon(spec),
        noise="gaussian",
        runs_scale=RUNS_SCALE,
        premises=_WITHIN,
        project_premises=_project_premises(spec, settings),
    )


def _project_premises(spec: _Spec, settings: dict) -> tuple[str, ...]:
    """The project's own choices a cell rests on (issue 58): the paper leaves each open."""
    reading = "Algorithm 1 as printed" if spec.aggregation == "one_shot" else "the proof's reading"
    per_party = noise_weight_applies(spec)
    choices = [
        f"aggregation: {spec.aggregation} ({reading})",
        "per-party noise draws (each party draws its own Gaussian noise)"
        if per_party
        else "one noise draw on the aggregate per round (eq. (4))",
        f"the constant c of (3) from calibration: {settings['calibration']} (the "
        "paper says 'some constant c')",
    ]
    if spec.canary == "mirrored":
        choices.append(f"a fixed start theta_0 = {START_NORM:g} e_1 + the study's draw, far from the origin")
    return tuple(choices)


def premise_measures(cell: AuditCell) -> dict[str, float]:
    """Each premise's bound computed on the cell's canary pair (:data:`PREMISES`), from its data alone."""
    spec = _SPECS[cell.name]
    (x_d, y_d), (x_n, y_n) = neighbours(spec)
    row = int(shards(spec)[CANARY_PARTY][0])
    labels = np.array([y_d[row], y_n[row]])
    norms = np.array([np.linalg.norm(x_d[row]), np.linalg.norm(x_n[row])])
    return {
        "record_norm": float(norms.max()),
        "label_domain": float(np.count_nonzero(~np.isin(labels, (0.0, 1.0)))),
        "gradient_bound": float(np.max(norms * np.maximum(np.abs(labels), np.abs(1 - labels)))),
        "neighbours": differing_records(x_d, y_d, x_n, y_n),
    }


_EPSILON = max(_schema_defaults()["epsilons"])  # 0.25, the grid's largest: the most runs-efficient
_AUDITED = (
    _Spec("per_round", 4, _EPSILON, "mirrored"),
    _Spec("one_shot", 4, _EPSILON, "mirrored"),
    _Spec("one_shot", 32, _EPSILON, "mirrored"),  # the paper's largest m (Figs 1, 3)
    _Spec("per_round", 4, _EPSILON, "flipped"),
    # per-party draws without the one-shot schedule
    _Spec("per_round", 32, _EPSILON, "mirrored", party_draws=True),
    _Spec("one_shot", 32, _EPSILON, "constructed"),  # a canary independent of the data draw and of the start
)
_SPECS = {_spec_name(spec): spec for spec in _AUDITED}
AUDIT_CELLS = tuple(_make_cell(spec) for spec in _AUDITED)


def released_models(spec: _Spec, data, sigma: float, seeds, record_at) -> np.ndarray:
    """``(len(record_at), p, runs)`` models of one run per SeedSequence, through ``run.descend``."""
    x, labels = data
    settings = study_settings(spec)
    group = study_run.Group(DATA_SEED, 1, shards(spec), start(spec))
    columns = [
        study_run.Column("wddp", spec.epsilon, DATA_SEED, 1, 0, sigma, N_ROWS, STEP_SIZE, f"audit/{i}")
        for i in range(len(seeds))
    ]
    rngs = [np.random.default_rng(seed) for seed in seeds]
    return study_run.descend(settings, x, labels, [group], columns, rngs, record_at, _spec_name(spec))


def _gradient_change(spec: _Spec) -> np.ndarray:
    """The canary record's per-record gradient change at theta_0 (D minus D').

    grad l = x (h(z) - y), eq. (17) with gap A10's sign; the aggregate moves by it times 1 / n (eq.
    (4)).
    """
    (x_d, y_d), (x_n, y_n) = neighbours(spec)
    row, theta0 = int(shards(spec)[CANARY_PARTY][0]), start(spec)
    return x_d[row] * (expit(x_d[row] @ theta0) - y_d[row]) - x_n[row] * (expit(x_n[row] @ theta0) - y_n[row])


def canary_loss(cell: AuditCell) -> CanaryLoss:
    """The canary pair's privacy loss in what the cell releases, under the declared sigma.

    See :mod:`dpdl.audit.reach`.

    T Gaussian releases (the M_t of eq. (4); one shot, theta^(c) is their linearised sum) whose mean
    moves by the canary's gradient change / n at the aggregate's noise sigma x :func:`noise_weight`:
    exact for the flipped and constructed canaries (the change is the same at every theta),
    linearised at theta_0 for the mirrored one (its gradients saturate, so the change moves little
    along the run; not bounded here).
    """
    spec = _SPECS[cell.name]
    sigma, sizes = declared_noise(spec)
    shift = float(np.linalg.norm(_gradient_change(spec))) / N_ROWS
    spread = sigma * noise_weight(spec, sizes)
    how = (
        f"Gaussian: {ITERATIONS} releases of shift {shift:.3g} at std {spread:.3g} "
        "(eq. (4), the declared sigma)"
    )
    return gaussian_canary(shift, spread, cell, how, releases=ITERATIONS)


def _canary_direction(spec: _Spec) -> np.ndarray:
    """Unit vector of the canary record's gradient change at theta_0 (D minus D'), the black box's axis."""
    change = _gradient_change(spec)
    return change / np.linalg.norm(change)


def _white_per_round(spec: _Spec, models: np.ndarray, datasets, sigma: float) -> np.ndarray:
    """sum_t log N(M_t; grad L_D(theta_t), sigma^2 I) - log N(M_t; grad L_D'(theta_t), sigma^2 I).

    It is a per-round run's white-box score: the Gaussian LLR of each round's release M_t (Eqs. (4), (7)).
    """
    weights = algo.record_weights("wddp", shards(spec), N_ROWS)  # n_j / n per party = 1 / n per record (4)
    l2 = _schema_defaults()["l2"]
    score = np.zeros(models.shape[-1])
    for t in range(ITERATIONS):
        released = (models[t] - models[t + 1]) / STEP_SIZE  # M_t: theta_{t+1} = theta_t - eta M_t
        mean_d, mean_n = (algo.weighted_gradient(models[t], x, y, weights, l2) for x, y in datasets)
        to_neighbour, to_d = (np.sum((released - mean) ** 2, axis=0) for mean in (mean_n, mean_d))
        score += (to_neighbour - to_d) / (2 * sigma**2)
    return score


def _white_one_shot(finals, means, spread: float) -> list[np.ndarray]:
    """Gaussian LLR of theta^(c) with noise s = eta sqrt(T) ``spread`` around the noiseless means.

    ``spread``: the averaged per-party noise sigma sqrt(sum_j w_j^2) (Algorithm 1's server step theta^(c) =
    sum_j (n_j / n) theta_T^(j)).
    """
    spread = STEP_SIZE * spread * math.sqrt(ITERATIONS)
    mean_d, mean_n = (mean[:, 0] for mean in means)
    return [
        (np.sum((r - mean_n[:, None]) ** 2, axis=0) - np.sum((r - mean_d[:, None]) ** 2, axis=0))
        / (2 * spread**2)
        for r in finals
    ]


def audit_scores(cell: AuditCell, runs: int, seed: int) -> dict[str, AuditSamples]:
    """Scores of ``runs`` whole T-round runs on D (with the canary) and on D'.

    They are a function of (cell, runs, seed).
    """
    if cell.name not in _SPECS:
        raise ValueError(f"unknown wddp audit cell {cell.name!r}; expected one of {sorted(_SPECS)}")
    if isinstance(runs, bool) or not isinstance(runs, int | np.integer) or runs < 2:
        raise ValueError(f"an audit needs at least 2 runs per side; got runs={runs!r}")
    spec = _SPECS[cell.name]
    datasets = neighbours(spec)
    sigma, sizes = declared_noise(spec)
    # per round, the aggregate's one draw: sigma, or sigma sqrt(sum w_j^2) for the parties' own draws summed
    drawn = sigma * noise_weight(spec, sizes) if spec.aggregation == "per_round" else sigma
    sides = np.random.SeedSequence(seed).spawn(2)  # canary side, neighbour side
    record_at = list(range(ITERATIONS + 1)) if spec.aggregation == "per_round" else [ITERATIONS]
    models = [
        released_models(spec, data, drawn, side.spawn(int(runs)), record_at)
        for data, side in zip(datasets, sides, strict=True)
    ]
    direction = _canary_direction(spec)
    # theta moves against the gradient
    black = [-(m[-1] - start(spec)[:, None]).T @ direction for m in models]
    if spec.aggregation == "per_round":
        white = [_white_per_round(spec, m, datasets, drawn) for m in models]
        white_what = (
            "sum over rounds of the Gaussian LLR of M_t given the history, declared sigma (eqs. 4, 7)"
        )
        if spec.party_draws:
            white_what += " times sqrt(sum_j w_j^2) (the parties' own draws summed)"
    else:
        noiseless = np.random.SeedSequence(0).spawn(1)
        means = [released_models(spec, data, 0.0, noiseless, record_at)[-1] for data in datasets]
        white = _white_one_shot([m[-1] for m in models], means, sigma * noise_weight(spec, sizes))
        white_what = "Gaussian LLR of theta^(c) around the noiseless means, s = eta sigma sqrt(T sum w_j^2)"
    black_what = "theta^(c)'s coordinate against the canary's gradient change at theta_0"
    return {
        BLACK_BOX: AuditSamples(*black, what=black_what),
        WHITE_BOX: AuditSamples(*white, what=white_what),
    }


# The premises that concern the data, measured on every training record of each dataset as prepared (issue 58,
# item 3): Appendix A.2's normalized x and binary labels, which give the logistic loss's G = 1 (Theorem 1).
def _norms(arrays) -> np.ndarray:
    return np.linalg.norm(arrays["X_train"], axis=1)


def _lipschitz(arrays) -> np.ndarray:
    y = np.asarray(arrays["y_train"], dtype=float)
    return _norms(arrays) * np.maximum(np.abs(y), np.abs(1 - y))  # sup_theta ||(h(x'theta) - y) x||


_RUNS = "every private run of Figures 1-16 and Table 1"
_ALL = tuple(record.dataset for record in grid.PREPARED)  # every dataset the study prepares
DATA_PREMISES = (
    DataPremise("record_norm", _ALL, 1.0, "||x_i|| of each training record", _norms, _RUNS),
    DataPremise(
        "label_domain",
        _ALL,
        0.0,
        "1 for each training record whose label is not 0 or 1",
        lambda arrays: (~np.isin(arrays["y_train"], (0, 1))).astype(float),
        _RUNS,
    ),
    DataPremise(
        "gradient_bound",
        _ALL,
        1.0,
        "sup over theta of ||grad l(theta; x_i, y_i)|| = ||x_i|| max(|y_i|, |1 - "
        "y_i|) of each training record",
        _lipschitz,
        _RUNS,
    ),
)
