"""pyproject.toml and environment.yml list the same runtime dependencies."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _specifier(requirement: str) -> str:
    return requirement[len(_name(requirement)) :].replace(" ", "")


def test_environment_yml_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    conda = [d for d in environment if isinstance(d, str)]
    pip = next(d["pip"] for d in environment if isinstance(d, dict))
    listed = {_name(r): _specifier(r) for r in conda + pip if _name(r) not in ("python", "pip")}
    expected = {_name(r): _specifier(r) for r in project["dependencies"]}
    assert listed == expected


def test_python_versions_agree() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    assert f"python{project['requires-python']}" in environment
