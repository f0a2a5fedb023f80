"""Compare two builds file by file: the same inputs must give the same artifacts.

A run's provenance records its wall time (``timing``), the one field that is not a function of
its inputs; everything else must be equal. Run archives (``.npz``) are compared array by array
with their provenance parsed and ``timing`` dropped, JSON files likewise, images by their
pixels when their bytes differ, and every other file byte for byte.

The hash chain (:mod:`dpdl.chain`: a run's ``chain`` field, the ``.<name>.chain.json`` records
beside other outputs) is left out: it holds the sha256 of whole input files, a run's timing
included, so two builds of the same inputs record different hashes; what it vouches for, within one
build, is checked by ``dpdl check``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpdl.chain import RECORD_SUFFIX
from dpdl.io import load_npz

# provenance fields that may differ between identical runs: the wall time, and the chain's hashes of
# the inputs
NONDETERMINISTIC_KEYS = ("timing", "chain")
SKIPPED_SUFFIXES = (".log",)


@dataclass(frozen=True)
class Difference:
    """One file that is not the same in both builds."""

    path: str
    reason: str


def _without_timing(record: object) -> object:
    if isinstance(record, dict):
        return {key: value for key, value in record.items() if key not in NONDETERMINISTIC_KEYS}
    return record


def _json_difference(a: object, b: object) -> str | None:
    a, b = _without_timing(a), _without_timing(b)
    if a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        keys = sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))
        return f"JSON fields differ: {', '.join(keys)}"
    return "JSON values differ"


def _npz_difference(a: Path, b: Path) -> str | None:
    left, right = load_npz(a), load_npz(b)
    if left.keys() != right.keys():
        only = sorted(left.keys() ^ right.keys())
        return f"arrays differ: {only} in one build only"
    for name in sorted(left):
        x, y = left[name], right[name]
        if x.dtype.kind == "U" and x.ndim == 0 and y.dtype.kind == "U" and y.ndim == 0:
            text_x, text_y = str(x[()]), str(y[()])
            try:
                reason = _json_difference(json.loads(text_x), json.loads(text_y))
            except json.JSONDecodeError:
                reason = None if text_x == text_y else "text differs"
            if reason:
                return f"{name}: {reason}"
        elif x.shape != y.shape or x.dtype != y.dtype:
            return f"{name}: shape/dtype {x.shape} {x.dtype} vs {y.shape} {y.dtype}"
        elif not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            diff = np.abs(x.astype(float) - y.astype(float)) if x.dtype.kind in "fiu" else None
            detail = "" if diff is None else f" (largest difference {np.nanmax(diff):.3g})"
            return f"{name}: values differ{detail}"
    return None


def _image_difference(a: Path, b: Path) -> str:
    from matplotlib.image import imread

    x, y = imread(a), imread(b)
    if x.shape != y.shape:
        return f"image sizes differ: {x.shape} vs {y.shape}"
    changed = int(np.any(x != y, axis=-1).sum()) if x.ndim == 3 else int((x != y).sum())
    return (
        f"{changed} of {x.shape[0] * x.shape[1]} pixels differ" if changed else "same pixels, different bytes"
    )


def _text_difference(a: Path, b: Path) -> str:
    left, right = a.read_text(errors="replace").splitlines(), b.read_text(errors="replace").splitlines()
    for number, (x, y) in enumerate(zip(left, right, strict=False), start=1):
        if x != y:
            return f"line {number} differs: {x[:80]!r} vs {y[:80]!r}"
    return f"{len(left)} vs {len(right)} lines"


def file_difference(a: Path, b: Path) -> str | None:
    """Why ``a`` and ``b`` differ as artifacts, or None when they are the same."""
    if a.read_bytes() == b.read_bytes():
        return None
    suffix = a.suffix.lower()
    if suffix == ".npz":
        return _npz_difference(a, b)
    if suffix == ".json":
        return _json_difference(json.loads(a.read_text()), json.loads(b.read_text()))
    if suffix == ".png":
        return _image_difference(a, b)
    if suffix in (".csv", ".md", ".html", ".txt", ".tsv"):
        return _text_difference(a, b)
    return "bytes differ"


def _files(root: Path, under: Iterable[str]) -> set[str]:
    found = set()
    for part in under:
        base = root / part
        candidates = [base] if base.is_file() else base.rglob("*") if base.is_dir() else []
        for path in candidates:
            chain_record = path.name.startswith(".") and path.name.endswith(RECORD_SUFFIX)
            if (
                path.is_file()
                and path.suffix not in SKIPPED_SUFFIXES
                and ".part-" not in path.name
                and not chain_record
            ):
                found.add(str(path.relative_to(root)))
    return found


def compare_builds(first: Path, second: Path, under: Iterable[str]) -> tuple[int, list[Difference]]:
    """Compare the files under each of ``under`` in two build folders.

    Return (files compared, differences).
    """
    under = list(under)
    left, right = _files(first, under), _files(second, under)
    differences = [Difference(path, "only in the first build") for path in sorted(left - right)]
    differences += [Difference(path, "only in the second build") for path in sorted(right - left)]
    for path in sorted(left & right):
        reason = file_difference(first / path, second / path)
        if reason:
            differences.append(Difference(path, reason))
    return len(left & right), differences
