"""The tiny chat model and vLLM's OpenAI-compatible server on it, for the tests of the
assistant's LLM (the vLLM tier: ``.venv-vllm`` has vLLM, torch and transformers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.vllm_support import REPO, ServerLaunch, free_port
from voxdesk.engine.vllm.text import TextModelSettings

__all__ = ["CHAT_MODEL_NAME", "TINY_CHAT_DIR", "build_tiny_chat_model", "start_llm_server", "tiny_text_model"]

TINY_CHAT_DIR = REPO / "build" / "tiny-chat"
CHAT_MODEL_NAME = "tiny"
KV_CACHE_BYTES = 64 * 2**20  # 65,536 tokens of this model: plenty, and 1 GB less than the default

# The flags tools need on vLLM 0.32: a tool parser for the chat template's format, and tool
# arguments constrained by their schema in every tool_choice (../docs: pitfalls 5 and 6).
SERVER_FLAGS = (
    "--dtype", "float32", "--enforce-eager", "--max-model-len", "4096", "--max-num-seqs", "4", "--seed", "0",
    "--kv-cache-memory-bytes", str(KV_CACHE_BYTES),
    "--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--tool-strict-level", "parameter",
)  # fmt: skip


def build_tiny_chat_model() -> Path:
    """The steered tiny chat model (scripts/make_tiny_chat_model.py), built once."""
    if not (TINY_CHAT_DIR / "model.safetensors").exists():
        script = REPO / "scripts" / "make_tiny_chat_model.py"
        subprocess.run([sys.executable, str(script), str(TINY_CHAT_DIR)], check=True, stdout=subprocess.DEVNULL)
    return TINY_CHAT_DIR


def tiny_text_model() -> TextModelSettings:
    """The tiny chat model for vLLM in this process, with the server's engine flags."""
    return TextModelSettings(
        model=str(build_tiny_chat_model()), max_model_len=4096, max_num_seqs=4, dtype="float32", enforce_eager=True,
        engine_args={"kv_cache_memory_bytes": KV_CACHE_BYTES},
    )  # fmt: skip


def start_llm_server() -> tuple[subprocess.Popen[bytes], str]:
    """vLLM's server on the tiny chat model, once healthy: the process and its API's base URL."""
    port = free_port()
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(build_tiny_chat_model()),
        "--served-model-name", CHAT_MODEL_NAME, "--host", "127.0.0.1", "--port", str(port), *SERVER_FLAGS,
    ]  # fmt: skip
    # VLLM_CPU_KVCACHE_SPACE would override --kv-cache-memory-bytes. Without multiprocessing the
    # engine core runs in the server's process: about 0.5 GB less and a start some 6 s shorter.
    env = {name: value for name, value in os.environ.items() if name != "VLLM_CPU_KVCACHE_SPACE"}
    env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    return ServerLaunch(command, env, port, cwd=None).healthy(), f"http://127.0.0.1:{port}/v1"
