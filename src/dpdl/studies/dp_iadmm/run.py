"""One run job: every seed of one (horizon, dataset, variant, epsilon-bar) in one batch.

Arrays and parameters go in (the prepared ``.npz``, the run settings); one run artifact per seed
comes out: the trace and its provenance, with the privacy the run spends composed over its
iterations.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from dpdl.checkpoint import Checkpoint, RunStopped
from dpdl.errors import ArtifactError, ConfigError
from dpdl.progress import Progress
from dpdl.studies.common import format_number

if TYPE_CHECKING:
    from dpdl.algorithms.dp_iadmm import IadmmParams
from dpdl.studies.dp_iadmm.grid import (
    DEFAULT_BACKEND,
    PARAM_SWITCHES,
    STUDY,
    SWITCHES,
    Variant,
    is_nonprivate,
    job_seeds,
    variant,
)

log = logging.getLogger(__name__)

# OutP's per-iteration noise multipliers are composed in at most this many groups; each group
# uses its smallest multiplier (most privacy spent), so the composed epsilon is an upper bound.
PRIVACY_GROUPS = 1000
CHECKPOINT_NAME = (
    ".checkpoint"  # a run job's saved state (an .npz) beside its outputs, unseen by the runs' *.npz glob
)
# Both backends' modules: with checkpoint.py, dpdl/privacy and dpdl/models, the code a checkpoint's key holds.
RUN_MODULES = (
    "dp_iadmm.py",
    "dp_iadmm_data.py",
    "dp_iadmm_kernel.py",
    "dp_iadmm_objective.py",
    "dp_iadmm_jax.py",
)
CHECKPOINT_EVERY_S = 600.0  # wall seconds between saves: a kill loses at most ten minutes of a run


class TrainingRows(NamedTuple):
    """A prepared dataset as float32 features in [0, 1].

    It holds the agents' rows (agent p is rows ``offsets[p]:offsets[p+1]``), the number of classes K and the
    test set.
    """

    features: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray
    n_classes: int
    test_features: np.ndarray
    test_labels: np.ndarray


def load_rows(dataset: str, npz: str | Path, mnist_agents: int) -> TrainingRows:
    """Load a prepared dataset as float32 (once per job) and split its rows among the agents.

    MNIST: ``mnist_agents`` contiguous equal shards in file order (no rng); FEMNIST: one LEAF
    writer per agent (``offsets_train``).
    """
    from dpdl.data.partition import equal_shards
    from dpdl.io import load_npz

    arrays = load_npz(npz)
    needed = ["X_train", "y_train", "X_test", "y_test", "pixel_divisor"]
    if dataset == "femnist":
        needed.append("offsets_train")
    missing = [key for key in needed if key not in arrays]
    if missing:
        raise ArtifactError(
            f"{npz}: no arrays {missing}, so not the prepared {dataset} data; "
            f"pass data/processed/{STUDY}/{dataset}.npz"
        )
    scale = np.float32(1.0 / int(arrays["pixel_divisor"]))  # features = X / 255
    train = arrays["X_train"].astype(np.float32)
    train *= scale
    test = arrays["X_test"].astype(np.float32)
    test *= scale
    labels = arrays["y_train"].astype(np.intp)
    if dataset == "mnist":
        shards = equal_shards(len(train), mnist_agents)  # contiguous, file order (no rng)
        offsets = np.array([0] + [int(shard[-1]) + 1 for shard in shards])
        train, labels = train[: offsets[-1]], labels[: offsets[-1]]
    else:
        offsets = arrays["offsets_train"]  # one LEAF writer = one agent
    n_classes = int(max(labels.max(), arrays["y_test"].max())) + 1
    return TrainingRows(train, labels, offsets, n_classes, test, arrays["y_test"].astype(np.intp))


def load_federated(dataset: str, npz: str | Path, mnist_agents: int, replicas: int = 1):
    """:func:`load_rows`, the agents blocked for ``replicas`` seeds of the numba run.

    Returns
    -------
    tuple
        (FederatedData, test features float32, test labels, original agent sizes).
    """
    from dpdl.algorithms.dp_iadmm_data import federated_data

    rows = load_rows(dataset, npz, mnist_agents)
    data = federated_data(rows.features, rows.labels, rows.offsets, rows.n_classes, replicas=replicas)
    return data, rows.test_features, rows.test_labels, np.diff(rows.offsets)


def jax_program():
    """The JAX backend's module (:mod:`dpdl.algorithms.dp_iadmm_jax`), or a line saying how to install JAX."""
    try:
        from dpdl.algorithms import dp_iadmm_jax
    except ImportError as error:
        raise ConfigError(
            f"dp_iadmm.backend is jax but JAX cannot be imported ({error}); install it with "
            "uv sync --extra gpu (or pip install -e '.[gpu]'; add jax[cuda12] for an NVIDIA GPU) or set "
            "dp_iadmm.backend: numba"
        ) from None
    return dp_iadmm_jax


