"""Each wire core driven the way its server drives it, over a FAKE engine: frames in, the core's
actions carried out, engine output at random moments, and every frame the core writes checked
against what its dialect documents.

A connection is a run of fuzzed frames, then one valid session that must still get its text.
What counts as a failure:

- a crash: any exception out of the core;
- a violation: a frame the dialect does not send, an error code it does not know, more than one
  error for one frame, a malformed frame answered with anything but its documented error, an
  action out of order (audio with no request open, a second request over a running one), audio
  an engine would refuse, or a valid session afterwards that does not get its text.
"""

from __future__ import annotations

import base64
import json
import logging
import random
import time
import traceback
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.engine.fake_scorer import FakeScorer
from tests.engine.wyoming.wire import library_events
from tests.fuzz import frames
from voxdesk.engine.audio.gate import Scorer
from voxdesk.engine.session import check_chunk
from voxdesk.engine.wire.codes import SENT, Dialect, WireCode
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio, ServerCore
from voxdesk.engine.wire.openai.protocol import OpenAIServerProtocol
from voxdesk.engine.wire.realtime.protocol import ServerProtocol
from voxdesk.engine.wire.session_core import SessionCore, StartGeneration
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.engine.wire.wyoming.protocol import Request, StartRequest
from voxdesk.engine.wire.wyoming.protocol import ServerProtocol as WyomingProtocol

__all__ = ["DIALECTS", "FuzzReport", "Violation", "fuzz"]

INFO = ServiceInfo(AsrModel("fuzz", ("en",)), "0", {"name": "fuzz", "url": ""}).to_event()
QUIET = logging.getLogger("tests.fuzz.cores")
QUIET.setLevel(logging.ERROR)  # the cores' warnings about out-of-order events, by the thousand
SECOND = 16_000
MAX_FRAMES_A_CONNECTION = 60


class Violation(AssertionError):
    """The core broke what its dialect documents (without raising)."""


@dataclass
class _Job:
    """The request the FAKE engine is serving."""

    samples: int = 0
    text: str = ""
    ended: bool = False


@dataclass(frozen=True)
class _Limits:
    """A connection's audio limits, in samples; a tight connection reaches them."""

    message: int
    session: int
    pending: int
    tight: bool


def _limits(rng: random.Random) -> _Limits:
    if rng.random() < 0.15:
        return _Limits(message=8_000, session=2 * SECOND, pending=SECOND, tight=True)
    return _Limits(message=3 * SECOND, session=MAX_FRAMES_A_CONNECTION * 4 * SECOND, pending=3 * SECOND, tight=False)


class Driver(ABC):
    """One connection's wire core, the I/O layer around it, and the FAKE engine behind it."""

    dialect: Dialect
    opens: type[object]
    """The core's action that opens a request."""
    core: ServerCore[Any]

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.limits = _limits(rng)
        self.job: _Job | None = None
        self.errors: Counter[str] = Counter()

    @abstractmethod
    def frame(self) -> frames.Frame:
        """The next fuzzed frame for this dialect."""

    @abstractmethod
    def receive(self, frame: str | bytes) -> list[dict[str, Any]]:
        """Hand ``frame`` to the core, carry out its actions; what it wrote, checked."""

    @abstractmethod
    def engine_turn(self) -> None:
        """At random, what an engine does between two frames: text, a failure, the end."""

    @abstractmethod
    def valid_session(self) -> None:
        """One well-formed request on the same connection; raises ``Violation`` unless it gets its text."""

    def _carry_out(self) -> None:
        for action in self.core.events_received():
            if isinstance(action, self.opens):
                self._open()
            elif isinstance(action, AudioReceived):
                self._audio(action.samples)
            elif isinstance(action, EndOfAudio):
                self._end()
            else:
                raise Violation(f"unknown action {action!r}")

    def _open(self) -> None:
        if self.job is not None:
            raise Violation("a second request opened while one runs (its engine session would leak)")
        self.job = _Job()

    def _audio(self, samples: np.ndarray) -> None:
        if self.job is None or self.job.ended:
            raise Violation("audio for no open request")
        check_chunk(samples)  # what every engine's feed refuses: not float32, not 1-D, not finite
        self.job.samples += len(samples)

    def _end(self) -> None:
        if self.job is None or self.job.ended:
            raise Violation("end of audio for no open request")
        self.job.ended = True

    def _error(self, code: str) -> None:
        if code not in {c.value for c in SENT[self.dialect]}:
            raise Violation(f"error code {code!r} is not one the {self.dialect.value} dialect sends")
        self.errors[code] += 1


