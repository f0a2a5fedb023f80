"""The code's structure as tests: the imports form no cycle, every arrow in a study package points down,
and the studies are listed once (``dpdl.studies.ALL``) with every other list of them checked against it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import yaml

import dpdl
from dpdl import studies
from dpdl.data.prepared import STUDY_DATASETS
from dpdl.studies.common import DEFAULT

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(dpdl.__file__).parent
# The package's layers (docs/development.md): a module imports only from its own layer or those below.
PACKAGE_LAYERS = {
    **dict.fromkeys(["errors", "io", "progress", "validation"], 0),
    **dict.fromkeys(["privacy", "models", "algorithms", "data", "audit", "runs", "lock"], 1),
    **dict.fromkeys(
        ["seed_statistics", "judgement", "verdicts", "claims", "aggregate", "plotting", "post_hoc", "studies.common"], 2
    ),
    "studies.<study>": 3,
    "studies": 4,
    **dict.fromkeys(
        ["config", "readings", "audit_report", "summary", "targets", "publish", "check", "compare", "report"], 5
    ),
    "config_reference": 5,
    "cli": 6,
    "__main__": 7,
}
# A study package's modules, lowest first: a module imports only modules of a lower layer of its own study.
STUDY_LAYERS = {
    "readings": 0,
    "grid": 1,
    "_private": 2,  # any ``_*.py`` (they may import each other; the cycle test keeps that acyclic)
    "run": 3,
    "tune": 4,
    "aggregate": 5,
    "tables": 6,
    "extract": 6,
    "figures": 6,
    "claims": 7,
    "audit": 7,
    "cli": 8,
}


def module_name(path: Path, root: Path = SOURCE) -> str:
    """``dpdl.studies.dzoa.run`` from ``.../src/dpdl/studies/dzoa/run.py`` (a package is its ``__init__``)."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """Every dpdl module ``path`` imports, at the top, inside functions or for type checking alike."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from a.b import c``: the module a.b.c if there is one, else a.b
            found |= {
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module for a in node.names
            }
    return {name for name in found if name in known}


