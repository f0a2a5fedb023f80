"""The warm launcher of the workflow tests (``tests/warm_python.py``, ``tests/warm_shim.py``), through its shim.

A fake ``dpdl`` package on ``PYTHONPATH`` (``FAKE_MAIN``) does what each test asks of a job; the real one gives the
argparse codes. A tiny workflow (``SNAKEFILE``) runs a warm Snakemake, whose jobs reach the same server. One server
serves the module; the last test stops it and checks that its jobs' CPU reached this process's ``RUSAGE_CHILDREN``.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import warm_python

ROOT = Path(__file__).resolve().parents[2]
FAKE_MAIN = """
import json, os, sys, time
what = sys.argv[1]
if what == "exit":
    raise SystemExit(int(sys.argv[2]))
if what == "raise":
    raise RuntimeError("planted in the job")
if what == "streams":
    print("to stdout", flush=True)
    print("to stderr", file=sys.stderr)
if what == "env":
    site = sys.modules.get("sitecustomize")
    print(json.dumps({
        "pid": os.getpid(), "cwd": os.getcwd(), "path": sys.path, "env": dict(os.environ), "umask": os.umask(0),
        "argv": sys.argv, "numpy": "numpy" in sys.modules, "site": getattr(site, "__file__", None),
        "executable": sys.executable,
    }))
if what == "sleep":
    print(os.getpid(), flush=True)
    time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 60)
if what == "burn":
    while time.process_time() < float(sys.argv[2]):
        pass
"""

# Snakemake's view of itself, written as it reads the Snakefile (which imports dpdl, as the project's does); what it
# burns there (`--config burn=SECONDS`) counts in the warm child's own CPU.
SNAKEFILE = """
import json, os, sys, time
import dpdl

mask = os.umask(0)
os.umask(mask)
site = sys.modules.get("sitecustomize")
with open("snakemake.json", "w") as seen:
    json.dump({
        "pid": os.getpid(), "cwd": os.getcwd(), "path": sys.path, "env": dict(os.environ), "umask": mask,
        "argv": sys.argv, "seaborn": "seaborn" in sys.modules, "site": getattr(site, "__file__", None),
        "executable": sys.executable, "dpdl": dpdl.__file__,
    }, seen)
print("to stdout from the Snakefile", flush=True)
started = time.process_time()
while time.process_time() - started < float(config.get("burn", 0)):
    pass

rule all:
    input: "job.json", "c.txt"

rule job:
    output: "job.json"
    shell: "python -m dpdl env > {output}"

rule c:
    output: "c.txt"
    shell: "python -c 'print(6 * 7)' > {output}"

rule slow:
    output: "done.txt"
    shell: "python -m dpdl sleep {config[seconds]} > job.pid; touch {output}"
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp("warm")
    (folder / "fake" / "dpdl").mkdir(parents=True)
    (folder / "fake" / "dpdl" / "__init__.py").write_text("")
    (folder / "fake" / "dpdl" / "__main__.py").write_text(FAKE_MAIN)
    (folder / "site").mkdir()
    (folder / "site" / "sitecustomize.py").write_text("import os\nos.environ['SITE_RAN'] = 'yes'\n")
    before = children_cpu()
    server = warm_python.WarmServer(folder / "server").start()
    assert server.wait_ready()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DPDL_")}
    env.update(warm_python.THREADS, PYTHONPATH=f"{folder / 'site'}{os.pathsep}{folder / 'fake'}", FOO="bar")
    yield {"server": server, "env": server.env(env), "folder": folder, "before": before}
    server.stop()


