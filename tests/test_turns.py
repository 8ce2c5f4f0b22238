"""`ui.turns`: interpreter-bound work in arrival order, visitors before speculative work."""

from __future__ import annotations

import threading
import time

from ui.turns import Turns, speculative


def _queue_up(turns: Turns, names: list[tuple[str, bool]], order: list[str]) -> None:
    """Hold the turn, start one thread per name (each queued before the next starts), then
    let go: `order` records the order in which they got their turn."""
    started: list[threading.Thread] = []

    def work(name: str, spec: bool) -> None:
        if spec:
            with speculative(), turns.turn():
                order.append(name)
        else:
            with turns.turn():
                order.append(name)

    with turns.turn():
        for name, spec in names:
            th = threading.Thread(target=work, args=(name, spec))
            n = turns.waiting()
            th.start()
            deadline = time.monotonic() + 10
            while turns.waiting() == n and time.monotonic() < deadline:
                time.sleep(0.001)
            assert turns.waiting() == n + 1, name
            started.append(th)
    for th in started:
        th.join(10)
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
    th.join(5)
    assert not th.is_alive()  # the outer turn was let go: another thread gets one


def test_one_turn_at_a_time() -> None:
    turns, inside, most = Turns(), [0], [0]
    lock = threading.Lock()

    def work() -> None:
        for _ in range(20):
            with turns.turn():
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
    assert most[0] == 1 and turns.taken == 160
