"""The ``python`` first on the workflow tests' ``PATH``: ``-m dpdl`` and ``-m snakemake`` run warm, the rest cold.

``tests/warm_python.py`` writes this file, behind a ``#!<venv python> -IS`` line, into a worker's ``bin/``
folder: isolated and without ``site``, it starts in ~0.01 CPU-s and imports nothing but what is below. For
``-m dpdl`` or ``-m snakemake`` with ``DPDL_WARM_SOCKET`` set it hands its module, argv, cwd, environment,
umask and fds 0/1/2 to the warm server, which forks a child to run it. It forwards SIGTERM to the child alone
(as ``kill PID`` reaches a cold process: Snakemake then finishes its running jobs) and SIGINT/SIGHUP to the
child's process group (as a terminal sends them to its foreground group: Snakemake's jobs get them too), and
ends as the child ended (same exit code, or killed by the same signal; 128+signal if the connection drops
first). Anything else, a server that cannot be reached or one that answers "cold": it becomes the real
interpreter (``execv``), so a dead server only makes the tests slower.
"""

import json
import os
import signal
import socket
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
TO_THE_GROUP = (signal.SIGINT, signal.SIGHUP)  # SIGTERM: to the child alone
WARM_MODULES = ("dpdl", "snakemake")


def cold() -> None:
    # argv[0] the interpreter's own path: given a bare "python", it would find this shim on PATH as its
    # sys.executable and miss the virtual environment's prefix
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])


def die_like(signum: int) -> None:
    """End killed by ``signum``, as the child was (what Snakemake and a shell see of a cold job)."""
    try:
        signal.signal(signum, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL, SIGSTOP
        pass
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def main() -> None:
    args = sys.argv[1:]
    path = os.environ.get("DPDL_WARM_SOCKET")
    if not path or len(args) < 2 or args[0] != "-m" or args[1] not in WARM_MODULES:
        cold()
    state = {"pid": None, "signal": None}

    def forward(signum: int, frame: object) -> None:
        state["signal"] = signum
        if state["pid"]:
            try:
                (os.killpg if signum in TO_THE_GROUP else os.kill)(state["pid"], signum)
            except ProcessLookupError:
                pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        umask = os.umask(0)
        os.umask(umask)
        body = json.dumps(
            {
                "kind": "run",
                "module": args[1],
                "argv": args[2:],
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "umask": umask,
            }
        ).encode()
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(path)
        socket.send_fds(client, [len(body).to_bytes(4, "big")], [0, 1, 2])
        client.sendall(body)
        replies = client.makefile("rb")
        first = json.loads(replies.readline())
    except (OSError, ValueError):
        first = {"cold": "no server"}
    if "pid" not in first:
        if state["signal"]:
            die_like(state["signal"])
        cold()
    state["pid"] = first["pid"]
    if state["signal"]:  # arrived before the pid did
        forward(state["signal"], None)
    try:
        line = replies.readline()
        status = json.loads(line) if line else {}
    except (OSError, ValueError):
        status = {}
    if "exit" in status:
        os._exit(status["exit"])
    if "signal" in status:
        die_like(status["signal"])
    os._exit(128 + (state["signal"] or signal.SIGKILL))  # the connection dropped with no word of the child


main()
