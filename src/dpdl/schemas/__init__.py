"""The package's schemas, found with :mod:`importlib.resources` beside this module.

An installed wheel thus reads them as a checkout does, from any working directory.

- ``config.schema.yaml``: the workflow config; it references ``common.schema.yaml`` and one
  ``<study>.schema.yaml`` per study by relative ``$ref`` (resolved beside the file that names it).
- ``card.schema.json``, ``run.schema.json``: a prepared dataset's card, a run's provenance.

Every reader goes through here: :func:`path` finds a schema, :func:`read` loads one (YAML or
JSON, once), :func:`registry` resolves the references between them, :func:`validator` is the one
way a schema is checked (strict for what a user gives), and a schema's ``default`` values are read
one way, :func:`fill_defaults` (what a config's missing keys become; :func:`defaults` of one
section).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
from importlib import resources
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from dpdl.errors import ConfigError
from dpdl.validation import read_yaml

FOLDER = Path(
    str(resources.files(__name__))
)  # src/dpdl/schemas in a checkout, <site-packages>/dpdl/schemas installed
CONFIG = FOLDER / "config.schema.yaml"


def path(name: str) -> Path:
    """The file of the packaged schema ``name``.

    ``name`` is a file name such as ``config.schema.yaml``, ``wddp.schema.yaml`` or ``run.schema.json``.
    """
    found = FOLDER / name
    if not found.is_file():
        raise ConfigError(
            f"schema {name} not found in {FOLDER}; reinstall dpdl (its schemas ship inside the package)"
        )
    return found


def shown(file: str | Path) -> str:
    """A schema file as messages name it.

    The name is relative to the working directory where the file lies below it (a checkout's
    ``src/dpdl/schemas/...``), else absolute (an installed package's).
    """
    file = Path(file).absolute()
    try:
        return file.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return os.path.normpath(file)


@functools.cache
def read(file: Path) -> dict:
    """A schema file's contents, read once (never modify the result).

    A ``.json`` file is read as JSON, any other as YAML, strictly.
    """
    if file.suffix == ".json":
        return json.loads(file.read_text(encoding="utf-8"))
    return read_yaml(file)  # type: ignore[return-value]


def load(name: str) -> dict:
    """The contents of the packaged schema ``name`` (see :func:`read`)."""
    return read(path(name))


def _retrieve_local(uri: str) -> Resource:
    """Load a schema file that another schema references by a relative path.

    Its ``$schema`` is left out: jsonschema would check that file with its own validator class, not
    with the caller's strict one.
    """
    contents = read(Path(url2pathname(urlparse(uri).path)))
    return Resource.from_contents({k: v for k, v in contents.items() if k != "$schema"}, DRAFT202012)


def registry() -> Registry:
    """The registry a validator resolves a ``$ref`` to another schema file with.

    A schema's ``$id`` is its file's URI, so a relative reference resolves beside it.
    """
    return Registry(retrieve=_retrieve_local)  # type: ignore[call-arg]


def validator(
    schema: dict, *, strict: bool = True, finite_numbers: bool = False
) -> jsonschema.protocols.Validator:
    """The validator of ``schema``, its references resolved (:func:`registry`).

    ``strict`` (what a user gives: a config, a job's settings): an integer is an int (not 2.0, not
    True) and, with ``finite_numbers``, a number is finite; else jsonschema's own types (what dpdl
    wrote: cards, runs, manifests).
    """
    base = jsonschema.validators.validator_for(schema)
    if strict:
        checks = {"integer": lambda _, value: isinstance(value, int) and not isinstance(value, bool)}
        if finite_numbers:
            checks["number"] = lambda _, value: (
                isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            )
        base = jsonschema.validators.extend(base, type_checker=base.TYPE_CHECKER.redefine_many(checks))
    return base(schema, registry=registry())


def resolve_ref(schema: dict, folder: Path) -> tuple[dict, Path]:
    """Follow a ``$ref`` to a schema file beside ``folder`` (with an optional ``#/json/pointer``)."""
    while "$ref" in schema:
        file_name, _, pointer = schema["$ref"].partition("#")
        if file_name:
            folder = (folder / file_name).parent
            schema = read(folder / Path(file_name).name)
        for key in filter(None, pointer.split("/")):
            schema = schema[key]
    return schema, folder


def fill_defaults(instance: dict, schema: dict, folder: Path = FOLDER) -> dict:
    """Set every missing key of ``instance`` that has a ``default``; return ``instance``.

    The walk descends into objects and ``$ref`` files.
    """
    schema, folder = resolve_ref(schema, folder)
    for key, subschema in schema.get("properties", {}).items():
        if key not in instance and "default" in subschema:
            instance[key] = copy.deepcopy(subschema["default"])
        if isinstance(instance.get(key), dict):
            fill_defaults(instance[key], subschema, folder)
    return instance


def defaults(name: str, *section: str) -> dict:
    """What a config that leaves out every key of a section takes; a new dict each call.

    The defaults of the packaged schema ``name``, or of its nested ``section``
    (``defaults("config.schema.yaml", "data", "lasso")``), filled as validation fills them.
    """
    schema, folder = load(name), FOLDER
    for key in section:
        schema, folder = resolve_ref(schema, folder)
        schema = schema["properties"][key]
    return fill_defaults({}, schema, folder)
