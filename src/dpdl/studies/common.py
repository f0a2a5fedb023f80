"""What every study's commands share: number labels, ``--settings`` parsing, the step skeleton.

Each study's rule file passes the config values a job depends on as one JSON ``--settings``
argument (so a change of one of them reruns the job); :func:`parse_settings` reads it back with
one clear error. :func:`study_steps` registers ``dpdl <study>`` and returns the function that adds
its steps.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable

from dpdl.config import parse_json_object, require_exact_keys
from dpdl.errors import ConfigError

Step = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def format_number(value: float | None) -> str:
    """A grid value as it appears in paths and labels: 0.05, 1, 1000; ``inf`` for None or infinity."""
    return "inf" if value is None or math.isinf(value) else f"{value:g}"


def parse_settings(text: str, keys: Iterable[str], study: str, made_by: str) -> dict:
    """Parse ``--settings``: a JSON object with exactly ``keys``, as ``made_by`` writes it."""
    hint = f"pass {made_by} (see workflow/schemas/{study}.schema.yaml)"
    return require_exact_keys(parse_json_object(text, "--settings"), keys, "--settings", hint)


def parse_named_paths(items: Iterable[str], option: str = "--aggregates") -> dict[str, str]:
    """``NAME=PATH`` items as a dict, with an error naming the malformed item."""
    named = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not (sep and name and path):
            raise ConfigError(f"{option} takes NAME=PATH items; got {item!r}")
        named[name] = path
    return named


def study_steps(commands: argparse._SubParsersAction, study: str, help_text: str) -> Step:
    """Register ``dpdl <study>``; return ``step(name, function, help)``, which adds one step to it."""
    parser = commands.add_parser(study, help=help_text, description=help_text)
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")

    def step(name: str, function: Callable[[argparse.Namespace], int], text: str) -> argparse.ArgumentParser:
        sub = steps.add_parser(name, help=text, description=text)
        sub.set_defaults(command=function)
        return sub

    return step
