"""Running programs from an argument list, never through a shell."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Sequence

from voxdesk.app.actions.ports import ActionError, ProcessResult

__all__ = ["run_process"]


async def run_process(argv: Sequence[str], *, wait_s: float) -> ProcessResult:
    """Start ``argv`` without a shell and wait up to ``wait_s`` seconds for it to end.

    A program still running after the wait keeps running on its own (an application that
    was launched); its result has ``returncode`` None.
    """
    # stderr goes to a file, not a pipe: a launched application that keeps running must never
    # block on a full pipe nobody reads.
    with tempfile.TemporaryFile() as errors:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=errors,
                start_new_session=os.name == "posix",
            )
        except FileNotFoundError as error:
            raise ActionError(f"{argv[0]} is not installed or not on the PATH") from error
        except OSError as error:
            raise ActionError(f"could not start {argv[0]}: {error.strerror or error}") from error
        try:
            returncode = await asyncio.wait_for(process.wait(), wait_s)
        except TimeoutError:
            return ProcessResult(None)
        errors.seek(0)
        return ProcessResult(returncode, errors.read(64_000).decode(errors="replace").strip())
