"""The server's simulation queue: `FairQueue`, the `RunQueue` a server's `Service` takes its
slots from, with one rule more — a session holds at most one running simulation. A run one of
whose sessions already runs another waits (the next eligible run in arrival order goes first)
and its waiters read why: "this page's other run goes first".

Thirty visitors share the slots in arrival order, and one page that asks for two runs (a
comparison, a scrub family's member) cannot take two slots while another visitor waits.
"""

from __future__ import annotations

import time

from dynamics.admission import Queued, RunQueue


class FairQueue(RunQueue):
    """`RunQueue` with at most one running simulation per session (see the module
    docstring)."""

    def busy_sessions(self) -> frozenset[str]:
        """Sessions of the runs holding a slot that has not lapsed (call with `cond` held)."""
        now = time.monotonic()
        out: frozenset[str] = frozenset()
        for run, end in self.holders.items():
            if end > now:
                out |= run.sessions
        return out

    def eligible(self, entry: Queued) -> bool:
        return not (entry.sessions & self.busy_sessions())

    def why(self, run: Queued) -> tuple[object, ...]:
        return (not self.eligible(run),)

    def message(self, run: Queued, ahead: int, running: int) -> str:
        plain = super().message(run, ahead, running)
        if self.eligible(run):
            return plain
        head, wait = plain.rsplit("; ", 1)
        return f"{head}; this page's other run goes first; {wait}"


__all__ = ["FairQueue"]
