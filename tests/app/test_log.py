"""Logging setup: one set of handlers on ``voxdesk``, fed by every Voxdesk logger."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from voxdesk.app.log import configure_logging, log_folder

VOXDESK = logging.getLogger("voxdesk")


def test_configuring_twice_adds_each_handler_once(tmp_path: Path) -> None:
    configure_logging("info", log_file=tmp_path / "voxdesk.log")
    configure_logging("debug", log_file=tmp_path / "voxdesk.log")
    configure_logging()
    assert len(VOXDESK.handlers) == 2


def test_records_from_every_part_reach_the_one_handler(tmp_path: Path) -> None:
    log_file = tmp_path / "voxdesk.log"
    configure_logging("info", log_file=log_file)
    for name in ("voxdesk.server.realtime.server", "voxdesk.app.listening", "voxdesk.actions"):
        logging.getLogger(name).info("hello from %s", name)
    text = log_file.read_text(encoding="utf-8")
    for name in ("voxdesk.server.realtime.server", "voxdesk.app.listening", "voxdesk.actions"):
        assert f"INFO {name}: hello from {name}" in text


def test_the_level_comes_from_the_argument_then_voxdesk_log_then_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    configure_logging()
    assert VOXDESK.level == logging.WARNING
    configure_logging(default="INFO")
    assert VOXDESK.level == logging.INFO
    monkeypatch.setenv("VOXDESK_LOG", "debug")
    configure_logging(default="INFO")
    assert VOXDESK.level == logging.DEBUG
    configure_logging("error")
    assert VOXDESK.level == logging.ERROR


def test_an_unknown_level_falls_back_to_the_default_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VOXDESK_LOG", "chatty")
    configure_logging()
    assert VOXDESK.level == logging.WARNING
    assert "unknown log level 'CHATTY'" in capsys.readouterr().err


def test_the_file_handler_writes_the_file(tmp_path: Path) -> None:
    log_file = tmp_path / "logs" / "voxdesk.log"
    configure_logging("warning", log_file=log_file)
    logging.getLogger("voxdesk.desktop").warning("something to keep")
    logging.getLogger("voxdesk.desktop").info("below the level")
    text = log_file.read_text(encoding="utf-8")
    assert "WARNING voxdesk.desktop: something to keep" in text
    assert "below the level" not in text


def test_the_log_folder_follows_voxdesk_log_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXDESK_LOG_DIR", str(tmp_path))
    assert log_folder() == tmp_path
    monkeypatch.delenv("VOXDESK_LOG_DIR")
    assert "voxdesk" in log_folder().parts
