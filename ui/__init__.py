"""Voxdesk's PySide6 desktop: the main window, tray and shortcuts (:mod:`.desktop`), the settings,
first-run, history and file-queue panels, the dictation overlay, and :mod:`.launcher`, the
``voxdesk`` program."""
