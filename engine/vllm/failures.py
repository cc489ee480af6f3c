"""Why vLLM could not start, or stopped, in one plain sentence.

vLLM's engine core runs in processes of its own; when it fails there, this process only gets
``RuntimeError: Engine core initialization failed. See root cause above``. The root cause is
logged, so while the engine starts its processes also log errors to a file
(:class:`EngineCoreErrors`), and :func:`explain_start_failure` reads both. When the core
process dies later, every request gets ``EngineDeadError`` ("EngineCore encountered an
issue"); :func:`explain_engine_death` says instead which process ended and how.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import re
import signal
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["EngineCoreErrors", "explain_engine_death", "explain_memory_failure", "explain_start_failure"]

_CONFIG_VARIABLE = "VLLM_LOGGING_CONFIG_PATH"
_WHAT_TO_DO = "close programs that use the GPU, choose a smaller model or a shorter max model length"


class EngineCoreErrors:
    """Errors that vLLM's processes log, kept in a file for as long as this object lives.

    Call :meth:`start` (vllm imported) just before starting the engine and :meth:`stop` once it
    is up or failed: processes started in between read ``VLLM_LOGGING_CONFIG_PATH`` (vLLM's
    default logging plus an error file) when they import vllm. A logging configuration the user
    chose is left alone (``text`` is then empty). :meth:`close` removes the file.
    """

    def __init__(self) -> None:
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._path: Path | None = None

    def start(self) -> None:
        """Point the processes started from now on at a logging configuration with the error file."""
        if _CONFIG_VARIABLE in os.environ or os.environ.get("VLLM_CONFIGURE_LOGGING") == "0":
            return
        self._folder = tempfile.TemporaryDirectory(prefix="voxdesk-vllm-")
        self._path = Path(self._folder.name) / "errors.log"
        config = copy.deepcopy(importlib.import_module("vllm.logger").DEFAULT_LOGGING_CONFIG)
        config["handlers"]["voxdesk_errors"] = {
            "class": "logging.FileHandler", "filename": str(self._path), "level": "ERROR",
            "formatter": "vllm", "delay": True,
        }  # fmt: skip
        config["loggers"]["vllm"]["handlers"].append("voxdesk_errors")
        config_path = Path(self._folder.name) / "logging.json"
        config_path.write_text(json.dumps(config), encoding="utf-8")
        os.environ[_CONFIG_VARIABLE] = str(config_path)

    def stop(self) -> None:
        """Processes started from now on log as before."""
        if self._folder is not None and os.environ.get(_CONFIG_VARIABLE, "").startswith(self._folder.name):
            del os.environ[_CONFIG_VARIABLE]

    @property
    def text(self) -> str:
        """What vLLM's processes logged as errors so far."""
        if self._path is None or not self._path.exists():
            return ""
        return self._path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        """Remove the file (the engine's processes have exited)."""
        self.stop()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = self._path = None


def explain_memory_failure(model: str, text: str) -> str | None:
    """A plain sentence for vLLM's errors about memory in ``text``, or ``None`` for others."""
    if match := re.search(r"\(([\d.]+) GiB KV cache is needed, which is larger than the available KV cache memory "
                          r"\(([\d.]+) GiB\)\.(?: Based on the available memory, the estimated maximum model length "
                          r"is (\d+)\.)?", text):  # fmt: skip
        needed, available, longest = match.groups()
        fits = f"; about {longest} tokens would fit" if longest else ""
        return (
            f"{model} does not fit in the memory left for it: its context needs {needed} GiB of KV cache and "
            f"{available} GiB is left after the weights{fits}. {_WHAT_TO_DO[0].upper()}{_WHAT_TO_DO[1:]}"
        )
    if match := re.search(r"Free memory on device \S+ \(([\d.]+)/([\d.]+) GiB\) on startup is less than desired", text):
        return (
            f"only {match[1]} of the GPU's {match[2]} GiB is free, less than vLLM was asked to take for {model}: "
            f"{_WHAT_TO_DO}"
        )
    if "No available memory for the cache blocks" in text:
        return f"{model} leaves no memory for its KV cache once its weights are loaded: {_WHAT_TO_DO}"
    if "on kv cache allocation is less than requested memory" in text:
        return f"there is not enough free memory for {model}'s KV cache: {_WHAT_TO_DO}"
    if re.search(r"out of memory|OutOfMemoryError", text, re.IGNORECASE):
        return f"the GPU ran out of memory loading {model}: {_WHAT_TO_DO}"
    return None


def explain_start_failure(model: str, exc: BaseException, logged: str = "") -> str:
    """What went wrong starting ``model``, from the exception and what vLLM's processes ``logged``."""
    text = f"{type(exc).__name__}: {exc}"
    memory = explain_memory_failure(model, f"{text}\n{logged}")
    if memory is not None:
        return memory
    lowered = text.lower()
    if "cuda" in lowered and ("no " in lowered or "not available" in lowered or "driver" in lowered):
        return f"vLLM found no usable NVIDIA GPU; use the built-in engine or a remote server ({text})"
    if not os.path.exists(model) and ("not found" in lowered or "repository" in lowered or "404" in lowered):
        return f"vLLM could not find the model {model!r} (a local folder or a model hub id) ({text})"
    cause = _last_error_line(logged)
    return f"vLLM could not start {model}: {text}" + (f" (cause: {cause})" if cause else "")


def _last_error_line(logged: str) -> str:
    """The exception line closing the last traceback in ``logged`` (``ValueError: ...``)."""
    lines = re.findall(r"^(?:.*\] )?\s*([A-Za-z_.]*(?:Error|Exception): .+)$", logged, re.MULTILINE)
    return lines[-1].strip() if lines else ""


def explain_engine_death(llm: Any) -> str:
    """What ended an ``AsyncLLM`` that is errored or raised ``EngineDeadError``: its engine core
    processes' exit status where vLLM's process manager keeps them (in-process engines on one node)."""
    client = getattr(llm, "engine_core", None)
    manager = getattr(getattr(client, "resources", None), "engine_manager", None)
    ended = [p for p in getattr(manager, "processes", ()) if p.exitcode not in (None, 0)]
    if not ended:
        how = "vLLM's engine core stopped (EngineDeadError)"
    else:
        process = ended[0]
        how = f"vLLM's engine core process ({process.name}, pid {process.pid}) {_exit_status(process.exitcode)}"
    return f"{how}: every session on it ended, and the engine must be restarted"


def _exit_status(code: int) -> str:
    """How a process ended, from its ``multiprocessing`` exit code (a signal when negative)."""
    if code >= 0:
        return f"exited with status {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    memory = " (the system's out-of-memory killer sends it too)" if -code == signal.SIGKILL else ""
    return f"was killed by {name}{memory}"
