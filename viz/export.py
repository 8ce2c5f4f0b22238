"""Figure export: a standalone HTML file that animates offline, and a PNG of one frame.

`standalone_html(fig)` embeds plotly.js (no external script), keeps the figure's frames, Play
button and slider, and does not start playing on open. `png_bytes(fig, frame)` renders one
frame through kaleido, which drives a headless Chromium: it looks for one in BROWSER_PATH,
then at the usual system paths (Debian's /usr/bin/chromium). MathJax is switched off so that
the export never reaches for a CDN (our labels use Unicode, not LaTeX).

No Streamlit and no dynamics here; the only side effect is starting Chromium for PNGs.
"""

from __future__ import annotations

import copy
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                       "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable")
HTML_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True,
                               "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
PNG_WIDTH = 1400
PNG_TIMEOUT_S = 90.0

_png_lock = threading.Lock()  # one export at a time: kaleido's sync calls are not re-entrant


class ExportUnavailable(RuntimeError):
    """PNG export cannot run here (kaleido or a Chromium browser is missing)."""


# ----------------------------------------------------------------------------- HTML
def standalone_html(fig: go.Figure, *, title: str = "Early alignment") -> bytes:
    """The figure as one self-contained HTML page (plotly.js embedded, frames kept, no
    auto-play) that opens and animates in a browser without a network connection."""
    html = fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False,
                       config=HTML_CONFIG, div_id="early-alignment-figure",
                       default_width="100%")
    head = (f"<title>{_escape(title)}</title>\n<meta name='generator' "
            "content='Early Alignment Explorer'>\n")
    html = html.replace("<head>", "<head>\n" + head, 1)
    return html.encode("utf-8")


def _escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


# ----------------------------------------------------------------------------- one frame
def n_frames(fig: go.Figure) -> int:
    return len(fig.frames or ())


def frame_figure(fig: go.Figure, frame: int | None = None) -> go.Figure:
    """A static copy of `fig` showing animation frame `frame` (None: the figure as it opens,
    i.e. frame 0; negative counts from the end): the frame's data applied to its traces, the
    slider moved there, frames and Play buttons dropped."""
    d = copy.deepcopy(fig.to_plotly_json())
    frames = d.pop("frames", None) or []
    layout = d.setdefault("layout", {})
    if frames and frame is not None:
        k = frame % len(frames)
        fr = frames[k]
        traces = fr.get("traces") or list(range(len(fr.get("data", []))))
        for idx, upd in zip(traces, fr.get("data", []), strict=False):
            if 0 <= idx < len(d["data"]):
                base = d["data"][idx]
                for key, val in upd.items():
                    if key == "type":
                        continue
                    if isinstance(val, dict) and isinstance(base.get(key), dict) \
                            and "bdata" not in val:  # a nested object, not a typed array
                        base[key] = {**base[key], **val}
                    else:
                        base[key] = val
        for s in layout.get("sliders") or []:
            s["active"] = k
    layout.pop("updatemenus", None)  # a Play button in a still picture is noise
    return go.Figure(d)


# ----------------------------------------------------------------------------- PNG
def chromium_path() -> str | None:
    """A Chromium/Chrome executable for kaleido: BROWSER_PATH, else a system install."""
    env = os.environ.get("BROWSER_PATH")
    if env and Path(env).is_file() and os.access(env, os.X_OK):
        return env
    for cand in CHROMIUM_CANDIDATES:
        if Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def png_available() -> tuple[bool, str]:
    """(True, "") when PNG export can run here, else (False, the reason in plain words)."""
    try:
        import kaleido  # noqa: F401
    except ImportError:
        return False, "PNG export needs the kaleido package, which is not installed here."
    if chromium_path() is None:
        return False, ("PNG export needs a Chromium browser on the server (kaleido drives it); "
                       "none was found. Set BROWSER_PATH to one, or use the camera icon of "
                       "the figure's toolbar, which saves a PNG from your own browser.")
    return True, ""


def png_bytes(fig: go.Figure, frame: int | None = None, *, width: int | None = None,
              height: int | None = None, scale: float = 2.0) -> bytes:
    """A PNG of one frame of `fig` (see `frame_figure`), rendered by kaleido + Chromium.
    Raises ExportUnavailable when that cannot run here."""
    ok, why = png_available()
    if not ok:
        raise ExportUnavailable(why)
    browser = chromium_path()
    assert browser is not None
    os.environ.setdefault("BROWSER_PATH", browser)
    import kaleido

    static = frame_figure(fig, frame)
    lay = static.layout
    w = int(width or lay.width or PNG_WIDTH)
    h = int(height or lay.height or 900)  # presenter figures have no fixed height
    spec = static.to_plotly_json()
    try:
        with _png_lock:
            out = kaleido.calc_fig_sync(
                spec, opts={"format": "png", "width": w, "height": h, "scale": scale},
                kopts={"mathjax": False, "timeout": PNG_TIMEOUT_S})
    except Exception as e:  # browser failed to start, timed out, …
        raise ExportUnavailable(f"PNG export failed: {type(e).__name__}: {e}") from e
    if not isinstance(out, bytes | bytearray) or not bytes(out).startswith(b"\x89PNG"):
        raise ExportUnavailable("PNG export returned no image")
    return bytes(out)


__all__ = ["ExportUnavailable", "chromium_path", "frame_figure", "n_frames", "png_available",
           "png_bytes", "standalone_html"]
