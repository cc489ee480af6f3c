"""The wheel as a user installs it: one ``voxdesk`` namespace, resources inside, working away
from the checkout (a scratch virtual environment, not editable, run from another folder)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.recognition import SAMPLE, assert_heard_in

pytestmark = pytest.mark.integration  # builds the wheel and installs it in a fresh environment

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("voxdesk-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; its dependencies come from the test environment's
    site-packages through a path file (whose own .pth files, the editable install's among them,
    Python does not read)."""
    root = tmp_path_factory.mktemp("venv")
    venv.create(root, with_pip=False)
    python = root / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
        ).strip()
    )
    (site / "test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True,
        timeout=300,
    )
    return root


def run_installed(installed: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VOXDESK_RESOURCES")}
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_holds_one_namespace_and_the_resources(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names if not name.startswith("voxdesk-")}
    assert top_level == {"voxdesk"}, top_level
    for resource in ("commands.toml", "icons/voxdesk.svg", "samples/hello.flac"):
        assert f"voxdesk/resources/{resource}" in names
    assert "voxdesk/py.typed" in names


def test_the_installed_wheel_works_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    python = str(installed / "bin" / "python")
    probe = (
        "import pathlib, voxdesk, voxdesk.app.resources as r; from voxdesk.app.actions.commands import CommandSource; "
        "print(voxdesk.__file__); print(r.resource_path('commands.toml')); "
        "print(len(CommandSource(user_path=pathlib.Path('none.toml')).commands()))"
    )
    result = run_installed(installed, python, "-c", probe, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    package, commands_file, count = result.stdout.split()
    assert Path(package).is_relative_to(installed) and Path(commands_file).is_relative_to(installed)
    assert int(count) >= 10
    for name in ("app", "engine", "server", "ui"):
        assert run_installed(installed, python, "-c", f"import {name}", cwd=tmp_path).returncode != 0

    sample = Path(commands_file).parent / "samples" / "hello.flac"
    result = run_installed(
        installed, str(installed / "bin" / "voxdesk"), "transcribe", "--fast", str(sample), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert_heard_in(SAMPLE, result.stdout.split("Transcript:\n", 1)[1].splitlines()[0])
