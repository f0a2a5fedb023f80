"""Strict reading and checking of what a user gives: command-line JSON objects, YAML files, key sets.

The strict schema validator is :func:`dpdl.schemas.validator`.

The lowest layer of configuration: :mod:`dpdl.config` (the workflow config), the studies' settings
checks and the data preparation all build on it, and it imports nothing else of dpdl but errors.
Every problem is a :class:`ConfigError` of one line.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable
from pathlib import Path

import yaml

from dpdl.errors import ConfigError


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


class _StrictConstruction:
    """PyYAML's safe construction, except that a key repeated in one mapping is an error, not an override."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        first_line: dict = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor`: its keys are meant to be overridden
            key, mark = self.construct_object(key_node, deep=deep), key_node.start_mark
            if not isinstance(key, Hashable):
                continue  # the base class reports it
            if key in first_line:
                raise ConfigError(
                    f"{mark.name} line {mark.line + 1}: duplicate key {key!r} "
                    f"(first on line {first_line[key]}); keep one of them"
                )
            first_line[key] = mark.line + 1
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """An integer, refusing YAML 1.1's readings that surprise: ``010`` is octal 8 and ``1:30`` is 90."""
        text = str(node.value).replace("_", "")
        digits = text.lstrip("+-")
        if ":" in digits or (len(digits) > 1 and digits[0] == "0" and digits[1:2] not in ("x", "b")):
            mark = node.start_mark
            raise ConfigError(
                f"{mark.name} line {mark.line + 1}: {node.value} reads as "
                f"{super().construct_yaml_int(node)} in YAML (a leading 0 is octal, a colon base 60); "
                "write the number without them, or quote it if it is text"
            )
        return super().construct_yaml_int(node)


class _StrictLoader(_StrictConstruction, yaml.SafeLoader):
    """The strict safe loader in Python: its syntax errors name the offending character."""


class _FastStrictLoader(_StrictConstruction, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The strict safe loader on libyaml's parser where PyYAML was built with it.

    It is 10 times faster on the schemas, which every Snakemake start reads; :func:`read_yaml`
    parses a file it rejects again with :class:`_StrictLoader` for the clearer message.
    """


for _loader in (_StrictLoader, _FastStrictLoader):
    _loader.add_constructor("tag:yaml.org,2002:int", _StrictConstruction.construct_yaml_int)


def _load(path: str | Path, loader: type) -> object:
    with open(path, "rb") as stream:  # bytes: YAML's reader reports undecodable input as a YAMLError
        return yaml.load(stream, Loader=loader)  # safe loaders: no arbitrary objects


def read_yaml(path: str | Path) -> object:
    """Read a YAML file strictly.

    A syntax error or a repeated key is a ConfigError naming the file and line; so is a file that
    cannot be read and an alias that contains itself.
    """
    try:
        try:
            tree = _load(path, _FastStrictLoader)
        except yaml.YAMLError:
            tree = _load(path, _StrictLoader)  # rejected: parsed again for Python's clearer message
    except FileNotFoundError:
        raise ConfigError(f"config file {path} not found") from None
    except OSError as err:  # a folder, no permission
        raise ConfigError(
            f"config file {path} cannot be read ({err.strerror}); give a readable YAML file"
        ) from None
    except yaml.MarkedYAMLError as err:
        what = ", ".join(filter(None, (err.context, err.problem)))
        raise ConfigError(
            f"{path} line {err.problem_mark.line + 1}: not valid YAML: {what}; fix the syntax there"
        ) from None
    except yaml.YAMLError as err:  # a character YAML does not allow: no line to point at
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(err).split())}") from None
    _reject_cycles(tree, (), set(), set(), path)
    values = _expanded_size(tree, {})
    if values > MAX_YAML_VALUES:
        raise ConfigError(
            f"{path}: its YAML aliases (*name) expand it to {values:,} values, "
            f"more than the {MAX_YAML_VALUES:,} a config or schema file may hold; "
            "write the values out instead of repeating aliases"
        )
    return tree


MAX_YAML_VALUES = 100_000
"""The most values (scalars, lists and mappings, each alias counted as what it repeats) one YAML file
read by :func:`read_yaml` may expand to: the largest shipped file holds a few thousand; an alias bomb
of 2 KB holds billions, and every walk over it (the schema, a merge, Snakemake's) hangs."""


def _expanded_size(node: object, sizes: dict[int, int]) -> int:
    """How many values ``node`` holds once every alias is written out.

    Each shared node is counted once per use but walked once (``sizes``), so a bomb costs what its
    text does. Cycles are refused before.
    """
    if not isinstance(node, dict | list):
        return 1
    if id(node) not in sizes:
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        sizes[id(node)] = 1 + sum(_expanded_size(child, sizes) for child in children)
    return sizes[id(node)]


def _reject_cycles(node: object, keys: tuple, on_path: set[int], seen: set[int], path: str | Path) -> None:
    """Refuse a mapping or list that contains itself (``epsilons: &r [0.15, *r]``), naming its key.

    An alias used many times is walked once (``seen``), so an alias bomb costs what its text does.
    """
    if not isinstance(node, dict | list) or id(node) in seen:
        return
    if id(node) in on_path:
        raise ConfigError(
            f"{path}: {key_path(keys)} is an alias of the list or mapping that holds it; write the values out"
        )
    on_path.add(id(node))
    for key, child in node.items() if isinstance(node, dict) else enumerate(node):
        _reject_cycles(child, (*keys, key), on_path, seen, path)
    on_path.discard(id(node))
    seen.add(id(node))


def get_dotted(tree: dict, dotted: str) -> object:
    """The value of ``tree`` at a dotted key (``data.lasso.trials``); a KeyError where it is absent."""
    value: object = tree
    for part in dotted.split("."):
        value = value[part]  # type: ignore[index]
    return value


def set_dotted(tree: dict, dotted: str, value: object) -> dict:
    """``tree`` with its dotted key (``data.lasso.trials``) set to ``value``.

    Inner mappings are made as needed.
    """
    *parents, last = dotted.split(".")
    target = tree
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value
    return tree


def key_path(parts: Iterable) -> str:
    """``wddp.epsilons[0]`` from ``("wddp", "epsilons", 0)``."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".") or "(top level)"
