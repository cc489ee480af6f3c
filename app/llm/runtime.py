"""Which runtime serves the assistant's LLM, from the ``[actions]`` settings: an OpenAI-compatible
server (``llm_runtime = "server"``, the default) or vLLM in this process (``"vllm"``), which
shares the GPU with the speech model in local GPU mode."""

from __future__ import annotations

from functools import partial

from voxdesk.app.llm.client import Llm, OpenAiCompatibleLlm
from voxdesk.app.settings import LLM_RUNTIMES, ActionSettings, Settings
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.vllm.gpu_memory import GPU_SHARING

__all__ = ["LLM_RUNTIMES", "llm_for", "runtime_key", "share_gpu"]


def llm_for(settings: ActionSettings) -> Llm:
    """The LLM ``settings`` name: for ``vllm``, ``llm_model`` is the folder or hub id to load."""
    if settings.llm_runtime == "vllm":
        from voxdesk.app.llm.in_process import InProcessLlm
        from voxdesk.engine.vllm.text import TextModelSettings

        return InProcessLlm(TextModelSettings(model=settings.llm_model, tool_parser=settings.llm_tool_parser))
    return OpenAiCompatibleLlm(settings.llm_url, settings.llm_model, settings.llm_api_key)


def runtime_key(settings: ActionSettings) -> tuple[str, ...]:
    """What :func:`llm_for` builds from: the LLM changes when this does."""
    return (settings.llm_runtime, settings.llm_url, settings.llm_model, settings.llm_api_key, settings.llm_tool_parser)


def share_gpu(settings: Settings) -> None:
    """Have the speech model and an in-process LLM share the GPU when ``settings`` start both
    (local GPU mode and ``llm_runtime = "vllm"``): the first to start leaves the other its part."""
    if settings.engine.kind != EngineKind.VLLM or settings.actions.llm_runtime != "vllm":
        GPU_SHARING.expect({})
        return
    from voxdesk.engine.vllm.download import weight_bytes
    from voxdesk.engine.vllm.engine import VllmSettings

    speech, text = settings.engine.vllm_model, settings.actions.llm_model
    GPU_SHARING.expect(
        {
            speech: (f"the speech model {speech}", partial(weight_bytes, speech, VllmSettings.load_format)),
            text: (f"the LLM {text}", partial(weight_bytes, text, "auto")),
        }
    )
