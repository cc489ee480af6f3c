"""Voxdesk's PySide6 windows and widgets (the desktop window arrives with its own issue)."""
