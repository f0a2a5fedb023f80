"""Time what each kind of workflow job imports before it does any work, against baselines measured in the same run.

Run ``python benchmarks/bench_job_imports.py [--repeats N] [JOB ...]``. Each case starts a fresh interpreter that
builds the ``dpdl`` argument parser for the job's command line (as ``python -m dpdl <study> <step> ...`` does) and
imports the modules that the step's command imports when it runs (the study module it calls and what its functions
import inside them; for a run job that writes the privacy of its run, the accountant ``dpdl.privacy.accounting``);
nothing is read or computed. The CPU time (user + system) of each interpreter is the best of ``--repeats`` starts,
reported with its ratio to two baselines started in the same run: ``python -c pass`` and ``python -c "import
numpy"`` (the second is the steadier: the first is near the clock's resolution). Beside each: which of
``dp_accounting``, ``scipy.stats``, pandas, numba, matplotlib and JAX were loaded. One row is not a job: what
Snakemake imports to parse the workflow, at each of its starts. The workflow's test builds start about 200 jobs,
and a paper-scale build thousands: at test size a job's imports are most of its CPU time (docs/development.md,
"Where the tests' time goes").
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys

HEAVY = ("dp_accounting", "scipy.stats", "pandas", "numba", "matplotlib", "jax")
# Each job kind: its command line (as the rule's shell string starts) and the modules its command imports when it
# runs, those its functions import inside them included (the algorithm, the run writer, the plotting). A run job of
# dp_iadmm, dvp_pvp or wddp writes the run's composed privacy (dpdl.privacy.accounting); dzoa's runs read theirs
# from the calibration, which its calibrate job composes. A module that does not exist (an older checkout) is left out.
ALGORITHMS = "dpdl.algorithms"
EACH_GRID = "dpdl.studies.<each>.grid"  # every registered study's grid (the rule files import them)
JOBS = {
    "dpdl --help": (["--help"], []),
    "prepare": (["prepare", "dp_iadmm/mnist"], ["dpdl.data.prepared", "dpdl.config"]),
    "dp_iadmm run": (
        ["dp_iadmm", "run"],
        [
            "dpdl.studies.dp_iadmm.run",
            f"{ALGORITHMS}.dp_iadmm",
            f"{ALGORITHMS}.dp_iadmm_kernel",
            "dpdl.runs",
            "dpdl.privacy.accounting",
        ],
    ),  # fmt: skip
    "dp_iadmm optimum": (
        ["dp_iadmm", "optimum"],
        ["dpdl.studies.dp_iadmm.tune", f"{ALGORITHMS}.dp_iadmm_objective"],
    ),
    "dp_iadmm aggregate": (["dp_iadmm", "aggregate"], ["dpdl.studies.dp_iadmm.aggregate", "dpdl.runs"]),
    "dp_iadmm figure": (
        ["dp_iadmm", "figure"],
        ["dpdl.studies.dp_iadmm.figures", "dpdl.plotting", "seaborn"],
    ),
    "dp_iadmm claims": (["dp_iadmm", "claims"], ["dpdl.studies.dp_iadmm.claims", "dpdl.claims"]),
    "dvp_pvp run": (
        ["dvp_pvp", "run"],
        [
            "dpdl.studies.dvp_pvp.run",
            f"{ALGORITHMS}.dvp_pvp",
            f"{ALGORITHMS}.dvp_pvp_network",
            "dpdl.runs",
            "dpdl.privacy.accounting",
        ],
    ),  # fmt: skip
    "dvp_pvp aggregate": (
        ["dvp_pvp", "aggregate"],
        ["dpdl.studies.dvp_pvp.aggregate", f"{ALGORITHMS}.dvp_pvp_tradeoff"],
    ),
    "dvp_pvp figure": (["dvp_pvp", "figure"], ["dpdl.studies.dvp_pvp.figures", "dpdl.plotting"]),
    "dvp_pvp claims": (["dvp_pvp", "claims"], ["dpdl.studies.dvp_pvp.claims", "dpdl.claims"]),
    "wddp run": (
        ["wddp", "run"],
        ["dpdl.studies.wddp.run", f"{ALGORITHMS}.wddp", "dpdl.runs", "dpdl.privacy.accounting"],
    ),  # fmt: skip
    "wddp tune": (["wddp", "tune"], ["dpdl.studies.wddp.tune", f"{ALGORITHMS}.wddp", "dpdl.privacy.wddp"]),
    "wddp aggregate": (["wddp", "aggregate"], ["dpdl.studies.wddp.aggregate", "dpdl.runs"]),
    "dzoa calibrate": (
        ["dzoa", "calibrate"],
        ["dpdl.studies.dzoa.tune", f"{ALGORITHMS}.dzoa", "dpdl.privacy.accounting"],
    ),
    "dzoa tune": (
        ["dzoa", "tune"],
        ["dpdl.studies.dzoa.tune", f"{ALGORITHMS}.dzoa", f"{ALGORITHMS}.dzoa_dpadmm"],
    ),
    "dzoa run": (
        ["dzoa", "run"],
        ["dpdl.studies.dzoa.run", f"{ALGORITHMS}.dzoa", f"{ALGORITHMS}.dzoa_dpadmm", "dpdl.runs"],
    ),
    "dzoa aggregate": (
        ["dzoa", "aggregate"],
        ["dpdl.studies.dzoa.aggregate", "dpdl.privacy.exact", "dpdl.runs"],
    ),
    "dzoa figure": (["dzoa", "figure"], ["dpdl.studies.dzoa.figures", "dpdl.plotting"]),
    "dzoa claims": (["dzoa", "claims"], ["dpdl.studies.dzoa.claims", "dpdl.claims"]),
    "audit": (["audit"], ["dpdl.audit_report", "dpdl.studies.dzoa.audit"]),
    # not a job: what Snakemake imports to parse the workflow (the rule files' imports), at every start
    "snakemake's parse": (
        None,
        [
            "dpdl.studies",
            "dpdl.readings",
            "dpdl.paths",
            "dpdl.targets",
            "dpdl.config",
            "dpdl.data.fetch",
            "dpdl.report",
            EACH_GRID,
        ],
    ),  # fmt: skip
    "scorecard": (["scorecard"], ["dpdl.summary"]),
}


def cpu_seconds(code: str) -> float:
    """User + system CPU seconds of ``python -c code`` in a fresh interpreter."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], check=True, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def job_code(command_line: list[str] | None, modules: list[str]) -> str:
    """The child's code: the parser of ``command_line`` (none when None), then ``modules`` in order."""
    code = "import importlib, importlib.util, inspect, sys\n"
    if (
        command_line is not None
    ):  # a parser of every study's commands where build_parser takes no command line
        code += "from dpdl.cli import build_parser\n"
        code += f"build_parser(*[{command_line!r}][: len(inspect.signature(build_parser).parameters)])\n"
    for module in modules:
        if module == EACH_GRID:
            code += "from dpdl.studies import ALL\n"
            code += "for name in ALL:\n    importlib.import_module(f'dpdl.studies.{name}.grid')\n"
        else:
            code += f"if importlib.util.find_spec({module!r}):\n    importlib.import_module({module!r})\n"
    return code + f"sys.stderr.write(' '.join(name for name in {HEAVY!r} if name in sys.modules))\n"


