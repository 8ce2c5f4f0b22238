"""Scrub a control live: a family of runs along one control (ε, γ or a data angle) computed in
the background and shipped to the player, which swaps runs while the control is dragged.

`plan(link_config, param, …)` lists the control's slider values around the run on screen (ε:
the sidebar slider's own ladder, `ui.settings.eps_ladder`, LADDER_HALF steps each side) and
gives each a *planned* figure key at once (`ui.figures.planned_key`, from the link's Config: no
run needed). `offer(family, …)` registers the plan under an id and, when the family's estimated
cost (`dynamics.cost.estimate_seconds` of every member plus MEMBER_OVERHEAD_S for its analysis
and figure) is at most AUTO_START_S and no other session is using the server
(`ui.prefetch.shared`), starts it with the figure: the runs are ready before the visitor
reaches for the slider. A costlier family, or one in a class, waits for that: the player calls
`ui.server`'s `family/<id>` route, which calls `start_offered`. `start(family, …)` announces
the keys to the figure store (the player's requests for them wait instead of failing), aliases
the one on screen to its figure, and hands the others — nearest value first — to a background
worker: it applies the auto end time where the page would (`dynamics.timescales.
with_auto_time`, so cache keys match what the page would run), builds the figures of runs
already cached, and gives the rest to the service's speculative workers under this session's
name (`runtime.speculation`, owner "family:…": in parallel while no page's run is going, and one
run at a time at least every `FAMILY_STARVE_S` while pages keep the server busy), whose
completion builds each figure. A newer family of the same session replaces the older one; a
session keeps one offer (it holds its trajectory), and when the session ends
(`ui.sessions.on_end`) its offer is dropped and its family's pending runs cancelled
(`forget_owner`).

The player keeps its scrub slider on the value of the figure it shows (`current`), and moves
along the family while the page's own slider of the control (`Control.widget`) is dragged.

A run too heavy to scrub (its simulation took over `MAX_MEMBER_S`) gets no family.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import runtime
from dynamics import ladders
from dynamics.config import Config
from dynamics.cost import estimate_seconds
from dynamics.service import Service
from dynamics.status import Status
from dynamics.timescales import with_auto_time
from dynamics.trajectory import Trajectory
from runtime.speculation import FAMILY
from viz.options import FigureOptions

from . import figures, prefetch, sessions
from .settings import eps_ladder, setting, stepped

MAX_MEMBER_S = 1.5  # a run that took longer than this (wall s) is not scrubbed
EXPECT_S = 180.0  # how long a planned key is waited for before the player gives it up
LADDER_HALF = 8  # ε: this many of the slider's steps each side of the value on screen
AUTO_START_S = 3.0  # a family estimated at most this (s of one core) starts with its figure
ANGLE_STEP = 10.0  # an angle's family: every this many degrees (17 values)
MEMBER_OVERHEAD_S = 0.04  # a member's analysis and figure (s), besides its simulation


@dataclass(frozen=True)
class Control:
    """A control that can be scrubbed: its config `param`, its `label`, its slider values
    around a config (`ladder`), how to read and set it."""

    param: str
    label: str
    ladder: Callable[[Config], Sequence[float]]
    get: Callable[[Config], float]
    put: Callable[[Config, float], Config]
    fmt: Callable[[float], str]
    applies: Callable[[Config], bool] = lambda _c: True
    widget: str = ""  # the label of the sidebar slider that moves the family while dragged


def _eps_ladder(c: Config) -> list[float]:
    """The sidebar slider's ε values (`ui.settings.eps_ladder`) nearest the current one,
    LADDER_HALF each side."""
    eps = float(c.init.scale)
    ladder = eps_ladder(eps)
    i = nearest(ladder, eps)
    return ladders.with_value(ladder[max(0, i - LADDER_HALF):i + LADDER_HALF + 1], eps)


def _gamma_ladder(c: Config) -> list[float]:
    """γ's field steps over its range (`ui.settings.stepped`: 0, 0.05, …, 1)."""
    return ladders.with_value(stepped("model.gamma"), float(c.model.gamma))


