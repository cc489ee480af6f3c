"""Which runtime serves the assistant's LLM, from the ``[actions]`` settings: an OpenAI-compatible
server (``llm_runtime = "server"``, the default) or vLLM in this process (``"vllm"``)."""

from __future__ import annotations

from voxdesk.app.llm.client import Llm, OpenAiCompatibleLlm
from voxdesk.app.settings import LLM_RUNTIMES, ActionSettings

__all__ = ["LLM_RUNTIMES", "llm_for", "runtime_key"]


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
