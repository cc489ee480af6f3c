"""A real TCP proxy on loopback in front of a real server, which a test can make go silent: it
keeps accepting connections and passing the client's bytes on, but stops passing back what the
server sends (all of it, or all after the HTTP handshake's answer). To the client it is a
server that takes the connection and then never answers."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from typing import Any

from tests.tcp_proxy import CuttableProxy

_END_OF_HEADERS = b"\r\n\r\n"


class Silence(enum.Enum):
    NONE = "none"  # everything passes: the server answers
    ALL = "all"  # nothing the server sends passes, on open connections and new ones
    AFTER_HANDSHAKE = "after handshake"  # a new connection gets the HTTP handshake's answer, then nothing


class SilencingProxy(CuttableProxy):
    """Forwards 127.0.0.1:<port> to a target port; :attr:`silence` says what of the server's answer passes."""

    def __init__(self, target_port: int) -> None:
        super().__init__(target_port)
        self.silence = Silence.NONE
        self.connections = 0  # accepted so far
        self._pairs: set[asyncio.Task[Any]] = set()

    @property
    def url_base(self) -> str:
        """``127.0.0.1:<port>``."""
        return f"127.0.0.1:{self.port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        if self._pairs:
            await asyncio.wait(set(self._pairs))
        await self._server.wait_closed()

    async def _pair(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        pair = asyncio.current_task()
        assert pair is not None
        self._pairs.add(pair)
        pair.add_done_callback(self._pairs.discard)
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_writer.transport.abort()
            return
        self._writers |= {client_writer, server_writer}
        handshake_only = self.silence == Silence.AFTER_HANDSHAKE
        await asyncio.gather(
            self._pipe(client_reader, server_writer), self._answer(server_reader, client_writer, handshake_only)
        )

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, handshake_only: bool) -> None:
        """The server's bytes to the client, as far as :attr:`silence` lets them through."""
        seen = b""  # of the handshake's answer, up to its end
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                if handshake_only:
                    data, seen = _within_headers(seen, data)
                elif self.silence != Silence.NONE:
                    data = b""
                if data:
                    writer.write(data)
                    await writer.drain()
        writer.transport.abort()
        self._writers.discard(writer)


def _within_headers(seen: bytes, data: bytes) -> tuple[bytes, bytes]:
    """What of ``data`` still belongs to the HTTP headers after ``seen``, and the headers seen then."""
    if seen.endswith(_END_OF_HEADERS):
        return b"", seen
    headers = seen + data
    end = headers.find(_END_OF_HEADERS)
    if end < 0:
        return data, headers
    end += len(_END_OF_HEADERS)
    return data[: end - len(seen)], headers[:end]
