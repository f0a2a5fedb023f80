"""Loading and validating the workflow configuration.

The configuration is checked against the packaged ``config.schema.yaml`` (:mod:`dpdl.schemas`).
Every problem is a :class:`ConfigError` of one line: the key (or file and line), what is wrong,
how to fix it.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Iterable
from pathlib import Path

import jsonschema
import yaml

from dpdl import schemas
from dpdl.errors import ConfigError
from dpdl.readings import check_reading_cells
from dpdl.studies import ALL, config_schema, study_module
from dpdl.validation import key_path, read_yaml

SCHEMA = schemas.CONFIG
BASE_CONFIGFILE = Path("config/config.yaml")  # the Snakefile's `configfile:`, which Snakemake reads first
LASSO_MAX_BYTES = 4 * 2**30  # the prepared lasso's design matrices, all trials (the paper's: 0.9 MB)


def _reject_non_finite(value: object, parts: tuple = (), seen: set[int] | None = None) -> None:
    """A ConfigError naming the first NaN or infinity anywhere in ``value``.

    The schema cannot say "finite". A list or mapping that YAML aliases share is walked once
    (``seen``): an alias bomb costs its text's size.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(
            f"{key_path(parts)}: {value} is not a finite number; "
            "write a finite number (.nan and .inf are never valid)"
        )
    seen = set() if seen is None else seen
    if not isinstance(value, dict | list) or id(value) in seen:
        return
    seen.add(id(value))
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        _reject_non_finite(item, (*parts, key), seen)


def schema_of(schema_path: Path) -> dict:
    """The schema in file ``schema_path``; never modify the result.

    For the packaged config schema, it comes with the studies' parts the registry adds
    (:func:`dpdl.studies.config_schema`).
    """
    if Path(schema_path).resolve() == SCHEMA.resolve():
        return _config_schema()
    return schemas.read(Path(schema_path))


@functools.cache
def _config_schema() -> dict:
    return config_schema()


@functools.cache
def _validator(schema_path: Path) -> jsonschema.protocols.Validator:
    """The validator of a schema file.

    An integer is an int (jsonschema would also take 2.0, which range() refuses).
    """
    schema = {**schema_of(schema_path), "$id": schema_path.as_uri()}  # relative $refs resolve beside it
    return schemas.validator(schema)


def _message(error: jsonschema.ValidationError) -> str:
    """jsonschema's message, its long offending value shortened (3,000 epsilons would fill the screen)."""
    if (
        error.validator == "type"
        and isinstance(error.instance, str)
        and _reads_as_other_than_text(error.instance)
    ):
        return (
            f"{error.message} (text that reads as a number: quoted in a config file, or given in a mapping "
            "on the command line, such as --config wddp={...}, whose values Snakemake's --config passes as "
            "text; write it unquoted in a --configfile)"
        )
    if len(error.message) <= 200:
        return error.message  # and no repr of the instance: it may be a whole config holding an alias bomb
    text = repr(error.instance)  # as long as the message that holds it
    if not error.message.startswith(text):
        return error.message
    short = (
        f"a list of {len(error.instance)} values" if isinstance(error.instance, list) else text[:60] + "..."
    )
    return short + error.message[len(text) :]


def _reads_as_other_than_text(text: str) -> bool:
    """Whether YAML reads ``text`` as a number, boolean, list or mapping.

    If it does, it was quoted somewhere on its way.
    """
    try:
        return not isinstance(yaml.safe_load(text), str | None)
    except yaml.YAMLError:
        return False


def _documented_in(error: jsonschema.ValidationError, schema_path: Path) -> str:
    """The schema file that documents the key of ``error``, as messages name it.

    A study's section has its own file.
    """
    top = next(iter(error.absolute_path), None)
    ref = schema_of(schema_path).get("properties", {}).get(top, {}).get("$ref", "")
    return schemas.shown(schema_path.parent / ref.partition("#")[0] if ref else schema_path)


def _check_relations(config: dict, studies: bool) -> None:
    """Check the rules between keys that the schema cannot state.

    The data section's rules first, then (``studies``) each enabled study's.
    """
    kdd = config["data"]["kdd"]
    if kdd["train_size"] >= kdd["sample_size"]:
        raise ConfigError(
            f"data.kdd.train_size ({kdd['train_size']}) must be smaller than data.kdd.sample_size "
            f"({kdd['sample_size']}): the rest of the sample is the test set"
        )
    lasso = config["data"]["lasso"]
    values = lasso["trials"] * lasso["agents"] * lasso["samples_per_agent"] * lasso["features"]
    if values * 8 > LASSO_MAX_BYTES:  # float64 design matrices of every trial
        raise ConfigError(
            f"data.lasso: trials x agents x samples_per_agent x features = {values:,} values, "
            f"{values * 8 / 2**30:.1f} GiB as float64, "
            f"more than the {LASSO_MAX_BYTES / 2**30:.0f} GiB allowed; lower one of them"
        )
    for name in ALL:
        if studies and name in config["studies"]:
            study_module(name).check_config(config)
    if studies:
        check_reading_cells(config)


