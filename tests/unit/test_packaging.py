"""pyproject.toml, uv.lock, requirements.lock and environment.yml agree: uv.lock holds one version
of each package, requirements.lock (exported from it) pins exactly those, every dependency (extras
included) at a version pyproject.toml allows, and environment.yml pins the runtime ones at the lock's
versions."""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement

from dpdl.lock import normalize, read_lock

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
ENVIRONMENT = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
UV_LOCK = tomllib.loads((ROOT / "uv.lock").read_text())


def _uv_lock_pins() -> dict[str, list[str]]:
    """Package -> the versions uv.lock holds of it, the project itself aside."""
    pins: dict[str, list[str]] = {}
    for package in UV_LOCK["package"]:
        if package["name"] != PROJECT["name"]:
            pins.setdefault(normalize(package["name"]), []).append(package["version"])
    return pins


def _environment_pins() -> dict[str, str]:
    conda = [d for d in ENVIRONMENT if isinstance(d, str)]
    pip = next(d["pip"] for d in ENVIRONMENT if isinstance(d, dict))
    listed = [Requirement(d) for d in conda + pip]
    return {normalize(r.name): str(r.specifier) for r in listed if r.name not in ("python", "pip")}


def test_lock_pins_every_dependency_at_an_allowed_version() -> None:
    pins = read_lock(ROOT / "requirements.lock")
    extras = [r for group in PROJECT["optional-dependencies"].values() for r in group]
    for requirement in map(Requirement, PROJECT["dependencies"] + extras):
        name = normalize(requirement.name)
        assert name in pins, f"{name} is not in requirements.lock: regenerate it (command at its top)"
        assert requirement.specifier.contains(pins[name]), (
            f"requirements.lock pins {name} {pins[name]}, not {requirement}"
        )


def test_requirements_lock_is_uv_lock_exported() -> None:
    """One version of every package in uv.lock, and requirements.lock pins exactly those (regenerate
    it with the command at its top after `uv lock`)."""
    locked = _uv_lock_pins()
    assert {name: versions for name, versions in locked.items() if len(versions) > 1} == {}
    assert read_lock(ROOT / "requirements.lock") == {name: versions[0] for name, versions in locked.items()}
    assert "uv export --locked " in (ROOT / "requirements.lock").read_text(encoding="utf-8").split("\n", 2)[1]


def test_uv_lock_is_for_this_project() -> None:
    (project,) = [p for p in UV_LOCK["package"] if p["name"] == PROJECT["name"]]
    assert project["version"] == PROJECT["version"]
    assert UV_LOCK["requires-python"] == PROJECT["requires-python"]


def test_environment_yml_pins_the_runtime_dependencies_at_the_lock_versions() -> None:
    pins = read_lock(ROOT / "requirements.lock")
    runtime = [normalize(Requirement(r).name) for r in PROJECT["dependencies"]]
    assert _environment_pins() == {name: f"=={pins[name]}" for name in runtime}


def test_python_versions_agree() -> None:
    assert f"python{PROJECT['requires-python']}" in ENVIRONMENT