# vLLM and OpenAI: one JSON text frame per event


class _SessionDriver(Driver):
    opens = StartGeneration
    server_types: frozenset[str]
    reply_types: frozenset[str]
    core: SessionCore

    def receive(self, frame: str | bytes) -> list[dict[str, Any]]:
        if isinstance(frame, bytes):
            self.core.receive_binary(frame)
        else:
            self.core.receive_text(frame)
        self._carry_out()
        written = self._written()
        errors = [w for w in written if w["type"] == "error"]
        if len(errors) > 1:
            raise Violation(f"{len(errors)} errors for one frame")
        if unasked := {w["type"] for w in written} - self.reply_types:
            raise Violation(f"answered a client frame with {sorted(unasked)}")
        expected = self._envelope_error(frame)
        if expected is not None and [self._code(w) for w in written] != [expected.value]:
            raise Violation(f"expected one {expected.value} error, got {written}")
        return written

    @abstractmethod
    def _envelope_error(self, frame: str | bytes) -> WireCode | None:
        """The error a frame that is no event of this dialect must get, if it is one."""

    @abstractmethod
    def _code(self, error: dict[str, Any]) -> str:
        """An ``error`` event's code."""

    def _written(self) -> list[dict[str, Any]]:
        written = []
        for text in self.core.data_to_send():
            if not isinstance(text, str):
                raise Violation(f"a frame that is not text: {text!r:.80}")
            try:
                text.encode()  # what the WebSocket writes: a text frame is UTF-8
            except UnicodeEncodeError as error:
                raise Violation(f"a frame that is not valid UTF-8: {text!r:.200}") from error
            event = json.loads(text)
            if not isinstance(event, dict) or event.get("type") not in self.server_types:
                raise Violation(f"a frame the dialect does not send: {text:.200}")
            if event["type"] == "error":
                self._error(self._code(event))
            written.append(event)
        return written

    def engine_turn(self) -> None:
        job = self.job
        if job is None:
            return
        roll = self.rng.random()
        if (job.ended and roll < 0.5) or roll < 0.003:  # done, or ended by the server (shutdown)
            self._finish()
        elif roll < 0.505:
            self.job = None
            self.core.generation_failed("FAKE engine failure")
            self._carry_out()
            self._written()
        elif roll < 0.8:
            job.text += "tick "
            self.core.send_delta("tick ")
            self._written()
        elif roll < 0.85:
            self.core.send_provisional("ti")
            self._written()

    def _finish(self) -> list[dict[str, Any]]:
        """The FAKE engine ends the running request with its text; what the core wrote."""
        assert self.job is not None
        text, self.job = self.job.text, None
        self.core.send_done(text)
        self._carry_out()  # OpenAI starts the turn that waited behind it
        return self._written()

    def _settle(self) -> list[dict[str, Any]]:
        """Finish every request whose audio has ended (as a real engine would, in time)."""
        written: list[dict[str, Any]] = []
        for _ in range(1_000):
            if self.job is None or not self.job.ended:
                return written
            written += self._finish()
        raise Violation("requests kept ending one after another")

    def _check_replies(self, written: list[dict[str, Any]], what: str) -> bool:
        """Whether a valid session's frames were answered without an error (a tight
        connection may refuse its audio with ``buffer_full``)."""
        codes = [self._code(w) for w in written if w["type"] == "error"]
        allowed = {WireCode.BUFFER_FULL.value, WireCode.INPUT_AUDIO_BUFFER_COMMIT_EMPTY.value}
        if codes and not (self.limits.tight and set(codes) <= allowed):
            raise Violation(f"a valid session's {what} got errors {codes}")
        return not codes


