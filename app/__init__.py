"""Voxdesk's application core, without widgets: files, transcription runs, the CLI."""
