"""A fresh server says what it is doing: the start-up compilation's state and the visitor's
message (dynamics.warmup, ui.startup)."""

from __future__ import annotations

import time

from dynamics import warmup
from ui.startup import message


def test_state_before_any_warm_up_is_ready() -> None:
    # a process that never asked for a warm-up (tests, the CLI) compiles on demand
    s = warmup.WarmState(started=None, done=0, total=0, ready=False)
    assert s.remaining_s == 0.0 and not s.late


def test_remaining_time_follows_the_pace_once_a_run_is_done() -> None:
    now = time.time()
    fresh = warmup.WarmState(started=now - 2.0, done=0, total=3, ready=False, expected_s=25.0)
    assert 22.0 <= fresh.remaining_s <= 23.5 and not fresh.late
    paced = warmup.WarmState(started=now - 10.0, done=1, total=3, ready=False, expected_s=25.0)
    assert 19.0 <= paced.remaining_s <= 21.0  # 10 s per run so far, two runs left
    slow = warmup.WarmState(started=now - 40.0, done=0, total=3, ready=False, expected_s=25.0)
    assert slow.late and slow.remaining_s == 1.0
    text = message(slow)
    assert "0 of 3 done" in text and "longer than usual" in text
    assert "about 2" in message(paced) and "opens by itself" in message(paced)


def test_warm_kernels_runs_once_and_reports_ready() -> None:
    got = warmup.warm_kernels()
    assert got.ready and got.done == got.total == 3 and not got.error
    again = warmup.warm_kernels()  # later calls return at once
    assert again.started == got.started and again.done == 3
    assert warmup.state().as_dict()["ready"] is True


def test_a_visitor_during_start_up_gets_the_figure_at_once_or_the_message(monkeypatch,
                                                                           tmp_path) -> None:
    """The page's side, under AppTest, while the compilation is under way (the warm-up's state
    and its thread holding the kernels, as `warm_kernels` has them): the default run is
    computed at once with the kernels uncompiled and its figure drawn, with the note under it;
    a run too large for that shows the progress message instead of a blank page; once the
    kernels are ready, the page itself with the exact run."""
    import dynamics.service
    from devtools.apptest import players, run_page
    from devtools.server import REPO_ROOT
    from dynamics.service import Service
    from tests.test_uncompiled import compiling_elsewhere

    # a server of its own: the worker's service may hold the default run from another test
    # (then no run is computed at all, provisional or not)
    monkeypatch.setattr(dynamics.service, "_default", Service(tmp_path))
    monkeypatch.setattr(warmup, "_st", warmup._Progress(started=time.time(), total=3,
                                                        expected_s=25.0, running=True))
    with compiling_elsewhere():
        at = run_page(REPO_ROOT / "app.py")
        assert not at.exception and players(at)  # the figure, at once
        notes = " ".join(c.value for c in at.caption)
        assert "not compiled yet" in notes and "replaces this figure by itself" in notes
        assert not at.get("progress")
        big = run_page(REPO_ROOT / "app.py", {"data.kind": "teacher", "data.n": "200",
                                              "data.d": "10", "model.width": "100"})
        texts = " ".join(p.proto.text for p in big.get("progress"))
        assert "compiles the simulation kernels" in texts and "0 of 3 done" in texts
        assert not players(big)  # this run waits for the compiler
    monkeypatch.setattr(warmup, "_st", warmup._Progress(started=time.time(), total=3, done=3,
                                                        ready=True))
    at.run()
    assert not at.exception and players(at) and not at.get("progress")
    assert "not compiled yet" not in " ".join(c.value for c in at.caption)
