"""Entry point for ``python -m dpdl``."""

from dpdl.cli import main

raise SystemExit(main())
