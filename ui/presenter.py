"""Presenter mode: for a projector in class. The controls (sidebar, navigation, header) are
hidden, text is larger, the header is compact and the main figure — with its ▶ Play button and
time slider — fits in the window whatever its size (1280×720 projectors included).

It is one URL flag, `view.presenter=true` (a field of every page's view, `ui.view.View`), so a
teacher projects a link and every laptop that opens it sees the same view. Every page handles
it the same way: `mode(key, initial, fresh)` once near the top (seeds the switch's session
key from the page's state, applies the mode, returns it) and `switch(key)` where the page
draws the switch (its label and help from the settings table, `ui.settings`); the main figure
is drawn with `ui.charts.animated`; the intro text goes into `intro()` (an expander in presenter
mode); the Explorer adds the lesson bar (`lesson_bar`: ◀ / ▶ buttons, the ← → keys and a
clicker's PageUp / PageDown).

How the figure fits: the player (`viz/player/component.js`) sizes its frame to the window —
`100vh − its top − a margin`, at least 380 px and at most the height the figure was laid out
for plus its controls; a static chart's container is sized the same way by CSS, from the
variable `--eae-fig-top` that a small script (`FIT_JS`) keeps at the chart's top.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from .settings import setting
from .state import seed

FONT_SCALE = 1.25  # page text ×1.25 (the figure has its own ×1.35 presenter style)
FIG_KEY_PREFIX = "eae-fig-"
INTRO_KEY_PREFIX = "eae-intro-"  # presenter mode: intro expanders, drawn after the figure
FIG_MIN_PX = 380  # below this the figure's panels are unreadable: the page scrolls instead
FIG_MARGIN_PX = 12  # kept free under the figure
FIGURE_HEIGHT_CSS = (f"clamp({FIG_MIN_PX}px, calc(100vh - var(--eae-fig-top, 90px) - "
                     f"{FIG_MARGIN_PX}px), var(--eae-fig-max, 100vh))")

PRESENTER_CSS = f"""
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stSidebarNav"],
header[data-testid="stHeader"], [data-testid="stToolbar"], [data-testid="stDecoration"],
.st-key-eae-presenter-toggle {{
  display: none !important;
}}
html {{ font-size: {16 * FONT_SCALE:.0f}px !important; }}
[data-testid="stMainBlockContainer"], .block-container {{
  max-width: 100% !important; padding: 0.3rem 1.2rem 0.5rem 1.2rem !important;
}}
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
[data-testid="stCaptionContainer"] {{ font-size: {FONT_SCALE:.2f}rem !important; }}
[data-testid="stMainBlockContainer"] h1 {{ font-size: 1.6rem !important;
  padding: 0.1rem 9rem 0.2rem 0 !important; }}
[data-testid="stMainBlockContainer"] h2, [data-testid="stMainBlockContainer"] h3 {{
  font-size: 1.25rem !important; padding: 0.1rem 0 0.1rem 0 !important; }}
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] {{ gap: 0.45rem; }}
[data-testid="stHeading"] [data-testid="stMarkdownContainer"] {{
  margin-bottom: -0.35rem !important; }}
