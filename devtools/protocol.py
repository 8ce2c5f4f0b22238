"""A Streamlit session without a browser: the websocket protocol of Streamlit 1.67, spoken
the way its frontend speaks it (for load and soak tests, and tests that need many sessions).

    with ProtocolSession(base_url, page="explorer", query="model.width=20") as s:
        run = s.rerun()                                   # one script run, to its end
        s.set_widget("width m", 30)                       # change a widget, rerun
        s.upload("CSV or NPZ of points and labels", "x.csv", data)
        s.rerun(page="real_data")                         # switch pages

How: GET /_stcore/health for the XSRF cookie; open /_stcore/stream with the subprotocols
["streamlit", <xsrf token>] and the cookie; send BackMsg ``rerun_script`` (query string, page
name or hash, every widget state the session holds, as the frontend does) and read ForwardMsgs
until ``script_finished``. Widgets are found by label among the elements of the last run and
their ids remembered; a widget's value is sent in the field its element type uses. An upload
asks for URLs (``file_urls_request``), PUTs the file as multipart form data with the XSRF
header, then reruns with the uploader's ``file_uploader_state_value``.
"""

from __future__ import annotations

import http.client
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Common_pb2 import FileURLsRequest, UploadedFileInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.sync.client import ClientConnection, connect

DEFAULT_TIMEOUT_S = 300.0


@dataclass
class RunResult:
    """What one script run sent: its elements (type, proto) in order, exceptions shown,
    whether it finished, and how long it took."""

    elements: list[tuple[str, Any]] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    finished: bool = False
    seconds: float = 0.0
    messages: int = 0

    def of_type(self, kind: str) -> list[Any]:
        return [el for k, el in self.elements if k == kind]

    def texts(self) -> list[str]:
        """The text of markdown, alert and caption elements (for assertions)."""
        out = []
        for k, el in self.elements:
            if k in ("markdown", "alert", "text", "heading", "code", "progress"):
                out.append(str(getattr(el, "body", "") or getattr(el, "text", "")))
        return out


class ProtocolError(RuntimeError):
    """The server closed the session or did not finish a run in time."""


