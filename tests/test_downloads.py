"""Exports: the standalone HTML is self-contained and animated, the PNG is a PNG, the
trajectory's .npz round-trips, and the claims table has its columns."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.papers import Claim
from dynamics.simulate import simulate
from dynamics.trajectory import Trajectory
from ui.downloads import claims_csv, claims_table, file_stem, header_json
from viz.export import frame_figure, png_available, png_bytes, standalone_html
from viz.main_figure import main_figure

SMALL = {"model": {"width": 12}, "record": {"frames": 40}, "integrator": {"t_end": 40.0}}


@pytest.fixture(scope="module")
def traj() -> Trajectory:
    return simulate(Config.from_dict(SMALL))


@pytest.fixture(scope="module")
def fig(traj):
    return main_figure(traj, analyse(traj))


def test_standalone_html_is_self_contained(fig):
    html = standalone_html(fig).decode("utf-8")
    assert len(html) > 1_000_000  # plotly.js is inside
    assert "Plotly.newPlot" in html or "Plotly.react" in html
    assert "plotly.js v" in html.lower() or "plotly.js" in html.lower()
    assert not re.search(r"<script[^>]+src=", html), "must not load external scripts"
    assert '"frames"' in html or "addFrames" in html
    # the figure's frames and slider steps are all there
    m = re.search(r"Plotly\.addFrames\('early-alignment-figure',\s*(\[.*?\])\)", html, re.S)
    assert m is not None
    frames = json.loads(m.group(1))
    assert len(frames) == len(fig.frames) > 10
    assert html.lstrip().lower().startswith("<html") or "<!doctype" in html[:100].lower()


def test_frame_figure_applies_the_frame(fig):
    last = frame_figure(fig, -1)
    first = frame_figure(fig, 0)
    assert not last.frames and not first.frames
    assert last.layout.sliders[0].active == len(fig.frames) - 1
    fr = fig.frames[-1]
    i = fr.traces[0]
    assert last.to_plotly_json()["data"][i]["x"] == fr.to_plotly_json()["data"][0]["x"]
    assert first.to_plotly_json()["data"][i]["x"] != last.to_plotly_json()["data"][i]["x"]


def test_png_bytes_is_a_png(fig):
    ok, why = png_available()
    assert ok, why  # Chromium is at /usr/bin/chromium in this environment
    png = png_bytes(fig, frame=-1, width=900, height=500, scale=1)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (w, h) == (900, 500)


def test_trajectory_npz_round_trips(traj):
    blob = traj.to_npz_bytes()
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(header_json(traj))
    back = Trajectory.from_parts(header, arrays)
    assert back.config == traj.config
    np.testing.assert_array_equal(back.t, traj.t)
    np.testing.assert_array_equal(back.norms, traj.norms)
    np.testing.assert_array_equal(back.W, traj.W)
    assert back.status == traj.status
    assert file_stem(traj).startswith("early-alignment_points_m12_")


def test_claims_table_and_csv():
    claims = [Claim("a.one", "x equals 1", 1.0, 1.0, "± 0.1", True),
              Claim("a.two", "a list", [1, 2], "> 0", "exact", False, "some details"),
              Claim("a.three", "an illustration", "3 of 4", "—", "—", None,
                    justification="not counted", integrator="gf rtol 1e-06")]
    df = claims_table(claims)
    assert list(df["result"]) == ["pass", "FAIL", "illustration"]
    for col in ("measured", "expected", "tolerance", "result", "justification", "integrator"):
        assert col in df.columns
    assert df["integrator"].iloc[2] == "gf rtol 1e-06"
    csv = claims_csv(claims).decode("utf-8-sig")
    assert csv.splitlines()[0].startswith("claim,statement,measured,expected,tolerance,result")
    assert "FAIL" in csv and "± 0.1" in csv
