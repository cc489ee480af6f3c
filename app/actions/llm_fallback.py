"""When no phrase matches: ask an OpenAI-compatible LLM which command was meant.

Off by default (``settings.actions.llm_fallback``). One tool per command, its slots as
parameters; the model calls one of them, or several in order for a request of several steps
(which the center shows as a plan). Anything else — no tool call, an unknown tool, arguments
that do not fit the slots, a slow or unreachable server — is no match. What it picks still
goes through the center's preview and always waits for confirmation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from voxdesk.app.actions.commands import Command, Slot
from voxdesk.app.actions.keys import parse_keys
from voxdesk.app.actions.kinds import SlotKind, SlotValue
from voxdesk.app.actions.matching import Match
from voxdesk.app.llm.client import Llm, LlmError, ToolCall
from voxdesk.app.llm.runtime import llm_for
from voxdesk.app.settings import ActionSettings

__all__ = ["SYSTEM_PROMPT", "LlmFallback", "build_tools", "parse_tool_calls"]

SYSTEM_PROMPT = (
    "You turn a user's spoken request into tool calls, if the tools fit: one call, or one per "
    "step in the order said when the request has several steps. If none fits, answer without "
    "calling a tool. Fill parameters with the user's own words."
)


def _parameter(slot: Slot) -> dict[str, Any]:
    if slot.kind is SlotKind.NUMBER:
        return {"type": "number"}
    if slot.kind is SlotKind.ENUM:
        return {"type": "string", "enum": list(slot.options)}
    if slot.kind is SlotKind.KEYS:
        return {"type": "string", "description": "a key combination such as ctrl+shift+t"}
    return {"type": "string"}


def build_tools(commands: Sequence[Command]) -> list[dict[str, Any]]:
    """OpenAI tool definitions, one per command, its slots as parameters."""
    tools = []
    for command in commands:
        slots = command.slots
        description = command.description or f"Say: {command.phrases[0].source}"
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": command.name,
                    "description": description,
                    "parameters": {
                        "type": "object",
                        "properties": {name: _parameter(slot) for name, slot in slots.items()},
                        "required": sorted(command.required_slots),
                        "additionalProperties": False,
                    },
                },
            }
        )
    return tools


def _value(slot: Slot, raw: Any) -> SlotValue | None:
    if slot.kind is SlotKind.NUMBER:
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            return None
        try:
            number = float(raw)
        except ValueError:
            return None
        return int(number) if number.is_integer() else number
    if not isinstance(raw, str) or not raw.strip():
        return None
    if slot.kind is SlotKind.ENUM:
        return raw if raw in slot.options else None
    if slot.kind is SlotKind.KEYS:
        combo = parse_keys(raw)
        return None if combo is None else str(combo)
    return raw.strip()


def parse_tool_calls(calls: Sequence[ToolCall], commands: Sequence[Command]) -> tuple[Match, ...]:
    """The command and slots of each of the model's tool calls, in order; empty when any one of
    them is not a valid call (a plan with a step missing is not the plan that was asked for)."""
    found = tuple(_parse_tool_call(call, commands) for call in calls)
    return tuple(match for match in found if match is not None) if None not in found else ()


def _parse_tool_call(call: ToolCall, commands: Sequence[Command]) -> Match | None:
    command = next((c for c in commands if c.name == call.name), None)
    values = call.parsed_arguments()
    if command is None or values is None:
        return None
    slots = command.slots
    if set(values) - set(slots) or command.required_slots - set(values):
        return None
    filled: dict[str, SlotValue] = {}
    for key, raw in values.items():
        value = _value(slots[key], raw)
        if value is None:
            return None
        filled[key] = value
    return Match(command, filled, 0.0, "llm")


class LlmFallback:
    """Asks the ``[actions]`` settings' LLM to pick a command, within ``llm_timeout_s``."""

    def __init__(
        self, settings: ActionSettings, on_warning: Callable[[str], None] | None = None, llm: Llm | None = None
    ) -> None:
        """``llm``: the model to ask (default: the one ``settings`` name)."""
        self.settings = settings
        self._on_warning = on_warning
        self._llm = llm if llm is not None else llm_for(settings)

    def _warn(self, message: str) -> None:
        if self._on_warning:
            self._on_warning(message)

    async def pick(self, text: str, commands: Sequence[Command]) -> tuple[Match, ...]:
        """The commands the LLM chose for ``text``, in order; empty for no choice, a bad one, or
        no answer in time."""
        if not commands:
            return ()
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]
        try:
            reply = await self._llm.chat(messages, self.settings.llm_timeout_s, tools=build_tools(commands))
        except LlmError as error:
            self._warn(str(error))
            return ()
        found = parse_tool_calls(reply.tool_calls, commands)
        if not found:
            self._warn("the LLM did not pick a known command")
        return found
