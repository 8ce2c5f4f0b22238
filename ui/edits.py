"""Move the data and watch the network answer: the run of a visitor's data edit, computed while
the pointer rests or on release, without a page rerun (`ui.server`'s `edit/<id>` route).

The Explorer registers, for the figure on screen, the settings it shows (`offer`: the link's
Config, the auto end time flag, the figure options and the visitor's session), and gives the
player the route's address. The player posts a data edit — only the data fields of the run's
kind (`FIELDS`, `viz.data_edit`: `points` angles, radii, labels; `clusters` centres' angles
and labels; `vectors` points and labels; `two_signals` the angle and the two norms;
`three_point` x and y), as JSON of at most `MAX_BODY` bytes — and `apply` makes the new Config
through the same validation as a link (`Config.from_dict`: every bad field named, nothing
changed silently), refuses a run estimated above the server's `click_to_run_s` (a preview is
not the place for a long run), cancels the session's previous edit run (one at a time per
session; the newest edit wins), runs it through the service (its slots, limits, deadline and
cache, under the session's name), analyses it in its turn and builds its figure: the answer
is the figure's key (or a message). On release the player also reports the edit to the page,
which makes it the page's state, the sidebar's table and the link.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any

import runtime
from dynamics.config import Config, ConfigError
from dynamics.cost import describe_seconds, estimate_seconds
from dynamics.service import Service, ServiceError
from dynamics.timescales import with_auto_time
from viz.options import FigureOptions

from . import figures

MAX_BODY = 256_000  # bytes of an edit (20,000 points' three numbers fit with room)
OFFERS_MAX = 256  # sessions whose edit base is remembered (the oldest forgotten first)
FIELDS = {"points": ("angles_deg", "radii", "labels"), "clusters": ("angles_deg", "labels"),
          "three_point": ("x", "y"), "vectors": ("points", "labels"),
          "two_signals": ("angle_deg", "norm_plus", "norm_minus")}


@dataclass(frozen=True)
class Offer:
    """What an edit applies to: the link's Config, whether the page applies the auto end
    time, the figure options and the session."""

    link: Config
    auto: bool
    options: FigureOptions
    owner: str
    service: Service


# the offers and the runs in progress are the runtime's board, `Runtime.edits`


def editable(config: Config) -> bool:
    """Whether the run's data can be moved in the panel (a kind of `FIELDS`, two inputs)."""
    data = config.data
    if data.kind not in FIELDS:
        return False
    if data.kind == "vectors" and any(len(p) != 2 for p in data.points):
        return False
    return data.kind == "three_point" or not getattr(data, "bias", False)


def offer(link: Config, options: FigureOptions, auto: bool, owner: str,
          service: Service) -> str | None:
    """Register the settings on screen as the base of this session's edits; the id the player
    posts to (None: this data cannot be edited)."""
    if not editable(link):
        return None
    eid = hashlib.sha256(f"{owner}|{link.to_json()}|{options.key}|{auto}".encode()).hexdigest()
    eid = eid[:32]
    board = runtime.current().edits
    with board.lock:
        for old in [k for k, v in board.offers.items() if v.owner == owner and k != eid]:
            del board.offers[old]
        board.offers[eid] = Offer(link, auto, options, owner, service)
        board.offers.move_to_end(eid)
        while len(board.offers) > OFFERS_MAX:
            board.offers.popitem(last=False)
    return eid


def edited(link: Config, fields: dict[str, Any]) -> Config:
    """`link` with the data fields of an edit (ConfigError naming each bad one; a field that
    is not its kind's, or not a list of numbers where one is expected, is an error too)."""
    kind = link.data.kind
    allowed = FIELDS.get(kind, ())
    bad = [(f"data.{k}", "cannot be edited here") for k in fields if k not in allowed]
    if bad:
        raise ConfigError(bad)
    raw = link.to_dict()
    raw["data"].update({k: v for k, v in fields.items()})
    return Config.from_dict(raw)


def _parse(body: bytes) -> dict[str, Any]:
    if len(body) > MAX_BODY:
        raise ConfigError([("data", f"an edit of {len(body):,} bytes is larger than "
                                    f"{MAX_BODY:,}")])
    try:
        got = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError([("data", f"not an edit ({type(e).__name__})")]) from None
    fields = got.get("fields") if isinstance(got, dict) else None
    if not isinstance(fields, dict):
        raise ConfigError([("data", "an edit names the data fields it sets")])
    return fields


def apply(eid: str, body: bytes) -> dict[str, Any]:
    """Run an edit of offer `eid` (see the module docstring): {"key": figure key, "status"}
    or {"error": message} (and "fields": the bad ones)."""
    rt = runtime.current()
    board = rt.edits
    with board.lock:
        base = board.offers.get(eid)
    if base is None:
        return {"error": "this figure is no longer the page's: edit again after it reloads"}
    try:
        link = edited(base.link, _parse(body))
    except ConfigError as e:
        return {"error": "; ".join(m for _p, m in e.errors), "fields": [p for p, _m in e.errors]}
    run = with_auto_time(link)[0] if base.auto else link
    est = estimate_seconds(run)
    limit = base.service.limits.click_to_run_s
    if est > limit:
        return {"error": f"this data asks for {describe_seconds(est)} of computing: release the "
                         "pointer and run it from the page"}
    cancel = threading.Event()
    with board.lock:
        old = board.running.get(base.owner)
        if old is not None:
            old.set()  # the newest edit wins
        board.running[base.owner] = cancel
    try:
        traj = base.service.run(run, cancel=cancel, session=base.owner)
    finally:
        with board.lock:
            if board.running.get(base.owner) is cancel:
                del board.running[base.owner]
    if traj.status == "cancelled":
        return {"error": "replaced by a newer edit", "cancelled": True}
    try:
        with rt.turns.turn():
            analysis = base.service.analyse(traj)
    except ServiceError:  # the page says why when it shows this run; the figure goes without
        analysis = None
    shown = figures.main(traj, analysis, base.options)
    return {"key": shown.key, "status": traj.status, "config": link.to_dict()["data"]}


__all__ = ["FIELDS", "MAX_BODY", "Offer", "apply", "editable", "edited", "offer"]
