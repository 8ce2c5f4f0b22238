"""A fresh server says what it is doing: the start-up compilation's state and the visitor's
message (dynamics.warmup, ui.startup)."""

from __future__ import annotations

import os
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


def test_a_visitor_during_start_up_gets_the_figure_at_once_or_the_message(tmp_path) -> None:
    """The page's side, under AppTest, while the compilation is under way (the warm-up's state
    and its thread holding the kernels, as `warm_kernels` has them): the default run is
    computed at once with the kernels uncompiled and its figure drawn, with the note under it;
    a run too large for that shows the progress message instead of a blank page; once the
    kernels are ready, the page itself with the exact run. In a fresh interpreter, as a new
    server is: a worker that ran other pages holds their runs and figures in memory (the page
    then shows the default figure without running anything)."""
    import subprocess
    import sys

    from devtools.server import REPO_ROOT

    env = {**os.environ, "EAE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO_ROOT)}
    r = subprocess.run([sys.executable, "-c",
                        "from tests.test_startup import _visitor_during_start_up as f; f()"],
                       cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.stdout[-2000:],
                                                                   r.stderr[-3000:])


def _visitor_during_start_up() -> None:
    from devtools.apptest import players, run_page
    from devtools.server import REPO_ROOT
    from tests.test_uncompiled import compiling_elsewhere

    warmup._st = warmup._Progress(started=time.time(), total=3, expected_s=25.0, running=True)
    with compiling_elsewhere():
        at = run_page(REPO_ROOT / "app.py")
        assert not at.exception and players(at)  # the figure, at once
        notes = " ".join(c.value for c in at.caption)
        assert "not compiled yet" in notes and "replaces this figure by itself" in notes, notes
        assert not at.get("progress")
        big = run_page(REPO_ROOT / "app.py", {"data.kind": "teacher", "data.n": "200",
                                              "data.d": "10", "model.width": "100"})
        texts = " ".join(p.proto.text for p in big.get("progress"))
        assert "compiles the simulation kernels" in texts and "0 of 3 done" in texts
        assert not players(big)  # this run waits for the compiler
    warmup._st = warmup._Progress(started=time.time(), total=3, done=3, ready=True)
    at.run()
    assert not at.exception and players(at) and not at.get("progress")
    assert "not compiled yet" not in " ".join(c.value for c in at.caption)
    print("ok")


def test_a_stopped_server_leaves_no_compiler_running(tmp_path, monkeypatch) -> None:
    """A server killed while its kernels compile apart takes the compiling process with it
    (the compiler reads its end of a pipe: before, a stopped server left `python -m
    dynamics.warmup` compiling for ~30 s of a core, slowing whatever ran next). A process
    stands in for the server: it starts the compile with an empty numba cache, says the
    compiler's pid and is killed at once. The compiler must then end without having written
    the kernels (an orphan that kept compiling writes them all)."""
    import signal
    import subprocess
    import sys

    from devtools.server import REPO_ROOT

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "nb"), "PYTHONPATH": str(REPO_ROOT)}
    code = ("import subprocess\n"
            "real = subprocess.Popen\n"
            "def spy(*a, **k):\n"
            "    p = real(*a, **k); print(p.pid, flush=True); return p\n"
            "subprocess.Popen = spy\n"
            "from dynamics import warmup\n"
            "warmup._compile_in_a_subprocess()\n")
    server = subprocess.Popen([sys.executable, "-c", code], cwd=REPO_ROOT, env=env,
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    compiler = int(server.stdout.readline())
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=60)
    for _ in range(3000):  # a guard against a hang, not a timing: the compile ends either way
        try:
            os.kill(compiler, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(compiler, signal.SIGKILL)
        raise AssertionError("the compiler kept running after its server was killed")
    monkeypatch.setenv("NUMBA_CACHE_DIR", env["NUMBA_CACHE_DIR"])
    assert not warmup._cache_is_warm(), "the compiler went on after its server was killed"
