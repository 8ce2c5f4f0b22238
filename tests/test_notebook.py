"""viz.notebook: the Explorer's figure in one call — a config is simulated and analysed, a
trajectory is drawn as it is, and Jupyter gets the standalone page (viz.export) in an iframe.
The example notebook itself runs in tests/test_install.py, against the installed wheel."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any

import pytest

from dynamics.config import Config, ConfigError
from dynamics.simulate import simulate
from viz.export import standalone_html
from viz.main_figure import main_figure
from viz.notebook import NotebookFigure, show
from viz.options import FigureOptions

SMALL = {"model": {"width": 6}, "record": {"frames": 12}}
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "notebook.ipynb"


def test_a_config_is_simulated_analysed_and_embedded_offline() -> None:
    fig = show(SMALL)
    assert isinstance(fig, NotebookFigure)
    assert fig.trajectory.config == Config.from_dict(SMALL)
    assert fig.trajectory.status == "completed" and fig.analysis is not None
    assert fig.figure.frames.n == fig.trajectory.n_frames == 12
    assert len(repr(fig)) < 200 and "width m = 6" in repr(fig)  # one line in a terminal
    page = fig.html.decode()
    assert "<script src=" not in page  # plotly.js embedded: nothing fetched
    shown = fig._repr_html_()
    assert shown.startswith(f'<iframe id="{fig.frame_id}" srcdoc="')
    assert 'sandbox="allow-scripts"' in shown
    srcdoc = shown.split('srcdoc="', 1)[1].split('" title=', 1)[0]
    assert '"' not in srcdoc and html.unescape(srcdoc) == page  # the page, quoted whole
    assert f"height: {fig.height_px}px" in shown and fig.height_px > 300


def test_a_trajectory_is_drawn_as_it_is_with_the_explorer_figure() -> None:
    traj = simulate(Config.from_dict(SMALL))
    fig = show(traj, analysis=False, time_axis="linear")
    assert fig.trajectory is traj and fig.analysis is None
    want = main_figure(traj, None, FigureOptions(time_axis="linear"))
    assert fig.figure.items == want.items and fig.figure.layout == want.layout
    assert fig.html == standalone_html(want, report=fig.frame_id)


def test_json_text_and_defaults_are_configs_and_bad_input_names_the_field(tmp_path) -> None:
    assert show(Config.from_dict(SMALL).to_json()).trajectory.config == Config.from_dict(SMALL)
    with pytest.raises(ConfigError) as exc:
        show({"model": {"width": -3}})
    assert "model.width" in str(exc.value.errors)
    fig = show(SMALL)
    assert fig.save(tmp_path / "fig.html").read_bytes() == fig.html


def test_the_plain_text_form_is_one_line() -> None:
    """A terminal IPython prints the object's text/plain form: one line, not the page."""
    from IPython.core.interactiveshell import InteractiveShell

    fig = show(SMALL)
    data, _ = InteractiveShell.instance().display_formatter.format(fig)
    text = data["text/plain"]
    assert "\n" not in text and len(text) < 200 and "completed" in text
    assert len(data["text/html"]) > 100_000  # the page goes to the notebook's HTML view


def test_the_example_notebook_is_committed_without_outputs() -> None:
    """Executed, it held every figure's page (6.1 MB); committed, it holds the code only."""
    assert EXAMPLE.stat().st_size < 500_000
    nb = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(not c.get("outputs") and c.get("execution_count") is None
                        for c in code)


@pytest.mark.browser
def test_the_frame_fits_its_content_with_the_commentary_visible(browser: Any,
                                                                tmp_path: Path) -> None:
    """In a notebook cell of any width the iframe ends under the player's last line: the
    commentary under the slider is inside it (it was cut off), and no large blank is left."""
    fig = show({"model": {"width": 12}, "record": {"frames": 40}})
    page = tmp_path / "cell.html"
    page.write_text("<html><body style='margin:8px'>" + fig._repr_html_() + "</body></html>",
                    encoding="utf-8")
    for width in (660, 1100):
        tab = browser.new_page(viewport={"width": width, "height": 1400})
        try:
            tab.goto(page.as_uri())
            frame = next(f for f in tab.frames if f != tab.main_frame)
            frame.wait_for_function("() => window.EAEPlayer && EAEPlayer.players[0] && "
                                    "EAEPlayer.players[0].run", timeout=60_000)
            need = "() => Math.ceil(document.getElementById('eae-figure')" \
                   ".getBoundingClientRect().bottom)"
            end = time.monotonic() + 30
            while time.monotonic() < end:  # the page reports its height a moment later
                outer = tab.evaluate("() => document.querySelector('iframe')"
                                     ".getBoundingClientRect().height")
                if abs(outer - frame.evaluate(need)) <= 2:
                    break
                tab.wait_for_timeout(100)
            outer = tab.evaluate("() => document.querySelector('iframe')"
                                 ".getBoundingClientRect().height")
            caption = frame.evaluate("() => document.querySelector('.eae-caption')"
                                     ".getBoundingClientRect().bottom")
            assert frame.evaluate("() => document.querySelector('.eae-caption').textContent")
            assert caption <= outer, (width, caption, outer)  # the commentary is visible
            assert abs(outer - frame.evaluate(need)) <= 2, (width, outer)  # and no blank
        finally:
            tab.close()