class VllmDriver(_SessionDriver):
    """vLLM's ``/v1/realtime``: :class:`ServerProtocol`."""

    dialect = Dialect.VLLM
    server_types = frozenset(
        {"session.created", "transcription.delta", "transcription.done", "transcription.provisional", "error"}
    )
    reply_types = frozenset({"error"})

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.core = ServerProtocol(
            frames.SERVED_MODEL,
            max_message_samples=self.limits.message,
            max_session_samples=self.limits.session,
            max_pending_samples=self.limits.pending,
            log=QUIET,
        )
        self.core.accept()
        if [w["type"] for w in self._written()] != ["session.created"]:
            raise Violation("no session.created on accepting")

    def frame(self) -> frames.Frame:
        return frames.vllm_frame(self.rng)

    def _envelope_error(self, frame: str | bytes) -> WireCode | None:
        if isinstance(frame, bytes):
            return WireCode.INVALID_EVENT
        try:
            event = json.loads(frame)
        except (ValueError, RecursionError):
            return WireCode.INVALID_JSON
        if not isinstance(event, dict):
            return WireCode.PROCESSING_ERROR  # vLLM's own answer: "'list' object has no attribute 'get'"
        if event.get("type") not in ("session.update", "input_audio_buffer.append", "input_audio_buffer.commit"):
            return WireCode.UNKNOWN_EVENT
        return None

    def _code(self, error: dict[str, Any]) -> str:
        return str(error.get("code"))

    def valid_session(self) -> None:
        self._settle()
        audio = base64.b64encode(frames.pcm16(self.rng, 4_000)).decode()
        written: list[dict[str, Any]] = []
        for event in (
            {"type": "session.update", "model": frames.SERVED_MODEL},
            {"type": "input_audio_buffer.commit"},
            {"type": "input_audio_buffer.append", "audio": audio},
            {"type": "input_audio_buffer.commit", "final": True},
        ):
            written += self.receive(json.dumps(event))
        heard = self._check_replies(written, "frames")
        if self.job is None or not self.job.ended:
            raise Violation("a valid session's final commit did not end its generation")
        if heard and self.job.samples < 4_000:
            raise Violation(f"a valid session's audio did not reach the engine ({self.job.samples} samples)")
        text = self.job.text
        done = [w for w in self._finish() if w["type"] == "transcription.done"]
        if [d["text"] for d in done] != [text]:
            raise Violation(f"a valid session got {done} instead of one done with {text!r}")


_OPENAI_SERVER_TYPES = {
    "session.created",
    "session.updated",
    "input_audio_buffer.committed",
    "input_audio_buffer.cleared",
    "input_audio_buffer.speech_started",
    "input_audio_buffer.speech_stopped",
    "conversation.item.added",
    "conversation.item.done",
    "conversation.item.input_audio_transcription.delta",
    "conversation.item.input_audio_transcription.completed",
    "conversation.item.input_audio_transcription.failed",
    "error",
}


def _fake_scorers(rng: random.Random) -> Callable[[], Scorer] | None:
    """FAKE speech scorers for ``server_vad`` (speech and pauses at random), on some connections."""
    if rng.random() < 0.6:
        return None
    seed = rng.random()

    def scorer() -> Scorer:
        windows = random.Random(seed)
        runs = [np.full(windows.randint(1, 40), windows.choice([0.0, 0.9]), np.float32) for _ in range(200)]
        return FakeScorer(np.concatenate(runs))

    return scorer


