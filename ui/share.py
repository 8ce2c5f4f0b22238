"""The "Share this view" box of a page: a link that reopens the view, in a popover. Its code
block's script (≈1.5 MB) loads only when the popover opens, so a fresh browser's first chart
does not wait for it; and opening it reruns nothing (an expander drawn lazily on opening cost
every visitor a second run of the page: ≈20 ms of server CPU per visitor in a class)."""

from __future__ import annotations

import streamlit as st


def share_box(key: str, caption: str, link: str, note: str | None = None) -> None:
    """A "Share this view" popover (widget key `key`) holding `caption`, the `link` in a code
    block (its copy icon at the right) and an optional `note` under it. The texts are the
    page's own (Markdown); the link is shown as code, never as Markdown."""
    with st.popover("Share this view", icon=":material/share:", key=key,
                    help="A link that reopens exactly this view."):
        st.caption(caption)
        st.code(link, language=None, wrap_lines=True)
        if note:
            st.caption(note)
