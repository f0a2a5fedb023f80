"""``config/README.md``: every configuration key, generated from the JSON schemas of ``src/dpdl/schemas/``.

``dpdl config-reference --out config/README.md`` writes it; a test fails when the committed file
differs from :func:`config_reference`. The schemas are read as :mod:`dpdl.config` reads them (a
``$ref`` to another schema file is resolved beside the file that names it); a ``$ref`` with keys
beside it is shown with both, as JSON Schema applies both.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from dpdl.config import SCHEMA, schema_of
from dpdl.errors import ConfigError
from dpdl.io import markdown_text
from dpdl.schemas import resolve_ref

OUT = Path("config/README.md")
REGENERATE = f"dpdl config-reference --out {OUT}"

# The shipped configs, what each is for (from their header comments).
CONFIGS = {
    "config.yaml": "the default (the Snakefile's `configfile`): every figure but wddp's Figures 6, 7, 10 "
    "and 11, with reduced iterations and seeds, for a first look, not for verdicts",
    "ci.yaml": "CI scale: every figure and table at toy size, in minutes on 2 cores, on the real data "
    "(run it with `DPDL_DATA_MIRROR=../shared/data`)",
    "paper.yaml": "paper scale: the papers' full grids "
    "(hundreds of CPU-hours for dp_iadmm; run it on a cluster through a profile); "
    "it sets every key config.yaml sets",
    "paper_at_hand.yaml": "paper.yaml on the data at hand: "
    "FEMNIST from the training shards the mirror holds (21 of 36; a declared deviation) "
    "instead of stopping; what the papers' premises are measured on (`dpdl data-premises`)",
    "paper_femnist_at_hand.yaml": "paper_at_hand.yaml for dp_iadmm alone, its grid narrowed by "
    "`dp_iadmm.cells` to the FEMNIST run jobs of the main horizon on the writers at hand that decide the "
    "most claims per CPU-hour, each batch listed once it has run (the noiseless pair, the non-private "
    "reference, Section 4's three numbers, then all of Fig. 2b's and Fig. 3's; 18 jobs; T = 20,000, 10 "
    "seeds; 2.4 to 3.2 CPU-hours a private job)",
    "paper_femnist_at_hand_nonprivate.yaml": "paper_femnist_at_hand.yaml narrowed to its first three "
    "jobs, the non-private runs on the writers at hand (the noiseless pair and the non-private reference; "
    "one run each, about 1 CPU-hour): the first batch published with `dpdl publish --deviation "
    "writers_at_hand`",
    "paper_femnist_at_hand_pilot.yaml": "paper_femnist_at_hand.yaml at 3 seeds instead of 10: the "
    "declared seed pilot of its private FEMNIST jobs (Section 4's three, then Fig. 2b's in batches: 15 jobs, "
    "12.4 CPU-hours measured), published with `dpdl publish --deviation writers_at_hand`",
    "paper_mnist_cells.yaml": "paper.yaml for dp_iadmm alone, its grid narrowed by `dp_iadmm.cells` "
    "to the four run jobs of the MNIST numbers Ryu & Kim's Section 4 states "
    "(T = 20,000, 10 seeds; about 4.5 CPU-hours)",
    "paper_mnist.yaml": "paper.yaml for dp_iadmm alone, its grid narrowed by `dp_iadmm.cells` "
    "to the 30 MNIST run jobs of the main horizon (Figs 1, 2a and 4, the non-private reference "
    "and pair), the cells that decide the most claims first "
    "(T = 20,000, 10 seeds; about 27 CPU-hours, and about 39 for the readings' reruns)",
    "paper_mnist_long.yaml": "paper_mnist.yaml and the 15 MNIST run jobs of the long horizon "
    "(T = 1e6: Remark 3, Fig. 5), Remark 3's first; "
    "in the folder that built paper_mnist.yaml it runs only the long jobs "
    "(measured on an H200: about 5.8 minutes per job with TF32 products, 14 at full float32; "
    "about 48 CPU-hours per long job, so a GPU's)",
}

INTRO = f"""\
# Configuration

