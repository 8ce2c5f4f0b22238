"""The "Share this view" box of a page: a link that reopens the view, drawn only once the box
is opened (its code block's script, ≈1.5 MB, would otherwise load with the page and delay a
fresh browser's first chart)."""

from __future__ import annotations

import streamlit as st


def share_box(key: str, caption: str, link: str, note: str | None = None) -> None:
    """An expander (widget key `key`) that, once opened, shows `caption`, the `link` in a
    code block (its copy icon at the right) and an optional `note` under it. The texts are
    the page's own (Markdown); the link is shown as code, never as Markdown."""
    box = st.expander("Share this view", expanded=False, key=key, on_change="rerun")
    if box.open:
        with box:
            st.caption(caption)
            st.code(link, language=None, wrap_lines=True)
            if note:
                st.caption(note)
