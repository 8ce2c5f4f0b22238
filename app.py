"""Streamlit entry point: page config, theme and navigation over pages/.

Run with `bash scripts/run.sh` (or `streamlit run app.py`). Pages are thin: widgets → Config →
service → figures (viz/). Pages that are not present in this checkout are left out of the menu.
"""

from pathlib import Path

import streamlit as st

st.set_page_config(page_title="Early Alignment Explorer", page_icon="🧭", layout="wide")

HERE = Path(__file__).parent
PAGES = [  # (file, title, icon, default)
    ("pages/overview.py", "Overview", "🏠", False),
    ("pages/explorer.py", "Explorer", "🧭", True),
    ("pages/papers.py", "Papers", "📄", False),
    ("pages/compare.py", "Compare", "⚖️", False),
    ("pages/real_data.py", "Real data", "🔢", False),
    ("pages/sweeps.py", "Sweeps", "🗺️", False),
    ("pages/status.py", "About & status", "ℹ️", False),
]

pages = [
    st.Page(str(HERE / f), title=title, icon=icon, default=default, url_path=Path(f).stem)
    for f, title, icon, default in PAGES
    if (HERE / f).exists()
]
st.navigation(pages).run()
