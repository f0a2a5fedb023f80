"""A warm interpreter for the workflow tests' ``python -m dpdl`` and ``-m snakemake``: a fork server per test worker.

A cold ``python -m dpdl <job>`` spends most of its 0.6-4 CPU-s importing numpy, pandas, scipy, dp_accounting, numba,
jsonschema, matplotlib and seaborn; forked from a process that imported them already, the same job costs 0.1-1.6
(notes of issue 60, item 7); a cold ``python -m snakemake`` spends ~2.4 CPU-s importing Snakemake (sqlalchemy,
pydantic, docutils, jinja2, pulp...) before its first job. The server (``serve``, run as
``python tests/warm_python.py serve <folder>``) imports those modules once, never ``dpdl``, and listens on
``<folder>/sock``. The ``python`` shim (``warm_shim.py``, written to ``<folder>/bin/python``) sends it each
``-m dpdl`` or ``-m snakemake`` call's module, argv, cwd, environment, umask and fds 0/1/2; the server forks a
child, which becomes what a fresh ``python -m <module>`` with that environment would be (cwd, environment,
``sys.path`` with the ``PYTHONPATH`` entries first, the ``sitecustomize`` found there imported, std streams on the
caller's fds) and runs the module with ``runpy``, ending as the interpreter would (exit codes, tracebacks, atexit).
A warm Snakemake's jobs (``python -m dpdl`` shells) find the shim on its ``PATH`` and are forked by the same server.
The server only imports: no thread runs in it when it forks (``preload`` checks), and a child starts its own.

The CPU stays counted: the server reaps each child (``wait4``; SIGCHLD is never ignored, which would make Linux drop
the children's CPU), answers the shim with the child's status, and exits only once every child is reaped; the test
process waits for it (``WarmServer.stop``), so ``/usr/bin/time`` and ``RUSAGE_CHILDREN`` see every job's CPU.

A call runs cold (the shim execs the real interpreter) when no server answers, or when an environment variable read
at import time (``IMPORT_TIME``) differs from the server's: a warm child could not honour it.
``DPDL_TEST_WARM=0`` turns the whole launcher off (``enabled``).
"""

from __future__ import annotations

import atexit
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# What Snakemake sets for each job of `threads: 1` (every dpdl rule): numpy's BLAS reads it once, at import, so
# the server is started with it, and the workflow projects' environment carries it for their direct dpdl calls.
THREADS = dict.fromkeys(
    (
        "OMP_NUM_THREADS",
        "GOTO_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    ),
    "1",
)
# Environment variables that the interpreter or a preloaded module reads at start-up or import: a call whose value
# differs from the server's runs cold.
IMPORT_TIME = (
    "PYTHON",
    "OMP_",
    "GOTO_",
    "OPENBLAS_",
    "MKL_",
    "VECLIB_",
    "NUMEXPR_",
    "NUMBA_",
    "MPL",
    "KMP_",
    "NPY_",
)
IMPORT_TIME += ("LANG", "LC_", "HOME", "XDG_")
PYTHONPATH_HANDLED = "PYTHONPATH"  # set per child


def import_time_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME) and k != PYTHONPATH_HANDLED}


def enabled() -> bool:
    """``DPDL_TEST_WARM=0`` runs every job cold, as a plain ``python`` would."""
    return os.environ.get("DPDL_TEST_WARM", "1") != "0"


# ------------------------------------------------------------------------------------------------ the server


def dpdl_modules() -> list[str]:
    return sorted(name for name in sys.modules if name == "dpdl" or name.startswith("dpdl."))


WARM_MODULES = ("dpdl", "snakemake")  # what the server runs, as `python -m` would (the shim's list too)
# What importing a module appends to `sys.path` (Snakemake's __init__: ".snakemake/pip-deployments", relative), as
# `python -m <module>` has it at the end: filled by preload, left out of every child's path but that module's.
IMPORT_PATHS: dict[str, list[str]] = {}


