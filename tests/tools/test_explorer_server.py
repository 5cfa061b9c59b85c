"""The explorer server can't be abused (issue 13): a real HTTP client against a real server on loopback.

The issue's findings: any ``Host`` and ``text/plain`` bodies from any ``Origin`` were accepted (a web page
could drive the compute endpoint: CSRF; DNS rebinding could read the answers), no socket timeout (50
stalled POSTs held open), bodies bounded but not the layouts' in bits (a 240 KB body cost 4.5 s of CPU),
internal errors answered as "request: not JSON". Every test is bounded in connections and time.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from contextlib import contextmanager

import pytest

from linear_layouts.present.viz import explorer, server
from linear_layouts.present.viz.scenarios import seed_transpose

PAGE = b"<!DOCTYPE html><title>explorer</title>"


@contextmanager
def running(timeout: float | None = None, monkeypatch=None):
    """An explorer server on 127.0.0.1 (any free port), serving in a thread; closed afterwards."""
    if timeout is not None:
        monkeypatch.setattr(server, "TIMEOUT_SECONDS", timeout)
    httpd = server.explorer_server(PAGE, 0)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def request(port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
            host: str | None = None) -> tuple[int, dict, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None and "Content-Length" not in (headers or {}):
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def raw(port: int, data: bytes, wait: float = 5.0) -> bytes:
    """Send raw bytes, read until the server closes (or ``wait`` seconds)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except socket.timeout:
            pass
        return b"".join(chunks)


def swizzle_body(bitwidth=32) -> bytes:
    seed = seed_transpose()
    return json.dumps({"store": {"bases": seed.store.bases, "out_dims": seed.store.out_dims},
                       "load": {"bases": seed.load.bases, "out_dims": seed.load.out_dims},
                       "bitwidth": bitwidth}).encode()


def post(port: int, body: bytes, *, content_type: str = "application/json", origin: str | None = "same", **kw):
    headers = {"Content-Type": content_type}
    if origin == "same":
        origin = f"http://127.0.0.1:{port}"
    if origin is not None:
        headers["Origin"] = origin
    headers.update(kw.pop("headers", {}))
    return request(port, "POST", "/api/swizzle", body, headers, **kw)


def test_the_page_and_the_api_are_served_to_the_page():
    with running() as port:
        status, headers, body = request(port, "GET", "/")
        assert status == 200 and body == PAGE and headers["X-Content-Type-Options"] == "nosniff"
        for host in (f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
            assert request(port, "GET", "/index.html", host=host)[0] == 200
        status, headers, body = post(port, swizzle_body())
        assert status == 200, body
        answer = json.loads(body)
        assert answer["optimal"]["bases"]["offset"] and headers["Content-Type"] == "application/json"
        assert "Access-Control-Allow-Origin" not in headers


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1", "127.0.0.1:1",
                                  "127.0.0.1.nip.io:{port}", "", "localhost:{port}@evil"])
def test_dns_rebinding_is_refused(host):
    """A page whose DNS name now points at 127.0.0.1 sends its own name as Host."""
    with running() as port:
        host = host.format(port=port)
        for method, body in (("GET", None), ("POST", swizzle_body())):
            status, _, answer = request(port, method, "/" if method == "GET" else "/api/swizzle", body,
                                        {"Content-Type": "application/json"}, host=host)
            assert status == 421 and b"is not this server" in answer


def test_a_request_without_host_is_refused():
    with running() as port:
        reply = raw(port, b"GET / HTTP/1.0\r\n\r\n")
        assert reply.startswith(b"HTTP/1.0 421") and b"is not this server" in reply


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", ""])
def test_simple_cross_site_posts_are_refused(content_type):
    """The bodies a foreign page can POST without a CORS preflight (CSRF)."""
    with running() as port:
        status, _, body = post(port, swizzle_body(), content_type=content_type, origin=None)
        assert status == 415 and b"Content-Type must be application/json" in body


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}"])
def test_a_foreign_origin_is_refused(origin):
    with running() as port:
        status, _, body = post(port, swizzle_body(), origin=origin.format(port=port))
        assert status == 403 and b"is not this server's page" in body


def test_a_cross_site_fetch_is_refused():
    with running() as port:
        status, _, body = post(port, swizzle_body(), origin=None, headers={"Sec-Fetch-Site": "cross-site"})
        assert status == 403 and b"cross-site request" in body


