"""Voxdesk's application core, without widgets: listening (microphone, controller, transcript),
the engine each choice builds (:mod:`.engines`), file transcription and its queue, voice actions,
the history, settings, API keys, global shortcuts and the first-run checks. The window
(:mod:`voxdesk.ui`) and the command line (:mod:`voxdesk.cli`) are built on it."""