def _signal_angles(c: Config) -> list[float]:
    """10°, 20°, …, 170° (the angle is in (0°, 180°))."""
    return ladders.with_value(ladders.steps(ANGLE_STEP, 180.0 - ANGLE_STEP, ANGLE_STEP),
                              float(c.data.angle_deg))  # type: ignore[union-attr]


def _point_angles(c: Config) -> list[float]:
    """Point 1's angle and 8 steps of ANGLE_STEP each side."""
    a0 = float(c.data.angles_deg[0])  # type: ignore[union-attr]
    return ladders.with_value((a0 + ANGLE_STEP * k for k in range(-8, 9)), a0)


def _set(c: Config, path: str, value: Any) -> Config:
    return c.with_updates({path: value})


def _set_first_angle(c: Config, value: float) -> Config:
    raw = c.to_dict()
    raw["data"]["angles_deg"] = [float(value), *raw["data"]["angles_deg"][1:]]
    return Config.from_dict(raw)


def _g(x: float) -> str:
    return f"{x:g}"


CONTROLS: dict[str, Control] = {
    c.param: c for c in (
        Control("init.scale", "ε", _eps_ladder, lambda c: float(c.init.scale),
                lambda c, v: _set(c, "init.scale", v), _g,
                widget=setting("init.scale").label),
        Control("model.gamma", "γ", _gamma_ladder, lambda c: float(c.model.gamma),
                lambda c, v: _set(c, "model.gamma", v), _g),
        Control("data.angle_deg", "angle between x₊ and x₋", _signal_angles,
                lambda c: float(c.data.angle_deg),  # type: ignore[union-attr]
                lambda c, v: _set(c, "data.angle_deg", v), lambda v: f"{v:g}°",
                lambda c: c.data.kind == "two_signals"),
        Control("data.angles_deg[0]", "angle of point 1", _point_angles,
                lambda c: float(c.data.angles_deg[0]),  # type: ignore[union-attr]
                _set_first_angle, lambda v: f"{v:g}°",
                lambda c: c.data.kind in ("points", "clusters")),
    )
}
DEFAULT = "init.scale"


def choices(config: Config) -> list[tuple[str, str]]:
    """(param, label) of the controls that can be scrubbed for `config`."""
    return [(c.param, c.label) for c in CONTROLS.values() if c.applies(config)]


@dataclass(frozen=True)
class Family:
    """Runs along one control: `values` (sorted), the one on screen (`current`), each value's
    link Config (None: not a valid run) and planned figure key (None likewise)."""

    control: Control
    values: tuple[float, ...]
    current: int
    links: tuple[Config | None, ...]
    keys: tuple[str | None, ...]
    auto: bool
    options: FigureOptions

    def order(self) -> list[int]:
        """Member indices nearest to the current value first (the current one excluded)."""
        return sorted((i for i in range(len(self.values)) if i != self.current),
                      key=lambda i: (abs(i - self.current), i))

    def player_arg(self, choices: Sequence[tuple[str, str]] = (),
                   start: str | None = None) -> dict[str, Any]:
        """The player's `family`: runs along one control (its param and label), each value
        with its words and its figure's address (None: cannot be computed), `current` the
        value on screen; `choices` are the (param, label) of the controls the player offers
        to scrub instead; `start` the id `offer` gave, asked for when the visitor reaches for
        the slider (None: already computing); `widget` the label of the page's slider of the
        same control, which moves the family while it is dragged (the page's slider reports
        only its release)."""
        c = self.control
        return {"param": c.param, "label": c.label, "values": list(self.values),
                "labels": [c.fmt(v) for v in self.values],
                "sources": [f"{runtime.API}/fig/{k}" if k else None for k in self.keys],
                "current": int(self.current), "choices": [list(x) for x in choices],
                "start": f"{runtime.API}/family/{start}" if start else None,
                "widget": c.widget}