<!-- generated from src/dpdl/schemas/*.schema.yaml by `{REGENERATE}`; do not edit -->

Every key of the workflow's configuration, generated from the JSON schemas in
[`src/dpdl/schemas/`](../src/dpdl/schemas/) (`config.schema.yaml`, which references
`common.schema.yaml` and one schema per study; they ship inside the package, so an installed dpdl
validates a config from any folder). The configuration is validated before Snakemake plans any
job: unknown keys, wrong types and values outside the bounds below are rejected, each problem on
one line naming its key, and so are the relations between keys that a schema cannot state (for
example `wddp.trace_points` above `wddp.iterations`; see each description).

## The configs in this folder

| file | what it is for |
|---|---|
{{configs}}

## Choosing a config and overriding keys

- `snakemake --cores 2 --configfile config/ci.yaml`: Snakemake reads `config/config.yaml` (the
  Snakefile's `configfile`) and merges the given file over it key by key, so a key the file leaves
  out keeps config.yaml's value, not the default below. Several files
  (`--configfile config/paper.yaml mine.yaml`) are merged in that order.
- `--config key=value` sets a top-level key, after the files. Snakemake reads the value as an
  integer, a float, `True` or `False`, or else as YAML whose scalars all stay text:
  `--config readings=True 'studies=[wddp, dzoa]'` works, but `readings=true` (the text "true") and
  `'wddp={{seeds: 3}}'` (seeds the text "3") are rejected. Change a nested key in a small YAML file
  given as a further `--configfile`.
- Write exponents with a dot (`1.0e-6`): YAML 1.1 reads `1e-6` as text.
- `dpdl status --configfile FILE` validates a config without Snakemake and names the line of a
  YAML error.

## Reading the tables

One row per key, nested keys by their dotted path; an array's row says what each item must be.
*default* is the value a key takes when the merged configuration leaves it out (the schema's
`default`; a key without one takes its value from its parent's default). A *required* key must be
present wherever its parent is (config/config.yaml sets the required top-level keys).
"""


def _escape(text: str) -> str:
    """Text for a Markdown table cell: one line, ``|`` escaped, ``<word>`` kept from reading as HTML."""
    return markdown_text(" ".join(str(text).split()).replace("|", r"\|"))


def _value(value: object) -> str:
    """A value as it is written in a config file (YAML flow style)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text
    if isinstance(value, list):
        return "[" + ", ".join(map(_value, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _code(value: object) -> str:
    return f"`{_value(value)}`"


def _merged(schema: dict, folder: Path) -> tuple[dict, Path]:
    """``schema`` with its ``$ref`` resolved and the keys beside the ``$ref`` applied over the target."""
    if "$ref" not in schema:
        return schema, folder
    target, folder = _merged(*resolve_ref({"$ref": schema["$ref"]}, folder))
    merged = {k: v for k, v in target.items() if k not in ("$schema", "$defs")}
    for key, value in schema.items():
        if key == "$ref":
            continue
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = {**merged[key], **value} if both else value
    return merged, folder


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object", type(None): "null"}[type(value)]


def _alternatives(schema: dict, folder: Path) -> list[dict]:
    return [_merged(alt, folder)[0] for alt in schema.get("oneOf", schema.get("anyOf", []))]


def _type(schema: dict, folder: Path) -> str:
    """The JSON type(s) of ``schema``: ``array of number``, ``string or null``, ..."""
    if "oneOf" in schema or "anyOf" in schema:
        names = [_type(alt, folder) for alt in _alternatives(schema, folder)]
        return " or ".join(dict.fromkeys(names))
    types = schema.get("type")
    if types is None:
        values = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else []
        types = list(dict.fromkeys(map(_json_type, values)))
        if {"integer", "number"} <= set(types):
            types.remove("integer")
    types = [types] if isinstance(types, str) else list(types)
    if "array" in types and "items" in schema:
        types[types.index("array")] = f"array of {_type(*_merged(schema['items'], folder))}"
    return " or ".join(types) or "any"


def _range(schema: dict) -> str:
    """``0 < x ≤ 1``, ``x ≥ 20``, ... from the bounds of ``schema`` (the tighter of two upper bounds)."""
    low = high = ""
    if "exclusiveMinimum" in schema and schema["exclusiveMinimum"] >= schema.get("minimum", float("-inf")):
        low = f"{_value(schema['exclusiveMinimum'])} <"
    elif "minimum" in schema:
        low = f"{_value(schema['minimum'])} ≤"
    if "exclusiveMaximum" in schema and schema["exclusiveMaximum"] <= schema.get("maximum", float("inf")):
        high = f"< {_value(schema['exclusiveMaximum'])}"
    elif "maximum" in schema:
        high = f"≤ {_value(schema['maximum'])}"
    if not (low or high):
        return ""
    if low and high:
        return f"{low} x {high}"
    return f"x {high}" if high else "x " + {"<": ">", "≤": "≥"}[low[-1]] + " " + low[:-2]


def _allowed(schema: dict, folder: Path) -> str:
    """What values ``schema`` accepts, in words (bounds, choices, pattern, array length and items)."""
    if "oneOf" in schema or "anyOf" in schema:
        return " or ".join(
            _allowed(alt, folder) or _type(alt, folder) for alt in _alternatives(schema, folder)
        )
    parts = []
    if "const" in schema:
        parts.append(_code(schema["const"]))
    if "enum" in schema:
        parts.append("one of " + ", ".join(map(_code, schema["enum"])))
    if bounds := _range(schema):
        parts.append(bounds)
    if "pattern" in schema:
        parts.append(f"matching `{schema['pattern']}`")
    low, high = schema.get("minItems", 0), schema.get("maxItems")
    if high is not None:
        parts.append(f"{low} to {high} items")
    elif low:
        parts.append("non-empty" if low == 1 else f"at least {low} items")
    if schema.get("uniqueItems"):
        parts.append("no repeats")
    if "items" in schema:
        item, item_folder = _merged(schema["items"], folder)
        if each := _allowed(item, item_folder):
            parts.append(f"each {each}")
    return ", ".join(parts)


def _study_sections(schema: dict) -> dict[str, str]:
    """Top-level keys whose schema is a file of its own (the studies) -> that file."""
    return {
        key: sub["$ref"].partition("#")[0]
        for key, sub in schema.get("properties", {}).items()
        if sub.get("$ref", "").partition("#")[0]
    }


_NO_DEFAULT = object()


def _rows(
    schema: dict, folder: Path, prefix: tuple[str, ...] = (), parent_default: object = _NO_DEFAULT
) -> Iterator[tuple[str, dict, Path, object, bool]]:
    """The keys below ``schema``, depth first.

    Each as ``(key path, merged schema, its folder, default, required)``.
    """
    required = set(schema.get("required", ()))
    for key, raw in schema.get("properties", {}).items():
        sub, sub_folder = _merged(raw, folder)
        if "default" in sub:
            default = sub["default"]
        elif isinstance(parent_default, dict) and key in parent_default:
            default = parent_default[key]
        else:
            default = _NO_DEFAULT
        path = (*prefix, key)
        yield ".".join(path), sub, sub_folder, default, key in required
        if not prefix and key in _study_sections(schema):
            continue  # its keys get a section of their own
        if "properties" in sub:
            yield from _rows(sub, sub_folder, path, default)


def _table(schema: dict, folder: Path, prefix: tuple[str, ...] = ()) -> str:
    studies = _study_sections(schema) if not prefix else {}
    lines = ["| key | type | default | allowed | description |", "|---|---|---|---|---|"]
    for path, sub, sub_folder, default, required in _rows(schema, folder, prefix):
        allowed = _allowed(sub, sub_folder) if "properties" not in sub else ""
        if path in studies:
            allowed = f"the keys of [`{path}`](#{path}) below"
        allowed = ", ".join(filter(None, ("required" if required else "", allowed)))
        cells = [
            f"`{path}`",
            _type(sub, sub_folder),
            "" if default is _NO_DEFAULT else _code(default),
            allowed,
            sub.get("description", ""),
        ]
        lines.append("| " + " | ".join(map(_escape, cells)) + " |")
    return "\n".join(lines) + "\n"


def key_paths(schema_path: Path = SCHEMA) -> list[str]:
    """Every key path the schemas define (``data.kdd.seed``, ``dvp_pvp.rho.pvp``, ...), in document order."""
    schema, folder = _root(schema_path)
    paths = [path for path, *_ in _rows(schema, folder)]
    for study in _study_sections(schema):
        sub, sub_folder = _merged(schema["properties"][study], folder)
        paths += [path for path, *_ in _rows(sub, sub_folder, (study,))]
    return paths


def undescribed(schema_path: Path = SCHEMA) -> list[str]:
    """The key paths whose schema has no ``description`` (a study's key takes its file's)."""
    schema, folder = _root(schema_path)
    rows = list(_rows(schema, folder))
    for study in _study_sections(schema):
        sub, sub_folder = _merged(schema["properties"][study], folder)
        rows += list(_rows(sub, sub_folder, (study,)))
    return [path for path, sub, *_ in rows if not sub.get("description")]


def _root(schema_path: Path) -> tuple[dict, Path]:
    schema_path = Path(schema_path)
    if not schema_path.is_file():
        raise ConfigError(f"config schema {schema_path} not found")
    return schema_of(schema_path), schema_path.parent


def config_reference(schema_path: Path = SCHEMA) -> str:
    """The Markdown text of ``config/README.md``: the configs, how to override keys, one table per section."""
    schema, folder = _root(schema_path)
    configs = "\n".join(f"| [`{name}`]({name}) | {_escape(what)} |" for name, what in CONFIGS.items())
    parts = [
        INTRO.replace("{configs}", configs),
        "## Top level\n",
        f"{_escape(schema.get('description', ''))} (`src/dpdl/schemas/config.schema.yaml`)\n",
        _table(schema, folder),
    ]
    for study, file_name in _study_sections(schema).items():
        sub, sub_folder = _merged(schema["properties"][study], folder)
        parts += [
            f"## {study}\n",
            f"{_escape(sub.get('description', ''))} (`src/dpdl/schemas/{file_name}`)\n",
            _table(sub, sub_folder, (study,)),
        ]
    return "\n".join(parts)