def shim(warm: dict, *args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    kwargs = {"capture_output": True, "text": True, "timeout": 60, "cwd": warm["folder"], **kwargs}
    return subprocess.run([str(warm["server"].python), *args], env=env or warm["env"], **kwargs)


def job_env(warm: dict, **env) -> dict:
    done = shim(warm, "-m", "dpdl", "env", **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_shim_starts_fast(warm: dict) -> None:
    cpu = children_cpu()
    assert shim(warm, "-m", "dpdl", "exit", "0").returncode == 0
    # the shim alone: the job's CPU is the server's child's, counted when the server stops
    assert children_cpu() - cpu < 0.1


def test_exit_codes_as_the_interpreter_gives_them(warm: dict) -> None:
    real = {**warm["env"], "PYTHONPATH": str(ROOT / "src")}
    helped = shim(warm, "-m", "dpdl", "--help", env=real)
    assert helped.returncode == 0 and "usage:" in helped.stdout
    wrong = shim(warm, "-m", "dpdl", "no-such-command", env=real)
    assert wrong.returncode == 2 and "invalid choice: 'no-such-command'" in wrong.stderr
    for code in (0, 1, 3):
        assert shim(warm, "-m", "dpdl", "exit", str(code)).returncode == code


def test_an_uncaught_exception_prints_its_traceback_and_exits_1(warm: dict) -> None:
    done = shim(warm, "-m", "dpdl", "raise")
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.rstrip().endswith("RuntimeError: planted in the job")


def test_output_reaches_the_files_a_shell_redirects_to(warm: dict) -> None:
    log = warm["folder"] / "job.log"
    done = shim(warm, "-m", "dpdl", "streams")  # the shim itself, as Snakemake's shell finds it on PATH
    assert done.stdout == "to stdout\n" and done.stderr == "to stderr\n"
    done = subprocess.run(
        ["sh", "-c", f"python -m dpdl streams > {log} 2>&1"], env=warm["env"], cwd=warm["folder"]
    )
    assert done.returncode == 0
    assert log.read_text() == "to stdout\nto stderr\n"


def test_the_job_sees_what_a_fresh_python_would(warm: dict, tmp_path: Path) -> None:
    warmed = job_env(warm, cwd=tmp_path)
    cold = job_env(warm, cwd=tmp_path, env={**warm["env"], "DPDL_WARM_SOCKET": str(tmp_path / "none")})
    assert warmed["numpy"] and not cold["numpy"]  # one forked from the server, one a plain interpreter
    assert warmed["pid"] != cold["pid"]
    site, fake = (str(warm["folder"] / name) for name in ("site", "fake"))
    assert warmed["path"][:3] == [str(tmp_path), site, fake]  # the cwd, then PYTHONPATH's entries in order
    assert warmed["path"] == cold["path"]
    assert warmed["site"] == cold["site"] == str(warm["folder"] / "site" / "sitecustomize.py")
    assert warmed["env"]["SITE_RAN"] == "yes" and warmed["env"]["FOO"] == "bar"
    del warmed["env"]["DPDL_WARM_SOCKET"], cold["env"]["DPDL_WARM_SOCKET"]
    for key in ("cwd", "env", "umask", "executable"):
        assert warmed[key] == cold[key], key
    assert warmed["argv"][1:] == cold["argv"][1:] == ["env"]


def test_anything_but_dpdl_runs_in_the_real_interpreter(warm: dict) -> None:
    script = "import os, sys; print(os.getpid(), sys.executable, 'numpy' in sys.modules)"
    done = subprocess.Popen(
        [str(warm["server"].python), "-c", script], env=warm["env"], stdout=subprocess.PIPE, text=True
    )
    out, _ = done.communicate(timeout=60)
    assert out.split() == [str(done.pid), sys.executable, "False"]  # the shim exec'd it, same process


def test_without_its_server_the_shim_runs_cold(warm: dict, tmp_path: Path) -> None:
    env = {**warm["env"], "DPDL_WARM_SOCKET": str(tmp_path / "absent")}
    assert not job_env(warm, env=env)["numpy"]
    assert shim(warm, "-m", "dpdl", "exit", "3", env=env).returncode == 3


def test_an_environment_read_at_import_runs_cold(warm: dict) -> None:
    assert not job_env(warm, env={**warm["env"], "OMP_NUM_THREADS": "2"})["numpy"]


def test_sigterm_to_the_shim_kills_its_job(warm: dict) -> None:
    for sent, pending in ((signal.SIGTERM, signal.SIGTERM), (signal.SIGKILL, None)):
        started = subprocess.Popen(
            [str(warm["server"].python), "-m", "dpdl", "sleep"],
            env=warm["env"],
            stdout=subprocess.PIPE,
            text=True,
        )
        pid = int(started.stdout.readline())
        assert pid != started.pid
        started.send_signal(sent)  # SIGKILL: the job's watchdog sees the shim's socket close
        assert started.wait(timeout=30) == -sent
        if pending:  # the shim died of the signal that killed its job, as a shell or Snakemake would see it
            assert_gone(pid, 0)
        else:
            assert_gone(pid, 10)


def assert_gone(pid: int, within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, f"job {pid} outlived its shim"
        time.sleep(0.1)


def workflow(folder: Path, snakefile: str = SNAKEFILE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Snakefile").write_text(snakefile)
    return folder


def calls(warm: dict) -> tuple[int, int]:
    """The calls the server has forked, and those it sent back cold."""
    status = warm["server"].status()
    return status["served"], status["cold"]


def test_a_failing_snakemake_exits_as_a_cold_one(warm: dict, tmp_path: Path) -> None:
    folder = workflow(tmp_path, "rule broken:\n    output: 'x'\n    shell: no_such_name\n")
    served, cold = calls(warm)
    done = shim(warm, "-m", "snakemake", "-n", "--cores", "1", cwd=folder)
    assert calls(warm) == (served + 1, cold)  # forked by the server, not exec'd cold
    assert done.returncode == 1, done.stderr
    assert (
        done.stdout.startswith('NameError in file "') and "no_such_name" in done.stdout
    )  # a cold one's stdout


def test_a_warm_snakemake_runs_a_workflow_whose_jobs_run_warm_too(warm: dict, tmp_path: Path) -> None:
    served, _ = calls(warm)
    done = shim(warm, "-m", "snakemake", "--cores", "1", cwd=workflow(tmp_path))
    assert done.returncode == 0, done.stderr
    assert calls(warm)[0] == served + 2  # Snakemake and its `python -m dpdl` job; `python -c` ran cold
    assert done.stdout == "to stdout from the Snakefile\n"
    assert "3 of 3 steps (100%) done" in done.stderr  # Snakemake's log reached the caller's stderr
    seen = json.loads((tmp_path / "snakemake.json").read_text())
    job = json.loads((tmp_path / "job.json").read_text())
    assert seen["seaborn"] and job["numpy"]
    assert job["env"]["DPDL_WARM_SOCKET"] == str(warm["server"].socket)
    assert (tmp_path / "c.txt").read_text() == "42\n"


def test_a_warm_snakemake_sees_what_a_fresh_one_would(warm: dict, tmp_path: Path) -> None:
    folder = workflow(tmp_path)

    def seen(env: dict) -> dict:
        done = shim(warm, "-m", "snakemake", "-n", "--cores", "1", cwd=folder, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads((folder / "snakemake.json").read_text())

    warmed = seen(warm["env"])
    cold = seen({**warm["env"], "DPDL_WARM_SOCKET": str(tmp_path / "none")})
    assert warmed["seaborn"] and not cold["seaborn"]  # one forked from the server, one a plain interpreter
    assert warmed["pid"] != cold["pid"]
    site, fake = (str(warm["folder"] / name) for name in ("site", "fake"))
    assert warmed["path"][:3] == [str(folder), site, fake]
    assert warmed["site"] == cold["site"] == str(warm["folder"] / "site" / "sitecustomize.py")
    assert warmed["dpdl"] == cold["dpdl"] == str(warm["folder"] / "fake" / "dpdl" / "__init__.py")
    assert warmed["env"]["SITE_RAN"] == "yes"
    del warmed["env"]["DPDL_WARM_SOCKET"], cold["env"]["DPDL_WARM_SOCKET"]
    for key in ("cwd", "path", "env", "umask", "executable", "argv"):
        assert warmed[key] == cold[key], key


def start_slow(warm: dict, folder: Path, seconds: float) -> subprocess.Popen:
    """A warm Snakemake whose one job, a warm ``python -m dpdl sleep``, writes its pid to ``job.pid``."""
    command = [str(warm["server"].python), "-m", "snakemake", "--cores", "1", "done.txt"]
    command += ["--config", f"seconds={seconds}"]
    return subprocess.Popen(
        command,
        cwd=workflow(folder),
        env=warm["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def started_pids(folder: Path, within: float = 120) -> tuple[int, int]:
    """Snakemake's pid and its job's, once the job runs."""
    deadline = time.monotonic() + within
    while not ((folder / "job.pid").is_file() and (folder / "job.pid").read_text().strip()):
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.1)
    return json.loads((folder / "snakemake.json").read_text())["pid"], int((folder / "job.pid").read_text())


def test_a_timeout_kills_the_warm_snakemake_and_its_jobs(warm: dict, tmp_path: Path) -> None:
    started = start_slow(warm, tmp_path, 60)
    snakemake, job = started_pids(tmp_path)
    started.kill()  # what subprocess.run does at its timeout; then it reads the pipes to their end
    started.communicate(timeout=30)  # nothing holds them any more
    assert_gone(snakemake, 10)
    assert_gone(job, 10)


def test_ctrl_c_ends_the_warm_snakemake_and_its_jobs(warm: dict, tmp_path: Path) -> None:
    started = start_slow(warm, tmp_path, 60)
    snakemake, job = started_pids(tmp_path)
    started.send_signal(
        signal.SIGINT
    )  # the shim forwards it to Snakemake's group, as a terminal would send it
    _, err = started.communicate(timeout=60)
    assert started.returncode == 1, err
    assert "Terminating processes on user request" in err
    assert_gone(snakemake, 10)
    assert_gone(job, 10)
    assert not (tmp_path / "done.txt").exists()


def test_sigterm_lets_the_warm_snakemake_finish_its_running_jobs(warm: dict, tmp_path: Path) -> None:
    started = start_slow(warm, tmp_path, 3)
    started_pids(tmp_path)
    started.terminate()  # the shim forwards it to Snakemake alone, as `kill` would reach a cold one
    _, err = started.communicate(timeout=60)
    assert "Will exit after finishing currently running jobs" in err
    assert (tmp_path / "done.txt").exists()  # the job was not killed


def test_the_server_never_holds_dpdl(warm: dict) -> None:
    real = {**warm["env"], "PYTHONPATH": str(ROOT / "src")}
    assert shim(warm, "-m", "dpdl", "--help", env=real).returncode == 0
    status = warm["server"].status()
    assert status["dpdl_modules"] == [] and status["running"] == 0


def test_the_jobs_cpu_counts_in_the_test_process_once_the_server_stops(warm: dict) -> None:
    """Last: stops the module's server. What this process's RUSAGE_CHILDREN gained since the server started holds
    the server's own CPU and, beyond it, that of the jobs it reaped: a job and a Snakemake burning 0.5 CPU-s show."""
    assert shim(warm, "-m", "dpdl", "burn", "0.5").returncode == 0
    burn = ["-m", "snakemake", "-n", "--cores", "1", "--config", "burn=0.5"]
    assert shim(warm, *burn, cwd=workflow(warm["folder"] / "burn")).returncode == 0  # burns as it parses
    stats = warm["server"].stop()
    gained = children_cpu() - warm["before"]
    assert stats["children_cpu"] >= 1
    assert gained - stats["self_cpu"] >= 1, (gained, stats)
    assert not warm["server"].socket.exists()
