"""Speculation: runs computed ahead of a visitor's click — the neighbouring values of the
control a visitor is moving, the runs of a scrub family — by `Speculator`, the runtime's
(`Runtime.speculation`), through its `Service` as speculative requests (so every limit holds:
the slots, the deadline, the caches).

`prefetch(configs, owner=…)` replaces that owner's pending list (the visitor moved on) with the
uncached ones among `configs` (at most `PREFETCH_MAX`, or `limit`); owners take turns, so one
visitor's family does not starve another's; at most `PREFETCH_OWNERS` owners are pending (the
oldest give way). Background workers — as many as the CPUs the kernels may use
(`PREFETCH_WORKERS`, at most the service's slots), in parallel: the kernels release the
interpreter lock — take pending runs while no page's request is being produced
(`Service.pressing`).

A page's request for another key makes the speculative runs in progress step aside (each
reads `Service.pressing` as its cancel flag), so a speculative run never delays a real one by
more than one progress chunk; a family's run cancelled so is pending again. A scrub family (an
owner named "family:…") is something a visitor waits for, so it cannot starve behind a class:
when its next run has waited `FAMILY_STARVE_S` while pages kept the server busy, it runs
anyway, one such run at a time (`protected`: a page's request does not cancel it; family runs
are small: the page offers no family for a run that took over `ui.family.MAX_MEMBER_S`). A
config estimated above `click_to_run_s` is never speculated (it waits for a visitor's click).
With `EAE_PREFETCH=0` (`Settings.prefetch`; the test suite's default) nothing is started.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from typing import Any

from dynamics.admission import POLL_S
from dynamics.cache import keeps, result_key
from dynamics.config import Config
from dynamics.cost import estimate_seconds
from dynamics.limits import get_settings
from dynamics.service import Service
from dynamics.trajectory import Trajectory

PREFETCH_MAX = 8  # pending speculative configs per owner, by default (the first kept)
PREFETCH_OWNERS = 64  # owners with pending speculation (the oldest dropped first)
PREFETCH_WORKERS = max(1, min(4, os.cpu_count() or 1))  # speculative runs at once (idle server)
FAMILY = "family:"  # owners named so are scrub families (`FAMILY_STARVE_S`)
FAMILY_STARVE_S = 2.0  # a family's next run waits at most this long behind pages' runs

Done = Callable[[Trajectory], None]


@dataclasses.dataclass
class _Spec:
    """A speculative run a worker took: its key, owner, config, what to call when it is done,
    and whether a page's request may cancel it (`protected`: a starved family's run may not; a
    run it cancels is `preempted`: a family's is pending again). Its cancel flag
    (`is_set`) is set by a newer `prefetch` call or, unprotected, by a page's request."""

    key: str
    owner: str
    config: Config
    done: Done | None
    protected: bool
    service: Service
    cancel: threading.Event = dataclasses.field(default_factory=threading.Event)
    preempted: bool = False

    def is_set(self) -> bool:
        if self.cancel.is_set():
            return True
        if not self.protected and self.service.pressing(other_than=self.key):
            self.preempted = True  # a page's request goes first; taken up again later
            self.cancel.set()
            return True
        return False


