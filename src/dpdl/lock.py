"""The pinned environment, and where a run's versions are not the lock's.

``requirements.lock`` holds the exact version (and hashes) of every runtime, test and cluster
dependency (README: install). A run records the versions it ran with (``provenance["versions"]``,
:func:`dpdl.runs.package_versions`); :func:`lock_differences` says where they are not the lock's.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

LOCK = Path("requirements.lock")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.MULTILINE)


def normalize(name: str) -> str:
    """A package name as the lock writes it (PEP 503: lower case, runs of ``-_.`` as one ``-``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def read_lock(path: Path = LOCK) -> dict[str, str]:
    """Package -> pinned version, from the ``name==version`` lines of a requirements file."""
    return {normalize(name): version for name, version in _PIN.findall(path.read_text(encoding="utf-8"))}


def lock_differences(recorded: dict[str, str], lock: str | Path = LOCK) -> list[str]:
    """Each package whose version a run recorded is not the one ``lock`` pins.

    ``recorded`` is its provenance's ``versions``; each difference reads ``"numpy 2.4.5
    (requirements.lock pins 2.4.6)"``. Packages the lock does not pin (Python, dpdl itself) are not
    compared; without a lock file there is nothing to compare.
    """
    lock = Path(lock)
    if not lock.is_file():
        return []
    pins = read_lock(lock)
    return [
        f"{name} {version} ({lock.name} pins {pins[normalize(name)]})"
        for name, version in sorted(recorded.items())
        if normalize(name) in pins and version != pins[normalize(name)]
    ]
