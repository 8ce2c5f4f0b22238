"""Smoke tests of the classroom benchmark (`python -m bench load --students N`): its helpers,
the server watchers on a real server, a two-student class end to end, and the py-spy summary.
Nothing here asserts a speed: the benchmark measures it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
from pathlib import Path

import pytest

from bench import classroom, pyspy
from bench.app_server import Server
from bench.classroom import Options, Visit
from bench.serverwatch import (
    HealthPoller,
    TreeSampler,
    pct,
    process_tree,
    tree_cpu_s,
    tree_rss_mb,
)


def test_widths_are_distinct_and_avoid_the_link_width() -> None:
    ws = classroom.widths_for(40)
    assert len(set(ws)) == 40 and classroom.DEFAULT_WIDTH not in ws
    assert classroom.widths_for(3, start=49) == [49, 51, 52]


def test_changes_are_spread_inside_the_window() -> None:
    when = classroom.offsets(30, 5.0)
    assert when[0] == 0.0 and max(when) < 5.0 and when == sorted(when)
    assert len(set(when)) == 30


def test_percentiles_and_phase_stats() -> None:
    assert pct([3.0, 1.0, 2.0, None], 50) == 2.0
    assert pct([1.0, 2.0], 95) == pytest.approx(1.95)
    assert pct([], 50) is None
    visits = [Visit("p0", "change", chart_s=1.0, right_figure=True),
              Visit("p1", "change", chart_s=3.0, right_figure=False),
              Visit("p2", "change", error="timed out")]
    st = classroom.phase_stats(visits)
    assert (st["n"], st["ok"], st["wrong_figure"]) == (3, 1, 1)
    assert st["max_s"] == 3.0 and st["errors"] == ["timed out"]


def test_width_in_title() -> None:
    title = "ReLU, width m = 37 · ε = 0.001 · square loss (mean)"
    assert classroom.names_width(title, 37)
    assert not classroom.names_width(title, 3)
    assert not classroom.names_width(title, 370)


def test_counters_from_metric_texts() -> None:
    got = classroom.counters_of({"Computed": "1,204", "Running now": "1 of 2",
                                 "Memory size": "12.5 MB", "Label": "none"})
    assert got == {"Computed": 1204.0, "Running now": 1.0, "Memory size": 12.5}


def test_quick_options_and_server_env() -> None:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--page", default="")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--no-warm", action="store_true")
    classroom.add_arguments(ap)
    o = classroom.options_from(ap.parse_args(["--quick", "--server-env", "EAE_PREFETCH=0"]))
    assert (o.students, o.rss_wait_s, o.env) == (6, 10.0, (("EAE_PREFETCH", "0"),))
    o = classroom.options_from(ap.parse_args(["--students", "30", "--browsers", "10"]))
    assert (o.students, o.browsers, o.window_s, o.rss_wait_s) == (30, 10, 5.0, 60.0)
    with pytest.raises(SystemExit):
        classroom.options_from(ap.parse_args(["--server-env", "EAE_PREFETCH"]))


def test_pyspy_summary_of_collapsed_stacks(tmp_path: Path) -> None:
    raw = tmp_path / "raw.txt"
    raw.write_text(
        "thread (11): ScriptRunner.scriptThread;run (threading.py:1);main_figure "
        "(viz/main_figure.py:40);to_plotly_json (plotly/basedatatypes.py:9) 6\n"
        "thread (12): eae-flight-3f2a9c1d;run (threading.py:1);simulate "
        "(dynamics/simulate.py:400) 3\n"
        "thread (13): MainThread;run_forever (asyncio/base_events.py:600);EpollSelector.select "
        "(selectors.py:468) 5\n"  # waiting: left out
        "thread (14): AnyIO worker thread;_compress_body (starlette/middleware/gzip.py:222) 1\n"
        "thread (11): ScriptRunner.scriptThread;run (threading.py:1);"
        "ScriptRunner._on_script_finished (streamlit/runtime/scriptrunner/script_runner.py:1055)"
        " 10\n")
    s = pyspy.summarise(raw)
    assert (s["samples"], s["waiting"]) == (20, 5)
    gc = "gc.collect(2) after every script run (Streamlit's runner.postScriptGC)"
    assert dict(s["categories"])[gc] == pytest.approx(0.5)
    cats = dict(s["categories"])
    assert cats["plotly (validation, to JSON)"] == pytest.approx(0.3)  # innermost marker wins
    assert cats["simulate (numba kernels, frame recording)"] == pytest.approx(0.15)
    assert cats["gzip of HTTP responses"] == pytest.approx(0.05)
    assert dict(s["threads"])["eae-flight"] == pytest.approx(0.15)
    assert dict(s["inclusive"])["viz/main_figure.py:main_figure"] == pytest.approx(0.3)
    assert "20 samples" in pyspy.render(s)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    srv = Server(env={"EAE_CACHE_DIR": str(tmp_path_factory.mktemp("cls") / "cache"),
                      "EAE_PREFETCH": "0"})
    try:
        srv.wait_ready()
        classroom.wait_warm(srv.url)
        yield srv
    finally:
        srv.stop()


@pytest.mark.server
def test_watchers_on_a_real_server(server: Server) -> None:
    pid = server.proc.pid
    assert pid in process_tree(pid) and os.getpid() not in process_tree(pid)
    assert tree_rss_mb(pid) > 50  # a Python interpreter with Streamlit imported
    c0 = tree_cpu_s(pid)
    poller, sampler = HealthPoller(server.url, interval_s=0.05), TreeSampler(pid, 0.1)
    poller.start()
    sampler.start()
    counters = classroom.read_counters(server.url)  # a page run: some CPU on the server
    deadline = time.monotonic() + 30
    while (len(poller.samples) < 5 or len(sampler.samples) < 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    poller.stop()
    sampler.stop()
    assert "Computed" in counters, counters
    w = poller.window()
    assert w["polls"] >= 5 and w["failed"] == 0 and w["max_ms"] >= w["p50_ms"] > 0
    assert sampler.peak_rss() >= sampler.samples[0].rss_mb > 50
    assert tree_cpu_s(pid) > c0


@pytest.mark.server
def test_two_students_open_and_change(server: Server) -> None:
    async def go() -> tuple[list[Visit], list[Visit]]:
        got = await asyncio.gather(*(classroom.open_one(i, server.url, "", "", 300.0)
                                     for i in range(2)))
        sessions = [s for s, _ in got]
        changes = await asyncio.gather(*(classroom.change_one(i, s, w, 0.2 * i, 300.0)
                                         for i, (s, w) in enumerate(zip(sessions, (21, 22),
                                                                        strict=True))))
        await asyncio.gather(*(s.close() for s in sessions if s is not None))
        return [v for _, v in got], list(changes)

    # in a thread of its own: a browser test earlier in this worker leaves Playwright's event
    # loop running in the main thread, where asyncio.run refuses to start another
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        opens, changes = pool.submit(asyncio.run, go()).result()
    for v in opens + changes:
        assert v.error is None and v.chart_s is not None and v.key, v
    assert opens[0].key == opens[1].key  # one link, one figure
    assert all(v.right_figure for v in changes), changes
    assert len({v.key for v in changes} | {opens[0].key}) == 3


@pytest.mark.slow
def test_a_small_class_end_to_end() -> None:
    rep = classroom.run(Options(students=2, window_s=0.5, pause_s=0.0, rss_wait_s=1.0,
                                cpu_charts=1, warm=False, timeout_s=300.0), log=lambda m: None)
    for phase in ("open", "change"):
        assert rep["phases"][phase]["ok"] == 2, rep["phases"][phase]
    assert rep["counters"].get("Computed") == 3  # the link once, each new width once
    assert rep["cpu_per_chart"]["charts"] == 1 and rep["cpu_per_chart"]["computed"] == 0
    text = classroom.render(rep)
    assert "(a) open the same link" in text and "(d) server RSS" in text
