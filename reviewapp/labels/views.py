"""Admin pages for labels out and judge calibration: /exports/ and /calibration/. Thin views:
parse, call reviewapp.labels.exports / reviewapp.labels.calibration, render or stream."""

from __future__ import annotations

import hashlib
import json
from typing import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from reviewapp.labels import calibration as calibration_selectors
from reviewapp.labels import exports as export_selectors
from reviewapp.labels import missrate
from reviewapp.models import Policy
from reviewapp.db import counts
from reviewapp.access import admin_required, lead_or_admin_required
from reviewapp.labels.exports import FORMATS, BadFilter
from reviewapp.labels.export_audit import export_audit


def _filters(request: HttpRequest) -> export_selectors.ExportFilters:
    return export_selectors.parse_filters(
        since=request.GET.get("since", ""), profile=request.GET.get("profile", "")
    )


def _filters_key(filters: export_selectors.ExportFilters) -> str:
    # A cache key from user input: hashed, so it holds no spaces or control characters.
    return hashlib.sha256(json.dumps(filters.as_dict(), sort_keys=True).encode()).hexdigest()


def _format(request: HttpRequest) -> str:
    fmt = request.GET.get("format", "jsonl")
    if fmt not in FORMATS:
        raise BadFilter(f"format: one of {', '.join(FORMATS)}")
    return fmt


@require_GET
@admin_required
def exports(request: HttpRequest) -> HttpResponse:
    context = {
        "formats": FORMATS,
        "since": request.GET.get("since", ""),
        "profile": request.GET.get("profile", ""),
    }
    try:
        filters = _filters(request)
    except BadFilter as exc:
        return render(request, "reviewapp/exports.html", context | {"error": str(exc)}, status=400)
    query = request.GET.copy()
    query.pop("format", None)
    return render(
        request,
        "reviewapp/exports.html",
        context | {
            # Counting a million decided claims takes seconds: on big tables the count is reused
            # briefly.
            "rows": counts.counted(
                f"export_rows:{_filters_key(filters)}",
                export_selectors.decided_claims(filters).count,
            ),
            "query": query.urlencode(),
        },
    )


def _streamed(request: HttpRequest,
              chunks: Iterator[bytes]) -> Iterator[bytes] | AsyncIterator[bytes]:
    """Under ASGI Django reads a sync iterator whole into memory before sending it; an async one is
    sent as it comes. Each chunk is made in the request's own thread (its snapshot transaction)."""
    if not isinstance(request, ASGIRequest):
        return chunks

    async def sent() -> AsyncIterator[bytes]:
        step = sync_to_async(next)
        while (chunk := await step(chunks, None)) is not None:
            yield chunk

    return sent()


@require_GET
@admin_required
def export_download(request: HttpRequest) -> HttpResponse:
    try:
        fmt, filters = _format(request), _filters(request)
    except BadFilter as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    export_audit(actor=request.user, actor_label=request.user.get_username(), fmt=fmt,
                 details={"filters": filters.as_dict(), "via": "web"})
    # Rows are read while the response is sent, inside the generator's own snapshot transaction.
    response = StreamingHttpResponse(
        _streamed(request, export_selectors.export_stream(fmt, filters)),
        content_type=f"{export_selectors.CONTENT_TYPES[fmt]}; charset=utf-8",
    )
    response["Content-Disposition"] = (
        f'attachment; filename="{export_selectors.export_filename(fmt)}"'
    )
    return response


@require_GET
@admin_required
def export_manifest(request: HttpRequest) -> HttpResponse:
    """The manifest of the export these filters give now (its own snapshot: it matches a download
    when no decision was made between the two)."""
    try:
        fmt, filters = _format(request), _filters(request)
    except BadFilter as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    manifest = export_selectors.write_export(export_selectors.NullSink(), fmt=fmt, filters=filters)
    return JsonResponse(manifest, json_dumps_params={"indent": 2})


@require_GET
@lead_or_admin_required
def calibration(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "reviewapp/calibration.html",
        calibration_selectors.cached_calibration_page()
        | {"cache_seconds": settings.CALIBRATION_CACHE_SECONDS, **_miss_rate_context()},
    )


def _miss_rate_context() -> dict:
    rates = missrate.shown_miss_rates(Policy.current())
    groups = [("By client", rates["by_client"]), ("By judge", rates["by_judge"]),
              ("By category", rates["by_category"])]
    return {"miss_rate": rates, "miss_rate_groups": groups}
