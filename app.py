"""Streamlit entry point: page config, theme and navigation over app_pages/.

Run with `bash scripts/run.sh` or `eae app` (or `streamlit run app.py`). Pages are thin:
widgets → Config → service → figures (viz/). Each page is a function, `app_pages.<name>.page`,
registered as `st.Page(function)` from the table `ui.navigation.PAGES` (title, icon, URL path):
no page state lives at module level (a page file still runs its page as a script, for
`AppTest.from_file` of one page). The pages live in app_pages/, not pages/: Streamlit
treats a pages/ folder as a legacy multipage app, and a deep link opened first on a fresh
server would then run the page without this navigation.
"""

from pathlib import Path

import streamlit as st


def main() -> None:
    """Page config, navigation and the page of this run (Streamlit runs this file on every
    rerun)."""
    # a local favicon: a Material-icon favicon would be fetched from a font server by every
    # browser
    st.set_page_config(page_title="Early Alignment Explorer",
                       page_icon=str(Path(__file__).parent / "assets" / "favicon.png"),
                       layout="wide")

    import runtime
    from app_pages import compare, explorer, overview, papers, real_data, status, sweeps
    from ui import navigation, prefetch

    # every page run goes before speculative work, and tells it whether the server is shared
    prefetch.page_busy()
    # a fresh server compiles its kernels meanwhile: small runs are computed uncompiled
    # (`ui.startup`), larger ones wait for the compiler with a progress message.
    # Every page is a function, registered as st.Page(function) under its table row
    # (ui.navigation)
    pages = navigation.build({name: module.page for name, module in (
        ("overview", overview), ("explorer", explorer), ("papers", papers),
        ("compare", compare), ("real_data", real_data), ("sweeps", sweeps),
        ("status", status))})
    # a few page runs at a time, in arrival order (`runtime.admission.Slots`)
    with runtime.current().pages.slot():
        st.navigation(pages).run()


# A process that multiprocessing spawns — the sweeps' Dask workers — runs its parent's main
# script again as "__mp_main__" to find pickled names in it; this script has none, and a page
# run there (in bare mode: a warning per Streamlit call, a simulation for nothing) only costs
# the worker its start.
if __name__ != "__mp_main__":
    main()
