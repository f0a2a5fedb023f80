"""The code's structure as tests: the imports form no cycle, every arrow in a study package points down,
and the studies are listed once (``dpdl.studies.ALL``) with every other list of them checked against it."""

from __future__ import annotations

import ast
import functools
import inspect
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml

import dpdl
from dpdl import studies
from dpdl.studies.common import DEFAULT, PaperReference

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(dpdl.__file__).parent
# The package's layers (docs/development.md): a module imports only from its own layer or those below.
PACKAGE_LAYERS = {
    **dict.fromkeys(
        ["errors", "io", "chain", "progress", "validation", "schemas", "checkpoint", "hints", "claim_kinds"],
        0,
    ),
    **dict.fromkeys(["privacy", "models", "algorithms", "data", "audit", "runs", "lock"], 1),
    **dict.fromkeys(
        [
            "seed_statistics",
            "judgement",
            "verdicts",
            "claims",
            "aggregate",
            "plotting",
            "post_hoc",
            "studies.common",
        ],
        2,
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
            "publishing",  # a package: its modules in PUBLISHING_LAYERS
            "article",  # a package: its modules in ARTICLE_LAYERS
            "check",
            "compare",
            "verify",
            "report",
        ],
        5,
    ),
    "config_reference": 5,
    **dict.fromkeys(["cli_commands", "cli_parser", "cli"], 6),  # in this order (docs/development.md)
    "__main__": 7,
}
# The article package's modules (all in the layer of ``article``), lowest first: a module imports only modules of a
# lower layer of the package (dpdl/article/__init__.py says what each holds).
ARTICLE_LAYERS = {
    **dict.fromkeys(["blocks", "snapshot"], 0),
    **dict.fromkeys(["title", "claim_text", "compute", "front_matter"], 1),
    **dict.fromkeys(
        ["reproducibility_summary", "exhibits", "sensitivity", "privacy_audit", "deviations", "render"], 2
    ),
    "write": 3,
}
# The publishing package's modules, lowest first (docs/development.md): a module imports only lower ones.
PUBLISHING_LAYERS = {"layout": 0, "staging": 1, "compute": 1, "merged": 2, "problems": 3, "snapshot": 4}
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
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                for a in node.names
            }
    return {name for name in found if name in known}


def import_graph(root: Path = SOURCE) -> dict[str, set[str]]:
    """Each module under ``root`` and the modules of ``root`` it imports; dpdl's own read once per process."""
    graph = _source_graph() if root == SOURCE else _read_graph(root)
    return {name: set(imports) for name, imports in graph.items()}


def _read_graph(root: Path) -> dict[str, set[str]]:
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    return {name: imported_modules(path, set(paths)) - {name} for name, path in paths.items()}


@functools.cache
def _source_graph() -> dict[str, set[str]]:
    return _read_graph(SOURCE)


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


def test_every_arrow_in_the_article_package_points_down() -> None:
    graph = import_graph()
    modules = {path.stem for path in (SOURCE / "article").glob("*.py")} - {"__init__"}
    assert modules == set(ARTICLE_LAYERS), f"declare each module of dpdl/article in ARTICLE_LAYERS: {modules}"
    assert not graph["dpdl.article"], "the package's __init__ holds its docstring only"
    up = [
        f"{name} imports {imported}"
        for name in modules
        for imported in graph[f"dpdl.article.{name}"]
        if imported.startswith("dpdl.article.")
        and ARTICLE_LAYERS[imported.removeprefix("dpdl.article.")] >= ARTICLE_LAYERS[name]
    ]
    assert not up, f"not below it (ARTICLE_LAYERS): {up}"


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


def test_every_arrow_in_the_publishing_package_points_down() -> None:
    graph = import_graph()
    modules = {module_name(path) for path in (SOURCE / "publishing").glob("*.py")} - {"dpdl.publishing"}
    assert {name.removeprefix("dpdl.publishing.") for name in modules} == set(PUBLISHING_LAYERS)
    for name in modules:
        for imported in graph[name] & modules:
            low, high = (PUBLISHING_LAYERS[n.removeprefix("dpdl.publishing.")] for n in (imported, name))
            assert low < high, f"{name} imports {imported}, which is not below it (PUBLISHING_LAYERS)"
    assert not graph["dpdl.publishing"], "the package's __init__ holds only its docstring"


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
            assert not imported.startswith("dpdl.studies.") or imported.startswith(
                (prefix, "dpdl.studies.common")
            ), f"{name} imports {imported}"
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
        assert not undeclared, (
            f"{study}: {undeclared} is neither a fixed, an optional nor a private (_name) module"
        )
    assert set(STUDY_LAYERS) == set(studies.MODULES) | set(studies.OPTIONAL_MODULES)


