"""ASGI middleware in front of Streamlit's own routes (`ui.server.middleware` installs it):
which hosts and origins are served, the browser's hardening headers, and a few bounds
Streamlit does not set.

- **Hosts** (DNS rebinding): a request whose Host header is not an allowed host is refused
  (HTTP 400, websocket closed before it is accepted). Allowed: `EAE_ALLOWED_HOSTS`
  (comma-separated; ``*.example.org`` matches its subdomains, ``*`` any host), by default
  localhost, 127.0.0.1, ::1, this machine's name and its address on the local network, and
  `browser.serverAddress` / `server.address` when they are set. Exempt, as no browser sends
  them: the health check (`HEALTH_PATHS`) from loopback or a private or link-local address
  (Docker's HEALTHCHECK, a kubelet probing ``Host: <pod IP>:<port>``, a proxy's check), and an
  HTTP request with no Host header at all (HAProxy's ``option httpchk`` speaks HTTP/1.0
  without one). A rebinding attack runs in a browser, which always sends the Host it used.
- **Origins** of websockets: a browser's Origin must be an allowed host (same site) or listed in
  `server.corsAllowedOrigins`; anything else is refused here. An accepted Origin is handed to
  Streamlit as the request's own origin, so Streamlit's check passes at once: for any other
  origin Streamlit 1.67 asks `net_util.get_external_ip()` — a blocking HTTP lookup of this
  machine's public address, retried on every refusal because a failure is not remembered, run
  on the server's event loop; its DNS step is not bounded by the 1 s timeout, and each slow
  lookup froze every session for the resolver's 5 s. No request reaches that lookup now.
- **Headers** on every HTTP response: a Content-Security-Policy that lets the app, its
  same-origin component iframes and its websocket work and nothing else (no external source:
  the app loads everything from its own origin), frame-ancestors 'self' and X-Frame-Options
  SAMEORIGIN (extra embedding origins from `server.corsAllowedOrigins` are added to
  frame-ancestors), X-Content-Type-Options nosniff, Referrer-Policy same-origin.
- **Operator routes**: `/_stcore/metrics` (session counts, cache sizes) answers only with
  `EAE_OPERATOR=1`; 404 otherwise.
- **Uploads per session**: a PUT to Streamlit's upload route is refused (413) when the
  session already holds `EAE_SESSION_UPLOAD_FILES` files or the new file would take it over
  `EAE_SESSION_UPLOAD_MB` (Streamlit checks only each file against `server.maxUploadSize`),
  counting the uploads of the session still being received: the check and the reservation of
  the file's place happen in one step on the event loop (`_UploadLedger`), so 32 PUTs sent at
  once get the same answers as 32 in a row. A PUT without Content-Length gets 411.
- **Links over Streamlit's size limits** (512 Ki characters or 1,000 parameters, which
  Streamlit silently replaces by an empty query): the page request gets a short page saying
  so (HTTP 414), with a link to the app without them.
- Starts the runtime's reaper (`Runtime.reaper`) on the first request (it frees what ended
  sessions held).
"""

from __future__ import annotations

import html
import ipaddress
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from starlette.middleware import Middleware
from streamlit import config, net_util
from streamlit import runtime as st_runtime

import runtime
from dynamics.limits import get_limits, get_settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = ("localhost", "127.0.0.1", "::1")
UPLOAD_PREFIX = "/_stcore/upload_file/"
MB = 1024 * 1024
# Streamlit 1.67's limits on a query string (runtime/state/query_params.py)
QUERY_MAX_CHARS = 512 * 1024
QUERY_MAX_FIELDS = 1000
_NOT_PAGES = ("/_stcore/", "/static/", "/component/", "/media/", "/api/", "/app/static/",
              "/favicon")
HEALTH_PATHS = ("/_stcore/health",)  # Streamlit's health route


# ----------------------------------------------------------------------------- hosts
@lru_cache(maxsize=1)
def default_hosts() -> tuple[str, ...]:
    """Loopback, this machine's name and local address, and Streamlit's configured addresses
    (no lookup that could wait on the network: the address comes from a UDP socket)."""
    names = set(LOOPBACK)
    try:
        hostname = socket.gethostname().lower()
        names |= {hostname, hostname.split(".")[0]}
    except OSError:
        pass
    try:
        names.add(str(net_util.get_internal_ip()))
        for opt in ("browser.serverAddress", "server.address"):
            if config.is_manually_set(opt):
                value = str(config.get_option(opt) or "").strip().lower()
                if value and value not in ("0.0.0.0", "::"):
                    names.add(urlsplit(f"//{value}").hostname or value)
    except Exception:  # no Streamlit config here (tests of this module alone)
        pass
    return tuple(sorted(n for n in names if n))


