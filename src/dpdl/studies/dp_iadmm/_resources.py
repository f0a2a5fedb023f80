"""The resources of a run job (memory and wall time), for cluster profiles."""

from __future__ import annotations

from dpdl.studies.dp_iadmm._cells import STUDY, horizon_settings

# Seconds per run-iteration on one core, from the benchmark (benchmarks/bench_dp_iadmm.py, paper
# sizes, 10 seeds), rounded up from 23.6 ms (MNIST) and 107 ms (FEMNIST) measured to cover slower
# machines; doubled for safety.
SECONDS_PER_RUN_ITERATION = {"mnist": 0.04, "femnist": 0.15}
RUNTIME_SAFETY = 2.0
# Largest sizes of the prepared data (rows, agents, classes) as the paper describes them (Table 1).
DATA_SIZES = {"mnist": (60_000, None, 10), "femnist": (36_708, 195, 62)}
BASE_MEMORY_MB = 1000  # interpreter, libraries, the data in uint8 and float32


def run_memory_mb(config: dict, dataset: str, horizon: str) -> int:
    """Memory (MB) of a run job: data, z, z-next and lambda of every seed and the result's copies."""
    section = config[STUDY]
    rows, agents, classes = DATA_SIZES[dataset]
    agents = agents or section["mnist_agents"]
    replicas = horizon_settings(section, horizon)["seeds"]
    state = 5 * agents * 784 * replicas * classes * 4  # z, z-next, lambda, the result's z and lambda
    scores = 2 * rows * replicas * classes * 4
    return int(BASE_MEMORY_MB + (state + scores) / 1e6)


def run_minutes(config: dict, dataset: str, horizon: str) -> int:
    """Expected wall minutes of a run job, from ``SECONDS_PER_RUN_ITERATION`` (doubled)."""
    settings = horizon_settings(config[STUDY], horizon)
    work = settings["iterations"] * settings["seeds"]
    return int(5 + RUNTIME_SAFETY * work * SECONDS_PER_RUN_ITERATION[dataset] / 60)
