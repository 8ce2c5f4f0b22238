"""devtools.stclient against a real server: a protocol-level session opens the Explorer, gets
the figure player's payload over HTTP, changes widgets and sees the new figures; and it
switches pages through the navigation the server sent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from devtools.stclient import ClientError, Session
from viz.payload import decode, header_of

TIMEOUT = 300.0  # s: a loaded shared machine; the first run on a fresh server compiles/loads


def _title(payload: bytes) -> str:
    return str(header_of(payload)["layout"]["title"]["text"])


@pytest.fixture(scope="module")
def server(start_streamlit, tmp_path_factory: pytest.TempPathFactory) -> str:
    cache = Path(tmp_path_factory.mktemp("stclient")) / "cache"
    return start_streamlit("serve.py", env={"EAE_CACHE_DIR": str(cache), "EAE_PREFETCH": "0"})


def test_explorer_width_change_gives_a_new_figure(server: str) -> None:
    with Session.open(server, query="model.width=23", timeout=TIMEOUT) as s:
        first = s.wait_chart(timeout=TIMEOUT)
        s.wait_idle()
        assert first.kind == "player" and first.payload is not None
        assert first.src == f"/api/eae/fig/{first.key}"
        assert "width m = 23" in _title(first.payload), _title(first.payload)
        assert [p.fig_key for p in s.players()] == [first.key]
        width = s.widget("width m")
        assert (width.kind, width.key, width.value()) == ("number_input", "eae.model.width", 23)
        assert s.widget("model.width") == width  # by key suffix as well

        s.set_widget("width m", 31)
        second = s.wait_chart(known={first.key}, timeout=TIMEOUT)
        s.wait_idle()
        assert second.key != first.key
        assert second.payload is not None and "width m = 31" in _title(second.payload)
        assert [p.fig_key for p in s.players()] == [second.key]  # the old player was replaced
        assert re.search(r"(^|&)model\.width=31(&|$)", s.query_string), s.query_string
        assert s.widget("width m").value() == 31

        # a radio: the time axes become linear (the payload's layout says so)
        s.set_widget("time axis", "linear")
        third = s.wait_chart(known={first.key, second.key}, timeout=TIMEOUT)
        s.wait_idle()
        assert third.payload is not None
        layout = decode(third.payload).layout_json()
        assert layout["xaxis2"]["type"] == "linear", layout["xaxis2"]
        assert "width m = 31" in _title(third.payload)  # the width change was kept
        assert "view.time_axis=linear" in s.query_string
        assert not s.exceptions, s.exceptions

        with pytest.raises(ClientError, match="no option"):
            s.set_widget("time axis", "cubic")
        with pytest.raises(ClientError, match="no widget"):
            s.widget("no such control")


def test_pages_from_navigation(server: str) -> None:
    with Session.open(server, page="status", timeout=TIMEOUT) as s:
        s.wait_idle()
        assert s.page == "status"
        assert {"", "overview", "papers", "compare", "real_data", "sweeps",
                "status"} <= set(s.pages)
        assert any("About & status" in t for t in s.texts()), s.texts()[:5]
        assert not s.players()
        s.goto("papers")
        chart = s.wait_chart(timeout=TIMEOUT)
        s.wait_idle()
        assert s.page == "papers" and chart.payload is not None
        assert not any("About & status" in t for t in s.texts())  # the old page's elements left
        assert not s.exceptions, s.exceptions


def test_upload_into_the_explorer(server: str) -> None:
    from dynamics.uploads import example_csv

    with Session.open(server, query="data.kind=array", timeout=TIMEOUT) as s:
        s.wait_idle()
        s.upload("CSV or NPZ of points and labels", [("bad.csv", b"x1,x2,y\n1,2,1\n3,oops,-1\n")],
                 mime="text/csv")
        s.wait_idle()
        assert any("cannot be used" in t for t in s.texts()), s.texts()
        known = {p.fig_key for p in s.players()}
        s.upload("CSV or NPZ of points and labels", [("points.csv", example_csv())],
                 mime="text/csv")
        chart = s.wait_chart(known=known, timeout=TIMEOUT)
        s.wait_idle()
        assert chart.payload is not None and not s.exceptions, s.exceptions
        assert not any("cannot be used" in t for t in s.texts())
        assert "data.kind=array" in s.query_string and "data.X" not in s.query_string
