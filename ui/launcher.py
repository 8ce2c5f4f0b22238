"""The `eae` command: `eae app [FLAGS]` starts the dashboard; every other command is the
library's (`eae run|sweep|reproduce`, `dynamics.cli`).

`eae app` replaces this process with `streamlit run <APP_DIR>/serve.py --server.headless true
--browser.gatherUsageStats false FLAGS` in the same interpreter, from any directory. `APP_DIR`
(`ui.paths`) is the checkout's root or, in an installed copy, `ui/dashboard/`; Streamlit reads
the `.streamlit/config.toml` there (XSRF, upload cap, theme, …) as the script's own settings,
above the working directory's. FLAGS are `streamlit run`'s (`--server.port 8600`, …), as for
`scripts/run.sh`, which is `eae app` after the set-up.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence

from .paths import APP_DIR

#: What `scripts/run.sh`, the Docker image and `eae app` pass to `streamlit run` before the
#: user's flags (a later flag wins).
SERVER_FLAGS = ("--server.headless", "true", "--browser.gatherUsageStats", "false")
APP_EXTRA = 'pip install "early-alignment-explorer[app]"'
EPILOG = ("eae app [FLAGS]: start the dashboard (FLAGS go to `streamlit run`, e.g. "
          "--server.port 8600)")


def app_command(flags: Sequence[str] = ()) -> list[str]:
    """The command line `eae app FLAGS` runs (`streamlit run` on the dashboard's serve.py)."""
    return [sys.executable, "-m", "streamlit", "run", str(APP_DIR / "serve.py"), *SERVER_FLAGS,
            *flags]


def missing_app_dependencies() -> list[str]:
    """The dashboard's packages that are not installed (the `app` extra)."""
    return [m for m in ("streamlit", "plotly") if importlib.util.find_spec(m) is None]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `eae` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] != ["app"]:
        from dynamics.cli import main as library_main

        return library_main(args, prog="eae", epilog=EPILOG)
    missing = missing_app_dependencies()
    if missing:
        print(f"eae app: the dashboard needs {', '.join(missing)}; install it with {APP_EXTRA}",
              file=sys.stderr)
        return 2
    cmd = app_command(args[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cmd[0], cmd)
    return 0  # not reached: execv replaces the process


__all__ = ["EPILOG", "SERVER_FLAGS", "app_command", "main", "missing_app_dependencies"]