def plan(link_config: Config, param: str, *, auto: bool,
         options: FigureOptions) -> Family | None:
    """The family of `link_config` (the Config the URL records) along `param`, or None when
    the control does not apply. Cheap: validates each member's Config, runs nothing."""
    control = CONTROLS.get(param)
    if control is None or not control.applies(link_config):
        return None
    current = control.get(link_config)
    values = tuple(control.ladder(link_config))
    links: list[Config | None] = []
    keys: list[str | None] = []
    extra = "auto" if auto else ""
    for v in values:
        try:
            c = link_config if v == current else control.put(link_config, v)
        except Exception:  # a value the config does not accept: no member there
            c = None
        links.append(c)
        keys.append(figures.planned_key(c.to_json(), options, extra) if c is not None else None)
    return Family(control, values, values.index(current), tuple(links), tuple(keys), auto,
                  options)


# ----------------------------------------------------------------------------- background
# what is in hand (offers, jobs, the worker) is the runtime's board, `Runtime.families`
def start(family: Family, on_screen: figures.Shown, traj: Trajectory, owner: str,
          service: Service) -> bool:
    """Announce the family's keys, alias the run on screen, and prepare the others in the
    background (see the module docstring). False (nothing started) for a heavy run."""
    rt = runtime.current()
    board, store = rt.families, rt.figures
    key_now = family.keys[family.current]
    if key_now is not None:
        store.alias(key_now, on_screen.key)
    if traj.wall_time > MAX_MEMBER_S or not Status(traj.status).cacheable \
            or traj.meta.get("provisional"):
        return False
    for i in family.order():
        k = family.keys[i]
        if k is not None and store.get(k) is None:
            store.expect(k, EXPECT_S)
    _forget_at_session_end(owner)
    with board.lock:
        board.jobs[owner] = (family, service)
        if board.worker is None or not board.worker.is_alive():
            board.worker = threading.Thread(target=_work, args=(rt,), daemon=True,
                                            name="eae-family")
            board.worker.start()
        board.lock.notify_all()
    return True


OFFERS_MAX = 256  # offered families remembered, one per session (the oldest forgotten first)


def estimated_s(family: Family) -> float:
    """Seconds of one core the family's other members are expected to take (their runs, with
    the auto end time the page applies, and MEMBER_OVERHEAD_S each)."""
    total = 0.0
    for i in family.order():
        link = family.links[i]
        if link is not None:
            try:
                total += estimate_seconds(_run_config(link, family.auto)) + MEMBER_OVERHEAD_S
            except Exception:  # a member the config refuses is not run either
                continue
    return total


def offer(family: Family, on_screen: figures.Shown, traj: Trajectory, owner: str,
          service: Service) -> tuple[str | None, bool]:
    """Register the family so that the player can start it (`start_offered`), and start it
    now when it is cheap (`estimated_s` ≤ AUTO_START_S) and the server is not shared: (its id,
    started). (None, False) for a run too heavy to scrub."""
    if traj.wall_time > MAX_MEMBER_S or not Status(traj.status).cacheable \
            or traj.meta.get("provisional"):  # computed while the kernels compile: no family
        return None, False
    h = hashlib.sha256("|".join([owner, *(k or "-" for k in family.keys)]).encode())
    fid = h.hexdigest()[:32]
    _forget_at_session_end(owner)
    board = runtime.current().families
    with board.lock:
        # one offer per session (the figure on its screen): an offer holds its trajectory
        for old in [f for f, v in board.offers.items() if v[3] == owner and f != fid]:
            del board.offers[old]
        board.offers[fid] = (family, on_screen, traj, owner, service)
        board.offers.move_to_end(fid)
        while len(board.offers) > OFFERS_MAX:
            board.offers.popitem(last=False)
    # a class shares the server: there a family waits until its visitor reaches for it
    cheap = not prefetch.shared() and estimated_s(family) <= AUTO_START_S
    return fid, cheap and start(family, on_screen, traj, owner, service)


