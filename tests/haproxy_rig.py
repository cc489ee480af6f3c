"""A real HAProxy (the Debian package) on loopback in front of ``voxdesk serve`` replicas, with
a config generated for the test: WebSocket upgrades, least connections, ``/health`` checks
every 100 ms, and retries elsewhere when a replica refuses or is gone."""

from __future__ import annotations

import contextlib
import csv
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.vllm_support import free_port

CONFIG = """\
global
    maxconn 256

defaults
    mode http
    timeout connect 1s
    timeout client 60s
    timeout server 60s
    timeout tunnel 300s
    retries 3
    retry-on conn-failure empty-response 503
    option redispatch 1

frontend realtime
    bind 127.0.0.1:{port}
    default_backend voxdesk

frontend stats
    bind 127.0.0.1:{stats_port}
    stats enable
    stats uri /stats

backend voxdesk
    balance leastconn
    option httpchk GET /health
    http-check expect status 200
    default-server check inter 100ms fall 2 rise 1
{servers}
"""


class HAProxy:
    """HAProxy running in the foreground on ``port``, its stats on ``stats_port``."""

    def __init__(self, replica_ports: list[int], workdir: Path) -> None:
        self.port, self.stats_port = free_port(), free_port()
        self.names = {port: f"replica{i}" for i, port in enumerate(replica_ports)}
        servers = "\n".join(f"    server {name} 127.0.0.1:{port}" for port, name in self.names.items())
        self.config = workdir / "haproxy.cfg"
        self.config.write_text(CONFIG.format(port=self.port, stats_port=self.stats_port, servers=servers))
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until every replica is UP."""
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        self.process = subprocess.Popen([haproxy, "-db", "-f", str(self.config)], stderr=subprocess.DEVNULL)
        self.wait_until(lambda states: set(states.values()) == {"UP"}, "every replica UP")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def states(self) -> dict[int, str]:
        """Each replica's port and HAProxy's view of it (UP, DOWN, ...)."""
        url = f"http://127.0.0.1:{self.stats_port}/stats;csv"
        with urllib.request.urlopen(url, timeout=5) as response:
            rows = csv.DictReader(response.read().decode().lstrip("# ").splitlines())
            by_name = {row["svname"]: row["status"] for row in rows if row["pxname"] == "voxdesk"}
        return {port: by_name[name].split()[0] for port, name in self.names.items()}

    def wait_until(
        self, condition: Callable[[dict[int, str]], bool], what: str, timeout: float = 20.0
    ) -> dict[int, str]:
        """Poll the stats until ``condition(states)`` holds; the states then."""
        deadline = time.monotonic() + timeout
        states: dict[int, str] = {}
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                states = self.states()
                if condition(states):
                    return states
            time.sleep(0.05)
        raise AssertionError(f"HAProxy never had {what}: {states}")


@contextlib.contextmanager
def running_haproxy(replica_ports: list[int], workdir: Path) -> Iterator[HAProxy]:
    """``with running_haproxy(ports, tmp_path) as proxy:`` started with every replica UP, then stopped."""
    proxy = HAProxy(replica_ports, workdir)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()
