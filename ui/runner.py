"""Running a config through the service from a page: a cached service accessor, a progress bar
with a Cancel button for runs that take a while, the analysis, and a shared figure cache.

A run whose estimated cost (`dynamics.cost.estimate_seconds`) exceeds the server's
`click_to_run_s` is not started by a link, a settings change or an upload by itself: the page
shows "This link asks for about 40 s of computing" beside a Run button, and runs it once
clicked (a run already computing for another visitor is joined without asking). Requests name
their Streamlit session (`ui.sessions`), so the service runs at most one simulation per
session and cancels the session's runs when it ends. While a run waits for a free slot, its
place in the queue and the expected wait are shown at once and kept up to date.

The service calls `progress` in the calling (script) thread while it waits for the
simulation, which runs in the service's own worker thread; so the bar is updated from the
script thread, and a click on Cancel (a rerun request) interrupts the wait at the next update:
the service then drops this waiter and stops the simulation if nobody else waits for it.

Speed (issue 16): the progress placeholder is always reserved, so the elements after it (the
chart) keep their place while a new run computes and the old figure stays, greyed, until the
new one arrives; a cached figure carries its plotly.js dict (`frozen_spec`), so a rerun does not
deep-copy it again; `prefetch` hands the neighbouring settings to the service's background
prefetch and builds the first ones' figures in a background thread while the page is idle
(`page_busy` drops what has not begun when a script run starts), so the next step of a control
is a cache hit for the run and the figure.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from dynamics.annotations import Analysis
from dynamics.config import Config
from dynamics.config.checks import data_shape
from dynamics.cost import describe_seconds, estimate_seconds
from dynamics.service import QUEUED, Service, ServiceError, default_service
from dynamics.status import Status
from dynamics.trajectory import Trajectory
from viz.main_figure import main_figure

from . import sessions
from .presenter import fill_screen
from .state import EXPLORER_KEY as KEY_PREFIX
from .text import literal, plain
from .view import FigureView

SHOW_PROGRESS_AFTER_S = 0.4  # fast runs finish without a progress bar flashing up
UPDATE_EVERY_S = 0.1


@st.cache_resource(show_spinner=False)
def get_service() -> Service:
    """The process-wide service, held once per server process."""
    return default_service()


def _mark_cancelled(state_key: str, cache_key: str) -> None:
    st.session_state[state_key] = cache_key


def _clear_cancelled(state_key: str) -> None:
    st.session_state.pop(state_key, None)


FIRST_KEY = "_eae.runner.first"  # cache key of the first run this session asked for


def _confirm(state_key: str, cache_key: str) -> None:
    st.session_state[state_key] = cache_key


def _gate(config: Config, prefix: str, ck: str, service: Service) -> bool:
    """True when the run may start: cheap enough, confirmed by a click, or already being
    computed. Otherwise shows the estimate beside a Run button and returns False."""
    limit = service.limits.click_to_run_s
    est = estimate_seconds(config)
    confirmed = f"{prefix}._confirmed"
    if est <= limit or st.session_state.get(confirmed) == ck or service.in_flight(config):
        return True
    if config.data.kind == "array":
        what = "This upload asks"
    elif st.session_state.get(FIRST_KEY) == ck:
        what = "This link asks"
    else:
        what = "These settings ask"
    n, d = data_shape(config.data)
    it = config.integrator
    how = (f"{it.t_end / it.lr:,.0f} gradient-descent steps" if it.method == "gd"
           else "gradient flow")
    with st.container(border=True):
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        c1.info(f"{what} for {describe_seconds(est)} of computing ({n:,} points × {d:,} "
                f"dimensions × {config.model.width:,} neurons, {how}); runs over "
                f"{limit:g} s start only when you ask.")
        c2.button("Run", key=f"{prefix}.confirm_run", on_click=_confirm,
                  args=(confirmed, ck), type="primary",
                  help=f"Start it: {describe_seconds(est)} on one core of this server "
                       "(longer while it is busy).")
    return False


def run_config(config: Config, *, prefix: str = KEY_PREFIX) -> Trajectory | None:
    """The trajectory for `config`: at once from the cache, else computed with a progress bar
    (shown after SHOW_PROGRESS_AFTER_S) and a Cancel button. None when the user cancelled this
    config (an info box with a "Run" button is shown instead) or the service failed (an error
    message is shown)."""
    service = get_service()
    ck = config.cache_key()
    cancelled_key = f"{prefix}._cancelled"
    sid = sessions.session_id()
    if sid is not None:
        sessions.on_end("service", lambda: service.end_session(sid))
    # reserved on every run, hit or not: the elements below keep their place in the page, so
    # the last figure stays on screen (stale) while a new run computes
    holder = st.empty()
    try:
        hit = service.peek(config, session=sid)
    except Exception:  # a damaged cache entry must not break the page
        hit = None
    st.session_state.setdefault(FIRST_KEY, ck)
    if hit is not None:
        return hit
    if st.session_state.get(cancelled_key) == ck:
        with st.container(border=True):
            st.info("The run for these settings was cancelled. Change a setting, or run it.")
            st.button("Run", key=f"{prefix}.run_again", on_click=_clear_cancelled,
                      args=(cancelled_key,), type="primary")
        return None
    if not _gate(config, prefix, ck, service):
        return None
    start = time.perf_counter()
    ui: dict[str, object] = {"bar": None, "last": 0.0}

    def progress(frac: float, text: str) -> None:
        now = time.perf_counter()
        queued = text.startswith(QUEUED)  # a queue message is shown at once, every time
        if not queued and now - start < SHOW_PROGRESS_AFTER_S:
            return
        label = f"Waiting for a free slot — {text}" if queued else f"Simulating… {text}"
        if ui["bar"] is None:
            with holder.container(border=True):
                ui["bar"] = st.progress(float(min(max(frac, 0.0), 1.0)), text=label)
                st.button("Cancel", key=f"{prefix}.cancel", on_click=_mark_cancelled,
                          args=(cancelled_key, ck))
            ui["last"] = now
        elif queued or now - float(ui["last"]) >= UPDATE_EVERY_S:
            ui["bar"].progress(float(min(max(frac, 0.0), 1.0)),  # type: ignore[union-attr]
                               text=label)
            ui["last"] = now

    cancel = threading.Event()
    try:
        traj = service.run(config, progress=progress, cancel=cancel, session=sid)
    except ServiceError as e:
        holder.empty()
        st.error(f"The simulation failed unexpectedly: {literal(e)}")
        return None
    finally:
        cancel.set()  # if the script is interrupted (rerun), stop waiting for the result
    holder.empty()
    return traj


def analyse(traj: Trajectory) -> tuple[Analysis | None, str | None]:
    """(analysis, None), or (None, message) when the analysis failed."""
    try:
        return get_service().analyse(traj), None
    except ServiceError as e:
        return None, str(e)


def run_and_analyse(config: Config, *, prefix: str = KEY_PREFIX,
                    what: str = "Theory overlays") -> tuple[Trajectory, Analysis | None] | None:
    """`run_config` then `analyse`, with the page's warnings: a run that did not complete shows
    its status and message; a failed analysis says `what` is unavailable. None as run_config."""
    traj = run_config(config, prefix=prefix)
    if traj is None:
        return None
    show_status(traj)
    analysis, problem = analyse(traj)
    if problem:
        st.warning(f"{what} are unavailable for this run: {literal(problem)}")
    return traj, analysis


def show_status(traj: Trajectory, label: str = "") -> None:
    """A warning for a run that did not complete: its status, message and what to change."""
    status = Status(traj.status)
    if status is Status.COMPLETED:
        return
    fix = f" {status.fix}" if status.fix and status.fix not in traj.message else ""
    st.warning(f"{label}**{status.value}** — {literal(traj.message)}{fix}")


def _traj_key(traj: Trajectory) -> str:
    last = float(traj.t[-1]) if traj.n_frames else 0.0
    return f"{traj.config.cache_key()}:{traj.status}:{traj.n_frames}:{last!r}"


class _FrozenFigure(go.Figure):
    """A figure that is never modified after it is built (it is shared by sessions through the
    figure cache), whose plotly.js dict is made once: `st.plotly_chart` calls `to_dict()` on
    every rerun, a deep copy and a walk of every array (~0.05–0.1 s for the main figure).
    The dict returned is shared: read it, never modify it (copy first)."""

    def to_dict(self) -> dict[str, Any]:
        spec = self.__dict__.get("_eae_spec")
        if spec is None:
            spec = super().to_dict()
            self.__dict__["_eae_spec"] = spec
        return {**spec}  # a new top level; the (large) contents shared


def frozen_spec(fig: go.Figure) -> go.Figure:
    """`fig` (the same object, now a `_FrozenFigure`) with its dict made now; call it only on a
    figure nobody modifies afterwards."""
    fig.__class__ = _FrozenFigure
    fig.to_dict()
    return fig


@st.cache_resource(max_entries=48, show_spinner=False)
def _cached_figure(key: str, _traj: Trajectory, _analysis: Analysis | None,
                   radius: str, time_axis: str, time_scale: str, presenter: bool,
                   has_analysis: bool) -> go.Figure:
    fig = main_figure(_traj, _analysis, radius=radius,  # type: ignore[arg-type]
                      time_axis=time_axis, time_scale=time_scale,  # type: ignore[arg-type]
                      presenter=presenter)
    return frozen_spec(fill_screen(fig) if presenter else fig)


def figure_for(traj: Trajectory, analysis: Analysis | None, view: FigureView) -> go.Figure:
    """The main figure, built once per (trajectory, display options) and shared by sessions
    (the figure is not modified afterwards; st.plotly_chart copies it). In presenter mode it
    has no fixed height: `ui.charts.chart` sizes it from the viewport."""
    if not Status(traj.status).cacheable:  # partial (deadline, cancelled): not shared
        fig = main_figure(traj, analysis, **view.figure_kwargs())
        return fill_screen(fig) if view.presenter else fig
    return _cached_figure(_traj_key(traj), traj, analysis, view.radius, view.time_axis,
                          view.time_scale, view.presenter, analysis is not None)


WARM_FIGURES = 1  # neighbours whose figure is built ahead: the next step of the moved control
WARM_DELAY_S = 0.5  # after the page's own figure went out, before the first speculative one
_warm_lock = threading.Lock()
_warm: dict[str, Any] = {"gen": 0, "todo": [], "thread": None}


def prefetch(configs: Sequence[Config], view: FigureView | None = None) -> int:
    """Hand `configs` (e.g. the neighbours of the settings on screen, `ui.controls.neighbours`)
    to the service's background prefetch, and with `view` build the main figures of the first
    `WARM_FIGURES` of them into the shared figure cache, in one background thread: the next
    step of a control is then a cache hit for the run and the figure. Never blocks or fails the
    page; a newer call replaces the list. How many runs are pending."""
    try:
        service = get_service()
        pending = service.prefetch(list(configs))
    except Exception:  # speculative: never break the page
        return 0
    if view is not None:
        with _warm_lock:
            _warm["gen"] += 1
            _warm["todo"] = [(c, view, service, _warm["gen"]) for c in configs[:WARM_FIGURES]]
            if _warm["thread"] is None:
                _warm["thread"] = threading.Thread(target=_warm_loop, daemon=True,
                                                   name="eae-warm-figures")
                _warm["thread"].start()
    return pending


def page_busy() -> None:
    """A script run started: speculative figures not yet begun are dropped (a figure build
    holds the interpreter for a few tenths of a second; the user's own run goes first)."""
    with _warm_lock:
        _warm["gen"] += 1
        _warm["todo"] = []


def warm_idle(timeout: float) -> bool:
    """Wait until the speculative figures are built (tests); True if they are."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with _warm_lock:
            if _warm["thread"] is None:
                return True
        time.sleep(0.02)
    return False


def _warm_loop() -> None:
    """Build the listed figures one at a time, each `WARM_DELAY_S` after the last page run
    or figure (runs from the cache once the service's prefetch has them); a figure of a
    replaced list (`prefetch`, `page_busy`) is skipped."""
    while True:
        time.sleep(WARM_DELAY_S)
        with _warm_lock:
            if not _warm["todo"]:
                _warm["thread"] = None
                return
            config, view, service, gen = _warm["todo"].pop(0)
            if gen != _warm["gen"]:
                continue
        try:
            traj = service.peek(config)
            if traj is None and service.prefetch_idle(timeout=10.0):
                traj = service.peek(config)
            with _warm_lock:
                stale = gen != _warm["gen"]
            if traj is None or stale or not Status(traj.status).cacheable:
                continue
            figure_for(traj, service.analyse(traj), view)
        except Exception:  # speculative: the page reports problems when it gets there
            continue


def show_notes(analysis: Analysis | None) -> None:
    """The analysis' notes (e.g. which of a paper's assumptions this run breaks) under the
    figure, as plain text (`ui.text.plain`: they may quote settings)."""
    notes = [n for n in (analysis.notes if analysis is not None else ()) if str(n).strip()]
    if notes:
        st.caption("Notes on this run:\n\n" + "\n".join(f"- {plain(n)}" for n in notes))
