"""Figure export: a standalone HTML file that animates offline, and a PNG of one frame.

`standalone_html(scene)` writes one page holding Plotly.js, the browser player
(`viz/player/`: the composer and the player) and the figure's payload (`viz.payload`): it
plays, pauses and seeks with no network, exactly as in the dashboard, and does not start
playing on open. A static Plotly figure (no frames) is written by Plotly's own HTML writer.
`png_bytes(scene, frame)` renders one frame — the same page, the player's controls hidden,
showing that frame — in a headless Chromium (the figure is composed in the browser, by the one
drawing code): it looks for one in BROWSER_PATH, then at the usual system paths (Debian's
/usr/bin/chromium); a static Plotly figure goes through kaleido, which drives the same
browser. MathJax is switched off so that the export never reaches for a CDN (labels use
Unicode, not LaTeX).

No Streamlit and no dynamics here; the only side effect is starting Chromium for PNGs.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from .payload import bundle_of_payload, design_height_of, encode, header_of
from .player import asset
from .plotlyjs import path_of
from .scene import Scene

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
  if (opts.still) root.classList.add("eae-still");
  var p = EAEPlayer.mount(root, {config: opts.config,
    heightFor: opts.still ? function () { return window.innerHeight; }
      : opts.fill ? function () { return Math.max(380, window.innerHeight - 16); } : null});
  var run = EAEPlayer.decode(u.buffer);
  p.show(run, "export", false).then(function () {
    if (opts.frame !== null) p.draw(opts.frame < 0 ? run.frames.n + opts.frame : opts.frame);
    document.body.dataset.ready = "true";
  });
  if (opts.fill) window.addEventListener("resize", function () { p.fitHeight(); });
  if (opts.report) {  // in a notebook's iframe: tell the page around it the height we need
    var sent = 0;
    var report = function () {
      var h = Math.ceil(document.getElementById("eae-figure").getBoundingClientRect().bottom);
      if (h > 0 && Math.abs(h - sent) > 1) {
        sent = h;
        window.parent.postMessage({eaeFrame: opts.report, height: h}, "*");
      }
    };
    window.addEventListener("resize", report);
    setInterval(report, 400);  // the caption and the edit bar change height as they fill in
  }
})();
"""
STILL_CSS = (".eae-still .eae-controls, .eae-still .eae-caption, .eae-still .eae-scrub, "
             ".eae-still .eae-status, .eae-still .eae-edit, .eae-still .eae-edit-trap, "
             ".eae-still .modebar-container { display: none; } "
             "body:has(.eae-still) { overflow: hidden; }")


def _script(js: str) -> str:
    return "<script>" + js.replace("</script", "<\\/script") + "</script>"


def standalone_html(fig: Scene | bytes | go.Figure, *, title: str = "Early alignment",
                    frame: int | None = None, still: bool = False, report: str = "") -> bytes:
    """The figure as one self-contained HTML page that opens and animates in a browser with no
    network connection (a `Scene` or its payload bytes: the dashboard's composer and player,
    no auto-play, showing `frame` (None: the first shown; negative: from the end) and, when
    `still`, no controls; a static `go.Figure`: Plotly's page, plotly.js embedded). `report`:
    an id; the page, shown in an iframe, posts ``{eaeFrame: report, height}`` to its parent
    whenever the height of its content changes (the notebook sizes its frame by it)."""
    head = (f"<title>{_escape(title)}</title>\n<meta name='generator' "
            "content='Early Alignment Explorer'>\n")
    if isinstance(fig, go.Figure):
        html = fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False,
                           config=HTML_CONFIG, div_id="early-alignment-figure",
                           default_width="100%")
        return html.replace("<head>", "<head>\n" + head, 1).encode("utf-8")
    data = fig if isinstance(fig, bytes) else encode(fig)
    header_of(data)  # a payload of this version, or ValueError
    payload = base64.b64encode(data).decode("ascii")
    fill = design_height_of(data) is not None and _layout_height(data) is None
    options = json.dumps({"config": HTML_CONFIG, "fill": fill and not still, "still": still,
                          "frame": frame, "report": report})
    page = "".join([
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>", head,
        "<style>", asset("player.css"), "body { overflow: auto; }", STILL_CSS, "</style>",
        "</head><body><div id='eae-figure'></div>",
        f"<script type='application/octet-stream' id='eae-payload'>{payload}</script>",
        f"<script type='application/json' id='eae-options'>{options}</script>",
        _script(path_of(bundle_of_payload(data)).read_text(encoding="utf-8")),
        _script(asset("scene.js")), _script(asset("edit.js")), _script(asset("player.js")),
        _script(_BOOT), "</body></html>"])
    return page.encode("utf-8")


