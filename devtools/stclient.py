"""A protocol-level Streamlit session: what a browser tab says to the server, without a browser.

A `Session` opens ``ws://host/_stcore/stream`` as Streamlit's frontend does (subprotocol
``streamlit``, the page's Origin), sends the first rerun with a query string and a page (its URL
path: ``""`` is the app's default page), receives the ForwardMsgs (``new_session``,
``navigation``, deltas, ``page_info_changed``, ``script_finished``, ``ref_hash`` references to
cached messages, ``auto_rerun`` for fragments) and keeps the element tree the frontend would
draw, keyed by delta path: elements of an earlier run not sent again are dropped when a full
run finishes, as the frontend drops stale nodes. Widgets are found by label or key; changing
one reruns the script with every widget's state, as the frontend's widget manager sends them
(each widget's value as drawn, updated when the server sets it). The figure player (a custom
component whose JSON args carry ``fig_key`` and ``src``) is detected and its payload fetched
over HTTP as the player's iframe would; with ``family=True`` the session also reaches for
the scrub slider, as a visitor does: it asks the server to compute the offered family (the
player's POST to the family's ``start`` address) and fetches its other runs, two at a time,
nearest first (``family=False``: a visitor who only watches, whose player fetches no family);
``st.plotly_chart`` elements are charts too (their spec arrives inline).

No rendering, no JavaScript: dozens of sessions run from one process (one asyncio event loop,
HTTP fetches in a thread pool) while the server keeps the machine's cores. The protocol is
that of the pinned Streamlit (1.67: ``streamlit.proto``; websockets for the socket).

Two faces: `AsyncSession` (coroutines, for benchmarks driving many sessions on one loop) and
`Session`, a blocking facade running the same code on a shared background loop (tests)::

    with Session.open(base_url, query="model.width=40", page="") as s:
        s.wait_idle()
        fig = s.figures()[0]               # Chart: key, src, payload bytes, times
        s.set_widget("width m", 60)        # label, or key ("eae.model.width")
        new = s.wait_chart(known={fig.key})
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import hashlib
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

T = TypeVar("T")

#: The player component's name ends with this (`ui.player` declares "eae_player").
PLAYER_COMPONENT = "eae_player"
#: The cookie holding Streamlit's XSRF token (set by the health endpoint).
XSRF_COOKIE = "_streamlit_xsrf"
#: What Chromium sends; the server may compress a response accordingly.
ACCEPT_ENCODING = "gzip, deflate"
#: HTTP fetches run here (urllib is blocking); sized so that 30+ sessions fetching at once
#: never queue behind each other on the client side.
HTTP_POOL_WORKERS = 96
#: Cached ForwardMsgs kept per session (by hash) for the server's ``ref_hash`` references.
MESSAGE_CACHE_ENTRIES = 2000
#: The family fetches per player: at most this many at once, each retried this many times
#: with this back-off (as the player's JavaScript does).
FAMILY_PARALLEL = 2
FAMILY_TRIES = 4
FAMILY_RETRY_S = 3.0

_FINISHED_FULL = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR)
_http_pool: concurrent.futures.ThreadPoolExecutor | None = None
_http_lock = threading.Lock()


class ClientError(RuntimeError):
    """The session could not do what was asked (no such widget, a value it does not take,
    the server closed the socket, a timeout)."""


# ----------------------------------------------------------------------------- HTTP
@dataclass(frozen=True)
class HttpResult:
    """One request: status, the body as the browser sees it (decoded), bytes on the wire,
    time, and the cookies the response set (name → value)."""

    status: int
    body: bytes
    wire_bytes: int
    seconds: float
    encoding: str = ""
    cookies: dict[str, str] = field(default_factory=dict)


def http_request(url: str, timeout: float = 60.0, headers: dict[str, str] | None = None,
                 method: str = "GET", data: bytes | None = None) -> HttpResult:
    """A request as a browser makes it (Accept-Encoding gzip/deflate, decoded here). A non-2xx
    status is returned, not raised."""
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Accept-Encoding": ACCEPT_ENCODING,
                                          "User-Agent": "eae-stclient", **(headers or {})})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw, status, hdrs = resp.read(), resp.status, resp.headers
    except urllib.error.HTTPError as e:
        raw, status, hdrs = e.read(), e.code, e.headers
    enc = hdrs.get("Content-Encoding", "")
    body = raw
    if enc == "gzip":
        body = gzip.decompress(raw)
    elif enc == "deflate":
        body = zlib.decompress(raw)
    cookies = {}
    for line in hdrs.get_all("Set-Cookie") or []:
        name, _, rest = line.partition("=")
        cookies[name.strip()] = rest.split(";", 1)[0].strip()
    return HttpResult(status, body, len(raw), time.monotonic() - t0, enc, cookies)


def http_get(url: str, timeout: float = 60.0, headers: dict[str, str] | None = None) -> HttpResult:
    """GET `url` (see `http_request`)."""
    return http_request(url, timeout, headers)


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _http_pool
    with _http_lock:
        if _http_pool is None:
            _http_pool = concurrent.futures.ThreadPoolExecutor(HTTP_POOL_WORKERS,
                                                               thread_name_prefix="stclient-http")
        return _http_pool


async def aget(url: str, timeout: float = 60.0, **kw: Any) -> HttpResult:
    """`http_request` off the event loop (keywords: headers, method, data)."""
    return await asyncio.get_running_loop().run_in_executor(
        _pool(), lambda: http_request(url, timeout, **kw))


def multipart(field_name: str, filename: str, data: bytes,
              mime: str = "application/octet-stream") -> tuple[bytes, str]:
    """A multipart/form-data body with one file, and its Content-Type."""
    boundary = "----eae" + uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field_name}\"; "
            f"filename=\"{filename}\"\r\nContent-Type: {mime}\r\n\r\n").encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), \
        f"multipart/form-data; boundary={boundary}"


# ----------------------------------------------------------------------------- elements
def _label(proto: Any) -> str:
    return str(getattr(proto, "label", "") or "")


def user_key(element_id: str) -> str | None:
    """The key a page gave a widget (Streamlit element ids are ``$$ID-<hash>-<key>``)."""
    if not element_id.startswith("$$ID-"):
        return None
    key = element_id.split("-", 2)[-1]
    return None if key == "None" else key


@dataclass(frozen=True)
class Widget:
    """A widget as drawn: its element type (`kind`, e.g. "number_input"), id, label, user
    key, delta path, the widget's proto (options, bounds, value as the server drew it) and
    the state this session holds for it (what the user set since), if any."""

    kind: str
    id: str
    label: str
    key: str | None
    path: tuple[int, ...]
    proto: Any
    held: WidgetState | None = None

    @property
    def options(self) -> list[str]:
        """The options as shown (selectbox, radio, select_slider, multiselect, pills)."""
        opts = getattr(self.proto, "options", None)
        if opts is None:
            return []
        return [getattr(o, "content", o) for o in opts]

    def value(self) -> Any:
        """The value the widget shows: the session's state for it, else the one the server
        drew (None: empty, or a kind this client does not read)."""
        if self.held is not None:
            return _state_value(self.held, self.kind)
        return self.drawn()

    def drawn(self) -> Any:
        """The value the server drew the widget with."""
        p, k = self.proto, self.kind
        if k in ("number_input", "text_input", "text_area"):
            if p.set_value and p.HasField("value"):
                return p.value
            return p.default if p.HasField("default") else None
        if k == "checkbox":
            return p.value if p.set_value else p.default
        if k in ("selectbox", "radio"):
            if p.set_value:
                return p.raw_value if p.HasField("raw_value") else None
            return p.options[p.default] if p.HasField("default") and p.options else None
        if k == "slider":
            if p.options:  # select_slider: formatted options
                vals = list(p.raw_value) if p.set_value else [p.options[int(i)]
                                                               for i in p.default]
            else:
                vals = list(p.value) if p.set_value else list(p.default)
            return vals[0] if len(vals) == 1 else tuple(vals)
        if k in ("multiselect", "button_group"):
            if p.set_value:
                return list(p.raw_values)
            return [self.options[i] for i in p.default]
        return None

    def state(self, value: Any) -> WidgetState:
        """The WidgetState the frontend sends for this widget showing `value`."""
        ws = WidgetState(id=self.id)
        k = self.kind
        if k == "number_input":
            if value is not None:
                ws.double_value = float(value)
        elif k in ("text_input", "text_area"):
            if value is not None:
                ws.string_value = str(value)
        elif k == "checkbox":
            ws.bool_value = bool(value)
        elif k in ("selectbox", "radio"):
            if value is not None:
                ws.string_value = self._option(value)
        elif k == "slider":
            vals = list(value) if isinstance(value, (list, tuple)) else [value]
            if self.proto.options:
                ws.string_array_value.data.extend(self._option(v) for v in vals)
            else:
                ws.double_array_value.data.extend(float(v) for v in vals)
        elif k in ("multiselect", "button_group"):
            vals = list(value) if isinstance(value, (list, tuple)) else [value]
            ws.string_array_value.data.extend(self._option(v) for v in vals)
        elif k in ("button", "download_button"):
            ws.trigger_value = True
        elif k == "component_instance":
            ws.json_value = json.dumps(value)
        else:
            raise ClientError(f"cannot set a {k} widget ({self.label or self.id})")
        return ws

    def _option(self, value: Any) -> str:
        opts = self.options
        text = value if isinstance(value, str) else str(value)
        if text in opts or getattr(self.proto, "accept_new_options", False):
            return text
        raise ClientError(f"{self.label or self.id!r} has no option {value!r}; options: "
                          f"{opts[:20]}")


def _state_value(ws: WidgetState, kind: str) -> Any:
    which = ws.WhichOneof("value")
    if which is None:
        return None
    if which in ("string_array_value", "double_array_value"):
        vals = list(getattr(ws, which).data)
        return vals[0] if kind == "slider" and len(vals) == 1 else (
            tuple(vals) if kind == "slider" else vals)
    if which == "json_value":
        return json.loads(ws.json_value)
    return getattr(ws, which)


_WIDGET_KINDS = {"number_input", "text_input", "text_area", "checkbox", "selectbox", "radio",
                 "slider", "multiselect", "button_group", "button", "download_button",
                 "color_picker", "date_input", "time_input", "file_uploader", "data_editor",
                 "arrow_data_frame", "dataframe", "chat_input", "camera_input", "audio_input"}
# widgets whose drawn value this client can state (the others are left to the server's copy)
_STATEFUL = {"number_input", "text_input", "text_area", "checkbox", "selectbox", "radio",
             "slider", "multiselect", "button_group"}


@dataclass(frozen=True)
class Player:
    """A figure player element: its figure key, where its payload is (`src`, a path on the
    server, or None when the payload travels inline), whether it is drawn greyed (`stale`),
    and its scrub family's sources."""

    fig_key: str
    src: str | None
    stale: bool
    family: tuple[str, ...]
    path: tuple[int, ...]
    args: dict[str, Any]
    component: str = ""


