"""dp_iadmm on one GPU (issue 37): check the JAX program there, time it against the card's floor, run the stated cells.

Usage (from the project root; on the GPU machine, the prepared MNIST carried in)::

    python benchmarks/device_dp_iadmm.py --out OUT [--wheels DIR] [--cpu] [--build DIR]
        [--more CONFIG --more-readings NAME ... [--only-more] [--readings-only] [--deadline S]]

Steps, each printed as it finishes and appended to ``OUT/device.txt`` at once, measurements in
``OUT/device.json``; a step that fails is reported and the next runs:

1. **The same program on the GPU and on the CPU** (``jax.devices("cpu")``, always present): ObjT and
   OutP at epsilon-bar 0.05, 2 seeds, T = 200, on the prepared MNIST, the same keys; the largest
   difference of w, z and lambda over the largest entry must stay below ``FLOAT32_TOLERANCE`` and
   every logged test error must agree to ``TEST_ERROR_TOLERANCE``.
2. **The card's two ceilings and the iteration's floor**: a 1 GiB float32 copy (bytes read + written
   per second) and an 8192^2 float32 product at ``Precision.HIGHEST`` (FLOP per second), best of 5.
   A seed-iteration's floor is the larger of its bytes (the features read twice per iteration, shared
   by the B seeds) over the copy rate and its FLOP (two products, 2 I J K each) over the product rate.
   Then ObjT on MNIST, 10 seeds, 1,000 iterations after a compiling run: ms per seed-iteration and
   its ratio to the floor, as ``benchmarks/bench_dp_iadmm.py`` reports the CPU's.
3. **The cells of ``--config``** (default ``config/paper_mnist_cells.yaml``: the four stated MNIST
   jobs) with ``dp_iadmm.backend: jax``, and the jobs each ``--readings`` name reaches (default
   ``nonprivate_objt``: the second non-private reference), through ``dpdl.studies.dp_iadmm.run.run_jobs_together``
   (jobs sharing a program run as one batch, each product reading the features once for all of them):
   the run artifacts Snakemake would write, with the device in their provenance. Then the study's
   own steps (``python -m dpdl dp_iadmm aggregate`` and ``claims``, as its rules call them) make the
   aggregates and the claims of the default reading, and the paper grid's GPU time is projected
   from the measured rate.
4. **With ``--more CONFIG``**: that config's other jobs and those of ``--more-readings``, in batches of
   ``--batch`` jobs sharing a program (the default reading's first; ``--readings-only``: the readings'
   alone), while the next batch fits before ``--deadline`` seconds from the start. ``--only-more`` skips
   steps 1 to 3; ``--build DIR`` keeps the build, so a second call on a still-warm machine skips what
   the first built (``--done FILE`` lists job folders built elsewhere).

5. **With ``--long CONFIG``** (issue 63): that config's long-horizon jobs (T = 1e6) in the plan's order (``--plan``
   prints it, with no device: the order that decides the most claims per card-minute, the seeds the engine says can
   decide them, the cost at the measured rates), each cell its own batch but Fig. 5's, batched per algorithm, on
   ``jax_tf32`` where step 2b passed at every cell and ``jax`` otherwise (the run's provenance names it). A batch
   saves its state every ``--save-every`` seconds and, past ``--deadline`` less ``LONG_MARGIN_S``, saves and stops
   (``dpdl.checkpoint.RunStopped``); the state is packed with the runs, and a later call given the unpacked build
   (``--build``, carried in) resumes it, bit for bit. ``--only-long`` skips steps 1, 3 and 4 (step 2 and 2b still run:
   step 5 needs 2b's verdict).

Everything goes into ``OUT/dp_iadmm_device.tar.gz`` (paths as in a build folder; parts of 16 MB when
larger), packed again after each batch, so a call stopped at the device's time limit keeps what it
made. To publish it, unpack it in a build folder (``tar xzmf``), give the runs Snakemake's records
(``snakemake --touch -R dp_iadmm_run ...``) and build and publish as docs/performance.md ("Publishing
what the card made") says.

``--cpu`` runs every step on the CPU at toy sizes (T = 5 in step 1, 64 MiB and 1024^2 in step 2,
20 iterations, 2 seeds and T = 20 in steps 3 and 4), so the script is tested end to end where no GPU
is. ``--wheels DIR`` first installs what the GPU machine lacks from wheels prepared beforehand
(``pip download`` of ``DEVICE_PACKAGES``; no package registry is needed). Exit status 1 when a
check of step 1 fails; the rest still runs and is written.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

# What the script needs beyond the GPU machine's Python (JAX, numpy, scipy, pandas), by import name; it
# imports no numba, matplotlib, seaborn or snakemake (checked on CPU with those made unimportable).
DEVICE_PACKAGES = {"yaml": "pyyaml", "jsonschema": "jsonschema", "dp_accounting": "dp-accounting"}
FLOAT32_TOLERANCE = (
    1e-4  # of the largest entry, after 200 iterations on two devices (reduction orders differ)
)
TEST_ERROR_TOLERANCE = 0.002  # 0.2 pp: a few of 10,000 test rows on either side of a decision boundary
CHECK_EPSILON = 0.05
# Step 2b: jax_tf32 is usable where its test errors are equivalent to jax's: the 2 pp margin of note 8.8 that the
# CPU equivalence test uses (tests/unit/test_dp_iadmm_backends.py), at the epsilon-bars of that test, declared here
# before any TF32 run existed.
TF32_MARGIN_PP = 2.0
TF32_EPSILONS = (1.0, 5.0)
# Step 5: the margin before --deadline at which a long batch saves and stops (the last artifacts' PLD accounting, about
# a minute per job at T = 1e6 on a CPU, and the packing come after it).
LONG_MARGIN_S = 75.0
LONG_SAVE_EVERY_S = 60.0
# Step 5's fallback when jax_tf32 fails step 2b: at HIGHEST the products are FLOP-bound, so a seed costs its share, and
# LONG_SEEDS_HIGHEST seeds keep two long jobs within one call; with TF32 the features' reads dominate and the config's
# seeds cost about as much as fewer (the plan prints both).
LONG_SEEDS_HIGHEST = 3
PLAN_RATE_HIGHEST = (
    19_500  # seed-iterations per second of 10-seed batches at HIGHEST on an H200 (docs/performance.md)
)
PART_BYTES = 16_000_000  # the largest file the device's output may hold (the tarball is split above it)


def install_wheels(folder: Path) -> None:
    """Install every wheel of ``folder`` (no index, no dependency resolution) when a ``DEVICE_PACKAGES`` module is
    missing: the folder holds them and their own needs, and dp-accounting 0.6.0's pin ``attrs<24`` would refuse
    the GPU image's attrs 26.1 (seen on the H200, 2026-11-28), under which it works."""
    missing = [name for module, name in DEVICE_PACKAGES.items() if importlib.util.find_spec(module) is None]
    if missing:
        wheels = [str(path) for path in sorted(folder.glob("*.whl"))]
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", *wheels], check=True
        )


