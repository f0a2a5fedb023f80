"""The code's structure as tests: the imports form no cycle, every arrow in a study package points down,
and the studies are listed once (``dpdl.studies.ALL``) with every other list of them checked against it."""

from __future__ import annotations

import ast
import json
import re
import warnings
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
    **dict.fromkeys(["errors", "io", "progress", "validation", "checkpoint", "hints"], 0),
    **dict.fromkeys(["privacy", "models", "algorithms", "data", "audit", "runs", "lock"], 1),
    **dict.fromkeys(
        ["seed_statistics", "judgement", "verdicts", "claims", "aggregate", "plotting", "post_hoc", "studies.common"], 2
    ),
    "studies.<study>": 3,
    "studies": 4,
    **dict.fromkeys(
        [
            "config",
            "readings",
            "paths",
            "audit_report",
            "summary",
            "targets",
            "verdict_check",
            "publish",
            "article",
            "check",
            "compare",
            "report",
        ],
        5,
    ),
    "config_reference": 5,
    "cli": 6,
    "__main__": 7,
}
# A study package's named modules, lowest first: a module imports only modules of a lower layer of its own study,
# directly or through its private ``_*.py`` modules (which have no layer of their own: they may sit below
# ``grid``, as dp_iadmm's grid pieces do, or above it, as dzoa's input readers do; the cycle test keeps them acyclic).
STUDY_LAYERS = {
    "grid": 0,
    "readings": 1,
    "run": 2,
    "tune": 3,
    "aggregate": 4,
    "tables": 5,
    "extract": 5,
    "figures": 5,
    "claims": 6,
    "audit": 6,
    "cli": 7,
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
    graph = import_graph()
    prefix = f"dpdl.studies.{study}."
    modules = {module_name(path) for path in (SOURCE / "studies" / study).glob("*.py")} - {prefix[:-1]}

    def short(name: str) -> str:
        return name.removeprefix(prefix)

    def reached(name: str, seen: set[str]) -> set[str]:
        """The named modules of the study that ``name`` imports, directly or through private modules."""
        found = set()
        for imported in graph[name] & modules:
            if short(imported).startswith("_"):
                if imported not in seen:
                    found |= reached(imported, seen | {imported})
            else:
                found.add(imported)
        return found

    for name in modules:
        for imported in graph[name]:  # nothing of another study, nothing above the studies
            assert not imported.startswith("dpdl.studies.") or imported.startswith((prefix, "dpdl.studies.common")), (
                f"{name} imports {imported}"
            )
            assert imported != "dpdl.studies", f"{name} imports the registry"
        if short(name).startswith("_"):
            continue
        for imported in reached(name, set()):
            assert STUDY_LAYERS[short(imported)] < STUDY_LAYERS[short(name)], (
                f"{name} imports {imported}, which is not below it (STUDY_LAYERS)"
            )


def test_every_module_of_a_study_is_one_the_registry_declares() -> None:
    for study in studies.ALL:
        modules = {path.stem for path in (SOURCE / "studies" / study).glob("*.py")} - {"__init__"}
        assert set(studies.MODULES) <= modules, f"{study} lacks {set(studies.MODULES) - modules}"
        undeclared = {name for name in modules if not studies.is_study_module(name)}
        assert not undeclared, f"{study}: {undeclared} is neither a fixed, an optional nor a private (_name) module"
    assert set(STUDY_LAYERS) == set(studies.MODULES) | set(studies.OPTIONAL_MODULES)


def test_a_study_module_is_fixed_optional_or_private() -> None:
    assert studies.is_study_module("grid") and studies.is_study_module("readings") and studies.is_study_module("tables")
    assert studies.is_study_module("_variants") and not studies.is_study_module("__init__")
    assert not studies.is_study_module("variants") and not studies.is_study_module("grid2")


def test_very_long_source_modules_are_flagged_not_failed() -> None:
    """A module past LONG_MODULE_LINES may hold two concerns: a warning to look, never a failure."""
    lengths = {str(path.relative_to(SOURCE)): len(path.read_text().splitlines()) for path in SOURCE.rglob("*.py")}
    long = {name: lines for name, lines in lengths.items() if lines > studies.LONG_MODULE_LINES}
    if long:
        warnings.warn(f"modules over {studies.LONG_MODULE_LINES} lines (one concern each?): {long}", stacklevel=1)


@pytest.mark.parametrize("study", studies.ALL)
def test_each_study_package_exposes_the_protocol(study: str) -> None:
    package = studies.study_module(study)
    assert package.STUDY == study and package.TITLE.strip() and package.CLAIMS
    assert package.READINGS[0].name == DEFAULT and not package.READINGS[0].switches
    assert isinstance(package.CLAIMS_STEP_KEYS, tuple)
    assert isinstance(package.SHARED_SEEDS, bool)
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


def test_no_rule_param_is_a_lambda() -> None:
    # Snakemake's style: input functions and params are named functions (common.smk, a study's grid), so each says
    # what it gives and can be tested (issue 60 item 4).
    found = [
        f"{path.name}:{number}"
        for path in sorted((ROOT / "workflow" / "rules").glob("*.smk"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if re.search(r"\blambda\b", line)
    ]
    assert not found, f"lambdas in rule files: {found}"