class ProtocolSession:
    """One Streamlit session over the websocket (see the module docstring)."""

    def __init__(self, base_url: str, page: str = "", query: str = "",
                 timeout_s: float = DEFAULT_TIMEOUT_S, cookies: dict[str, str] | None = None):
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.base_url = base_url.rstrip("/")
        self.page, self.query, self.timeout_s = page, query, timeout_s
        # cookies sent with every request, as a browser would: the XSRF token and any other
        # the server (or a proxy in front of it: a sticky-session cookie) set on the first one
        self.cookies: dict[str, str] = dict(cookies or {})
        self.xsrf = self._xsrf_cookie()
        self.ws: ClientConnection = connect(
            f"ws://{self.host}:{self.port}/_stcore/stream",
            subprotocols=["streamlit", self.xsrf],  # type: ignore[list-item]
            additional_headers={"Cookie": self.cookie_header()},
            origin=f"http://{self.host}:{self.port}",  # type: ignore[arg-type]
            max_size=None, open_timeout=60)
        self.ws.__enter__()  # (websockets wants its connections entered)
        self.session_id: str | None = None
        self.page_hashes: dict[str, str] = {}  # url path -> page script hash (navigation)
        self.page_hash = ""
        self.widgets: dict[str, WidgetState] = {}  # id -> the state sent with every rerun
        self.ids: dict[str, tuple[str, str]] = {}  # label -> (widget id, element type)
        self.last: RunResult | None = None
        self._pending = RunResult()
        self._started = time.monotonic()

    # ------------------------------------------------------------------------- plumbing
    def _xsrf_cookie(self) -> str:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        conn.request("GET", "/_stcore/health", headers={"Cookie": self.cookie_header()}
                     if self.cookies else {})
        r = conn.getresponse()
        r.read()
        for k, v in r.getheaders():
            if k.lower() == "set-cookie" and "=" in v:
                name, value = v.split(";", 1)[0].split("=", 1)
                self.cookies.setdefault(name.strip(), value.strip())
        return self.cookies.get("_streamlit_xsrf", "")

    def cookie_header(self) -> str:
        """The Cookie header of this session's requests."""
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def close(self) -> None:
        try:
            self.ws.__exit__(None, None, None)
        except Exception:
            pass

    def __enter__(self) -> ProtocolSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, msg: BackMsg) -> None:
        self.ws.send(msg.SerializeToString())

    def _recv(self, deadline: float) -> ForwardMsg:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ProtocolError("timed out waiting for the server")
        try:
            data = self.ws.recv(timeout=left)
        except TimeoutError:
            raise ProtocolError("timed out waiting for the server") from None
        except Exception as e:
            raise ProtocolError(f"the session closed: {e}") from e
        fm = ForwardMsg()
        fm.ParseFromString(data if isinstance(data, bytes) else data.encode())
        return fm

    def _note(self, fm: ForwardMsg, run: RunResult) -> None:
        kind = fm.WhichOneof("type")
        run.messages += 1
        if kind == "new_session":
            ns = fm.new_session
            self.session_id = ns.initialize.session_id or self.session_id
            self.page_hash = ns.page_script_hash or self.page_hash
        elif kind == "page_info_changed":  # the app rewrote the URL: the frontend follows
            self.query = fm.page_info_changed.query_string
        elif kind == "navigation":
            for p in fm.navigation.app_pages:
                self.page_hashes[p.url_pathname] = p.page_script_hash
            self.page_hash = fm.navigation.page_script_hash or self.page_hash
        elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            el = fm.delta.new_element
            etype = el.WhichOneof("type") or ""
            inner = getattr(el, etype, None) if etype else None
            run.elements.append((etype, inner))
            if etype == "exception":
                run.exceptions.append(f"{inner.type}: {inner.message}")  # type: ignore[union-attr]
            wid = getattr(inner, "id", "") if inner is not None else ""
            label = getattr(inner, "label", "") if inner is not None else ""
            if wid and label:
                self.ids[label] = (wid, etype)

    # ------------------------------------------------------------------------- runs
    def rerun(self, *, page: str | None = None, query: str | None = None,
              timeout_s: float | None = None) -> RunResult:
        """One script run of `page` (url path; "" = the default page) with `query`, every
        widget state held; waits for its end."""
        if page is not None and page != self.page:
            self.page = page
            self.widgets.clear()  # the frontend drops the other page's widgets
            self.ids.clear()
        if query is not None:
            self.query = query
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hashes.get(self.page, "") if self.page else ""
        cs.page_name = self.page
        cs.widget_states.widgets.extend(self.widgets.values())
        return self._run(msg, timeout_s)

    def _run(self, msg: BackMsg, timeout_s: float | None) -> RunResult:
        self._pending = RunResult()
        self._started = time.monotonic()
        self._send(msg)
        return self.collect(timeout_s=timeout_s)

    def start_rerun(self, **kw: Any) -> RunResult:
        """Send a rerun like `rerun` and return at once; `collect` reads what it sends."""
        if kw.get("page") is not None and kw["page"] != self.page:
            self.page = kw["page"]
            self.widgets.clear()
            self.ids.clear()
        if kw.get("query") is not None:
            self.query = kw["query"]
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hashes.get(self.page, "") if self.page else ""
        cs.page_name = self.page
        cs.widget_states.widgets.extend(self.widgets.values())
        self._pending = RunResult()
        self._started = time.monotonic()
        self._send(msg)
        return self._pending

    def collect(self, until: Any = None, timeout_s: float | None = None) -> RunResult:
        """Read the current run's messages until it finishes, or until `until(run)` is true
        after a message; the run so far."""
        run = self._pending
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while True:
            fm = self._recv(deadline)
            self._note(fm, run)
            if fm.WhichOneof("type") == "script_finished":
                status = fm.script_finished
                # 0 finished, 1 compile error, 2 stopped early for a rerun, 3 a fragment run
                if status in (0, 3):
                    run.finished = True
                    break
                if status != 2:
                    break
            if until is not None and until(run):
                break
        run.seconds = time.monotonic() - self._started
        self.last = run
        return run

    def widget_id(self, label: str) -> tuple[str, str]:
        if label not in self.ids:
            raise KeyError(f"no widget labelled {label!r} (have: {sorted(self.ids)[:30]})")
        return self.ids[label]

    def set_widget(self, label: str, value: Any, **rerun_kw: Any) -> RunResult:
        """Give the widget labelled `label` a new value (in the field its type sends) and
        rerun."""
        wid, etype = self.widget_id(label)
        ws = WidgetState(id=wid)
        if etype in ("checkbox", "toggle"):
            ws.bool_value = bool(value)
        elif etype == "number_input":
            if isinstance(value, int) and not isinstance(value, bool):
                ws.int_value = value
            else:
                ws.double_value = float(value)
        elif etype in ("selectbox", "radio"):
            ws.string_value = str(value)
        elif etype in ("text_input", "text_area"):
            ws.string_value = str(value)
        elif etype == "slider":
            ws.double_array_value.data.extend([float(value)])
        elif etype == "button":
            ws.trigger_value = True
        else:
            ws.json_value = json.dumps(value)
        self.widgets[wid] = ws
        run = self.rerun(**rerun_kw)
        if etype == "button":
            self.widgets.pop(wid, None)  # a trigger fires once
        return run

    def click(self, label: str, **rerun_kw: Any) -> RunResult:
        """Press the button labelled `label`."""
        return self.set_widget(label, True, **rerun_kw)

    def upload(self, label: str, name: str, data: bytes, *, rerun: bool = True,
               **rerun_kw: Any) -> RunResult:
        """Upload `data` as file `name` through the file uploader labelled `label`, then
        rerun with it selected (as the frontend does; with `rerun=False` the file is only
        selected, for a `start_rerun` of the caller's, and the last run is returned)."""
        wid, _ = self.widget_id(label)
        held = self.widgets.get(wid)
        if held is not None and held.HasField("file_uploader_state_value"):
            for info in held.file_uploader_state_value.uploaded_file_info:  # replaced: gone
                self.http("DELETE", info.file_urls.delete_url)
        req = BackMsg()
        rid = uuid.uuid4().hex
        req.file_urls_request.CopyFrom(FileURLsRequest(request_id=rid, file_names=[name],
                                                       session_id=self.session_id or ""))
        self._send(req)
        deadline = time.monotonic() + 60
        while True:
            fm = self._recv(deadline)
            if fm.WhichOneof("type") == "file_urls_response" and \
                    fm.file_urls_response.response_id == rid:
                break
        if fm.file_urls_response.error_msg:
            raise ProtocolError(fm.file_urls_response.error_msg)
        urls = fm.file_urls_response.file_urls[0]
        status = self.put_file(urls.upload_url, name, data)
        if status >= 300:
            raise ProtocolError(f"the upload was refused: HTTP {status}")
        ws = WidgetState(id=wid)
        ws.file_uploader_state_value.uploaded_file_info.append(UploadedFileInfo(
            name=name, size=len(data), file_id=urls.file_id, file_urls=urls))
        self.widgets[wid] = ws
        if not rerun:
            return self.last or RunResult()
        return self.rerun(**rerun_kw)

    def http(self, method: str, url: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> int:
        """One request to the server with this session's XSRF cookie and header; its status."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        conn.request(method, urlsplit(url).path or url, body=body, headers={
            "X-Xsrftoken": self.xsrf, "Cookie": self.cookie_header(),
            "Origin": f"http://{self.host}:{self.port}", **(headers or {})})
        r = conn.getresponse()
        r.read()
        return int(r.status)

    def put_file(self, upload_url: str, name: str, data: bytes) -> int:
        """PUT one file to Streamlit's upload route as the frontend does; the HTTP status."""
        boundary = uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                f"filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
        return self.http("PUT", upload_url, body, {
            "Content-Type": f"multipart/form-data; boundary={boundary}"})


__all__ = ["ProtocolError", "ProtocolSession", "RunResult"]