def test_a_study_module_is_fixed_optional_or_private() -> None:
    assert (
        studies.is_study_module("grid")
        and studies.is_study_module("readings")
        and studies.is_study_module("tables")
    )
    assert studies.is_study_module("_variants") and not studies.is_study_module("__init__")
    assert not studies.is_study_module("variants") and not studies.is_study_module("grid2")


def test_very_long_source_modules_are_flagged_not_failed() -> None:
    """A module past LONG_MODULE_LINES may hold two concerns: a warning to look, never a failure."""
    lengths = {
        str(path.relative_to(SOURCE)): len(path.read_text().splitlines()) for path in SOURCE.rglob("*.py")
    }
    long = {name: lines for name, lines in lengths.items() if lines > studies.LONG_MODULE_LINES}
    if long:
        warnings.warn(
            f"modules over {studies.LONG_MODULE_LINES} lines (one concern each?): {long}", stacklevel=1
        )


@pytest.mark.parametrize("study", studies.ALL)
def test_each_study_package_exposes_the_protocol(study: str) -> None:
    package = studies.study_module(study)
    assert package.STUDY == study and package.TITLE.strip() and package.CLAIMS
    assert isinstance(package.REFERENCE, PaperReference) and package.REFERENCE.title.strip()
    assert package.READINGS[0].name == DEFAULT and not package.READINGS[0].switches
    assert isinstance(package.CLAIMS_STEP_KEYS, tuple)
    assert isinstance(package.SHARED_SEEDS, bool)
    assert isinstance(package.CARD_TABLES, dict) and all(
        callable(studies.card_table(n)) for n in package.CARD_TABLES
    )
    for function in ("check_config", "targets", "runs", "add_commands", "judge_snapshot"):
        assert callable(getattr(package, function)), function
        declared = list(inspect.signature(getattr(studies.Study, function)).parameters)[1:]  # without self
        assert list(inspect.signature(getattr(package, function)).parameters) == declared, function
    assert studies.audit_module(study).PRIVACY_CLAIMS is not None


def test_every_other_list_of_the_studies_is_the_registry() -> None:
    """What the top level needs of each study comes from the registry: the config schema's ``studies`` enum and
    sections, the rule files the Snakefile includes, the prepared datasets; each study's files exist."""
    config_schema = studies.config_schema()
    assert config_schema["properties"]["studies"]["items"]["enum"] == list(studies.ALL)
    assert config_schema["properties"]["studies"]["default"] == list(studies.ALL)
    assert [k for k in config_schema["required"] if k in studies.ALL] == list(studies.ALL)
    for study in studies.ALL:
        files = studies.study_files(study)
        assert config_schema["properties"][study]["$ref"] == files.schema.name
        assert files.schema.is_file() and (ROOT / files.rules).is_file() and (ROOT / files.docs).is_file(), (
            study
        )
    assert list(dict.fromkeys(d.study for d in studies.prepared_datasets().values())) == list(studies.ALL)
    snakefile = (ROOT / "Snakefile").read_text(encoding="utf-8")
    assert "for study_rules in STUDY_RULES:" in snakefile  # common.smk: STUDY_RULES from studies.study_files
    for config in sorted((ROOT / "config").glob("*.yaml")):
        text = yaml.safe_load(config.read_text())
        assert all(study in text for study in studies.ALL), f"{config.name} lacks a study section"


