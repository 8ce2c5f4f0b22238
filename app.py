"""Streamlit entry point: page config, theme and navigation over app_pages/.

Run with `bash scripts/run.sh` or `eae app` (or `streamlit run app.py`). Pages are thin:
widgets → Config → service → figures (viz/). Each page is a function, `app_pages.<name>.page`,
and its file runs it (Streamlit runs a page file as `__main__`): no page state lives at module
level. The pages are registered by file, not as `st.Page(function)`, because AppTest's
`switch_page` finds only file pages and the page tests drive the app through this navigation.
They live in app_pages/, not pages/: Streamlit
treats a pages/ folder as a legacy multipage app, and a deep link opened first on a fresh
server would then run the page without this navigation.
"""

from pathlib import Path

import streamlit as st

import app_pages

# a local favicon: a Material-icon favicon would be fetched from a font server by every browser
st.set_page_config(page_title="Early Alignment Explorer",
                   page_icon=str(Path(__file__).parent / "assets" / "favicon.png"), layout="wide")

from ui import prefetch, turns  # noqa: E402 (after set_page_config)
from ui.startup import wait_for_kernels  # noqa: E402

wait_for_kernels()  # a fresh server: a progress message, not a blank page
# every page run goes before speculative work, and tells it whether the server is shared
prefetch.page_busy()

ROOT = Path(app_pages.__file__).parents[1]  # above app_pages/: a checkout or site-packages
PAGES = [  # (file, title, Material icon, default)
    ("app_pages/overview.py", "Overview", ":material/home:", False),
    ("app_pages/explorer.py", "Explorer", ":material/explore:", True),
    ("app_pages/papers.py", "Papers", ":material/article:", False),
    ("app_pages/compare.py", "Compare", ":material/compare:", False),
    ("app_pages/real_data.py", "Real data", ":material/grid_on:", False),
    ("app_pages/sweeps.py", "Sweeps", ":material/grid_view:", False),
    ("app_pages/status.py", "About & status", ":material/info:", False),
]

pages = [
    st.Page(str(ROOT / f), title=title, icon=icon, default=default, url_path=Path(f).stem)
    for f, title, icon, default in PAGES
    if (ROOT / f).exists()
]
with turns.PAGES.slot():  # a few page runs at a time, in arrival order (`ui.turns.Slots`)
    st.navigation(pages).run()
