"""``dpdl verify`` on a toy build: a job recorded as Snakemake records it, rerun and compared bit for bit.

The study workflows' own run jobs are verified in tests/workflow/test_dzoa_workflow.py; here a two-run job of a few
lines of numpy stands in for one, so every outcome (same, an array or a field that differs, a failed job, a skipped
one, bad input) is quick to reach.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from dpdl import verify as v
from dpdl.cli import main
from dpdl.errors import ArtifactError, ConfigError

MAKE_RUNS = """
import json, sys, time
import numpy as np
scale = float(open(sys.argv[1]).read())
if scale < 0:
    sys.exit("the scale must be positive, not " + str(scale))
for seed, out in enumerate(sys.argv[2:], 1):
    error = np.array([1.0, scale / seed, np.nan, -0.0])
    provenance = {
        "study": "toy", "seed": seed, "epsilon": 0.5,
        "params": {"scale": scale, "resumed_after_iteration": None},
        "versions": {"numpy": np.__version__},
        "timing": {"wall_time_s": time.perf_counter(), "cpu_time_s": 0.25},
    }
    arrays = {"trace/iteration": np.arange(4), "trace/error": error, "provenance": np.array(json.dumps(provenance))}
    np.savez(out, **arrays)
print("wrote", len(sys.argv) - 2, "runs")
"""
RUNS = ("results/toy/runs/a/seed1.npz", "results/toy/runs/a/seed2.npz")
RULE = "toy_run"


def write_record(root: Path, output: str, record: dict, records: Path = v.METADATA) -> None:
    """A record in ``.snakemake/metadata`` (or a marker in ``records``) named as Snakemake's file backend names it."""
    from snakemake.persistence.file import FilePersistence

    stub = SimpleNamespace(_fetch_max_len=lambda subject: os.pathconf(subject, "PC_NAME_MAX"))
    folder = root / records
    folder.mkdir(parents=True, exist_ok=True)
    path = Path(FilePersistence._record_path(stub, str(folder), output))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


@pytest.fixture
def build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A toy build in ``tmp_path`` (the working directory): one job's two runs and Snakemake's record of it."""
    monkeypatch.chdir(tmp_path)
    Path("make_runs.py").write_text(MAKE_RUNS)
    Path("scale.txt").write_text("3.0")
    Path("results/toy/runs/a").mkdir(parents=True)
    Path("logs").mkdir()
    shellcmd = f"python make_runs.py scale.txt {' '.join(RUNS)} > logs/toy.log 2>&1"
    subprocess.run(shellcmd.replace("python", sys.executable, 1), shell=True, check=True)
    for output in RUNS:
        record = {
            "rule": RULE,
            "input": ["make_runs.py", "scale.txt"],
            "log": ["logs/toy.log"],
            "shellcmd": shellcmd,
        }
        write_record(tmp_path, output, record | {"starttime": 100.0, "endtime": 102.5, "incomplete": False})
    return tmp_path


def resave(path: str, change) -> None:
    """Apply ``change`` to a run's arrays and provenance and save it again (a valid file with other contents)."""
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    provenance = json.loads(str(arrays["provenance"]))
    change(arrays, provenance)
    arrays["provenance"] = np.array(json.dumps(provenance))
    np.savez(path, **arrays)


def verified(*paths: str, **options) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    problems = v.verify([Path(p) for p in paths], out=lines.append, **options)
    return lines, problems


def file_lines(lines: list[str]) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in lines if line.startswith("results/"))


def test_an_untouched_build_is_the_same_and_is_left_as_it_was(build: Path) -> None:
    before = {p: p.read_bytes() for p in build.rglob("*") if p.is_file()}
    lines, problems = verified(RUNS[0])  # its job writes both runs: each is compared
    assert problems == [] and file_lines(lines) == dict.fromkeys(
        RUNS, "same"
    )  # NaN and -0.0 as built; timing aside
    assert (
        lines[0]
        == f"job 1 of 1: {RULE}, 2 file(s); recorded: its runs 0.5 s CPU, the job 2.5 s wall: rerunning"
    )
    assert lines[-1].startswith("dpdl verify: 1 job(s) rerun (") and lines[-1].endswith(
        "2 file(s): 2 same, 0 differ, 0 failed"
    )
    assert {p: p.read_bytes() for p in build.rglob("*") if p.is_file()} == before


