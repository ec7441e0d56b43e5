"""The ingest API (/api/v1/). django-ninja validates with the judges' pydantic types and
publishes the OpenAPI document at /api/v1/openapi.json."""

from __future__ import annotations

from datetime import datetime
from datetime import timezone as dt_timezone
import logging
from typing import Any, Literal
from uuid import UUID

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja import NinjaAPI, Query, Status
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer
from pydantic import BaseModel, Field, field_validator

from judges.types import Verdict

from reviewapp.api import payload as api_payload
from reviewapp.api import selectors
from reviewapp.webhooks import selectors as webhook_selectors
from reviewapp.addresses import client_address
from reviewapp.api import otlp
from reviewapp.api import ratelimit
from reviewapp.db.errors import is_transient
from reviewapp.middleware import request_too_large
from reviewapp.api.schemas import AnswerState
from reviewapp.judging import waiting
from reviewapp.webhooks import service as webhooks_service
from reviewapp.api.clients import api_client_authenticate
from reviewapp.api.ingest import ExternalIdReused, InvalidRequest, answer_ingest, runs_ingest
from reviewapp.api.strict_json import StrictParser, UnstorableJSON

log = logging.getLogger(__name__)


class RateLimited(Exception):
    def __init__(self, retry_after: int, detail: str):
        super().__init__(retry_after)
        self.retry_after = retry_after
        self.detail = detail


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        address = client_address(request)
        wait = ratelimit.auth_failure_wait(address)
        if wait is not None:
            raise RateLimited(wait, f"too many invalid tokens from this address "
                                    f"({settings.API_AUTH_FAILURE_LIMIT}); retry in {wait} s")
        client = api_client_authenticate(token)
        if client is None:
            ratelimit.count_auth_failure(address)
            return None
        # Keyed by the token (its hash), not the client: a rotated token starts afresh.
        wait = ratelimit.retry_after(client.token_hash)
        if wait is not None:
            raise RateLimited(
                wait,
                f"rate limit exceeded ({settings.API_RATE_LIMIT} per token); retry in {wait} s",
            )
        return client


api = NinjaAPI(
    title="ClaimDesk API",
    version="1",
    description="Post a RAG answer with its passages; poll for the judge's verdict and claims.",
    auth=BearerToken(),
    parser=StrictParser(),
    urls_namespace="api",
    openapi_url="/openapi.json",
    docs_url="/docs",
)


class FieldError(BaseModel):
    field: str
    message: str
    type: str


class ErrorOut(BaseModel):
    detail: str
    errors: list[FieldError] = []


class ReusedIdOut(ErrorOut):
    stored_request_hash: str = Field(
        description="SHA-256 of the request first posted with this external_id"
    )
    request_hash: str = Field(description="SHA-256 of this request")


class Accepted(BaseModel):
    id: UUID
    status: Literal["queued", "judging", "judged", "failed"]
    url: str


class AnswerOut(AnswerState):
    url: str


class AnswerPage(BaseModel):
    results: list[AnswerOut]
    next_cursor: str | None = Field(
        description="Pass back as `cursor` for the next page; null on the last one"
    )


class AnswerListQuery(BaseModel):
    external_id: str | None = Field(
        None, min_length=1, max_length=200, description="Your own id, exactly"
    )
    status: Literal["queued", "judging", "judged", "failed"] | None = None
    verdict: Verdict | None = None
    since: datetime | None = Field(None, description="ISO 8601; answers posted at or after it")
    limit: int = Field(20, ge=1, le=100)
    cursor: str | None = Field(
        None, max_length=200, description="`next_cursor` of the previous page"
    )

    @field_validator("external_id", "cursor")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        # Postgres text cannot hold NUL: compared with a column, it would be a 500, not "no match".
        if value is not None and "\x00" in value:
            raise ValueError("must not contain NUL characters")
        return value

    @field_validator("since", mode="before")
    @classmethod
    def _iso_8601(cls, value: Any) -> datetime | None:
        # ISO 8601 only (pydantic would also read "0.5" as a Unix time); UTC unless it says
        # otherwise.
        if value is None:
            return None
        try:
            when = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            when = None
        if when is not None:
            try:  # in UTC: Postgres refuses offsets Python allows (up to 24 h)
                return (
                    when.replace(tzinfo=dt_timezone.utc)
                    if when.tzinfo is None
                    else when.astimezone(dt_timezone.utc)
                )
            except OverflowError:
                pass
        raise ValueError(
            "must be an ISO 8601 date or date-time, e.g. 2026-12-01 or 2026-12-01T08:00:00Z"
        )


