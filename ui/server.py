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

Started with plain `streamlit run app.py` (or under AppTest) none of this exists: `mounted()` is
then False and the player gets its payload inline and Plotly.js from Streamlit's component route.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

import plotly

from viz import plotlyjs

_DASHBOARD = Path(__file__).resolve().parent / "dashboard"  # in an installed copy (pyproject)
#: The dashboard's root files (app.py, serve.py, assets/, .streamlit/config.toml): the checkout's
#: root, or `ui/dashboard/` where the wheel puts them.
APP_DIR = _DASHBOARD if (_DASHBOARD / "app.py").is_file() else Path(__file__).resolve().parents[1]
APP_SCRIPT = APP_DIR / "app.py"
API = "/api/eae"
WAIT_S = 20.0  # longest a payload request waits for a figure being built
EDIT_BODY = 256_000  # bytes of a data edit at most (`ui.edits.MAX_BODY`)

_state: dict[str, Any] = {"mounted": False}
# `ui.figures` registers how to find a payload by key: (key) -> bytes | None, and a waiter
_payloads: dict[str, Callable[..., Any]] = {}


def mounted() -> bool:
    """Whether this process serves the project's routes (started through `serve.py`)."""
    return bool(_state["mounted"])


def plotly_js_url(bundle: str = "full") -> str:
    """Where pages load the Plotly.js `bundle` from (relative to the site root)."""
    return f"{API}/plotly-{bundle}-{plotly.__version__}.min.js"


def register_family_start(start: Callable[[str], bool]) -> None:
    """Let the `family/<id>` route start an offered family (`ui.family.start_offered`)."""
    _payloads["family"] = start


def register_edit(apply: Callable[[str, bytes], dict[str, Any]]) -> None:
    """Let the `edit/<id>` route run a visitor's data edit (`ui.edits.apply`)."""
    _payloads["edit"] = apply


def register_payloads(shown: Callable[[str, float], Any]) -> None:
    """Let the `fig/<key>` route answer from a figure store (`ui.figures.STORE.shown`:
    (key, seconds to wait) → an object with `payload` and `gz` bytes, or None)."""
    _payloads["shown"] = shown


@cache
def _plotly_gz(bundle: str) -> tuple[bytes, str]:
    raw = plotlyjs.path_of(bundle).read_bytes()
    return gzip.compress(raw, 6), hashlib.sha256(raw).hexdigest()[:16]


def routes() -> list[Any]:
    """The project's Starlette routes (see the module docstring)."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

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
        if not key.isalnum() or len(key) > 128 or "shown" not in _payloads:
            return Response(status_code=404)
        got = _payloads["shown"](key, 0.0)
        if got is None:  # being built (a family member): wait off the event loop
            got = await asyncio.to_thread(_payloads["shown"], key, WAIT_S)
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
        if not fid.isalnum() or len(fid) > 64 or "family" not in _payloads:
            return Response(status_code=404)
        started = await asyncio.to_thread(_payloads["family"], fid)
        return JSONResponse({"started": bool(started)}, status_code=200 if started else 404,
                            headers={"Cache-Control": "no-store"})

    async def edit(request: Request) -> Response:
        eid = request.path_params["eid"]
        if not eid.isalnum() or len(eid) > 64 or "edit" not in _payloads:
            return Response(status_code=404)
        size = request.headers.get("content-length", "")
        if not size.isdigit():
            return Response(status_code=411)
        if int(size) > EDIT_BODY:
            return JSONResponse({"error": "this edit is too large"}, status_code=413)
        body = await request.body()
        got = await asyncio.to_thread(_payloads["edit"], eid, body[:EDIT_BODY + 1])
        shown = _payloads["shown"](got["key"], 0.0) if "key" in got and "shown" in _payloads \
            else None
        if shown is not None:  # the figure itself, in the same answer (one round trip)
            return payload_response(request, shown, {"Cache-Control": "no-store",
                                                     "X-EAE-Key": str(got["key"])})
        return JSONResponse(got, headers={"Cache-Control": "no-store"})

    async def warmup(_request: Request) -> Response:
        from dynamics import warmup as w
        return JSONResponse(w.state().as_dict(), headers={"Cache-Control": "no-store"})

    return [*(Route(plotly_js_url(b), plotly_js(b)) for b in plotlyjs.FILES),
            Route(f"{API}/fig/{{key}}", figure),
            Route(f"{API}/family/{{fid}}", family, methods=["POST"]),
            Route(f"{API}/edit/{{eid}}", edit, methods=["POST"]),
            Route(f"{API}/warmup", warmup)]


def middleware() -> list[Any]:
    """The project's ASGI middleware (hardening: `ui.hardening`, when present)."""
    try:
        from . import hardening  # type: ignore[attr-defined]
    except ImportError:
        return []
    return list(hardening.middleware())


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """Server start: mark the routes mounted and compile (or load) the kernels in a thread, so
    the first visitor does not wait for the JIT (pages show `dynamics.warmup` meanwhile)."""
    from dynamics import warmup as w

    from .sessions import malloc_tune

    _state["mounted"] = True
    malloc_tune()  # freed large blocks go back to the OS (RSS follows the memory in use)
    w.begin()  # pages show the start-up message from now on
    threading.Thread(target=_warm, name="eae-warmup", daemon=True).start()
    yield


def _warm() -> None:
    """The first visitor's imports and the kernels, before anyone asks; then everything
    imported is moved out of the garbage collector's sight (`gc.freeze`: the modules live as
    long as the server, and every collection would walk them again)."""
    import gc

    import viz.main_figure
    import viz.payload  # noqa: F401
    from dynamics import warmup as w
    w.warm_kernels()
    gc.collect()
    gc.freeze()


__all__ = ["API", "APP_DIR", "APP_SCRIPT", "lifespan", "middleware", "mounted", "plotly_js_url",
           "register_payloads", "routes"]
