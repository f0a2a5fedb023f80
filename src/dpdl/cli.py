"""The ``dpdl`` entry point (also ``python -m dpdl``): :func:`main` runs one command.

Its arguments are declared in :mod:`dpdl.cli_parser` (whose ``ABOUT`` is what ``dpdl --help`` says of the
tool), what it does is in :mod:`dpdl.cli_commands`. Errors in input print one line and exit with code 1.
"""

from __future__ import annotations

import logging
import sys

from dpdl.cli_parser import build_parser, plain_text
from dpdl.errors import DpdlError

__all__ = ["build_parser", "main", "plain_text"]


def main(argv: list[str] | None = None) -> int:
    """Run one ``dpdl`` command; return the process exit code."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    from dpdl.chain import step

    try:
        with step():  # every file it writes under results/ records the inputs it read (the hash chain)
            return args.command(args) or 0
    except DpdlError as err:
        command = " ".join(filter(None, (args.command_name, getattr(args, "step", None))))
        print(f"dpdl {command}: error: {err}", file=sys.stderr)
        return 1