[class*="st-key-{FIG_KEY_PREFIX}"] [data-testid="stPlotlyChart"] {{
  height: {FIGURE_HEIGHT_CSS} !important;
}}
[data-testid="stVerticalBlock"] > [class*="st-key-{INTRO_KEY_PREFIX}"],
[data-testid="stVerticalBlock"] > :has(> [class*="st-key-{INTRO_KEY_PREFIX}"]) {{
  order: 90;
}}
.st-key-presenter-exit {{
  position: fixed !important; top: 0.3rem !important; right: 0.8rem !important;
  left: auto !important; width: auto !important; z-index: 999990 !important;
}}
</style>
"""

# Sets --eae-fig-top to the main figure's top in the page (scroll offsets added back, so the
# height does not change while scrolling). Polls: no ResizeObserver (its loop warning is a
# console error in Chromium).
FIT_JS = """
<script>
(() => {
  const fit = () => {
    const el = document.querySelector('[class*="st-key-eae-fig-"]');
    if (!el) return;
    let top = el.getBoundingClientRect().top;
    for (let p = el.parentElement; p; p = p.parentElement) top += p.scrollTop || 0;
    const v = Math.max(0, Math.round(top)) + 'px';
    const root = document.documentElement.style;
    if (root.getPropertyValue('--eae-fig-top') !== v) root.setProperty('--eae-fig-top', v);
  };
  if (!window.__eaeFit) {
    window.__eaeFit = fit;
    window.addEventListener('resize', fit);
    setInterval(fit, 300);
  }
  fit();
})();
</script>
"""


# the lesson bar keeps clear of the fixed "Exit presenter mode" button; its key twins are hidden
LESSON_CSS = """<style>
.st-key-eae-lesson-keys { display: none !important; }
.st-key-eae-lesson { padding-right: 300px; }
</style>"""


def apply_presenter(enabled: bool, *, on_exit: Callable[..., Any] | None = None,
                    args: tuple[Any, ...] = ()) -> bool:
    """Inject the presenter CSS, the figure-fitting script and the exit button when `enabled`;
    returns `enabled`. `on_exit` (called with `args`) must turn the page's presenter state
    off."""
    if not enabled:
        return False
    st.html(PRESENTER_CSS)
    st.html(FIT_JS, unsafe_allow_javascript=True)
    with st.container(key="presenter-exit"):
        st.button("Exit presenter mode", key="presenter.exit_button", icon=":material/close:",
                  on_click=on_exit, args=args, help="Show the controls again")
    return True


def session_flag_off(key: str) -> None:
    """An `on_exit` for pages whose presenter toggle lives in session state under `key`."""
    st.session_state[key] = False


def intro(on: bool, label: str = "About this page") -> Any:
    """Where a page's introductory text goes (a container: `with` it, or call `.markdown`):
    in presenter mode a collapsed expander, shown at the end of its block (CSS `order`: the
    figure comes first on a projector, and keeps the height), a plain container otherwise."""
    if not on:
        return st.container()
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "intro"
    return st.container(key=f"{INTRO_KEY_PREFIX}{slug}").expander(label, expanded=False)


def mode(key: str, initial: bool, fresh: bool) -> bool:
    """Presenter mode of a page whose switch (`switch(key)`, drawn anywhere on the page, or
    not at all) lives in session state under `key`: seeded from the page's state (`initial`)
    when `fresh` or not set yet, applied (`apply_presenter`; the exit button turns it off),
    returned. Call it before the page's other elements."""
    on = bool(st.session_state[seed(key, initial, fresh)])
    apply_presenter(on, on_exit=session_flag_off, args=(key,))
    return on


def switch(key: str) -> bool:
    """The presenter switch (session key `key`, seeded by `mode`), labelled and explained by
    the settings table's `view.presenter` row; hidden in presenter mode (the exit button
    turns it off). Its state reaches the URL through the page's binder, never by binding the
    widget."""
    row = setting("view.presenter")
    with st.container(key="eae-presenter-toggle"):  # hidden in presenter mode
        return bool(st.toggle(row.label, key=key, help=row.help))


def lesson_bar(labels: Sequence[tuple[str, str]], current: int,
               go_to: Callable[[int], None], *, edited: bool = False) -> None:
    """◀ Back · "k / n  label — line" · Next ▶ for a lesson of `labels` ((label, line),
    trusted registry text) with `current` on screen (-1: none; Next starts at the first).
    `go_to(i)` (a callback) shows scenario i. Keys: ← / → on the visible buttons, PageUp /
    PageDown (what presentation clickers send) on hidden twins."""
    n = len(labels)
    prev_i, next_i = max(current - 1, 0), min(current + 1, n - 1)
    st.html(LESSON_CSS)
    with st.container(key="eae-lesson"):
        c1, c2, c3 = st.columns([2, 7, 2], vertical_alignment="center")
        with c1:
            st.button("Back", key="lesson.prev", icon=":material/arrow_back:",
                      disabled=current <= 0, on_click=go_to, args=(prev_i,), shortcut="Left",
                      help="Previous scenario of the lesson (← or PageUp)", width="stretch")
        with c2:
            if current >= 0:
                label, line = labels[current]
                st.markdown(f"**{current + 1} / {n} · {label}**"
                            + (" (edited)" if edited else "") + (f" — {line}" if line else ""))
            else:
                st.markdown(f"**Lesson: {n} scenarios.** Press Next (→) to start.")
        with c3:
            st.button("Next", key="lesson.next", icon=":material/arrow_forward:",
                      icon_position="right", disabled=current >= n - 1, on_click=go_to,
                      args=(next_i if current >= 0 else 0,), shortcut="Right",
                      help="Next scenario of the lesson (→ or PageDown)", width="stretch")
    with st.container(key="eae-lesson-keys"):  # hidden: only their shortcuts are used
        st.button("Previous scenario", key="lesson.prev_page", disabled=current <= 0,
                  on_click=go_to, args=(prev_i,), shortcut="PageUp",
                  help="The lesson's previous scenario (Page Up).")
        st.button("Next scenario", key="lesson.next_page", disabled=current >= n - 1,
                  on_click=go_to, args=(next_i if current >= 0 else 0,), shortcut="PageDown",
                  help="The lesson's next scenario (Page Down).")


__all__ = ["PRESENTER_CSS", "apply_presenter", "intro", "lesson_bar", "mode", "session_flag_off",
           "switch"]
