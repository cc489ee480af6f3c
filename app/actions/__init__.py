"""Voice actions: commands with slots, matched fuzzily, run with preview, confirmation and undo.

The controller creates one :class:`ActionCenter` with the injected :class:`Services` and calls
``await center.handle_utterance(text, utterance_id)`` for each final utterance.
"""

from voxdesk.app.actions.center import ActionCenter, ActionRecord, ActionStatus, IntentFallback
from voxdesk.app.actions.commands import Command, CommandSource
from voxdesk.app.actions.kinds import Action, ActionMode
from voxdesk.app.actions.matching import DEFAULT_THRESHOLD, Match, match_utterance
from voxdesk.app.actions.ports import ActionError, AppLauncher, Clipboard, Notifier, ProcessRunner, UrlOpener
from voxdesk.app.actions.services import Services

__all__ = [
    "DEFAULT_THRESHOLD",
    "Action",
    "ActionCenter",
    "ActionError",
    "ActionMode",
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