def import_graph(root: Path = SOURCE) -> dict[str, set[str]]:
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    return {name: imported_modules(path, set(paths)) - {name} for name, path in paths.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as a list of modules (first repeated at the end), or [] if there is none."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for child in sorted(graph.get(node, ())):
            if state.get(child) == 1:
                return [*path[path.index(child) :], child]
            if child not in state and (cycle := visit(child)):
                return cycle
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_imports_form_no_cycle() -> None:
    assert find_cycle(import_graph()) == []


def package_layer(name: str) -> int:
    """The layer of module ``dpdl.<name>`` (a module of a subpackage is in its subpackage's layer)."""
    if name == "dpdl":
        return 0  # the package's __init__: its version only
    short = name.removeprefix("dpdl.")
    if short.startswith("studies.") and short != "studies.common":
        return PACKAGE_LAYERS["studies.<study>"]
    while short not in PACKAGE_LAYERS:
        assert "." in short, f"{name} is in no layer of PACKAGE_LAYERS (docs/development.md); add it"
        short = short.rsplit(".", 1)[0]
    return PACKAGE_LAYERS[short]


def test_every_import_points_down_the_layers() -> None:
    up = [
        f"{name} (layer {package_layer(name)}) imports {imported} (layer {package_layer(imported)})"
        for name, imports in import_graph().items()
        for imported in imports
        if package_layer(imported) > package_layer(name)
    ]
    assert not up, up


def test_the_cycle_finder_finds_a_planted_cycle(tmp_path: Path) -> None:
    package = tmp_path / "dpdl"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from dpdl.sub.high import g  # deferred: still a cycle\n")
    (package / "sub" / "high.py").write_text("from dpdl import low\n")
    assert find_cycle(import_graph(package)) == ["dpdl.low", "dpdl.sub.high", "dpdl.low"]
    (package / "low.py").write_text("X = 1\n")
    assert find_cycle(import_graph(package)) == []


def test_only_the_registry_imports_by_name() -> None:
    """``import_module`` with a computed name hides an import from the graph: only the registry may use it."""
    users = [
        module_name(path)
        for path in SOURCE.rglob("*.py")
        if re.search(r"\bimport_module\(", path.read_text(encoding="utf-8"))
    ]
    assert users == ["dpdl.studies"]


@pytest.mark.parametrize("study", studies.ALL)
def test_every_arrow_in_a_study_package_points_down(study: str) -> None:
    package = SOURCE / "studies" / study
    graph = import_graph()
    prefix = f"dpdl.studies.{study}."

    def layer(name: str) -> int:
        short = name.removeprefix(prefix)
        return STUDY_LAYERS["_private" if short.startswith("_") else short]

    for path in package.glob("*.py"):
        if path.stem == "__init__":
            continue
        name = module_name(path)
        for imported in graph[name]:
            if imported.startswith(prefix):
                private = imported.removeprefix(prefix).startswith("_") and path.stem.startswith("_")
                assert private or layer(imported) < layer(name), f"{name} imports {imported}, which is not below it"
            else:  # nothing of another study, nothing above the studies
                assert not imported.startswith("dpdl.studies.") or imported == "dpdl.studies.common", (name, imported)
                assert imported != "dpdl.studies", (name, imported)


def test_every_module_of_a_study_is_one_the_registry_declares() -> None:
    for study in studies.ALL:
        modules = {path.stem for path in (SOURCE / "studies" / study).glob("*.py")} - {"__init__"}
        assert set(studies.MODULES) <= modules, f"{study} lacks {set(studies.MODULES) - modules}"
        undeclared = {
            m for m in modules - set(studies.MODULES) - set(studies.OPTIONAL_MODULES) if not m.startswith("_")
        }
        assert not undeclared, f"{study}: {undeclared} are neither declared modules nor private (_name.py)"
        assert set(STUDY_LAYERS) >= {m for m in modules if not m.startswith("_")}


@pytest.mark.parametrize("study", studies.ALL)
def test_each_study_package_exposes_the_protocol(study: str) -> None:
    package = studies.study_module(study)
    assert package.STUDY == study and package.TITLE.strip() and package.CLAIMS
    assert package.READINGS[0].name == DEFAULT and not package.READINGS[0].switches
    assert isinstance(package.CLAIMS_STEP_KEYS, tuple)
    for function in ("check_config", "targets", "runs", "add_commands", "judge_snapshot"):
        assert callable(getattr(package, function)), function
    assert studies.audit_module(study).PRIVACY_CLAIMS is not None


def test_every_other_list_of_the_studies_is_the_registry() -> None:
    """The lists a schema, a rule file or the data layer cannot take from the registry, checked against it."""
    config_schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert config_schema["properties"]["studies"]["items"]["enum"] == list(studies.ALL)
    assert config_schema["properties"]["studies"]["default"] == list(studies.ALL)
    assert [k for k in config_schema["required"] if k in studies.ALL] == list(studies.ALL)
    for study in studies.ALL:
        assert config_schema["properties"][study]["$ref"] == f"{study}.schema.yaml"
        assert (ROOT / "workflow" / "schemas" / f"{study}.schema.yaml").is_file()
        assert (ROOT / "docs" / "studies" / f"{study}.md").is_file()
    for name in ("card", "run"):
        schema = json.loads((SOURCE / "schemas" / f"{name}.schema.json").read_text())
        assert schema["properties"]["study"]["enum"] == list(studies.ALL), name
    assert list(STUDY_DATASETS) == list(studies.ALL)
    includes = re.findall(r'include: "workflow/rules/(\w+)\.smk"', (ROOT / "Snakefile").read_text())
    assert [rule for rule in includes if rule in studies.ALL] == list(studies.ALL)
    for config in sorted((ROOT / "config").glob("*.yaml")):
        text = yaml.safe_load(config.read_text())
        assert all(study in text for study in studies.ALL), f"{config.name} lacks a study section"
