"""A real HTTP receiver for webhook tests: stdlib ThreadingHTTPServer on 127.0.0.1, in a thread.

It checks each request's signature with reviewapp.webhooks.signing.verify (as a client would) and
records what it got; `replies` sets the status codes it answers with, in order (the last one
repeats), and `reply_body` what a non-2xx reply says. `host`/`port` choose where it listens
(127.0.0.2 is loopback too, for a second service on the same port); `tls` serves https with that
server context.
"""

from __future__ import annotations

import ssl
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from reviewapp.webhooks.signing import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    SignatureError,
    verify,
)

@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    verified: bool
    verify_error: str
    at: float


class Receiver:

    def __init__(
        self,
        secret: str = "",
        replies: tuple[int, ...] = (200,),
        delay: float = 0.0,
        location: str = "",
        reply_body: bytes = b"<b>receiver says no</b>",
        host: str = "127.0.0.1",
        port: int = 0,
        tls: ssl.SSLContext | None = None,
    ):
        self.secret = secret
        self.replies = list(replies)
        self.delay = delay
        self.location = location
        self.reply_body = reply_body
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.in_flight += 1
                    receiver.max_in_flight = max(receiver.max_in_flight, receiver.in_flight)
                    status = (
                        receiver.replies.pop(0)
                        if len(receiver.replies) > 1
                        else receiver.replies[0]
                    )
                try:
                    verified, error = True, ""
                    try:
                        verify(
                            secret=receiver.secret,
                            body=body,
                            header=self.headers.get(SIGNATURE_HEADER),
                        )
                    except SignatureError as exc:
                        verified, error = False, str(exc)
                    if receiver.delay:
                        time.sleep(receiver.delay)
                    with receiver._lock:
                        receiver.received.append(
                            Received(
                                self.path,
                                dict(self.headers.items()),
                                body,
                                verified,
                                error,
                                time.monotonic(),
                            )
                        )
                    self.send_response(status)
                    if receiver.location:
                        self.send_header("Location", receiver.location)
                    reply = b"ok" if status < 300 else receiver.reply_body
                    self.send_header("Content-Length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                finally:
                    with receiver._lock:
                        receiver.in_flight -= 1

            def log_message(self, *args):  # keep test output clean
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.url = f"{'https' if tls else 'http'}://{host}:{self.port}/hooks/claimdesk"

    def __enter__(self) -> Receiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def events(self) -> list[tuple[str, str]]:
        return [
            (r.headers.get(EVENT_HEADER), r.headers.get(DELIVERY_HEADER)) for r in self.received
        ]
