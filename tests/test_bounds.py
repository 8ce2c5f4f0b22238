"""What a link or an upload asks for before its gate is O(size) and bounded before it runs, and
a costly page gives way to the others: teacher data drawn within a budget of variates, an
upload compared by digest (never turned into lists) when the URL is written, the pre-run
estimate that moves a page off the page slots, the page slots' costly lane, the queue's wait
from the runs' progress."""

from __future__ import annotations

import threading
import tracemalloc

import numpy as np
import pytest

from dynamics.config import Config, ConfigError, from_query
from dynamics.config.urlvalues import URL_ARRAY_VALUES
from dynamics.cost import pre_run_seconds, remaining_seconds
from dynamics.data import TEACHER_DRAW_BUDGET, TEACHER_TRIES, _teacher, rng_for, teacher_tries
from runtime.admission import Slots
from ui.state import COSTLY_S, UPLOAD_PATHS


class CountingRng:
    """A generator that counts the normal variates drawn from it (the cost of `_teacher`)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.drawn = 0

    def standard_normal(self, size: int | tuple[int, ...] | None = None) -> np.ndarray:
        out = self.rng.standard_normal(size)
        self.drawn += int(np.size(out))
        return out


@pytest.mark.parametrize("n,d", [(20_000, 8), (20_000, 2), (20_000, 1024), (2_000, 8)])
def test_teacher_data_cost_o_of_its_size(n: int, d: int) -> None:
    """`?data.kind=teacher&data.n=20000&data.d=8` drew its data up to 1,000 times (1.6·10⁸
    variates, 12.8 of the 14.3 s a page spent before its gate): now at most the budget, or
    one draw of n·d when a single draw is more."""
    rng = CountingRng(0)
    X, y, v = _teacher(d, n, "centred", None, rng)  # type: ignore[arg-type]
    assert rng.drawn <= max(TEACHER_DRAW_BUDGET, (n + 1) * d) + d, rng.drawn
    assert X.shape == (n, d) and y.shape == (n,) and np.all(y >= 0)
    assert np.allclose(y, np.maximum(X @ v, 0.0))  # labels relu(<v*, x>) whatever the draw


def _old_teacher(d: int, n: int, scheme: str, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The loop of the paper's data as it was (1,000 tries), written out independently."""
    rho = 1.0 if scheme == "centred" else float(np.sqrt(2.0) - 1.0)
    mu = rng.standard_normal(d)
    mu /= np.linalg.norm(mu)
    for _ in range(1000):
        X = mu + np.sqrt(rho / d) * rng.standard_normal((n, d))
        if scheme == "centred":
            vstar = mu
        else:
            x0 = mu + np.sqrt(rho / d) * rng.standard_normal(d)
            vstar = x0 / np.linalg.norm(x0)
        proj = X @ vstar
        if np.all(proj > 0):
            return X, proj, vstar
    return X, np.maximum(proj, 0.0), vstar


@pytest.mark.parametrize("scheme", ["centred", "uncentred"])
@pytest.mark.parametrize("n,d,seed", [(4, 4, 0), (16, 16, 1), (64, 64, 2), (40, 8, 3),
                                      (200, 2, 4), (6, 512, 5)])
def test_the_papers_teacher_data_are_drawn_as_before(scheme: str, n: int, d: int,
                                                     seed: int) -> None:
    """Every size the papers use (n = d up to 64: (n + 1)·d ≤ 4,194) keeps its 1,000 tries, so
    its data are bit for bit those of the unbounded loop."""
    assert (n + 1) * d <= 4194 and teacher_tries(n, d) == TEACHER_TRIES
    new = _teacher(d, n, scheme, None, rng_for(seed, 0))
    old = _old_teacher(d, n, scheme, rng_for(seed, 0))
    for a, b in zip(new, old, strict=True):
        assert np.array_equal(a, b)


def _upload_config(n: int, d: int) -> Config:
    X = np.zeros((n, d))
    X.flags.writeable = False
    y = np.where(np.arange(n) % 2, 1.0, -1.0)
    y.flags.writeable = False
    return Config.from_dict({"data": {"kind": "array", "X": X, "y": y},
                             "loss": {"kind": "exponential"}})


