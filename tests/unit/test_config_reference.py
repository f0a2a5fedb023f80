"""config/README.md is generated from the schemas, up to date, and documents every key the schemas
define and the shipped configs use; .snakemake-workflow-catalog.yml has the catalog's keys."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from dpdl import schemas
from dpdl.cli import main
from dpdl.config import read_yaml
from dpdl.config_reference import CONFIGS, REGENERATE, config_reference, undescribed
from dpdl.studies import config_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = schemas.FOLDER
SCHEMA = schemas.CONFIG
README = ROOT / "config" / "README.md"
CONFIG_FILES = sorted((ROOT / "config").glob("*.yaml"))


def documented(text: str) -> set[str]:
    """The key paths of the document's tables (their first column)."""
    return set(re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE))


def schema_paths(schema: dict, prefix: tuple[str, ...] = ()) -> set[str]:
    """Every key path of the schema files, read directly (a study's section from its own file)."""
    paths = set()
    for key, sub in schema.get("properties", {}).items():
        path = (*prefix, key)
        paths.add(".".join(path))
        file_name = sub.get("$ref", "").partition("#")[0]
        paths |= schema_paths(yaml.safe_load((SCHEMAS / file_name).read_text()) if file_name else sub, path)
    return paths


def config_paths(tree: dict, prefix: tuple[str, ...] = ()) -> set[str]:
    """Every key path of a config file, inner keys and leaves alike; the names of a map (a top-level key whose
    schema constrains its ``propertyNames``, e.g. ``reading_cells``) are values, not keys."""
    maps = {
        key for key, sub in yaml.safe_load(SCHEMA.read_text())["properties"].items() if "propertyNames" in sub
    }
    paths = set()
    for key, value in tree.items():
        paths.add(".".join((*prefix, key)))
        if isinstance(value, dict) and not (not prefix and key in maps):
            paths |= config_paths(value, (*prefix, key))
    return paths


def test_the_committed_reference_is_the_generated_one() -> None:
    assert README.read_text(encoding="utf-8") == config_reference(SCHEMA), (
        f"{README.relative_to(ROOT)} is not what the schemas generate; regenerate it from the project root "
        f"with `{REGENERATE}`"
    )


@pytest.mark.parametrize("text", ["generated", "committed"])
def test_every_schema_key_has_a_row_and_every_row_a_schema_key(text: str) -> None:
    rows = documented(config_reference(SCHEMA) if text == "generated" else README.read_text(encoding="utf-8"))
    keys = schema_paths(config_schema())  # the file with the studies' sections the registry adds
    assert not keys - rows, f"schema keys without a row in the {text} reference: {sorted(keys - rows)}"
    assert not rows - keys, f"rows of the {text} reference that no schema defines: {sorted(rows - keys)}"


def test_every_key_has_a_description() -> None:
    assert undescribed(SCHEMA) == [], "add a `description` to these keys in src/dpdl/schemas/"


@pytest.mark.parametrize("path", CONFIG_FILES, ids=[p.stem for p in CONFIG_FILES])
def test_every_key_of_a_shipped_config_is_documented(path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    missing = config_paths(read_yaml(path)) - documented(text)
    assert not missing, f"{path.name} uses keys config/README.md does not document: {sorted(missing)}"
    assert f"[`{path.name}`]({path.name})" in text, f"config/README.md does not say what {path.name} is for"


def test_the_reference_describes_exactly_the_shipped_configs() -> None:
    assert set(CONFIGS) == {path.name for path in CONFIG_FILES}, "update CONFIGS in dpdl/config_reference.py"


def test_the_command_writes_the_reference_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["config-reference", "--out", str(tmp_path / "README.md")]) == 0
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == README.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the schemas ship in the package: no checkout needed
    assert main(["config-reference"]) == 0
    assert capsys.readouterr().out == README.read_text(encoding="utf-8")


def test_the_catalog_file_has_the_catalogs_keys() -> None:
    """The keys https://snakemake.github.io/snakemake-workflow-catalog reads for its standardized usage."""
    catalog = yaml.safe_load((ROOT / ".snakemake-workflow-catalog.yml").read_text(encoding="utf-8"))
    usage = catalog["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    assert set(usage["mandatory-flags"]) == {"desc", "flags"} and isinstance(
        usage["mandatory-flags"]["desc"], str
    )
    assert isinstance(usage["mandatory-flags"]["flags"], str | list)
    deployment = usage["software-stack-deployment"]
    assert set(deployment) == {"conda", "apptainer", "apptainer+conda"}
    assert all(isinstance(value, bool) for value in deployment.values())
    assert not any(deployment.values()), "the environment is installed up front (README: Install)"
    assert usage["report"] is True
    assert README.is_file(), "the catalog shows config/README.md as the configuration instructions"