# Each backend's program (the schema's dp_iadmm.backend): jax_tf32 is jax with the iteration's two
# products at the device's default float32 precision (TF32 on a recent GPU), for runs a device check
# showed equivalent (issue 37).
JAX_PRECISIONS = {"jax": "highest", "jax_tf32": "tf32"}


def backend_record(backend: str) -> dict:
    """What a run's provenance says of the program that ran it: its name, its noise stream, JAX's device."""
    if backend == "numba":
        return {"name": "numba", "noise": "numpy default_rng (PCG64) of the run's SeedSequence"}
    import jax

    device = jax.devices()[0]
    precision = {
        "highest": "float32, matrix products at Precision.HIGHEST (no TF32 / bf16)",
        "tf32": "float32; the iteration's two products at Precision.DEFAULT (TF32 on a recent GPU), "
        "the logged ones at HIGHEST",
    }[JAX_PRECISIONS[backend]]
    return {
        "name": backend,
        "device": f"{device.platform}: {device.device_kind}",
        "jax": jax.__version__,
        "noise": "threefry2x32, key = the run's SeedSequence's first two words, "
        "fold_in(key, t) at iteration t",
        "precision": precision,
    }


def run_identity(
    settings: dict, dataset_sha256: str, variant_name: str, epsilon: float, seeds: list[int]
) -> str:
    """The checkpoint key of a run job: settings, data, variant, epsilon, seeds and the algorithm's code."""
    import hashlib

    import dpdl

    package = Path(dpdl.__file__).parent
    code = hashlib.sha256()
    modules = [package / "algorithms" / name for name in RUN_MODULES] + [package / "checkpoint.py"]
    for path in sorted([*modules, *package.glob("privacy/*.py"), *package.glob("models/*.py")]):
        code.update(path.read_bytes())
    run = {
        "settings": settings,
        "data": dataset_sha256,
        "variant": variant_name,
        "epsilon": repr(epsilon),
        "seeds": seeds,
    }
    return hashlib.sha256(json.dumps(run, sort_keys=True).encode() + code.digest()).hexdigest()


def solver(
    backend: str, rows: TrainingRows, params, seeds: list[np.random.SeedSequence], progress, checkpoint=None
):
    """A function running ``params`` on every seed at once with ``backend``, returning an IadmmResult.

    ``backend`` is numba or jax.

    ``checkpoint`` (:class:`dpdl.checkpoint.Checkpoint`): where either backend saves its state and
    resumes from.
    """
    if backend in JAX_PRECISIONS:
        program = jax_program()
        agents = program.padded_agents(rows.features, rows.labels, rows.offsets, rows.n_classes)
        precision = JAX_PRECISIONS[backend]
        return lambda: program.run_iadmm_jax(
            agents, params, rows.test_features, rows.test_labels, seeds=seeds, progress=progress,
            matmul_precision=precision, checkpoint=checkpoint,
        )  # fmt: skip
    from dpdl.algorithms.dp_iadmm import run_iadmm
    from dpdl.algorithms.dp_iadmm_data import federated_data

    data = federated_data(rows.features, rows.labels, rows.offsets, rows.n_classes, replicas=len(seeds))
    rngs = [np.random.default_rng(seed) for seed in seeds]
    return lambda: run_iadmm(
        data,
        params,
        rows.test_features,
        rows.test_labels,
        rngs=rngs,
        progress=progress,
        checkpoint=checkpoint,
    )


