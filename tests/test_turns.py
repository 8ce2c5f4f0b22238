"""`runtime.admission`: interpreter-bound work in arrival order, visitors before speculative
work; page runs a few at a time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from runtime.admission import Slots, Turns


def _queue_up(turns: Turns, names: list[tuple[str, bool]], order: list[str]) -> None:
    """Hold the turn, start one thread per name (each queued before the next starts), then
    let go: `order` records the order in which they got their turn."""
    started: list[threading.Thread] = []

    def work(name: str, spec: bool) -> None:
        if spec:
            with turns.speculative(), turns.turn():
                order.append(name)
        else:
            with turns.turn():
                order.append(name)

    with turns.turn():
        for name, spec in names:
            th = threading.Thread(target=work, args=(name, spec))
            n = turns.waiting()
            th.start()
            deadline = time.monotonic() + 60  # a liveness bound, not a timing
            while turns.waiting() == n and time.monotonic() < deadline:
                time.sleep(0.001)
            assert turns.waiting() == n + 1, name
            started.append(th)
    for th in started:
        th.join(60)
        assert not th.is_alive()


def test_turns_are_taken_in_arrival_order() -> None:
    turns, order = Turns(), []
    _queue_up(turns, [(f"v{i}", False) for i in range(6)], order)
    assert order == [f"v{i}" for i in range(6)]
    assert turns.taken == 7 and turns.waiting() == 0


def test_speculative_work_waits_behind_every_visitor_queued() -> None:
    turns, order = Turns(), []
    _queue_up(turns, [("s1", True), ("v1", False), ("s2", True), ("v2", False)], order)
    assert order == ["v1", "v2", "s1", "s2"]


def test_a_thread_holding_its_turn_is_granted_a_nested_one() -> None:
    turns = Turns()
    with turns.turn():
        with turns.turn():
            pass
        assert turns.waiting() == 0
    got = []
    th = threading.Thread(target=lambda: got.append(turns.turn().__enter__()))
    th.start()
    th.join(60)
    assert not th.is_alive()  # the outer turn was let go: another thread gets one


def _most_inside(enter: Callable[[], AbstractContextManager[object]]) -> int:
    """8 threads enter 20 times each; the most that were inside at once."""
    inside, most = [0], [0]
    lock = threading.Lock()

    def work() -> None:
        for _ in range(20):
            with enter():
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0.0005)
                with lock:
                    inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    return most[0]


def test_one_turn_at_a_time() -> None:
    turns = Turns()
    assert _most_inside(turns.turn) == 1 and turns.taken == 160


# ------------------------------------------------------------------------- page slots


def _wait_until(cond, what: str) -> None:
    deadline = time.monotonic() + 60  # a liveness bound, not a timing
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.001)


def test_at_most_n_slots_held_at_once() -> None:
    slots = Slots(2)
    assert _most_inside(slots.slot) == 2
    assert slots.admitted == 160 and slots.state() == (0, 0)


def test_slots_are_given_in_arrival_order_and_leave_admits_the_next() -> None:
    slots, order = Slots(1), []
    release = threading.Event()
    left = threading.Event()

    def holder() -> None:
        with slots.slot():
            order.append("holder")
            left.wait(10)
            slots.leave()  # a long wait starts: the next run is admitted meanwhile
            release.wait(10)
            with slots.slot():  # nested after leaving: granted at once, no second slot taken
                order.append("holder again")

    def visitor(name: str) -> None:
        with slots.slot():
            order.append(name)

    h = threading.Thread(target=holder)
    h.start()
    _wait_until(lambda: slots.state() == (1, 0), "the holder is admitted")
    visitors = []
    for i in range(3):
        th = threading.Thread(target=visitor, args=(f"v{i}",))
        th.start()
        _wait_until(lambda i=i: slots.state() == (1, i + 1), f"v{i} queued")
        visitors.append(th)
    left.set()
    for th in visitors:
        th.join(60)
        assert not th.is_alive()
    release.set()
    h.join(60)
    assert order == ["holder", "v0", "v1", "v2", "holder again"]
    assert slots.admitted == 4 and slots.state() == (0, 0)


def test_no_limit_admits_everyone() -> None:
    slots = Slots(0)
    entered = threading.Barrier(5, timeout=10)  # all five inside at once, or it breaks

    def work() -> None:
        with slots.slot():
            entered.wait()

    threads = [threading.Thread(target=work) for _ in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not entered.broken and slots.state() == (0, 0)


def test_the_app_runs_every_page_inside_a_slot(monkeypatch) -> None:
    """app.py takes `Runtime.pages.slot()` for the page run: with the only slot held
    elsewhere, the run waits in the queue, and it goes on once the slot is let go."""
    import runtime
    from devtools.apptest import run_page
    from devtools.server import REPO_ROOT

    slots = Slots(1)
    monkeypatch.setattr(runtime.current(), "pages", slots)
    done: list[object] = []
    th = threading.Thread(target=lambda: done.append(run_page(REPO_ROOT / "app.py")))
    with slots.slot():
        th.start()
        _wait_until(lambda: slots.state() == (1, 1), "the page run queued for the slot")
        assert not done
    th.join(120)
    assert done and slots.admitted == 2 and slots.state() == (0, 0)
