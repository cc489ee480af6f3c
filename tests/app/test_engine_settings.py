"""``[engine] whisper_model`` and ``device``: saved, loaded, checked and described."""

from __future__ import annotations

from pathlib import Path

from voxdesk.app.engines import build_engine, describe_engine
from voxdesk.app.settings import EngineSettings, Settings, load_settings, save_settings, settings_from_dict
from voxdesk.engine.whisper.builtin import BuiltinEngine


def test_whisper_model_and_device_round_trip(tmp_path: Path) -> None:
    settings = Settings()
    settings.engine.whisper_model = "/models/faster-whisper-small"
    settings.engine.device = "cuda"
    settings.engine.language = "de"
    loaded, warnings = load_settings(save_settings(settings, tmp_path / "settings.toml"))
    assert warnings == []
    engine = loaded.engine
    assert (engine.whisper_model, engine.device, engine.language) == ("/models/faster-whisper-small", "cuda", "de")


def test_defaults_are_the_bundled_model_on_the_best_device() -> None:
    defaults = EngineSettings()
    assert (defaults.whisper_model, defaults.device, defaults.language) == ("tiny.en", "auto", "auto")


def test_bad_values_fall_back_with_a_warning() -> None:
    settings, warnings = settings_from_dict({"engine": {"device": "gpu", "whisper_model": 3}})
    assert (settings.engine.whisper_model, settings.engine.device) == ("tiny.en", "auto")
    assert warnings == [
        "ignored engine.device: 'gpu' is not one of auto, cpu, cuda",
        "ignored engine.whisper_model: expected str, got int",
    ]


def test_the_chosen_model_and_device_reach_the_engine_and_its_description() -> None:
    choice = EngineSettings(whisper_model="base.en", device="cpu", language="en")
    engine = build_engine(choice)
    assert isinstance(engine, BuiltinEngine)
    decoder = engine.settings.decoder
    assert (decoder.model, decoder.device, decoder.language) == ("base.en", "cpu", "en")
    assert describe_engine(choice) == "built-in engine (Whisper base.en, device cpu)"
