"""A fake OpenAI-compatible chat completions server for tests and benchmarks. Stdlib only.

It speaks real HTTP (HTTP/1.1, keep-alive) on a local port, so the official `openai` client can be
pointed at it unchanged::

    with FakeOpenAI() as fake:
        fake.enqueue(Reply.ok('{"verdict": "GROUNDED"}'), Reply.status(429, retry_after=0.2))
        client = openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        ...
        assert fake.requests[0]["temperature"] == 0

Replies are scripted (`enqueue`, consumed in order by whichever request comes next) and fall back
to `default` (a Reply, or a function of the request body returning one) when the script is empty.

Endpoints: ``POST /v1/chat/completions`` and ``GET /v1/models``; any other path is a 404 JSON error,
a known path with the wrong method a 405 JSON error.

Order of handling a chat completion request:
  1. body is not a JSON object                    -> 400 (not recorded, nothing else happens)
  2. the body and headers are recorded            (`requests`, `request_headers`)
  3. more than `max_concurrency` already admitted -> 429 + Retry-After, at once (no latency)
  4. ``"stream": true``                           -> 400 (no latency)
  5. `latency` is slept
  6. response_format type not in `supported_formats` -> Reply.reject_response_format(type)
     (the script is not consumed)
  7. the next scripted reply, else `default`

As a separate process (for benchmarks)::

    python -m tests.fake_openai --port 8999 --latency 1.0 --max-concurrency 64 --content-file
    reply.json

prints ``listening on http://127.0.0.1:PORT/v1`` and serves ``Reply.ok(<file text>)`` until SIGTERM
or SIGINT; then it prints one line of statistics to stderr.
"""

from __future__ import annotations

import argparse
import collections
import http.server
import json
import signal
import socket
import socketserver
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Union

__all__ = ["DEFAULT_CONTENT", "MODEL_ID", "FakeOpenAI", "Reply"]

MODEL_ID = "fake-judge"
DEFAULT_CONTENT = '{"fake": true}'

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}
_ERROR_CODES = {401: "invalid_api_key", 404: "not_found", 429: "rate_limit_exceeded"}
_DEFAULT_MESSAGES = {
    400: "Bad request.",
    401: "Incorrect API key provided.",
    403: "You are not allowed to do this.",
    404: "Not found.",
    408: "Request timed out.",
    409: "Conflict.",
    422: "Unprocessable request.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
    504: "Gateway timeout.",
}


def _as_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def _format_seconds(seconds: float) -> str:
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return text or "0"


