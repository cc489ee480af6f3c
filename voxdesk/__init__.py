"""Voxdesk, a desktop voice assistant with streaming speech recognition.

One installed namespace over the repository's top-level folders (``pyproject.toml`` maps them)::

    voxdesk.ui          PySide6 windows and widgets; ``voxdesk.ui.launcher`` is the ``voxdesk`` program
    voxdesk.cli         the command line: transcribe, serve, history
    voxdesk.app         the application core without widgets: listening, files, actions, history, settings
    voxdesk.engine      speech engines, the streaming-session interface, the /v1/realtime wire
    voxdesk.resources   icons, default voice commands, sample audio

Dependencies point one way: ``ui`` and ``cli`` → ``app`` → ``engine``.
"""
