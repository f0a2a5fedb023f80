"""The runs a lent GPU made that wait for publication (device_runs/): each file is the one its SHA256SUMS names,
and each run is a valid artifact of the horizon, backend and device its folder's report claims."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dpdl.runs import read_run, validate_run

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p for p in (ROOT / "device_runs").iterdir() if p.is_dir())


def sums(folder: Path) -> dict[str, str]:
    lines = (folder / "SHA256SUMS").read_text().splitlines()
    return {name.removeprefix("./"): digest for digest, name in (line.split(maxsplit=1) for line in lines)}


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_every_file_is_the_one_its_sums_name_and_none_is_unlisted(folder) -> None:
    listed = sums(folder)
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert present == set(listed)
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_every_run_is_a_valid_artifact_of_the_device_and_backend_its_report_names(folder) -> None:
    reports = [json.loads(p.read_text()) for p in sorted(folder.glob("call*_device.json"))]
    device = {r["machine"]["device"] for r in reports}
    finished = {
        cell for r in reports for batch in r.get("long", []) if batch["finished"] for cell in batch["cells"]
    }
    runs = sorted(folder.glob("results/**/*.npz"))
    assert runs and {str(p.parent.relative_to(folder / "results/dp_iadmm/runs")) for p in runs} == finished
    for path in runs:
        assert validate_run(path) == []
        params = read_run(path).provenance["params"]
        assert params["horizon"] == "long" and params["iterations"] == 1_000_000
        backend = params["backend"]
        assert backend["device"] in device, backend["device"]
        assert backend["name"] == "jax_tf32" and all(
            b["backend"] == "jax_tf32" for r in reports for b in r["long"]
        )
