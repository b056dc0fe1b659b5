"""An HTTP proxy in front of a real server that forwards every request and, for the first N requests matching a
method and path, drops the client's connection instead of passing the answer back: the server did the work, the
client never hears of it (a reset under load). For testing that a POST is not retried into a duplicate."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class DroppingProxy:
    def __init__(self, upstream: str, method: str, path: str, drops: int = 1) -> None:
        self.upstream, self.method, self.path = upstream.rstrip("/"), method, path.rstrip("/")
        self.drops = drops
        self.seen: list[tuple[str, str, int]] = []  # (method, path, upstream status) of every forwarded request
        self.arrived: list[tuple[str, str]] = []  # (method, path) of every request, counted as it arrives
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> DroppingProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                with proxy._lock:
                    proxy.arrived.append((self.command, self.path.split("?", 1)[0].rstrip("/")))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                r = httpx.request(self.command, proxy.upstream + self.path, content=body, headers=headers,
                                  timeout=120)  # fmt: skip
                path = self.path.split("?", 1)[0].rstrip("/")
                with proxy._lock:
                    proxy.seen.append((self.command, path, r.status_code))
                    drop = self.command == proxy.method and path == proxy.path and proxy.drops > 0
                    if drop:
                        proxy.drops -= 1
                if drop:
                    self.close_connection = True  # no status line at all: the client sees the connection close
                    return
                self.send_response(r.status_code)
                for k, v in r.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
