"""What the vLLM tests share: the tiny model, test audio, an engine's event loop, server processes, and a
way to skip or fail without vLLM."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

import numpy as np
import pytest

if TYPE_CHECKING:
    from voxdesk.engine.vllm.engine import VllmEngine

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
TINY_MODEL_DIR = REPO / "build" / "tiny-voxtral"
SERVED_NAME = "tinyvox"
HUB_REPO = "voxdesk-tests/tiny-voxtral"
"""The tiny model's id on the loopback model hub (tests/hub_server.py)."""
STDERR_LINES_SHOWN = 15


class EngineOptions(TypedDict):
    """The VllmSettings fields the tests fix (small and deterministic on a CPU)."""

    dtype: str
    enforce_eager: bool
    max_model_len: int
    max_num_seqs: int
    seed: int


ENGINE_OPTIONS: EngineOptions = {
    "dtype": "float32",
    "enforce_eager": True,
    "max_model_len": 1024,
    "max_num_seqs": 4,
    "seed": 0,
}
# vLLM counts for 4 s of audio with Voxtral's streaming settings (scripts/make_tiny_voxtral.py):
# 99 slots of 80 ms once padded, the first 39 are the prompt, one output per remaining slot.
OUTPUTS_FOR_4S = 60
PROMPT_TOKENS = 39

requires_vllm = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is None and os.environ.get("REQUIRE_VLLM") != "1",
    reason="vllm is not installed here; `make test` runs these in .venv-vllm (scripts/setup-vllm.sh)",
)


def build_tiny_model() -> Path:
    """The tiny random-weight Voxtral Realtime checkpoint, built once by the repository's script."""
    if not (TINY_MODEL_DIR / "consolidated.safetensors").exists():
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "make_tiny_voxtral.py"), str(TINY_MODEL_DIR)], check=True
        )
    return TINY_MODEL_DIR


class EngineLoop:
    """The one event loop an in-process engine lives on, from load to close (vLLM's client is
    bound to the loop it started on)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)


@dataclass
class LoadedVllm:
    """An in-process engine on the tiny model and its loop; the progress steps of its load and the
    hub snapshot it loaded."""

    engine: VllmEngine
    runner: EngineLoop
    steps: list[tuple[str, float]]
    snapshot: Path


def chirp_pcm16(seconds: float = 4.0, seed: int = 0) -> np.ndarray:
    """PCM16 audio that changes over time (a pure tone makes a random model repeat one letter):
    a 200→3000 Hz chirp under a 2 Hz envelope plus a little noise.

    Parity tests send these exact samples over the wire and, as ``pcm / 32768`` (what a
    server decodes them to), in-process."""
    t = np.arange(int(seconds * 16_000)) / 16_000
    frequency = 200 + (3000 - 200) * t / seconds
    phase = 2 * np.pi * np.cumsum(frequency) / 16_000
    envelope = 0.5 * (1 + np.sin(2 * np.pi * 2 * t))
    noise = np.random.default_rng(seed).normal(0, 0.02, len(t))
    signal = 0.4 * envelope * np.sin(phase) + noise
    return np.round(np.clip(signal, -1, 1) * 32767).astype("<i2")


def as_float(pcm: np.ndarray) -> np.ndarray:
    """PCM16 to float32 exactly as vLLM's server decodes it."""
    return pcm.astype(np.float32) / 32768.0


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_health(port: int, process: subprocess.Popen[bytes], timeout: float = 300.0) -> None:
    """Until ``GET /health`` answers 200; fails early if the server process died."""
    import time
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before it was healthy")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"no healthy server on port {port} after {timeout:.0f} s")


SERVER_OPTIONS = ("--dtype", "float32", "--enforce-eager", "--max-model-len", "1024", "--max-num-seqs", "4")
"""The engine settings both servers get in the tests (small and deterministic on a CPU)."""


