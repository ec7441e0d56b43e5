"""Every request, reply, retry and poll, written once for both clients (sans-IO).

An operation is a generator: it yields the next step, a `Send` (an HTTP request) or a `Pause`
(seconds to wait), and is sent back what came of it (the `httpx.Response`, or the
`httpx.TransportError` that stopped it; None after a pause). Its return value is the result.
`Client` and `AsyncClient` only carry the steps out, with a blocking or an awaiting transport.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from claimdesk_client import errors
from claimdesk_client.models import Answer, Page

T = TypeVar("T")
ANSWERS = "/api/v1/answers"
# The server holds `POST ?wait=S` for at most this long (issue 20's guardrail mode).
MAX_SERVER_WAIT = 30


@dataclass(frozen=True)
class Send:
    method: str
    path: str
    params: Mapping[str, str] | None = None
    json: Any = None
    extra_timeout: float = 0.0  # on top of the client's timeout, while the server holds the reply
    # A request the server would not act on twice (a GET, or a POST under an external_id) may be
    # sent again after a connection broke mid-way; any request may after a refused connection.
    idempotent: bool = True


@dataclass(frozen=True)
class Pause:
    seconds: float


Step = Send | Pause
Outcome = httpx.Response | httpx.TransportError | None
Operation = Generator[Step, Outcome, T]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of 429, 503 and connection errors; no other 4xx or 5xx is retried."""

    attempts: int = 4  # tries in all, the first included
    backoff: float = 0.5  # first wait without a Retry-After; doubles per try, jittered
    max_backoff: float = 8.0
    max_retry_after: float = 60.0  # a longer Retry-After raises RateLimited at once instead of sleeping

    def backoff_for(self, attempt: int) -> float:
        ceiling = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        return ceiling * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class PollPolicy:
    first: float = 0.2  # first wait between polls of a queued answer, growing by half each time
    longest: float = 2.0


@dataclass(frozen=True)
class Submitted:
    """The reply to a submission: 202 (queued) or 200 (this external_id was posted before)."""

    id: str
    status: str
    url: str | None
    answer: Answer | None  # the full state, when the reply carried it


def retry_after(response: httpx.Response) -> float | None:
    """The Retry-After header in seconds (a number or an HTTP date), or None."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:  # a proxy's HTML page, an empty 502
        return {}
    return body if isinstance(body, dict) else {"results": body}


_ERRORS: dict[int, type[errors.APIError]] = {
    400: errors.ValidationError, 422: errors.ValidationError, 401: errors.AuthError, 403: errors.AuthError,
    404: errors.NotFound, 409: errors.Conflict,
}


def raise_for_status(response: httpx.Response) -> httpx.Response:
    if response.status_code < 400:
        return response
    body = _body(response)
    detail = str(body.get("detail") or response.reason_phrase or "error")
    if response.status_code == 429:
        raise errors.RateLimited(429, detail, body, retry_after(response))
    if response.status_code >= 500:
        raise errors.ServerError(response.status_code, detail, body)
    raise _ERRORS.get(response.status_code, errors.APIError)(response.status_code, detail, body)


def _retry_wait(request: Send, outcome: Outcome, attempt: int, policy: RetryPolicy) -> float | None:
    """How long to wait before trying `request` again, or None to stop and report `outcome`."""
    if attempt >= policy.attempts:
        return None
    if isinstance(outcome, httpx.TransportError):
        never_arrived = isinstance(outcome, (httpx.ConnectError, httpx.ConnectTimeout))
        return policy.backoff_for(attempt) if never_arrived or request.idempotent else None
    if outcome is None or outcome.status_code not in (429, 503):
        return None
    wait = retry_after(outcome)
    if wait is None:
        return policy.backoff_for(attempt)
    return wait if wait <= policy.max_retry_after else None


def send(request: Send, policy: RetryPolicy) -> Operation[httpx.Response]:
    """Send `request`, retrying as `policy` allows; return the reply or raise its error."""
    attempt = 1
    while True:
        outcome = yield request
        wait = _retry_wait(request, outcome, attempt, policy)
        if wait is None:
            break
        attempt += 1
        yield Pause(wait)
    if isinstance(outcome, httpx.TransportError):
        where = f"{request.method} {request.path}"
        raise errors.ConnectionFailed(f"{where}: {outcome!r} after {attempt} tries") from outcome
    assert outcome is not None
    return raise_for_status(outcome)


def answer_path(answer_id: str) -> str:
    return f"{ANSWERS}/{quote(str(answer_id), safe='')}"


def ingest_payload(*, answer: str, passages: Sequence[str | Mapping[str, Any]], question: str = "",
                   external_id: str | None = None, prior_turns: Sequence[Mapping[str, str]] = (),
                   metadata: Mapping[str, Any] | None = None, profile: str | None = None) -> dict[str, Any]:
    """DESIGN.md's ingest payload; a passage may be given as its text alone."""
    payload: dict[str, Any] = {
        "question": question, "answer": answer,
        "passages": [{"text": p} if isinstance(p, str) else dict(p) for p in passages],
    }
    optional = {"external_id": external_id, "prior_turns": [dict(t) for t in prior_turns] or None,
                "metadata": dict(metadata) if metadata else None, "profile": profile}
    return payload | {key: value for key, value in optional.items() if value is not None}


