"""What can go wrong talking to ClaimDesk, one exception per thing a caller would handle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claimdesk_client.models import Answer


class ClaimDeskError(Exception):
    """Every error this package raises."""


class ConnectionFailed(ClaimDeskError):
    """The server could not be reached (after the retries the policy allows)."""


class WaitTimeout(ClaimDeskError, TimeoutError):
    """The answer was not judged in time; `answer` is its last state as the server gave it."""

    def __init__(self, answer: Answer, timeout: float):
        super().__init__(f"answer {answer.id} is still {answer.status} after {timeout:g}s")
        self.answer = answer
        self.timeout = timeout


@dataclass(frozen=True)
class FieldError:
    field: str  # the payload's own field path, e.g. "passages.0.fetched_at"
    message: str
    type: str


class APIError(ClaimDeskError):
    """The server answered with an error status; `detail` is its explanation."""

    def __init__(self, status_code: int, detail: str, body: dict[str, Any]):
        super().__init__(f"HTTP {status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail
        self.body = body


class ValidationError(APIError):
    """400: the payload was refused; `errors` names each field and what is wrong with it."""

    def __init__(self, status_code: int, detail: str, body: dict[str, Any]):
        self.errors = [FieldError(str(e.get("field", "")), str(e.get("message", "")), str(e.get("type", "")))
                       for e in body.get("errors") or [] if isinstance(e, dict)]
        fields = "; ".join(f"{e.field}: {e.message}" for e in self.errors)
        super().__init__(status_code, f"{detail} ({fields})" if fields else detail, body)

    @property
    def fields(self) -> dict[str, str]:
        return {e.field: e.message for e in self.errors}


class AuthError(APIError):
    """401 or 403: the token is missing, wrong or revoked."""


class NotFound(APIError):
    """404: no such answer for this client (answers of other clients are not found either)."""


class Conflict(APIError):
    """409: this external_id was first posted with a different request; post under a new id."""

    def __init__(self, status_code: int, detail: str, body: dict[str, Any]):
        super().__init__(status_code, detail, body)
        self.stored_request_hash: str | None = body.get("stored_request_hash")
        self.request_hash: str | None = body.get("request_hash")


class RateLimited(APIError):
    """429 after the retries the policy allows; `retry_after` is the server's wait, in seconds."""

    def __init__(self, status_code: int, detail: str, body: dict[str, Any], retry_after: float | None = None):
        super().__init__(status_code, detail, body)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx after the retries the policy allows (503 is retried; other 5xx are not)."""