@dataclass(frozen=True)
class Reply:
    """One scripted reply. Build them with the static constructors; the fields are for
    inspection."""

    kind: str  # "ok" | "error" | "slow" | "drop"
    content: str | None = None
    refusal_text: str | None = None
    finish_reason: str = "stop"
    prompt_tokens: int = 100
    completion_tokens: int = 50
    status_code: int = 200
    error: dict | None = None  # the "error" object of an error body
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0  # for "slow"
    then: Reply | None = None  # for "slow"; None: the server's default reply

    # -- constructors --------------------------------------------------------------------------

    @staticmethod
    def ok(content: Any, *, finish_reason: str = "stop", prompt_tokens: int = 100,
           completion_tokens: int = 50) -> Reply:
        """A valid chat.completion whose message content is `content` (a non-str is
        JSON-encoded)."""
        return Reply(kind="ok", content=_as_text(content), finish_reason=finish_reason,
                     prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    @staticmethod
    def fenced(content: Any, **ok_kwargs: Any) -> Reply:
        """ok() with the content inside a ```json fence, preceded by a line of prose."""
        text = f"Sure! Here is the JSON you asked for:\n```json\n{_as_text(content)}\n```"
        return Reply.ok(text, **ok_kwargs)

    @staticmethod
    def truncated(content: Any, **ok_kwargs: Any) -> Reply:
        """ok() with the first half of the content and finish_reason "length" (hit max_tokens)."""
        text = _as_text(content)
        ok_kwargs.setdefault("finish_reason", "length")
        return Reply.ok(text[: len(text) // 2], **ok_kwargs)

    @staticmethod
    def refusal(text: str = "I can't help with that.") -> Reply:
        """message.content null, message.refusal = text, finish_reason "stop"."""
        return Reply(kind="ok", content=None, refusal_text=text, finish_reason="stop")

    @staticmethod
    def status(code: int, *, retry_after: float | None = None, message: str | None = None,
               error_type: str | None = None, error_code: str | None = None,
               param: str | None = None) -> Reply:
        """An error with HTTP status `code` and body {"error": {"message", "type", "param",
        "code"}}.

        `retry_after` (seconds, may be fractional) is sent both as "Retry-After: 0.2" and as
        "retry-after-ms: 200"."""
        headers: list[tuple[str, str]] = []
        if retry_after is not None:
            headers.append(("Retry-After", _format_seconds(retry_after)))
            headers.append(("retry-after-ms", str(int(round(retry_after * 1000)))))
        error = {
            "message": (
                message if message is not None else _DEFAULT_MESSAGES.get(code, f"HTTP {code}")
            ),
            "type": error_type
            or _ERROR_TYPES.get(code, "server_error" if code >= 500 else "api_error"),
            "param": param,
            "code": error_code if error_code is not None else _ERROR_CODES.get(code),
        }
        return Reply(kind="error", status_code=code, error=error, headers=tuple(headers))

    @staticmethod
    def slow(seconds: float, then: Reply | None = None) -> Reply:
        """Sleep `seconds`, then send `then` (None: what the server's `default` would answer)."""
        return Reply(kind="slow", seconds=float(seconds), then=then)

    @staticmethod
    def reject_response_format(kind: str = "json_schema") -> Reply:
        """The 400 that servers without structured output (vLLM/llama.cpp builds) give."""
        return Reply.status(
            400,
            message=(f"response_format type '{kind}' is not supported by this server; "
                     f"supported response_format types: 'text', 'json_object'"),
            error_type="invalid_request_error",
            error_code="unsupported_response_format",
            param="response_format",
        )

    @staticmethod
    def drop_connection() -> Reply:
        """Close the socket without sending any response."""
        return Reply(kind="drop")

    # -- rendering -----------------------------------------------------------------------------

    def completion_body(self, request: dict) -> dict:
        model = request.get("model") if isinstance(request.get("model"), str) else MODEL_ID
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": self.content,
                        "refusal": self.refusal_text,
                    },
                    "logprobs": None,
                    "finish_reason": self.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens,
            },
        }


ReplySource = Union[Reply, Callable[[dict], Reply], None]


