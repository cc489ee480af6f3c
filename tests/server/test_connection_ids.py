"""Each connection's log lines carry an id of its own (``conn <id>:``), however many came."""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.server import WyomingServer

CONNECTIONS = 1000  # two-byte random ids collide among these all but once in 2,000 runs
BATCH = 50  # connections open at once
INFO = ServiceInfo(AsrModel("fake", ("en",)), "0", {"name": "test", "url": ""}).to_event()


async def visit(port: int) -> None:
    """Connect and leave."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.close()
    await writer.wait_closed()


def test_a_thousand_connections_are_logged_under_a_thousand_ids(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        server = WyomingServer(FakeTickEngine(), INFO, WyomingConfig(port=0))  # a FAKE engine: no audio is sent
        await server.start()
        try:
            for _ in range(CONNECTIONS // BATCH):
                await asyncio.gather(*(visit(server.port) for _ in range(BATCH)))
            async with asyncio.timeout(30):
                while sum("closed after" in record.getMessage() for record in caplog.records) < CONNECTIONS:
                    await asyncio.sleep(0.05)  # polling with a deadline: until the server logged every close
        finally:
            await server.shutdown()

    caplog.set_level(logging.INFO, logger="voxdesk.server")
    asyncio.run(scenario())
    opened = re.findall(r"conn (\S+): opened from", caplog.text)
    assert len(opened) == CONNECTIONS
    assert len(set(opened)) == CONNECTIONS, f"{CONNECTIONS - len(set(opened))} ids were another connection's too"
