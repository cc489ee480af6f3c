"""Logging: every Voxdesk logger sits under ``voxdesk``, which gets its handlers here, once.

The level comes from the caller (``--log-level``), else ``VOXDESK_LOG``, else the caller's
default: WARNING for the command line, INFO for the desktop window, which also keeps a
rotating log file in :func:`log_folder`.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from pathlib import Path

import platformdirs

__all__ = ["LEVELS", "LOGGER_NAME", "configure_logging", "log_folder"]

LOGGER_NAME = "voxdesk"
LEVELS = ("debug", "info", "warning", "error")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
MAX_FILE_BYTES = 1024 * 1024
BACKUP_FILES = 3
_STDERR_HANDLER = "voxdesk-stderr"


def log_folder() -> Path:
    """Where the desktop app's log files live (``VOXDESK_LOG_DIR`` overrides)."""
    return Path(os.environ.get("VOXDESK_LOG_DIR") or platformdirs.user_log_dir("voxdesk"))


def configure_logging(level: str | None = None, *, log_file: Path | None = None, default: str = "WARNING") -> None:
    """Send ``voxdesk.*`` records to stderr, and to a rotating ``log_file`` when given.

    Safe to call again: a handler already in place is not added twice, and the level is set
    anew (``level``, else ``VOXDESK_LOG``, else ``default``).
    """
    logger = logging.getLogger(LOGGER_NAME)
    wanted = (level or os.environ.get("VOXDESK_LOG") or default).upper()
    known = logging.getLevelNamesMapping()
    logger.setLevel(known.get(wanted, known[default.upper()]))
    names = {handler.get_name() for handler in logger.handlers}
    if _STDERR_HANDLER not in names:
        _add(logger, logging.StreamHandler(), _STDERR_HANDLER)
    if log_file is not None and f"voxdesk-file:{log_file}" not in names:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        rotating = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=MAX_FILE_BYTES, backupCount=BACKUP_FILES, encoding="utf-8"
        )
        _add(logger, rotating, f"voxdesk-file:{log_file}")
    if wanted not in known:
        logger.warning("unknown log level %r; using %s", wanted, default.upper())


def _add(logger: logging.Logger, handler: logging.Handler, name: str) -> None:
    handler.set_name(name)
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
