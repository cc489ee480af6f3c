"""Festival, run as a program (``text2wave``): offline, on Linux, with its HTS voices."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.tts.speech import Speech, Voice, decode_wav, run_synthesizer

__all__ = ["FestivalSynthesizer"]

_INSTALL = "Festival is not installed (Debian and Ubuntu: sudo apt install festival festvox-us-slt-hts)"


class FestivalSynthesizer:
    """Speech from Festival's ``text2wave`` in ``voice`` (``""``: Festival's default) at ``rate``
    times its usual speed."""

    def __init__(self, voice: str = "", rate: float = 1.0) -> None:
        self.voice = voice
        self.rate = rate

    @property
    def where(self) -> str:
        return "Festival"

    async def synthesize(self, text: str) -> Speech:
        """``text`` spoken. Raises :class:`EngineUnavailable` when Festival is missing or fails."""
        program = shutil.which("text2wave")
        if program is None:
            raise EngineUnavailable(_INSTALL)
        if self.voice and not re.fullmatch(r"[\w-]+", self.voice):  # it goes into a Scheme expression
            raise EngineUnavailable(f"no Festival voice {self.voice!r}: `voxdesk voices` lists them")
        setup = [f"(voice_{self.voice})"] if self.voice else []
        setup.append(f"(Parameter.set 'Duration_Stretch {1 / max(0.25, self.rate):.3f})")
        with tempfile.TemporaryDirectory(prefix="voxdesk-festival-") as folder:
            wav = Path(folder) / "speech.wav"  # text2wave seeks to write the header: no pipe
            arguments = [a for expression in setup for a in ("-eval", expression)]
            await run_synthesizer("Festival", [program, *arguments, "-o", str(wav)], text)
            return decode_wav(wav.read_bytes(), "Festival")

    async def voices(self) -> Sequence[Voice]:
        """The voices Festival has installed."""
        program = shutil.which("festival")
        if program is None:
            raise EngineUnavailable(_INSTALL)
        listing = await run_synthesizer("Festival", [program, "--pipe"], "(print (voice.list))")
        return [Voice(name, "en", "Festival voice") for name in re.findall(r"[\w-]+", listing.decode())]
