"""Realtime chunks rendered for vLLM's engine without its per-call machinery.

A realtime model's buffer (``buffer_realtime_audio``) yields one ``TokensPrompt`` per engine
step: a few token ids and one audio frame, the same sizes step after step (Voxtral: one token
and 2,160 samples). vLLM's renderer runs each through the whole multimodal pipeline (the
Hugging Face processor call, a tokenizer call, signature inspection, placeholder search), about
0.45 ms per chunk on a CPU, for a result whose shape never changes. :class:`ChunkRenderer`
renders the first chunk of each shape with vLLM's renderer, then builds the later ones of that
shape directly: the token ids, the frame as the same tensor field, vLLM's own content hash of
the frame, the same placeholders. The first chunk built so is compared with what vLLM's
renderer makes of it; if they differ (another vLLM release, another model), every chunk goes
through vLLM's renderer from then on.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["ChunkRenderer", "same_engine_input"]

logger = logging.getLogger(__name__)

_PROMPT_KEYS = frozenset({"prompt_token_ids", "multi_modal_data"})
_Shape = tuple[int, int]


@dataclasses.dataclass(frozen=True)
class _Template:
    """What stays the same between rendered chunks of one shape."""

    engine_input: dict[str, Any]
    field: Any
    key: str
    checked: bool = False


class ChunkRenderer:
    """``render(prompt)`` equals ``llm.renderer.render_cmpl([parse(model_config, prompt)])[0]``.

    Args:
        llm: a started ``AsyncLLM`` (its renderer, multimodal processor and model config).
        parse_model_prompt: vLLM's ``parse_model_prompt``.
    """

    def __init__(self, llm: Any, parse_model_prompt: Any) -> None:
        self._llm = llm
        self._parse = parse_model_prompt
        processor = llm.renderer.get_mm_processor()
        self._info = processor.info
        self._algorithm = processor.info.ctx.get_mm_config().mm_hasher_algorithm
        self._templates: dict[_Shape, _Template] = {}
        self.enabled = True
        """False once a chunk could not be built here: all go through vLLM's renderer from then on."""

    @property
    def fast_shapes(self) -> list[_Shape]:
        """The (token count, frame length) shapes built here rather than by vLLM's renderer."""
        return [shape for shape, template in self._templates.items() if template.checked]

    def render(self, prompt: Any) -> Any:
        """The engine input for one prompt of the model's realtime buffer."""
        shape = self._shape(prompt) if self.enabled else None
        template = self._templates.get(shape) if shape is not None else None
        if template is not None and template.checked:
            return self._build(template, prompt)
        [rendered] = self._llm.renderer.render_cmpl([self._parse(self._llm.model_config, prompt)])
        if shape is not None:
            self._learn(shape, template, prompt, rendered)
        return rendered

    @staticmethod
    def _shape(prompt: Any) -> _Shape | None:
        """(token count, frame length) for a prompt of one float32 audio frame, else ``None``."""
        if not isinstance(prompt, dict) or prompt.keys() != _PROMPT_KEYS:
            return None
        data = prompt["multi_modal_data"]
        if not isinstance(data, dict) or data.keys() != {"audio"}:
            return None
        audio = data["audio"]
        if not isinstance(audio, tuple) or len(audio) != 2 or audio[1] is not None:
            return None
        frame = audio[0]
        if not isinstance(frame, np.ndarray) or frame.ndim != 1 or frame.dtype != np.float32:
            return None
        return len(prompt["prompt_token_ids"]), len(frame)

    def _learn(self, shape: _Shape, template: _Template | None, prompt: Any, rendered: Any) -> None:
        """First chunk of a shape: keep vLLM's rendering as the template. Second: build it here
        too and compare with vLLM's rendering; from the third on, build."""
        if template is None:
            template = _template(rendered)
            if template is not None:
                self._templates[shape] = template
                return
        elif same_engine_input(self._build(template, prompt), rendered):
            self._templates[shape] = dataclasses.replace(template, checked=True)
            return
        logger.info("realtime chunks differ from vLLM's rendering here: all go through vLLM's renderer")
        self.enabled = False

    def _build(self, template: _Template, prompt: Any) -> dict[str, Any]:
        vllm = _vllm()
        frame, _ = audio = prompt["multi_modal_data"]["audio"]
        [item] = self._info.parse_mm_data({"audio": audio})["audio"].get_all_items_for_hash()
        content_hash = vllm.MultiModalHasher.hash_kwargs(self._algorithm, model_id=self._info.model_id, audio=item)
        element = vllm.MultiModalFieldElem(data=vllm.torch.from_numpy(frame), field=template.field)
        return {
            **template.engine_input,
            "prompt_token_ids": list(prompt["prompt_token_ids"]),
            "mm_kwargs": vllm.MultiModalKwargsItems({"audio": [vllm.MultiModalKwargsItem({template.key: element})]}),
            "mm_hashes": {"audio": [content_hash]},
            "mm_placeholders": {"audio": list(template.engine_input["mm_placeholders"]["audio"])},
            "arrival_time": time.time(),
        }


def _template(rendered: Any) -> _Template | None:
    """The template of a rendered chunk with one audio item of one tensor field, else ``None``."""
    items = rendered.get("mm_kwargs", {}).get("audio", [])
    if rendered.get("type") != "multimodal" or len(items) != 1 or len(items[0]) != 1:
        return None
    [(key, element)] = items[0].items()
    return _Template(dict(rendered), element.field, key)


def same_engine_input(built: dict[str, Any], rendered: Any) -> bool:
    """Whether two engine inputs are equal but for their arrival time."""
    return built.keys() == rendered.keys() and all(built[k] == rendered[k] for k in rendered if k != "arrival_time")


@functools.cache
def _vllm() -> SimpleNamespace:
    """The vLLM and torch names the builder uses (imported once, when first needed)."""
    inputs = importlib.import_module("vllm.multimodal.inputs")
    return SimpleNamespace(
        torch=importlib.import_module("torch"),
        MultiModalHasher=importlib.import_module("vllm.multimodal.hasher").MultiModalHasher,
        MultiModalFieldElem=inputs.MultiModalFieldElem,
        MultiModalKwargsItem=inputs.MultiModalKwargsItem,
        MultiModalKwargsItems=inputs.MultiModalKwargsItems,
    )
