"""Download buttons for a run: the trajectory (.npz + .json), the animated figure as a
standalone HTML file that plays offline, a PNG of one frame, and a claims table as CSV.

`download_panel(traj, fig, claims, key=...)` draws them where it is called. The files are
made only when a button is clicked (Streamlit's deferred `data=` callables) and a click does
not rerun the page. PNG export needs kaleido + Chromium on the server; when they are missing
the panel says so instead of offering a button that would fail.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import runtime
from dynamics.exports import csv_bytes
from dynamics.papers import Claim
from dynamics.trajectory import Trajectory
from viz.export import ExportUnavailable, png_available, png_bytes, standalone_html
from viz.scene import Scene

from .figures import Shown

RESULT_LABEL = {True: "pass", False: "FAIL", None: "illustration"}
CLAIM_COLUMNS = ("claim", "statement", "measured", "expected", "tolerance", "result", "details",
                 "justification", "integrator")

AnyFigure = go.Figure | Scene | Shown  # a Shown goes as its payload


def _cell(x: Any) -> Any:
    """A table cell: floats rounded for reading, containers as text."""
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int | float):
        xf = float(x)
        return xf if not math.isfinite(xf) else float(f"{xf:.6g}")
    if hasattr(x, "item") and getattr(x, "shape", None) == ():
        return _cell(x.item())
    if isinstance(x, list | tuple | dict) or hasattr(x, "tolist"):
        return str(x.tolist() if hasattr(x, "tolist") else x)
    return str(x)


def claims_table(claims: Sequence[Claim] | pd.DataFrame) -> pd.DataFrame:
    """Claims as a DataFrame with the columns of CLAIM_COLUMNS (result: pass / FAIL /
    illustration; `passed` keeps the raw True/False/None). A DataFrame is returned as it
    is."""
    if isinstance(claims, pd.DataFrame):
        return claims
    rows = [{"claim": c.name, "statement": c.statement, "measured": _cell(c.measured),
             "expected": _cell(c.expected), "tolerance": c.tolerance,
             "result": RESULT_LABEL[c.passed], "details": c.details,
             "justification": c.justification, "integrator": c.integrator, "passed": c.passed}
            for c in claims]
    df = pd.DataFrame(rows, columns=[*CLAIM_COLUMNS, "passed"])
    for col in ("measured", "expected"):  # mixed numbers and text: one type for Arrow
        df[col] = df[col].map(lambda v: "" if v is None else str(v))
    return df


def claims_csv(claims: Sequence[Claim] | pd.DataFrame) -> bytes:
    """The claims table as UTF-8 CSV (with a BOM so spreadsheet programs read the Unicode),
    text cells made inert for spreadsheets (`dynamics.exports`)."""
    return csv_bytes(claims_table(claims), bom=True)


def file_stem(traj: Trajectory) -> str:
    """A short file name for a run: data kind, width, ε and the first digits of its key."""
    c = traj.config
    stem = f"early-alignment_{c.data.kind}_m{c.model.width}_eps{c.init.scale:.0e}_" \
           f"{c.cache_key()[:8]}"
    return re.sub(r"[^A-Za-z0-9_.+-]", "", stem)


def header_json(traj: Trajectory) -> bytes:
    """The trajectory's header (config, status, counts) as pretty JSON."""
    return json.dumps(traj.header(), indent=2, ensure_ascii=False).encode("utf-8")




def _png_cached(fig: AnyFigure, fig_key: str, frame: int | None) -> bytes:
    """PNG export is slow (a browser renders it): the last few are kept. Runs in Streamlit's
    download thread, outside the script, so the runtime's small LRU (`Runtime.pngs`) rather
    than st.cache_*."""
    k = (fig_key, frame)
    cache = runtime.current().pngs
    got = cache.get(k)
    if got is not None:
        return bytes(got)
    out = png_bytes(fig.payload if isinstance(fig, Shown) else fig, frame)
    cache.put(k, out)
    return out


