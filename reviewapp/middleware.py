"""Security headers Django does not set itself, and the API's request size cap (a body of unknown
size, chunked, is refused with 411 rather than read as empty)."""

from django.conf import settings
from django.http import JsonResponse

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


def security_headers(get_response):
    def middleware(request):
        response = get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response

    return middleware


def api_body_limit(get_response):
    """A body over API_MAX_BODY_BYTES gets 413 from its Content-Length, before anything reads it.

    (A body without a length is read by Django up to DATA_UPLOAD_MAX_MEMORY_SIZE, the same cap;
    the API turns that error into the same 413.)"""

    def middleware(request):
        if request.path_info.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return request_too_large()
            if not length and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
                # WSGI hands Django no length for a chunked body, and Django then reads it as empty:
                # a POST would be judged as a payload with no fields. Ask for a length instead.
                return JsonResponse({"detail": "chunked request bodies are not accepted: send Content-Length",
                                     "errors": []}, status=411)
        return get_response(request)

    return middleware


def request_too_large() -> JsonResponse:
    limit = settings.API_MAX_BODY_BYTES
    return JsonResponse({"detail": f"request body too large: the limit is {limit} bytes", "errors": []}, status=413)
