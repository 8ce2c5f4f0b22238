"""Run one dashboard page headlessly with Streamlit's AppTest and read its chart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def run_page(path: str | Path, params: dict[str, str] | None = None,
             timeout: float = 120) -> Any:
    """AppTest of the page at `path` with URL parameters `params`, run once.

    Fails (AssertionError listing the messages) when the page shows any exception element.
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(path), default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plotly_spec(at: Any) -> dict[str, Any]:
    """The Plotly JSON of the page's only chart (AssertionError if there is not exactly one)."""
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    spec: dict[str, Any] = json.loads(charts[0].proto.spec)
    return spec
