"""`python -m bench [--quick] [--out FILE] ...` or `python -m bench TOOL ...` (bench/cli.py)."""

from .cli import main

raise SystemExit(main())