def privacy_events(algorithm: str, epsilon: float, multipliers: np.ndarray) -> list:
    """The privacy events of one agent's run (the agent that spends the most).

    ObjP/ObjT: T Laplace releases with noise multiplier b / Delta-bar = 1/epsilon-bar (11a).
    OutP: Gaussian releases with multiplier sigma_p^t / Delta_p^t (note 2.5), the smallest over
    agents at each t, composed in at most ``PRIVACY_GROUPS`` groups at each group's smallest
    multiplier (an upper bound). Non-private: one event with multiplier 0 (composed: none).
    """
    from dpdl.privacy.accounting import PrivacyEvent

    iterations = len(multipliers)
    if math.isinf(epsilon):
        return [PrivacyEvent("laplace", 0.0, iterations)]
    if algorithm != "outp":
        return [PrivacyEvent("laplace", 1.0 / epsilon, iterations)]
    events = []
    for group in np.array_split(multipliers, min(PRIVACY_GROUPS, iterations)):
        smallest = float(group.min())  # the most privacy spent in the group
        if events and events[-1].noise_multiplier == smallest:
            events[-1] = PrivacyEvent("gaussian", smallest, events[-1].count + len(group))
        else:
            events.append(PrivacyEvent("gaussian", smallest, len(group)))
    return events


@dataclass(frozen=True)
class Job:
    """One run job checked and turned into the algorithm's parameters: every seed of one cell."""

    horizon: str
    dataset: str
    variant_name: str
    epsilon: float
    settings: dict
    card: dict
    outputs: list[str]
    spec: Variant
    seeds: list[int]
    params: IadmmParams
    sequences: list[np.random.SeedSequence]

    @property
    def label(self) -> str:
        """``main/mnist/objt/eps0.05 (10 seeds)``, for the logs."""
        cell = f"{self.horizon}/{self.dataset}/{self.variant_name}/eps{format_number(self.epsilon)}"
        return f"{cell} ({len(self.seeds)} seeds)"

    @property
    def backend(self) -> str:
        """numba or jax (the default is left out of the settings: ``_settings.run_settings``)."""
        return self.settings.get("backend", DEFAULT_BACKEND)


def plan_job(
    *,
    horizon: str,
    dataset: str,
    variant_name: str,
    epsilon: float,
    settings: dict,
    card: dict,
    outputs: list[str],
) -> Job:
    """Check one run job's arguments and make its parameters.

    ``settings``: ``grid.run_settings``; ``card``: the dataset's JSON card; ``outputs``: one run artifact
    per seed.
    """
    from dpdl.algorithms.dp_iadmm import IadmmParams, PenaltySchedule
    from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS
    from dpdl.runs import run_seed_sequence

    spec = variant(variant_name, settings)
    if is_nonprivate(variant_name) != math.isinf(epsilon):
        raise ConfigError(
            f"variant {variant_name!r} with epsilon {epsilon}: only 'nonprivate' runs at epsilon inf"
            " ('nonprivate' and 'nonprivate_<algorithm>', and only at inf)"
        )
    seeds = job_seeds(variant_name, settings["seeds"])
    if len(outputs) != len(seeds):
        raise ConfigError(f"{len(outputs)} output paths for {len(seeds)} seeds; pass one --out per seed")
    penalty = PenaltySchedule(**PENALTY_CONSTANTS[dataset], factor=spec.rho_factor, static=spec.rho_static)
    params = IadmmParams(
        spec.algorithm,
        epsilon,
        settings["iterations"],
        penalty,
        log_every=settings["log_every"],
        a=spec.a,
        beta=settings["beta"],
        delta=settings["delta"],
        **{name: settings[name] for name in PARAM_SWITCHES if name in settings},  # its algorithm's (grid)
    )
    paper_epsilon = None if math.isinf(epsilon) else epsilon
    sequences = [run_seed_sequence(STUDY, dataset, variant_name, paper_epsilon, s) for s in seeds]
    return Job(
        horizon, dataset, variant_name, epsilon, settings, card, list(outputs), spec, seeds, params, sequences
    )


