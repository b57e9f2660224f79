"""The repository's root on ``sys.path``: a benchmark runs as ``python bench/NAME.py`` and imports the test renderer
(``synth``) and the tests' scene modules, which live beside the installed packages, not in them. Imported first by every
benchmark that needs them."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
