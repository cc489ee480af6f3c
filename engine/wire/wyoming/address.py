"""A Wyoming address: the ``tcp://HOST:PORT`` URI that servers listen on and clients dial."""

from __future__ import annotations

from urllib.parse import urlsplit

from voxdesk.engine.errors import VoxdeskError

__all__ = ["DEFAULT_PORT", "WyomingAddressError", "parse_tcp_uri"]

DEFAULT_PORT = 10300
"""wyoming-faster-whisper's documented port (§4)."""


class WyomingAddressError(VoxdeskError, ValueError):
    """A Wyoming address that is not ``tcp://HOST:PORT``."""


def parse_tcp_uri(uri: str) -> tuple[str, int]:
    """``tcp://HOST:PORT`` as ``(host, port)``; the port defaults to 10300.

    Raises:
        WyomingAddressError: another scheme, no host, or a bad port.
    """
    parts = urlsplit(uri)
    if parts.scheme != "tcp" or not parts.hostname:
        raise WyomingAddressError(f"{uri!r} is not a Wyoming address: use tcp://HOST:PORT, e.g. tcp://127.0.0.1:10300")
    try:
        port = parts.port
    except ValueError:
        raise WyomingAddressError(f"{uri!r} has a bad port") from None
    return parts.hostname, DEFAULT_PORT if port is None else port
