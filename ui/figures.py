"""The figures pages show: every animated figure described once per (trajectory, figure kind,
`FigureOptions`) and shared by all sessions, kept in the runtime's figure store
(`Runtime.figures`, `runtime.store.FigureStore`) as the payload bytes the browser player
fetches (`ui.server`'s `fig/<key>` route) and composes (`viz.scene`).

Keys are content keys: sha256 of the figure kind, `VIZ_VERSION`, the options' key and each
trajectory's key (`Trajectory.key`: its config's cache key, status, frame count and last
time), so a key names one picture wherever it is computed. A key can be announced before it is
built (`FigureStore.expect`) so that the route waits for it instead of answering 404 (a family
of runs computed in the background).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import runtime
from dynamics.annotations import Analysis
from dynamics.trajectory import Trajectory
from runtime.store import FigureStore, Shown
from viz.compare import compare_figure
from viz.main_figure import main_figure
from viz.options import FigureOptions
from viz.payload import encode
from viz.real_data import real_data_figure
from viz.scene import Scene

VIZ_VERSION = "4"  # bump when a figure changes for the same trajectory and options


def figure_key(kind: str, trajs: tuple[Trajectory, ...], options: FigureOptions,
               extra: str = "") -> str:
    h = hashlib.sha256()
    for part in (kind, VIZ_VERSION, options.key, extra, *(t.key() for t in trajs)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def _shown(key: str, build: Callable[[], Scene]) -> Shown:
    """The stored figure `key`, else built once (concurrent callers of one key wait)."""
    rt = runtime.current()
    got = rt.figures.get(key)
    if got is not None:
        return got
    with rt.build_locks.of(key):
        got = rt.figures.get(key)
        if got is None:
            with rt.turns.turn():  # interpreter-bound: sessions take turns (`Runtime.turns`)
                fig = build()
                payload = encode(fig, {"key": key})
            rt.figures.builds += 1
            got = rt.figures.put(Shown.of(key, payload, fig))
    rt.build_locks.done(key)
    return got


def main(traj: Trajectory, analysis: Analysis | None, options: FigureOptions) -> Shown:
    """The Explorer's main figure (`viz.main_figure`) for a run."""
    key = figure_key("main", (traj,), options, "a" if analysis is not None else "")
    return _shown(key, lambda: main_figure(traj, analysis, options))


def planned_key(config_json: str, options: FigureOptions, extra: str = "") -> str:
    """A key for the main figure of a run not computed yet (its config's canonical JSON):
    given to the player at once, aliased to the figure's own key once it is built."""
    h = hashlib.sha256()
    for part in ("planned-main", VIZ_VERSION, options.key, extra, config_json):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def compare(traj_a: Trajectory, traj_b: Trajectory, analysis_a: Analysis | None,
            analysis_b: Analysis | None, labels: tuple[str, str],
            options: FigureOptions) -> Shown:
    """The Compare page's figure of two runs (`viz.compare`)."""
    extra = "|".join([*labels, *("a" if a is not None else "" for a in (analysis_a, analysis_b))])
    key = figure_key("compare", (traj_a, traj_b), options, extra)
    return _shown(key, lambda: compare_figure(traj_a, traj_b, analysis_a, analysis_b, labels,
                                              options))


def real_data(traj: Trajectory, analysis: Analysis | None, options: FigureOptions) -> Shown:
    """The Real data page's figure of a run (`viz.real_data`)."""
    key = figure_key("real_data", (traj,), options, "a" if analysis is not None else "")
    return _shown(key, lambda: real_data_figure(traj, analysis, options))


def build(key: str, make: Callable[[], Scene]) -> Shown:
    """Any other animated figure under a key from `figure_key` (compare, real data…)."""
    return _shown(key, make)


def store() -> FigureStore:
    """The runtime's figure store (`Runtime.figures`)."""
    return runtime.current().figures


__all__ = ["VIZ_VERSION", "FigureStore", "Shown", "build", "compare", "figure_key", "main",
           "planned_key", "real_data", "store"]