def test_an_altered_array_differs_naming_the_array_and_its_first_difference(build: Path) -> None:
    built = Path(RUNS[1]).read_bytes()
    resave(
        RUNS[1], lambda arrays, _: arrays["trace/error"].__setitem__(3, 0.0)
    )  # -0.0 to 0.0: equal, other bits
    lines, problems = verified(RUNS[0])
    differs = "DIFFERS: trace/error: row 3: 0.0 in the build, -0.0 rerun (1 of 4 differ)"
    assert file_lines(lines) == {RUNS[0]: "same", RUNS[1]: differs} and problems == [f"{RUNS[1]}: {differs}"]
    changes = {
        "DIFFERS: trace/error: dtype float32 in the build, float64 rerun": lambda arrays: arrays.__setitem__(
            "trace/error", arrays["trace/error"].astype(np.float32)
        ),
        "DIFFERS: trace/error: shape (3,) in the build, (4,) rerun": lambda arrays: arrays.__setitem__(
            "trace/error", arrays["trace/error"][:3]
        ),
        "DIFFERS: trace/extra: in the build, not rerun": lambda arrays: arrays.__setitem__(
            "trace/extra", np.zeros(4)
        ),
        "DIFFERS: trace/error: rerun, not in the build": lambda arrays: arrays.pop("trace/error"),
    }
    for expected, change in changes.items():
        Path(RUNS[1]).write_bytes(built)
        resave(RUNS[1], lambda arrays, _, change=change: change(arrays))
        assert (
            file_lines(verified(RUNS[0])[0])[RUNS[1]] == expected
        )  # a file no longer a valid run: named by its job


def test_an_edited_provenance_field_differs_but_the_execution_fields_do_not(build: Path) -> None:
    def execution(_, provenance: dict) -> None:
        provenance["timing"] = {"wall_time_s": 1e6}
        provenance["versions"]["numpy"] = "0.1"
        provenance["params"]["resumed_after_iteration"] = 40

    built = Path(RUNS[0]).read_bytes()
    resave(RUNS[0], execution)
    lines, problems = verified(RUNS[0])
    assert problems == [] and file_lines(lines) == dict.fromkeys(RUNS, "same")
    assert f"  note: the build's runs record other versions: numpy 0.1 (here {np.__version__})" in lines
    resave(RUNS[0], lambda _, provenance: provenance["params"].__setitem__("scale", 3))  # 3.0 written as 3
    lines, problems = verified(RUNS[0])
    assert file_lines(lines)[RUNS[0]] == "DIFFERS: provenance.params.scale: 3 in the build, 3.0 rerun"
    Path(RUNS[0]).write_bytes(built)
    resave(RUNS[0], lambda _, provenance: provenance.__setitem__("note", "x"))
    assert file_lines(verified(RUNS[0])[0])[RUNS[0]].startswith(
        'DIFFERS: provenance.note: in the build ("x"), not rerun'
    )


def test_a_failing_job_is_reported_with_the_tail_of_its_log(build: Path) -> None:
    Path("scale.txt").write_text("-1")
    lines, problems = verified(RUNS[0])
    failed = "FAILED: the job exited with 1: the scale must be positive, not -1.0"
    assert file_lines(lines) == dict.fromkeys(RUNS, failed) and len(problems) == 2