def _field_name(loc: tuple | list) -> str:
    # ninja prefixes body errors with ("body", "payload"); clients know the payload's own fields.
    # Query errors keep "query." (a query's field is not the payload's), without the model's name.
    parts = [str(part) for part in loc if part != "filters"]
    while parts and parts[0] in ("body", "payload"):
        parts.pop(0)
    return ".".join(parts) or "body"


@api.exception_handler(ValidationError)
def validation_failed(request: HttpRequest, exc: ValidationError):
    errors = [
        {
            "field": _field_name(err.get("loc", ())),
            "message": err.get("msg", "invalid"),
            "type": err.get("type", ""),
        }
        for err in exc.errors
    ]
    return api.create_response(request, {"detail": "invalid payload", "errors": errors}, status=400)


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError):
    # ninja's own 400 is a body it cannot parse as JSON; say so in the API's error shape.
    errors = []
    if exc.status_code == 400 and isinstance(exc.__cause__, UnstorableJSON):
        cause = exc.__cause__
        errors = [
            {"field": _field_name(cause.path), "message": cause.message, "type": "value_error"}
        ]
    elif exc.status_code == 400:
        errors = [
            {
                "field": "body",
                "message": f"not valid JSON: {exc.__cause__ or exc}",
                "type": "json_invalid",
            }
        ]
    return api.create_response(
        request,
        {"detail": "invalid payload" if errors else str(exc), "errors": errors},
        status=exc.status_code,
    )


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError):
    response = api.create_response(
        request, {"detail": "missing or invalid bearer token", "errors": []}, status=401
    )
    response["WWW-Authenticate"] = 'Bearer realm="claimdesk"'
    return response


@api.exception_handler(RateLimited)
def rate_limited(request: HttpRequest, exc: RateLimited):
    response = api.create_response(request, {"detail": exc.detail, "errors": []}, status=429)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(DatabaseError)
def database_unavailable(request: HttpRequest, exc: DatabaseError):
    # Down, restarting or read-only for a while: 503. Any other database error is a bug, a 500.
    if not is_transient(exc):
        raise exc
    log.error("API request failed, database unavailable: %s", exc)
    response = api.create_response(
        request, {"detail": "database unavailable; retry shortly", "errors": []}, status=503
    )
    response["Retry-After"] = "5"
    return response


@api.exception_handler(RequestDataTooBig)
def too_large(request: HttpRequest, exc: RequestDataTooBig):
    return request_too_large()


def _unknown_query(request: HttpRequest, known: set[str]) -> Status | None:
    """Like the payloads, a query admits only what it documents: a misspelt filter is an error,
    not a silently unfiltered list; and each parameter is one value (`?wait=1&wait=30` is not
    read as either)."""
    unknown = sorted(set(request.GET) - known)
    repeated = sorted(
        name for name in set(request.GET) & known if len(request.GET.getlist(name)) > 1
    )
    if not unknown and not repeated:
        return None
    return Status(
        400,
        {
            "detail": "invalid payload",
            "errors": [
                {
                    "field": f"query.{name}",
                    "message": "unknown query parameter",
                    "type": "extra_forbidden",
                }
                for name in unknown
            ]
            + [
                {
                    "field": f"query.{name}",
                    "message": "given more than once; send one value",
                    "type": "repeated",
                }
                for name in repeated
            ],
        },
    )


def _answer_url(request: HttpRequest, answer) -> str:
    return request.build_absolute_uri(reverse("api:answer_get", args=[answer.public_id]))


def _state(request: HttpRequest, answer) -> dict[str, Any]:
    return selectors.answer_state(answer) | {"url": _answer_url(request, answer)}


