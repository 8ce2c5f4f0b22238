"""Development tools shared by the test suite (`tests/`) and the benchmarks (`bench/`).

Not part of the library: `dynamics/` never imports this package. It holds the harness that
drives the dashboard from outside:

- `devtools.server`: `StreamlitServer`, a `streamlit run` subprocess on a free loopback port;
- `devtools.browser`: the headless Debian Chromium settings (`CHROMIUM_PATH`, `CHROMIUM_ARGS`,
  `VIEWPORT`) and `wait_for_streamlit_idle`, the rule for "the app has finished a run";
- `devtools.apptest`: `run_page` (Streamlit's AppTest on one page with URL parameters) and
  `plotly_spec` (the Plotly JSON of a page's chart);
- `devtools.stclient`: `Session` / `AsyncSession`, protocol-level Streamlit sessions (the
  browser's websocket protocol without a browser: pages, widgets, figure payloads), for tests
  and load benchmarks.

Each module imports its heavy dependencies (Playwright, Streamlit) only when called.
"""