def launch_vllm_server(model: Path, options: Sequence[str] = SERVER_OPTIONS, kv_cache_gb: int = 1) -> ServerLaunch:
    """vLLM's own OpenAI-compatible server with ``/v1/realtime``, on loopback, starting."""
    port = free_port()
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
        "--served-model-name", SERVED_NAME, "--host", "127.0.0.1", "--port", str(port),
        "--tokenizer-mode", "mistral", "--config-format", "mistral", "--load-format", "mistral",
        "--seed", "0", *options,
    ]  # fmt: skip
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gb)}
    return ServerLaunch(command, env, port, cwd=None)


def launch_voxdesk_vllm_server(
    model: Path, options: Sequence[str] = SERVER_OPTIONS, kv_cache_gb: int = 1
) -> ServerLaunch:
    """``voxdesk serve --engine vllm`` with the same model and engine settings as vLLM's server, starting."""
    port = free_port()
    command = [
        sys.executable, "-m", "voxdesk.cli.main", "serve", "--engine", "vllm", "--model", str(model),
        "--served-model-name", SERVED_NAME, "--port", str(port), *options,
    ]  # fmt: skip
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gb), "VOXDESK_API_KEY": ""}
    return ServerLaunch(command, env, port, cwd=REPO)


def start_vllm_server(
    model: Path, options: Sequence[str] = SERVER_OPTIONS, kv_cache_gb: int = 1
) -> tuple[subprocess.Popen[bytes], int]:
    """vLLM's own server (:func:`launch_vllm_server`) once healthy; the process and its port."""
    server = launch_vllm_server(model, options, kv_cache_gb)
    return server.healthy(), server.port


def start_voxdesk_vllm_server(
    model: Path, options: Sequence[str] = SERVER_OPTIONS, kv_cache_gb: int = 1
) -> tuple[subprocess.Popen[bytes], int]:
    """``voxdesk serve --engine vllm`` (:func:`launch_voxdesk_vllm_server`) once healthy; the process and its port."""
    server = launch_voxdesk_vllm_server(model, options, kv_cache_gb)
    return server.healthy(), server.port


class ServerLaunch:
    """A server process started but not yet waited for: two launched before either is waited for
    start at the same time (a vLLM start is mostly single-threaded imports)."""

    def __init__(self, command: list[str], env: dict[str, str], port: int, cwd: Path | None) -> None:
        self.port = port
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - healthy() closes it once the wait is over
        self.process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=self._errors)

    def healthy(self) -> subprocess.Popen[bytes]:
        """The process, once it answers on ``/health``; one that does not is stopped, and the
        error ends with the last lines it wrote to stderr."""
        with self._errors as errors:
            try:
                wait_for_health(self.port, self.process)
            except (RuntimeError, TimeoutError) as exc:
                stop(self.process)
                errors.seek(0)
                tail = errors.read().decode(errors="replace").splitlines()[-STDERR_LINES_SHOWN:]
                raise RuntimeError("\n".join([str(exc), *tail])) from exc
            except BaseException:
                stop(self.process)
                raise
        return self.process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()


async def realtime_frames(port: int, script: list[str], until: str) -> list[str]:
    """Send ``script`` (raw text frames) to ``/v1/realtime``, return every frame received
    until one containing ``until``, with the session id and time masked."""
    import asyncio
    import re

    from websockets.asyncio.client import connect

    received: list[str] = []
    async with connect(f"ws://127.0.0.1:{port}/v1/realtime", max_size=2**24) as socket:
        for frame in script:
            await socket.send(frame)
        while True:
            frame = str(await asyncio.wait_for(socket.recv(), 60))
            received.append(re.sub(r'"id":"sess-[0-9a-f]{16}","created":\d+', '"id":"sess-masked","created":0', frame))
            if until in frame:
                return received


def audio_frames(pcm: np.ndarray, chunk: int = 1600) -> list[str]:
    """``input_audio_buffer.append`` frames carrying exactly these PCM16 samples."""
    import base64
    import json

    return [
        json.dumps(
            {"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm[i : i + chunk].tobytes()).decode()}
        )
        for i in range(0, len(pcm), chunk)
    ]
