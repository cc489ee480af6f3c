"""The realtime server's plain HTTP side: ``/health``, ``/live``, ``/metrics``, ``/v1/models``,
and the auth and capacity checks a ``/v1/realtime`` handshake passes before the upgrade.

``/health`` means ready: 200 only when new sessions are taken, 503 while the engine loads,
while the server drains, and once the engine stopped for good (the body says why); a load
balancer sends sessions by it. ``/live`` is 200 whenever the
process answers at all (a liveness probe that must not fail during a long load or a drain)."""

from __future__ import annotations

import hmac
import json
from http import HTTPStatus

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from voxdesk.engine.wire.openai.events import is_openai_path
from voxdesk.server.config import ServerConfig
from voxdesk.server.metrics import CONTENT_TYPE, RealtimeMetrics

__all__ = ["route"]


def route(
    request: Request, config: ServerConfig, metrics: RealtimeMetrics, busy: str | None, unready: str | None = None
) -> Response | None:
    """The HTTP answer to ``request``, or ``None`` to let a ``/v1/realtime`` handshake upgrade.

    ``busy`` says why no session can be opened now (loading, draining, every session in use),
    if so; ``unready`` why the server is not ready at all (loading, draining), if so.
    """
    path = request.path.split("?", 1)[0]
    if path == "/realtime" and is_openai_path(request.path):
        path = "/v1/realtime"  # the SDK's URL when its websocket_base_url has no /v1
    if path == "/health":
        if unready is not None:
            return _response(HTTPStatus.SERVICE_UNAVAILABLE, unready.encode())
        return _response(HTTPStatus.OK, b"")
    if path == "/live":
        return _response(HTTPStatus.OK, b"")
    if path == "/metrics":
        return _response(HTTPStatus.OK, metrics.render(), CONTENT_TYPE)
    if path.startswith("/v1") and not _authorized(request, config.api_key):
        metrics.refused.inc()
        return _json_response(HTTPStatus.UNAUTHORIZED, {"error": "Unauthorized"})
    if path == "/v1/models":
        model = {"id": config.served_model_name, "object": "model", "created": 0, "owned_by": "voxdesk"}
        return _json_response(HTTPStatus.OK, {"object": "list", "data": [model]})
    if path != "/v1/realtime":
        return _json_response(HTTPStatus.NOT_FOUND, {"error": "Not Found"})
    if busy is not None:
        metrics.refused.inc()
        return _json_response(HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"Server busy: {busy}"})
    return None


def _authorized(request: Request, api_key: str | None) -> bool:
    if not api_key:
        return True
    given = request.headers.get("Authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {api_key}".encode())


def _response(status: HTTPStatus, body: bytes, content_type: str = "text/plain") -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)


def _json_response(status: HTTPStatus, payload: object) -> Response:
    return _response(status, json.dumps(payload).encode(), "application/json")