def test_bodies_are_bounded():
    with running() as port:
        status, _, body = post(port, b"{}", headers={"Content-Length": str(10**9)})
        assert status == 413 and b"must be 1.." in body
        reply = raw(port, f"POST /api/swizzle HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "2\r\n{}\r\n0\r\n\r\n".encode())
        assert b" 411 " in reply.split(b"\r\n")[0] and b"Content-Length" in reply
        reply = raw(port, f"POST /api/swizzle HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          "Content-Type: application/json\r\n\r\n".encode())
        assert b" 411 " in reply.split(b"\r\n")[0]


def test_the_layouts_in_bits_are_bounded():
    """A 240 KB body of zero bases cost 4.5 s; now any layout above 2**24 hardware indices is refused."""
    seed = seed_transpose()
    store = {"bases": dict(seed.store.bases), "out_dims": seed.store.out_dims}
    store["bases"]["register"] = store["bases"]["register"] + [[0, 0]] * 16
    body = json.dumps({"store": store, "load": {"bases": seed.load.bases, "out_dims": seed.load.out_dims},
                       "bitwidth": 32}).encode()
    with running() as port:
        start = time.perf_counter()
        status, _, answer = post(port, body)
        assert status == 400 and "in bits" in json.loads(answer)["error"]
        zeros = json.dumps({"store": {"bases": {"register": [[0, 0]] * 40000}, "out_dims": {"dim0": 1, "dim1": 1}},
                            "load": store, "bitwidth": 32}).encode()
        status, _, answer = post(port, zeros)
        assert status == 413  # 240 KB: above MAX_REQUEST_BYTES
        assert time.perf_counter() - start < 5


@pytest.mark.parametrize("body, status, message", [
    (b"not json", 400, "request: not JSON"),
    (b"\xff\xfe", 400, "request: not JSON"),
    (b"[" * 5000 + b"]" * 5000, 400, "request: not JSON"),
    (b'{"store": 1}', 400, "needs 'store', 'load'"),
    (None, 400, "bitwidth: must be 8, 16, 32 or 64, got 12"),
])
def test_errors_say_what_was_wrong(body, status, message):
    with running() as port:
        got, _, answer = post(port, body if body is not None else swizzle_body(bitwidth=12))
        assert got == status and message in json.loads(answer)["error"]


def test_internal_errors_are_not_reported_as_bad_json(monkeypatch):
    def broken(payload):
        raise RuntimeError("a bug")

    monkeypatch.setattr(explorer, "swizzle_api", broken)
    with running() as port:
        status, _, answer = post(port, swizzle_body())
        assert status == 500 and "internal error (RuntimeError)" in json.loads(answer)["error"]


def test_other_paths_and_methods():
    with running() as port:
        status, _, body = request(port, "GET", "/etc/passwd")
        assert status == 404 and b"the explorer is at /" in body
        assert post(port, swizzle_body(), headers={})[0] == 200
        assert request(port, "PUT", "/", b"x", {"Content-Type": "application/json"})[0] == 501
        status, _, _ = request(port, "POST", "/", b"{}", {"Content-Type": "application/json",
                                                          "Origin": f"http://127.0.0.1:{port}"})
        assert status == 404


def test_stalled_connections_time_out_and_are_bounded(monkeypatch):
    """50 stalled POSTs used to be held open for ever: now at most MAX_CONNECTIONS are held, the rest get
    503 at once, and every stalled one is closed after TIMEOUT_SECONDS (2 s here)."""
    with running(timeout=2.0, monkeypatch=monkeypatch) as port:
        stalled = []
        try:
            for _ in range(50):
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                sock.sendall(f"POST /api/swizzle HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 100\r\n"
                             .encode())  # headers never finished
                stalled.append(sock)
            start = time.perf_counter()
            replies = []
            for sock in stalled:
                chunks = []
                while chunk := sock.recv(65536):
                    chunks.append(chunk)
                replies.append(b"".join(chunks))
            elapsed = time.perf_counter() - start
        finally:
            for sock in stalled:
                sock.close()
        busy = sum(reply.startswith(b"HTTP/1.1 503") for reply in replies)
        assert busy >= 50 - server.MAX_CONNECTIONS and b"too many open connections" in replies[-1]
        assert elapsed < 8  # the held ones were closed by the 2 s timeout
        assert request(port, "GET", "/")[0] == 200  # and the server still serves


def test_a_trickling_client_is_cut_off_at_the_deadline(monkeypatch):
    """One byte every 0.2 s never trips the silence timeout; the connection's deadline still ends it."""
    monkeypatch.setattr(server, "DEADLINE_SECONDS", 1.5)
    with running() as port:
        start = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\n")
            with pytest.raises(OSError, match=r"Broken pipe|Connection reset|Errno"):
                while time.perf_counter() - start < 10:
                    sock.sendall(b"X")
                    time.sleep(0.2)
        assert time.perf_counter() - start < 5
        assert request(port, "GET", "/")[0] == 200


@pytest.mark.parametrize("data, status, message", [
    (b"PUT / HTTP/1.1\r\nHost: h\r\n\r\n", b"501", b"Unsupported method ('PUT')"),
    (b"GET / HTTP/1.1\r\nX-A: " + b"a" * 70000 + b"\r\n\r\n", b"431", b"Line too long"),
    (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", b"414", b"Request-URI Too Long"),
    (b"GET / HTTP/1.1\r\n" + b"X-A: 1\r\n" * 150 + b"\r\n", b"431", b"Too many headers"),
])
def test_http_servers_own_errors_are_json_and_short(data, status, message):
    with running() as port:
        reply = raw(port, data)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split(b" ")[1] == status and b"application/json" in head
    assert message in body and json.loads(body)["error"] and len(body) < 300


def test_typed_layout_text_is_parsed_as_the_command_line_parses_it(capsys):
    from linear_layouts import LinearLayout
    from linear_layouts.layouts import BlockedLayout
    from linear_layouts.cli import main

    def parse(port, payload, **kw):
        headers = {"Content-Type": "application/json", "Origin": kw.pop("origin", f"http://127.0.0.1:{port}")}
        status, _, body = request(port, "POST", "/api/parse", json.dumps(payload).encode(), headers, **kw)
        return status, json.loads(body)

    with running() as port:
        status, answer = parse(port, {"text": "BlockedLayout([1,4],[4,8],[4,1],[1,0])", "shape": [32, 64]})
        assert status == 200
        assert LinearLayout(answer["bases"], answer["out_dims"]) == \
            BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])
        status, answer = parse(port, {"text": "Sw<3,3,3> o (8,64):(64,1)", "shape": [16, 32]})  # its own shape
        assert status == 200 and answer["out_dims"] == {"dim0": 8, "dim1": 64}
        status, answer = parse(port, {"text": "BlockedLayout([1,4],[4,8])", "shape": [32, 64]})
        assert status == 400
        assert main(["show", "BlockedLayout([1,4],[4,8])", "--shape", "32,64"]) == 2
        assert capsys.readouterr().err.strip() == "linear-layouts: error: " + answer["error"]
        assert parse(port, {"text": "x" * 5000, "shape": None})[1]["error"].startswith("text: 5000 characters")
        assert "powers of two" in parse(port, {"text": "BlockedLayout([1],[32],[1],[0])", "shape": [3]})[1]["error"]
        status, answer = parse(port, {"text": "BlockedLayout([1,1],[1,32],[1,1],[1,0])", "shape": [256, 512]})
        assert status == 400 and "not served" in answer["error"]
        assert parse(port, {"text": "BlockedLayout([1,4],[4,8],[4,1],[1,0])"}, origin="http://evil.example")[0] == 403
        assert parse(port, {"text": "x"}, host="evil.example")[0] == 421


@pytest.mark.parametrize("path, body, key", [
    ("/api/swizzle", swizzle_body(12)[:-1] + b', "bitwidth": 32}', "bitwidth"),   # 12 then 32: JSON kept 32
    ("/api/swizzle", swizzle_body().replace(b'"out_dims": {"dim0": 16', b'"out_dims": {"dim0": 16, "dim0": 16', 1),
     "dim0"),                                                                      # in a nested object too
    ("/api/parse", b'{"text": "BlockedLayout([1,4],[4,8],[4,1],[1,0])", "shape": [32, 64], "shape": [16, 16]}',
     "shape"),
], ids=["swizzle", "swizzle-nested", "parse"])
def test_a_key_given_twice_is_refused(path, body, key):
    """The API kept the last of two values of one key (`json.loads`' default), where a LinearLayout's JSON
    refuses it: now the same rule (limits.unique_keys) answers 400 with the error, as any other bad request."""
    assert json.loads(body)  # valid JSON, read by json.loads alone as if the key were given once
    with running() as port:
        headers = {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"}
        status, got, answer = request(port, "POST", path, body, headers)
        assert status == 400 and got["Content-Type"] == "application/json"
        assert json.loads(answer) == {"error": f"request: key '{key}' given twice in one object"}
