"""Exports: the standalone HTML is self-contained and animated, the PNG is a PNG, the
trajectory's .npz round-trips, and the claims table has its columns."""

from __future__ import annotations

import base64
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
from viz.export import png_available, png_bytes, standalone_html
from viz.main_figure import main_figure
from viz.payload import decode

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
    assert "plotly.js" in html.lower() and "EAEPlayer.mount" in html  # the dashboard's player
    assert not re.search(r"<script[^>]+src=", html), "must not load external scripts"
    assert not re.search(r"<link[^>]+href=", html), "must not load external styles"
    assert html.lstrip().lower().startswith("<html") or "<!doctype" in html[:100].lower()
    # the payload inside is the figure's, every frame of it
    m = re.search(r"id='eae-payload'>([A-Za-z0-9+/=]+)</script>", html)
    assert m is not None
    scene = decode(base64.b64decode(m.group(1)))
    assert scene.frames.n == fig.frames.n > 10
    assert scene.frames.labels == fig.frames.labels
    assert set(scene.arrays) == set(fig.arrays)


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


def test_png_bytes_is_a_png_of_the_frame_asked_for(fig):
    ok, why = png_available()
    assert ok, why  # Chromium is at /usr/bin/chromium in this environment
    last = png_bytes(fig, frame=-1, width=900, height=500, scale=1)
    assert last[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(last[16:20], "big"), int.from_bytes(last[20:24], "big")
    assert (w, h) == (900, 500)
    a, b = _pixels(last), _pixels(png_bytes(fig, frame=0, width=900, height=500, scale=1))
    assert (np.abs(a - b).sum(axis=2) > 60).sum() > 200  # the neurons and the cursor moved
    assert (a.sum(axis=2) < 600).sum() > 5000  # something is drawn (not a blank page)


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
