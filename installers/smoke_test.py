"""Smoke test of an installed or bundled Voxdesk program, on any operating system.

    python installers/smoke_test.py PROGRAM [--gui GUI_PROGRAM]

PROGRAM is the bundle's console executable (Linux: voxdesk, Windows: voxdesk-cli.exe, macOS:
Voxdesk.app/Contents/MacOS/voxdesk). Checks, each in a fresh process with a throw-away home
folder: ``--version``; ``transcribe hello.flac --fast`` with the built-in engine gives the
sample's words; the window opens offscreen and closes by itself once the engine is ready
(``VOXDESK_SMOKE_TEST=1``, see ui/smoke_test.py); ``--engine vllm`` fails with one plain line.
``--gui`` also starts the windowed executable (Windows: voxdesk.exe) and checks it exits 0.
Used by .github/workflows/installers.yml; needs only the standard library. The Linux test
suite (tests/installers) runs the same checks and more on the installed .deb.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "resources" / "samples" / "hello.flac"
HELLO_WORDS = "open the browser and search for the weather in paris"


def words(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split())


class Check:
    def __init__(self, program: Path) -> None:
        self.program = program
        self.home = Path(tempfile.mkdtemp(prefix="voxdesk-smoke-"))
        self.failures: list[str] = []

    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        # Settings, history and caches in a throw-away folder; the model hub unreachable.
        dead = "http://127.0.0.1:9"
        environment = {
            **os.environ,
            "VOXDESK_CONFIG_DIR": str(self.home / "config"),
            "VOXDESK_DATA_DIR": str(self.home / "data"),
            "HF_ENDPOINT": dead,
            "HTTP_PROXY": dead,
            "HTTPS_PROXY": dead,
            "ALL_PROXY": dead,
            "PYTHONPATH": "",
            **(env or {}),
        }
        return subprocess.run(
            [str(self.program), *args],
            env=environment,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            cwd=self.home,
        )

    def expect(self, name: str, ok: bool, detail: str) -> None:
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f"\n{detail}"), flush=True)
        if not ok:
            self.failures.append(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program", type=Path)
    parser.add_argument("--gui", type=Path, help="the windowed executable, started offscreen; must exit 0")
    args = parser.parse_args()
    check = Check(args.program.resolve())
    sample = check.home / "hello.flac"
    shutil.copyfile(SAMPLE, sample)

    result = check.run("--version")
    check.expect("--version", result.returncode == 0 and result.stdout.startswith("voxdesk "), result.stderr)
    print(f"     {result.stdout.strip()}")

    started = time.monotonic()
    result = check.run("transcribe", "--fast", str(sample))
    transcript = result.stdout.split("Transcript:")[-1]
    check.expect(
        f"transcribe hello.flac ({time.monotonic() - started:.1f} s)",
        result.returncode == 0 and HELLO_WORDS in words(transcript),
        result.stdout + result.stderr,
    )

    started = time.monotonic()
    result = check.run(env={"QT_QPA_PLATFORM": "offscreen", "VOXDESK_SMOKE_TEST": "1"}, timeout=180)
    lines = [line for line in result.stdout.splitlines() if line.startswith("voxdesk smoke test: ")]
    marks = json.loads(lines[0].removeprefix("voxdesk smoke test: ")) if lines else {}
    timing = ", ".join(
        f"{name} {marks[name] - started:.1f} s" for name in ("window shown", "engine ready") if name in marks
    )
    check.expect(
        f"window offscreen opens and closes ({timing})",
        result.returncode == 0 and marks.get("window visible") is True and "engine ready" in marks,
        result.stdout + result.stderr,
    )

    result = check.run("transcribe", "--engine", "vllm", str(sample))
    lines = result.stderr.strip().splitlines()
    check.expect(
        "--engine vllm says it needs vLLM in one line",
        result.returncode == 1 and len(lines) == 1 and "vLLM" in lines[0],
        result.stderr,
    )
    print(f"     {lines[0] if lines else ''}")

    if args.gui:
        gui = Check(args.gui.resolve())
        result = gui.run(env={"QT_QPA_PLATFORM": "offscreen", "VOXDESK_SMOKE_TEST": "1"}, timeout=180)
        check.expect("windowed executable opens and closes", result.returncode == 0, result.stdout + result.stderr)

    shutil.rmtree(check.home, ignore_errors=True)
    print("smoke test: " + (f"FAILED: {', '.join(check.failures)}" if check.failures else "all passed"))
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
