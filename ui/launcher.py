"""The ``voxdesk`` program: the command line of :mod:`voxdesk.cli.main`, plus the window when no command is given."""

from __future__ import annotations

import argparse
import sys

from voxdesk.cli import main as cli
from voxdesk.ui.display import unreachable_display


def _open_window(args: argparse.Namespace) -> int:
    if problem := unreachable_display():  # Qt would abort the process instead
        print(problem, file=sys.stderr)
        return 1
    from voxdesk.ui.desktop import DesktopOptions, run_desktop  # Qt loads only when the window opens

    options = DesktopOptions(engine=args.engine, server=args.server, device=args.device)
    return run_desktop(options, log_level=args.log_level)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``voxdesk`` script."""
    return cli.main(argv, open_window=_open_window)


if __name__ == "__main__":
    sys.exit(main())