def start_offered(fid: str) -> bool:
    """Start the offered family `fid` (the player's request); False if it is unknown."""
    board = runtime.current().families
    with board.lock:
        got = board.offers.get(fid)
    if got is None:
        return False
    family, on_screen, traj, owner, service = got
    return start(family, on_screen, traj, owner, service)


def forget_owner(owner: str) -> None:
    """A session ended: its offers are dropped and its speculative runs cancelled."""
    rt = runtime.current()
    board = rt.families
    with board.lock:
        for fid in [f for f, v in board.offers.items() if v[3] == owner]:
            del board.offers[fid]
        board.jobs.pop(owner, None)
    rt.speculation.prefetch([], owner=f"{FAMILY}{owner}")


def _forget_at_session_end(owner: str) -> None:
    """When the session running this script is `owner`, forget its offers and cancel its
    family's runs once it ends (`ui.sessions.on_end`; a no-op outside a script run)."""
    if sessions.session_id() == owner:
        sessions.on_end("family", lambda: forget_owner(owner))


def _run_config(link: Config, auto: bool) -> Config:
    return with_auto_time(link)[0] if auto else link


def _work(rt: runtime.Runtime) -> None:
    """Prepare families, one owner at a time (the newest family of each owner)."""
    board = rt.families
    while True:
        with board.lock:
            if not board.jobs:
                board.worker = None
                return
            owner = next(iter(board.jobs))
            family, service = board.jobs.pop(owner)
        try:
            _prepare(rt, family, service, owner)
        except Exception:  # speculative: the page reports real problems itself
            continue


def _prepare(rt: runtime.Runtime, family: Family, service: Service, owner: str) -> None:
    board, store = rt.families, rt.figures
    todo: list[Config] = []
    planned: dict[str, str] = {}  # run config's cache key -> planned figure key
    for i in family.order():
        link, key = family.links[i], family.keys[i]
        if link is None or key is None or store.get(key) is not None:
            continue
        with board.lock:
            if owner in board.jobs:  # a newer family for this session: this one is moot
                return
        try:
            run = _run_config(link, family.auto)
        except Exception:
            store.forget_expected(key)
            continue
        traj = service.peek(run)
        if traj is not None and Status(traj.status).cacheable:
            _build(rt, traj, key, family.options, service)
        else:
            todo.append(run)
            planned[run.cache_key()] = key

    def done(traj: Trajectory) -> None:
        key = planned.get(traj.config.cache_key())
        if key is not None:
            _build(rt, traj, key, family.options, service)

    if todo:
        rt.speculation.prefetch(todo, owner=f"{FAMILY}{owner}", on_done=done, limit=len(todo))


def _build(rt: runtime.Runtime, traj: Trajectory, planned: str, options: FigureOptions,
           service: Service) -> None:
    shown = prefetch.speculative_figure(traj, service, options)
    rt.figures.alias(planned, shown.key)


def idle(timeout: float) -> bool:
    """Wait until no family is being prepared (tests); True if so."""
    board = runtime.current().families
    end = threading.Event()
    deadline = timeout
    step = 0.05
    while deadline > 0:
        with board.lock:
            if not board.jobs and (board.worker is None or not board.worker.is_alive()):
                return True
        end.wait(step)
        deadline -= step
    return False


def session_owner() -> str:
    """This browser session's name for speculative work (one family per session)."""
    return sessions.session_id() or "script"


def nearest(values: Sequence[float], value: float) -> int:
    """Index of the value in `values` nearest to `value` (log scale for positive ladders)."""
    if all(v > 0 for v in values) and value > 0:
        return min(range(len(values)), key=lambda i: abs(math.log(values[i] / value)))
    return min(range(len(values)), key=lambda i: abs(values[i] - value))


__all__ = ["CONTROLS", "DEFAULT", "Control", "Family", "choices", "forget_owner",
           "idle", "nearest", "offer", "plan", "session_owner", "start", "start_offered"]