@dataclass
class Chart:
    """A chart this session received: a player's figure (`kind` "player", `key` its fig_key,
    `payload` fetched from `src`) or an `st.plotly_chart` ("plotly", `key` a hash of its spec,
    `spec` the JSON). Times are `time.monotonic()`: element arrived, chart ready (payload
    fetched, or the element itself for plotly)."""

    kind: str
    key: str
    t_element: float
    src: str | None = None
    t_ready: float | None = None
    payload: bytes | None = None
    wire_bytes: int = 0
    spec: str | None = None
    error: str | None = None
    stale: bool = False

    @property
    def ready(self) -> bool:
        return self.t_ready is not None or self.error is not None


@dataclass
class _Node:
    kind: str  # element type, or "block:<type>"
    proto: Any  # the Element or Block proto
    run: int
    fragment: str


@dataclass
class Stats:
    """What one session moved: ForwardMsgs and their bytes, reruns sent, HTTP fetches."""

    messages: int = 0
    message_bytes: int = 0
    reruns: int = 0
    fetches: int = 0
    fetch_bytes: int = 0
    fetch_errors: list[str] = field(default_factory=list)
    family_fetched: int = 0
    #: per family fetched: {"start": monotonic s, "n": members asked for, "arrivals": [s]}
    families: list[dict[str, Any]] = field(default_factory=list)


