"""Figure export: a standalone HTML file that animates offline, and a PNG of one frame.

`standalone_html(fig)` writes one page holding Plotly.js, the browser player
(`viz/player/`) and the figure's payload (`viz.payload`): it plays, pauses and seeks with no
network, exactly as in the dashboard, and does not start playing on open. A static figure
(no frames) is written by Plotly's own HTML writer. `png_bytes(fig, frame)` renders one frame
— without the player's controls — through kaleido, which drives a headless Chromium: it looks
for one in BROWSER_PATH, then at the usual system paths (Debian's /usr/bin/chromium). MathJax
is switched off so that the export never reaches for a CDN (labels use Unicode, not LaTeX).

No Streamlit and no dynamics here; the only side effect is starting Chromium for PNGs.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from .animation import AnimatedFigure
from .payload import bundle_of_payload, decode, encode
from .player import asset, design_height
from .plotlyjs import path_of

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
_BOOT = """
(function () {
  var b = atob(document.getElementById("eae-payload").textContent.trim());
  var u = new Uint8Array(b.length);
  for (var i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
  var root = document.getElementById("eae-figure");
  var opts = JSON.parse(document.getElementById("eae-options").textContent);
  var p = EAEPlayer.mount(root, {config: opts.config,
    heightFor: opts.fill ? function () { return Math.max(380, window.innerHeight - 16); } : null});
  p.show(EAEPlayer.decode(u.buffer), "export", false);
  if (opts.fill) window.addEventListener("resize", function () { p.fitHeight(); });
})();
"""


def _script(js: str) -> str:
    return "<script>" + js.replace("</script", "<\\/script") + "</script>"


def standalone_html(fig: AnimatedFigure | go.Figure | bytes, *,
                    title: str = "Early alignment") -> bytes:
    """The figure as one self-contained HTML page that opens and animates in a browser with no
    network connection (an `AnimatedFigure` or its payload bytes: the dashboard's player, no
    auto-play; a static `go.Figure`: Plotly's page, plotly.js embedded)."""
    head = (f"<title>{_escape(title)}</title>\n<meta name='generator' "
            "content='Early Alignment Explorer'>\n")
    if isinstance(fig, go.Figure):
        html = fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False,
                           config=HTML_CONFIG, div_id="early-alignment-figure",
                           default_width="100%")
        return html.replace("<head>", "<head>\n" + head, 1).encode("utf-8")
    data = fig if isinstance(fig, bytes) else encode(fig)
    payload = base64.b64encode(data).decode("ascii")
    lay = decode(data)[0]["figure"].get("layout", {})
    fill = lay.get("height") is None and isinstance(lay.get("meta"), dict) \
        and bool(lay["meta"].get("design_height"))
    options = json.dumps({"config": HTML_CONFIG, "fill": fill})
    page = "".join([
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>", head,
        "<style>", asset("player.css"), "body { overflow: auto; }</style>",
        "</head><body><div id='eae-figure'></div>",
        f"<script type='application/octet-stream' id='eae-payload'>{payload}</script>",
        f"<script type='application/json' id='eae-options'>{options}</script>",
        _script(path_of(bundle_of_payload(data)).read_text(encoding="utf-8")),
        _script(asset("player.js")),
        _script(_BOOT), "</body></html>"])
    return page.encode("utf-8")


def _escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


# ----------------------------------------------------------------------------- one frame
def n_frames(fig: AnimatedFigure | go.Figure) -> int:
    if isinstance(fig, AnimatedFigure):
        return fig.animation.n_frames
    return len(fig.frames or ())


def frame_figure(fig: AnimatedFigure | go.Figure, frame: int | None = None) -> go.Figure:
    """A static copy of `fig` showing animation frame `frame` (None: the figure as it opens;
    negative counts from the end), with no player controls (the player draws them outside
    the figure; an old-style figure's Play buttons and frames are dropped)."""
    if isinstance(fig, AnimatedFigure):
        n = fig.animation.n_frames
        k = fig.animation.start if frame is None else frame % max(n, 1)
        return fig.frame_figure(k)
    d = copy.deepcopy(fig.to_plotly_json())
    d.pop("frames", None)
    layout = d.setdefault("layout", {})
    layout.pop("updatemenus", None)  # a Play button in a still picture is noise
    layout.pop("sliders", None)
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


def png_bytes(fig: AnimatedFigure | go.Figure, frame: int | None = None, *,
              width: int | None = None,
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
    h = int(height or lay.height or design_height(static) or 900)  # presenter: no height
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