def allowed_hosts() -> tuple[str, ...]:
    """`EAE_ALLOWED_HOSTS`, or `default_hosts()` when it is unset."""
    return get_settings().allowed_hosts or default_hosts()


def host_name(header: str | None) -> str | None:
    """The host name of a Host header or an origin's netloc, lower case, without port or
    brackets; None when it does not parse."""
    if not header:
        return None
    try:
        name = urlsplit(f"//{header.strip()}").hostname
    except ValueError:
        return None
    return name.lower() if name else None


def host_allowed(name: str | None, patterns: tuple[str, ...]) -> bool:
    """Whether host `name` matches one of `patterns` (exact, ``*.domain``, or ``*``)."""
    if name is None:
        return False
    for p in patterns:
        if p == "*" or p == name or (p.startswith("*.") and name.endswith(p[1:])):
            return True
    return False


def _cors_origins() -> tuple[str, ...]:
    try:
        return tuple(o.strip().rstrip("/") for o in config.get_option(
            "server.corsAllowedOrigins") or () if o.strip())
    except Exception:
        return ()


# ----------------------------------------------------------------------------- headers
def content_security_policy(host: str, extra_ancestors: tuple[str, ...] = ()) -> str:
    """The CSP for a page served as `host` (the Host header: its websocket is allowed)."""
    ancestors = " ".join(("'self'", *extra_ancestors))
    return "; ".join([
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' 'unsafe-eval'",  # Streamlit's and Plotly's code
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        f"connect-src 'self' ws://{host} wss://{host}",
        "frame-src 'self' blob: data:",
        "worker-src 'self' blob:",
        "media-src 'self' data: blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        f"frame-ancestors {ancestors}",
    ])


def security_headers(host: str) -> list[tuple[bytes, bytes]]:
    """The hardening headers of every HTTP response (see the module docstring)."""
    extra = _cors_origins()
    out = [(b"content-security-policy", content_security_policy(host, extra).encode()),
           (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"same-origin")]
    if not extra:  # X-Frame-Options cannot list origins: only without extra embedders
        out.append((b"x-frame-options", b"SAMEORIGIN"))
    return out


# ----------------------------------------------------------------------------- middleware
def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", ()):
        if k == name:
            return str(v.decode("latin-1"))
    return None


def probe_source(client: tuple[str, int] | list[Any] | None) -> bool:
    """Whether a request comes from where health probes do: loopback, a private or a
    link-local address (the container itself, the node, the proxy on the same network)."""
    if not client:
        return False
    try:
        addr = ipaddress.ip_address(str(client[0]).split("%")[0])
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback or addr.is_private or addr.is_link_local


def host_exempt(kind: str, path: str, host_header: str | None,
                client: tuple[str, int] | list[Any] | None) -> bool:
    """Whether the Host check does not apply (see the module docstring): a health check from a
    probe's usual source, or an HTTP request without a Host header."""
    if kind != "http":
        return False
    if host_header is None:
        return True
    return path.rstrip("/") in HEALTH_PATHS and probe_source(client)




def _session_holdings(session: str) -> tuple[int, int]:
    """(files, bytes) the session's uploads hold in Streamlit's uploaded-file manager."""
    try:
        if not st_runtime.exists():
            return 0, 0
        files = getattr(st_runtime.get_instance().uploaded_file_mgr, "file_storage", {})
        held = dict(files.get(session, {}))
    except Exception:
        return 0, 0
    return len(held), sum(len(getattr(f, "data", b"")) for f in held.values())


async def _plain(send: Send, status: int, text: str, *, html_page: bool = False) -> None:
    body = text.encode()
    kind = b"text/html; charset=utf-8" if html_page else b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), *security_headers("")]})
    await send({"type": "http.response.body", "body": body})


def link_too_long(query: str) -> tuple[int, int] | None:
    """(characters, parameters) of a query string over Streamlit's limits, else None."""
    chars, fields = len(query), query.count("&") + 1
    if chars > QUERY_MAX_CHARS or fields > QUERY_MAX_FIELDS:
        return chars, fields
    return None


