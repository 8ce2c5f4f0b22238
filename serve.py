"""The dashboard as an ASGI app: `streamlit run serve.py` (what `scripts/run.sh` runs).

`app.py` is the Streamlit script; this adds the project's routes (figure payloads, Plotly.js
for the player), middleware and start-up hook (`ui.server`). `streamlit run` recognises the
`st.App(...)` assignment below and serves it with uvicorn; the usual `--server.*` flags apply.
"""

import streamlit as st

from ui import server

app = st.App(server.APP_SCRIPT, routes=server.routes(), middleware=server.middleware(),
             lifespan=server.lifespan)
