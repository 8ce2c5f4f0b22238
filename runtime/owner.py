"""The one owner of the server's live state: `Runtime`.

Everything a running dashboard keeps between page runs and shares between sessions lives on
one `Runtime`, built once per process: by `serve.py`'s lifespan (`start()`: the project's
routes are mounted) or, under plain `streamlit run app.py`, AppTest, the CLI and the tests, on
first use (`current()`: no routes, `mounted` False). Pages and `ui/` reach it through
`current()` only; the routes (`ui.server`) reach it the same way at request time.

It holds: the service (`dynamics.service.Service`: caches and flights, its slots taken from
the session-fair queue, `runtime.queue.FairQueue`), the speculative runs
(`runtime.speculation.Speculator`), the figure store and its build locks (`runtime.store`),
admission (`turns`: the interpreter-bound work in arrival order; `pages`: page runs a few at a
time, with the `costly` lane; `runtime.admission`), the boards of scrub families, neighbours
and data edits, the uploads being received and the last PNG exports (`runtime.boards`), the
reaper of ended sessions (`runtime.reaper`), the pages app.py registered and whether the
routes are mounted.
"""

from __future__ import annotations

import threading
from typing import Any

import plotly

from dynamics.admission import simulation_slots
from dynamics.limits import Limits, Settings, get_limits, get_settings
from dynamics.service import Service

from .admission import Slots, Turns
from .boards import EditBoard, FamilyBoard, PrefetchBoard, SmallLru, UploadLedger
from .queue import FairQueue
from .reaper import Reaper
from .speculation import Speculator
from .store import MAX_MB, BuildLocks, FigureStore

API = "/api/eae"  # the project's routes (`ui.server`) live under this path
PNG_EXPORTS = 8  # PNG exports kept (a browser renders each)


def plotly_js_url(bundle: str = "full") -> str:
    """Where pages load the Plotly.js `bundle` from (relative to the site root)."""
    return f"{API}/plotly-{bundle}-{plotly.__version__}.min.js"


class Runtime:
    """The server's live state (see the module docstring)."""

    def __init__(self, *, mounted: bool = False, service: Service | None = None,
                 limits: Limits | None = None, settings: Settings | None = None) -> None:
        limits = limits if limits is not None else get_limits()
        settings = settings if settings is not None else get_settings()
        self.mounted = mounted  # the project's routes are served (`serve.py`)
        # the server's service: its slots are the session-fair queue (the library's
        # `default_service()` is for processes without a runtime: the CLI, Dask workers)
        self.service = service if service is not None else Service(
            limits=limits, admission=FairQueue(simulation_slots(limits.max_concurrent)))
        self.speculation = Speculator(self.service)
        # the figure cache is a part of the memory cache: at most half of it
        self.figures = FigureStore(max_mb=min(MAX_MB, limits.memory_cache_mb / 2))
        self.build_locks = BuildLocks()
        self.turns = Turns()
        self.costly = Slots(1)  # the lane of page runs with costly work (`Slots.divert`)
        self.pages = Slots(settings.page_runs, lane=self.costly)
        self.families = FamilyBoard()
        self.prefetch = PrefetchBoard()
        self.edits = EditBoard()
        self.reaper = Reaper()
        self.uploads = UploadLedger()  # uploads being received, per session (`ui.hardening`)
        self.pngs = SmallLru(PNG_EXPORTS)  # the last PNG exports (`ui.downloads`)
        self.registered: dict[str, Any] = {}  # the `st.Page`s app.py registered, by URL path


class _Home:
    """Where the process's one `Runtime` is kept (the only module-level state of the
    dashboard)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runtime: Runtime | None = None


_HOME = _Home()


def current() -> Runtime:
    """The process's runtime: the one `start()` built, else one built now (no routes)."""
    with _HOME.lock:
        if _HOME.runtime is None:
            _HOME.runtime = Runtime()
        return _HOME.runtime


def start() -> Runtime:
    """Build the server's runtime with its routes mounted (`serve.py`'s lifespan); a runtime
    something already built (an import that used it first) is marked mounted."""
    with _HOME.lock:
        if _HOME.runtime is None:
            _HOME.runtime = Runtime(mounted=True)
        _HOME.runtime.mounted = True
        return _HOME.runtime


__all__ = ["API", "Runtime", "current", "plotly_js_url", "start"]
