"""Settings: a TOML file that round-trips and survives hand-editing mistakes."""

from __future__ import annotations

import random
from pathlib import Path

from voxdesk.app.settings import Settings, load_settings, save_settings, settings_path
from voxdesk.engine import EngineKind


def test_defaults_when_there_is_no_file(tmp_path: Path) -> None:
    settings, warnings = load_settings(tmp_path / "missing.toml")
    assert settings == Settings() and warnings == []
    assert settings.engine.kind == "builtin" and settings.listening.silence_ms == 600


def test_round_trip_through_the_config_folder() -> None:
    settings = Settings()
    settings.audio.device = "USB Microphone"
    settings.engine.kind, settings.engine.server_url, settings.engine.api_key = EngineKind.REMOTE, "wss://asr:8000", "k"
    settings.listening.silence_ms, settings.history.keep, settings.actions.llm_timeout_s = 450, False, 2.5
    settings.writing.vocabulary, settings.writing.mode_shortcuts = ["Kubernetes"], {"code": "Ctrl+Alt+C"}
    settings.writing.mode_vocabulary, settings.writing.app_modes = {"code": ["kubectl"]}, {"Gedit": "prose"}
    path = save_settings(settings)
    assert path == settings_path() and path.read_text().startswith("[audio]")
    assert load_settings() == (settings, [])


def test_mistakes_fall_back_per_value_and_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        '[engine]\nkind = "cloud"\nserver_url = "ws://h:1"\n'
        '[listening]\nsilence_ms = "long"\n'
        "[actions]\nllm_timeout_s = 3\n"
        "[colour]\ntheme = 1\n"
        "[audio]\nmicrophone = 1\n"
    )
    settings, warnings = load_settings(path)
    assert settings.engine.kind == "builtin" and settings.engine.server_url == "ws://h:1"
    assert settings.listening.silence_ms == 600 and settings.actions.llm_timeout_s == 3.0
    assert warnings == [
        "ignored engine.kind: 'cloud' is not one of builtin, vllm, remote",
        "ignored listening.silence_ms: expected int, got str",
        "ignored unknown setting [colour]",
        "ignored unknown setting audio.microphone",
    ]


def test_lists_and_tables_of_text_take_only_text(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        '[writing]\nvocabulary = ["Kubernetes", 3]\nreplacements = ["a -> b"]\n[writing.mode_shortcuts]\ncode = 5\n'
    )
    settings, warnings = load_settings(path)
    assert (settings.writing.vocabulary, settings.writing.replacements) == ([], ["a -> b"])
    assert settings.writing.mode_shortcuts == {}
    assert warnings == [
        "ignored writing.vocabulary: expected text in each entry, got int",
        "ignored writing.mode_shortcuts: expected text in each entry, got int",
    ]


def test_a_table_of_lists_takes_only_lists_of_text(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        '[writing.mode_vocabulary]\ncode = ["kubectl", "nginx = engine x"]\n'
        '[writing.mode_replacements]\ncode = "dash dash => --"\n'
        '[writing.app_modes]\nSlack = ["message"]\n'
        '[writing.live_typing]\ncode = "yes"\n'
    )
    settings, warnings = load_settings(path)
    assert settings.writing.mode_vocabulary == {"code": ["kubectl", "nginx = engine x"]}
    assert settings.writing.mode_replacements == {} and settings.writing.app_modes == {}
    assert warnings == [
        "ignored writing.mode_replacements: expected a list of text in each entry, got str",
        "ignored writing.app_modes: expected text in each entry, got list",
        "ignored writing.live_typing: expected true or false in each entry, got str",
    ]
    path.write_text('[writing.mode_vocabulary]\ncode = ["kubectl", 3]\n')
    assert load_settings(path)[1] == [
        "ignored writing.mode_vocabulary: expected a list of text in each entry, got list"
    ]


def test_a_broken_file_gives_defaults_and_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("[engine\nkind = ")
    settings, (warning,) = load_settings(path)
    assert settings == Settings() and str(path) in warning and "default settings" in warning


def test_every_engine_kind_round_trips_as_its_plain_string(tmp_path: Path) -> None:
    for kind in EngineKind:
        settings = Settings()
        settings.engine.kind = kind
        path = save_settings(settings, tmp_path / f"{kind}.toml")
        assert f'kind = "{kind.value}"' in path.read_text()
        loaded, warnings = load_settings(path)
        assert warnings == [] and loaded.engine.kind is kind


def test_an_engine_kind_of_the_wrong_type_falls_back(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("[engine]\nkind = 2\n")
    settings, warnings = load_settings(path)
    assert settings.engine.kind is EngineKind.BUILTIN
    assert warnings == ["ignored engine.kind: expected str, got int"]


def test_a_file_that_is_not_utf8_gives_defaults_is_kept_aside_and_named(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    damaged = random.Random(0).randbytes(300)
    path.write_bytes(damaged)
    settings, (warning,) = load_settings(path)
    assert settings == Settings()
    [copy] = tmp_path.glob("settings.toml.damaged-*")
    assert copy.read_bytes() == damaged
    assert str(path) in warning and "not UTF-8" in warning and "default" in warning and str(copy) in warning
    assert load_settings(path)[1] == [warning]  # loading again keeps the one copy
    assert list(tmp_path.glob("settings.toml.damaged-*")) == [copy]


def test_a_latin1_file_keeps_its_readable_lines(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes('[engine]\nlanguage = "français"\nserver_url = "ws://h:1"\n'.encode("latin-1"))
    settings, (warning,) = load_settings(path)
    assert settings.engine.server_url == "ws://h:1" and settings.engine.language == "auto"
    [copy] = tmp_path.glob("settings.toml.damaged-*")
    assert str(path) in warning and "line 2 is not UTF-8" in warning
    assert str(copy) in warning
