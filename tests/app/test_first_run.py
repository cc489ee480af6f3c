"""The first-run helpers without a window."""

from __future__ import annotations

import asyncio
import ctypes.util

import pytest

from voxdesk.app.first_run import check_server, cuda_device, is_first_run
from voxdesk.app.settings import EngineSettings, Settings, save_settings, settings_path
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.kinds import EngineKind


def test_the_first_run_is_the_start_without_a_settings_file() -> None:
    assert is_first_run() and not settings_path().exists()
    save_settings(Settings())
    assert not is_first_run()


def test_no_cuda_device_without_an_nvidia_driver() -> None:
    if ctypes.util.find_library("cuda") is None:
        assert cuda_device() is None
    else:  # a machine with the driver: a name, or None when it has no device
        assert cuda_device() is None or isinstance(cuda_device(), str)


def test_a_missing_server_is_a_plain_sentence() -> None:
    choice = EngineSettings(kind=EngineKind.REMOTE, server_url="ws://127.0.0.1:9")
    with pytest.raises(EngineUnavailable, match=r"^cannot reach the speech server at ws://127\.0\.0\.1:9"):
        asyncio.run(check_server(choice))
