"""How much the fuzz and disconnect tests do: a fast form by default (``make test``), the full
counts from the environment (``make soak``)."""

from __future__ import annotations

import os

__all__ = ["DISCONNECTS", "FRAMES", "SEED", "SERVER_CONNECTIONS"]


def _count(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        count = int(value) if value else default
    except ValueError:
        raise SystemExit(f"{name}={value!r}: give a whole number") from None
    if count < 1:
        raise SystemExit(f"{name}={value!r}: give a whole number of at least 1")
    return count


FRAMES = _count("VOXDESK_FUZZ_FRAMES", 3_000)
"""Fuzzed frames fed to each sans-I/O core (``make soak``: 100,000)."""

SERVER_CONNECTIONS = _count("VOXDESK_FUZZ_CONNECTIONS", 20)
"""Connections per dialect that send fuzzed frames to a real server (``make soak``: 500)."""

DISCONNECTS = _count("VOXDESK_DISCONNECTS", 50)
"""Abrupt disconnects per dialect against a real server, spread over its moments (``make soak``: 1,000)."""

SEED = _count("VOXDESK_FUZZ_SEED", 20_261_201)
"""The seed of every generator; the same seed gives the same frames and cuts."""
