"""A small HTTP proxy in front of a real service that rewrites chosen answers: each GET is forwarded
(its path possibly renamed by `route`), and its body passed through `rewrite(path, body)`; the
tests use it to serve tampered inputs bundles, or another agent's report under this agent's name."""
from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Rewrite = Callable[[str, bytes], bytes]
Route = Callable[[str], str]


class RewritingProxy:
    def __init__(self, upstream: str, rewrite: Rewrite, route: Route = lambda path: path) -> None:
        self.upstream = upstream.rstrip("/")  # http://127.0.0.1:<port>
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server name)
                path = route(self.path)
                try:
                    with urllib.request.urlopen(proxy.upstream + path, timeout=60) as answer:
                        status, headers, body = answer.status, answer.headers, answer.read()
                except urllib.error.HTTPError as exc:
                    status, headers, body = exc.code, exc.headers, exc.read()
                body = rewrite(self.path, body) if status == 200 else body
                self.send_response(status)
                self.send_header("content-type", headers.get("content-type", "application/json"))
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
