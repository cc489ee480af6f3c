"""Voice actions: commands with slots, matched fuzzily, run with preview, confirmation and undo.

The controller creates one :class:`ActionCenter` with the injected :class:`Services` and calls
``await center.handle_utterance(text, utterance_id)`` for each final utterance.
"""

from app.actions.center import ActionCenter, ActionRecord, ActionStatus, IntentFallback
from app.actions.commands import Command, CommandSource
from app.actions.matching import DEFAULT_THRESHOLD, Match, match_utterance
from app.actions.services import ActionError, AppLauncher, Clipboard, Notifier, ProcessRunner, Services, UrlOpener

__all__ = [
    "DEFAULT_THRESHOLD",
    "ActionCenter",
    "ActionError",
    "ActionRecord",
    "ActionStatus",
    "AppLauncher",
    "Clipboard",
    "Command",
    "CommandSource",
    "IntentFallback",
    "Match",
    "Notifier",
    "ProcessRunner",
    "Services",
    "UrlOpener",
    "match_utterance",
]