@api.post(
    "/answers",
    response={
        200: AnswerOut,
        202: Accepted,
        400: ErrorOut,
        401: ErrorOut,
        409: ReusedIdOut,
        413: ErrorOut,
        429: ErrorOut,
    },
    summary="Submit an answer for judging",
    description=(
        "202 when stored and queued. The same external_id from the same client with the same"
        " request (question, answer, prior_turns, passages and profile; metadata aside) returns the"
        " stored answer (200, its current state) and never creates a second one; with a different"
        " request it is refused (409, naming the SHA-256 of both requests), never answered with the"
        " other answer's verdict. With `?wait=S` (at most 30 s) the reply waits for the verdict:"
        " 200 with the judged (or failed) answer when it is ready in time, else 202 as without it."
    ),
)
async def answer_create(
    request: HttpRequest,
    response: HttpResponse,
    payload: api_payload.JudgeRequest,
    wait: float = Query(
        0,
        ge=0,
        le=waiting.MAX_WAIT_SECONDS,
        allow_inf_nan=False,
        description="Seconds to wait for the verdict (guardrail mode): 200 with "
        "the judged answer if it is ready in time, else 202 as without it",
    ),
):
    # Async so that a wait holds no request worker (issue 28): the ingest and the reads run in a
    # thread, the wait itself is an awaited Redis subscription (judging.waiting).
    if refused := _unknown_query(request, {"wait"}):
        return refused
    stored = await sync_to_async(_answer_store)(request, payload, waits=bool(wait))
    if isinstance(stored, Status):
        return stored
    answer, created = stored
    response["Location"] = _answer_url(request, answer)
    if wait:
        async with waiting.wait_slot(request.auth.token_hash) as may_wait:
            if may_wait and (state := await waiting.judged_within(answer, wait)) is not None:
                return Status(200, state | {"url": response["Location"]})
        if not created:  # not judged in time: as it is now
            return await sync_to_async(_answer_reply)(request, answer)
    if not created:
        return await sync_to_async(_state_reply)(request, answer)
    return Status(
        202, {"id": answer.public_id, "status": answer.status, "url": response["Location"]}
    )


def _answer_store(request: HttpRequest, payload: JudgeRequest, *, waits: bool):
    try:
        stored = answer_ingest(client=request.auth, request=payload)
    except InvalidRequest as exc:
        return Status(
            400,
            {
                "detail": "invalid payload",
                "errors": [
                    {"field": exc.field, "message": exc.message, "type": "invalid_reference"}
                ],
            },
        )
    except ExternalIdReused as exc:
        return Status(
            409,
            {
                "detail": f"{exc}: post a new answer under a new external_id",
                "errors": [],
                "stored_request_hash": exc.stored_hash,
                "request_hash": exc.request_hash,
            },
        )
    finally:
        if waits:
            waiting.give_back_connection()
    return stored


def _answer_reply(request: HttpRequest, answer) -> Status:
    return _state_reply(
        request, selectors.answer_for_client(client=request.auth, public_id=str(answer.public_id))
    )


def _state_reply(request: HttpRequest, answer) -> Status:
    return Status(200, _state(request, answer))


@api.get(
    "/answers",
    response={200: AnswerPage, 400: ErrorOut, 401: ErrorOut, 429: ErrorOut},
    summary="This client's answers, newest first, in pages",
    description=(
        "Filter by your own `external_id`, `status`, `verdict` and `since`; each page holds at most"
        " `limit` answers, as `GET /answers/{answer_id}` returns them. Only this token's answers."
    ),
)
def answer_list(request: HttpRequest, filters: Query[AnswerListQuery]):
    if refused := _unknown_query(request, set(AnswerListQuery.model_fields)):
        return refused
    try:
        rows, next_cursor = selectors.client_answers_page(
            client=request.auth,
            limit=filters.limit,
            cursor=filters.cursor,
            filters=selectors.ClientAnswerFilters(
                external_id=filters.external_id,
                status=filters.status,
                verdict=filters.verdict,
                since=filters.since,
            ),
        )
    except selectors.BadCursor as exc:
        return Status(
            400,
            {
                "detail": "invalid query",
                "errors": [
                    {"field": "query.cursor", "message": str(exc), "type": "invalid_cursor"}
                ],
            },
        )
    return Status(
        200, {"results": [_state(request, answer) for answer in rows], "next_cursor": next_cursor}
    )