class Speculator:
    """Speculative runs through `service`, owners in turn (see the module docstring)."""

    def __init__(self, service: Service):
        self.service = service
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._pending: OrderedDict[str, deque[Config]] = OrderedDict()  # owner -> configs
        self._on_done: dict[str, Done | None] = {}
        self._waiting_since: dict[str, float] = {}  # owner -> when its next run was due
        self._workers: set[threading.Thread] = set()
        self._spec: dict[threading.Thread, _Spec] = {}  # the runs in progress
        self.prefetched = 0  # speculative runs completed with a cacheable result

    def prefetch(self, configs: list[Config | Mapping[str, Any]], *, owner: str = "",
                 on_done: Done | None = None, limit: int = PREFETCH_MAX) -> int:
        """The `owner`'s pending list becomes the uncached ones among `configs` (at most
        `limit`, in order). `on_done(traj)` is called in the worker after each completed run
        of this owner (a run already cached is not called back: the caller can `peek` it),
        and analyses it as it sees fit; without `on_done` the run is analysed here. Returns
        how many are pending for this owner. Never blocks; invalid mappings are skipped."""
        if not get_settings().prefetch:
            return 0
        todo, wanted = self._todo(configs)
        with self._lock:
            for spec in self._spec.values():
                if spec.owner == owner and spec.key not in wanted:
                    spec.preempted = False  # left behind, not preempted: not taken up again
                    spec.cancel.set()
            self._drop(owner)
            if todo:
                self._pending[owner] = deque(todo[:limit])
                self._on_done[owner] = on_done
                self._waiting_since[owner] = time.monotonic()
                while len(self._pending) > PREFETCH_OWNERS:  # the oldest owners give way
                    self._drop(next(iter(self._pending)))
            self._start_workers()
            self._wake.notify_all()
            return len(self._pending.get(owner, ()))

    def _todo(self, configs: list[Config | Mapping[str, Any]]) -> tuple[list[Config], set[str]]:
        """The configs to run (valid, not known to the service, not a click's) and the keys of
        all the valid ones."""
        todo: list[Config] = []
        wanted: set[str] = set()
        for c in configs:
            try:
                cfg = c if isinstance(c, Config) else Config.from_dict(c)
            except Exception:
                continue
            wanted.add(result_key(cfg))
            heavy = estimate_seconds(cfg) > self.service.limits.click_to_run_s
            if not heavy and not self.service.known(cfg):
                todo.append(cfg)
        return todo, wanted

    def _drop(self, owner: str) -> None:
        """Forget `owner`'s pending list (lock held)."""
        self._pending.pop(owner, None)
        self._on_done.pop(owner, None)
        self._waiting_since.pop(owner, None)

    def _start_workers(self) -> None:
        """Enough workers for what is pending (lock held)."""
        self._workers = {w for w in self._workers if w.is_alive()}
        want = min(self._worker_limit(), sum(len(q) for q in self._pending.values()))
        while len(self._workers) < want:
            w = threading.Thread(target=self._loop, daemon=True,
                                 name=f"eae-prefetch-{len(self._workers)}")
            self._workers.add(w)
            w.start()

    def idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is pending or running (tests, benchmarks); True if so."""
        end = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._pending or self._spec:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._wake.wait(POLL_S if left is None else min(POLL_S, left))
            return True

    def _worker_limit(self) -> int:
        """Speculative runs at once: PREFETCH_WORKERS, at most the simulation slots."""
        return max(1, min(PREFETCH_WORKERS, self.service.admission.limit))

    def _next(self, starved: bool = False) -> tuple[str, Config, Done | None] | None:
        """The next pending config, owners in turn (lock held); `starved`: only a scrub
        family's whose next run has waited FAMILY_STARVE_S."""
        now = time.monotonic()
        for owner in list(self._pending):
            queue = self._pending[owner]
            if not queue:
                self._drop(owner)
                continue
            if starved and not (owner.startswith(FAMILY) and now - self._waiting_since.get(
                    owner, now) >= FAMILY_STARVE_S):
                continue
            self._pending.move_to_end(owner)  # the next call serves the next owner
            config = queue.popleft()
            done = self._on_done.get(owner)
            self._waiting_since[owner] = now  # its next run is due from now
            if not queue:
                self._drop(owner)
            return owner, config, done
        return None

    def _take(self, busy: bool) -> _Spec | None:
        """A run this worker may start now (lock held): any owner's while no page's request
        is being produced (`busy` False) and fewer than the workers run; else a starved scrub
        family's, when no other protected run is going."""
        protected = any(sp.protected for sp in self._spec.values())
        got, guard = None, False
        if not busy and len(self._spec) < self._worker_limit():
            got = self._next()
        elif busy and not protected:
            got, guard = self._next(starved=True), True
        if got is None:
            return None
        owner, config, done = got  # a cached or running key is joined: done is still called
        return _Spec(result_key(config), owner, config, done, guard, self.service)

    def _loop(self) -> None:
        """A worker: take pending configs while `_take` allows; stop when nothing is
        pending."""
        me = threading.current_thread()
        while True:
            busy = self.service.pressing()  # outside our lock: it takes the service's
            with self._lock:
                if not self._pending:
                    self._workers.discard(me)
                    self._wake.notify_all()
                    return
                spec = self._take(busy)
                if spec is None:
                    self._wake.wait(POLL_S)
                    continue
                self._spec[me] = spec
            try:
                self._run(spec)
            except Exception:  # speculative: a failure is the real request's to report
                pass
            finally:
                with self._lock:
                    self._spec.pop(me, None)
                    self._wake.notify_all()

    def _run(self, spec: _Spec) -> None:
        traj = self.service.run(spec.config, cancel=spec, speculative=True)
        if keeps(traj):
            with self._lock:
                self.prefetched += 1
            if spec.done is not None:  # the caller analyses it, in its own order
                spec.done(traj)
            else:
                self.service.analyse(traj)
        elif spec.preempted and spec.owner.startswith(FAMILY):
            self._pend_again(spec)  # a visitor waits for it: taken up again

    def _pend_again(self, spec: _Spec) -> None:
        """A run a page's request preempted goes back to the front of its owner's list (unless
        the owner has moved on: a newer `prefetch` call replaced its list)."""
        with self._lock:
            if not spec.preempted:  # the owner moved on meanwhile (`prefetch` cleared it)
                return
            queue = self._pending.get(spec.owner)
            if queue is None:
                if self._on_done.get(spec.owner, spec.done) is not spec.done:
                    return
                queue = self._pending[spec.owner] = deque()
                self._on_done[spec.owner] = spec.done
                self._waiting_since.setdefault(spec.owner, time.monotonic())
            queue.appendleft(spec.config)
            self._start_workers()
            self._wake.notify_all()


__all__ = ["FAMILY", "FAMILY_STARVE_S", "PREFETCH_MAX", "PREFETCH_OWNERS", "PREFETCH_WORKERS",
           "Speculator"]
