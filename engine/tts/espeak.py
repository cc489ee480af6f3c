"""espeak-ng, run as a program: offline, in every Linux distribution, about a hundred languages."""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.tts.speech import Speech, Voice, decode_wav, run_synthesizer

__all__ = ["DEFAULT_VOICE", "EspeakSynthesizer", "parse_voices"]

DEFAULT_VOICE = "en-us"
WORDS_PER_MINUTE = 175
"""espeak-ng's own speed, which rate 1.0 keeps."""


class EspeakSynthesizer:
    """Speech from the ``espeak-ng`` program in ``voice`` (``""``: American English) at ``rate``
    times its usual speed."""

    def __init__(self, voice: str = "", rate: float = 1.0, program: str = "espeak-ng") -> None:
        self.voice = voice or DEFAULT_VOICE
        self.rate = rate
        self.program = program

    @property
    def where(self) -> str:
        return "espeak-ng"

    async def synthesize(self, text: str) -> Speech:
        """``text`` spoken. Raises :class:`EngineUnavailable` when espeak-ng is missing or fails."""
        speed = str(max(80, min(500, round(WORDS_PER_MINUTE * self.rate))))
        wav = await self._run("-v", self.voice, "-s", speed, "--stdout", "--", text)
        return decode_wav(wav, "espeak-ng")

    async def voices(self) -> Sequence[Voice]:
        """Every voice espeak-ng has."""
        return parse_voices((await self._run("--voices")).decode("utf-8", "replace"))

    async def _run(self, *arguments: str) -> bytes:
        program = shutil.which(self.program)
        if program is None:
            raise EngineUnavailable(
                "espeak-ng is not installed (Debian and Ubuntu: sudo apt install espeak-ng; Fedora: sudo dnf "
                "install espeak-ng)"
            )
        return await run_synthesizer("espeak-ng", [program, *arguments], "")


def parse_voices(listing: str) -> list[Voice]:
    """``espeak-ng --voices``' table (Pty, Language, Age/Gender, VoiceName, File, ...) as voices."""
    voices = []
    for line in listing.splitlines()[1:]:
        columns = line.split()
        if len(columns) >= 5:
            language, name = columns[1], columns[3].replace("_", " ")
            voices.append(Voice(language, language, name))
    return voices