@api.get(
    "/answers/{answer_id}",
    response={200: AnswerOut, 400: ErrorOut, 401: ErrorOut, 404: ErrorOut, 429: ErrorOut},
    url_name="answer_get",
    summary="An answer's judging status, verdict, claims and safe answer",
    description=(
        "`answer_id` is the `id` the answer was posted under (a UUID); any other id is a 404."
    ),
)
def answer_get(request: HttpRequest, answer_id: str):
    answer = selectors.answer_for_client(client=request.auth, public_id=answer_id)
    if answer is None:
        return Status(404, {"detail": "no such answer for this client", "errors": []})
    return Status(200, _state(request, answer))


# --- OpenTelemetry ---------------------------------------------------------------------------

_OTLP_BODY = {
    "required": True,
    "content": {
        otlp.JSON_TYPE: {
            "schema": {"type": "object", "description": "OTLP/JSON ExportTraceServiceRequest"}
        },
        otlp.PROTOBUF_TYPE: {
            "schema": {
                "type": "string",
                "format": "binary",
                "description": "OTLP protobuf ExportTraceServiceRequest",
            }
        },
    },
}
_OTLP_REPLY = {"description": "ExportTraceServiceResponse, in the request's encoding", "content": {
    otlp.JSON_TYPE: {"schema": {"type": "object"}},
    otlp.PROTOBUF_TYPE: {"schema": {"type": "string", "format": "binary"}},
}}


@api.post(
    "/otlp/v1/traces",
    response={400: ErrorOut, 401: ErrorOut, 413: ErrorOut, 429: ErrorOut},
    summary="OTLP/HTTP trace export: each RAG run in it becomes an answer",
    description=(
        "Point an OpenTelemetry exporter here (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with this"
        " API's bearer token in `OTEL_EXPORTER_OTLP_HEADERS`). An LLM span whose trace holds"
        " retrieval (OpenInference or GenAI conventions) is posted as an answer, external_id = the"
        " trace id (with `:<span id>` when a trace holds several); a re-sent trace is the same"
        " answer. Spans that hold no run are counted in the reply's partial-success message."
    ),
    openapi_extra={"requestBody": _OTLP_BODY, "responses": {"200": _OTLP_REPLY}},
)
def otlp_traces(request: HttpRequest):
    content_type = request.headers.get("Content-Type", "")
    try:
        reading = otlp.runs_in(
            otlp.spans_from(request.body, content_type, request.headers.get("Content-Encoding", ""))
        )
    except otlp.OTLPError as exc:
        return Status(400, {"detail": "not an OTLP trace export", "errors": [
            {"field": "body", "message": str(exc), "type": "invalid_otlp"}]})
    # The rate limit counts answers, not requests: the request took one slot, each further run one
    # more.
    if len(reading.runs) > 1 and (
        wait := ratelimit.retry_after(request.auth.token_hash, cost=len(reading.runs) - 1)
    ):
        raise RateLimited(
            wait,
            f"rate limit exceeded ({settings.API_RATE_LIMIT} answers per token; this export "
            f"holds {len(reading.runs)}); retry in {wait} s",
        )
    _, refused = runs_ingest(client=request.auth, payloads=[run.payload for run in reading.runs])
    body, kind = otlp.export_response(reading, content_type, refused)
    return HttpResponse(body, content_type=kind)


# --- webhooks --------------------------------------------------------------------------------

WebhookEvent = Literal["answer.judged", "answer.adjudicated", "answer.reopened", "alert.miss_rate",
                       "reviewer.paused"]


class WebhookIn(BaseModel):
    url: str = Field(max_length=2000, description="http:// or https://; deliveries are POSTed here")
    events: list[WebhookEvent] = Field(
        default=["answer.judged", "answer.adjudicated"], min_length=1
    )
    active: bool = True
    rotate_secret: bool = Field(
        False, description="Issue a new secret; the old one keeps signing for a grace period"
    )

    @field_validator("url")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        # A NUL or line break is never part of a URL, and would reach the resolver and the database.
        if any(ord(char) < 32 or ord(char) == 127 for char in value):
            raise ValueError("must not contain control characters (NUL, line breaks)")
        return value