def _layout_height(data: bytes) -> int | None:
    h = header_of(data).get("layout", {}).get("height")
    return int(h) if h else None


def _escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def n_frames(fig: Scene | bytes | go.Figure) -> int:
    if isinstance(fig, Scene):
        return fig.frames.n
    if isinstance(fig, bytes):
        return int(header_of(fig)["frames"]["n"])
    return len(fig.frames or ())


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


def png_bytes(fig: Scene | bytes | go.Figure, frame: int | None = None, *,
              width: int | None = None, height: int | None = None, scale: float = 2.0) -> bytes:
    """A PNG of one frame of `fig` (None: the frame it opens on; negative: from the end),
    without the player's controls: a scene is composed and drawn by the player in headless
    Chromium (`standalone_html(..., still=True)`), a static Plotly figure by kaleido. Raises
    ExportUnavailable when that cannot run here."""
    ok, why = png_available()
    if not ok:
        raise ExportUnavailable(why)
    browser = chromium_path()
    assert browser is not None
    if isinstance(fig, go.Figure):
        return _kaleido_png(fig, browser, width, height, scale)
    data = fig if isinstance(fig, bytes) else encode(fig)
    w = int(width or PNG_WIDTH)
    h = int(height or _layout_height(data) or design_height_of(data) or 900)
    page = standalone_html(data, frame=frame, still=True)
    with _png_lock, tempfile.TemporaryDirectory(prefix="eae-png-") as tmp:
        html, out = Path(tmp) / "figure.html", Path(tmp) / "figure.png"
        html.write_bytes(page)
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", "--disable-quic", f"--user-data-dir={tmp}/u",
               f"--force-device-scale-factor={scale:g}", f"--window-size={w},{h}",
               "--virtual-time-budget=20000", f"--screenshot={out}", html.as_uri()]
        try:
            subprocess.run(cmd, capture_output=True, timeout=PNG_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ExportUnavailable(f"PNG export failed: {type(e).__name__}: {e}") from e
        png = out.read_bytes() if out.exists() else b""
    if not png.startswith(b"\x89PNG"):
        raise ExportUnavailable("PNG export returned no image")
    return png


def _kaleido_png(fig: go.Figure, browser: str, width: int | None, height: int | None,
                 scale: float) -> bytes:
    os.environ.setdefault("BROWSER_PATH", browser)
    import kaleido

    lay = fig.layout
    w = int(width or lay.width or PNG_WIDTH)
    h = int(height or lay.height or 900)
    try:
        with _png_lock:
            out = kaleido.calc_fig_sync(
                fig.to_plotly_json(), opts={"format": "png", "width": w, "height": h,
                                            "scale": scale},
                kopts={"mathjax": False, "timeout": PNG_TIMEOUT_S})
    except Exception as e:  # browser failed to start, timed out, …
        raise ExportUnavailable(f"PNG export failed: {type(e).__name__}: {e}") from e
    if not isinstance(out, bytes | bytearray) or not bytes(out).startswith(b"\x89PNG"):
        raise ExportUnavailable("PNG export returned no image")
    return bytes(out)


__all__ = ["ExportUnavailable", "chromium_path", "n_frames", "png_available", "png_bytes",
           "standalone_html"]
