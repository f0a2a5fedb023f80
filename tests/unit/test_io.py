"""Atomic, deterministic, pickle-free file writing."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdl.errors import ArtifactError
from dpdl.io import (
    atomic_path,
    load_npz,
    markdown_table,
    read_csv,
    read_json,
    read_text_table,
    save_npz,
    sha256_file,
    write_json,
    write_table,
)


def test_atomic_path_removes_the_partial_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out" / "file.txt"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert not target.exists()
    assert list((tmp_path / "out").iterdir()) == []


def test_atomic_path_keeps_the_old_file_until_success(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("new")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    with atomic_path(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new"


def test_save_npz_is_byte_identical_and_round_trips(tmp_path: Path) -> None:
    arrays = {
        "X": np.arange(12, dtype=np.float32).reshape(3, 4),
        "names": np.array(["a", "bc"]),
        "s": np.array(3),
    }
    save_npz(tmp_path / "a.npz", arrays)
    save_npz(tmp_path / "b.npz", {key: value.copy() for key, value in arrays.items()})
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    loaded = load_npz(tmp_path / "a.npz")
    assert loaded.keys() == arrays.keys()
    for key in arrays:
        np.testing.assert_array_equal(loaded[key], arrays[key])
        assert loaded[key].dtype == arrays[key].dtype


def test_save_npz_refuses_objects(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="dtype object"):
        save_npz(tmp_path / "a.npz", {"bad": np.array([{"a": 1}], dtype=object)})
    assert list(tmp_path.iterdir()) == []


def test_load_npz_refuses_pickles(tmp_path: Path) -> None:
    path = tmp_path / "pickled.npz"
    np.savez(path, bad=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ArtifactError, match="pickle-free"):
        load_npz(path)


def test_load_npz_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="missing.npz: file not found"):
        load_npz(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ArtifactError, match="junk.npz"):
        load_npz(tmp_path / "junk.npz")


def test_random_bytes_are_named_for_what_they_are(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.write_bytes(np.random.default_rng(0).bytes(200))
    with pytest.raises(ArtifactError, match=r"garbage: not an \.npz archive \(not a zip file") as raised:
        load_npz(garbage)
    assert "pickle" not in str(raised.value)
    with pytest.raises(ArtifactError, match="garbage: not valid JSON"):
        read_json(garbage)
    with pytest.raises(ArtifactError, match="garbage: not a CSV table"):
        read_csv(garbage)


def test_a_text_table_keeps_each_value_as_written_and_refuses_a_row_longer_than_its_header(
    tmp_path: Path,
) -> None:
    table = tmp_path / "claims.csv"
    table.write_text("id,verdict\n007,NA\nb,\n", encoding="utf-8")
    assert read_text_table(table).to_dict("list") == {"id": ["007", "b"], "verdict": ["NA", ""]}
    for row in ("a,x,extra", "a,x\nb,y,extra"):  # the first row longer (pandas: an index), a later one
        table.write_text(f"id,verdict\n{row}\n", encoding="utf-8")
        with pytest.raises(ArtifactError, match="claims.csv: not a CSV table"):
            read_text_table(table)


def test_missing_files_are_one_clear_error(tmp_path: Path) -> None:
    for read in (read_csv, read_json, sha256_file):
        with pytest.raises(ArtifactError, match="missing: file not found"):
            read(tmp_path / "missing")


def test_json_round_trip_and_errors(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", {"b": 1, "a": [1.5, None]})
    assert (tmp_path / "a.json").read_text().startswith('{\n  "a"')
    assert read_json(tmp_path / "a.json") == {"a": [1.5, None], "b": 1}
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ArtifactError, match="bad.json: not valid JSON"):
        read_json(tmp_path / "bad.json")
    with pytest.raises(ValueError):
        write_json(tmp_path / "nan.json", {"x": float("nan")})


def test_sha256_file_matches_hashlib(tmp_path: Path) -> None:
    import hashlib

    data = bytes(range(256)) * 5000
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()


def test_tables_render_as_csv_and_markdown(tmp_path: Path) -> None:
    frame = pd.DataFrame({"name": ["a|b", None], "n": pd.array([1, None], dtype="Int64")})
    assert markdown_table(frame).splitlines() == ["| name | n |", "|---|---|", "| a\\|b | 1 |", "|  |  |"]
    write_table(frame, tmp_path / "t.csv", tmp_path / "t.md", title="# T")
    assert (tmp_path / "t.csv").read_text() == "name,n\na|b,1\n,\n"
    assert (tmp_path / "t.md").read_text().startswith("# T\n\n| name | n |")
    assert zipfile.is_zipfile(tmp_path / "t.csv") is False
