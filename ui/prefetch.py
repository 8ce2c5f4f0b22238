"""Speculative work while a page is idle: the neighbouring settings' runs (the service's
background prefetch) and the first ones' figures (`ui.figures`), so the next step of a control
is a cache hit for the run and the figure.

`prefetch` hands configs to the runtime's speculation (`runtime.speculation`: background runs
only while no page's request runs or waits, cancelled by any) and builds the main figures of
the first `WARM_FIGURES` in one background thread; `page_busy` (a script run started) drops what has
not begun, so the user's own figure goes first. Off when the server's settings say so
(`EAE_PREFETCH=0`, e.g. in tests that do not test it), and while the server is shared: when
another session ran a page in the last `BUSY_WINDOW_S`, nothing is speculated and what was
pending is dropped — in a class of 30 that change a setting together, each visitor's guessed
next steps cost the others their own figures (measured: change p95 6.5 s with speculation,
2.5 s without, `python -m bench load --students 30`). Speculation is for an idle server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import runtime
from dynamics.config import Config
from dynamics.limits import get_settings
from dynamics.service import Service
from dynamics.status import Status
from dynamics.trajectory import Trajectory
from viz.options import FigureOptions

from . import figures, sessions

WARM_FIGURES = 1  # neighbours whose figure is built ahead: the next step of the moved control
WARM_DELAY_S = 0.5  # after the page's own figure went out, before the first speculative one
BUSY_WINDOW_S = 15.0  # another session's page run this recent: the server is shared
# what is in hand (the figures to build, their worker, recent page runs) is the runtime's
# board, `Runtime.prefetch`


def enabled() -> bool:
    """Whether speculative work is on (`EAE_PREFETCH`, default 1 = on)."""
    return get_settings().prefetch > 0


def prefetch(configs: Sequence[Config], options: FigureOptions | None = None) -> int:
    """Hand `configs` (e.g. `ui.controls.neighbours` of the settings on screen) to the
    service's background prefetch and, with `options`, build the first `WARM_FIGURES` main
    figures in the background. Never blocks or fails the page; a newer call replaces the
    list. How many runs are pending."""
    if not enabled():
        return 0
    rt = runtime.current()
    try:
        if shared():
            rt.speculation.prefetch([])  # what an earlier visitor left pending goes too
            return 0
        pending = rt.speculation.prefetch(list(configs))
    except Exception:  # speculative: never break the page
        return 0
    if options is not None:
        board = rt.prefetch
        with board.lock:
            board.gen += 1
            sid = sessions.session_id()
            board.todo = [(c, options, rt.service, board.gen, sid) for c in configs[:WARM_FIGURES]]
            if board.thread is None:
                board.thread = threading.Thread(target=_warm_loop, args=(rt,), daemon=True,
                                                name="eae-warm-figures")
                board.thread.start()
    return pending


def page_busy(sid: str | None = None) -> None:
    """A script run of session `sid` (default: this script's) started: speculative figures
    not yet begun are dropped (a figure build holds the interpreter for a few hundredths of a
    second; the user's own run goes first), and the run is remembered for `shared`."""
    sid = sid if sid is not None else sessions.session_id()
    now = time.monotonic()
    board = runtime.current().prefetch
    with board.lock:
        board.gen += 1
        board.todo = []
        if sid is not None:
            board.recent[sid] = now
        for old in [k for k, t in board.recent.items() if now - t > BUSY_WINDOW_S]:
            del board.recent[old]


def shared(sid: str | None = None) -> bool:
    """Whether a session other than `sid` (default: this script's) started a page run in
    the last `BUSY_WINDOW_S` seconds."""
    sid = sid if sid is not None else sessions.session_id()
    now = time.monotonic()
    board = runtime.current().prefetch
    with board.lock:
        return any(k != sid and now - t <= BUSY_WINDOW_S for k, t in board.recent.items())


def warm_idle(timeout: float) -> bool:
    """Wait until the speculative figures are built (tests); True if they are."""
    board = runtime.current().prefetch
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with board.lock:
            if board.thread is None:
                return True
        time.sleep(0.02)
    return False


def speculative_figure(traj: Trajectory, service: Service,
                       options: FigureOptions) -> figures.Shown:
    """The main figure of `traj` (with its analysis), built behind every visitor's figure
    (`Turns.speculative`): for the neighbours here and for the scrub families."""
    turns = runtime.current().turns
    with turns.speculative():
        with turns.turn():
            analysis = service.analyse(traj)
        return figures.main(traj, analysis, options)  # takes its turn itself


def _warm_loop(rt: runtime.Runtime) -> None:
    """Build the listed figures one at a time, each `WARM_DELAY_S` after the last page run or
    figure; a figure of a replaced list (`prefetch`, `page_busy`) is skipped."""
    board = rt.prefetch
    while True:
        time.sleep(WARM_DELAY_S)
        with board.lock:
            if not board.todo:
                board.thread = None
                return
            config, options, service, gen, sid = board.todo.pop(0)
            if gen != board.gen:
                continue
        if shared(sid):  # another visitor arrived meanwhile: their figure, not a guess
            continue
        try:
            traj = service.peek(config)
            if traj is None and rt.speculation.idle(timeout=10.0):
                traj = service.peek(config)
            with board.lock:
                stale = gen != board.gen
            if traj is None or stale or not Status(traj.status).cacheable:
                continue
            speculative_figure(traj, service, options)
        except Exception:  # speculative: the page reports problems when it gets there
            continue


__all__ = ["BUSY_WINDOW_S", "WARM_FIGURES", "enabled", "page_busy", "prefetch", "shared",
           "speculative_figure", "warm_idle"]
