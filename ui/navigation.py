"""The dashboard's pages as one table, and the navigation's `st.Page` objects by URL path.

A page is a function (`app_pages.<name>.page`) registered with `st.Page(function)`; `app.py`
builds the pages from `PAGES` and the functions it imports (`build`), which remembers them, so
code in `ui/` can switch to a page by its URL path (`page`) without importing `app_pages`
(imports go down: app_pages → ui). `st.switch_page` to a function page needs an `st.Page`
of that function, which `ui/` cannot build without importing the page, hence the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st
from streamlit.navigation.page import StreamlitPage

import runtime


@dataclass(frozen=True)
class NavPage:
    """One row of the navigation: its URL path (also the `app_pages` module's name), title,
    Material icon and whether it is the default page."""

    url_path: str
    title: str
    icon: str
    default: bool = False


PAGES: tuple[NavPage, ...] = (
    NavPage("overview", "Overview", ":material/home:"),
    NavPage("explorer", "Explorer", ":material/explore:", default=True),
    NavPage("papers", "Papers", ":material/article:"),
    NavPage("compare", "Compare", ":material/compare:"),
    NavPage("real_data", "Real data", ":material/grid_on:"),
    NavPage("sweeps", "Sweeps", ":material/grid_view:"),
    NavPage("status", "About & status", ":material/info:"),
)

def build(functions: dict[str, Callable[[], None]]) -> list[StreamlitPage]:
    """The `st.Page`s of `PAGES`, each running `functions[url_path]`; registered for `page`."""
    missing = sorted({p.url_path for p in PAGES} - set(functions))
    if missing:
        raise ValueError(f"no page function for {', '.join(missing)}")
    pages = [st.Page(functions[p.url_path], title=p.title, icon=p.icon, default=p.default,
                     url_path=p.url_path) for p in PAGES]
    # by the table's path: a default page's own `url_path` is "" (the root URL)
    runtime.current().registered.update(zip((p.url_path for p in PAGES), pages, strict=True))
    return pages


def page(url_path: str) -> StreamlitPage:
    """The registered page at `url_path` (for `st.switch_page`)."""
    try:
        return runtime.current().registered[url_path]  # type: ignore[no-any-return]
    except KeyError:
        raise KeyError(f"no page registered at {url_path!r} (app.py registers them)") from None


__all__ = ["PAGES", "NavPage", "build", "page"]