def hand_written_study_lists(files: list[Path], names: tuple[str, ...] = studies.BUILTIN) -> list[str]:
    """Where a file lists two or more of the studies by hand instead of asking the registry: in Python a tuple,
    list or set of their names or a dict keyed by them (or by ``<study>/<dataset>``); in a rule file, the
    Snakefile, a schema or a shell script two names side by side in brackets or a rule file included by name."""
    either = "|".join(names)
    side_by_side = re.compile(rf"""[\[(]\s*["']?({either})["']?\s*,\s*["']?({either})\b""")
    by_name = re.compile(rf"include:\s*\S*rules/({either})\.smk")
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        if path.suffix != ".py":
            found += [f"{path.name}:{text[: m.start()].count(chr(10)) + 1}: lists {m[1]}, {m[2]}, ..." for m in
                      side_by_side.finditer(text)]  # fmt: skip
            found += [f"{path.name}: includes {m[1]}.smk by name" for m in by_name.finditer(text)]
            continue
        for node in ast.walk(ast.parse(text)):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
            if not isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) or not items:
                continue
            strings = [k.value for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            named = {value.partition("/")[0] for value in strings} & set(names)
            if len(named) >= 2:
                found.append(f"{path.name}:{node.lineno}: lists {', '.join(sorted(named))}")
    return found


def code_and_workflow_files() -> list[Path]:
    """The package's modules and data, the rule files, the Snakefile and the CI script: where a list of the studies
    would be one to keep in step by hand (the registry's own BUILTIN aside; configs name their sections)."""
    found = [ROOT / "Snakefile", ROOT / ".ci" / "run", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    found += [path for path in sorted(SOURCE.rglob("*")) if path.suffix in (".py", ".yaml", ".json")]
    return [path for path in found if path.is_file() and path != SOURCE / "studies" / "__init__.py"]


def test_no_other_list_of_the_studies_is_written_by_hand() -> None:
    assert hand_written_study_lists(code_and_workflow_files()) == []


def test_the_study_list_finder_finds_planted_lists(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text(
        'from dpdl.studies import ALL\nX = ("wddp",)\nY = {"wddp/kdd": 1, "x": 2}\n'
    )
    (tmp_path / "post_hoc.py").write_text('STUDIES = ("dvp_pvp", "wddp", "dp_iadmm", "dzoa")\n')
    (tmp_path / "prepared.py").write_text('OPTIONS = {\n    "dvp_pvp/adult": {},\n    "wddp/kdd": {},\n}\n')
    (tmp_path / "Snakefile").write_text(
        'include: "workflow/rules/common.smk"\ninclude: "workflow/rules/wddp.smk"\n'
    )
    (tmp_path / "x.schema.json").write_text('{"study": {"enum": ["dvp_pvp", "wddp"]}}\n')
    found = hand_written_study_lists(sorted(tmp_path.iterdir()))
    assert found == [
        "Snakefile: includes wddp.smk by name",
        "post_hoc.py:1: lists dp_iadmm, dvp_pvp, dzoa, wddp",
        "prepared.py:1: lists dvp_pvp, wddp",
        "x.schema.json:1: lists dvp_pvp, wddp, ...",
    ]


# Modules outside dpdl.studies that still name a study in their code, and why (issue 60 item 1 moves the data layer's).
NAMES_A_STUDY = {
    "cli_parser.py": "examples in help texts (a prepared dataset's name, a study's)",
    "config.py": "an example in a message",
    "config_reference.py": "the configs' descriptions",
    "verify.py": "descriptions of dp_iadmm's provenance fields",
    "data/availability.py": "FEMNIST's prepared dataset, probed shard by shard",
    "data/prepared.py": "FEMNIST's card",
}


def study_names_in_code(path: Path, names: tuple[str, ...] = studies.BUILTIN) -> list[str]:
    """Where ``path`` names one of the studies in its code: in Python a string that is not a docstring, in a rule file
    or the Snakefile a line's code before its comment."""
    word = re.compile(rf"(?<![A-Za-z0-9])({'|'.join(names)})(?![A-Za-z0-9])")
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        lines = enumerate(text.splitlines(), start=1)
        return [f"{path.name}:{n}: {m[1]}" for n, line in lines if (m := word.search(line.split("#", 1)[0]))]
    tree = ast.parse(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        f"{path.name}:{node.lineno}: {m[1]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        if (m := word.search(node.value))
    ]


def test_the_top_level_names_no_study() -> None:
    # issue 60 item 1: a paper's knowledge (Ryu & Kim's Table 1, say) lives in its package and its rule file; the
    # top level asks the registry (a study's CARD_TABLES), so no other rule file and no module outside dpdl.studies
    # names a study in its code, but the mechanisms (algorithms/, privacy/: a module per paper's algorithm) and
    # those of NAMES_A_STUDY.
    own = {ROOT / studies.study_files(study).rules for study in studies.BUILTIN}
    files = [
        ROOT / "Snakefile",
        *(p for p in sorted((ROOT / "workflow" / "rules").glob("*.smk")) if p not in own),
    ]
    files += [
        path
        for path in sorted(SOURCE.rglob("*.py"))
        if path.relative_to(SOURCE).parts[0] not in ("studies", "algorithms", "privacy")
        and path.relative_to(SOURCE).as_posix() not in NAMES_A_STUDY
    ]
    assert [line for path in files for line in study_names_in_code(path)] == []
    assert all((SOURCE / name).is_file() for name in NAMES_A_STUDY)


def test_the_study_name_finder_finds_planted_names(tmp_path: Path) -> None:
    (tmp_path / "tables.py").write_text(
        '"""Table 1 of dp_iadmm."""\nPATH = "results/tables/dp_iadmm_table1.csv"\n'
    )
    (tmp_path / "data.smk").write_text('# wddp\nrule t:\n    output:\n        "results/tables/wddp/x.md",\n')
    found = [line for path in sorted(tmp_path.iterdir()) for line in study_names_in_code(path)]
    assert found == ["data.smk:4: wddp", "tables.py:2: dp_iadmm"]


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


def schema_path_arithmetic(root: Path, extra: tuple[Path, ...] = ()) -> list[str]:
    """Where a module of ``root`` (or a file of ``extra``: the rule files) finds a schema file by hand instead of
    through ``dpdl.schemas``: the old folder ``workflow/schemas`` named anywhere, and, in code outside
    ``dpdl.schemas``, a string that is the folder ``schemas`` or a path into it, or ``importlib.resources``."""
    found = []
    for path in [*sorted(root.rglob("*")), *extra]:
        if (
            not path.is_file()
            or path.suffix not in (".py", ".smk", ".yaml", ".json", "")
            or "__pycache__" in path.parts
        ):
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.name}: names workflow/schemas" for _ in re.findall(r"workflow\W{1,6}schemas", text)]
        if path.suffix != ".py" or path == root / "schemas" / "__init__.py":
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value == "schemas" or node.value.startswith("schemas/"):
                    found.append(
                        f"{path.name}:{node.lineno}: a path into the schemas folder ({node.value!r})"
                    )
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names = [getattr(node, "module", None) or ""] + [alias.name for alias in node.names]
                if any(name == "importlib.resources" or name == "resources" for name in names):
                    found.append(
                        f"{path.name}:{node.lineno}: importlib.resources (find package files in dpdl.schemas)"
                    )
    return found


def test_schemas_are_found_only_through_the_package() -> None:
    # issue 60 item 2: the schemas ship in the package; dpdl.schemas finds them (importlib.resources) for every
    # reader, the workflow included, so no module or rule file computes a path to them.
    rules = (ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk")))
    assert schema_path_arithmetic(SOURCE, rules) == []
    assert not list((ROOT / "workflow").glob("schemas/*")), "the schemas live in src/dpdl/schemas/"


def test_the_schema_path_finder_finds_planted_paths(tmp_path: Path) -> None:
    package = tmp_path / "dpdl"
    (package / "schemas").mkdir(parents=True)
    (package / "schemas" / "__init__.py").write_text("from importlib import resources\nFOLDER = 'schemas'\n")
    (package / "ok.py").write_text("from dpdl import schemas\nX = schemas.load('wddp.schema.yaml')\n")
    assert schema_path_arithmetic(package) == []
    (package / "audit.py").write_text(
        'SCHEMA = Path(__file__).parents[4] / "workflow" / "schemas" / "x.schema.yaml"\n'
    )
    (package / "runs.py").write_text(
        'from importlib import resources\nX = resources.files("dpdl") / "schemas/r.json"\n'
    )
    (package / "rules.smk").write_text('validate(config, "workflow/schemas/config.schema.yaml")\n')
    assert schema_path_arithmetic(package) == [
        "audit.py: names workflow/schemas",
        "audit.py:1: a path into the schemas folder ('schemas')",
        "rules.smk: names workflow/schemas",
        "runs.py:1: importlib.resources (find package files in dpdl.schemas)",
        "runs.py:2: a path into the schemas folder ('schemas/r.json')",
    ]


TOY = (
    ROOT / "tests" / "toy_study" / "toy"
)  # a fifth study, registered by DPDL_EXTRA_STUDIES (tests/toy_study)


TEXT_SUFFIXES = (".py", ".smk", ".yaml", ".json", ".md", ".toml", "")


def files_naming_study(name: str) -> list[str]:
    """The project's existing text files (code, workflow, configs, CI, docs but the walk-through) that name study
    ``name`` as a study: quoted, as a config section, or in a path (``<name>/``, ``<name>.smk``, ``<name>.md``)."""
    pattern = re.compile(
        rf"""["']{name}["']|^{name}:|\b{name}(/|\.smk|\.schema|\.md)|studies\.{name}\b""", re.M
    )
    places = [ROOT / "Snakefile", ROOT / "README.md", ROOT / "pyproject.toml", ROOT / ".ci" / "run"]
    for folder in ("src", "workflow", "config", "docs"):
        places += sorted((ROOT / folder).rglob("*"))
    walk_through = ROOT / "docs" / "development.md"
    return [
        str(path.relative_to(ROOT))
        for path in places
        if path.is_file() and path != walk_through and path.suffix in TEXT_SUFFIXES
        and pattern.search(path.read_text(encoding="utf-8", errors="replace"))
    ]  # fmt: skip


def test_a_fifth_study_touches_no_existing_file() -> None:
    """The toy study (tests/toy_study/test_toy_study.py builds it) is its package alone: its modules, its schema,
    rule file and page inside it; no existing file of the project names it, the registry included."""
    modules = {path.stem for path in TOY.glob("*.py")} - {"__init__"}
    assert set(studies.MODULES) <= modules and all(studies.is_study_module(name) for name in modules)
    assert all((TOY / name).is_file() for name in studies.STUDY_FILES)
    assert files_naming_study("toy") == []
    assert files_naming_study("dzoa")  # the finder finds a study the project names


# What a job imports (issue 60 item 7: about 200 workflow jobs a test build, each paying its imports). Only the
# accountant (dpdl.privacy.accounting: the audit, and the run jobs that write a run's composed privacy) loads
# dp_accounting, which brings scipy's statistics and signal processing (over a CPU-second a job): every module
# below is imported by a job that composes no privacy, directly or inside the command that runs it.
NO_ACCOUNTANT = [
    *(
        f"dpdl.privacy.{name}"
        for name in ("samplers", "exact", "theorems", "dp_iadmm", "dvp_pvp", "dzoa", "wddp")
    ),
    *sorted(
        module_name(path) for path in (SOURCE / "algorithms").glob("*.py") if path.stem != "dp_iadmm_jax"
    ),
    *(
        f"dpdl.studies.{study}.{name}"
        for study in studies.BUILTIN
        for name in ("grid", "run", "tune", "aggregate")
    ),
    "dpdl.studies.dzoa.extract",  # the exact Gaussian epsilon (dpdl.privacy.exact), no accountant
    "dpdl.studies.dzoa.claims",
    "dpdl.audit.reach",
    "dpdl.audit_report",
    "dpdl.summary",
    "dpdl.config",
    "dpdl.targets",
]


def first_importer(modules: list[str], package: str) -> str | None:
    """The first of ``modules``, imported in order in a fresh interpreter, after which ``package`` is loaded."""
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"    if {package!r} in sys.modules:\n"
        "        print(name)\n"
        "        break\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip() or None


def test_only_the_accountant_loads_dp_accounting() -> None:
    importer = first_importer(NO_ACCOUNTANT, "dp_accounting")
    assert importer is None, (
        f"{importer} loads dp_accounting: import the accountant (dpdl.privacy.accounting) only where privacy is "
        "composed, and nothing from the dpdl.privacy package's __init__"
    )
    assert (
        first_importer(["dpdl.privacy.accounting"], "dp_accounting") == "dpdl.privacy.accounting"
    )  # the probe works


def test_a_study_job_loads_no_other_study() -> None:
    """``python -m dpdl <study> <step>`` registers that study's steps alone (dpdl.cli.build_parser)."""
    code = (
        "import sys\nfrom dpdl.cli import build_parser\n"
        "build_parser(['dzoa', 'run', '--help'])\n"
        "print(' '.join(sorted({n.split('.')[2] for n in sys.modules if n.startswith('dpdl.studies.')})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["common", "dzoa"]


def test_the_workflow_is_parsed_without_the_verdict_engine() -> None:
    """What Snakemake imports to parse the workflow (common.smk) and a ``dpdl prepare`` job (the config's check)
    loads no scipy.stats: the verdict engine's statistics are for the claims, not for a config's readings."""
    parse = ["dpdl.studies", "dpdl.readings", "dpdl.paths", "dpdl.targets", "dpdl.config", "dpdl.data.fetch"]
    assert first_importer(parse, "scipy.stats") is None
