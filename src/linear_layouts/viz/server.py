"""The explorer page served over HTTP on 127.0.0.1 (``linear-layouts explore``).

``GET /`` (or ``/index.html``) returns the page; ``POST /api/swizzle`` answers
:func:`linear_layouts.viz.explorer.swizzle_api` for a store/load pair the page built. Nothing else
is served.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["explorer_server", "serve_until_interrupted"]

MAX_REQUEST_BYTES = 1 << 18


def _handler(page: bytes) -> type[BaseHTTPRequestHandler]:
    """A request handler class serving ``page`` and the swizzle API."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path not in ("/", "/index.html"):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            """``/api/swizzle``: the optimal swizzle of a pair the page built (see ``swizzle_api``)."""
            from linear_layouts.viz.explorer import swizzle_api

            length = int(self.headers.get("Content-Length") or 0)
            if self.path != "/api/swizzle" or not 0 < length <= MAX_REQUEST_BYTES:
                self.send_error(404 if self.path != "/api/swizzle" else 413)
                return
            try:
                answer = swizzle_api(json.loads(self.rfile.read(length)))
            except ValueError:
                answer = {"error": "request: not JSON"}
            body = json.dumps(answer).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *values: object) -> None:  # noqa: A002
            pass

    return Handler


def explorer_server(page: bytes, port: int = 8000) -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1:``port`` (0: any free port) serving ``page``; not yet serving.
    Its ``server_address[1]`` is the port it got."""
    return ThreadingHTTPServer(("127.0.0.1", port), _handler(page))


def serve_until_interrupted(server: ThreadingHTTPServer) -> None:
    """Serve until Ctrl-C, then close the socket."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