class OpenAIDriver(_SessionDriver):
    """OpenAI's Realtime transcription sessions: :class:`OpenAIServerProtocol`, ``server_vad`` on a FAKE scorer."""

    dialect = Dialect.OPENAI
    server_types = frozenset(_OPENAI_SERVER_TYPES)
    reply_types = frozenset(_OPENAI_SERVER_TYPES - {"session.created", "conversation.item.done"})
    _types = ("session.update", "input_audio_buffer.append", "input_audio_buffer.commit", "input_audio_buffer.clear")

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.core = OpenAIServerProtocol(
            frames.SERVED_MODEL,
            scorers=_fake_scorers(rng),
            max_message_samples=self.limits.message,
            max_session_samples=self.limits.session,
            max_pending_samples=self.limits.pending,
            log=QUIET,
        )
        self.core.accept()
        if [w["type"] for w in self._written()] != ["session.created"]:
            raise Violation("no session.created on accepting")

    def frame(self) -> frames.Frame:
        return frames.openai_frame(self.rng)

    def _envelope_error(self, frame: str | bytes) -> WireCode | None:
        try:
            event = json.loads(frame)
        except (ValueError, RecursionError):
            return WireCode.INVALID_JSON
        if not isinstance(event, dict):
            return WireCode.INVALID_JSON
        if not isinstance(event.get("type"), str):
            return WireCode.MISSING_REQUIRED_PARAMETER
        if event["type"] not in self._types:
            return WireCode.UNKNOWN_EVENT
        return None

    def _code(self, error: dict[str, Any]) -> str:
        body = error.get("error")
        return str(body.get("code")) if isinstance(body, dict) else "(no error object)"

    def valid_session(self) -> None:
        written = self._settle()
        audio_input = {"format": {"type": "audio/pcm", "rate": 24_000}, "turn_detection": None}
        update = {"type": "session.update", "session": {"type": "transcription", "audio": {"input": audio_input}}}
        written = self.receive(json.dumps(update))
        if [w["type"] for w in written] != ["session.updated"]:
            raise Violation(f"a valid session.update got {written}")
        written = self.receive(json.dumps({"type": "input_audio_buffer.clear"}))
        if [w["type"] for w in written] != ["input_audio_buffer.cleared"]:
            raise Violation(f"a valid clear got {written}")
        audio = base64.b64encode(frames.pcm16(self.rng, 6_000)).decode()
        written = self.receive(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
        written += self.receive(json.dumps({"type": "input_audio_buffer.commit"}))
        if not self._check_replies(written, "append and commit"):
            return  # a tight connection refused the audio, as documented
        (item,) = [w["item_id"] for w in written if w["type"] == "input_audio_buffer.committed"]
        for _ in range(1_000):
            for event in self._settle():
                if event["type"].endswith("transcription.completed") and event["item_id"] == item:
                    return
            if self.job is None or not self.job.ended:
                break
        raise Violation(f"a valid session's item {item} never completed")


# Wyoming: a byte stream of framed events


class WyomingDriver(Driver):
    """Wyoming speech-to-text: its :class:`~voxdesk.engine.wire.wyoming.protocol.ServerProtocol`.

    Well-framed events of any content must leave the connection usable; bytes that break
    the framing must close it (at the latest at the end of the stream), as documented."""

    dialect = Dialect.WYOMING
    opens = StartRequest
    core: WyomingProtocol
    server_types = frozenset(
        {"info", "pong", "transcript-start", "transcript-chunk", "transcript", "transcript-stop", "error"}
    )
    reply_types = server_types - {"transcript-chunk"}

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.core = WyomingProtocol(INFO, max_connection_samples=self.limits.session, log=QUIET)
        self.stopped = 0  # audio-stops whose transcript is due

    def frame(self) -> frames.Frame:
        return frames.wyoming_event(self.rng)

    def receive(self, frame: str | bytes) -> list[dict[str, Any]]:
        written = self._feed(frame.encode() if isinstance(frame, str) else frame)
        if self.core.closed:
            raise Violation("a well-framed event closed the connection")
        if len([w for w in written if w["type"] == "error"]) > 1:
            raise Violation("more than one error for one event")
        if unasked := {w["type"] for w in written} - self.reply_types:
            raise Violation(f"answered a client event with {sorted(unasked)}")
        return written

    def close(self, broken: bytes) -> None:
        """End the stream with ``broken`` bytes (or none), then EOF: the core must be closed and silent."""
        self._feed(broken)
        self.core.receive_data(b"")
        self._carry_out()
        self._written()
        if not self.core.closed:
            raise Violation("the stream ended but the connection is not closed")
        self.core.receive_data(b'{"type": "describe"}\n')
        if self.core.data_to_send() or self.core.events_received():
            raise Violation("a closed connection still answers")

    def _feed(self, data: bytes) -> list[dict[str, Any]]:
        """``data`` to the core in pieces of any size, as TCP may deliver it; what it wrote."""
        written: list[dict[str, Any]] = []
        while data:
            cut = self.rng.choice([len(data), len(data), 1, self.rng.randint(1, len(data))])
            self.core.receive_data(data[:cut])
            data = data[cut:]
            self._carry_out()
            written += self._written()
        return written

    def _written(self) -> list[dict[str, Any]]:
        written = []
        for event in library_events(self.core.data_to_send()):  # read back by the official library
            if event.type not in self.server_types:
                raise Violation(f"an event the dialect does not send: {event.type!r}")
            if event.type == "error":
                self._error(str(event.data.get("code")))
            written.append({"type": event.type, **event.data})
        return written

    def engine_turn(self) -> None:
        job = self.job
        if job is None:
            return
        roll = self.rng.random()
        if job.ended and roll < 0.5:
            self._finish()
        elif roll < 0.51:
            self.core.send_error(WireCode.PROCESSING_ERROR, "FAKE engine failure")  # the transcript still follows
            self._written()
        elif roll < 0.8:
            job.text += "tick "
            self.core.send_text("tick ")
            self._written()

    def _finish(self) -> list[dict[str, Any]]:
        assert self.job is not None and self.job.ended
        text, self.job = self.job.text, None
        self.core.send_transcript(text)
        written = self._written()
        if [w["type"] for w in written if w["type"].startswith("transcript")][-2:] != ["transcript", "transcript-stop"]:
            raise Violation(f"a request ended without transcript and transcript-stop: {written}")
        return written

    def valid_session(self) -> None:
        if self.job is not None and self.job.ended:
            self._finish()
        events: list[tuple[str, dict[str, Any], bytes]] = [
            ("audio-start", {"rate": 16_000, "width": 2, "channels": 1}, b""),
            ("audio-chunk", {"rate": 16_000, "width": 2, "channels": 1}, frames.pcm16(self.rng, 4_000)),
            ("audio-stop", {}, b""),
        ]
        if self.core.request is Request.IDLE:
            events.insert(0, ("transcribe", {"language": "en"}, b""))
        written = []
        for kind, data, payload in events:
            header = {"type": kind, "data": data, "payload_length": len(payload)}
            written += self.receive(json.dumps(header).encode() + b"\n" + payload)
        codes = [w["code"] for w in written if w["type"] == "error"]
        if codes and not (self.limits.tight and set(codes) <= {WireCode.BUFFER_FULL.value}):
            raise Violation(f"a valid request got errors {codes}")
        if self.job is None or not self.job.ended:
            raise Violation("a valid request's audio-stop did not end it")
        self._finish()


DIALECTS: dict[str, Callable[[random.Random], Driver]] = {
    "vllm": VllmDriver,
    "openai": OpenAIDriver,
    "wyoming": WyomingDriver,
}


@dataclass
class FuzzReport:
    """What a fuzz run fed one core, and what went wrong."""

    dialect: str
    seed: int
    frames: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    connections: int = 0
    valid_sessions: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        """Frames fed."""
        return sum(self.frames.values())

    def summary(self) -> str:
        """One paragraph for the log and the README."""
        kinds = ", ".join(f"{kind} {count}" for kind, count in self.frames.most_common())
        codes = ", ".join(f"{code} {count}" for code, count in self.errors.most_common())
        noise = sum(count for kind, count in self.frames.items() if kind in frames.NOISE)
        return (
            f"{self.dialect}: {self.total} frames, {self.total - noise} structured and {noise} random "
            f"({kinds}) over {self.connections} connections in "
            f"{self.seconds:.1f} s; {self.valid_sessions} valid sessions after them got their text; "
            f"errors answered: {codes}; failures: {len(self.failures)}"
        )


_NOT_FUZZ = ("valid session", "end of stream")


def _connection(driver: Driver, rng: random.Random, fed: list[frames.Frame]) -> None:
    """One connection: fuzzed frames, a valid session, and for Wyoming the end of the stream
    (after bytes that break its framing, on half the connections); each step noted in ``fed``."""
    for _ in range(rng.randint(1, MAX_FRAMES_A_CONNECTION)):
        kind, frame = driver.frame()
        fed.append((kind, frame))
        driver.receive(frame)
        driver.engine_turn()
    fed.append(("valid session", b""))
    driver.valid_session()
    if isinstance(driver, WyomingDriver):
        broken = frames.wyoming_broken(rng) if rng.random() < 0.5 else ("end of stream", b"")
        fed.append(broken)
        driver.close(bytes(broken[1]))


def fuzz(dialect: str, count: int, seed: int, *, keep: int = 5) -> FuzzReport:
    """Feed at least ``count`` fuzzed frames to fresh cores of ``dialect``, a connection at a
    time, each ended by a valid session; the first ``keep`` failures are described in full."""
    report = FuzzReport(dialect, seed)
    started = time.perf_counter()
    while report.total < count:
        connection = report.connections
        report.connections += 1
        rng = random.Random(f"{seed}:{dialect}:{connection}")  # each connection reproducible alone
        fed: list[frames.Frame] = []
        try:
            driver = DIALECTS[dialect](rng)
            _connection(driver, rng, fed)
            report.valid_sessions += 1
            report.errors.update(driver.errors)
        except Exception as failure:  # a crash or a violation: either fails the run
            kind, frame = fed[-1] if fed else ("setup", b"")
            where = f"seed {seed}, {dialect} connection {connection}, step {len(fed) - 1} ({kind}): {frame!r:.300}"
            details = "".join(traceback.format_exception(failure)) if len(report.failures) < keep else ""
            report.failures.append(f"{where}\n{details}")
        report.frames.update(kind for kind, _ in fed if kind not in _NOT_FUZZ)
    report.seconds = time.perf_counter() - started
    return report
