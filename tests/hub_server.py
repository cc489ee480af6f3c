"""A loopback stand-in for the model hub: serves one model folder in the hub's HTTP layout.

It answers what huggingface_hub's ``model_info`` and ``snapshot_download`` ask: the model
info with its file list and sizes (``/api/models/{repo}``, ``/revision/{rev}``, ``/tree/{rev}``) and each file
(``/{repo}/resolve/{rev}/{file}``, HEAD and ranged GET, with ETag, X-Repo-Commit and
Content-Length). ``cut_after`` makes the first GET of the largest file drop its connection
after that many bytes, as a cut network would; with ``down_after_cut`` every later file GET
gets 503, as if the network stayed gone, until ``HubRecord.down`` is set back to False.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

__all__ = ["COMMIT", "HubRecord", "empty_hub_cache", "serve_model", "use_hub"]

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class HubRecord:
    """What the server saw: each file GET (name and Range header) in order, and the files sent whole."""

    gets: list[tuple[str, str]] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    cut_done: bool = False
    down: bool = False


@contextmanager
def serve_model(
    repo: str, folder: Path, cut_after: int | None = None, *, down_after_cut: bool = False
) -> Iterator[tuple[str, HubRecord]]:
    """Serve ``folder`` as hub repository ``repo`` on 127.0.0.1; yields its URL and a record."""
    files = {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}
    largest = max(files, key=lambda name: len(files[name]))
    record = HubRecord()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _answer(self, body: bool) -> None:
            info = f"/api/models/{repo}"
            tree = f"/api/models/{repo}/tree/"
            prefix = f"/{repo}/resolve/"
            if self.path.split("?")[0] == info or self.path.startswith(info + "/revision/"):
                siblings = [{"rfilename": name, "size": len(data)} for name, data in files.items()]
                self._send(200, json.dumps({"id": repo, "sha": COMMIT, "siblings": siblings}).encode(), body)
            elif self.path.startswith(tree):
                listing = [
                    {"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                    for name, data in files.items()
                ]
                self._send(200, json.dumps(listing).encode(), body)
            elif self.path.startswith(prefix) and self.path.split("/")[-1] in files:
                self._send_file(self.path.split("/")[-1], body)
            else:
                self._send(404, b'{"error": "Repository not found"}', body, {"X-Error-Code": "RepoNotFound"})

        def _send_file(self, name: str, body: bool) -> None:
            data = files[name]
            etag = f'"{hashlib.sha256(data).hexdigest()}"'
            start = 0
            if body and record.down:
                self._send(503, b'{"error": "Service unavailable"}', body)
                return
            if body:
                record.gets.append((name, self.headers.get("Range", "")))
                if self.headers.get("Range", "").startswith("bytes="):
                    start = int(self.headers["Range"][6:].split("-")[0])
            headers = {"ETag": etag, "X-Repo-Commit": COMMIT}
            if start:
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            part = data[start:]
            if body and name == largest and cut_after is not None and not record.cut_done:
                record.cut_done = True
                record.down = down_after_cut
                self._send(206 if start else 200, part, False, headers)
                self.wfile.write(part[:cut_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self._send(206 if start else 200, part, body, headers)
            if body:
                record.sent.append(name)

        def _send(self, status: int, data: bytes, body: bool, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            if body:
                self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", record
    finally:
        server.shutdown()
        server.server_close()


def empty_hub_cache(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Path:
    """Make huggingface_hub, in this process, use the empty cache ``cache``, online and without Xet
    (the loopback hub speaks plain HTTP)."""
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    return cache


def use_hub(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    """Point huggingface_hub, in this process, at the hub served on ``url``."""
    import huggingface_hub.constants as constants

    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}")
