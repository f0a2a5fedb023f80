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
import os
import secrets
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from dpdl.errors import ArtifactError

CHUNK_BYTES = 1 << 20
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
# Called with each file read (and its sha256 where the read computed it, else None), and with each file written
# once it is in place: dpdl.chain.step installs its recorders here for the length of one step.
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


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read a CSV table, with an error naming the file if it is missing or not a table."""
    path = Path(path)
    try:
        table = pd.read_csv(path)
    except FileNotFoundError:
        raise ArtifactError(f"{path}: file not found") from None
    except (UnicodeDecodeError, IsADirectoryError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ArtifactError(f"{path}: not a CSV table ({err})") from None
    except OSError as err:  # no permission, an I/O error
        raise ArtifactError(f"{path}: cannot be read ({err.strerror})") from None
    _read(path)
    return table


def read_table_as(path: str | os.PathLike, name: str, columns: list[str]) -> pd.DataFrame:
    """The CSV table ``path`` that a step reads as ``name``, refused in one line unless its columns are
    ``columns`` in order: another table given in its place (swapped arguments, a copied file)."""
    table = read_csv(path)
    if list(table.columns) != list(columns):
        raise ArtifactError(
            f"{path}: given as {name}, but its columns ({', '.join(map(str, table.columns))}) are not {name}'s "
            f"({', '.join(columns)}); give this step the {name} table"
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
        raise ArtifactError(f"{path}: not an .npz archive (not a zip file; truncated, or another format); {REWRITE}")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (ValueError, zipfile.BadZipFile, OSError) as err:
        raise ArtifactError(f"{path}: not a readable pickle-free .npz archive ({err}); {REWRITE}") from None
    _read(path)
    return arrays


def sha256_file(path: str | os.PathLike, *, read: bool = True) -> str:
    """Return the hex SHA-256 of a file, read in fixed-size chunks; with ``read=False`` not told to the
    :data:`READ_OBSERVERS` (a step hashing what it wrote has not read an input)."""
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


def markdown_table(frame: pd.DataFrame) -> str:
    """Render a frame as a GitHub Markdown table (missing values as empty cells)."""

    def cell(value: object) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
            return ""
        return str(value).replace("|", "\\|").replace("\n", " ")

    header = "| " + " | ".join(map(cell, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows]) + "\n"


def write_table(frame: pd.DataFrame, csv_path: str | os.PathLike, md_path: str | os.PathLike, title: str = "") -> None:
    """Write a table as CSV and as Markdown (with an optional title and notes line), atomically."""
    write_text(csv_path, frame.to_csv(index=False, lineterminator="\n"))
    write_text(md_path, (f"{title}\n\n" if title else "") + markdown_table(frame))
