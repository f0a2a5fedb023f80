"""What every study shares: its paper's reference, its readings' type, number labels, ``--settings`` parsing.

Each study's rule file passes the config values a job depends on as one JSON ``--settings``
argument (so a change of one of them reruns the job); :func:`parse_settings` reads it back and
checks its values against the study's config schema, so a job run by hand with a bad value fails
with one clear error. :func:`study_steps` registers ``dpdl <study>`` and returns the function that
adds its steps.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dpdl import schemas
from dpdl.errors import ConfigError
from dpdl.validation import get_dotted, parse_json_object, require_exact_keys

Step = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]
CLAIMS_DIR = Path("results/claims")


def claims_path(study: str, ext: str) -> str:
    """Path of a study's scorecard, written by its ``<study>_claims`` rule: ``csv`` or ``md``."""
    return str(CLAIMS_DIR / f"{study}.{ext}")


DEFAULT = "default"  # the reading that is the config as given
READING_SEPARATOR = "__"  # joins a study and a reading in one name (a Snakemake input name, a --cards key)


@dataclass(frozen=True)
class PaperReference:
    """The original paper: its authors, title, where it appeared and how to find it (text, not a result)."""

    authors: str
    title: str
    venue: str
    locator: str  # an arXiv id or a DOI, or "" where the paper has none to cite


@dataclass(frozen=True)
class Reading:
    """A named set of values for settings the paper leaves open.

    ``switches`` are keys of the study's config section and their values (empty for the default,
    which is the config as given). ``why`` quotes or cites the paper's text that makes this a
    reasonable reading; ``post_hoc`` marks a setting chosen after a verdict was seen.
    """

    name: str
    why: str
    switches: Mapping[str, object] = field(default_factory=dict)
    post_hoc: bool = False

    def __post_init__(self) -> None:
        if not self.name.replace("_", "").isalnum() or READING_SEPARATOR in self.name:
            raise ValueError(
                f"reading name {self.name!r} must be letters, digits and single "
                "underscores (it names a folder)"
            )
        if not self.why.strip():
            raise ValueError(f"reading {self.name!r} needs the paper's text or reason behind it")


@dataclass(frozen=True)
class DataDeviation:
    """A declared departure from the paper's data: the claims judged on the part of it that is here.

    Where the paper's data cannot be had but part of it can, its claims may be judged on that part as a
    deviation declared before its results: a build of one of ``configfiles`` (its batches, the smallest
    first, each with the same data and settings but a declared seed pilot's seeds), in a folder of its
    own, and ``dpdl publish --deviation <name>`` adds that build's scorecard, per-seed tables, cards,
    tables and figures to the study's snapshot (``deviations/<name>/``, replacing an earlier batch's).
    Its verdicts are shown beside the default's and never counted with them (issue 62). ``why`` says
    what departs from the paper and where the study's page says what it can decide.
    """

    name: str
    why: str
    configfiles: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.name.replace("_", "").isalnum() or READING_SEPARATOR in self.name:
            raise ValueError(
                f"data deviation name {self.name!r} must be letters, digits and single underscores"
            )
        if (
            not self.why.strip()
            or not self.configfiles
            or not all(f.startswith("config/") for f in self.configfiles)
        ):
            raise ValueError(f"data deviation {self.name!r} needs its reason and config files under config/")


def format_number(value: float | None) -> str:
    """A grid value as it appears in paths and labels: 0.05, 1, 1000; ``inf`` for None or infinity."""
    return "inf" if value is None or math.isinf(value) else f"{value:g}"


def check_labels(section: Mapping, study: str, *groups: tuple[str, ...]) -> None:
    """Refuse two values that :func:`format_number` writes alike within a group of list keys.

    The values of a group's keys name one kind of folder (``eps0.05``): two written alike would write one path
    and be counted twice.

    A group lists keys of ``section`` (dotted for nested ones, ``rho_selection.exponents``) that share
    their folders, such as the epsilon-bar lists that all name ``eps<value>``.
    """
    for keys in groups:
        seen: dict[str, tuple[str, float]] = {}
        for key in keys:
            for value in get_dotted(section, key):  # type: ignore[union-attr]
                label = format_number(value)
                first_key, first = seen.setdefault(label, (key, value))
                if first != value:
                    raise ConfigError(
                        f"{study}.{first_key} value {first!r} and {study}.{key} value {value!r} are both "
                        f"written {label!r} in paths (6 significant digits), so they would share one folder; "
                        "make them differ within those digits"
                    )


def parse_settings(text: str, keys: Iterable[str], study: str, made_by: str) -> dict:
    """Parse ``--settings``: a JSON object with exactly ``keys``, as ``made_by`` writes it.

    Each value whose key is a key of the study's config section must satisfy that key's schema.
    """
    hint = f"pass {made_by} (see {schemas.shown(schemas.path(f'{study}.schema.yaml'))})"
    settings = require_exact_keys(parse_json_object(text, "--settings"), keys, "--settings", hint)
    errors = _value_errors(settings, study)
    if errors:
        raise ConfigError(f"--settings: {'; '.join(errors)}; {hint}")
    return settings


def _value_errors(settings: dict, study: str) -> list[str]:
    """Each way the values of ``settings`` break the study's schema; integers are ints, numbers finite."""
    path = schemas.path(f"{study}.schema.yaml")
    section = schemas.read(path)
    properties = {key: schema for key, schema in section["properties"].items() if key in settings}
    schema = {"$schema": section["$schema"], "$id": path.as_uri(), "properties": properties}
    validator = schemas.validator(schema, finite_numbers=True)
    errors = sorted(validator.iter_errors(settings), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors]


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
