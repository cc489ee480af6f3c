"""The frozen program's entry point: ``voxdesk`` (window, or a command), as ui/launcher.py."""

import multiprocessing
import sys

from voxdesk.ui.launcher import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # nothing spawns Python today; keeps a future worker from re-running main
    sys.exit(main())
