"""Security headers Django does not set itself, the API's request size cap, and the web-only
middleware the API skips."""

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django_htmx.middleware import HtmxMiddleware

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
        return get_response(request)

    return middleware


def request_too_large() -> JsonResponse:
    limit = settings.API_MAX_BODY_BYTES
    return JsonResponse({"detail": f"request body too large: the limit is {limit} bytes", "errors": []}, status=413)


def _is_api(request) -> bool:
    return request.path_info.startswith("/api/")


def _web_only(middleware_class):
    """The middleware for the pages only: an /api/ request skips it.

    The API authenticates by bearer token and speaks JSON: it reads no session, user, message or
    htmx header, and its views are CSRF-exempt (no cookie can authorize them), yet each of these
    cost every API request some work (a session store, a lazy user, message storage, CSRF checks).
    The security headers, the HTTPS redirect and X-Frame-Options still apply to /api/ responses.
    """

    # A subclass, so Django's checks (the admin's "SessionMiddleware must be in MIDDLEWARE") know it.
    class WebOnly(middleware_class):
        def __init__(self, get_response):
            super().__init__(get_response)
            for hook in ("process_view", "process_exception", "process_template_response"):
                method = getattr(self, hook, None)
                if method is not None:
                    setattr(self, hook, _skipping_api(method))

        def __call__(self, request):
            if _is_api(request):
                return self.get_response(request)
            return super().__call__(request)

    WebOnly.__name__ = WebOnly.__qualname__ = f"WebOnly{middleware_class.__name__}"
    return WebOnly


def _skipping_api(hook):
    def web_only_hook(request, *args, **kwargs):
        return None if _is_api(request) else hook(request, *args, **kwargs)

    return web_only_hook


WebSessionMiddleware = _web_only(SessionMiddleware)
WebCsrfViewMiddleware = _web_only(CsrfViewMiddleware)
WebAuthenticationMiddleware = _web_only(AuthenticationMiddleware)
WebMessageMiddleware = _web_only(MessageMiddleware)
WebHtmxMiddleware = _web_only(HtmxMiddleware)
