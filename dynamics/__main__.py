"""`python -m dynamics run|sweep|reproduce` (see dynamics/cli.py)."""

import sys

from .cli import main

sys.exit(main())
