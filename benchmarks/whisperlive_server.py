"""Runs WhisperLive's server for ``benchmarks.whisperlive``, inside ``.venv-whisperlive``.

A script, not part of the voxdesk package: ``whisper_live`` is only installed in that
environment. Usage: ``python benchmarks/whisperlive_server.py PORT MODEL_DIR``. WhisperLive
logs ``server listening on HOST:PORT`` once it accepts connections.
"""

import logging
import sys

from whisper_live.server import TranscriptionServer

logging.basicConfig(level=logging.INFO)
port, model = int(sys.argv[1]), sys.argv[2]
# One shared model for every client (the custom-model path implies it), as Voxdesk shares one.
TranscriptionServer().run(
    "127.0.0.1",
    port,
    backend="faster_whisper",
    faster_whisper_custom_model_path=model,
    single_model=True,
    max_clients=64,
    max_connection_time=3600,
)