def test_a_sample_is_drawn_by_its_seed_and_verified_by_job(build: Path) -> None:
    lines, problems = verified(sample=2, seed=7)
    assert problems == [] and lines[0] == "dpdl verify: 2 of 2 run files drawn (--seed 7 draws them again)"
    assert sum(line.startswith("job ") for line in lines) == 1  # both runs come from one job: it reruns once
    assert v.draw([str(i) for i in range(100)], 3, 7) == v.draw([str(i) for i in range(100)], 3, 7)
    lines, problems = verified(sample=1, max_cpu_seconds=0.1)
    assert lines[1].endswith("skipped (over --max-cpu-seconds 0.1)")
    assert problems == ["nothing verified: every job is over --max-cpu-seconds"]


def test_snakemakes_record_names_are_read_back_whatever_their_length(tmp_path: Path) -> None:
    long = "results/toy/runs/" + "/".join(["a" * 60] * 5) + "/seed1.npz"  # over NAME_MAX once encoded
    write_record(tmp_path, long, {"rule": RULE})
    write_record(tmp_path, RUNS[0], {"rule": RULE})
    assert sorted(v.read_records(tmp_path)) == sorted([long, RUNS[0]])
    assert any(part.startswith("@") for path in (tmp_path / v.METADATA).rglob("*") for part in path.parts)


def test_bad_input_is_one_clear_error(build: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ConfigError, match="name run files to verify, or --sample N"):
        verified()
    with pytest.raises(ConfigError, match="name run files to verify, or --sample N"):
        verified(RUNS[0], sample=1)
    with pytest.raises(ConfigError, match="missing.npz: no such file"):
        verified("missing.npz")
    with pytest.raises(ArtifactError, match=r"scale.txt: not a run file \(a run is an .npz"):
        verified("scale.txt")
    np.savez("results/toy/runs/a/seed9.npz", **{"trace/iteration": np.arange(2)})
    with pytest.raises(ArtifactError, match="not a run file: .*seed9.npz: no provenance record"):
        verified("results/toy/runs/a/seed9.npz")
    Path("results/toy/runs/b").mkdir()
    Path("results/toy/runs/b/seed1.npz").write_bytes(
        Path(RUNS[0]).read_bytes()
    )  # a run no job of the build wrote
    with pytest.raises(
        ArtifactError, match=r"b/seed1.npz: Snakemake has no record of the job that wrote it .*--force"
    ):
        verified("results/toy/runs/b/seed1.npz")
    write_record(
        build, RUNS[1], {"external_jobid": None}, v.INCOMPLETE
    )  # a job that started and has not finished
    with pytest.raises(
        ArtifactError, match=r"seed2.npz: its job \(toy_run\) has not finished \(Snakemake marks"
    ):
        verified(RUNS[1])
    with pytest.raises(ConfigError, match="not in this folder"):
        verified(str(Path(sys.executable)))
    assert main(["verify", "results/toy/runs/b/seed1.npz"]) == 1
    (error,) = capsys.readouterr().err.splitlines()
    assert error.startswith(
        "dpdl verify: error: results/toy/runs/b/seed1.npz: Snakemake has no record of the job"
    )
    shutil.rmtree(v.METADATA)
    with pytest.raises(ConfigError, match=r"no build here: .snakemake/metadata does not exist"):
        verified(sample=1)


def test_array_difference_is_bit_for_bit() -> None:
    nan = np.array([1.0, np.nan])
    assert v.array_difference("x", nan, nan.copy()) is None  # NaN where both are NaN
    assert v.array_difference("x", np.zeros((2, 3)), np.eye(2, 3)) == (
        "x: element (0, 0): 0.0 in the build, 1.0 rerun (2 of 6 differ)"
    )
    assert v.array_difference("x", np.array(["a", "b"]), np.array(["a", "c"])).startswith(
        "x: row 1: 'b' in the build"
    )
    assert v.value_difference("p", {"a": [1, float("nan")]}, {"a": [1, float("nan")]}) is None
    assert v.value_difference("p", {"a": [1, 2]}, {"a": [1]}) == "p.a: 2 items in the build, 1 rerun"
