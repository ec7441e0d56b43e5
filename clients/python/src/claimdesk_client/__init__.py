"""Python client for ClaimDesk: submit RAG answers, wait for their verdict, verify webhooks.

    from claimdesk_client import Client
    with Client("http://127.0.0.1:8000", token) as claimdesk:
        result = claimdesk.check(answer, passages, question=question, timeout=30)
        result.verdict, result.grounding_score, result.safe_answer
"""

from claimdesk_client._core import PollPolicy, RetryPolicy
from claimdesk_client.client import AsyncClient, AsyncSubmission, Client, Submission, __version__
from claimdesk_client.errors import (
    APIError, AuthError, ClaimDeskError, Conflict, ConnectionFailed, FieldError, NotFound, RateLimited, ServerError,
    ValidationError, WaitTimeout,
)
from claimdesk_client.models import Answer, Claim, Evidence, Judge, Page, Review
from claimdesk_client.webhooks import Event, SignatureError, parse_event, verify

__all__ = [
    "APIError", "Answer", "AsyncClient", "AsyncSubmission", "AuthError", "Claim", "ClaimDeskError", "Client",
    "Conflict", "ConnectionFailed", "Event", "Evidence", "FieldError", "Judge", "NotFound", "Page", "PollPolicy",
    "RateLimited", "RetryPolicy", "Review", "ServerError", "SignatureError", "Submission", "ValidationError",
    "WaitTimeout", "__version__", "parse_event", "verify",
]