def loaded(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stderr.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument(
        "--repeats", type=int, default=3, help="starts per case; the best is reported (default 3)"
    )
    parser.add_argument("jobs", nargs="*", default=list(JOBS), help="job kinds (default: all)")
    args = parser.parse_args()
    best = {name: min(cpu_seconds(code) for _ in range(args.repeats)) for name, code in BASELINES.items()}
    print(f"CPU seconds (user + system), best of {args.repeats} fresh interpreters; ratios to the baselines")
    for name, seconds in best.items():
        print(f"  baseline {name:28s} {seconds:6.2f} s")
    print(f"{'job kind':22s} {'CPU s':>6s} {'/ pass':>7s} {'/ numpy':>8s}  heavy packages loaded")
    for name in args.jobs:
        command_line, modules = JOBS[name]
        code = job_code(command_line, modules)
        seconds = min(cpu_seconds(code) for _ in range(args.repeats))
        ratio_pass, ratio_numpy = seconds / best["python -c pass"], seconds / best["import numpy"]
        print(f"{name:22s} {seconds:6.2f} {ratio_pass:7.1f} {ratio_numpy:8.1f}  {loaded(code) or '-'}")
    return 0


BASELINES = {"python -c pass": "pass", "import numpy": "import numpy"}

if __name__ == "__main__":
    raise SystemExit(main())
