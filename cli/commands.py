"""``voxdesk commands check``: the voice command files' mistakes, each with its file and line."""

from __future__ import annotations

import argparse

from voxdesk.app.actions.commands import CommandSource

__all__ = ["add_commands_parser", "run_commands"]


def add_commands_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``commands`` command to ``commands``."""
    parser = commands.add_parser(
        "commands",
        help="check the voice command files",
        description="The voice commands: the defaults and your own commands.toml in the config folder.",
    )
    actions = parser.add_subparsers(dest="commands_command", metavar="ACTION", required=True)
    actions.add_parser(
        "check", help="list each mistake in the command files as FILE:LINE: what is wrong (exit 1 if any)"
    )


def run_commands(args: argparse.Namespace) -> int:
    """Run ``voxdesk commands check``; 1 when a command file has a problem."""
    source = CommandSource(on_warning=lambda _: None)  # printed below, not logged
    for problem in source.problems:
        print(problem)
    yours = source.user_path if source.user_path.exists() else f"{source.user_path} (none)"
    if source.problems:
        print(f"{len(source.problems)} problem(s); {len(source.commands())} commands load (yours: {yours})")
        return 1
    print(f"{len(source.commands())} commands, no problems (yours: {yours})")
    return 0
