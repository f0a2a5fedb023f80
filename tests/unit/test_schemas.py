"""The schemas ship in the package (dpdl.schemas): found from any working directory, they validate a config
and a job's --settings there, and their defaults are read one way."""

from __future__ import annotations

import json
import tomllib
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path

import pytest

import dpdl
from dpdl import schemas
from dpdl.config import load_config, validate_config
from dpdl.errors import ConfigError
from dpdl.studies import ALL
from dpdl.studies.common import parse_settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_schemas_are_the_packages_files() -> None:
    assert (
        schemas.FOLDER == Path(str(resources.files("dpdl.schemas"))) == Path(dpdl.__file__).parent / "schemas"
    )
    names = {"config", "common", "card", "run", "manifest", *ALL}
    assert {path.name.partition(".")[0] for path in schemas.FOLDER.glob("*.schema.*")} == names
    assert schemas.path("config.schema.yaml") == schemas.CONFIG
    with pytest.raises(ConfigError, match=r"schema nope.schema.yaml not found in .*reinstall dpdl"):
        schemas.path("nope.schema.yaml")


def test_one_loader_reads_yaml_and_json() -> None:
    assert schemas.load("config.schema.yaml")["required"] == [
        "studies",
        "data",
    ]  # the studies' parts: the registry
    run = schemas.load("run.schema.json")
    assert run == json.loads((schemas.FOLDER / "run.schema.json").read_text(encoding="utf-8"))
    assert schemas.load("run.schema.json") is run  # read once


def test_a_config_validates_from_another_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at_root = load_config(ROOT / "config" / "ci.yaml")
    monkeypatch.chdir(tmp_path)
    assert load_config(ROOT / "config" / "ci.yaml") == at_root
    bad = tmp_path / "bad.yaml"
    bad.write_text("studies: [wddp]\ndata: {}\ndvp_pvp: {}\nwddp: {seeds: 0}\ndp_iadmm: {}\ndzoa: {}\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    # outside the checkout the file is named absolutely, so it can be opened from here
    assert str(err.value).endswith(f"see {schemas.FOLDER / 'wddp.schema.yaml'} for what each key accepts")


def test_the_error_names_the_schema_relative_to_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(
        ConfigError, match=r"see src/dpdl/schemas/dzoa.schema.yaml for what each key accepts$"
    ):
        validate_config({"studies": ["dzoa"], "data": {}, **{s: {} for s in ALL}, "dzoa": {"directions": 0}})


def test_settings_are_checked_from_another_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_settings('{"seeds": 3}', ["seeds"], "wddp", "the rule") == {"seeds": 3}
    with pytest.raises(ConfigError, match=r"--settings: seeds: 0 is less than the minimum of 1"):
        parse_settings('{"seeds": 0}', ["seeds"], "wddp", "the rule")


@pytest.mark.parametrize("study", ALL)
def test_a_sections_defaults_are_what_validation_fills_in(study: str) -> None:
    config = validate_config({"studies": [study], "data": {}, **{s: {} for s in ALL}})
    assert schemas.defaults(f"{study}.schema.yaml") == config[study]
    assert schemas.defaults("config.schema.yaml", "data", "lasso") == config["data"]["lasso"]
    assert schemas.defaults(f"{study}.schema.yaml") is not schemas.defaults(
        f"{study}.schema.yaml"
    )  # a new dict


def test_the_wheel_holds_every_schema() -> None:
    """pyproject.toml's package data covers every schema file (the wheel of `uv build` holds them; .ci/run
    installs it and validates a config outside the checkout)."""
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["dpdl"]
    for path in schemas.FOLDER.iterdir():
        if path.suffix in (".json", ".yaml"):
            shipped = path.relative_to(schemas.FOLDER.parent).as_posix()
            assert any(fnmatch(shipped, glob) for glob in globs), (
                f"{shipped} is not in the wheel's package data"
            )
