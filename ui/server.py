"""The dashboard's ASGI app: Streamlit's `st.App` over `app.py` with the project's own routes,
middleware and a start-up hook (`serve.py` builds it; `streamlit run serve.py` serves it).

Routes under `API` (same origin as the pages, so the player component fetches them):
- `plotly-<bundle>-<version>.min.js`: a Plotly.js bundle (`viz.plotlyjs`: "basic",
  "cartesian" or the pinned `plotly` package's "full" one), gzipped once in memory and cached
  by browsers for a year (the URL changes with the version);
- `fig/<key>`: a figure payload (`viz.payload`) by its content key, from `ui.figures`; an
  unknown key is 404, a payload still being built is waited for (at most `WAIT_S`); sent
  gzip-compressed (compressed once, when built) to browsers that accept it;
- `family/<id>` (POST): start computing an offered family of runs (`ui.family`) — the player
  asks when the visitor first reaches for its scrub slider;
- `edit/<id>` (POST): run a visitor's data edit of the figure on screen (`ui.edits`: the
  edited Config validated as a link's, the run and its figure): the figure's payload (its key
  in the `X-EAE-Key` header), or JSON {"error": …} or {"key": …};
- `warmup`: JSON state of the start-up compilation (`dynamics.warmup`).

The routes reach the server's live state through its runtime (`runtime.current()`: the figure
store) and call `ui.family.start_offered` and `ui.edits.apply` directly. `lifespan` builds the
runtime with its routes mounted (`runtime.start`). Started with plain `streamlit run app.py`
(or under AppTest) none of this exists: `mounted()` is then False and the player gets its
payload inline and Plotly.js from Streamlit's component route.
"""

from __future__ import annotations

import asyncio
import gc
import gzip
import hashlib
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import runtime
from dynamics import warmup as w
from runtime import API, plotly_js_url
from runtime.reaper import malloc_tune
from viz import plotlyjs

# nothing imported here declares a Streamlit component (`ui.player`): this module is imported
# before Streamlit's runtime exists, and a component declared then is never served
from . import edits, figures, hardening
from .family import start_offered
from .paths import APP_DIR, APP_SCRIPT

WAIT_S = 20.0  # longest a payload request waits for a figure being built
EDIT_BODY = 256_000  # bytes of a data edit at most (`ui.edits.MAX_BODY`)


def mounted() -> bool:
    """Whether this process serves the project's routes (started through `serve.py`)."""
    return runtime.current().mounted


@cache
def _plotly_gz(bundle: str) -> tuple[bytes, str]:
    raw = plotlyjs.path_of(bundle).read_bytes()
    return gzip.compress(raw, 6), hashlib.sha256(raw).hexdigest()[:16]


def routes() -> list[Any]:
    """The project's Starlette routes (see the module docstring)."""
    def plotly_js(bundle: str) -> Callable[[Request], Any]:
        async def serve(request: Request) -> Response:
            body, etag = _plotly_gz(bundle)
            if "gzip" not in request.headers.get("accept-encoding", ""):
                return Response(plotlyjs.path_of(bundle).read_bytes(),
                                media_type="text/javascript")
            return Response(body, media_type="text/javascript", headers={
                "Content-Encoding": "gzip", "ETag": f'"{etag}"',
                "Cache-Control": "public, max-age=31536000, immutable"})
        return serve

    async def figure(request: Request) -> Response:
        key = request.path_params["key"]
        if not key.isalnum() or len(key) > 128:
            return Response(status_code=404)
        store = figures.store()
        got = store.shown(key, 0.0)
        if got is None:  # being built (a family member): wait off the event loop
            got = await asyncio.to_thread(store.shown, key, WAIT_S)
        if got is None:
            return Response(status_code=404, headers={"Cache-Control": "no-store"})
        return payload_response(request, got, {"Cache-Control": "private, max-age=3600, immutable"})

    def payload_response(request: Request, got: Any, headers: dict[str, str]) -> Response:
        if got.gz and "gzip" in request.headers.get("accept-encoding", ""):
            # compressed once when built, not by the middleware on every request
            return Response(got.gz, media_type="application/octet-stream",
                            headers={**headers, "Content-Encoding": "gzip"})
        return Response(got.payload, media_type="application/octet-stream", headers=headers)

    async def family(request: Request) -> Response:
        fid = request.path_params["fid"]
        if not fid.isalnum() or len(fid) > 64:
            return Response(status_code=404)
        started = await asyncio.to_thread(start_offered, fid)
        return JSONResponse({"started": bool(started)}, status_code=200 if started else 404,
                            headers={"Cache-Control": "no-store"})

    async def edit(request: Request) -> Response:
        eid = request.path_params["eid"]
        if not eid.isalnum() or len(eid) > 64:
            return Response(status_code=404)
        size = request.headers.get("content-length", "")
        if not size.isdigit():
            return Response(status_code=411)
        if int(size) > EDIT_BODY:
            return JSONResponse({"error": "this edit is too large"}, status_code=413)
        body = await request.body()
        got = await asyncio.to_thread(edits.apply, eid, body[:EDIT_BODY + 1])
        shown = figures.store().shown(got["key"], 0.0) if "key" in got else None
        if shown is not None:  # the figure itself, in the same answer (one round trip)
            return payload_response(request, shown, {"Cache-Control": "no-store",
                                                     "X-EAE-Key": str(got["key"])})
        return JSONResponse(got, headers={"Cache-Control": "no-store"})

    async def warmup(_request: Request) -> Response:
        return JSONResponse(w.state().as_dict(), headers={"Cache-Control": "no-store"})

    return [*(Route(plotly_js_url(b), plotly_js(b)) for b in plotlyjs.FILES),
            Route(f"{API}/fig/{{key}}", figure),
            Route(f"{API}/family/{{fid}}", family, methods=["POST"]),
            Route(f"{API}/edit/{{eid}}", edit, methods=["POST"]),
            Route(f"{API}/warmup", warmup)]


def middleware() -> list[Any]:
    """The project's ASGI middleware (hardening: `ui.hardening`)."""
    return list(hardening.middleware())


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """Server start: build the runtime with its routes mounted (`runtime.start`) and compile
    (or load) the kernels in a thread, so the first visitor does not wait for the JIT (pages
    show `dynamics.warmup` meanwhile)."""
    runtime.start()
    malloc_tune()  # freed large blocks go back to the OS (RSS follows the memory in use)
    w.begin()  # pages show the start-up message from now on
    threading.Thread(target=_warm, name="eae-warmup", daemon=True).start()
    yield


def _warm() -> None:
    """The kernels, before anyone asks (the first visitor's imports are this module's: the
    figures, the player's payload); then everything imported is moved out of the garbage
    collector's sight (`gc.freeze`: the modules live as long as the server, and every
    collection would walk them again)."""
    w.warm_kernels()
    gc.collect()
    gc.freeze()


__all__ = ["API", "APP_DIR", "APP_SCRIPT", "lifespan", "middleware", "mounted", "plotly_js_url",
           "routes"]
