"""PyInstaller runtime hook: runs inside the frozen program before its entry point.

- PyAV (FFmpeg, about 100 MB) is left out of the bundle: faster-whisper imports ``av`` at
  import time but uses it only in ``decode_audio``, for files; Voxdesk hands it samples
  (files are read with libsndfile). A stand-in module keeps the import working and says
  plainly what is missing if anything ever reaches for it.
- On Linux the bootloader may point LD_LIBRARY_PATH at the bundle; programs Voxdesk starts
  (xdotool, xdg-open, the applications it launches) must see the system's libraries instead.
"""

import os
import sys
import types


def _install_av_stand_in() -> None:
    if "av" in sys.modules:
        return
    stand_in = types.ModuleType("av")

    def __getattr__(name: str) -> object:
        # AttributeError, so hasattr() and introspection (inspect, __wrapped__ probes) work as usual.
        raise AttributeError(f"PyAV (av.{name}) is not in the Voxdesk bundle; audio files are read with libsndfile")

    stand_in.__getattr__ = __getattr__  # a module-level __getattr__ (PEP 562)
    sys.modules["av"] = stand_in


def _restore_library_path() -> None:
    if not sys.platform.startswith("linux"):
        return
    original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is not None:
        os.environ["LD_LIBRARY_PATH"] = original
    elif sys._MEIPASS in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        del os.environ["LD_LIBRARY_PATH"]  # the bootloader set it where there was none


_install_av_stand_in()
_restore_library_path()
