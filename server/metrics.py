"""Prometheus metrics of the realtime server: vLLM's ``vllm:websocket_*`` names plus Voxdesk's."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["CONTENT_TYPE", "RealtimeMetrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_DURATION_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)  # vLLM's (docs/realtime-protocol.md §10)
_LATENCY_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10)


class RealtimeMetrics:
    """One registry per server, so several servers in one process keep separate counts."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.connections_active = Gauge(
            "vllm:websocket_connections_active", "Open WebSocket connections", registry=self.registry
        )
        self.connections_total = Counter(
            "vllm:websocket_connections", "WebSocket connections accepted", registry=self.registry
        )
        self.connection_duration = Histogram(
            "vllm:websocket_connection_duration_seconds",
            "How long WebSocket connections stayed open",
            buckets=_DURATION_BUCKETS,
            registry=self.registry,
        )
        self.sessions_active = Gauge(
            "voxdesk_realtime_sessions_active", "Engine sessions (generations) running", registry=self.registry
        )
        self.audio_seconds = Counter(
            "voxdesk_realtime_audio_seconds_received", "Seconds of audio received", registry=self.registry
        )
        self.first_delta_latency = Histogram(
            "voxdesk_realtime_first_delta_latency_seconds",
            "From receiving the audio a generation's first non-empty delta refers to, to sending it",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.engine_queue = Histogram(
            "voxdesk_realtime_engine_queue_seconds",
            "Per utterance, how long its decodes waited behind other sessions' for the engine (built-in engine)",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.tasks = Gauge(
            "voxdesk_asyncio_tasks", "asyncio tasks alive on the server's event loop", registry=self.registry
        )
        self.tasks.set_function(_loop_tasks)  # counted when scraped: a leak shows as a rising line
        self.refused = Counter(
            "voxdesk_realtime_connections_refused", "Handshakes refused (auth, capacity)", registry=self.registry
        )

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric."""
        return generate_latest(self.registry)


def _loop_tasks() -> float:
    """Tasks alive on the running event loop; NaN when scraped off any loop (then there is none to count)."""
    try:
        return float(len(asyncio.all_tasks()))
    except RuntimeError:
        return float("nan")
