"""The studies. Each module ``dpdl.studies.<study>`` provides the same four things:

- ``add_commands(commands)``: its ``dpdl <study> <step>`` subcommands (run, aggregate, figure,
  claims, ...), which its rule file ``workflow/rules/<study>.smk`` calls;
- ``targets(config, buildable) -> list[str]``: every artifact it promises for ``config``, given
  the set of prepared datasets that can be built here (the default target and ``dpdl check``
  use it);
- ``runs(config, buildable) -> list[str]``: every run artifact among them (the privacy table
  and ``dpdl status`` read them);
- ``CLAIMS``: its :class:`dpdl.claims.Claim` list, judged into ``results/claims/<study>.csv``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

ALL = ("dvp_pvp", "wddp", "dp_iadmm", "dzoa")
IMPLEMENTED: tuple[str, ...] = ("dvp_pvp", "wddp", "dp_iadmm", "dzoa")  # studies with a module here, in data-flow order


def study_module(name: str) -> ModuleType:
    """The module of an implemented study."""
    if name not in IMPLEMENTED:
        raise KeyError(f"study {name!r} is not implemented; implemented: {', '.join(IMPLEMENTED) or 'none'}")
    return importlib.import_module(f"dpdl.studies.{name}")