def preload() -> None:
    """The third-party modules of dpdl's jobs and of Snakemake (the measured bulk of a cold start's CPU).

    Never dpdl itself: the workflow's ``sitecustomize`` patches dpdl's pins, and dpdl reads its environment at
    import (the projects' Snakefiles import dpdl: in a warm Snakemake, that happens in the child). No thread: a
    forked child would lack it, and a lock held by one would stay held."""
    import threading

    import dp_accounting  # noqa: F401
    import jsonschema  # noqa: F401
    import matplotlib
    import numba
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import scipy.linalg  # noqa: F401
    import scipy.optimize  # noqa: F401
    import scipy.signal  # noqa: F401
    import scipy.stats  # noqa: F401
    import yaml  # noqa: F401

    # numba's CPU target (its typing and lowering registries, its entry points) made ready once: a dp_iadmm run
    # job's first call of its cached kernel spent ~0.7 of its ~0.9 CPU-s there (0.2 with it ready). Compiles no
    # dpdl code and starts no thread.
    numba.njit(lambda x: x + 1)(1)
    matplotlib.use("Agg")  # as dpdl.plotting does
    import matplotlib.pyplot
    import seaborn  # noqa: F401

    # A first figure drawn and saved as PNG and PDF (fonts loaded, text laid out): a figure job then spent ~0.5 CPU-s
    # less of its ~2.5. Nothing is written.
    fig, ax = matplotlib.pyplot.subplots(layout="constrained")
    ax.plot([0, 1], [0, 1], label="line")
    ax.set(title="title", xlabel="x", ylabel="y", yscale="log")
    ax.legend()
    fig.text(0, 0, "note")
    for fmt in ("png", "pdf"):
        fig.savefig(io.BytesIO(), format=fmt)
    matplotlib.pyplot.close(fig)

    # What `python -X importtime -m snakemake` loads in a test project, past what is above: its command line, API,
    # workflow, DAG, scheduler (pulp: the ILP scheduler), local executor, report (docutils, jinja2), persistence
    # (sqlalchemy, sqlmodel), storage (smart_open, requests); none reads the environment at import.
    path = list(sys.path)
    import pulp  # noqa: F401
    import requests  # noqa: F401
    import smart_open  # noqa: F401
    import snakemake.api  # noqa: F401
    import snakemake.cli  # noqa: F401
    import snakemake.dag  # noqa: F401
    import snakemake.executors.local  # noqa: F401
    import snakemake.profiles  # noqa: F401
    import snakemake.report.html_reporter  # noqa: F401
    import snakemake.scheduling.job_scheduler  # noqa: F401
    import snakemake.shell  # noqa: F401
    import snakemake.storage  # noqa: F401
    import snakemake.workflow  # noqa: F401

    IMPORT_PATHS["snakemake"] = [entry for entry in sys.path if entry not in path]
    assert not dpdl_modules(), f"the warm server imported {dpdl_modules()}"
    assert threading.active_count() == 1, f"the warm server runs threads: {threading.enumerate()}"


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} [{os.getpid()}] {message}", file=sys.stderr, flush=True)


def receive(conn: socket.socket) -> tuple[dict, list[int]]:
    """One request: a 4-byte length with the fds attached, then that many bytes of JSON."""
    header, fds, _, _ = socket.recv_fds(conn, 4, 3)
    try:
        while len(header) < 4:
            more = conn.recv(4 - len(header))
            if not more:
                raise ConnectionError("request cut short")
            header += more
        size, body = int.from_bytes(header, "big"), b""
        while len(body) < size:
            more = conn.recv(size - len(body))
            if not more:
                raise ConnectionError("request cut short")
            body += more
        return json.loads(body), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def send(conn: socket.socket, message: dict) -> None:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass  # the shim is gone; its child's watchdog ends the child


