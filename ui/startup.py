"""A fresh server says what it is doing: while the kernels compile (or load) at start-up
(`dynamics.warmup`, started by `ui.server.lifespan`), a visitor sees a progress message with
the expected wait instead of a blank page, and the page opens by itself when they are ready.
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


def wait_for_kernels() -> None:
    """Stop the script with a progress message while the start-up compilation runs (a
    fragment re-checks every POLL_S and reruns the app when it is done)."""
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
        st.markdown("### Early alignment explorer")
        progress()
    st.stop()


__all__ = ["message", "wait_for_kernels"]