def run_job(
    *,
    horizon: str,
    dataset: str,
    variant_name: str,
    epsilon: float,
    settings: dict,
    npz: str | Path,
    card: dict,
    outputs: list[str],
) -> None:
    """Run every seed of one (horizon, dataset, variant, epsilon) and write one artifact per seed.

    ``settings`` are the run settings (``grid.run_settings``), ``card`` the dataset's JSON card.
    """
    from dpdl.runs import execute

    job = plan_job(
        horizon=horizon,
        dataset=dataset,
        variant_name=variant_name,
        epsilon=epsilon,
        settings=settings,
        card=card,
        outputs=outputs,
    )
    rows = load_rows(dataset, npz, settings["mnist_agents"])
    # Saved beside the outputs every 10 minutes (a JAX run after its chunk); a rerun of this job
    # resumes from it.
    key = run_identity(settings, card.get("npz_sha256", ""), variant_name, epsilon, job.seeds)
    checkpoint = Checkpoint(Path(outputs[0]).parent / CHECKPOINT_NAME, key, CHECKPOINT_EVERY_S)
    progress = Progress(job.label, job.params.iterations).update
    solve = solver(job.backend, rows, job.params, job.sequences, progress, checkpoint)
    sizes = np.diff(rows.offsets)
    log.info(
        "%s: %d agents, %d samples, T = %d, backend %s",
        job.label,
        len(sizes),
        sizes.sum(),
        job.params.iterations,
        job.backend,
    )
    outcome = {}

    def batch() -> pd.DataFrame:
        outcome["result"] = solve()
        return outcome["result"].traces[0]

    timed = execute(batch, {}, iterations=job.params.iterations)
    timing = timed.provenance["timing"]
    wall_s, cpu_s = timing["wall_time_s"], timing["cpu_time_s"]
    resumed_at = checkpoint.resumed_at
    if resumed_at:  # the time of the iterations kept from earlier attempts too
        wall_s, cpu_s = wall_s + checkpoint.earlier_wall_s, cpu_s + checkpoint.earlier_cpu_s
    write_job(job, rows, outcome["result"], (wall_s, cpu_s), timed.provenance["versions"], resumed_at)
    checkpoint.remove()


def batch_identity(jobs: list[Job]) -> str:
    """The checkpoint key of a batch of run jobs: each job's :func:`run_identity` and the batch's backend."""
    import hashlib

    keys = [
        run_identity(job.settings, job.card.get("npz_sha256", ""), job.variant_name, job.epsilon, job.seeds)
        for job in jobs
    ]
    return hashlib.sha256(json.dumps([jobs[0].backend, *keys]).encode()).hexdigest()


def run_jobs_together(
    jobs: list[Job],
    npz: str | Path,
    *,
    checkpoint_every_s: float = CHECKPOINT_EVERY_S,
    stop_at: float | None = None,
    chunk: int | None = None,
) -> list[str]:
    """Run jobs of one dataset on the JAX backend, those that can share a compiled program as one batch.

    A batch runs in :func:`dpdl.algorithms.dp_iadmm_jax.run_cells_jax`; its jobs have the same switches, T,
    logging and seed count. Each job's artifacts are written as :func:`run_job` does; each job is charged
    its batch's time over its jobs.

    Each batch saves its state beside its first job's outputs every ``checkpoint_every_s`` seconds
    and resumes from it (:func:`batch_identity` keys it). Past ``stop_at`` (a ``time.time()``) a
    batch saves its state at its next save point (after its first chunk, if it started past it) and
    stops, and the batches after it are not started: returns the labels of the jobs left unfinished
    (issue 63: a long job goes on in the next call of a lent device). ``chunk``: iterations per call
    of the program.
    """
    from dpdl.runs import package_versions, stopwatch

    if len({job.dataset for job in jobs}) > 1 or len({job.settings["mnist_agents"] for job in jobs}) > 1:
        raise ConfigError(
            "run_jobs_together takes the jobs of one dataset (and one mnist_agents); call it per dataset"
        )
    program = jax_program()
    rows = load_rows(jobs[0].dataset, npz, jobs[0].settings["mnist_agents"])
    agents = program.padded_agents(rows.features, rows.labels, rows.offsets, rows.n_classes)
    versions = package_versions()
    groups: dict[tuple, list[Job]] = {}
    for job in jobs:
        key = (
            job.backend,
            program.program_of(job.params),
            job.params.iterations,
            job.params.log_every,
            len(job.seeds),
        )
        groups.setdefault(key, []).append(job)
    unfinished: list[str] = []
    # A batch's artifacts are written (their privacy composed: about a minute of PLD accounting per job at
    # T = 1e6) while the next batch runs on the device; every write has ended when this returns.
    writer = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    written = []
    for group in groups.values():
        label = f"{len(group)} jobs: {', '.join(job.label for job in group)}"
        if unfinished:  # an earlier batch stopped at the deadline: this one is not started
            unfinished += [job.label for job in group]
            continue
        log.info("%s: one batch on the jax backend", label)
        elapsed = stopwatch()
        cells = [program.Cell(job.params, job.sequences) for job in group]
        progress = Progress(label, group[0].params.iterations).update
        precision = JAX_PRECISIONS[group[0].backend]
        folder = Path(group[0].outputs[0]).parent
        checkpoint = Checkpoint(
            folder / CHECKPOINT_NAME, batch_identity(group), checkpoint_every_s, stop_at=stop_at
        )
        try:
            results = program.run_cells_jax(
                agents, cells, rows.test_features, rows.test_labels, progress=progress,
                matmul_precision=precision, checkpoint=checkpoint,
                **({} if chunk is None else {"chunk": chunk}),
            )  # fmt: skip
        except RunStopped as stopped:
            log.info("%s: %s", label, stopped)
            unfinished += [job.label for job in group]
            continue
        wall_s, cpu_s = elapsed()
        # earlier calls' too
        wall_s, cpu_s = wall_s + checkpoint.earlier_wall_s, cpu_s + checkpoint.earlier_cpu_s
        for job, result in zip(group, results, strict=True):
            time_s = (wall_s / len(group), cpu_s / len(group))
            written.append(
                writer.submit(write_job, job, rows, result, time_s, versions, checkpoint.resumed_at)
            )
        written.append(writer.submit(checkpoint.remove))  # after its jobs' artifacts
    writer.shutdown(wait=True)
    for done in written:
        done.result()  # a failed write fails the call
    return unfinished