# ----------------------------------------------------------------------------- session
class AsyncSession:
    """One Streamlit session over the websocket protocol (see the module docstring).

    Create it with `await AsyncSession.open(...)`; all methods run on that event loop."""

    def __init__(self, base_url: str, *, fetch: bool = True, family: bool = True,
                 assets: bool = False, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.fetch, self.family, self.assets, self.timeout = fetch, family, assets, timeout
        self.query_string = ""
        self.page = ""
        self.page_hash = ""
        self.pages: dict[str, str] = {}  # url path -> page script hash
        self.session_id = ""
        self.nodes: dict[tuple[int, ...], _Node] = {}
        self.charts: dict[str, Chart] = {}
        self.exceptions: list[str] = []
        self.stats = Stats()
        self.opened_at = 0.0
        self.closed = False
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._run = 0
        self._run_fragments: tuple[str, ...] = ()
        self._running = False
        self._finished = True  # a full run has finished since the last rerun request
        self._states: dict[str, WidgetState] = {}
        self._cache: OrderedDict[str, ForwardMsg] = OrderedDict()
        self._changed = asyncio.Event()
        self._auto: dict[str, asyncio.Task[None]] = {}
        self._fetched_assets = False
        self._families: set[str] = set()
        self._error: BaseException | None = None
        self.cookies: dict[str, str] = {}
        self._file_urls: dict[str, Any] = {}
        self.edit_url: str | None = None  # the figure on screen's data-edit route, if any

    # ------------------------------------------------------------------ opening, closing
    @classmethod
    async def open(cls, base_url: str, query: str = "", page: str = "",
                   **options: Any) -> AsyncSession:
        """Connect and send the first rerun for `page` (URL path, "" = default page) with
        `query` (no leading "?"); returns at once (`wait_idle`, `wait_chart` to wait)."""
        s = cls(base_url, **options)
        await s._connect(query.lstrip("?"), page.strip("/"))
        return s

    async def _connect(self, query: str, page: str) -> None:
        self.opened_at = time.monotonic()
        # the frontend asks these before it opens the socket; the health answer sets the
        # XSRF cookie, whose value the socket's subprotocol and uploads carry
        got = await aget(f"{self.base_url}/_stcore/health", self.timeout)
        self.cookies.update(got.cookies)
        await aget(f"{self.base_url}/_stcore/host-config", self.timeout,
                   headers=self._cookie_header())
        parts = urllib.parse.urlsplit(self.base_url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        token = self.cookies.get(XSRF_COOKIE, "PLACEHOLDER_AUTH_TOKEN")
        self._ws = await connect(f"{scheme}://{parts.netloc}{parts.path}/_stcore/stream",
                                 subprotocols=["streamlit", token],  # type: ignore[list-item]
                                 origin=f"{parts.scheme}://{parts.netloc}",  # type: ignore[arg-type]
                                 additional_headers=self._cookie_header(),
                                 max_size=None, open_timeout=self.timeout,
                                 # a browser never pings; it answers the server's pings (the
                                 # library does that by itself)
                                 ping_interval=None,
                                 user_agent_header="eae-stclient")
        self._reader = asyncio.create_task(self._read(), name="stclient-read")
        self.query_string, self.page = query, page
        await self._rerun(page_name=page)

    def _cookie_header(self) -> dict[str, str]:
        if not self.cookies:
            return {}
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}

    async def close(self) -> None:
        """Close the socket (the server ends the session) and stop this session's tasks."""
        if self.closed:
            return
        self.closed = True
        for t in [*self._tasks, *self._auto.values()]:
            t.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass
        self._changed.set()

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ sending
    def _client_state(self, fragment: str = "", auto: bool = False,
                      page_name: str | None = None) -> ClientState:
        cs = ClientState(query_string=self.query_string, page_script_hash=self.page_hash,
                         page_name=self.page if page_name is None else page_name,
                         fragment_id=fragment, is_auto_rerun=auto)
        cs.widget_states.SetInParent()
        cs.widget_states.widgets.extend(self._states.values())
        cs.cached_message_hashes.extend(self._cache.keys())
        ci = cs.context_info
        ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
        ci.url = f"{self.base_url}/{self.page}" + (f"?{self.query_string}"
                                                   if self.query_string else "")
        ci.is_embedded, ci.color_scheme = False, "light"
        return cs

    async def _rerun(self, triggers: Iterable[WidgetState] = (), fragment: str = "",
                     auto: bool = False, page_name: str | None = None) -> None:
        if self._ws is None or self.closed:
            raise ClientError("the session is closed")
        msg = BackMsg()
        msg.rerun_script.CopyFrom(self._client_state(fragment, auto, page_name))
        msg.rerun_script.widget_states.widgets.extend(triggers)
        if not fragment:
            self._finished = False
        self.stats.reruns += 1
        await self._send(msg)

    async def _send(self, msg: BackMsg) -> None:
        assert self._ws is not None
        try:
            await self._ws.send(msg.SerializeToString())
        except ConnectionClosed as e:
            raise ClientError(f"the server closed the session: {e}") from e

    async def rerun(self) -> None:
        """Rerun the script with the widgets as they are (the frontend's "Rerun")."""
        await self._rerun()

    async def set_widget(self, name: str, value: Any) -> None:
        """Give widget `name` (label or key, see `widget`) the value `value` and rerun, as a
        user's change does. A button (or `click`) is pressed whatever `value` is."""
        w = self.widget(name)
        ws = w.state(value)
        if w.kind in ("button", "download_button"):
            await self._rerun(triggers=[ws])
            return
        self._states[w.id] = ws
        await self._rerun()

    async def click(self, name: str) -> None:
        """Press button `name` (label or key)."""
        await self.set_widget(name, True)

    async def upload(self, name: str, files: list[tuple[str, bytes]],
                     mime: str = "application/octet-stream") -> None:
        """Put `files` ((file name, bytes) each) into the file uploader `name` (label or key)
        and rerun, as the frontend does: it asks the server for upload URLs, PUTs each file
        (multipart, with the XSRF token), then sends the uploader's state. ClientError if the
        server refuses a file (its status and message)."""
        w = self.widget(name)
        if w.kind != "file_uploader":
            raise ClientError(f"{name!r} is a {w.kind}, not a file uploader")
        if self._ws is None or self.closed:
            raise ClientError("the session is closed")
        rid = uuid.uuid4().hex
        msg = BackMsg()
        msg.file_urls_request.request_id = rid
        msg.file_urls_request.session_id = self.session_id
        msg.file_urls_request.file_names.extend(n for n, _ in files)
        await self._send(msg)
        await self.until(lambda: rid in self._file_urls, None, "upload URLs")
        resp = self._file_urls.pop(rid)
        if resp.error_msg:
            raise ClientError(f"upload refused: {resp.error_msg}")
        ws = WidgetState(id=w.id)
        state = ws.file_uploader_state_value
        for (fname, data), urls in zip(files, resp.file_urls, strict=True):
            body, ctype = multipart("file", fname, data, mime)
            got = await aget(self.base_url + urls.upload_url, self.timeout, method="PUT",
                             data=body, headers={"Content-Type": ctype,
                                                 "X-Xsrftoken": self.cookies.get(XSRF_COOKIE, ""),
                                                 **self._cookie_header()})
            self.stats.fetches += 1
            if got.status not in (200, 204):
                raise ClientError(f"upload of {fname!r}: {got.status} "
                                  f"{got.body[:200].decode(errors='replace')}")
            info = state.uploaded_file_info.add()
            info.file_id, info.name, info.size = urls.file_id, fname, len(data)
            info.file_urls.CopyFrom(urls)
        self._states[w.id] = ws
        await self._rerun()

    async def goto(self, page: str, query: str = "") -> None:
        """Switch to the page at URL path `page` (as the sidebar's navigation does)."""
        page = page.strip("/")
        if page not in self.pages:
            raise ClientError(f"no page {page!r}; pages: {sorted(self.pages)}")
        self.page, self.page_hash, self.query_string = page, self.pages[page], query.lstrip("?")
        await self._rerun(page_name=page)

    # ------------------------------------------------------------------ receiving
    async def _read(self) -> None:
        assert self._ws is not None
        try:
            async for raw in self._ws:
                if isinstance(raw, str):
                    continue
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                self.stats.messages += 1
                self.stats.message_bytes += len(raw)
                self._handle(msg)
                self._changed.set()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the socket broke: waiters see it
            self._error = e
        finally:
            if not self.closed:
                self._error = self._error or ClientError("the server closed the session")
            self._changed.set()

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            cached = self._cache.get(msg.ref_hash)
            if cached is None:
                self.exceptions.append(f"reference to an unknown cached message {msg.ref_hash}")
                return
            full = ForwardMsg()
            full.CopyFrom(cached)
            full.metadata.CopyFrom(msg.metadata)
            msg, kind = full, full.WhichOneof("type")
        elif msg.metadata.cacheable and msg.hash:
            self._cache[msg.hash] = msg
            while len(self._cache) > MESSAGE_CACHE_ENTRIES:
                self._cache.popitem(last=False)
        if kind == "new_session":
            self._new_run(msg)
        elif kind == "navigation":
            self.pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
            self.page_hash = msg.navigation.page_script_hash or self.page_hash
            for path, h in self.pages.items():
                if h == self.page_hash:
                    self.page = path
        elif kind == "file_urls_response":
            self._file_urls[msg.file_urls_response.response_id] = msg.file_urls_response
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "delta":
            self._delta(msg)
        elif kind == "script_finished":
            self._script_finished(msg)
        elif kind == "session_status_changed":
            self._running = msg.session_status_changed.script_is_running
        elif kind == "auto_rerun":
            self._auto_rerun(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            t = self._auto.pop(msg.stop_auto_rerun.fragment_id, None)
            if t is not None:
                t.cancel()

    def _new_run(self, msg: ForwardMsg) -> None:
        ns = msg.new_session
        if ns.HasField("initialize"):
            self.session_id = ns.initialize.session_id
        self._run += 1
        self._run_fragments = tuple(msg.metadata.run.fragment_ids)
        self._running = True
        if ns.page_script_hash:
            self.page_hash = ns.page_script_hash
        if not self._run_fragments:  # a full run: the fragments' timers start again
            for t in self._auto.values():
                t.cancel()
            self._auto.clear()

    def _delta(self, msg: ForwardMsg) -> None:
        path = tuple(msg.metadata.delta_path)
        d = msg.delta
        dk = d.WhichOneof("type")
        if dk == "new_element":
            el = d.new_element
            ek = el.WhichOneof("type") or ""
            self._drop_below(path)
            self.nodes[path] = _Node(ek, el, self._run, d.fragment_id)
            if ek == "exception":
                self.exceptions.append(f"{el.exception.type}: {el.exception.message}"[:500])
            elif ek == "component_instance":
                self._component(path, el.component_instance)
            elif ek == "plotly_chart":
                self._plotly(el.plotly_chart)
            self._seed_state(ek, path, el)
        elif dk == "add_block":
            bk = "block:" + (d.add_block.WhichOneof("type") or "")
            old = self.nodes.get(path)
            if old is None or old.kind != bk:  # same block type: the frontend keeps children
                self._drop_below(path)
            self.nodes[path] = _Node(bk, d.add_block, self._run, d.fragment_id)

    def _drop_below(self, path: tuple[int, ...]) -> None:
        n = len(path)
        for p in [p for p in self.nodes if len(p) > n and p[:n] == path]:
            del self.nodes[p]

    def _script_finished(self, msg: ForwardMsg) -> None:
        status = msg.script_finished
        frags = tuple(msg.metadata.run.fragment_ids) or self._run_fragments
        if status in _FINISHED_FULL and not frags:
            stale = [p for p, nd in self.nodes.items() if nd.run != self._run]
            for p in stale:
                self.nodes.pop(p, None)
            active = {w.id for w in self.widgets()}
            self._states = {k: v for k, v in self._states.items() if k in active}
            self._finished = True
            self._running = False
        elif status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY or frags:
            for p in [p for p, nd in self.nodes.items()
                      if nd.fragment in frags and nd.run != self._run]:
                self.nodes.pop(p, None)
            self._running = False

    def _seed_state(self, kind: str, path: tuple[int, ...], el: Any) -> None:
        """As a drawn widget does in the frontend: its value enters the widget manager when
        first drawn, and again whenever the server sets it."""
        if kind not in _STATEFUL:
            return
        w = self._widget_at(path, kind, el)
        if w is None or (w.id in self._states and not getattr(w.proto, "set_value", False)):
            return
        value = w.drawn()
        if value is None:
            self._states.pop(w.id, None)
            return
        try:
            self._states[w.id] = w.state(value)
        except ClientError:
            pass

    def _component(self, path: tuple[int, ...], ci: Any) -> None:
        if not ci.component_name.endswith(PLAYER_COMPONENT):
            return
        p = _player(path, ci)
        if p is None or p.stale:
            return
        if isinstance(p.args.get("edit"), str):  # where this figure's data edits go
            self.edit_url = p.args["edit"]
        if p.fig_key not in self.charts:
            self.charts[p.fig_key] = Chart("player", p.fig_key, time.monotonic(), src=p.src)
            if self.fetch and p.src:
                self._spawn(self._fetch_chart(self.charts[p.fig_key], p))
            elif p.src is None:
                self.charts[p.fig_key].t_ready = time.monotonic()
        elif self.fetch and self.family and p.family and self.charts[p.fig_key].ready:
            self._start_family(p)

    def _plotly(self, pc: Any) -> None:
        spec = pc.spec or ""
        key = "plotly-" + hashlib.sha256(spec.encode()).hexdigest()[:20]
        if key not in self.charts:
            now = time.monotonic()
            self.charts[key] = Chart("plotly", key, now, t_ready=now, spec=spec)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fetch_chart(self, chart: Chart, player: Player) -> None:
        try:
            if self.assets and not self._fetched_assets:
                self._fetched_assets = True
                await self._fetch_assets(player)
            assert chart.src is not None
            got = await aget(self.base_url + chart.src, self.timeout)
            self.stats.fetches += 1
            self.stats.fetch_bytes += got.wire_bytes
            if got.status != 200 or not got.body.startswith(b"EAEP"):
                chart.error = f"GET {chart.src}: {got.status}"
                self.stats.fetch_errors.append(chart.error)
            else:
                chart.payload, chart.wire_bytes = got.body, got.wire_bytes
                chart.t_ready = time.monotonic()
        except Exception as e:
            chart.error = f"GET {chart.src}: {e}"
            self.stats.fetch_errors.append(chart.error)
        finally:
            self._changed.set()
        if self.family and player.family and chart.payload is not None:
            self._start_family(player)

    async def _fetch_assets(self, player: Player) -> None:
        """The player iframe's page, its scripts and style, and Plotly.js: once per session
        (a browser's first visit; later ones come from its cache)."""
        base = f"{self.base_url}/component/{player.component}/"
        urls = [base + f for f in ("index.html", "player.css", "player.js", "component.js")]
        plotly_src = player.args.get("plotly_src")
        if isinstance(plotly_src, str):
            urls.append(self.base_url + plotly_src if plotly_src.startswith("/") else
                        urllib.parse.urljoin(base, plotly_src))
        for got in await asyncio.gather(*(aget(u, self.timeout) for u in urls)):
            self.stats.fetches += 1
            self.stats.fetch_bytes += got.wire_bytes
            if got.status != 200:
                self.stats.fetch_errors.append(f"asset: {got.status}")

    async def post_edit(self, fields: dict[str, Any]) -> HttpResult:
        """POST a data edit of the figure on screen, as the player does while a point is
        dragged (`ui.edits`): its answer is the new figure's payload (or JSON: an error)."""
        if self.edit_url is None:
            raise ClientError("the figure on screen takes no data edits")
        body = json.dumps({"fields": fields}).encode()
        got = await aget(self.base_url + self.edit_url, self.timeout, method="POST", data=body,
                         headers={"Content-Type": "application/json", **self._cookie_header()})
        self.stats.fetches += 1
        self.stats.fetch_bytes += got.wire_bytes
        return got

    def _start_family(self, player: Player) -> None:
        sig = json.dumps(player.family)
        if sig in self._families:
            return
        self._families.add(sig)
        self._spawn(self._fetch_family(player))

    async def _fetch_family(self, player: Player) -> None:
        fam = player.args.get("family") or {}
        sources: list[str | None] = list(fam.get("sources") or [])
        cur = int(fam.get("current", 0))
        order = sorted((i for i in range(len(sources)) if i != cur and sources[i]),
                       key=lambda i: abs(i - cur))
        sem = asyncio.Semaphore(FAMILY_PARALLEL)
        record: dict[str, Any] = {"start": time.monotonic(), "n": len(order), "arrivals": []}
        self.stats.families.append(record)

        async def one(i: int) -> None:
            src = sources[i]
            assert src is not None
            for attempt in range(1, FAMILY_TRIES + 1):
                async with sem:
                    try:
                        got = await aget(self.base_url + src, self.timeout)
                    except Exception:
                        got = None
                    if got is not None:
                        self.stats.fetches += 1
                        self.stats.fetch_bytes += got.wire_bytes
                        if got.status == 200:
                            self.stats.family_fetched += 1
                            record["arrivals"].append(time.monotonic())
                            return
                await asyncio.sleep(FAMILY_RETRY_S * attempt)

        start = fam.get("start")
        if start:  # an offered family is computed only once the visitor reaches for it
            try:
                await aget(self.base_url + start, self.timeout, method="POST", data=b"")
            except Exception:
                pass
        await asyncio.gather(*(one(i) for i in order), return_exceptions=True)

    def _auto_rerun(self, fragment: str, interval: float) -> None:
        old = self._auto.pop(fragment, None)
        if old is not None:
            old.cancel()

        async def tick() -> None:
            while not self.closed:
                await asyncio.sleep(max(0.05, interval))
                if not self._running:
                    await self._rerun(fragment=fragment, auto=True)

        self._auto[fragment] = asyncio.create_task(tick())

    # ------------------------------------------------------------------ reading the tree
    def _widget_at(self, path: tuple[int, ...], kind: str, el: Any) -> Widget | None:
        proto = getattr(el, kind, None)
        wid = getattr(proto, "id", "") if proto is not None else ""
        if not wid:
            return None
        return Widget(kind, wid, _label(proto), user_key(wid), path, proto,
                      self._states.get(wid))

    def widgets(self) -> list[Widget]:
        """Every widget in the tree, in delta-path order (main area, then sidebar)."""
        out = []
        for path in sorted(self.nodes):
            nd = self.nodes[path]
            if nd.kind in _WIDGET_KINDS or nd.kind == "component_instance":
                w = self._widget_at(path, nd.kind, nd.proto)
                if w is not None:
                    out.append(w)
        return out

    def widget(self, name: str) -> Widget:
        """The one widget whose key is `name` (or ends with "." + `name`), else whose label
        is `name` (exactly, then ignoring case); ClientError if none or several."""
        ws = self.widgets()
        for rule in (lambda w: w.key == name,
                     lambda w: bool(w.key) and str(w.key).endswith("." + name),
                     lambda w: w.label == name,
                     lambda w: w.label.strip().lower() == name.strip().lower()):
            hits = [w for w in ws if rule(w)]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                raise ClientError(f"{len(hits)} widgets match {name!r}: "
                                  f"{[(w.label, w.key) for w in hits]}")
        raise ClientError(f"no widget {name!r}; widgets: {[(w.label, w.key) for w in ws]}")

    def players(self) -> list[Player]:
        """The figure players in the tree, in page order."""
        out = []
        for path in sorted(self.nodes):
            nd = self.nodes[path]
            if nd.kind == "component_instance" and \
                    nd.proto.component_instance.component_name.endswith(PLAYER_COMPONENT):
                p = _player(path, nd.proto.component_instance)
                if p is not None:
                    out.append(p)
        return out

    def plotly_charts(self) -> list[Chart]:
        """The `st.plotly_chart` elements in the tree (their spec inline)."""
        out = []
        for path in sorted(self.nodes):
            nd = self.nodes[path]
            if nd.kind == "plotly_chart":
                spec = nd.proto.plotly_chart.spec or ""
                out.append(self.charts.get("plotly-" + hashlib.sha256(spec.encode())
                                           .hexdigest()[:20]) or Chart("plotly", "", 0.0,
                                                                       spec=spec))
        return out

    def elements(self, kind: str | None = None) -> list[tuple[tuple[int, ...], str, Any]]:
        """(path, type, Element proto) of every element in the tree (of one `kind`)."""
        return [(p, nd.kind, nd.proto) for p, nd in sorted(self.nodes.items())
                if not nd.kind.startswith("block:") and (kind is None or nd.kind == kind)]

    def texts(self) -> list[str]:
        """The text of markdown, headings, alerts, captions, code and text elements."""
        out = []
        for _, kind, el in self.elements():
            part = getattr(el, kind, None)
            body = getattr(part, "body", None)
            if isinstance(body, str) and body:
                out.append(body)
        return out

    # ------------------------------------------------------------------ waiting
    @property
    def idle(self) -> bool:
        """No run in progress, the last full run asked for has finished, every chart on
        screen has its payload (or failed)."""
        if not self._finished or self._running:
            return False
        return all(self.charts[p.fig_key].ready for p in self.players()
                   if not p.stale and p.fig_key in self.charts)

    async def until(self, cond: Callable[[], bool], timeout: float | None = None,
                    what: str = "condition") -> None:
        """Wait until `cond()` holds (checked after every message and fetch)."""
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while not cond():
            if self._error is not None:
                raise ClientError(f"waiting for {what}: {self._error}") from self._error
            left = end - time.monotonic()
            if left <= 0:
                raise ClientError(f"timed out after {timeout or self.timeout:.0f} s waiting "
                                  f"for {what} (page {self.page!r}, running={self._running}, "
                                  f"finished={self._finished})")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(left, 0.5))
            except TimeoutError:
                pass

    async def wait_idle(self, timeout: float | None = None) -> None:
        """Wait until `idle`."""
        await self.until(lambda: self.idle, timeout, "the app to be idle")

    async def wait_chart(self, known: Iterable[str] = (), timeout: float | None = None,
                         kind: str | None = None) -> Chart:
        """The first chart whose key is not in `known` once it is ready (payload fetched);
        ClientError if its fetch failed."""
        seen = set(known)
        got: list[Chart] = []

        def cond() -> bool:
            for c in self.charts.values():
                if c.key not in seen and c.ready and (kind is None or c.kind == kind):
                    got.append(c)
                    return True
            return False

        await self.until(cond, timeout, "a new chart")
        if got[0].error:
            raise ClientError(got[0].error)
        return got[0]

    async def figures(self, timeout: float | None = None) -> list[Chart]:
        """The charts on screen now (players, then plotly charts) with their payloads,
        fetching what was not fetched yet."""
        out: list[Chart] = []
        for p in self.players():
            c = self.charts.get(p.fig_key)
            if c is None:
                c = self.charts[p.fig_key] = Chart("player", p.fig_key, time.monotonic(),
                                                   src=p.src, stale=p.stale)
            if c.payload is None and c.src and not self.fetch:
                await self._fetch_chart(c, p)
            out.append(c)
        await self.until(lambda: all(c.ready for c in out), timeout, "the figures' payloads")
        return out + self.plotly_charts()

    async def fetch_figures(self, timeout: float | None = None) -> dict[str, bytes]:
        """{fig_key: payload bytes} of the players on screen."""
        return {c.key: c.payload for c in await self.figures(timeout)
                if c.kind == "player" and c.payload is not None}


def _player(path: tuple[int, ...], ci: Any) -> Player | None:
    try:
        args = json.loads(ci.json_args or "{}")
    except ValueError:
        return None
    key = args.get("fig_key")
    if not isinstance(key, str):
        return None
    fam = args.get("family") or {}
    sources = tuple(s for s in (fam.get("sources") or []) if isinstance(s, str))
    src = args.get("src")
    return Player(key, src if isinstance(src, str) else None, bool(args.get("stale")),
                  sources, path, args, ci.component_name)


# ----------------------------------------------------------------------------- blocking face
class _Loop:
    """One event loop in a daemon thread, shared by every blocking `Session`."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None or cls._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="stclient-loop",
                                 daemon=True).start()
                cls._loop = loop
            return cls._loop


def _call(coro: Awaitable[T], timeout: float | None) -> T:
    fut: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(
        coro, _Loop.get())  # type: ignore[arg-type]
    try:
        return fut.result(None if timeout is None else timeout + 5.0)
    except concurrent.futures.TimeoutError as e:
        fut.cancel()
        raise ClientError(f"no answer within {timeout} s") from e


class Session:
    """A blocking `AsyncSession` (its coroutines run on a shared background loop): for tests
    and scripts. Same methods, without ``await``; use it as a context manager."""

    def __init__(self, inner: AsyncSession) -> None:
        self.inner = inner

    @classmethod
    def open(cls, base_url: str, query: str = "", page: str = "", **options: Any) -> Session:
        timeout = float(options.get("timeout", 120.0))
        return cls(_call(AsyncSession.open(base_url, query, page, **options), timeout))

    def _do(self, fn: Callable[[], T]) -> T:
        async def run() -> T:
            return fn()
        return _call(run(), self.inner.timeout)

    def close(self) -> None:
        _call(self.inner.close(), 30.0)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_idle(self, timeout: float | None = None) -> None:
        _call(self.inner.wait_idle(timeout), timeout or self.inner.timeout)

    def wait_chart(self, known: Iterable[str] = (), timeout: float | None = None,
                   kind: str | None = None) -> Chart:
        return _call(self.inner.wait_chart(set(known), timeout, kind),
                     timeout or self.inner.timeout)

    def set_widget(self, name: str, value: Any) -> None:
        _call(self.inner.set_widget(name, value), self.inner.timeout)

    def click(self, name: str) -> None:
        _call(self.inner.click(name), self.inner.timeout)

    def rerun(self) -> None:
        _call(self.inner.rerun(), self.inner.timeout)

    def goto(self, page: str, query: str = "") -> None:
        _call(self.inner.goto(page, query), self.inner.timeout)

    def upload(self, name: str, files: list[tuple[str, bytes]],
               mime: str = "application/octet-stream") -> None:
        _call(self.inner.upload(name, files, mime), self.inner.timeout)

    def figures(self, timeout: float | None = None) -> list[Chart]:
        return _call(self.inner.figures(timeout), timeout or self.inner.timeout)

    def fetch_figures(self, timeout: float | None = None) -> dict[str, bytes]:
        return _call(self.inner.fetch_figures(timeout), timeout or self.inner.timeout)

    def widgets(self) -> list[Widget]:
        return self._do(self.inner.widgets)

    def widget(self, name: str) -> Widget:
        return self._do(lambda: self.inner.widget(name))

    def players(self) -> list[Player]:
        return self._do(self.inner.players)

    def plotly_charts(self) -> list[Chart]:
        return self._do(self.inner.plotly_charts)

    def texts(self) -> list[str]:
        return self._do(self.inner.texts)

    @property
    def query_string(self) -> str:
        return self.inner.query_string

    @property
    def page(self) -> str:
        return self.inner.page

    @property
    def pages(self) -> dict[str, str]:
        return dict(self.inner.pages)

    @property
    def exceptions(self) -> list[str]:
        return list(self.inner.exceptions)

    @property
    def stats(self) -> Stats:
        return self.inner.stats


__all__ = ["AsyncSession", "Chart", "ClientError", "HttpResult", "Player", "Session", "Stats",
           "Widget", "aget", "http_get", "user_key"]
