"""Voxdesk, a desktop voice assistant with streaming speech recognition.

One installed namespace over the repository's top-level folders (``pyproject.toml`` maps them)::

    voxdesk.ui              PySide6 windows and widgets; ``voxdesk.ui.launcher`` is the ``voxdesk`` program
    voxdesk.cli             the command line: transcribe, serve, history, models
    voxdesk.app             the application core without widgets: listening, the engine factory,
                            files, actions, history, settings
    voxdesk.server          ``voxdesk serve``: an engine behind vLLM's /v1/realtime, OpenAI Realtime
                            and Wyoming (listeners, connections, health and metrics)
    voxdesk.engine          the streaming-session interface every engine follows, and the engines:
      .whisper              the built-in engine (faster-whisper on the CPU) and its models
      .vllm                 a local vLLM on the GPU
      .remote               client engines for a server of each dialect
      .wire                 the three dialects' sans-I/O protocol cores
      .audio                voice-activity detection and noise level
    voxdesk.resources       icons, default voice commands, sample audio

Dependencies point one way: ``ui`` and ``cli`` → ``app`` → ``engine``, and ``cli`` → ``server`` →
``engine``.
"""
