"""``voxdesk say TEXT`` and ``voxdesk voices``: the assistant's voice from the command line."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path

from voxdesk.app.settings import SpeechSettings, load_settings
from voxdesk.app.speaking.speaker import Speaker
from voxdesk.cli.arg_types import Bounded
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.tts.choice import SPEECH_BACKENDS, synthesizer_for

__all__ = ["add_speech_parsers", "run_say", "run_voices"]

SPEAKING_RATE = Bounded(float, 0.25, 4.0)


def add_speech_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``say`` and ``voices`` commands to ``commands``."""
    say = commands.add_parser(
        "say", help="speak TEXT with the voice of the settings ([speech]), or write it to a WAV file"
    )
    say.add_argument("text", metavar="TEXT")
    _add_voice_options(say)
    say.add_argument("--rate", type=SPEAKING_RATE, metavar="R", help="speaking speed, 0.25-4, 1 the voice's own")
    say.add_argument("--output", "-o", type=Path, metavar="FILE", help="write a WAV file instead of playing")
    voices = commands.add_parser("voices", help="the voices each speech backend offers")
    voices.add_argument("--backend", choices=SPEECH_BACKENDS, help="only this backend (default: all)")


def _add_voice_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", choices=SPEECH_BACKENDS, help="default: the settings' ([speech] backend)")
    parser.add_argument("--voice", metavar="NAME", help="one of `voxdesk voices`; default: the settings'")


def _speech_settings(args: argparse.Namespace) -> SpeechSettings:
    speech = load_settings()[0].speech
    chosen = {name: getattr(args, name, None) for name in ("backend", "voice", "rate")}
    return dataclasses.replace(speech, **{name: value for name, value in chosen.items() if value is not None})


def run_say(args: argparse.Namespace) -> int:
    """Run ``voxdesk say``; a synthesizer or sound output that fails raises for ``main`` to print."""
    speaker = Speaker(_speech_settings(args))
    if args.output is not None:
        import soundfile

        speech = asyncio.run(speaker.synthesizer.synthesize(args.text))
        soundfile.write(str(args.output), speech.samples, speech.rate, subtype="PCM_16")
        print(f"{args.output}: {speech.duration:.1f} s", file=sys.stderr)
        return 0
    asyncio.run(speaker.say(args.text))
    return 0


def run_voices(args: argparse.Namespace) -> int:
    """Run ``voxdesk voices``: each backend's voices, or one line on why it has none here."""
    settings = _speech_settings(argparse.Namespace())
    failed = 0
    for backend in [args.backend] if args.backend else SPEECH_BACKENDS:
        synthesizer = synthesizer_for(backend, url=settings.url, model=settings.model, api_key=settings.api_key)
        try:
            voices = asyncio.run(synthesizer.voices())
        except EngineUnavailable as error:
            print(f"{backend}: {error}", file=sys.stderr)
            failed += 1
            continue
        for voice in voices:
            print(f"{backend:<10} {voice.name:<28} {voice.language:<8} {voice.description}")
    return 1 if args.backend and failed else 0
