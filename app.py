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

# a local favicon: a Material-icon favicon would be fetched from a font server by every browser
st.set_page_config(page_title="Early Alignment Explorer",
                   page_icon=str(Path(__file__).parent / "assets" / "favicon.png"), layout="wide")

from ui import navigation, prefetch, turns  # noqa: E402 (after set_page_config)

# every page run goes before speculative work, and tells it whether the server is shared
prefetch.page_busy()

# a fresh server compiles its kernels meanwhile: small runs are computed uncompiled
# (`ui.startup`), larger ones wait for the compiler with a progress message
from app_pages import (  # noqa: E402
    compare,
    explorer,
    overview,
    papers,
    real_data,
    status,
    sweeps,
)

# every page is a function, registered as st.Page(function) under its table row (ui.navigation)
pages = navigation.build({name: module.page for name, module in (
    ("overview", overview), ("explorer", explorer), ("papers", papers), ("compare", compare),
    ("real_data", real_data), ("sweeps", sweeps), ("status", status))})
with turns.PAGES.slot():  # a few page runs at a time, in arrival order (`ui.turns.Slots`)
    st.navigation(pages).run()
