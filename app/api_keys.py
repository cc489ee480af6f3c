"""API keys in the system keyring instead of ``settings.toml``.

The remote server's key (``[engine] api_key``), the LLM's (``[actions] llm_api_key``) and the
speech server's (``[speech] api_key``) are kept with the ``keyring`` package (Secret Service on Linux, the macOS
Keychain, the Windows Credential Locker) under the service ``voxdesk``, and written to the file
as ``""``. A key found in plain text in the file is moved into the keyring when the settings
are loaded, and the file is rewritten without it.

Where no keyring backend is available (a headless Linux without a Secret Service, an install
without the package) a warning is logged and keys are kept for the session only, unless
``[keys] store_in_file = true`` says to write them to the file in plain text; a key already in
the file is then left there (and ``store_in_file`` set), so that nothing the user saved is lost.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

from voxdesk.app.settings import Settings, load_settings, save_settings, settings_path

__all__ = ["KEY_NAMES", "SERVICE", "KeyStore", "load_with_keys", "save_with_keys"]

SERVICE = "voxdesk"
KEY_NAMES = ("engine.api_key", "actions.llm_api_key", "speech.api_key")
"""The settings that hold API keys, ``section.field``; also the keyring's user names."""

logger = logging.getLogger(__name__)


class KeyStore:
    """The ``keyring`` package's backend, or none.

    Args:
        backend: a ``keyring`` backend; by default the one ``keyring.get_keyring()`` chooses
            (``PYTHON_KEYRING_BACKEND`` overrides it).
    """

    def __init__(self, backend: Any = None) -> None:
        self.backend = backend if backend is not None else _default_backend()

    @property
    def available(self) -> bool:
        """Whether there is a backend that can keep secrets (keyring's ``fail`` backend cannot)."""
        return self.backend is not None and float(self.backend.priority) > 0

    def get(self, name: str) -> str:
        """The stored key, ``""`` when there is none. Raises ``keyring.errors.KeyringError``."""
        return str(self.backend.get_password(SERVICE, name) or "")

    def put(self, name: str, value: str) -> None:
        """Store ``value``; ``""`` deletes the key. Raises ``keyring.errors.KeyringError``."""
        if value:
            self.backend.set_password(SERVICE, name, value)
        elif self.get(name):
            self.backend.delete_password(SERVICE, name)


def _default_backend() -> Any:
    try:
        import keyring
    except ImportError:
        return None
    return keyring.get_keyring()


def _keyring_error() -> type[Exception]:
    try:
        from keyring.errors import KeyringError
    except ImportError:
        return OSError
    return KeyringError


def _get(settings: Settings, name: str) -> str:
    section, key = name.split(".")
    return str(getattr(getattr(settings, section), key))


def _set(settings: Settings, name: str, value: str) -> None:
    section, key = name.split(".")
    setattr(getattr(settings, section), key, value)


def load_with_keys(path: Path | None = None, store: KeyStore | None = None) -> tuple[Settings, list[str]]:
    """:func:`~voxdesk.app.settings.load_settings`, with the keys read from the keyring.

    Plain-text keys in the file are moved into the keyring and removed from the file; with no
    keyring they stay where they are and ``store_in_file`` is set.
    """
    path = path or settings_path()
    store = store or KeyStore()
    settings, warnings = load_settings(path)
    in_file = [name for name in KEY_NAMES if _get(settings, name)]
    if settings.keys.store_in_file:
        return settings, warnings
    if not store.available:
        if in_file:
            settings.keys.store_in_file = True
            logger.warning("no system keyring is available: the API keys stay in plain text in %s", path)
        return settings, warnings
    try:
        for name in KEY_NAMES:
            if name in in_file:
                store.put(name, _get(settings, name))
            else:
                _set(settings, name, store.get(name))
    except _keyring_error() as exc:
        warnings.append(f"could not read the API keys from the system keyring: {exc}")
        return settings, warnings
    if in_file:
        save_with_keys(settings, path, store)
        logger.info("moved %s from %s into the system keyring", ", ".join(in_file), path)
    return settings, warnings


def save_with_keys(settings: Settings, path: Path | None = None, store: KeyStore | None = None) -> Path:
    """:func:`~voxdesk.app.settings.save_settings`, with the keys in the keyring, not the file.

    Without a keyring (or when it fails) a warning is logged and the keys are not saved, unless
    ``store_in_file`` is set. Returns the path written.
    """
    store = store or KeyStore()
    on_disk = copy.deepcopy(settings)
    keys = {name: _get(settings, name) for name in KEY_NAMES}
    if settings.keys.store_in_file:
        if any(keys.values()):
            logger.warning("API keys are written in plain text to the settings file ([keys] store_in_file)")
        return save_settings(on_disk, path)
    for name in KEY_NAMES:
        _set(on_disk, name, "")
    if not store.available:
        if any(keys.values()):
            logger.warning(
                "no system keyring is available: the API keys are kept for this session only "
                "(set [keys] store_in_file = true to keep them in plain text in the settings file)"
            )
        return save_settings(on_disk, path)
    try:
        for name, value in keys.items():
            store.put(name, value)
    except _keyring_error() as exc:
        logger.warning("could not store the API keys in the system keyring (%s): kept for this session only", exc)
    return save_settings(on_disk, path)
