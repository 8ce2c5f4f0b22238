"""Where the dashboard's root files are (standard library only: the `eae` command reads it
without importing the dashboard, whose packages are an optional extra)."""

from __future__ import annotations

from pathlib import Path

_DASHBOARD = Path(__file__).resolve().parent / "dashboard"  # in an installed copy (pyproject)
#: The dashboard's root files (app.py, serve.py, assets/, .streamlit/config.toml): the checkout's
#: root, or `ui/dashboard/` where the wheel puts them.
APP_DIR = _DASHBOARD if (_DASHBOARD / "app.py").is_file() else Path(__file__).resolve().parents[1]
APP_SCRIPT = APP_DIR / "app.py"

__all__ = ["APP_DIR", "APP_SCRIPT"]
