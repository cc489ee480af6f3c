"""``voxdesk`` whose built-in engine decodes with a :class:`~tests.engine.failing_decoder.FailingDecoder`:
``python -m tests.server.failing_serve serve ARGS`` is ``voxdesk serve ARGS`` with that real fault."""

from __future__ import annotations

import sys

from tests.engine.failing_decoder import FailingDecoder
from voxdesk.cli.main import main
from voxdesk.engine.session import ProgressCallback
from voxdesk.engine.whisper.builtin import BuiltinEngine

_load = BuiltinEngine.load


async def _load_failing(self: BuiltinEngine, progress: ProgressCallback | None = None) -> None:
    await _load(self, progress)
    assert self._decoder is not None
    self._decoder = FailingDecoder(self._decoder)  # type: ignore[assignment]


if __name__ == "__main__":
    BuiltinEngine.load = _load_failing  # type: ignore[method-assign]
    sys.exit(main())