def _fig_key(traj: Trajectory, fig: AnyFigure) -> str:
    if isinstance(fig, Shown):
        return fig.key
    if isinstance(fig, Scene):
        height, meta = fig.layout.get("height"), fig.layout.get("meta")
    else:
        height, meta = fig.layout.height, fig.layout.meta
    meta = meta if isinstance(meta, dict) else {}
    return f"{traj.key()}:{height}:{json.dumps(meta, sort_keys=True, default=str)}"


def _png_maker(traj: Trajectory, fig: AnyFigure, frame: int | None) -> Callable[[], bytes]:
    key = _fig_key(traj, fig)

    def make() -> bytes:
        return _png_cached(fig, key, frame)

    return make


def download_panel(traj: Trajectory, fig: AnyFigure | None = None,
                   claims: Sequence[Claim] | pd.DataFrame | None = None, *, key: str,
                   frame: int | None = None, columns: int = 3) -> None:
    """Download buttons for one run (see the module docstring). `key` makes the widget keys
    unique on the page; `frame` picks the PNG's animation frame (None: the first, the figure as
    it opens; -1: the last)."""
    stem = file_stem(traj)
    cols = st.columns(columns)
    items: list[Callable[[], None]] = []

    items.append(lambda: st.download_button(
        "Trajectory (.npz)", data=traj.to_npz_bytes, file_name=f"{stem}.npz",
        mime="application/octet-stream", key=f"{key}.dl.npz", on_click="ignore",
        icon=":material/database:",
        help="All recorded arrays (numpy .npz). Load with numpy.load, or with the .json "
             "header via dynamics.trajectory.Trajectory.load."))
    items.append(lambda: st.download_button(
        "Config & header (.json)", data=lambda: header_json(traj), file_name=f"{stem}.json",
        mime="application/json", key=f"{key}.dl.json", on_click="ignore",
        icon=":material/data_object:",
        help="The run's full config and status. Save it beside the .npz under the same name."))
    if fig is not None:
        items.append(lambda: st.download_button(
            "Animated figure (.html)",
            data=lambda: standalone_html(fig.payload if isinstance(fig, Shown) else fig),
            file_name=f"{stem}.html", mime="text/html", key=f"{key}.dl.html",
            on_click="ignore", icon=":material/movie:",
            help="One self-contained file (plotly.js and the player inside): opens in any "
                 "browser and plays offline, e.g. from a USB stick in a classroom."))
        ok, why = png_available()
        if ok:
            what = "first frame" if frame is None else ("last frame" if frame == -1
                                                       else f"frame {frame}")
            items.append(lambda: st.download_button(
                f"Picture (.png, {what})", data=_png_maker(traj, fig, frame),
                file_name=f"{stem}.png", mime="image/png", key=f"{key}.dl.png",
                on_click="ignore", icon=":material/image:",
                help="Rendered on the server (a few seconds the first time). The camera icon "
                     "of the figure's toolbar saves what you see from your browser instead."))
        else:
            items.append(lambda: st.caption(f":material/image: {why}"))
    if claims is not None:
        items.append(lambda: st.download_button(
            "Claims table (.csv)", data=lambda: claims_csv(claims),
            file_name=f"{stem}_claims.csv", mime="text/csv", key=f"{key}.dl.csv",
            on_click="ignore", icon=":material/table:",
            help="This run's claims (measured, expected, tolerance, result) as CSV."))
    for i, draw in enumerate(items):
        with cols[i % columns]:
            draw()


def png_or_message(fig: AnyFigure, frame: int | None = None) -> tuple[bytes | None, str]:
    """(PNG, "") or (None, why not): for pages that want the picture itself."""
    try:
        return png_bytes(fig.payload if isinstance(fig, Shown) else fig, frame), ""
    except ExportUnavailable as e:
        return None, str(e)


__all__ = ["claims_csv", "claims_table", "download_panel", "file_stem", "header_json",
           "png_or_message"]