class WebhookOut(BaseModel):
    url: str
    events: list[str]
    active: bool
    secret_hint: str = Field(description="The secret's first characters, to recognise it")
    secret: str | None = Field(
        None, description="Only in the reply that created or rotated it: store it now"
    )
    created_at: datetime
    updated_at: datetime


def _webhook_out(endpoint, secret: str | None = None) -> dict[str, Any]:
    return {
        "url": endpoint.url,
        "events": endpoint.events,
        "active": endpoint.active,
        "secret_hint": endpoint.secret_hint,
        "secret": secret,
        "created_at": endpoint.created_at,
        "updated_at": endpoint.updated_at,
    }


@api.put(
    "/webhook",
    response={
        200: WebhookOut,
        201: WebhookOut,
        400: ErrorOut,
        401: ErrorOut,
        413: ErrorOut,
        429: ErrorOut,
    },
    summary="Register (or change) this client's webhook endpoint",
    description=(
        "201 with the signing `secret` when created; 200 when changed (with a new `secret` only if "
        "`rotate_secret`). Each delivery is signed: see the README's 'Webhooks' section."
    ),
)
def webhook_put(request: HttpRequest, payload: WebhookIn):
    try:
        registered = webhooks_service.endpoint_register(
            client=request.auth,
            url=payload.url,
            events=list(payload.events),
            active=payload.active,
            rotate_secret=payload.rotate_secret,
        )
    except webhooks_service.InvalidWebhook as exc:
        return Status(
            400,
            {
                "detail": "invalid payload",
                "errors": [{"field": exc.field, "message": exc.message, "type": "invalid_webhook"}],
            },
        )
    return Status(
        201 if registered.created else 200, _webhook_out(registered.endpoint, registered.secret)
    )


@api.get(
    "/webhook",
    response={200: WebhookOut, 401: ErrorOut, 404: ErrorOut, 429: ErrorOut},
    summary="This client's webhook endpoint",
)
def webhook_get(request: HttpRequest):
    endpoint = webhooks_service.live_endpoint(request.auth)
    if endpoint is None:
        return Status(404, {"detail": "no webhook registered", "errors": []})
    return Status(200, _webhook_out(endpoint))


@api.delete(
    "/webhook",
    response={204: None, 401: ErrorOut, 404: ErrorOut, 429: ErrorOut},
    summary="Remove this client's webhook endpoint",
)
def webhook_delete(request: HttpRequest):
    if not webhooks_service.endpoint_remove(client=request.auth):
        return Status(404, {"detail": "no webhook registered", "errors": []})
    return Status(204, None)


class WebhookAttemptOut(BaseModel):
    number: int
    started_at: datetime
    http_status: int | None
    latency_ms: int | None
    error: str


class WebhookDeliveryOut(BaseModel):
    event_id: str
    event: str
    answer_id: UUID | None = Field(
        description="The answer's `id`; null for `alert.miss_rate` and `reviewer.paused`"
    )
    status: Literal["pending", "delivered", "failed"]
    attempts: list[WebhookAttemptOut]
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    error: str
    created_at: datetime


@api.get(
    "/webhook/deliveries",
    response={200: list[WebhookDeliveryOut], 400: ErrorOut, 401: ErrorOut, 429: ErrorOut},
    summary="This client's latest webhook deliveries, with every attempt",
)
def webhook_deliveries(
    request: HttpRequest,
    status: Literal["pending", "delivered", "failed"] | None = None,
    limit: int = Query(50, ge=1, le=200),
):
    if refused := _unknown_query(request, {"status", "limit"}):
        return refused
    rows = webhook_selectors.webhook_deliveries(
        client=request.auth, status=status or "", limit=limit
    )
    return Status(
        200,
        [
            {
                "event_id": d.event_id,
                "event": d.event,
                "answer_id": d.answer_public_id,
                "status": d.status,
                "next_attempt_at": d.next_attempt_at if d.status == "pending" else None,
                "delivered_at": d.delivered_at,
                "error": d.error,
                "created_at": d.created_at,
                "attempts": [
                    {
                        "number": a.number,
                        "started_at": a.started_at,
                        "http_status": a.http_status,
                        "latency_ms": a.latency_ms,
                        "error": a.error,
                    }
                    for a in d.attempt_rows.all()
                ],
            }
            for d in rows
        ],
    )
