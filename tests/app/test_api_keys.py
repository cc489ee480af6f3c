"""API keys in a real Secret Service (gnome-keyring on a private D-Bus session bus), never in
settings.toml; an old file's plain-text keys migrated; and the fallback without a keyring."""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from keyring.backends import SecretService, fail

from tests.desktop_rig import SessionBus
from voxdesk.app.api_keys import KeyStore, load_with_keys, save_with_keys
from voxdesk.app.settings import Settings

SERVER_KEY, LLM_KEY = "sk-server-7f3a", "sk-llm-91c2"


@pytest.fixture
def secret_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KeyStore]:
    """gnome-keyring's Secret Service on its own session bus, with an unlocked login keyring in
    ``tmp_path``; keyring's SecretService backend talking to it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir(mode=0o700)
    bus = SessionBus(tmp_path)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.start())
    daemon = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert daemon.stdin is not None
    daemon.stdin.write(b"test-password")
    daemon.stdin.close()
    store = KeyStore(SecretService.Keyring())
    try:
        _wait_until_served(store)
        yield store
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        bus.stop()


def _wait_until_served(store: KeyStore) -> None:
    from keyring.errors import KeyringError

    for _ in range(600):  # 30 s: on a loaded machine the daemon took more than 5 s to register
        try:
            store.get("probe")
            return
        except KeyringError:
            time.sleep(0.05)
    raise AssertionError("gnome-keyring-daemon did not come up on the session bus")


def _with_keys() -> Settings:
    settings = Settings()
    settings.engine.api_key, settings.actions.llm_api_key = SERVER_KEY, LLM_KEY
    return settings


def test_keys_go_to_the_secret_service_and_never_into_the_file(secret_service: KeyStore, tmp_path: Path) -> None:
    assert secret_service.available
    path = save_with_keys(_with_keys(), tmp_path / "settings.toml", secret_service)
    text = path.read_text()
    assert SERVER_KEY not in text and LLM_KEY not in text and 'api_key = ""' in text
    assert (secret_service.get("engine.api_key"), secret_service.get("actions.llm_api_key")) == (SERVER_KEY, LLM_KEY)
    settings, warnings = load_with_keys(path, secret_service)
    assert (settings.engine.api_key, settings.actions.llm_api_key, warnings) == (SERVER_KEY, LLM_KEY, [])
    settings.engine.api_key = ""  # a key cleared in Settings is deleted from the keyring
    save_with_keys(settings, path, secret_service)
    assert secret_service.get("engine.api_key") == "" and secret_service.get("actions.llm_api_key") == LLM_KEY


def test_plain_text_keys_in_an_old_file_are_migrated(secret_service: KeyStore, tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(f'[engine]\nkind = "remote"\napi_key = "{SERVER_KEY}"\n[actions]\nllm_api_key = "{LLM_KEY}"\n')
    settings, warnings = load_with_keys(path, secret_service)
    assert (settings.engine.api_key, settings.actions.llm_api_key, warnings) == (SERVER_KEY, LLM_KEY, [])
    text = path.read_text()
    assert SERVER_KEY not in text and LLM_KEY not in text and 'kind = "remote"' in text
    assert secret_service.get("engine.api_key") == SERVER_KEY
    again, _ = load_with_keys(path, secret_service)  # the next start reads them from the keyring
    assert (again.engine.api_key, again.actions.llm_api_key) == (SERVER_KEY, LLM_KEY)


def test_without_a_keyring_keys_are_for_the_session_only_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = KeyStore(fail.Keyring())
    assert not store.available
    settings = _with_keys()
    with caplog.at_level(logging.WARNING, logger="voxdesk"):
        path = save_with_keys(settings, tmp_path / "settings.toml", store)
    assert SERVER_KEY not in path.read_text() and settings.engine.api_key == SERVER_KEY
    assert "no system keyring is available" in caplog.text and "this session only" in caplog.text
    settings.keys.store_in_file = True  # the user's explicit choice
    assert SERVER_KEY in save_with_keys(settings, path, store).read_text()


def test_without_a_keyring_a_key_already_in_the_file_stays_there(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(f'[engine]\napi_key = "{SERVER_KEY}"\n')
    store = KeyStore(fail.Keyring())
    with caplog.at_level(logging.WARNING, logger="voxdesk"):
        settings, _ = load_with_keys(path, store)
    assert settings.engine.api_key == SERVER_KEY and settings.keys.store_in_file
    assert "stay in plain text" in caplog.text
    save_with_keys(settings, path, store)
    assert SERVER_KEY in path.read_text()


def test_the_default_store_follows_keyrings_own_choice() -> None:
    assert not KeyStore().available  # the test suite runs with PYTHON_KEYRING_BACKEND=fail
