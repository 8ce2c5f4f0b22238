"""A fresh server never keeps a visitor waiting for its compiler: while the kernels compile (or
load) at start-up (`dynamics.warmup`, started by `ui.server.lifespan`), a small run is
computed at once with the kernels uncompiled (`dynamics.simulate`: provisional) and its page
says so and is redrawn by itself with the exact run once the kernels are ready
(`replace_when_ready`); a run too large for that shows a progress message with the expected
wait instead of a blank page (`wait_for_kernels`), and opens by itself when they are
ready.
"""

from __future__ import annotations

import streamlit as st

from dynamics import warmup

POLL_S = 1.0


def message(state: warmup.WarmState) -> str:
    """The visitor's message for a start-up in progress."""
    left = state.remaining_s
    wait = (f"about {left:.0f} s left" if not state.late or state.done
            else "it takes longer than usual: the machine is busy")
    return (f"The server is starting: it compiles the simulation kernels once "
            f"({state.done} of {state.total} done, {wait}). "
            "This page opens by itself when they are ready.")


def compiling() -> bool:
    """Whether the start-up compilation is still running."""
    return not warmup.state().ready


@st.fragment(run_every=POLL_S)
def _rerun_when_ready() -> None:
    if warmup.state().ready:
        st.rerun(scope="app")


def wait_for_kernels() -> None:
    """Stop the script with a progress message while the start-up compilation runs (a
    fragment re-checks every POLL_S and reruns the app when it is done): for a run too large
    to compute uncompiled meanwhile."""
    if warmup.state().ready:
        return

    @st.fragment(run_every=POLL_S)
    def progress() -> None:
        state = warmup.state()
        if state.ready:
            st.rerun(scope="app")
        frac = state.done / state.total if state.total else 0.0
        st.progress(frac, text=message(state))

    with st.container(key="eae-starting"):  # (browser tests wait for it to go)
        progress()
    st.stop()


def replace_when_ready() -> None:
    """Under a provisional run's figure: what it is, and a rerun (with the exact run) once
    the kernels are ready."""
    state = warmup.state()
    with st.container(key="eae-provisional"):
        st.caption(f"Computed with the simulation kernels not compiled yet (the server compiles "
                   f"them once, about {state.remaining_s:.0f} s left): the exact run replaces "
                   "this figure by itself.")
        _rerun_when_ready()


__all__ = ["compiling", "message", "replace_when_ready", "wait_for_kernels"]