class Server:
    def __init__(self, folder: Path, base_path: list[str]) -> None:
        self.folder = folder
        self.base_path = base_path  # what any `python` here starts with
        self.env = import_time_env(dict(os.environ))
        self.running: dict[int, tuple[socket.socket, list[str], float]] = {}
        self.stopping = False
        self.served = self.cold = 0

    def serve(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        os.set_blocking(wake_r, False)
        signal.set_wakeup_fd(wake_w)
        # A handler, never SIG_IGN: ignored, SIGCHLD makes Linux reap the children itself and drop their CPU.
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stopping", True))
        signal.signal(signal.SIGINT, lambda *_: setattr(self, "stopping", True))
        path = self.folder / "sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path.unlink(missing_ok=True)  # a dead server's
        listener.bind(str(path))
        listener.listen(64)
        self.own_fds = [listener.fileno(), wake_r, wake_w]
        print("ready", flush=True)
        log(f"ready: preloaded in {time.process_time():.2f} CPU-s; base path {self.base_path}")
        deadline, killed = None, False
        while True:
            if self.stopping and listener.fileno() != -1:
                listener.close()
                path.unlink(missing_ok=True)
                deadline = time.monotonic() + 30
                log(f"stopping; waiting for {len(self.running)} job(s)")
            if deadline is not None and time.monotonic() > deadline:
                for pid in self.running:
                    log(f"killing job {pid}, still running 30 s after the stop")
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                deadline = time.monotonic() + 5
                if killed:
                    break  # unkillable (a stopped job's group was SIGKILLed already): give up on them
                killed = True
            watched = [wake_r] + ([listener, sys.stdin] if not self.stopping else [])
            try:
                ready, _, _ = select.select(watched, [], [], 1.0)
            except InterruptedError:
                ready = []
            if wake_r in ready:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            if sys.stdin in ready and not os.read(sys.stdin.fileno(), 512):
                self.stopping = True  # the test process closed our stdin (WarmServer.stop), or died
            if listener in ready and not self.stopping:
                conn, _ = listener.accept()
                try:
                    self.handle(conn)
                except Exception as error:  # a bad request costs that request, never the server
                    log(f"request failed: {error!r}")
                    conn.close()
            self.reap()
            if self.stopping and not self.running:
                break
        listener.close()
        path.unlink(missing_ok=True)
        import resource

        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        stats = {
            "served": self.served,
            "cold": self.cold,
            "self_cpu": own.ru_utime + own.ru_stime,
            "children_cpu": children.ru_utime + children.ru_stime,
        }
        log(f"stopped: {stats}")
        print(json.dumps(stats), flush=True)

    def reap(self) -> None:
        while self.running:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:  # none left to wait for (reaped elsewhere): their shims learn nothing
                log(f"jobs {sorted(self.running)} gone unreaped")
                for conn, _, _ in self.running.values():
                    conn.close()
                self.running.clear()
                break
            if pid == 0:
                break
            conn, argv, started = self.running.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
            log(
                f"job {pid} ended {code}: {cpu:.2f} CPU-s, {time.monotonic() - started:.1f} s: {' '.join(argv)}"
            )
            send(conn, {"exit": code} if code >= 0 else {"signal": -code})
            conn.close()

    def handle(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        request, fds = receive(conn)
        if request.get("kind") == "status":
            status = {"pid": os.getpid(), "dpdl_modules": dpdl_modules(), "running": len(self.running)}
            send(conn, {**status, "served": self.served, "cold": self.cold})
            conn.close()
            return
        differs = sorted(
            k
            for k in {*self.env, *import_time_env(request["env"])}
            if self.env.get(k) != request["env"].get(k)
        )
        reason = f"environment differs at {', '.join(differs)}" if differs else None
        module = request.get("module", "dpdl")
        if module not in WARM_MODULES:
            reason = f"no warm {module!r}"
        if len(fds) != 3:
            reason = f"{len(fds)} fds instead of 3"
        if dpdl_modules():
            reason = f"the server holds {dpdl_modules()}"
        if reason:
            self.cold += 1
            log(f"cold: {reason}: {module} {' '.join(request.get('argv', []))}")
            send(conn, {"cold": reason})
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        conn.settimeout(None)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                others = [c.fileno() for c, _, _ in self.running.values()]
                Child(conn, fds, request, self.base_path, [*self.own_fds, *others, sys.stdin.fileno()]).run()
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(70)  # only if Child.run itself broke: it ends with os._exit
        try:
            os.setpgid(pid, pid)  # as the child does, before the shim may signal the group
        except OSError:
            pass
        for fd in fds:
            os.close(fd)
        self.served += 1
        self.running[pid] = (conn, [module, *request["argv"]], time.monotonic())
        send(conn, {"pid": pid})


# ------------------------------------------------------------------------------------------------ a job


class Child:
    """In the forked child: become ``python -m <module> <argv>`` started in the caller's cwd and environment."""

    def __init__(
        self, conn: socket.socket, fds: list[int], request: dict, base_path: list[str], close: list[int]
    ):
        self.conn, self.fds, self.request, self.base_path, self.close = conn, fds, request, base_path, close

    def run(self) -> None:
        import signal as signals

        try:  # its own group: the shim's forwarded signals reach the job's own subprocesses too
            os.setpgid(0, 0)
        except OSError:
            pass
        signals.set_wakeup_fd(-1)
        signals.signal(signals.SIGCHLD, signals.SIG_DFL)
        signals.signal(signals.SIGTERM, signals.SIG_DFL)
        signals.signal(signals.SIGHUP, signals.SIG_DFL)
        signals.signal(signals.SIGINT, signals.default_int_handler)
        for fd in self.close:
            try:
                os.close(fd)
            except OSError:
                pass
        for target, fd in enumerate(self.fds):
            os.dup2(fd, target)
        for fd in self.fds:
            os.close(fd)
        self.streams()
        os.umask(self.request["umask"])
        os.chdir(self.request["cwd"])
        env = self.request["env"]
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # gettempdir() reads TMPDIR again
        self.paths(env.get("PYTHONPATH", ""))
        self.watchdog()
        self.finish(self.main())

    def streams(self) -> None:
        """New std streams on fds 0/1/2, buffered as a fresh interpreter's would be for those files."""
        import io

        def text(fd: int, mode: str, errors: str, line_buffering: bool) -> io.TextIOWrapper:
            raw = io.FileIO(fd, mode, closefd=False)
            buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
            encoding = sys.__stdout__.encoding if sys.__stdout__ else "utf-8"
            return io.TextIOWrapper(buffered, encoding=encoding, errors=errors, line_buffering=line_buffering)

        errors = sys.__stdout__.errors if sys.__stdout__ else "strict"
        sys.stdin = sys.__stdin__ = text(0, "r", errors, False)
        sys.stdout = sys.__stdout__ = text(1, "w", errors, os.isatty(1))
        sys.stderr = sys.__stderr__ = text(2, "w", "backslashreplace", True)

    def paths(self, pythonpath: str) -> None:
        """``sys.path`` as ``python -m`` builds it (site makes the entries absolute, drops repeats), and the
        ``sitecustomize`` of a ``PYTHONPATH`` folder imported before the cwd joins the path, as ``site`` does."""
        import importlib

        entries = [p for p in pythonpath.split(os.pathsep) if p]
        path: list[str] = []
        for entry in [*entries, *self.base_path]:
            entry = os.path.abspath(entry)
            if entry not in path:
                path.append(entry)
        sys.path[:] = path
        sys.path_importer_cache.clear()
        importlib.invalidate_caches()
        if any(os.path.exists(os.path.join(os.path.abspath(e), "sitecustomize.py")) for e in entries):
            sys.modules.pop("sitecustomize", None)
            try:
                import sitecustomize  # noqa: F401
            except Exception as error:
                print(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{error!r}", file=sys.stderr)
        sys.path.insert(0, os.getcwd())
        sys.path += IMPORT_PATHS.get(
            self.request.get("module", "dpdl"), []
        )  # as the module's import appends them

    def watchdog(self) -> None:
        """The job dies with its shim: a shim killed outright (SIGKILL, a timeout) closes its socket."""
        import threading

        def watch() -> None:
            try:
                self.conn.recv(1)
            except OSError:
                pass
            os.killpg(os.getpid(), signal.SIGKILL)

        threading.Thread(target=watch, name="warm-watchdog", daemon=True).start()

    def main(self) -> int | None:
        """The module run as ``__main__``; its exit code (None: an uncaught KeyboardInterrupt, to die of SIGINT)."""
        import runpy

        sys.argv = ["-m", *self.request["argv"]]
        try:
            runpy.run_module(self.request.get("module", "dpdl"), run_name="__main__", alter_sys=True)
        except SystemExit as exit:
            return exit_code(exit)
        except BaseException:
            sys.excepthook(*sys.exc_info())
            return None if isinstance(sys.exc_info()[1], KeyboardInterrupt) else 1
        return 0

    def finish(self, code: int | None) -> None:
        import atexit as exits
        import threading

        try:
            threading._shutdown()  # non-daemon threads, then threading's own exit functions, as at exit
        except BaseException:
            pass
        exits._run_exitfuncs()
        try:
            sys.stdout.flush()
        except Exception:
            code = 120 if code == 0 else code  # the interpreter's code when stdout cannot be flushed at exit
        try:
            sys.stderr.flush()
        except Exception:
            pass
        if code is None:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
            code = 128 + signal.SIGINT
        os._exit(code)


def exit_code(exit: SystemExit) -> int:
    """The status a ``SystemExit`` gives the interpreter: None 0, an int itself, anything else printed, 1."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code & 0xFF
    try:
        print(exit.code, file=sys.stderr)
    except Exception:
        pass
    return 1


# ------------------------------------------------------------------------------------------------ the test side


class WarmServer:
    """A server and its shim in ``folder``, started by the test process, stopped and waited for by it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        if len(str(folder / "sock")) > 100:  # AF_UNIX paths are short
            self.folder = Path(tempfile.mkdtemp(prefix="dpdl-warm-"))
        self.socket = self.folder / "sock"
        self.bin = self.folder / "bin"
        self.python = self.bin / "python"
        self.process: subprocess.Popen | None = None
        self.ready: bool | None = None

    def start(self) -> WarmServer:
        """Start the server (its preload runs while the caller goes on; ``wait_ready`` waits for it)."""
        self.bin.mkdir(parents=True, exist_ok=True)
        self.python.write_text(f"#!{sys.executable} -IS\n" + (HERE / "warm_shim.py").read_text())
        self.python.chmod(0o755)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("DPDL_")}
        env.update(THREADS)
        with open(self.folder / "server.log", "ab") as log_file:
            self.process = subprocess.Popen(
                [sys.executable, str(HERE / "warm_python.py"), "serve", str(self.folder)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log_file,
                env=env,
                cwd=self.folder,
                start_new_session=True,  # a Ctrl-C reaches the test process, which stops the server
            )
        return self

    def wait_ready(self, timeout: float = 300) -> bool:
        """Whether the server listens (False: it died; the shim then runs every job cold)."""
        if self.ready is None and self.process is not None:
            ready, _, _ = select.select([self.process.stdout], [], [], timeout)
            self.ready = bool(ready) and self.process.stdout.readline() == b"ready\n"
        return bool(self.ready)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with the shim first on ``PATH`` and the server's socket."""
        return {
            **env,
            "PATH": os.pathsep.join([str(self.bin), env.get("PATH", "")]),
            "DPDL_WARM_SOCKET": str(self.socket),
        }

    def status(self) -> dict:
        """What the server says of itself (its pid, the dpdl modules it holds, its running, served and cold calls)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(self.socket))
            body = json.dumps({"kind": "status"}).encode()
            socket.send_fds(client, [len(body).to_bytes(4, "big")], [])
            client.sendall(body)
            return json.loads(client.makefile("rb").readline())

    def stop(self, timeout: float = 120) -> dict | None:
        """Stop the server and wait for it (it first reaps its jobs), so that their CPU counts in this process's
        ``RUSAGE_CHILDREN``; the server's last word, its counts and CPU."""
        if self.process is None:
            return None
        process, self.process = self.process, None
        try:
            out, _ = process.communicate(timeout=timeout)  # closes its stdin: the server's cue to stop
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return None
        lines = [line for line in out.decode().splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else None


def cold_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the shim: every ``python`` in it is the real one."""
    socket_path = env.get("DPDL_WARM_SOCKET")
    if not socket_path:
        return dict(env)
    shim = str(Path(socket_path).parent / "bin")
    path = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != shim)
    return {**{k: v for k, v in env.items() if k != "DPDL_WARM_SOCKET"}, "PATH": path}


_basetemp = None  # a callable giving the worker's pytest basetemp (tests/conftest.py sets it)
_shared: WarmServer | None = None


def set_basetemp(getter) -> None:
    global _basetemp
    _basetemp = getter


def shared() -> WarmServer | None:
    """This worker's server, started on first use; None when ``DPDL_TEST_WARM=0``."""
    global _shared
    if not enabled():
        return None
    if _shared is None:
        folder = Path(_basetemp()) / "warm" if _basetemp else Path(tempfile.mkdtemp(prefix="dpdl-warm-"))
        _shared = WarmServer(folder).start()
    return _shared


def interpreter(env: dict[str, str]) -> tuple[dict[str, str], str]:
    """``env`` and the interpreter for a ``python -m dpdl`` or ``-m snakemake`` call: the shim reaching this worker's
    server once it listens, else the real interpreter (``DPDL_TEST_WARM=0``, or a server that did not start)."""
    server = shared()
    if server is None or not server.wait_ready():
        return env, sys.executable
    return server.env(env), str(server.python)


def stop_shared() -> None:
    global _shared
    if _shared is not None:
        server, _shared = _shared, None
        server.stop()


atexit.register(stop_shared)


if __name__ == "__main__":
    if sys.argv[1:2] != ["serve"] or len(sys.argv) != 3:
        raise SystemExit("usage: python tests/warm_python.py serve FOLDER")
    base_path = sys.path[1:]  # less this script's folder, before preload adds any (IMPORT_PATHS)
    preload()
    Server(Path(sys.argv[2]), base_path).serve()
