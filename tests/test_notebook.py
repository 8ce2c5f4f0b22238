"""viz.notebook: the Explorer's figure in one call — a config is simulated and analysed, a
trajectory is drawn as it is, and Jupyter gets the standalone page (viz.export) in an iframe.
The example notebook itself runs in tests/test_install.py, against the installed wheel."""

from __future__ import annotations

import html

import pytest

from dynamics.config import Config, ConfigError
from dynamics.simulate import simulate
from viz.export import standalone_html
from viz.main_figure import main_figure
from viz.notebook import NotebookFigure, show
from viz.options import FigureOptions

SMALL = {"model": {"width": 6}, "record": {"frames": 12}}


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
    assert shown.startswith('<iframe srcdoc="') and 'sandbox="allow-scripts"' in shown
    srcdoc = shown.split('srcdoc="', 1)[1].split('" title=', 1)[0]
    assert '"' not in srcdoc and html.unescape(srcdoc) == page  # the page, quoted whole
    assert f"height: {fig.height_px}px" in shown and fig.height_px > 300


def test_a_trajectory_is_drawn_as_it_is_with_the_explorer_figure() -> None:
    traj = simulate(Config.from_dict(SMALL))
    fig = show(traj, analysis=False, time_axis="linear")
    assert fig.trajectory is traj and fig.analysis is None
    want = main_figure(traj, None, FigureOptions(time_axis="linear"))
    assert fig.figure.items == want.items and fig.figure.layout == want.layout
    assert fig.html == standalone_html(want)


def test_json_text_and_defaults_are_configs_and_bad_input_names_the_field(tmp_path) -> None:
    assert show(Config.from_dict(SMALL).to_json()).trajectory.config == Config.from_dict(SMALL)
    with pytest.raises(ConfigError) as exc:
        show({"model": {"width": -3}})
    assert "model.width" in str(exc.value.errors)
    fig = show(SMALL)
    assert fig.save(tmp_path / "fig.html").read_bytes() == fig.html
