"""Explorer page latency (a benchmark, not a test).

Measures, for the default config:
- browser time to a visible, animated chart: cold (fresh server, empty cache) and warm
  (reload of the same page on the running server);
- server time of a script run for a cached config (AppTest; the second run of the page: the
  trajectory, its analysis and the figure are all cached);
- the figure build time without the figure cache, and the figure's JSON size in bytes.

Targets: warm < 1 s; cached < 0.3 s server time.
Run: .venv/bin/python -m bench page  (or -m bench.bench_page; needs Chromium at /usr/bin/chromium)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # also runnable as a script: bench/bench_page.py
    sys.path.insert(0, str(REPO))

CHART_READY_JS = """() => {
  const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
  return !!(gd && gd.querySelector('.main-svg') && gd._transitionData
            && gd._transitionData._frames.length > 0);
}"""


def browser_times(cache_dir: str, reloads: int = 3) -> tuple[float, list[float]]:
    from playwright.sync_api import sync_playwright

    from devtools.browser import VIEWPORT, launch_chromium
    from devtools.server import StreamlitServer

    server = StreamlitServer(REPO / "app.py", {"EAE_CACHE_DIR": cache_dir}, Path(cache_dir))
    try:
        server.wait_healthy()
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            page = browser.new_page(viewport=VIEWPORT)
            t0 = time.perf_counter()
            page.goto(server.url + "/")
            page.wait_for_function(CHART_READY_JS, timeout=300_000, polling=50)
            cold = time.perf_counter() - t0
            warm = []
            for _ in range(reloads):
                t0 = time.perf_counter()
                page.reload()
                page.wait_for_function(CHART_READY_JS, timeout=120_000, polling=50)
                warm.append(time.perf_counter() - t0)
            browser.close()
    finally:
        server.stop()
    return cold, warm


def server_times(runs: int = 5) -> list[float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app_pages" / "explorer.py"), default_timeout=300)
    at.run()  # computes (or loads) the trajectory and builds the figure
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        at.run()
        out.append(time.perf_counter() - t0)
        assert not at.exception
    return out


def figure_numbers() -> tuple[float, int]:
    from dynamics.config import Config
    from dynamics.service import default_service
    from viz.main_figure import figure_json_size, main_figure

    service = default_service()
    traj = service.run(Config())
    analysis = service.analyse(traj)
    main_figure(traj, analysis)  # warm imports
    t0 = time.perf_counter()
    fig = main_figure(traj, analysis)
    build = time.perf_counter() - t0
    return build, figure_json_size(fig)


def main(argv: list[str] | None = None) -> None:
    """Print the browser, server and figure numbers of the Explorer's default config."""
    argparse.ArgumentParser(prog="python -m bench page",
                            description=__doc__.splitlines()[0]).parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="eae_bench_") as cache_dir:
        os.environ["EAE_CACHE_DIR"] = cache_dir
        cold, warm = browser_times(cache_dir)
        server = server_times()
        build, size = figure_numbers()
    print(f"browser, cold (fresh server, empty cache): {cold:6.2f} s")
    print(f"browser, warm reload (median of {len(warm)}): {statistics.median(warm):6.2f} s "
          f"{[round(w, 2) for w in warm]}  target < 1 s")
    print(f"server script run, cached config (median of {len(server)}): "
          f"{statistics.median(server):6.3f} s {[round(s, 3) for s in server]}  target < 0.3 s")
    print(f"figure build without the figure cache: {build:6.3f} s")
    print(f"figure JSON size (default config): {size:,} bytes")


if __name__ == "__main__":
    main()
