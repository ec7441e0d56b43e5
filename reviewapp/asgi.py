"""The web process as production runs it: gunicorn with uvicorn workers (docker-compose.yml).

ASGI, so that a guardrail wait (POST /api/v1/answers?wait=S, an async view) holds an open socket
and a Redis subscription, not one of the few request workers (issue 28). Sync views run as under
WSGI, each request in a thread of its own."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
django_application = get_asgi_application()

from django.conf import settings  # noqa: E402  (after the app: settings are configured)


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """Under ASGI Django reads a request's whole body (to a temporary file) before any middleware
    runs, so reviewapp.middleware's 413 would come after an unbounded upload without a
    Content-Length (chunked). Count the bytes as they arrive and answer 413 past the cap: no page
    or API call takes more than API_MAX_BODY_BYTES (there are no file uploads)."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        received = 0

        async def counted():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise BodyTooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except BodyTooLarge:  # raised while Django reads the body: no response has started
            body = (
                b'{"detail": "request body too large: the limit is %d bytes", "errors": []}'
                % self.limit
            )
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ]
            await send({"type": "http.response.start", "status": 413, "headers": headers})
            await send({"type": "http.response.body", "body": body})


application = BodyLimit(django_application, settings.API_MAX_BODY_BYTES)
