"""How a message prints a command it suggests: in the form the user's setup runs it.

The README installs with uv, where ``snakemake`` and ``dpdl`` are not on PATH: they run as
``uv run snakemake ...`` and ``uv run dpdl ...``. In an activated environment (pip, conda, or
``source .venv/bin/activate``) the plain form is the one that works. The rule: ``uv run`` puts
the environment variable ``UV`` (the path of the uv binary) into the environment of the command
it runs, and every child (a Snakemake job, a ``dpdl`` step) inherits it; so ``UV`` set means the
user typed ``uv run`` and the suggestion gets the same prefix, otherwise it is printed plain.
An activated ``.venv`` with uv installed is deliberately not enough: the user runs the plain form
there. Every message that suggests a ``snakemake`` or ``dpdl`` command formats it with
:func:`command`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

UV_ENV = "UV"
UV_PREFIX = "uv run "


def under_uv() -> bool:
    """Whether this process runs under ``uv run`` (``UV`` set and not empty)."""
    return bool(os.environ.get(UV_ENV))


def command(line: str, env: Mapping[str, str] | None = None) -> str:
    """``line`` (``snakemake ...`` or ``dpdl ...``) as the user runs it, after ``NAME=value`` assignments.

    ``command("snakemake --cores 2", {"DPDL_DATA_MIRROR": "<folder>"})`` is
    ``DPDL_DATA_MIRROR=<folder> uv run snakemake --cores 2`` under uv, without ``uv run`` elsewhere.
    """
    assignments = "".join(f"{name}={value} " for name, value in (env or {}).items())
    return f"{assignments}{UV_PREFIX if under_uv() else ''}{line}"