class Report:
    """Lines printed as they come and appended to ``out/device.txt`` at once (a run stopped at the device's
    time limit keeps what it printed); measurements written to ``out/device.json`` by :meth:`save`."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.lines: list[str] = []
        self.values: dict = {}

    def say(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)
        with open(self.out / "device.txt", "a") as text:
            text.write(line + "\n")

    def save(self) -> None:
        (self.out / "device.json").write_text(json.dumps(self.values, indent=2) + "\n")

    def attempt(self, step: str, run, *args, **kwargs):
        """``run(*args, **kwargs)``; an exception is reported (its last lines) and recorded, and None returned,
        so that one failing step leaves the others to run on the device's short lease."""
        try:
            return run(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - any failure of a step is reported, not fatal
            trace = traceback.format_exc().strip().splitlines()[-6:]
            self.values.setdefault("errors", {})[step] = [f"{type(error).__name__}: {error}", *trace]
            self.say(f"   {step} FAILED: {type(error).__name__}: {error}")
            for line in trace:
                self.say(f"     {line}")
            self.save()
            return None


def on(device):
    """A context in which new arrays and programs go to ``device`` (``jax.default_device``, or the config
    option it sets where a JAX version lacks the context manager)."""
    import contextlib

    import jax

    if hasattr(jax, "default_device"):
        return jax.default_device(device)

    @contextlib.contextmanager
    def option():
        before = jax.config.jax_default_device
        jax.config.update("jax_default_device", device)
        try:
            yield
        finally:
            jax.config.update("jax_default_device", before)

    return option()


def mnist_rows(data: Path, card: Path):
    """The prepared MNIST split among 10 agents, as the run job reads it."""
    from dpdl.studies.dp_iadmm.run import load_rows

    if not data.exists() or not card.exists():
        raise SystemExit(
            f"{data} or {card} is missing: prepare MNIST first (snakemake data/processed/dp_iadmm/mnist.npz) and carry "
            "both files to the GPU machine"
        )
    return load_rows("mnist", data, 10)


def params_for(algorithm: str, epsilon: float, iterations: int, log_every: int):
    from dpdl.algorithms.dp_iadmm import IadmmParams, PenaltySchedule
    from dpdl.privacy.dp_iadmm import PENALTY_CONSTANTS

    return IadmmParams(
        algorithm, epsilon, iterations, PenaltySchedule(**PENALTY_CONSTANTS["mnist"]), log_every=log_every
    )


def same_program_on_two_devices(report: Report, rows, iterations: int, devices) -> bool:
    """Step 1: the program on ``devices[0]`` and ``devices[1]`` from the same keys."""
    import numpy as np

    from dpdl.algorithms import dp_iadmm_jax as program

    report.say(
        f"1. the same program on {devices[0]} and on {devices[1]}: T = {iterations}, 2 seeds, the same keys"
    )
    agents = program.padded_agents(rows.features, rows.labels, rows.offsets, rows.n_classes)
    seeds = np.random.SeedSequence(2026).spawn(2)
    passed = True
    for algorithm in ("objt", "outp"):
        params = params_for(algorithm, CHECK_EPSILON, iterations, max(1, iterations // 10))
        results = []
        for device in devices:
            with on(device):
                results.append(
                    program.run_iadmm_jax(agents, params, rows.test_features, rows.test_labels, seeds=seeds)
                )
        first, second = results
        worst = {
            name: float(
                np.abs(getattr(first, name) - getattr(second, name)).max()
                / np.abs(getattr(first, name)).max()
            )
            for name in ("weights", "local", "duals")
        }
        error_gap = max(
            float(np.abs(a["test_error"].to_numpy() - b["test_error"].to_numpy()).max())
            for a, b in zip(first.traces, second.traces, strict=True)
        )
        ok = max(worst.values()) <= FLOAT32_TOLERANCE and error_gap <= TEST_ERROR_TOLERANCE
        passed &= ok
        report.values.setdefault("check", {})[algorithm] = {
            **worst,
            "test_error_gap": error_gap,
            "passed": ok,
        }
        report.say(
            f"   {algorithm}: largest difference / largest entry: w {worst['weights']:.1e}, z {worst['local']:.1e}, "
            f"lambda {worst['duals']:.1e} (at most {FLOAT32_TOLERANCE:g}); test error {100 * error_gap:.2f} pp "
            f"(at most {100 * TEST_ERROR_TOLERANCE:g}): {'PASS' if ok else 'FAIL'}"
        )
    return passed


def best_seconds(run, repeats: int = 5) -> float:
    """The fastest of ``repeats`` timed calls of ``run`` (after one untimed call)."""
    run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def product_rate(side: int, matmul_precision: str) -> float:
    """FLOP per second of a ``side``^2 float32 matrix product at ``matmul_precision``, best of 5."""
    import jax
    import jax.numpy as jnp

    from dpdl.algorithms.dp_iadmm_jax import MATMUL_PRECISIONS

    a = jnp.ones((side, side), jnp.float32)
    product = jax.jit(lambda x: jnp.matmul(x, x, precision=MATMUL_PRECISIONS[matmul_precision]))
    return 2 * side**3 / best_seconds(lambda: product(a).block_until_ready())


def objt_timing(rows, iterations: int, seeds: int, matmul_precision: str) -> tuple[float, float]:
    """ObjT on ``rows``, ``seeds`` seeds, T = ``iterations`` at ``matmul_precision``: (compilation seconds, ms per
    seed-iteration of a second, compiled run)."""
    import numpy as np

    from dpdl.algorithms import dp_iadmm_jax as program

    agents = program.padded_agents(rows.features, rows.labels, rows.offsets, rows.n_classes)
    params = params_for("objt", CHECK_EPSILON, iterations, iterations)
    chosen = np.random.SeedSequence(7).spawn(seeds)
    elapsed = []
    for _ in range(2):  # the first compiles
        start = time.perf_counter()
        program.run_iadmm_jax(
            agents, params, rows.test_features, rows.test_labels, seeds=chosen, matmul_precision=matmul_precision
        )  # fmt: skip
        elapsed.append(time.perf_counter() - start)
    return elapsed[0] - elapsed[1], 1e3 * elapsed[1] / (iterations * seeds)


def ceilings_and_floor(
    report: Report, rows, copy_bytes: int, side: int, iterations: int, seeds: int
) -> float:
    """Step 2: the copy and product ceilings, the iteration's floor, its time (returned: ms per seed-iteration)."""
    import jax
    import jax.numpy as jnp

    report.say("2. ceilings and the iteration against its floor")
    source = jnp.ones(copy_bytes // 4, jnp.float32)
    copy = jax.jit(lambda x: x * 1.0)
    copy_s = best_seconds(lambda: copy(source).block_until_ready())
    bandwidth = 2 * copy_bytes / copy_s  # read + write
    flops = product_rate(side, "highest")
    report.say(
        f"   copy {copy_bytes / 2**30:.2f} GiB: {bandwidth / 1e9:.0f} GB/s; "
        f"product {side}^2: {flops / 1e12:.1f} TFLOP/s"
    )
    rows_n, features = rows.features.shape
    classes = rows.n_classes
    step_bytes = (
        2 * rows_n * features * 4 / seeds
    )  # the features read twice per iteration, shared by the seeds
    step_flops = 2 * 2 * rows_n * features * classes  # the two products of (37) per seed
    floor_ms = 1e3 * max(step_bytes / bandwidth, step_flops / flops)
    compile_s, measured_ms = objt_timing(rows, iterations, seeds, "highest")
    report.values["ceilings"] = {
        "copy_GBps": bandwidth / 1e9,
        "product_TFLOPps": flops / 1e12,
        "floor_ms_per_seed_iteration": floor_ms,
        "measured_ms_per_seed_iteration": measured_ms,
        "compile_s": compile_s,
    }
    report.say(
        f"   ObjT, MNIST, {seeds} seeds, T = {iterations}: {measured_ms:.4f} ms per seed-iteration, "
        f"floor {floor_ms:.4f} "
        f"ms ({'bytes' if step_bytes / bandwidth > step_flops / flops else 'FLOP'}): {measured_ms / floor_ms:.2f}x the "
        f"floor; compilation about {report.values['ceilings']['compile_s']:.1f} s"
    )
    return measured_ms


def tf32_against_highest(
    report: Report, rows, iterations: int, seeds: int, measured_ms: float | None
) -> None:
    """Step 2b: the backend jax_tf32 (the iteration's products at the device's default float32 precision, TF32 on
    a recent GPU) against jax: its product rate and ObjT's time, and its test error against HIGHEST's from the
    same keys for ObjP, ObjT and OutP at epsilon-bar 1 and 5, paired over the seeds, TOST at ``TF32_MARGIN_PP``."""
    import numpy as np

    from dpdl.algorithms import dp_iadmm_jax as program
    from dpdl.seed_statistics import ALPHA, difference

    report.say(f"2b. jax_tf32 against jax: T = {iterations}, {seeds} seeds, the same keys")
    side = 1024 if iterations < 100 else 8192
    flops = product_rate(side, "tf32")
    tf32_ms = objt_timing(rows, iterations, seeds, "tf32")[1]
    agents = program.padded_agents(rows.features, rows.labels, rows.offsets, rows.n_classes)
    chosen = np.random.SeedSequence(11).spawn(seeds)
    values = {"product_TFLOPps": flops / 1e12, "measured_ms_per_seed_iteration": tf32_ms}
    speedup = f", {measured_ms / tf32_ms:.2f}x jax's" if measured_ms else ""
    report.say(f"   product {side}^2 at the default precision: {flops / 1e12:.1f} TFLOP/s; ObjT {tf32_ms:.4f} ms per "
               f"seed-iteration{speedup}")  # fmt: skip
    for algorithm in ("objp", "objt", "outp"):
        cells = [
            program.Cell(params_for(algorithm, e, iterations, iterations), chosen) for e in TF32_EPSILONS
        ]
        errors = {}
        for precision in ("highest", "tf32"):
            results = program.run_cells_jax(
                agents, cells, rows.test_features, rows.test_labels, matmul_precision=precision
            )  # fmt: skip
            errors[precision] = [
                100 * np.array([t["test_error"].iloc[-1] for t in r.traces]) for r in results
            ]
        for epsilon, high, tf32 in zip(TF32_EPSILONS, errors["highest"], errors["tf32"], strict=True):
            gap = difference(high, tf32, paired=True)
            p = max(gap.p_greater(-TF32_MARGIN_PP), gap.p_less(TF32_MARGIN_PP))
            ok = p < ALPHA
            values.setdefault("equivalence", {})[f"{algorithm}_eps{epsilon:g}"] = {
                "highest": float(high.mean()), "tf32": float(tf32.mean()), "tost_p": p, "passed": ok,
            }  # fmt: skip
            report.say(
                f"   {algorithm}, epsilon-bar {epsilon:g}: test error {high.mean():.2f}% (highest) against "
                f"{tf32.mean():.2f}% (tf32), paired TOST at +-{TF32_MARGIN_PP:g} pp: p {p:.2g}, "
                f"{'PASS' if ok else 'FAIL'}"
            )
    report.values["tf32"] = values


def jobs_of(config: dict, readings: list[str]) -> list[tuple[str, dict, str]]:
    """(folder, config, job) for each run job of ``config``'s grid on MNIST, and of each reading where it differs."""
    from dpdl.readings import reading_config, reading_folder
    from dpdl.studies.dp_iadmm import grid

    def grid_jobs(chosen: dict) -> list[str]:
        runs = grid.runs(chosen, {"dp_iadmm/mnist"})
        return list(dict.fromkeys(str(Path(path).parent) for path in runs))

    def settings(chosen: dict, job: str) -> dict:
        horizon, _, name = Path(job).parts[3:6]
        return grid.run_settings(chosen, horizon, name)

    found = [("", config, job) for job in grid_jobs(config)]
    for name in readings:
        other = reading_config(config, grid.STUDY, name)
        for job in grid_jobs(other):
            if settings(other, job) != settings(config, job):  # the reading reaches it
                found.append((str(reading_folder(grid.STUDY, name)), other, job))
    return found


def plan_jobs(build: Path, config: dict, readings: list[str], card: Path, backend: str = "jax") -> list:
    """The run jobs of ``config``'s grid on MNIST and of the ``readings`` (where they differ), on ``backend`` (jax
    or jax_tf32), their artifacts under ``build`` as Snakemake would write them."""
    from dpdl.studies.dp_iadmm import grid
    from dpdl.studies.dp_iadmm.run import plan_job

    card_values = json.loads(card.read_text())
    planned = []
    for folder, chosen, job in jobs_of(config, readings):
        horizon, dataset, name, epsilon_dir = Path(job).parts[3:7]
        epsilon = float(epsilon_dir.removeprefix("eps"))
        seeds = grid.seeds(chosen[grid.STUDY], horizon, name)
        outputs = [str(build / folder / grid.run_path(horizon, dataset, name, epsilon, s)) for s in seeds]
        settings = {**grid.run_settings(chosen, horizon, name), "backend": backend}
        planned.append(
            plan_job(
                horizon=horizon, dataset=dataset, variant_name=name, epsilon=epsilon, settings=settings,
                card=card_values, outputs=outputs,
            )
        )  # fmt: skip
    return planned


def job_folder(build: Path, job) -> str:
    """A job's folder in the build (``results/dp_iadmm/runs/main/mnist/objt/eps5``, or under a reading's)."""
    return str(Path(job.outputs[0]).parent.relative_to(build))


def run_cells(report: Report, build: Path, jobs: list, data: Path) -> float:
    """Step 3: ``jobs`` on the JAX backend, those sharing a program as one batch, written under ``build``;
    returns the seed-iterations per second."""
    from dpdl.runs import read_run
    from dpdl.studies.dp_iadmm.run import run_jobs_together

    start = time.perf_counter()
    run_jobs_together(jobs, data)
    total_s = time.perf_counter() - start
    seed_iterations = sum(job.params.iterations * len(job.seeds) for job in jobs)
    for job in jobs:
        charged = read_run(job.outputs[0]).provenance["timing"]["wall_time_s"] * len(
            job.seeds
        )  # per seed file
        report.say(
            f"   {job_folder(build, job)}, {len(job.seeds)} seeds: {charged:.1f} s (its share of its batch)"
        )
    rate = seed_iterations / total_s
    report.values.setdefault("cells", []).append(
        {"jobs": len(jobs), "wall_s": total_s, "seed_iterations": seed_iterations}
    )
    report.say(
        f"   {len(jobs)} jobs: {total_s:.1f} s for {seed_iterations:,} seed-iterations "
        f"({rate:,.0f} per second, compilation included)"
    )
    return rate


def chunks_of(jobs: list, size: int) -> list[list]:
    """``jobs`` in batches of at most ``size`` that share a compiled program, in the order they come."""
    from dpdl.algorithms.dp_iadmm_jax import program_of

    groups: dict[tuple, list] = {}
    for job in jobs:
        key = (program_of(job.params), job.params.iterations, job.params.log_every, len(job.seeds))
        groups.setdefault(key, []).append(job)
    return [group[i : i + size] for group in groups.values() for i in range(0, len(group), size)]


def run_until(
    report: Report, build: Path, jobs: list, data: Path, out: Path, size: int, deadline: float, rate
):
    """Step 4: ``jobs`` in batches of at most ``size`` (the default reading's first), packing the build after
    each, while the next batch's time at ``rate`` (seed-iterations per second: step 3's until a batch has run,
    then step 4's batches' together, so that a small batch's compilation does not stop it early) ends before
    ``deadline`` (a ``time.perf_counter`` value)."""
    reading = [job for job in jobs if job_folder(build, job).startswith("results/readings/")]
    chunks = chunks_of([job for job in jobs if job not in reading], size) + chunks_of(reading, size)
    report.say(f"4. {len(jobs)} more run jobs in {len(chunks)} batches of at most {size}, until the deadline")
    worked, spent = 0, 0.0
    for done, chunk in enumerate(chunks):
        work = sum(job.params.iterations * len(job.seeds) for job in chunk)
        if rate and time.perf_counter() + work / rate + 30 > deadline:
            left = [job_folder(build, job) for later in chunks[done:] for job in later]
            report.values["not_run"] = left
            report.say(f"   stopped before the deadline: {len(left)} jobs not run (device.json, not_run)")
            break
        start = time.perf_counter()
        run_cells(report, build, chunk, data)
        worked, spent = worked + work, spent + time.perf_counter() - start
        rate = worked / spent
        pack(build, out)
        report.save()


def study_steps(report: Report, build: Path, config: dict, card: Path) -> None:
    """The default reading's aggregates and claims from the runs, by the commands the study's rules run."""
    from dpdl.studies.dp_iadmm import grid

    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    names = grid.available_aggregates(config, {"dp_iadmm/mnist"})
    card_copy = build / "data/processed/dp_iadmm/mnist.json"
    card_copy.parent.mkdir(parents=True, exist_ok=True)
    card_copy.write_bytes(card.read_bytes())
    for name in names:
        runs = grid.figure_run_paths(name, config, {"dp_iadmm/mnist"})
        out, seeds_out = grid.aggregate_path(name), grid.seeds_path(name)
        Path(build / out).parent.mkdir(parents=True, exist_ok=True)
        command = ["aggregate", name, "--runs", *runs, "--out", out, "--seeds-out", seeds_out]
        subprocess.run([sys.executable, "-m", "dpdl", "dp_iadmm", *command], cwd=build, env=env, check=True)
    claims = [grid.claims_path("csv"), grid.claims_path("md")]
    command = [
        "claims", "--aggregates", *(grid.seeds_path(n) for n in names), "--cards", str(card_copy.relative_to(build)),
        "--settings", json.dumps(grid.claim_settings(config)), "--out", *claims,
    ]  # fmt: skip
    Path(build / claims[0]).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "dpdl", "dp_iadmm", *command], cwd=build, env=env, check=True)
    report.say(f"   aggregates {', '.join(names)} and {claims[0]} written")


def projected_paper_hours(report: Report, rate_mnist: float) -> None:
    """The paper grid's GPU hours at the measured MNIST rate; FEMNIST's seed-iteration costs its FLOP ratio more."""
    from dpdl.config import load_config
    from dpdl.studies.dp_iadmm import grid

    paper = load_config(ROOT / "config/paper.yaml")
    section = paper[grid.STUDY]
    work = {"mnist": 0, "femnist": 0}
    for path in grid.runs(paper, {"dp_iadmm/mnist", "dp_iadmm/femnist"}):
        horizon, dataset = Path(path).parts[3:5]
        work[dataset] += grid.horizon_settings(section, horizon)[
            "iterations"
        ]  # one seed file = one seed's run
    rows, _, classes = grid.DATA_SIZES["femnist"]
    femnist_cost = rows * classes / (grid.DATA_SIZES["mnist"][0] * grid.DATA_SIZES["mnist"][2])  # I K ratio
    hours = (work["mnist"] + femnist_cost * work["femnist"]) / rate_mnist / 3600
    report.values["paper_grid"] = {**work, "femnist_cost_ratio": femnist_cost, "projected_hours": hours}
    report.say(
        f"   the paper grid: {work['mnist']:,} MNIST and {work['femnist']:,} FEMNIST seed-iterations; at this rate "
        f"(FEMNIST's {femnist_cost:.1f}x MNIST's, the FLOP ratio) about {hours:.2f} GPU-hours"
    )


def long_batches(config: dict) -> list[tuple[str, list[str]]]:
    """The long-horizon cells of ``config`` (``dp_iadmm.cells`` entries ``long/...``) in its order, as (aggregate,
    batch): each Remark 3 cell alone (its four claims come first), then Fig. 5's cells batched per algorithm (one
    compiled program, each product reading the features once for the batch)."""
    cells = [cell for cell in config["dp_iadmm"].get("cells", []) if cell.startswith("long/")]
    epsilons = {float(e) for e in config["dp_iadmm"].get("remark3_epsilons", [])}
    batches = [("remark3", [cell]) for cell in cells if float(cell.rsplit("/eps", 1)[1]) in epsilons]
    per_variant: dict[str, list[str]] = {}
    for cell in cells:
        if float(cell.rsplit("/eps", 1)[1]) not in epsilons:
            per_variant.setdefault(cell.split("/")[2], []).append(cell)
    return batches + [("fig5", batch) for batch in per_variant.values()]


def print_plan(config: dict, rate_highest: float, published: Path) -> None:
    """Item 1 of issue 63: the long jobs' order, the claims each batch feeds, the seeds the engine's
    ``seeds_for_halfwidth`` says can decide them (from the main horizon's per-seed spread, the nearest measured
    cells: a proxy decided before any long run exists) and their card time at ``rate_highest`` (seed-iterations
    per second at full float32, measured on an H200; TF32's rate is step 2b's)."""
    import pandas as pd

    from dpdl.seed_statistics import seeds_for_halfwidth
    from dpdl.studies.dp_iadmm.claims import CLAIMS
    from dpdl.studies.dp_iadmm.extract import TOLERANCE_PP

    section = config["dp_iadmm"]
    iterations, seeds = section["long_iterations"], section["long_seeds"]
    table = pd.read_csv(published / "aggregates/fig2a_seeds.csv")
    final = table[(table.metric == "test_error") & (table.dataset == "mnist")]
    final = final[final.iteration == final.iteration.max()]
    proxy = final[
        final.epsilon == final.epsilon[final.epsilon > 0].min()
    ]  # the smallest epsilon-bar measured
    spread = {a: 100 * v.std(ddof=1) for a, v in proxy.groupby("variant")["value"]}
    aggregates = {
        name: [c.id.split(".", 1)[1] for c in CLAIMS if c.aggregate == f"{name}_seeds"]
        for name in ("remark3", "fig5")
    }
    print(f"Plan for the long horizon (T = {iterations:,}; config long_seeds = {seeds}):")
    print(f"  seed spread proxy (MNIST, T = 2e4, epsilon-bar {proxy.epsilon.iloc[0]:g}, test error SD in pp): "
          + ", ".join(f"{a} {v:.2f}" for a, v in sorted(spread.items())))  # fmt: skip
    for number, (figure, batch) in enumerate(long_batches(config), 1):
        variants = sorted({cell.split("/")[2] for cell in batch})
        need = max(
            seeds_for_halfwidth(spread.get(v, max(spread.values())), TOLERANCE_PP["mnist"]) or 99
            for v in variants
        )
        work = len(batch) * iterations
        print(
            f"  {number:2d}. {', '.join(batch)}: feeds {figure} ({len(aggregates[figure])} claims: "
            f"{', '.join(aggregates[figure])}); fewest seeds to decide at the paper's value: {need}; "
            f"{work * seeds / rate_highest:,.0f} card-s at HIGHEST with {seeds} seeds "
            f"({work * LONG_SEEDS_HIGHEST / rate_highest:,.0f} with {LONG_SEEDS_HIGHEST})"
        )
    print(f"  with jax_tf32 (step 2b passed): {seeds} seeds; with jax (HIGHEST): {LONG_SEEDS_HIGHEST} seeds")


def run_long(
    report: Report,
    build: Path,
    config: dict,
    card: Path,
    data: Path,
    out: Path,
    stop_at: float,
    backend,
    chunk=None,
):
    """Step 5: the long batches of ``config`` on ``backend`` (``jax_tf32`` or ``jax``) until ``stop_at`` (a
    ``time.time()``), each saving its state every ``LONG_SAVE_EVERY_S`` and at the stop; packed after each.
    ``chunk``: iterations per call of the program (the default's 1,000; fewer in ``--cpu``'s toy runs)."""
    import numpy as np

    from dpdl.studies.dp_iadmm.run import CHECKPOINT_NAME, run_jobs_together

    if backend == "jax":
        config["dp_iadmm"]["long_seeds"] = min(config["dp_iadmm"]["long_seeds"], LONG_SEEDS_HIGHEST)
    jobs = {
        job_folder(build, job).split("/runs/", 1)[1]: job
        for job in plan_jobs(build, config, [], card, backend)
    }
    batches = long_batches(config)
    report.say(
        f"5. {sum(len(b) for _, b in batches)} long jobs in {len(batches)} batches on {backend}, until the deadline"
    )
    for _, batch in batches:
        chosen = [jobs[cell] for cell in batch if not Path(jobs[cell].outputs[-1]).exists()]
        if not chosen:
            continue
        start, resumed = time.perf_counter(), (Path(chosen[0].outputs[0]).parent / CHECKPOINT_NAME).exists()
        left = run_jobs_together(
            chosen, data, checkpoint_every_s=LONG_SAVE_EVERY_S, stop_at=stop_at, chunk=chunk
        )
        spent = time.perf_counter() - start
        record = {
            "cells": batch,
            "wall_s": spent,
            "resumed": resumed,
            "finished": not left,
            "backend": backend,
        }
        if left:
            saved = dict(np.load(Path(chosen[0].outputs[0]).parent / CHECKPOINT_NAME, allow_pickle=False))
            record["stopped_after_iteration"] = int(saved["iteration"])
        report.values.setdefault("long", []).append(record)
        state = "finished" if not left else f"stopped after iteration {record['stopped_after_iteration']:,}"
        report.say(f"   {', '.join(batch)} ({len(chosen[0].seeds)} seeds): {spent:.1f} s, {state}"
                   f"{' (resumed)' if resumed else ''}")  # fmt: skip
        pack(build, out)
        report.save()
        if left:
            break


def pack(build: Path, out: Path) -> list[str]:
    """``build`` as one tarball in ``out``, split into parts of at most ``PART_BYTES`` bytes; the previous
    tarball stays whole until the new one is written (a run stopped while packing keeps the last)."""
    name = "dp_iadmm_device.tar.gz"
    partial = out / "packing.tmp"
    with tarfile.open(partial, "w:gz") as archive:
        for path in sorted(build.rglob("*")):
            if path.is_file():
                archive.add(path, arcname=str(path.relative_to(build)))
    data = partial.read_bytes()
    if len(data) <= PART_BYTES:
        names = [name]
        partial.replace(out / name)
    else:
        names = [f"{name}.part{i // PART_BYTES}" for i in range(0, len(data), PART_BYTES)]
        for i, part in enumerate(names):
            (out / f"{part}.tmp").write_bytes(data[i * PART_BYTES : (i + 1) * PART_BYTES])
        for part in names:
            (out / f"{part}.tmp").replace(out / part)
        partial.unlink()
    for older in out.glob(f"{name}*"):
        if older.name not in names:
            older.unlink()
    return names  # cat the parts in order to rebuild the tarball


def main() -> int:
    started = time.perf_counter()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, help="folder for device.txt, device.json and the tarball (required)"
    )
    parser.add_argument(
        "--plan", type=Path, metavar="CONFIG", help="print CONFIG's long-horizon plan and stop (no device)"
    )
    parser.add_argument(
        "--long", type=Path, metavar="CONFIG", help="step 5: CONFIG's long-horizon jobs by the plan"
    )
    parser.add_argument("--only-long", action="store_true", help="steps 2, 2b and 5 alone")
    parser.add_argument(
        "--long-backend",
        choices=["jax", "jax_tf32"],
        help="step 5 alone on this backend (step 2b passed in an earlier call)",
    )
    parser.add_argument(
        "--margin", type=float, default=LONG_MARGIN_S, help="step 5 stops this many seconds before --deadline"
    )
    parser.add_argument(
        "--cpu", action="store_true", help="every step on the CPU at toy sizes (the script's own test)"
    )
    parser.add_argument("--config", type=Path, default=ROOT / "config/paper_mnist_cells.yaml")
    parser.add_argument(
        "--readings", nargs="*", default=["nonprivate_objt"], help="dp_iadmm readings to run too"
    )
    parser.add_argument(
        "--more", type=Path, help="step 4: then this config's jobs (and readings), until --deadline"
    )
    parser.add_argument(
        "--more-readings", nargs="*", default=[], help="the readings of step 4's config to run too"
    )
    parser.add_argument(
        "--only-more", action="store_true", help="skip steps 1 to 3 (a second call on the device)"
    )
    parser.add_argument("--readings-only", action="store_true", help="step 4 runs the readings' jobs alone")
    parser.add_argument(
        "--done", type=Path, help="a file of job folders step 4 skips (built by an earlier call)"
    )
    parser.add_argument("--batch", type=int, default=6, help="step 4's jobs per batch (10 seeds each)")
    parser.add_argument(
        "--deadline", type=float, default=480, help="seconds from the start by which step 4 stops"
    )
    parser.add_argument(
        "--build", type=Path, help="the build folder (kept; default a temporary one, removed)"
    )
    parser.add_argument("--data", type=Path, default=ROOT / "data/processed/dp_iadmm/mnist.npz")
    parser.add_argument("--card", type=Path, default=ROOT / "data/processed/dp_iadmm/mnist.json")
    parser.add_argument(
        "--wheels", type=Path, help="install what is missing from these wheels first (no index)"
    )
    args = parser.parse_args()
    if args.plan:
        from dpdl.config import load_config

        print_plan(load_config(args.plan.resolve()), PLAN_RATE_HIGHEST, ROOT / "published/dp_iadmm")
        return 0
    if args.out is None:
        parser.error("--out is required (or --plan CONFIG)")
    for name in (
        "out",
        "config",
        "more",
        "long",
        "done",
        "build",
        "data",
        "card",
        "wheels",
    ):  # as given, then from the project root
        if getattr(args, name) is not None:
            setattr(args, name, getattr(args, name).resolve())
    os.chdir(ROOT)  # from the project root, as the workflow runs its jobs
    if args.wheels:
        install_wheels(args.wheels)
    import jax

    from dpdl.config import load_config

    args.out.mkdir(parents=True, exist_ok=True)
    report = Report(args.out)
    cpu = jax.devices("cpu")[0]
    accelerators = [d for d in jax.devices() if d.platform != "cpu"]
    if not args.cpu and not accelerators:
        raise SystemExit(
            "JAX finds no GPU here (jax.devices() is CPU only); install jax[cuda12] or pass --cpu"
        )
    device = cpu if args.cpu else accelerators[0]
    report.values["machine"] = {
        "python": platform.python_version(),
        "jax": jax.__version__,
        "device": f"{device.platform}: {device.device_kind}",
        "cpu_count": os.cpu_count(),
        "mode": "cpu" if args.cpu else "gpu",
    }
    report.say(
        f"dp_iadmm on {device.device_kind} ({device.platform}); jax {jax.__version__}, "
        f"Python {platform.python_version()}"
    )
    rows = mnist_rows(args.data, args.card)

    def toy(config: dict) -> dict:
        if args.cpu:
            config["dp_iadmm"].update(iterations=20, log_every=10, seeds=2)
        return config

    passed, rate = None, None
    build = args.build or Path(tempfile.mkdtemp(prefix="dp_iadmm_device_"))
    build.mkdir(parents=True, exist_ok=True)

    def ceilings_and_tf32() -> None:
        """Steps 2 and 2b (toy sizes with --cpu)."""
        copy_bytes, side, iterations, seeds, tf32_iterations = (2**26, 1024, 3, 2, 5) if args.cpu else (
            2**30, 8192, 1000, 10, 1000
        )  # fmt: skip
        measured = report.attempt(
            "step 2", ceilings_and_floor, report, rows, copy_bytes, side, iterations=iterations, seeds=seeds
        )
        report.attempt("step 2b", tf32_against_highest, report, rows, tf32_iterations, seeds, measured)
        report.save()

    with on(device):
        if args.only_long:
            if not args.long_backend:  # an earlier call's step 2b decided the backend
                ceilings_and_tf32()
        elif not args.only_more:
            passed = report.attempt(
                "step 1", same_program_on_two_devices, report, rows, 5 if args.cpu else 200, (device, cpu)
            )
            report.save()
            ceilings_and_tf32()
            config = toy(load_config(args.config))
            jobs = plan_jobs(build, config, args.readings, args.card)
            folders = ", ".join(
                f or "default" for f in dict.fromkeys(f for f, _, _ in jobs_of(config, args.readings))
            )
            report.say(
                f"3. {len(jobs)} run jobs on the jax backend, batched where they share a program ({folders})"
            )
            rate = report.attempt("step 3", run_cells, report, build, jobs, args.data)
            if rate:
                pack(build, args.out)
                report.attempt(
                    "step 3's aggregates and claims", study_steps, report, build, config, args.card
                )
                report.attempt("the projection", projected_paper_hours, report, rate)
                pack(build, args.out)
            report.save()
        if args.more:
            done = set(args.done.read_text().split()) if args.done else set()
            more = [
                job
                for job in plan_jobs(build, toy(load_config(args.more)), args.more_readings, args.card)
                if job_folder(build, job) not in done
                and not Path(job.outputs[-1]).exists()
                and (job_folder(build, job).startswith("results/readings/") or not args.readings_only)
            ]
            deadline = started + args.deadline
            report.attempt(
                "step 4", run_until, report, build, more, args.data, args.out, args.batch, deadline, rate
            )
            report.save()
        if args.long:
            cells = report.values.get("tf32", {}).get("equivalence", {})
            backend = args.long_backend or (
                "jax_tf32" if cells and all(c["passed"] for c in cells.values()) else "jax"
            )
            long_config = load_config(args.long)
            if args.cpu:
                long_config["dp_iadmm"].update(long_iterations=40, long_log_every=10, long_seeds=2)
            stop_at = time.time() + args.deadline - (time.perf_counter() - started) - args.margin
            chunk = 10 if args.cpu else None  # save points within the toy runs
            report.attempt(
                "step 5",
                run_long,
                report,
                build,
                long_config,
                args.card,
                args.data,
                args.out,
                stop_at,
                backend,
                chunk,
            )
            report.save()
    parts = pack(build, args.out)
    if not args.build:
        shutil.rmtree(build)
    report.say(f"written: {args.out / 'device.txt'}, device.json, {', '.join(parts)}")
    if passed is False or (passed is None and not (args.only_more or args.only_long)):
        report.say("step 1 FAILED: the GPU's result is not the CPU's to float32 tolerance (see above)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
