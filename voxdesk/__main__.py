"""``python -m voxdesk``: the same program as the ``voxdesk`` script."""

import sys

from voxdesk.ui.launcher import main

sys.exit(main())
