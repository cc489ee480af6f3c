"""``--server``: one server URL, several separated by commas, or the option repeated."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

__all__ = ["ServerUrls"]


class ServerUrls(argparse.Action):
    """Collects every ``--server`` value into one comma-separated string, in the order given:
    the remote engine tries the servers in that order and fails over to the next."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        earlier = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, f"{earlier},{values}" if earlier else str(values))
