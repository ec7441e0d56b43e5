"""Security headers Django does not set itself (a CSP; no caching of what is not static), and the
API's request size cap (a body of unknown size, chunked, is refused with 411 rather than read as
empty).

Every middleware here is async-capable: under ASGI (reviewapp/asgi.py) one sync-only middleware
makes Django run the whole request, an awaited guardrail wait included, in a thread it blocks."""

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import JsonResponse
from django.utils.decorators import sync_and_async_middleware
from whitenoise.middleware import WhiteNoiseMiddleware

# Scripts only from our own origin (htmx and our two files): no inline script, no eval, so a
# script smuggled into an answer or passage cannot run even if escaping ever failed.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",  # the Django admin sets a few inline styles; no scripts
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])


@sync_and_async_middleware
def security_headers(get_response):
    if iscoroutinefunction(get_response):
        async def middleware(request):
            return _with_csp(await get_response(request))
    else:
        def middleware(request):
            return _with_csp(get_response(request))
    return middleware


def _with_csp(response):
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    # Pages, exports and API replies hold reviewers' and clients' data: no shared or browser cache
    # keeps them (a proxy, or the browser's back button after sign-out). Static files set their own.
    response.headers.setdefault("Cache-Control", "private, no-store")
    return response


class StaticFiles(WhiteNoiseMiddleware):
    """WhiteNoise, async-capable: it answers a static file itself (a small file read, no wait)
    and hands anything else on in the caller's mode."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, settings=settings):
        super().__init__(get_response, settings)
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request):
        path = request.path_info
        static_file = self.find_file(path) if self.autorefresh else self.files.get(path)
        if static_file is not None:
            return self.serve(static_file, request)
        return await self.get_response(request)


@sync_and_async_middleware
def api_body_limit(get_response):
    """A body over API_MAX_BODY_BYTES gets 413 from its Content-Length, before anything reads it.

    (A body without a length is read by Django up to DATA_UPLOAD_MAX_MEMORY_SIZE, the same cap;
    the API turns that error into the same 413.)"""

    def refusal(request):
        if request.path_info.startswith(("/api/", "/mcp")):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return request_too_large()
            if not length and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
                # WSGI hands Django no length for a chunked body, and Django then reads it as empty:
                # a POST would be judged as a payload with no fields. Ask for a length instead.
                return JsonResponse(
                    {
                        "detail": "chunked request bodies are not accepted: send Content-Length",
                        "errors": [],
                    },
                    status=411,
                )
        return None

    if iscoroutinefunction(get_response):
        async def middleware(request):
            return refusal(request) or await get_response(request)
    else:
        def middleware(request):
            return refusal(request) or get_response(request)
    return middleware


def request_too_large() -> JsonResponse:
    limit = settings.API_MAX_BODY_BYTES
    return JsonResponse(
        {"detail": f"request body too large: the limit is {limit} bytes", "errors": []}, status=413
    )
