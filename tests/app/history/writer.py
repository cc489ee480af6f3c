"""A live session that never ends: ``python -m tests.app.history.writer DB``.

Adds utterances to a new session as fast as it can and prints each id once ``add_utterance``
has returned (the utterance is final), until it is killed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from voxdesk.app.history.store import HistoryStore


def main(path: Path) -> None:
    store = HistoryStore.open(path)
    session = store.start_session("live", "builtin", "whisper-tiny.en", "test microphone")
    print(f"session {session}", flush=True)
    number = 0
    while True:
        utterance = store.add_utterance(session, f"utterance number {number} says word{number}", number, number + 0.8)
        print(utterance, flush=True)
        number += 1


if __name__ == "__main__":
    main(Path(sys.argv[1]))
