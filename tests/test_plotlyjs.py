"""The Plotly.js bundles the player draws with (`viz.plotlyjs`): the smallest that has every
trace type of a figure, the same plotly.js release as the pinned `plotly` package's, served by
the server's route, inlined in exports, and — in real Chromium — a player that meets a figure
its bundle cannot draw loads the bigger one and draws it."""

from __future__ import annotations

import base64
import gzip
import urllib.request
from typing import Any

import numpy as np
import pytest

from viz import plotlyjs
from viz.export import standalone_html
from viz.payload import bundle_of_payload, encode
from viz.scene import Frames, Scene, grid


def _figure(kind: str) -> Scene:
    """A two-frame figure of one trace: a scatter or a heatmap."""
    sc = Scene("test", frames=Frames(2, ("a", "b"), redraw=kind == "heatmap"))
    sc.panels = grid([1.0], [1.0], [(0, 0)], hspace=0.0, vspace=0.0)
    if kind == "heatmap":
        sc.trace(sc.panels[0], {"type": "heatmap", "z": np.zeros((3, 3)).tolist()},
                 tracks=[{"attr": "z", "values": sc.array("z", np.stack([np.eye(3),
                                                                         2 * np.eye(3)]))}])
    else:
        sc.trace(sc.panels[0], {"type": "scatter", "x": [0.0, 1.0], "y": [0.0, 1.0],
                                "mode": "markers"},
                 tracks=[{"attr": "y", "values": sc.array("y", [[0.0, 1.0], [1.0, 1.0]])}])
    return sc


def test_every_bundle_is_the_release_of_the_pinned_plotly() -> None:
    full = plotlyjs.version_of(plotlyjs.FULL_JS)
    for name, path in plotlyjs.FILES.items():
        assert path.is_file(), name
        assert plotlyjs.version_of(path) == full, (name, path)
    # smallest first, and each smaller than the next
    sizes = [plotlyjs.FILES[b].stat().st_size for b in plotlyjs.TRACE_TYPES]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1] / 3, sizes


def test_the_smallest_bundle_with_every_trace_type_is_chosen() -> None:
    assert plotlyjs.bundle_for([]) == "basic"
    assert plotlyjs.bundle_for(["scatter", "bar", ""]) == "basic"
    assert plotlyjs.bundle_for(["scatter", "heatmap"]) == "cartesian"
    assert plotlyjs.bundle_for(["scatter", "scatter3d"]) == "full"
    assert bundle_of_payload(encode(_figure("scatter"))) == "basic"
    assert bundle_of_payload(encode(_figure("heatmap"))) == "cartesian"
    assert bundle_of_payload(b"not a payload") == "full"


def test_the_app_figures_draw_with_the_partial_bundles() -> None:
    """The Explorer's figure needs only the basic bundle, the Real data one (digit heatmaps)
    the cartesian one: what the player loads for each page."""
    from dynamics.config import Config
    from dynamics.simulate import simulate
    from viz.main_figure import main_figure
    from viz.options import FigureOptions

    traj = simulate(Config.from_dict({"model": {"width": 6}, "integrator": {"t_end": 40.0}}))
    assert bundle_of_payload(encode(main_figure(traj, None, FigureOptions()))) == "basic"


@pytest.mark.parametrize("kind,bundle", [("scatter", "basic"), ("heatmap", "cartesian")])
def test_the_export_inlines_the_bundle_of_its_figure(kind: str, bundle: str) -> None:
    html = standalone_html(_figure(kind)).decode("utf-8")
    head = plotlyjs.FILES[bundle].read_text(encoding="utf-8")[:120]
    assert head in html
    others = [b for b in plotlyjs.FILES if b != bundle]
    assert not any(plotlyjs.FILES[b].read_text(encoding="utf-8")[:120] in html for b in others)


def test_the_route_serves_each_bundle(streamlit_server: str) -> None:
    from ui.server import plotly_js_url

    for name, path in plotlyjs.FILES.items():
        req = urllib.request.Request(streamlit_server + plotly_js_url(name),
                                     headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert r.status == 200 and "immutable" in r.headers["Cache-Control"]
            assert gzip.decompress(r.read()) == path.read_bytes(), name


RENDER_JS = """([payload, key, src]) => {
  const u = Uint8Array.from(atob(payload), c => c.charCodeAt(0));
  window.dispatchEvent(new MessageEvent('message', {data: {type: 'streamlit:render',
    args: {payload: u, fig_key: key, plotly_src: src, presenter: false, config: {}}}}));
}"""
DRAWN_JS = """(key) => {
  const p = window.EAEPlayer && window.EAEPlayer.players[0];
  const gd = document.querySelector('.eae-plot');
  if (!p || p.runKey !== key || !gd || !gd._fullData || p.busy > 0) return null;
  return {type: gd._fullData[0].type, heatmap: gd.querySelectorAll('.hm image').length,
          scripts: Array.from(document.scripts).map(s => s.src).filter(s => s.includes('plotly'))};
}"""


def _render(page: Any, fig: Scene, key: str, src: str) -> dict[str, Any]:
    page.evaluate(RENDER_JS, [base64.b64encode(encode(fig)).decode(), key, src])
    page.wait_for_function(DRAWN_JS, arg=key, timeout=60_000)
    return page.evaluate(DRAWN_JS, key)


@pytest.mark.browser
def test_a_player_loads_the_bigger_bundle_a_figure_needs(streamlit_server: str,
                                                         context_of: Any) -> None:
    """The player's own page (the Streamlit component), sent a scatter with the basic bundle
    and then a heatmap with the cartesian one: the second is drawn as a heatmap. The basic
    bundle alone does not know heatmaps (Plotly falls back to a scatter), which is what this
    would show if the player kept the first bundle."""
    from ui.server import plotly_js_url

    page = context_of(900, 600)
    errors: list[str] = []
    # the server declares the component when a page first imports the player
    page.goto(streamlit_server)
    page.wait_for_selector('iframe[title$="eae_player"]', timeout=300_000)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{streamlit_server}/component/ui.player.eae_player/index.html")
    got = _render(page, _figure("scatter"), "s", plotly_js_url("basic"))
    assert got["type"] == "scatter" and len(got["scripts"]) == 1, got
    got = _render(page, _figure("heatmap"), "h", plotly_js_url("basic"))
    assert got["type"] != "heatmap" and got["heatmap"] == 0, got  # basic cannot draw it
    got = _render(page, _figure("heatmap"), "h2", plotly_js_url("cartesian"))
    assert got["type"] == "heatmap" and got["heatmap"] == 1, got
    assert "plotly-cartesian" in got["scripts"][-1], got
    assert not errors, errors


@pytest.mark.parametrize("kind", ["scatter", "heatmap"])
def test_the_store_reads_the_same_from_the_figure_as_from_its_payload(kind: str) -> None:
    """`Shown.of` takes the design height and the bundle from the figure it was given (no
    second decoding of the payload's header): the same as read from the payload alone."""
    from ui.figures import Shown

    fig = _figure(kind)
    fig.layout["height"] = 432
    payload = encode(fig)
    a, b = Shown.of("k", payload), Shown.of("k", payload, fig)
    assert (a.design_height, a.bundle) == (b.design_height, b.bundle) == \
        (432, "basic" if kind == "scatter" else "cartesian")
