"""Which Plotly.js bundle draws a figure, and where its file is.

A browser tab evaluates the full Plotly.js bundle of the pinned `plotly` package (4.6 MB) in
about 1.1 s on a 2-core machine, before the player can draw anything; the partial bundles of
the same release (`viz/player/vendor/`, see its README) take about 0.3 s ("basic": bar, pie,
scatter) and 0.5 s ("cartesian": also heatmap, histogram, box, contour, image, violin, …).
Every player picks the smallest bundle that has all of its figure's trace types.

Bundles are ordered: each one has every trace type of the ones before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import plotly

VENDOR = Path(__file__).resolve().parent / "player" / "vendor"
FULL_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
#: bundle -> its trace types (None: every type); smallest first
TRACE_TYPES: dict[str, frozenset[str] | None] = {
    "basic": frozenset({"bar", "pie", "scatter"}),
    "cartesian": frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d",
                            "histogram2dcontour", "image", "pie", "scatter", "scatterternary",
                            "violin"}),
    "full": None,
}
FILES = {"basic": VENDOR / "plotly-basic.min.js",
         "cartesian": VENDOR / "plotly-cartesian.min.js",
         "full": FULL_JS}


def bundle_for(trace_types: Iterable[str]) -> str:
    """The smallest bundle that draws every one of `trace_types` (Plotly's default type,
    "scatter", stands for a trace without one)."""
    need = {t or "scatter" for t in trace_types}
    for name, has in TRACE_TYPES.items():
        if has is None or need <= has:
            return name
    return "full"  # pragma: no cover - "full" has every type


def bundle_of_figure(figure: Mapping[str, Any]) -> str:
    """`bundle_for` the trace types of a figure's JSON (`{"data": [...], ...}`)."""
    return bundle_for(str(tr.get("type") or "scatter") for tr in figure.get("data", ()))


def version_of(path: Path) -> str:
    """The plotly.js version a bundle file names in its first comment ("4.1.1")."""
    head = path.read_bytes()[:400].decode("utf-8", "replace")
    m = re.search(r"plotly\.js[^\n]*?v(\d+\.\d+\.\d+)", head)
    if m is None:
        raise ValueError(f"{path.name}: no plotly.js version in its header")
    return m.group(1)


def path_of(bundle: str) -> Path:
    """The file of `bundle` ("basic", "cartesian" or "full"); KeyError for another name."""
    return FILES[bundle]


__all__ = ["FILES", "FULL_JS", "TRACE_TYPES", "VENDOR", "bundle_for", "bundle_of_figure",
           "path_of", "version_of"]
