"""Atomic, deterministic file writing and pickle-free reading.

Every artifact is written to ``<name>.part-<random>`` in its target folder and renamed into
place only when complete, so an interrupted job never leaves a half-written file. Archives are
written with fixed timestamps, so the same arrays give byte-identical files.

Each file these functions read or write is told to the observers in :data:`READ_OBSERVERS` and
:data:`WRITE_OBSERVERS` (none but during a step's :func:`dpdl.chain.step`, which records the hash chain).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.errors import ArtifactError

CHUNK_BYTES = 1 << 20
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# Called with each file read (and its sha256 where the read computed it, else None), and with each
# file written once it is in place: dpdl.chain.step installs its recorders here for the length of one step.
READ_OBSERVERS: list[Callable[[Path, str | None], None]] = []
WRITE_OBSERVERS: list[Callable[[Path], None]] = []


def _read(path: Path, digest: str | None = None) -> None:
    for observer in READ_OBSERVERS:
        observer(path, digest)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` on success, delete it on failure.

    The temporary file is in the same folder so that the final ``os.replace`` is atomic. It is
    removed on any exception, ``KeyboardInterrupt`` included.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.part-{secrets.token_hex(4)}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    for observer in WRITE_OBSERVERS:
        observer(path)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def dumps_json(obj: object) -> str:
    """Serialise ``obj`` as stable, human-readable JSON (sorted keys, two-space indent)."""
    return json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, obj: object) -> None:
    """Write ``obj`` as stable JSON to ``path`` atomically."""
    write_text(path, dumps_json(obj))


def read_json(path: str | os.PathLike) -> object:
    """Read a JSON file, with an error naming the file if it is missing or malformed."""
    path = Path(path)
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactError(f"{path}: file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError, IsADirectoryError) as err:
        raise ArtifactError(f"{path}: not valid JSON ({err})") from None
    except OSError as err:  # no permission, an I/O error
        raise ArtifactError(f"{path}: cannot be read ({err.strerror})") from None
    _read(path)
    return value


def _read_table(path: Path, **options) -> pd.DataFrame:
    """``pd.read_csv(path, **options)``, with an error naming the file if it is missing or not a table."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)  # index_col=False: a long first row warns
        try:
            return pd.read_csv(path, **options)
        except FileNotFoundError:
            raise ArtifactError(f"{path}: file not found") from None
        except pd.errors.ParserWarning:
            raise ArtifactError(f"{path}: not a CSV table (a row has more fields than the header)") from None
        except (
            UnicodeDecodeError,
            IsADirectoryError,
            pd.errors.ParserError,
            pd.errors.EmptyDataError,
        ) as err:
            raise ArtifactError(f"{path}: not a CSV table ({str(err).strip()})") from None
        except OSError as err:  # no permission, an I/O error
            raise ArtifactError(f"{path}: cannot be read ({err.strerror})") from None


