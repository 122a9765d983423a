"""A small HTTP proxy in front of a real service that injects faults into chosen requests: drop
the answer after the service committed, or answer a 5xx / 429 / 409 itself without forwarding."""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field

FORWARD = "forward"
DROP_AFTER_COMMIT = "drop_after_commit"
BAD_GATEWAY_AFTER_COMMIT = "502_after_commit"


def answer(status: int, code: str, extra_headers: str = "") -> bytes:
    body = ('{"error":{"type":"api_error","code":"%s","message":"injected by the test proxy",'
            '"request_id":"req_proxy"}}' % code).encode()
    return (f"HTTP/1.1 {status} Injected\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"connection: close\r\n{extra_headers}\r\n").encode() + body


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FaultProxy:
    upstream_port: int
    # Actions for successive POST /v1/decisions requests; other requests (and any beyond) are forwarded.
    script: list[str | bytes] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        self._stop = True
        self.server.close()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            request = _read_request(client)
            if request is None:
                return
            head, body, seen = request
            action: str | bytes = FORWARD
            if seen.method == "POST" and seen.path.startswith("/v1/decisions") and seen.path.split("?")[0] == "/v1/decisions":
                self.seen.append(seen)
                action = self.script.pop(0) if self.script else FORWARD
            if isinstance(action, bytes):
                client.sendall(action)
                return
            response = _forward(self.upstream_port, head, body)
            if action == DROP_AFTER_COMMIT:
                client.shutdown(socket.SHUT_RDWR)  # the service committed; its answer is lost
                return
            if action == BAD_GATEWAY_AFTER_COMMIT:  # committed, but a gateway on the way answers 502
                client.sendall(answer(502, "provider_error"))
                return
            client.sendall(response)


def _read_request(client: socket.socket) -> tuple[bytes, bytes, Seen] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        body += client.recv(65536)
    method, path = lines[0].split(" ")[:2]
    kept = [lines[0]] + [l for l in lines[1:] if not l.lower().startswith("connection:")] + ["connection: close"]
    return "\r\n".join(kept).encode("latin-1"), body, Seen(method, path, headers, body)


def _forward(port: int, head: bytes, body: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port)) as upstream:
        upstream.sendall(head + b"\r\n\r\n" + body)
        response = b""
        while chunk := upstream.recv(65536):
            response += chunk
    return response