def _too_long_page(path: str, chars: int, fields: int) -> str:
    back = html.escape(path or "/", quote=True)
    return ("<!doctype html><meta charset='utf-8'><title>Link too long</title>"
            "<body style='font-family:sans-serif;max-width:40em;margin:3em auto'>"
            "<h1>This link is too long for this server</h1>"
            f"<p>It has {chars:,} characters and {fields:,} parameters; the server reads at "
            f"most {QUERY_MAX_CHARS:,} characters and {QUERY_MAX_FIELDS:,} parameters, so "
            "none of its settings could be used.</p>"
            f"<p><a href='{back}'>Open the app with its default settings</a>, or ask whoever "
            "sent the link for a shorter one.</p></body>")


class Hardening:
    """The middleware (see the module docstring)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        runtime.current().reaper.start()
        raw_host = _header(scope, b"host")
        host_header = raw_host or ""
        name = host_name(host_header)
        path = str(scope.get("path", ""))
        if not (host_allowed(name, allowed_hosts())
                or host_exempt(kind, path, raw_host, scope.get("client"))):
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _plain(send, 400, "This server does not answer to that host name.")
            return
        if kind == "websocket":
            origin = _header(scope, b"origin")
            if origin is not None:
                oname = host_name(urlsplit(origin).netloc) if "://" in origin else None
                if not (host_allowed(oname, allowed_hosts())
                        or origin.rstrip("/") in _cors_origins()):
                    await send({"type": "websocket.close", "code": 1008})
                    return
                scheme = "https" if scope.get("scheme") == "wss" else "http"
                scope = dict(scope)
                scope["headers"] = [(k, v) for k, v in scope["headers"] if k != b"origin"] + [
                    (b"origin", f"{scheme}://{host_header}".encode("latin-1"))]
            await self.app(scope, receive, send)
            return
        if path.rstrip("/") == "/_stcore/metrics" and not get_settings().operator:
            await _plain(send, 404, "Not found.")
            return
        upload: tuple[str, int] | None = None
        if scope.get("method") == "PUT" and path.startswith(UPLOAD_PREFIX):
            status, refusal, upload = self._upload_check(scope, path)
            if refusal:
                await _plain(send, status, refusal)
                return
        if scope.get("method") == "GET" and not path.startswith(_NOT_PAGES):
            over = link_too_long(scope.get("query_string", b"").decode("latin-1"))
            if over is not None:
                await _plain(send, 414, _too_long_page(path, *over), html_page=True)
                return
        extra = security_headers(host_header)

        async def send_with_headers(message: Message) -> None:
            if message.get("type") == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", ())}
                message = dict(message)
                message["headers"] = [*message.get("headers", ()),
                                      *[(k, v) for k, v in extra if k not in have]]
            await send(message)

        if upload is None:
            await self.app(scope, receive, send_with_headers)
            return
        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            runtime.current().uploads.release(*upload)

    @staticmethod
    def _upload_check(scope: Scope, path: str) -> tuple[int, str | None, tuple[str, int] | None]:
        """(status, refusal, None) for an upload this session may not make; else (0, None,
        (session, bytes)) with its place reserved in the runtime's `uploads` ledger (no await
        in between: the check and the reservation are one step on the event loop)."""
        parts = path[len(UPLOAD_PREFIX):].split("/")
        if len(parts) < 2:
            return 0, None, None
        session = parts[0]  # parts[1], the file id: a file replacing one of its id counts new
        raw = _header(scope, b"content-length")
        try:
            coming = int(raw) if raw is not None else -1
        except ValueError:
            coming = -1
        if coming < 0:
            return 411, "An upload must say its size (Content-Length).", None
        lim = get_limits()
        files, held = _session_holdings(session)
        pending_files, pending_bytes = runtime.current().uploads.reserved(session)
        files, held = files + pending_files, held + pending_bytes
        if files >= lim.session_upload_files:
            return 413, (f"This session already holds {files} uploaded files (counting those "
                         "still arriving), the limit on this server; remove one first."), None
        if held + coming > lim.session_upload_mb * MB:
            return 413, (f"This session's uploads would take {(held + coming) / MB:.1f} MB, "
                         f"over this server's limit of {lim.session_upload_mb:g} MB."), None
        runtime.current().uploads.reserve(session, coming)
        return 0, None, (session, coming)


def middleware() -> list[Any]:
    """The Starlette `Middleware` list for `st.App` (see `ui.server.middleware`)."""
    return [Middleware(Hardening)]


__all__ = ["HEALTH_PATHS", "Hardening", "allowed_hosts", "content_security_policy",
           "default_hosts", "host_allowed", "host_exempt", "host_name", "link_too_long",
           "middleware", "probe_source", "security_headers"]
