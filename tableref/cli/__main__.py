"""``python -m tableref.cli``: the ``tableref`` command."""

import sys

from tableref.cli import main

sys.exit(main())