def submit(payload: dict[str, Any], policy: RetryPolicy, server_wait: float = 0) -> Operation[Submitted]:
    # `?wait=S` asks the server to hold the reply until the answer is judged, S seconds at most
    # (issue 20's guardrail mode); a server without it ignores the parameter and replies 202.
    wait = min(MAX_SERVER_WAIT, math.floor(server_wait))
    request = Send("POST", ANSWERS, params={"wait": str(wait)} if wait > 0 else None, json=payload,
                   extra_timeout=max(wait, 0), idempotent=bool(payload.get("external_id")))
    response = yield from send(request, policy)
    body = _body(response)
    answer = Answer.from_json(body) if response.status_code == 200 else None
    return Submitted(id=str(body["id"]), status=str(body.get("status", "")), url=body.get("url"), answer=answer)


def get(answer_id: str, policy: RetryPolicy) -> Operation[Answer]:
    response = yield from send(Send("GET", answer_path(answer_id)), policy)
    return Answer.from_json(_body(response))


def wait(answer_id: str, timeout: float, policy: RetryPolicy, poll: PollPolicy,
         known: Answer | None = None) -> Operation[Answer]:
    """Poll until the answer is judged or failed; raise WaitTimeout after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    answer, interval = known, poll.first
    while answer is None or not answer.done:
        if answer is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise errors.WaitTimeout(answer, timeout)
            yield Pause(min(interval, left))
            interval = min(interval * 1.5, poll.longest)
        answer = yield from get(answer_id, policy)
    return answer


def check(payload: dict[str, Any], timeout: float, policy: RetryPolicy, poll: PollPolicy) -> Operation[Answer]:
    started = time.monotonic()
    submitted = yield from submit(payload, policy, server_wait=timeout)
    left = timeout - (time.monotonic() - started)
    return (yield from wait(submitted.id, left, policy, poll, known=submitted.answer))


def list_params(*, external_id: str | None = None, status: str | None = None, verdict: str | None = None,
                since: datetime | str | None = None, limit: int | None = None) -> dict[str, str]:
    """The filters of `GET /api/v1/answers` (clients/python/README.md), without the cursor."""
    since_text = since.isoformat() if isinstance(since, datetime) else since
    params = {"external_id": external_id, "status": status, "verdict": verdict, "since": since_text,
              "limit": None if limit is None else str(limit)}
    return {key: value for key, value in params.items() if value is not None}


def page(params: Mapping[str, str], cursor: str | None, policy: RetryPolicy) -> Operation[Page]:
    query = dict(params) | ({"cursor": cursor} if cursor else {})
    response = yield from send(Send("GET", ANSWERS, params=query), policy)
    return Page.from_json(_body(response))


def find(external_id: str, policy: RetryPolicy) -> Operation[Answer | None]:
    found = yield from page(list_params(external_id=external_id, limit=1), None, policy)
    return found.results[0] if found.results else None
