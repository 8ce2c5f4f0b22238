"""Running a config through the service from a page: a cached service accessor, a progress bar
with a Cancel button for runs that take a while, and the analysis.

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

The progress placeholder is always reserved, so the elements after it (the figure) keep their
place while a new run computes and the old figure stays until the new one arrives. Figures are
built and cached in `ui.figures`; speculative runs and figures in `ui.prefetch`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import streamlit as st

import runtime
from dynamics.admission import QUEUED
from dynamics.annotations import Analysis
from dynamics.config import Config
from dynamics.config.checks import data_shape
from dynamics.cost import (
    PROVISIONAL_MAX_S,
    describe_seconds,
    estimate_seconds,
    interpreted_seconds,
)
from dynamics.service import Service, ServiceError
from dynamics.status import Status
from dynamics.trajectory import Trajectory

from . import sessions, startup
from .state import EXPLORER_KEY as KEY_PREFIX
from .text import literal, plain

SHOW_PROGRESS_AFTER_S = 0.4  # fast runs finish without a progress bar flashing up
UPDATE_EVERY_S = 0.1


def get_service() -> Service:
    """The process's service (the runtime's, `Runtime.service`)."""
    return runtime.current().service


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


def _cancelled_box(prefix: str, cancelled_key: str) -> None:
    """Said in place of a run the user cancelled, with a button that runs it again."""
    with st.container(border=True):
        st.info("The run for these settings was cancelled. Change a setting, or run it.")
        st.button("Run", key=f"{prefix}.run_again", on_click=_clear_cancelled,
                  args=(cancelled_key,), type="primary",
                  help="Runs these settings again (the last run was cancelled).")


def _progress_bar(holder: Any, prefix: str, cancelled_key: str,
                  ck: str) -> Callable[[float, str], None]:
    """The service's progress callback for a run of cache key `ck`: a bar with a Cancel button
    in `holder` once the run has taken SHOW_PROGRESS_AFTER_S (a queue message at once, every
    time), updated every UPDATE_EVERY_S; a long wait lets the other sessions' pages run."""
    start = time.perf_counter()
    ui: dict[str, object] = {"bar": None, "last": 0.0}

    def progress(frac: float, text: str) -> None:
        now = time.perf_counter()
        queued = text.startswith(QUEUED)  # a queue message is shown at once, every time
        if not queued and now - start < SHOW_PROGRESS_AFTER_S:
            return
        runtime.current().pages.leave()  # a long wait: the other sessions' pages run meanwhile
        label = f"Waiting for a free slot — {text}" if queued else f"Simulating… {text}"
        if ui["bar"] is None:
            with holder.container(border=True):
                ui["bar"] = st.progress(float(min(max(frac, 0.0), 1.0)), text=label)
                st.button("Cancel", key=f"{prefix}.cancel", on_click=_mark_cancelled,
                          args=(cancelled_key, ck),
                          help="Stops this run; the page keeps its settings.")
            ui["last"] = now
        elif queued or now - float(ui["last"]) >= UPDATE_EVERY_S:
            ui["bar"].progress(float(min(max(frac, 0.0), 1.0)),  # type: ignore[union-attr]
                               text=label)
            ui["last"] = now

    return progress


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
        _cancelled_box(prefix, cancelled_key)
        return None
    if not _gate(config, prefix, ck, service):
        return None
    if startup.compiling() and interpreted_seconds(config) > PROVISIONAL_MAX_S:
        startup.wait_for_kernels()  # too large to run uncompiled: the compiler goes first
    progress = _progress_bar(holder, prefix, cancelled_key, ck)
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
        with runtime.current().turns.turn():  # interpreter-bound: sessions take turns
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
    if traj.meta.get("provisional"):
        startup.replace_when_ready()
    show_status(traj)
    analysis, problem = analyse(traj)
    if problem:
        st.warning(f"{what} are unavailable for this run: {literal(problem)}")
    return traj, analysis


def show_status(traj: Trajectory, label: str = "") -> None:
    """A warning for a run that did not complete: its status, message and what to change; for
    a completed one, its achieved accuracy when it is worse than asked (`meta["accuracy"]`)."""
    status = Status(traj.status)
    if status is Status.COMPLETED:
        acc = traj.meta.get("accuracy") or {}
        if acc.get("within_tolerance") is False:  # the achieved accuracy beside the requested
            st.caption(f"{label}Achieved accuracy {acc['balance_drift']:.1e} (relative drift "
                       f"of a_j² − ‖w_j‖², which the flow conserves) at rtol "
                       f"{acc['rtol']:g}: neurons sliding on ReLU kinks are followed with "
                       "small fixed steps, whose error does not follow rtol.")
        return
    # a diverged run's message carries the fix chosen for it (dynamics.status.divergence_fix)
    generic = status.fix and status is not Status.DIVERGED
    fix = f" {status.fix}" if generic and status.fix not in traj.message else ""
    st.warning(f"{label}**{status.value}** — {literal(traj.message)}{fix}")


def show_notes(analysis: Analysis | None) -> None:
    """The analysis' notes (e.g. which of a paper's assumptions this run breaks) under the
    figure, as plain text (`ui.text.plain`: they may quote settings)."""
    notes = [n for n in (analysis.notes if analysis is not None else ()) if str(n).strip()]
    if notes:
        st.caption("Notes on this run:\n\n" + "\n".join(f"- {plain(n)}" for n in notes))
