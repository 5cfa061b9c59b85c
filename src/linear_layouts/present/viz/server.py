"""The explorer page served over HTTP on 127.0.0.1 (``linear-layouts explore``).

``GET /`` (or ``/index.html``) returns the page; ``POST /api/swizzle`` answers
:func:`linear_layouts.present.viz.explorer.swizzle_api` for a store/load pair the page built, ``POST /api/parse``
:func:`linear_layouts.present.viz.explorer.parse_api` for layout text typed into the page (Gluon, TTGIR, CuTe or
JSON, read as the command line reads it). Nothing else is served, and only to the page itself (SECURITY.md):

* the socket listens on 127.0.0.1 only;
* every request must name us in ``Host`` (``127.0.0.1``, ``localhost`` or ``[::1]`` with our port), so a
  web page that rebinds its DNS name to 127.0.0.1 gets 421, not the page or the API;
* ``POST`` needs ``Content-Type: application/json`` (a form or ``text/plain`` post from another site is
  415: browsers do not send JSON across origins without asking first, and we never answer that
  question) and, when the browser sends ``Origin`` / ``Sec-Fetch-Site``, our own origin (403 otherwise);
* bodies are at most ``MAX_REQUEST_BYTES`` with a ``Content-Length`` (413 / 411), the layouts in them at
  most ``explorer.MAX_API_TENSOR_BITS`` out and ``explorer.MAX_API_IN_BITS`` in bits; sockets time out after
  ``TIMEOUT_SECONDS`` of silence, a connection is closed ``DEADLINE_SECONDS`` after it opened whatever it
  sends (a client trickling a byte at a time cannot hold it), and at most ``MAX_CONNECTIONS`` requests are
  served at once (503 beyond);
* every refusal says what was wrong, as JSON ``{"error": ...}`` behind a full status line (http.server's own
  errors too, also for a request line without a version or with a bad one, which http.server would answer
  as HTTP/0.9: a bare body);
* a client that hangs up (or is hung up on at the deadline) ends its connection quietly: the server prints
  no traceback, only one line for an error of its own.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["explorer_server", "serve_until_interrupted", "MAX_REQUEST_BYTES", "TIMEOUT_SECONDS", "DEADLINE_SECONDS",
           "MAX_CONNECTIONS"]

MAX_REQUEST_BYTES = 1 << 16  #: a real request (two layouts of <= 2**16 elements as JSON) is under 4 KB
TIMEOUT_SECONDS = 10.0  #: a connection that sends nothing for this long is closed
DEADLINE_SECONDS = 30.0  #: a connection is closed this long after it opened (the API answers in < 1 s)
MAX_CONNECTIONS = 16  #: requests served at once; more are answered 503 and closed
HOSTS = ("127.0.0.1", "localhost", "[::1]")


class _ExplorerServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with a bound on simultaneous connections (each one a thread)."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 64  # accept promptly, then answer 503 beyond MAX_CONNECTIONS

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            body = b'{"error": "busy: too many open connections, try again"}'
            try:
                request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A handler's exception: a connection the client or the deadline ended (a broken pipe, a reset)
        is not an error; anything else is one line on stderr, never a traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, OSError):  # BrokenPipeError, ConnectionResetError, a timeout: the socket is gone
            return
        print(f"linear-layouts explore: internal error ({type(error).__name__}) answering a request; please "
              "report it", file=sys.stderr)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        deadline = threading.Timer(DEADLINE_SECONDS, _hang_up, (request,))
        deadline.daemon = True
        deadline.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            deadline.cancel()
            self.slots.release()


def _hang_up(connection: socket.socket) -> None:
    """End a connection that outlived DEADLINE_SECONDS: its handler's next read or write fails."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _handler(page: bytes) -> type[BaseHTTPRequestHandler]:
    """A request handler class serving ``page`` and the swizzle API."""

    class Handler(BaseHTTPRequestHandler):
        timeout = TIMEOUT_SECONDS  # applied to the socket by StreamRequestHandler.setup
        server_version = "linear-layouts-explorer"
        sys_version = ""

        # -- answers ---------------------------------------------------------------------------------
        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-store")
            if status >= 400:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """http.server's own refusals (a bad request line, headers too long, an unknown method) as JSON
            like ours, quoting at most ~80 characters of what was sent, behind a status line even when the
            request line named no version or a bad one."""
            self.close_connection = True
            if self.request_version == "HTTP/0.9":  # http.server would send the body alone
                self.request_version = "HTTP/1.0"
            text = f"{code} {self.responses.get(code, ('error',))[0]}" + (f": {message[:120]}" if message else "")
            try:
                self._refuse(code, text)
            except OSError:
                pass

        def parse_request(self) -> bool:
            """http.server's parsing, except that a request line without a version (HTTP/0.9) is refused (505)
            rather than answered without a status line."""
            if not super().parse_request():
                return False
            if self.request_version == "HTTP/0.9":
                self.send_error(505, "HTTP/0.9 is not served: send HTTP/1.0 or HTTP/1.1")
                return False
            return True

        def _json(self, status: int, answer: dict[str, Any]) -> None:
            self._send(status, json.dumps(answer).encode("utf-8"), "application/json")

        def _refuse(self, status: int, message: str) -> None:
            self._json(status, {"error": message})

        # -- checks ----------------------------------------------------------------------------------
        def _our_host(self) -> bool:
            """``Host`` names this server (DNS rebinding sends the attacker's name)."""
            port = self.server.server_address[1]
            host = (self.headers.get("Host") or "").strip().lower()
            if host not in {f"{name}:{port}" for name in HOSTS}:
                self._refuse(421, f"Host {host[:80]!r} is not this server: use http://127.0.0.1:{port}/")
                return False
            return True

        def _same_origin(self) -> bool:
            """A browser's ``Origin`` / ``Sec-Fetch-Site`` say the request comes from our own page."""
            port = self.server.server_address[1]
            origin = self.headers.get("Origin")
            if origin is not None and origin.strip().lower() not in {f"http://{name}:{port}" for name in HOSTS}:
                self._refuse(403, f"Origin {origin[:80]!r} is not this server's page")
                return False
            site = (self.headers.get("Sec-Fetch-Site") or "same-origin").strip().lower()
            if site not in ("same-origin", "none"):
                self._refuse(403, f"cross-site request (Sec-Fetch-Site: {site[:40]}) refused")
                return False
            return True

        def _body(self) -> bytes | None:
            """The request body: JSON, announced by Content-Length, at most MAX_REQUEST_BYTES."""
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if content_type != "application/json":
                self._refuse(415, f"Content-Type must be application/json, got {content_type[:60]!r}")
                return None
            if self.headers.get("Transfer-Encoding"):
                self._refuse(411, "chunked bodies are not accepted: send Content-Length")
                return None
            length_text = self.headers.get("Content-Length")
            if length_text is None or not re.fullmatch(r"[0-9]{1,12}", length_text.strip()):  # ASCII digits only
                self._refuse(411, "a body needs a Content-Length (a number of bytes, in ASCII digits)")
                return None
            length = int(length_text)
            if not 0 < length <= MAX_REQUEST_BYTES:
                self._refuse(413, f"body of {length} bytes: it must be 1..{MAX_REQUEST_BYTES} bytes")
                return None
            try:
                return self.rfile.read(length)
            except (TimeoutError, socket.timeout, OSError):
                self.close_connection = True
                return None

        # -- methods ---------------------------------------------------------------------------------
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if not self._our_host():
                return
            if self.path not in ("/", "/index.html"):
                self._refuse(404, f"no such page {self.path[:80]!r}: the explorer is at /")
                return
            self._send(200, page, "text/html; charset=utf-8")

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            """``/api/swizzle``: the optimal swizzle of a pair the page built (see ``swizzle_api``);
            ``/api/parse``: layout text typed into the page (see ``parse_api``)."""
            from linear_layouts.present.viz.explorer import parse_api, swizzle_api

            if not self._our_host() or not self._same_origin():
                return
            api = {"/api/swizzle": swizzle_api, "/api/parse": parse_api}.get(self.path)
            if api is None:
                self._refuse(404, f"no such API {self.path[:80]!r}: the explorer answers POST /api/swizzle and "
                                  "/api/parse")
                return
            body = self._body()
            if body is None:
                return
            from linear_layouts.core.errors import LayoutError
            from linear_layouts.core.limits import unique_keys

            try:
                payload = json.loads(body, object_pairs_hook=functools.partial(unique_keys, what="request"))
            except LayoutError as error:  # a key given twice: JSON would keep the last silently
                self._refuse(400, str(error))
                return
            except (UnicodeDecodeError, RecursionError) as error:
                self._refuse(400, f"request: not JSON text ({type(error).__name__})")
                return
            except ValueError as error:
                self._refuse(400, f"request: not JSON: {str(error)[:120]}")
                return
            try:
                answer = api(payload)
            except Exception as error:  # noqa: BLE001 - a bug must not look like bad input
                self._refuse(500, f"internal error ({type(error).__name__}); please report it")
                return
            self._json(400 if "error" in answer else 200, answer)

        def log_message(self, format: str, *values: object) -> None:  # noqa: A002
            pass

    return Handler


def explorer_server(page: bytes, port: int = 8000) -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1:``port`` (0: any free port) serving ``page``; not yet serving.
    Its ``server_address[1]`` is the port it got."""
    return _ExplorerServer(("127.0.0.1", port), _handler(page))


def serve_until_interrupted(server: ThreadingHTTPServer) -> None:
    """Serve until Ctrl-C, then close the socket."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
