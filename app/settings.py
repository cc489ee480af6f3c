"""User settings: one TOML file in the platform's config directory.

``load_settings`` never fails on a bad file: unknown keys and values of the wrong type are
reported as warnings and replaced by defaults, so a hand-edited typo cannot stop the app from
starting. ``save_settings`` writes atomically (temporary file, then rename).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
import tempfile
import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import platformdirs
import tomli_w

from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.tts.choice import SPEECH_BACKENDS

APP_NAME = "voxdesk"
ACTION_MODES = ("command", "dictation")
LLM_RUNTIMES = ("server", "vllm")  # the assistant's LLM: an OpenAI-compatible server, or vLLM in this process
WHISPER_DEVICES = ("auto", "cpu", "cuda")  # as voxdesk.engine.whisper.models.DEVICES
SERVER_DIALECTS = ("vllm", "openai")  # a remote server's protocol: vLLM's /v1/realtime, or OpenAI Realtime


def config_dir() -> Path:
    """Where settings and the user's own command file live (``VOXDESK_CONFIG_DIR`` overrides)."""
    return Path(os.environ.get("VOXDESK_CONFIG_DIR") or platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    """Where the history database lives (``VOXDESK_DATA_DIR`` overrides)."""
    return Path(os.environ.get("VOXDESK_DATA_DIR") or platformdirs.user_data_dir(APP_NAME))


def settings_path() -> Path:
    return config_dir() / "settings.toml"


@dataclass
class AudioSettings:
    device: str = ""  # input device name; "" is the system default


@dataclass
class EngineSettings:
    kind: EngineKind = EngineKind.BUILTIN
    whisper_model: str = "tiny.en"  # built-in engine: tiny.en (bundled), a model folder or name
    device: str = "auto"  # built-in engine: one of WHISPER_DEVICES
    language: str = "auto"  # built-in engine: a Whisper language code, or auto
    vllm_model: str = "mistralai/Voxtral-Mini-4B-Realtime-2602"
    server_dialect: str = "vllm"  # one of SERVER_DIALECTS; a tcp:// server_url is Wyoming whatever it says
    server_url: str = "ws://127.0.0.1:8000"  # several: comma-separated, failed over in that order
    server_model: str = ""  # "" asks the server for its only model
    api_key: str = ""


@dataclass
class ListeningSettings:
    silence_ms: int = 600  # pause that ends an utterance
    toggle_shortcut: str = "Ctrl+Alt+Space"  # global where the platform allows it
    hold_to_talk_key: str = "F9"  # global where the platform allows it; "" turns it off
    overlay: bool = True  # a small always-on-top box with the text while a shortcut dictates


@dataclass
class HistorySettings:
    keep: bool = True  # False: nothing is written to the history store
    retention_days: int = 0  # 0 keeps everything


@dataclass
class ActionSettings:
    mode: str = "command"  # one of ACTION_MODES
    wake_phrase: str = ""  # "" means every utterance may be a command
    search_url: str = "https://duckduckgo.com/?q={query}"
    llm_fallback: bool = False
    llm_runtime: str = "server"  # one of LLM_RUNTIMES: an OpenAI-compatible server, or vllm in this process
    llm_url: str = "http://127.0.0.1:8000/v1"
    llm_model: str = ""  # the server's model ("" asks for its only one); for vllm the folder or hub id to load
    llm_tool_parser: str = "hermes"  # for vllm: the tool-call parser of the model's chat template
    llm_api_key: str = ""
    llm_timeout_s: float = 5.0


@dataclass
class WritingSettings:
    mode: str = "plain"  # the mode dictation is written in (voxdesk.app.writing.modes)
    vocabulary: list[str] = field(default_factory=list)  # entries, each a line of a vocabulary file
    replacements: list[str] = field(default_factory=list)  # rules, each a line of a replacements file
    # A mode's name -> a system-wide shortcut that writes the next utterances in it (pressed again: by the app).
    mode_shortcuts: dict[str, str] = field(default_factory=dict)
    # A mode's name -> vocabulary entries and replacement rules of that mode only, after the ones above.
    mode_vocabulary: dict[str, list[str]] = field(default_factory=dict)
    mode_replacements: dict[str, list[str]] = field(default_factory=dict)
    # An application's window class or instance -> the mode its dictation is written in (before the built-in ones).
    app_modes: dict[str, str] = field(default_factory=dict)
    # A mode's name -> whether it types while you speak (absent: the mode's own choice; code's is off).
    live_typing: dict[str, bool] = field(default_factory=dict)
    # A mode's name -> how the LLM cleans up its text: none, light, formal or custom (with a prompt below).
    cleanup: dict[str, str] = field(default_factory=dict)
    cleanup_prompts: dict[str, str] = field(default_factory=dict)


@dataclass
class SpeechSettings:
    backend: str = "espeak-ng"  # one of SPEECH_BACKENDS: espeak-ng here, or an OpenAI-compatible /v1/audio/speech
    voice: str = ""  # the backend's voice ("" its default: espeak-ng en-us, OpenAI alloy); `voxdesk voices` lists them
    rate: float = 1.0  # speaking speed, 1.0 the voice's own
    volume: float = 1.0  # 0.0 silent to 1.0 full
    url: str = "http://127.0.0.1:8880/v1"  # for backend "openai"
    model: str = "tts-1"  # for backend "openai"
    api_key: str = ""  # for backend "openai"
    # What is said aloud: answers to questions (and the LLM's), actions waiting for a yes or no,
    # timer alarms, and errors that stop an action.
    answers: bool = True
    confirmations: bool = True
    alarms: bool = True
    errors: bool = True
    in_dictation: bool = False  # whether replies are spoken in dictation mode too (alarms always are)
    max_sentences: int = 2  # a longer reply is cut there, with "more on screen"


@dataclass
class KeySettings:
    # API keys live in the system keyring (voxdesk.app.api_keys); where there is none they are kept
    # for the session only, unless this says to write them here in plain text.
    store_in_file: bool = False


@dataclass
class Settings:
    audio: AudioSettings = field(default_factory=AudioSettings)
    engine: EngineSettings = field(default_factory=EngineSettings)
    listening: ListeningSettings = field(default_factory=ListeningSettings)
    history: HistorySettings = field(default_factory=HistorySettings)
    actions: ActionSettings = field(default_factory=ActionSettings)
    keys: KeySettings = field(default_factory=KeySettings)
    writing: WritingSettings = field(default_factory=WritingSettings)
    speech: SpeechSettings = field(default_factory=SpeechSettings)


_CHOICES = {
    ("actions", "mode"): ACTION_MODES,
    ("actions", "llm_runtime"): LLM_RUNTIMES,
    ("engine", "device"): WHISPER_DEVICES,
    ("engine", "server_dialect"): SERVER_DIALECTS,
    ("speech", "backend"): SPEECH_BACKENDS,
}


def _coerce(value: Any, default: Any, hint: Any) -> Any:
    """``value`` as the type of ``default`` (its annotation: ``hint``); TypeError for a wrong type,
    ValueError for a bad choice."""
    if isinstance(default, StrEnum):
        if isinstance(value, str):
            try:
                return type(default)(value)
            except ValueError:
                raise ValueError(f"{value!r} is not one of {', '.join(type(default))}") from None
        raise TypeError(f"expected str, got {type(value).__name__}")
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(value, type(default)):
        if isinstance(value, list | dict) and (odd := _odd_entries(value, hint)):
            entry = get_args(hint)[-1]
            wanted = {str: "text", bool: "true or false"}.get(entry, "a list of text")
            raise TypeError(f"expected {wanted} in each entry, got {type(odd[0]).__name__}")
        return value
    raise TypeError(f"expected {type(default).__name__}, got {type(value).__name__}")


def _odd_entries(container: list[Any] | dict[Any, Any], hint: Any) -> list[Any]:
    """The entries of a list, or the keys and values of a table, that are not what ``hint``
    says it holds (text, lists of text, or true and false)."""
    entry = get_args(hint)[-1]
    if isinstance(container, dict):
        odd_keys = [key for key in container if not isinstance(key, str)]
        return odd_keys + [value for value in container.values() if not _fits(value, entry)]
    return [value for value in container if not _fits(value, entry)]


def _fits(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if origin is None:
        return isinstance(value, hint)
    return isinstance(value, origin) and not _odd_entries(value, hint)


def settings_from_dict(data: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Settings from parsed TOML, and one warning per key that was ignored."""
    settings = Settings()
    warnings: list[str] = []
    sections = {f.name for f in dataclasses.fields(settings)}  # not getattr alone: [__class__] is no section
    for section_name, section_data in data.items():
        if section_name not in sections or not isinstance(section_data, dict):
            warnings.append(f"ignored unknown setting [{_shown(section_name)}]")
            continue
        section = getattr(settings, section_name)
        known = {f.name for f in dataclasses.fields(section)}
        hints = get_type_hints(type(section))
        for key, value in section_data.items():
            if key not in known:
                warnings.append(f"ignored unknown setting {section_name}.{_shown(key)}")
                continue
            try:
                coerced = _coerce(value, getattr(section, key), hints[key])
            except (TypeError, ValueError) as error:
                warnings.append(f"ignored {section_name}.{key}: {error}")
                continue
            choices = _CHOICES.get((section_name, key))
            if choices and coerced not in choices:
                warnings.append(f"ignored {section_name}.{key}: {coerced!r} is not one of {', '.join(choices)}")
                continue
            setattr(section, key, coerced)
    return settings, warnings


def _shown(name: str) -> str:
    """A name from the file as it can be shown on one line (quoted where it holds a newline or the like)."""
    return name if name.isprintable() else repr(name)


def load_settings(path: Path | None = None) -> tuple[Settings, list[str]]:
    """Settings from ``path`` (default: :func:`settings_path`); defaults when it does not exist.

    A file that is not TOML, or not UTF-8 text, is copied aside first (the next save would
    overwrite it) and the warning says where: lines that are not UTF-8 are skipped, their
    settings keep their defaults, and a file that still does not parse gives all defaults.
    """
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Settings(), []
    except OSError as error:
        return Settings(), [f"could not read {path} ({error}); using default settings"]
    text, unreadable = _utf8_lines(raw)
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as error:
        reason = "values nested too deeply" if isinstance(error, RecursionError) else str(error)
        what = f"{_not_utf8(unreadable)}; {reason}" if unreadable else reason
        return Settings(), [f"could not read {path} ({what}); using default settings; {_keep_aside(path, raw)}"]
    settings, warnings = settings_from_dict(data)
    if unreadable:
        skipped = f"{_not_utf8(unreadable)}, skipped: what they set keeps its default"
        warnings.insert(0, f"{path}: {skipped}; {_keep_aside(path, raw)}")
    return settings, warnings


def _utf8_lines(raw: bytes) -> tuple[str, list[int]]:
    """``raw`` as text with each line that is not UTF-8 left empty (so line numbers stay), and those lines' numbers."""
    lines: list[str] = []
    unreadable: list[int] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append("")
            unreadable.append(number)
    return "\n".join(lines), unreadable


def _not_utf8(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:5]) + (f" and {len(lines) - 5} more" if len(lines) > 5 else "")
    return f"line {shown} is not UTF-8 text" if len(lines) == 1 else f"lines {shown} are not UTF-8 text"


def _keep_aside(path: Path, raw: bytes) -> str:
    """Copy a damaged settings file next to itself, once per content; says where, for the warning."""
    for earlier in sorted(path.parent.glob(f"{path.name}.damaged-*")):
        with contextlib.suppress(OSError):
            if earlier.read_bytes() == raw:
                return f"the damaged file is kept as {earlier}"
    copy = damaged_copy_path(path)
    try:
        copy.write_bytes(raw)
    except OSError as error:
        return f"could not keep a copy of the damaged file ({error})"
    return f"the damaged file is kept as {copy}"


def damaged_copy_path(path: Path) -> Path:
    """A free name beside ``path`` for keeping a damaged copy of it: ``NAME.damaged-<local time>``."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    copy = path.with_name(f"{path.name}.damaged-{stamp}")
    if copy.exists():
        copy = path.with_name(f"{copy.name}-{datetime.datetime.now():%f}")
    return copy


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write ``settings`` atomically; returns the path written."""
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = tomli_w.dumps(dataclasses.asdict(settings)).encode()
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".settings-", delete=False) as file:
        file.write(payload)
        temporary = Path(file.name)
    os.replace(temporary, path)
    return path
