"""/mcp: the MCP server over streamable HTTP, behind the API's bearer token.

Stateless and in JSON: each POST is one JSON-RPC exchange answered with one JSON body, so the
endpoint is an ordinary Django view under the WSGI server like the rest of the API (no session to
keep, no stream to hold open; a GET for a server-to-client stream is refused, which the transport
allows). The view hands the request to the SDK's own transport (StreamableHTTPSessionManager) as an
ASGI call on a fresh event loop; the tools' database work runs back in this request's thread
(asgiref's sync_to_async inside async_to_sync), on its connection.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from reviewapp.api.routes import BearerToken, RateLimited
from reviewapp.mcp.server import acting_client, server

_bearer = BearerToken()
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="claimdesk"'}


def _refused(detail: str, status: int = 401, **headers: str) -> JsonResponse:
    response = JsonResponse({"detail": detail, "errors": []}, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


def _authenticated(request: HttpRequest):
    """The request's API client, or the error reply (the API's: 401 or 429)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        return None, _refused("missing or invalid bearer token", **_CHALLENGE)
    try:
        client = _bearer.authenticate(request, token)
    except RateLimited as exc:
        return None, _refused(exc.detail, 429, **{"Retry-After": str(exc.retry_after)})
    if client is None:
        return None, _refused("missing or invalid bearer token", **_CHALLENGE)
    return client, None


def _scope(request: HttpRequest) -> dict[str, Any]:
    headers = [(name.lower().encode("latin-1"), value.encode("latin-1"))
               for name, value in request.headers.items()]
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
        "scheme": request.scheme, "path": request.path, "raw_path": request.path.encode(),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"), "root_path": "",
        "headers": headers, "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.get_host(), int(request.get_port() or 0)),
    }


async def _exchange(
    scope: dict[str, Any], body: bytes
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One request through the SDK's transport: (status, headers, body)."""
    manager = StreamableHTTPSessionManager(app=server._mcp_server, json_response=True,
                                           stateless=True)
    delivered = False
    reply: dict[str, Any] = {"status": 500, "headers": [], "body": []}

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            reply["status"], reply["headers"] = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            reply["body"].append(message.get("body", b""))

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return reply["status"], reply["headers"], b"".join(reply["body"])


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    client, refused = _authenticated(request)
    if refused is not None:
        return refused
    if request.method != "POST":
        # No server-to-client stream (GET) and no session to end (DELETE): the transport's 405.
        return _refused("only POST: this endpoint is stateless, without a stream or a session", 405,
                             Allow="POST")
    token = acting_client.set(client)
    try:
        status, headers, body = async_to_sync(_exchange)(_scope(request), request.body)
    finally:
        acting_client.reset(token)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() not in (b"content-length", b"transfer-encoding", b"connection"):
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
