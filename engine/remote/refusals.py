"""How the WebSocket client engines (the vLLM dialect's and OpenAI Realtime's) tell a refused
API key, which no other server or retry answers differently, from a lost server, which the
failover replaces with the next one."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.failover import ServerLost

__all__ = ["REFUSED_KEY", "KeyRefused", "refused_or_lost"]

REFUSED_KEY = {401, 403}  # HTTP statuses no other server or retry answers differently


class KeyRefused(EngineUnavailable):
    """The server refused the API key (HTTP 401 or 403); the message says which server."""


@contextlib.contextmanager
def refused_or_lost(refusal: Callable[[InvalidStatus], str], unreachable: str = "") -> Iterator[None]:
    """Around a connection and its use: a refused key raises :class:`KeyRefused` with
    ``refusal``'s message; any other refusal, an unreachable server or a dropped connection
    raises :class:`ServerLost` (its message after ``unreachable``, when given)."""
    try:
        yield
    except InvalidStatus as refused:
        if refused.response.status_code in REFUSED_KEY:
            raise KeyRefused(refusal(refused)) from refused
        raise ServerLost(refusal(refused)) from refused
    except (ConnectionClosed, OSError, InvalidHandshake, InvalidURI, TimeoutError) as lost:
        raise ServerLost(f"{unreachable}: {lost}" if unreachable else str(lost)) from lost