def write_job(
    job: Job, rows: TrainingRows, result, time_s: tuple[float, float], versions: dict, resumed_at: int
):
    """Write one artifact per seed of ``job``.

    Each holds its trace and provenance, the privacy the run spends composed over its iterations;
    ``time_s`` is the job's (wall, CPU) seconds.
    """
    from dpdl.privacy.accounting import privacy_record
    from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS, PENALTY_MAX
    from dpdl.runs import RunResult, run_timing, write_run

    params, spec, settings, card = job.params, job.spec, job.settings, job.card
    if not result.finite:
        log.warning("%s: some logged values are not finite (NaN or inf); the run was not stopped", job.label)
    events = privacy_events(spec.algorithm, job.epsilon, result.noise_multipliers)
    privacy = privacy_record(events, delta=settings["delta"], eps_per_iteration=job.epsilon)
    objt_radius = "a" if params.trust_radius == "code_const" else "a / t^2"
    sizes = np.diff(rows.offsets)
    run_params = {
        "horizon": job.horizon,
        "variant": job.variant_name,
        "algorithm": spec.algorithm,
        "label": spec.label,
        "iterations": params.iterations,
        "log_every": params.log_every,
        "a": spec.a,
        "rho_setting": spec.rho_setting,
        "penalty": {
            **PENALTY_CONSTANTS[job.dataset],
            "rho_max": PENALTY_MAX,
            "factor": spec.rho_factor,
            "static": spec.rho_static,
            "nonprivate_drops_c2": True,
        },
        "beta": params.beta,
        "outp_delta": params.delta,
        "proximity": {
            "objp_eta": "a / sqrt(t)",
            "objt_radius": objt_radius,
            "outp_inverse_eta": "(I_p / 4 + 2 sqrt(t ln(1.25 / delta)) / epsilon) / a",
        },
        "agents": len(sizes),
        "samples": int(sizes.sum()),
        "features": rows.features.shape[1],
        "classes": rows.n_classes,
        "samples_per_agent": {"min": int(sizes.min()), "max": int(sizes.max()), "mean": float(sizes.mean())},
        "test_samples": len(rows.test_labels),
        "replicas_in_job": len(job.seeds),
        "finite": result.finite,
        "dataset_missing_files": list(card.get("missing_files", [])),
        "dtype": "float32",
        "backend": backend_record(job.backend),
        "resumed_after_iteration": resumed_at,
    }
    paper_epsilon = None if math.isinf(job.epsilon) else job.epsilon
    for seed, trace, path in zip(job.seeds, result.traces, job.outputs, strict=True):
        provenance = {
            "study": STUDY,
            "dataset": f"{STUDY}/{job.dataset}",
            "dataset_sha256": card["npz_sha256"],
            "algorithm": job.variant_name,
            "params": run_params,
            "seed": seed,
            "epsilon": paper_epsilon,
            **privacy,
            # nonprivate_algorithm is in the reference run's settings alone
            "switches": {name: settings[name] for name in SWITCHES if name in settings},
            "versions": versions,
            "timing": run_timing(*time_s, params.iterations, len(job.seeds)),
        }
        write_run(path, RunResult(trace, provenance))
    log.info("%s: done in %.1f s (%.1f CPU-s)", job.label, *time_s)
