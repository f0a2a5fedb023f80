"""Rewriting a published study folder in one step.

Its next snapshot is written whole beside it, then swapped in.

:func:`study_transaction` gives a folder ``<out>/.<study>.new-<pid>`` on the same filesystem; the
caller writes the study's files there, its manifest last, and on success the folder is swapped with
``<out>/<study>`` in one atomic exchange of the two names (Linux's ``renameat2(RENAME_EXCHANGE)``;
elsewhere two renames: the old one to ``.<study>.old-<pid>``, the new one into place), then the old
one is removed. Killed, or out of disk space, at any point, ``<out>/<study>`` is the old snapshot or
the new one, whole (in the two-rename fallback, for the instant between the renames, both are whole
under the leftover names and :func:`recover` puts the new one in place). What an interrupted command
leaves, the next one finishes or removes, saying so in one line each (:func:`recover`); ``dpdl check
published`` names it (:func:`leftover_problem`).

``DPDL_TEST_KILL_AT`` is for the fault tests alone (tests/unit/test_publishing_faults.py): naming one of
:data:`FAULT_POINTS`, it makes the process kill itself (SIGKILL) when it reaches that point.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dpdl.errors import DpdlError
from dpdl.publishing.layout import MANIFEST

log = logging.getLogger("dpdl")
KILL_AT = "DPDL_TEST_KILL_AT"  # test only: the fault point at which the process kills itself
FAULT_POINTS = (
    "copying",  # the new snapshot's first file written beside the old one
    "manifest",  # every file of the new snapshot written but its manifest
    "swap",  # the new snapshot whole beside the old one, neither moved
    "old-moved",  # (two-rename fallback) the old snapshot moved aside, the new one not yet in place
    "swapped",  # the new snapshot in place, the old one not yet removed
    "merged",  # the first merged file rewritten, the others not yet
)
LEFTOVER = re.compile(r"\.(?P<study>[A-Za-z0-9_]+)\.(?P<kind>new|old)-(?P<pid>[0-9]+)")
PART = re.compile(r".+\.part-[0-9a-f]{8}")  # dpdl.io.atomic_path's temporary file
FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def fault_point(name: str) -> None:
    """Test only: kill this process (SIGKILL: no cleanup runs) when ``DPDL_TEST_KILL_AT`` names ``name``."""
    assert name in FAULT_POINTS, name
    if os.environ.get(KILL_AT) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _renameat2() -> Callable | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):  # not Linux, or a C library without it
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return function


renameat2 = _renameat2()
AT_FDCWD, RENAME_EXCHANGE = -100, 2


def exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` (both exist) in one atomic step; False where the system cannot."""
    if renameat2 is None:
        return False
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # a filesystem or kernel without the exchange
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def copy_into(source: Path, target: Path) -> None:
    """Copy the file ``source`` to ``target`` inside a staging folder (which is removed whole on failure)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def disk_error(where: Path, err: OSError, left: str) -> DpdlError:
    """One line for an ``OSError`` while writing ``where``: what failed, and what was left (``left``)."""
    reason = err.strerror or str(err)
    if err.filename and err.errno not in FULL:  # a full disk's copy names the file read, not the one written
        reason += f": {err.filename}"
    fix = "; free some space and run it again" if err.errno in FULL else ""
    return DpdlError(f"{where}: not written ({reason}); {left}{fix}")


@contextmanager
def study_transaction(out: Path, study: str, keep: bool = False) -> Iterator[Path]:
    """Yield a new folder beside ``out/<study>`` to write the study's next snapshot into.

    The manifest is written last. The folder is swapped in when the block ends, or removed on any
    error, leaving the old snapshot as it was.

    With ``keep``, the new folder starts as a copy of the old one without its manifest (a command
    that adds to a snapshot: read the old manifest from ``out/<study>``, write the new one last). An
    ``OSError`` (a full disk) becomes one line (:class:`DpdlError`).
    """
    folder = out / study
    new, old = out / f".{study}.new-{os.getpid()}", out / f".{study}.old-{os.getpid()}"
    try:
        if new.exists():  # from a process of this pid before: not ours to keep
            shutil.rmtree(new)
        new.mkdir(parents=True)
        if keep and folder.is_dir():
            shutil.copytree(folder, new, symlinks=True, dirs_exist_ok=True, ignore=_manifest_of(folder))
        yield new
        if not (new / MANIFEST).is_file():
            raise DpdlError(f"{new}: no {MANIFEST} written; nothing swapped in")  # a caller's mistake
        fault_point("swap")
        exchanged = _swap_in(new, folder, old)
    except BaseException as err:
        shutil.rmtree(new, ignore_errors=True)
        if isinstance(err, OSError) and not isinstance(err, DpdlError):
            raise disk_error(folder, err, "the snapshot there is left as it was") from None
        raise
    if exchanged:  # the old snapshot is at the new one's name: give it the name it is removed from
        with suppress(OSError):
            os.rename(new, old)
    fault_point("swapped")
    for path in (old, new):
        shutil.rmtree(path, ignore_errors=True)


def _manifest_of(folder: Path) -> Callable[[str, list[str]], list[str]]:
    def ignore(directory: str, names: list[str]) -> list[str]:
        return [MANIFEST] if Path(directory) == folder and MANIFEST in names else []

    return ignore


def _swap_in(new: Path, folder: Path, old: Path) -> bool:
    """Put the whole folder ``new`` at ``folder``; return whether the two were exchanged.

    The result is True where they were (the one replaced is now at ``new``), else False (it is at ``old``, if
    there was one).
    """
    if not folder.exists():
        os.rename(new, folder)
        return False
    if exchange(new, folder):
        return True
    os.rename(folder, old)
    fault_point("old-moved")
    try:
        os.rename(new, folder)
    except BaseException:
        os.rename(old, folder)
        raise
    return False


def leftover_kind(path: Path) -> str | None:
    """What ``path`` in a snapshot folder is if an interrupted command left it, else None.

    The kinds are ``new``, ``old`` and ``part``.
    """
    if found := LEFTOVER.fullmatch(path.name):
        return found["kind"]
    return "part" if PART.fullmatch(path.name) else None


LEFT_BY = {
    "new": "a new snapshot an interrupted `dpdl publish` had not swapped in",
    "old": "an old snapshot an interrupted `dpdl publish` had not removed",
    "part": "a file an interrupted `dpdl publish` had not finished writing",
}


def leftover_problem(path: Path) -> str:
    """The line ``dpdl check published`` gives for a leftover."""
    return f"{path}: {LEFT_BY[leftover_kind(path)]}; the next `dpdl publish` removes it (or remove it)"


def _running(pid: int) -> bool:
    """Whether another process of id ``pid`` runs.

    If it does, a publish is still under way: its folder is not a leftover.
    """
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(out: Path, *beside: Path) -> list[str]:
    """Finish or undo what an interrupted command left in ``out`` and beside each file of ``beside``.

    Beside a file of ``beside``, such as the README, that is its unfinished ``.part-*`` files. One
    line is logged for each thing found, and the lines are returned.

    A study folder in place keeps it, and the new and old folders beside it are removed; a study
    folder missing (killed between the fallback's two renames) gets the new one whose manifest was
    written, else the old one.
    """
    lines = []
    folders = [out] if out.is_dir() else []
    paths = [p for folder in folders for p in sorted(folder.iterdir())]
    paths += [p for file in beside for p in sorted(file.parent.glob(f"{file.name}.part-*"))]
    studies: dict[str, list[Path]] = {}
    for path in paths:
        kind = leftover_kind(path)
        if kind == "part":
            path.unlink(missing_ok=True)
            lines.append(f"{path}: removed ({LEFT_BY[kind]})")
        elif kind is not None:
            found = LEFTOVER.fullmatch(path.name)
            if _running(int(found["pid"])):
                lines.append(
                    f"{path}: left alone (process {found['pid']} still runs: another `dpdl publish`?)"
                )
            else:
                studies.setdefault(found["study"], []).append(path)
    for study, found in studies.items():
        folder = out / study
        if not folder.exists():
            whole = [p for p in found if (p / MANIFEST).is_file()]
            chosen = next((p for p in whole if leftover_kind(p) == "new"), next(iter(whole), None))
            if chosen is not None:
                os.rename(chosen, folder)
                found.remove(chosen)
                lines.append(f"{folder}: put back from {chosen.name} ({LEFT_BY[leftover_kind(chosen)]})")
        for path in found:
            with suppress(FileNotFoundError):
                shutil.rmtree(path)
            lines.append(f"{path}: removed ({LEFT_BY[leftover_kind(path)]})")
    for line in lines:
        log.warning("%s", line)
    return lines