def test_the_link_of_a_large_upload_costs_its_digest_not_lists() -> None:
    """Binder.sync → Config.to_query → url_dict → arr.tolist() of a 20,000 × 1,024 upload held
    the interpreter for seconds and took the server to 1.5 GB; an upload is now compared by its
    digest and left out of the link (under 10 MB of Python objects, not 1.5 GB)."""
    cfg = _upload_config(20_000, 1_024)
    tracemalloc.start()
    try:
        q = cfg.to_query(omit=UPLOAD_PATHS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert q == {"data.kind": "array", "loss.kind": "exponential"}
    assert peak < 10e6, peak
    with pytest.raises(ConfigError) as e:  # a link cannot carry it: said, never truncated
        cfg.to_query()
    assert e.value.errors[0][0] == "data.X" and "cannot go into a link" in e.value.errors[0][1]


def test_a_small_array_still_round_trips_through_a_link() -> None:
    cfg = Config.from_dict({"data": {"kind": "array", "X": [[1.0, 2.0], [3.0, -4.0],
                                                            [0.5, 0.25]],
                                     "y": [1.0, -1.0, 1.0]}})
    assert from_query(cfg.to_query()) == cfg
    side = int(np.sqrt(URL_ARRAY_VALUES)) - 1
    big = _upload_config(side, side)
    assert from_query(big.to_query()) == big  # up to URL_ARRAY_VALUES values


def test_a_heavy_link_is_costly_before_its_gate_and_the_defaults_are_not() -> None:
    heavy = Config.from_dict({"data": {"kind": "teacher", "n": 20_000, "d": 8}})
    assert pre_run_seconds(heavy) > COSTLY_S
    assert pre_run_seconds(_upload_config(20_000, 1_024)) > COSTLY_S
    for cheap in (Config(), Config.from_dict({"data": {"kind": "teacher"}})):
        assert pre_run_seconds(cheap) < COSTLY_S


def test_the_wait_behind_a_slow_run_comes_from_its_progress() -> None:
    """The queue said "about 1 s" while the run ahead, estimated at a few seconds, was at
    t = 0.28 of 20 after a minute: what is left now follows its pace."""
    assert remaining_seconds(3.0, 60.0, 0.28 / 20) > 3600  # 60 s for 1.4 %: about 70 min
    assert remaining_seconds(3.0, 60.0, 0.0) >= 60  # no progress yet: at least as long again
    assert remaining_seconds(40.0, 10.0, 0.5) == pytest.approx(30.0)  # on its estimate
    assert remaining_seconds(40.0, 30.0, 0.9) == pytest.approx(10.0)
    assert remaining_seconds(1.0, 5.0, 1.0) == 1.0  # done: at least 1 s


# ----------------------------------------------------------------------------- page slots
class _Run(threading.Thread):
    """A page run: takes a slot of `slots`, then does what its steps say, each step waiting
    for its event (so the test decides the interleaving, with no clock)."""

    def __init__(self, slots: Slots, name: str, log: list[str], costly: bool = False):
        super().__init__(name=name, daemon=True)
        self.slots, self.log, self.costly = slots, log, costly
        self.go_on = threading.Event()
        self.inside = threading.Event()

    def run(self) -> None:
        with self.slots.slot():
            self.log.append(f"{self.name} admitted")
            if self.costly:
                self.slots.divert()
                self.log.append(f"{self.name} costly part")
            self.inside.set()
            self.go_on.wait(30)
        self.log.append(f"{self.name} done")


def _wait(cond: threading.Condition | None, pred: object) -> None:
    for _ in range(3000):
        if pred():  # type: ignore[operator]
            return
        threading.Event().wait(0.01)
    raise AssertionError("condition never met")


def test_a_cheap_page_is_admitted_while_costly_ones_run() -> None:
    """One page slot: three heavy links came first and an About page waited behind all of
    them (22.9 s instead of 0.12 s, 63.3 s behind three). A run that diverts to the costly lane
    gives its slot up at once; the costly ones take the lane one at a time, in order."""
    lane = Slots(1)
    pages = Slots(1, lane=lane)
    log: list[str] = []
    heavy = [_Run(pages, f"heavy{i}", log, costly=True) for i in range(3)]
    for h in heavy:
        h.start()
        _wait(None, lambda h=h: f"{h.name} admitted" in log)
    heavy[0].inside.wait(30)  # heavy0 holds the lane, heavy1 and heavy2 wait for it
    _wait(None, lambda: lane.state() == (1, 2))
    about = _Run(pages, "about", log)
    about.start()
    assert about.inside.wait(30), log  # admitted while every heavy run is unfinished
    assert not any(f"heavy{i} done" in log for i in range(3))
    assert "heavy1 costly part" not in log  # the costly ones: one at a time
    about.go_on.set()
    about.join(30)
    for h in heavy:
        h.go_on.set()
        h.join(30)
    assert [e for e in log if e.endswith("costly part")] == [
        "heavy0 costly part", "heavy1 costly part", "heavy2 costly part"]
    assert pages.state() == (0, 0) and lane.state() == (0, 0)


def test_leaving_for_a_long_wait_frees_the_lane_too() -> None:
    lane = Slots(1)
    pages = Slots(1, lane=lane)
    inside, release = threading.Event(), threading.Event()

    def waiting_run() -> None:
        with pages.slot():
            assert pages.divert()
            assert lane.holds()
            pages.leave()  # a simulation still computing: nobody waits for this run
            assert not lane.holds()
            inside.set()
            release.wait(30)

    th = threading.Thread(target=waiting_run, daemon=True)
    th.start()
    assert inside.wait(30)
    other = Slots(1, lane=lane)
    got = threading.Event()

    def second() -> None:
        with other.slot():
            other.divert()
            got.set()

    t2 = threading.Thread(target=second, daemon=True)
    t2.start()
    assert got.wait(30)  # the lane was free
    release.set()
    th.join(30)
    t2.join(30)
    assert lane.state() == (0, 0)


def test_divert_outside_a_page_run_does_nothing() -> None:
    pages = Slots(1, lane=Slots(1))
    assert pages.divert() is False
    assert Slots(0, lane=Slots(1)).divert() is False
