"""Streamlit entry point: page config, theme and navigation over pages/.

Run with `bash scripts/run.sh` (or `streamlit run app.py`). Pages are thin: widgets → Config →
service → figures (viz/). Pages that are not present in this checkout are left out of the menu.
"""

from pathlib import Path

import streamlit as st

# a local favicon: a Material-icon favicon would be fetched from a font server by every browser
st.set_page_config(page_title="Early Alignment Explorer",
                   page_icon=str(Path(__file__).parent / "assets" / "favicon.png"), layout="wide")

HERE = Path(__file__).parent
PAGES = [  # (file, title, Material icon, default)
    ("pages/overview.py", "Overview", ":material/home:", False),
    ("pages/explorer.py", "Explorer", ":material/explore:", True),
    ("pages/papers.py", "Papers", ":material/article:", False),
    ("pages/compare.py", "Compare", ":material/compare:", False),
    ("pages/real_data.py", "Real data", ":material/grid_on:", False),
    ("pages/sweeps.py", "Sweeps", ":material/grid_view:", False),
    ("pages/status.py", "About & status", ":material/info:", False),
]

pages = [
    st.Page(str(HERE / f), title=title, icon=icon, default=default, url_path=Path(f).stem)
    for f, title, icon, default in PAGES
    if (HERE / f).exists()
]
st.navigation(pages).run()