def _coerce(reply: Any) -> Reply:
    """A Reply as is; a str, dict or list becomes Reply.ok(it)."""
    if isinstance(reply, Reply):
        return reply
    if isinstance(reply, (str, dict, list)):
        return Reply.ok(reply)
    raise TypeError(f"expected a Reply, got {type(reply).__name__}")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() must not wait for idle keep-alive connections or slow replies
    request_queue_size = 1024
    allow_reuse_address = True

    fake: FakeOpenAI

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), which can stall on a machine without DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = host, port

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, OSError)):
            return  # the client went away (e.g. it timed out on a slow reply): not our problem
        super().handle_error(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"
    sys_version = ""
    disable_nagle_algorithm = (
        True  # headers and body go out in separate writes: no 40 ms delayed-ACK stall
    )
    server: _Server

    # -- plumbing ------------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.fake.verbose:
            super().log_message(format, *args)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status: int, body: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
        data = json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:16]}")
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True  # the client is gone

    def _send_reply(self, reply: Reply, request: dict) -> None:
        if reply.kind == "ok":
            self._send_json(200, reply.completion_body(request), reply.headers)
        elif reply.kind == "error":
            self._send_json(reply.status_code, {"error": dict(reply.error or {})}, reply.headers)
        elif reply.kind == "drop":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        else:  # pragma: no cover - resolved before
            raise ValueError(f"unknown reply kind {reply.kind!r}")

    def _error(self, status: int, message: str, **kwargs: Any) -> None:
        reply = Reply.status(status, message=message, **kwargs)
        self._send_json(status, {"error": reply.error}, reply.headers)

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/") or "/"

    # -- routes --------------------------------------------------------------------------------

    _ROUTES = {"/v1/chat/completions": "POST", "/v1/models": "GET"}

    def _route(self, method: str) -> None:
        path = self._path()
        if method == "POST":
            body = self._read_body()  # always consume it, so the keep-alive connection stays usable
        wanted = self._ROUTES.get(path)
        if wanted is None:
            self._error(404, f"Unknown request URL: {method} {path}.", error_code="unknown_url")
        elif wanted != method:
            self._error(405, f"Method {method} not allowed for {path}; use {wanted}.")
        elif path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [
                {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "fake-openai"}]})
        else:
            self._chat_completions(body)

    def do_GET(self) -> None:  # noqa: N802
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._route("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._route("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE")

    def _chat_completions(self, raw: bytes) -> None:
        fake = self.server.fake
        try:
            request = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            self._error(400, f"We could not parse the JSON body of your request. ({exc})")
            return
        if not isinstance(request, dict):
            self._error(400, "The request body must be a JSON object.")
            return
        admitted = fake._arrive(
            request, {k.lower(): v for k, v in self.headers.items()}, peer=self.client_address
        )
        try:
            if not admitted:
                seconds = fake._concurrency_retry_after()
                self._error(429, f"Too many concurrent requests (limit {fake.max_concurrency}). "
                                 "Please retry after a short wait.",
                            retry_after=seconds, error_code="concurrency_limit_exceeded")
                return
            if request.get("stream"):
                self._error(400, "Streaming is not supported by this fake server.", param="stream")
                return
            if fake.latency > 0:
                fake._sleep(fake.latency)
            reply = fake._next_reply(request)
            while reply.kind == "slow":
                fake._sleep(reply.seconds)
                reply = (
                    _coerce(reply.then) if reply.then is not None else fake._default_reply(request)
                )
            self._send_reply(reply, request)
        except Exception as exc:  # a bug in a `default` function: make it visible, don't hang
            fake.errors.append(f"{type(exc).__name__}: {exc}")
            self._error(500, f"fake server error: {type(exc).__name__}: {exc}")
        finally:
            fake._leave(admitted)


class FakeOpenAI:
    """An OpenAI-compatible chat completions server on a background thread (see the module doc)."""

    def __init__(self, *, default: ReplySource = None, latency: float = 0.0,
                 max_concurrency: int | None = None, host: str = "127.0.0.1", port: int = 0,
                 supported_formats: Iterable[str] | None = None,
                 concurrency_retry_after: float | None = None, verbose: bool = False) -> None:
        self.default = default
        self.latency = float(latency)
        self.max_concurrency = max_concurrency
        self.host = host
        self.port = port
        # None: every response_format type is supported. "text" is always supported.
        self.supported_formats = None if supported_formats is None else set(supported_formats)
        # Retry-After on concurrency 429s; None: max(latency, 0.1) (about when a slot frees up).
        self.concurrency_retry_after = concurrency_retry_after
        self.verbose = verbose

        self.requests: list[dict] = []
        self.request_headers: list[dict] = []
        self.request_peers: list[tuple | None] = []  # (host, port) of the client of each request
        self.errors: list[str] = []  # exceptions raised by a `default` function
        self.peak_concurrency = (
            0  # most chat requests in flight at once (incl. ones refused with 429)
        )
        self.concurrency_rejections = 0  # how many got the max_concurrency 429

        self._lock = threading.Lock()
        self._script: collections.deque[Reply] = collections.deque()
        self._in_flight = 0
        self._admitted = 0
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self.host, self.port), _Handler)
        server.fake = self
        self._server = server
        self.port = server.server_address[1]
        self.base_url = f"http://{self.host}:{self.port}/v1"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name=f"fake-openai-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wakes handlers sleeping on latency / slow replies
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:  # idle keep-alive connections would otherwise linger
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    # -- scripting and inspection --------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Scripted replies, consumed in order by the next requests, before `default`."""
        coerced = [_coerce(r) for r in replies]
        with self._lock:
            self._script.extend(coerced)

    @property
    def pending(self) -> int:
        """How many scripted replies have not been consumed yet."""
        with self._lock:
            return len(self._script)

    def reset(self) -> None:
        """Clear the script, the recorded requests/headers/errors and the concurrency statistics."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.request_headers.clear()
            self.request_peers.clear()
            self.errors.clear()
            self.peak_concurrency = self._in_flight
            self.concurrency_rejections = 0

    @property
    def response_formats_seen(self) -> list:
        with self._lock:
            bodies = list(self.requests)
        return [(body.get("response_format") or {}).get("type") for body in bodies]

    # -- used by the handler -------------------------------------------------------------------

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _arrive(self, request: dict, headers: dict, peer: tuple | None = None) -> bool:
        """Record the request; count it in flight; return whether it is admitted."""
        with self._lock:
            self.requests.append(request)
            self.request_headers.append(headers)
            self.request_peers.append(peer)
            self._in_flight += 1
            self.peak_concurrency = max(self.peak_concurrency, self._in_flight)
            if self.max_concurrency is not None and self._admitted >= self.max_concurrency:
                self.concurrency_rejections += 1
                return False
            self._admitted += 1
            return True

    def _leave(self, admitted: bool) -> None:
        with self._lock:
            self._in_flight -= 1
            if admitted:
                self._admitted -= 1

    def _concurrency_retry_after(self) -> float:
        if self.concurrency_retry_after is not None:
            return self.concurrency_retry_after
        return max(self.latency, 0.1)

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _next_reply(self, request: dict) -> Reply:
        kind = (request.get("response_format") or {}).get("type")
        if (self.supported_formats is not None and kind is not None and kind != "text"
                and kind not in self.supported_formats):
            return Reply.reject_response_format(kind)
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self._default_reply(request)

    def _default_reply(self, request: dict) -> Reply:
        default = self.default
        if default is None:
            return Reply.ok(DEFAULT_CONTENT)
        if isinstance(default, Reply):
            return default
        return _coerce(default(request))


# -- command line ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fake_openai",
        description="Serve a fake OpenAI-compatible chat completions API.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8999, help="0 picks a free port (default 8999)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--max-concurrency", type=int, default=None,
                        help="more requests in flight than this get 429 with Retry-After")
    parser.add_argument("--concurrency-retry-after", type=float, default=None,
                        help="Retry-After seconds on those 429s (default: max(latency, 0.1))")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--content-file", help="file whose text is every reply's message content")
    source.add_argument("--content", help="the message content of every reply")
    parser.add_argument("--supported-formats", default=None,
                        help="comma-separated response_format types to accept (default: all)")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)

    if args.content_file:
        with open(args.content_file, encoding="utf-8") as f:
            content = f.read()
    else:
        content = args.content if args.content is not None else DEFAULT_CONTENT
    formats = None
    if args.supported_formats is not None:
        formats = {f.strip() for f in args.supported_formats.split(",") if f.strip()}

    fake = FakeOpenAI(
        default=Reply.ok(content),
        latency=args.latency,
        max_concurrency=args.max_concurrency,
        host=args.host,
        port=args.port,
        supported_formats=formats,
        concurrency_retry_after=args.concurrency_retry_after,
        verbose=args.verbose,
    )
    done = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    fake.start()
    print(f"listening on {fake.base_url}", flush=True)
    started = time.monotonic()
    while not done.wait(0.1):
        pass
    fake.stop()
    print(f"fake-openai: {len(fake.requests)} requests in {time.monotonic() - started:.1f}s, "
          f"peak concurrency {fake.peak_concurrency}, "
          f"{fake.concurrency_rejections} refused over the concurrency limit",
          file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
