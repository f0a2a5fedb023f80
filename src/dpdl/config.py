"""Loading and validating the workflow configuration against ``workflow/schemas/config.schema.yaml``."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import jsonschema
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from dpdl.errors import ConfigError

SCHEMA = Path("workflow/schemas/config.schema.yaml")


def parse_json_object(text: str, option: str) -> dict:
    """Parse a JSON object given on the command line, with an error naming the option."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"{option} is not valid JSON ({err}): {text!r}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{option} must be a JSON object; got {text!r}")
    return value


def require_exact_keys(values: dict, expected, what: str, hint: str) -> dict:
    """Return ``values`` if its keys are exactly ``expected``; else a ConfigError naming both differences."""
    missing, unknown = set(expected) - values.keys(), values.keys() - set(expected)
    if missing or unknown:
        raise ConfigError(f"{what}: missing {sorted(missing)}, unknown {sorted(unknown)}; {hint}")
    return values


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path]
    return "".join(parts).lstrip(".") or "(top level)"


def _retrieve_local(uri: str) -> Resource:
    """Load a schema file that another schema references by a relative path."""
    path = Path(url2pathname(urlparse(uri).path))
    return Resource.from_contents(yaml.safe_load(path.read_text(encoding="utf-8")), default_specification=DRAFT202012)


def _resolve(schema: dict, folder: Path) -> tuple[dict, Path]:
    """Follow a ``$ref`` to a schema file beside ``folder`` (with an optional ``#/json/pointer``)."""
    while "$ref" in schema:
        file_name, _, pointer = schema["$ref"].partition("#")
        if file_name:
            folder = (folder / file_name).parent
            schema = yaml.safe_load((folder / Path(file_name).name).read_text(encoding="utf-8"))
        for key in filter(None, pointer.split("/")):
            schema = schema[key]
    return schema, folder


def _fill_defaults(instance: dict, schema: dict, folder: Path) -> None:
    """Set every missing key that has a ``default``, descending into objects and ``$ref`` files."""
    schema, folder = _resolve(schema, folder)
    for key, subschema in schema.get("properties", {}).items():
        if key not in instance and "default" in subschema:
            instance[key] = copy.deepcopy(subschema["default"])
        if isinstance(instance.get(key), dict):
            _fill_defaults(instance[key], subschema, folder)


def validate_config(config: dict, schema_path: Path = SCHEMA) -> dict:
    """Check ``config`` against the schema and the cross-key rules; return it with defaults filled in.

    Every violation is reported with its dotted key (``wddp.epsilons[0]: -0.1 is less than or equal
    to the minimum of 0``). Defaults are set by ``snakemake.utils.validate``, as in the workflow.
    """
    from snakemake.utils import validate  # imported here: snakemake is heavy and only needed once

    schema_path = Path(os.path.relpath(schema_path))
    if not schema_path.is_file():
        raise ConfigError(f"config schema {schema_path} not found; run dpdl from the project root")
    schema = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    schema["$id"] = schema_path.resolve().as_uri()  # relative $refs resolve beside the schema file
    registry = Registry(retrieve=_retrieve_local)
    validator = jsonschema.validators.validator_for(schema)(schema, registry=registry)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = [f"  {_key_path(e)}: {e.message}" for e in errors]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines) + f"\nSee {schema_path} for every key.")
    config = copy.deepcopy(config)
    _fill_defaults(config, schema, schema_path.parent)
    validate(config, str(schema_path.resolve()), set_default=True)
    kdd = config["data"]["kdd"]
    if kdd["train_size"] >= kdd["sample_size"]:
        raise ConfigError(
            f"data.kdd.train_size ({kdd['train_size']}) must be smaller than data.kdd.sample_size "
            f"({kdd['sample_size']}): the rest of the sample is the test set"
        )
    return config


def load_config(path: str | Path, schema_path: Path = SCHEMA) -> dict:
    """Read a YAML config file and validate it (see :func:`validate_config`)."""
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file {path} not found") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {path} is not valid YAML: {err}") from None
    return validate_config(config, schema_path)