def read_text_table(path: str | os.PathLike) -> pd.DataFrame:
    """A CSV table as written, every value its text (a scorecard, a reading's claims, readings.csv).

    A row with more fields than the header is an error naming the file (pandas would otherwise take the
    first row's extra field for an index, or stop with a traceback).
    """
    return _read_table(Path(path), dtype=str, keep_default_na=False, index_col=False)


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV table, with an error naming the file if it is missing or not a table."""
    path = Path(path)
    table = _read_table(path)
    _read(path)
    return table


def read_table_as(path: str | os.PathLike, name: str, columns: list[str]) -> pd.DataFrame:
    """The CSV table ``path`` that a step reads as ``name``, refused unless its columns are ``columns``.

    The columns must be ``columns`` in order, else the table is refused in one line: another table
    given in its place (swapped arguments, a copied file).
    """
    table = read_csv(path)
    if list(table.columns) != list(columns):
        raise ArtifactError(
            f"{path}: given as {name}, but its columns ({', '.join(map(str, table.columns))}) "
            f"are not {name}'s ({', '.join(columns)}); give this step the {name} table"
        )
    return table


def save_npz(path: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> None:
    """Write arrays to a compressed ``.npz`` atomically, with fixed timestamps and no pickle.

    Unlike ``numpy.savez_compressed`` the archive has no timestamps, so the same arrays, given in
    the same order, give byte-identical files. The order is kept (a run's trace columns rely on it).
    """
    with atomic_path(path) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in arrays:
                array = np.asarray(arrays[name])
                if array.dtype.hasobject:
                    raise TypeError(f"array {name!r} has dtype object; dpdl stores no pickled data")
                info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)


REWRITE = "delete it and rerun: Snakemake writes a missing file again"  # the fix for a damaged artifact


def load_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Load every array of an ``.npz`` file into memory, refusing pickled objects."""
    path = Path(path)
    if not path.exists():
        raise ArtifactError(f"{path}: file not found")
    if not zipfile.is_zipfile(path):  # np.load would read it as a .npy or a pickle
        raise ArtifactError(
            f"{path}: not an .npz archive (not a zip file; truncated, or another format); {REWRITE}"
        )
    try:
        _check_npz_sizes(path)
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except ArtifactError:
        raise
    except (ValueError, zipfile.BadZipFile, OSError) as err:
        raise ArtifactError(f"{path}: not a readable pickle-free .npz archive ({err}); {REWRITE}") from None
    _read(path)
    return arrays


NPZ_FLOOR_BYTES = 256 * 2**20  # what any .npz may expand to, whatever its size on disk
NPZ_RATIO = 100  # and beyond it, at most this many times its size on disk (dpdl's arrays compress about 5:1)


def _check_npz_sizes(path: Path) -> None:
    """Refuse, before any array is read, an archive whose arrays would not fit what it can hold.

    Each member's ``.npy`` header (shape x itemsize) must be the size the zip declares for it, and
    the total must stay under ``max(NPZ_FLOOR_BYTES, NPZ_RATIO x the file's size)``: deflate packs
    1.2 GB of zeros into 1 MB, and numpy allocates an array whole before it reads it (issue 61 item 7).
    """
    disk = path.stat().st_size
    limit = max(NPZ_FLOOR_BYTES, NPZ_RATIO * disk)
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        total = sum(info.file_size for info in members)
        if total > limit:
            largest = max(members, key=lambda info: info.file_size)
            raise ArtifactError(
                f"{path}: its arrays expand to {total:,} bytes from {disk:,} on disk "
                f"(the largest, {largest.filename}, {largest.file_size:,}), "
                f"more than the {limit:,} a .npz of this size may hold; not arrays dpdl wrote: {REWRITE}"
            )
        for info in members:
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version not in ((1, 0), (2, 0)):
                    raise ValueError(
                        f"{info.filename}: .npy format version {version}, which dpdl does not write"
                    )
                read_header = (
                    np.lib.format.read_array_header_1_0
                    if version == (1, 0)
                    else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read_header(member)
                held = info.file_size - member.tell()
            declared = math.prod(shape) * dtype.itemsize
            if declared != held and not dtype.hasobject:  # a pickled array: np.load refuses it, named as such
                raise ArtifactError(
                    f"{path}: array {info.filename} declares shape {tuple(shape)} of {dtype} "
                    f"({declared:,} bytes) but holds {held:,} bytes; not arrays dpdl wrote: {REWRITE}"
                )


def sha256_file(path: str | os.PathLike, *, read: bool = True) -> str:
    """Return the hex SHA-256 of a file, read in fixed-size chunks.

    With ``read=False`` the read is not told to the :data:`READ_OBSERVERS` (a step hashing what it
    wrote has not read an input).
    """
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as stream:
            for chunk in iter(lambda: stream.read(CHUNK_BYTES), b""):
                digest.update(chunk)
    except FileNotFoundError:
        raise ArtifactError(f"{path}: file not found") from None
    if read:
        _read(Path(path), digest.hexdigest())
    return digest.hexdigest()


_HTML_OPENING = re.compile(r"<(?=[A-Za-z/!?])")  # what starts a tag, a comment or an autolink in Markdown
_CHARACTER_REFERENCE = re.compile(r"&(?=#[0-9]{1,7};|#[xX][0-9A-Fa-f]{1,6};|[A-Za-z][A-Za-z0-9]{0,31};)")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)  # shown as written: nothing to escape inside


def markdown_text(text: object) -> str:
    """Text that comes from claims or config, made to read as written in Markdown.

    This is the one escaping every Markdown writer shares (tables through :func:`markdown_table`,
    the articles' text).

    A ``<`` that would open raw HTML (``<script>``, ``<study>``, ``<!--``, ``<http://…>``) becomes
    ``&lt;`` and an ``&`` that would start a character reference (``&lt;``, ``&#60;``) ``&amp;``;
    code spans are left as they are. Other ``<``, ``>`` and ``&`` (``<= 1``, ``28 > 1``,
    ``Ryu & Kim``) are text in Markdown already and stay, so outputs without markup are byte for
    byte what they were (issue 61 item 7).
    """
    text, parts, last = str(text), [], 0
    for span in _CODE_SPAN.finditer(text):
        parts += [_escape_markup(text[last : span.start()]), span.group()]
        last = span.end()
    return "".join([*parts, _escape_markup(text[last:])])


def _escape_markup(text: str) -> str:
    return _HTML_OPENING.sub("&lt;", _CHARACTER_REFERENCE.sub("&amp;", text))


def markdown_table(frame: pd.DataFrame) -> str:
    """Render a frame as a GitHub Markdown table.

    Missing values are empty cells; each cell is one line, its ``|`` escaped and its markup shown as
    text (:func:`markdown_text`).
    """

    def cell(value: object) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
            return ""
        return markdown_text(str(value).replace("|", "\\|").replace("\n", " "))

    header = "| " + " | ".join(map(cell, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows]) + "\n"


def write_table(
    frame: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike, title: str = ""
) -> None:
    """Write a table as CSV and as Markdown (with an optional title and notes line), atomically."""
    write_text(csv_path, frame.to_csv(index=False, lineterminator="\n"))
    write_text(md_path, (f"{title}\n\n" if title else "") + markdown_table(frame))