def validate_config(
    config: dict, schema_path: Path = SCHEMA, files: Iterable[str | Path] = (), study_relations: bool = True
) -> dict:
    """Check ``config``; return a copy with the schema's defaults filled in.

    In order: ``files`` (the YAML files ``config`` was merged from, re-read strictly because
    Snakemake's loader, like PyYAML's, lets a repeated key silently replace the first), NaN and
    infinity anywhere, the schema (every violation at once, each with its dotted key:
    ``wddp.epsilons[0]: -0.1 is less than or equal to the minimum of 0``), then the relations
    between keys of the data section and (``study_relations``) of every enabled study. Each problem
    is one line. A config assembled from one job's values, whose other keys are defaults, leaves the
    studies' relations out: they would judge keys the job does not use.
    """
    for path in files:
        read_config_file(path)
    _reject_non_finite(config)
    schema_path = Path(schema_path).resolve()
    if not schema_path.is_file():
        raise ConfigError(f"config schema {schemas.shown(schema_path)} not found")
    errors = sorted(
        _validator(schema_path).iter_errors(config), key=lambda e: list(map(str, e.absolute_path))
    )
    if errors:
        problems = "; ".join(f"{key_path(e.absolute_path)}: {_message(e)}" for e in errors)
        documented = ", ".join(sorted({_documented_in(e, schema_path) for e in errors}))
        raise ConfigError(f"invalid configuration: {problems}; see {documented} for what each key accepts")
    config = copy.deepcopy(config)
    schemas.fill_defaults(config, schema_of(schema_path), schema_path.parent)
    _check_relations(config, study_relations)
    return config


def check_key(dotted: str, value: object, option: str) -> None:
    """Raise a one-line :class:`ConfigError` unless the config schema accepts ``value`` at ``dotted``.

    A command-line option that stands for a config key (``dpdl audit --runs`` for ``audit.runs``)
    takes the key's bounds from the schema, so the option and the config cannot drift apart.
    """
    schema, folder = _config_schema(), schemas.FOLDER
    for key in dotted.split("."):
        schema, folder = schemas.resolve_ref(schema, folder)
        schema = schema["properties"][key]
    schema, folder = schemas.resolve_ref(schema, folder)
    error = jsonschema.exceptions.best_match(schemas.validator(schema).iter_errors(value))
    if error is not None:
        raise ConfigError(
            f"{option}: {_message(error)} (the bounds of the config's {dotted}, {schemas.shown(SCHEMA)}); "
            "give a value within them"
        )


def merge_over(base: dict, update: dict) -> dict:
    """``update`` merged over ``base`` key by key, as Snakemake merges config files (its ``update_config``).

    A mapping is merged into the mapping it replaces; any other value (a list included) replaces.
    Neither argument is modified.
    """
    merged = copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_over(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def read_config_file(path: str | Path) -> dict:
    """One config file read strictly (:func:`read_yaml`): a mapping, and no YTE template.

    Snakemake renders a file whose top level sets ``__use_yte__: true`` as a template before the
    build sees it; dpdl's commands read the file as written, so they would read another config:
    such a file is refused everywhere.
    """
    contents = read_yaml(path) or {}
    if not isinstance(contents, dict):
        raise ConfigError(
            f"{path}: a config file holds a mapping of keys (such as 'studies: [dzoa]'), "
            f"not a {type(contents).__name__}; see config/README.md"
        )
    if "__use_yte__" in contents:
        raise ConfigError(
            f"{path}: __use_yte__ makes Snakemake render the file as a YTE template, "
            "which dpdl's commands do not; write the values out and remove __use_yte__"
        )
    return contents


def build_configfiles(path: str | Path) -> list[Path]:
    """The files a build with ``--configfile path`` reads, in Snakemake's order.

    The Snakefile's ``configfile:`` (:data:`BASE_CONFIGFILE`) first, then ``path``; the base is left
    out where this folder has none (dpdl run outside a checkout) or where it is ``path`` itself.
    """
    files = [BASE_CONFIGFILE] if BASE_CONFIGFILE.is_file() else []
    if not files or Path(path).resolve() != BASE_CONFIGFILE.resolve():
        files.append(Path(path))
    return files


def load_config(path: str | Path, schema_path: Path = SCHEMA) -> dict:
    """The config a build run with ``--configfile path`` uses, validated (see :func:`validate_config`).

    One reading for every command: ``config/config.yaml`` (the Snakefile's ``configfile:``), then
    ``path`` merged over it key by key as Snakemake merges them, then the schema's defaults for
    what neither sets. Reading ``path`` alone with defaults would give a key ``path`` leaves out
    the schema's default while the build took ``config/config.yaml``'s value (issue 61).
    """
    files = build_configfiles(path)
    merged: dict = {}
    for file in files:
        merged = merge_over(merged, read_config_file(file))
    return validate_config(merged, schema_path)
