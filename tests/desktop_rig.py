"""A headless desktop for tests: a virtual PulseAudio microphone and an Xvfb display.

The microphone is a PulseAudio daemon (user mode, no sound card) with a null sink whose
monitor is remapped as the default source. Whatever is played into the sink is what PortAudio
records from the default input, through ALSA's ``pulse`` plugin. A silent keep-alive stream
keeps each sink rendering in 20 ms blocks; an idle null sink renders in 2 s bursts.

``PULSE_SERVER`` must be in the environment before PortAudio initializes (it lists devices
once), so the rig starts before the test session imports sounddevice.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

SINK = "vmic_sink"
SOURCE = "vmic"
SPEAKER = "speaker"


class RigUnavailable(RuntimeError):
    """The tools for the rig are not installed or did not start."""


def _stop(process: subprocess.Popen[Any] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class VirtualMic:
    """A PulseAudio daemon whose default source is fed by what :meth:`play` plays.

    Its default sink is a second null sink, the loudspeaker: what Voxdesk plays goes there, not
    into the microphone, and :meth:`record_speaker` records it from its monitor.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.socket = directory / "native"
        self._daemon: subprocess.Popen[bytes] | None = None
        self._keepalives: list[subprocess.Popen[bytes]] = []
        self._players: list[subprocess.Popen[bytes]] = []

    @property
    def environment(self) -> dict[str, str]:
        return {
            "PULSE_SERVER": f"unix:{self.socket}",
            "PULSE_COOKIE": str(self.directory / "home" / ".config" / "pulse" / "cookie"),
        }

    def _pactl(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["pactl", *args], env={**os.environ, **self.environment}, capture_output=True, timeout=10)

    def start(self) -> None:
        """Start the daemon and the keep-alive; raises RigUnavailable when it cannot."""
        for tool in ("pulseaudio", "pactl", "pacat", "paplay"):
            if shutil.which(tool) is None:
                raise RigUnavailable(f"{tool} is not installed (scripts/setup.sh --test installs it)")
        (self.directory / "home").mkdir(parents=True, exist_ok=True)
        runtime = self.directory / "xdg"
        runtime.mkdir(exist_ok=True)
        runtime.chmod(0o700)
        self.socket.unlink(missing_ok=True)
        script = self.directory / "vmic.pa"
        script.write_text(
            f"load-module module-native-protocol-unix auth-anonymous=1 socket={self.socket}\n"
            f"load-module module-null-sink sink_name={SINK} rate=48000"
            " sink_properties=device.description=VirtualMicSink\n"
            f"load-module module-remap-source master={SINK}.monitor source_name={SOURCE}"
            " source_properties=device.description=VirtualMic\n"
            f"load-module module-null-sink sink_name={SPEAKER} rate=48000"
            " sink_properties=device.description=VirtualLoudspeaker\n"
            f"set-default-sink {SPEAKER}\nset-default-source {SOURCE}\n"
        )
        env = {**os.environ, "HOME": str(self.directory / "home"), "XDG_RUNTIME_DIR": str(runtime)}
        log = self.directory / "pulse.log"
        # -n: nothing from default.pa (no udev, card detection, D-Bus, X11 modules).
        self._daemon = subprocess.Popen(
            ["pulseaudio", "-n", "-F", str(script), "--daemonize=no", "--use-pid-file=no", "--exit-idle-time=-1",
             "--realtime=no", "--high-priority=no", f"--log-target=file:{log}"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while self._pactl("info").returncode != 0:
            if self._daemon.poll() is not None or time.monotonic() > deadline:
                self.stop()
                details = log.read_text() if log.exists() else ""
                raise RigUnavailable(f"pulseaudio did not start: {details[-500:]}")
            time.sleep(0.1)
        self._keepalives = [
            subprocess.Popen(
                ["pacat", "--playback", f"--device={sink}", "--latency-msec=20", "--raw", "--format=s16le",
                 "--rate=48000", "--channels=2", f"--client-name={sink}-keepalive", "/dev/zero"],
                env={**os.environ, **self.environment}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for sink in (SINK, SPEAKER)
        ]  # fmt: skip
        time.sleep(1.0)  # the sink needs about a second to switch to the low-latency block size

    @property
    def running(self) -> bool:
        return self._daemon is not None and self._daemon.poll() is None

    def play(self, path: Path) -> subprocess.Popen[bytes]:
        """Start playing a sound file into the microphone; returns the player process."""
        player = subprocess.Popen(
            ["paplay", f"--device={SINK}", str(path)],
            env={**os.environ, **self.environment}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self._players.append(player)
        return player

    def record_speaker(self, path: Path) -> subprocess.Popen[bytes]:
        """Start recording what the loudspeaker plays to a WAV file (16 kHz mono); stop the
        returned process (terminate) to end the file."""
        recorder = subprocess.Popen(
            ["parec", f"--device={SPEAKER}.monitor", "--file-format=wav", "--format=s16le", "--rate=16000",
             "--channels=1", "--latency-msec=20", str(path)],
            env={**os.environ, **self.environment}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self._players.append(recorder)
        deadline = time.monotonic() + 10
        while f"{SPEAKER}.monitor" not in self._recording_sources():  # what is played from now on is kept
            if recorder.poll() is not None or time.monotonic() > deadline:
                raise RigUnavailable(f"parec did not start recording the loudspeaker: {recorder.stderr}")
            time.sleep(0.02)
        return recorder

    @contextlib.contextmanager
    def echo_path(self) -> Iterator[None]:
        """While inside: what the loudspeaker plays is also heard by the microphone, as from a
        laptop's speakers (a loopback from the loudspeaker's monitor into the microphone's sink)."""
        loaded = self._pactl(
            "load-module", "module-loopback", f"source={SPEAKER}.monitor", f"sink={SINK}", "latency_msec=20"
        )
        if loaded.returncode != 0:
            raise RigUnavailable(f"no echo path: {loaded.stderr.decode().strip()}")
        try:
            yield
        finally:
            self._pactl("unload-module", loaded.stdout.decode().strip())

    def finish_recording(self, recorder: subprocess.Popen[bytes], path: Path, quiet_s: float = 0.5) -> None:
        """End a :meth:`record_speaker` recording once what was played has reached the file: it
        holds sound, then ``quiet_s`` of silence (the loudspeaker renders silence in 20 ms blocks
        when nothing plays)."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            samples = np.frombuffer(path.read_bytes()[44:], dtype="<i2") if path.exists() else np.zeros(0, "<i2")
            loud = np.flatnonzero(np.abs(samples[: len(samples) // 2 * 2]) > 650)  # -34 dBFS
            if len(loud) and len(samples) - loud[-1] > quiet_s * 16_000:
                break
            time.sleep(0.05)
        recorder.terminate()
        recorder.wait()

    def _recording_sources(self) -> str:
        """The names of the sources something records from now."""
        sources = {
            line.split("\t")[0]: line.split("\t")[1]
            for line in self._pactl("list", "short", "sources").stdout.decode().splitlines()
        }
        outputs = self._pactl("list", "short", "source-outputs").stdout.decode().splitlines()
        return " ".join(sources.get(line.split("\t")[1], "") for line in outputs if "\t" in line)

    def kill_daemon(self) -> None:
        """Make the microphone vanish the hard way: the sound server dies under the stream."""
        for process in (*self._keepalives, self._daemon):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait()
        for player in self._players:
            _stop(player)

    def stop(self) -> None:
        for player in self._players:
            _stop(player)
        self._players.clear()
        for keepalive in self._keepalives:
            _stop(keepalive)
        _stop(self._daemon)
        self._keepalives, self._daemon = [], None


class XvfbDisplay:
    """An Xvfb server on a free display number."""

    def __init__(self, directory: Path, screen: str = "1280x800x24") -> None:
        self.directory = directory
        self.screen = screen
        self.display = ""
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        """Start Xvfb and return its DISPLAY value; raises RigUnavailable when it cannot."""
        if shutil.which("Xvfb") is None:
            raise RigUnavailable("Xvfb is not installed (scripts/setup.sh --test installs it)")
        self.directory.mkdir(parents=True, exist_ok=True)
        read_end, write_end = os.pipe()
        # -displayfd: Xvfb picks a free display and writes its number once it accepts connections.
        self._process = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_end), "-screen", "0", self.screen, "-nolisten", "tcp", "-noreset"],
            pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=(self.directory / "xvfb.log").open("wb"),
        )  # fmt: skip
        os.close(write_end)
        with os.fdopen(read_end) as pipe:
            number = pipe.readline().strip()
        if not number:
            self.stop()
            raise RigUnavailable("Xvfb did not start")
        self.display = f":{number}"
        return self.display

    def stop(self) -> None:
        _stop(self._process)
        self._process = None


class WindowManager:
    """Openbox on an X display: it gives each new window the focus, as a desktop does (Xvfb
    alone gives no window the focus)."""

    def __init__(self, directory: Path, display: str) -> None:
        self.directory = directory
        self.display = display
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        """Start it and return once it manages the screen; raises RigUnavailable when it cannot."""
        if shutil.which("openbox") is None:
            raise RigUnavailable("openbox is not installed (scripts/setup.sh --test installs it)")
        ready = self.directory / "openbox.ready"
        # --startup runs once openbox has taken the screen: the file is its word that it has.
        self._process = subprocess.Popen(
            ["openbox", "--startup", f"touch {ready}"],
            env={**os.environ, "DISPLAY": self.display}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=(self.directory / "openbox.log").open("wb"),
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RigUnavailable(f"openbox did not start (see {self.directory / 'openbox.log'})")
            time.sleep(0.05)

    def stop(self) -> None:
        _stop(self._process)
        self._process = None


# A session bus that cannot start services itself: with the standard service directories, a
# probe sent before our daemon has registered makes the bus start a second gnome-keyring-daemon
# that owns the name with a locked keyring and a password prompt that cannot open (seen in CI).
_BUS_WITHOUT_ACTIVATION = """<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class SessionBus:
    """A private D-Bus session bus, which starts no service itself."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._process: subprocess.Popen[str] | None = None

    def start(self) -> str:
        """Start it; its address, for ``DBUS_SESSION_BUS_ADDRESS``."""
        config = self.directory / "bus.conf"
        config.write_text(_BUS_WITHOUT_ACTIVATION)
        self._process = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self._process.stdout is not None
        return self._process.stdout.readline().strip()

    def stop(self) -> None:
        _stop(self._process)
        self._process = None


class NotificationDaemon:
    """dunst, a real freedesktop notification daemon, on an X display and a session bus; each
    notification it shows is also written to :attr:`shown` as ``app|summary|body`` lines."""

    def __init__(self, directory: Path, display: str, bus_address: str) -> None:
        self.directory = directory
        self.shown = directory / "shown.txt"
        self._environment = {**os.environ, "DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": bus_address}
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        """Start it and return once it owns ``org.freedesktop.Notifications``; raises RigUnavailable."""
        for tool in ("dunst", "dbus-send"):
            if shutil.which(tool) is None:
                raise RigUnavailable(f"{tool} is not installed (scripts/setup.sh --test installs it)")
        script = self.directory / "shown.sh"
        script.write_text(f'#!/bin/sh\nprintf "%s|%s|%s\\n" "$1" "$2" "$3" >> {self.shown}\n')
        script.chmod(0o755)
        config = self.directory / "dunstrc"
        config.write_text(f'[global]\n    monitor = 0\n[shown]\n    appname = "*"\n    script = {script}\n')
        self._process = subprocess.Popen(
            ["dunst", "-config", str(config)], env=self._environment, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=(self.directory / "dunst.log").open("wb"),
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self._serving():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RigUnavailable(f"dunst did not start (see {self.directory / 'dunst.log'})")
            time.sleep(0.05)

    def _serving(self) -> bool:
        asked = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
             "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.Notifications"],
            env=self._environment, capture_output=True, text=True, timeout=10,
        )  # fmt: skip
        return "boolean true" in asked.stdout

    def stop(self) -> None:
        _stop(self._process)
        self._process = None
