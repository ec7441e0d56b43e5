"""`Client` and `AsyncClient`: the same operations (claimdesk_client._core), carried out with a
blocking or an awaiting httpx transport. Nothing but sending and sleeping differs between them."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import httpx

from claimdesk_client import _core
from claimdesk_client._core import Operation, PollPolicy, RetryPolicy, Send
from claimdesk_client.models import Answer, Page

__version__ = "0.1.0"
T = TypeVar("T")
Passages = Sequence[str | Mapping[str, Any]]


def _settings(base_url: str | None, token: str | None) -> tuple[str, dict[str, str]]:
    base_url = base_url or os.environ.get("CLAIMDESK_URL")
    token = token or os.environ.get("CLAIMDESK_TOKEN")
    if not base_url or not token:
        raise ValueError("give base_url and token (or set CLAIMDESK_URL and CLAIMDESK_TOKEN)")
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json",
               "User-Agent": f"claimdesk-client/{__version__}"}
    return base_url.rstrip("/"), headers


def _request_args(step: Send, timeout: float) -> dict[str, Any]:
    return {"method": step.method, "url": step.path, "params": step.params, "json": step.json,
            "timeout": timeout + step.extra_timeout}


class Submission:
    """A posted answer: `id`, the `status` it had, and `wait()` for its verdict."""

    def __init__(self, client: Client, submitted: _core.Submitted):
        self._client = client
        self.id, self.status, self.url, self._known = submitted.id, submitted.status, submitted.url, submitted.answer

    def wait(self, timeout: float = 60.0) -> Answer:
        return self._client._run(_core.wait(self.id, timeout, self._client.retry, self._client.poll, self._known))

    def __repr__(self) -> str:
        return f"<Submission {self.id} {self.status}>"


class AsyncSubmission:
    def __init__(self, client: AsyncClient, submitted: _core.Submitted):
        self._client = client
        self.id, self.status, self.url, self._known = submitted.id, submitted.status, submitted.url, submitted.answer

    async def wait(self, timeout: float = 60.0) -> Answer:
        return await self._client._run(_core.wait(self.id, timeout, self._client.retry, self._client.poll,
                                                  self._known))

    def __repr__(self) -> str:
        return f"<AsyncSubmission {self.id} {self.status}>"


class Client:
    """ClaimDesk's API over a blocking connection pool; use it as a context manager or close() it.

    `base_url` is the server's root (http://127.0.0.1:8000); `transport` is for an httpx
    transport of your own (a proxy, a test double)."""

    def __init__(self, base_url: str | None = None, token: str | None = None, *, timeout: float = 10.0,
                 retry: RetryPolicy | None = None, poll: PollPolicy | None = None,
                 transport: httpx.BaseTransport | None = None,
                 event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None):
        base_url, headers = _settings(base_url, token)
        self.timeout, self.retry, self.poll = timeout, retry or RetryPolicy(), poll or PollPolicy()
        self._http = httpx.Client(base_url=base_url, headers=headers, transport=transport,
                                  event_hooks=dict(event_hooks or {}))

    def _run(self, operation: Operation[T]) -> T:
        outcome: _core.Outcome = None
        try:
            while True:
                step = operation.send(outcome)
                if isinstance(step, _core.Pause):
                    time.sleep(step.seconds)
                    outcome = None
                    continue
                try:
                    outcome = self._http.request(**_request_args(step, self.timeout))
                except httpx.TransportError as exc:
                    outcome = exc
        except StopIteration as done:
            result: T = done.value
            return result

    def submit(self, answer: str, passages: Passages, *, question: str = "", external_id: str | None = None,
               prior_turns: Sequence[Mapping[str, str]] = (), metadata: Mapping[str, Any] | None = None,
               profile: str | None = None) -> Submission:
        """Post an answer for judging; `.wait(timeout)` on the handle returns the judged result."""
        payload = _core.ingest_payload(answer=answer, passages=passages, question=question, external_id=external_id,
                                       prior_turns=prior_turns, metadata=metadata, profile=profile)
        return Submission(self, self._run(_core.submit(payload, self.retry)))

    def check(self, answer: str, passages: Passages, *, timeout: float = 30.0, question: str = "",
              external_id: str | None = None, prior_turns: Sequence[Mapping[str, str]] = (),
              metadata: Mapping[str, Any] | None = None, profile: str | None = None) -> Answer:
        """Submit and wait: the judged (or failed) answer, or WaitTimeout after `timeout` seconds."""
        payload = _core.ingest_payload(answer=answer, passages=passages, question=question, external_id=external_id,
                                       prior_turns=prior_turns, metadata=metadata, profile=profile)
        return self._run(_core.check(payload, timeout, self.retry, self.poll))

    def get(self, answer_id: str) -> Answer:
        return self._run(_core.get(answer_id, self.retry))

    def find(self, external_id: str) -> Answer | None:
        """This client's answer posted under `external_id`, or None."""
        return self._run(_core.find(external_id, self.retry))

    def iter_answers(self, *, external_id: str | None = None, status: str | None = None,
                     verdict: str | None = None, since: datetime | str | None = None,
                     page_size: int = 100) -> Iterator[Answer]:
        """This client's answers matching the filters, page by page (keyset cursors)."""
        params = _core.list_params(external_id=external_id, status=status, verdict=verdict, since=since,
                                   limit=page_size)
        cursor: str | None = None
        while True:
            page: Page = self._run(_core.page(params, cursor, self.retry))
            yield from page.results
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient:
    """The same API as Client, awaited: `await client.check(...)`, `async for a in client.iter_answers()`."""

    def __init__(self, base_url: str | None = None, token: str | None = None, *, timeout: float = 10.0,
                 retry: RetryPolicy | None = None, poll: PollPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
                 event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None):
        base_url, headers = _settings(base_url, token)
        self.timeout, self.retry, self.poll = timeout, retry or RetryPolicy(), poll or PollPolicy()
        self._http = httpx.AsyncClient(base_url=base_url, headers=headers, transport=transport,
                                       event_hooks=dict(event_hooks or {}))

    async def _run(self, operation: Operation[T]) -> T:
        outcome: _core.Outcome = None
        try:
            while True:
                step = operation.send(outcome)
                if isinstance(step, _core.Pause):
                    await asyncio.sleep(step.seconds)
                    outcome = None
                    continue
                try:
                    outcome = await self._http.request(**_request_args(step, self.timeout))
                except httpx.TransportError as exc:
                    outcome = exc
        except StopIteration as done:
            result: T = done.value
            return result

    async def submit(self, answer: str, passages: Passages, *, question: str = "", external_id: str | None = None,
                     prior_turns: Sequence[Mapping[str, str]] = (), metadata: Mapping[str, Any] | None = None,
                     profile: str | None = None) -> AsyncSubmission:
        payload = _core.ingest_payload(answer=answer, passages=passages, question=question, external_id=external_id,
                                       prior_turns=prior_turns, metadata=metadata, profile=profile)
        return AsyncSubmission(self, await self._run(_core.submit(payload, self.retry)))

    async def check(self, answer: str, passages: Passages, *, timeout: float = 30.0, question: str = "",
                    external_id: str | None = None, prior_turns: Sequence[Mapping[str, str]] = (),
                    metadata: Mapping[str, Any] | None = None, profile: str | None = None) -> Answer:
        payload = _core.ingest_payload(answer=answer, passages=passages, question=question, external_id=external_id,
                                       prior_turns=prior_turns, metadata=metadata, profile=profile)
        return await self._run(_core.check(payload, timeout, self.retry, self.poll))

    async def get(self, answer_id: str) -> Answer:
        return await self._run(_core.get(answer_id, self.retry))

    async def find(self, external_id: str) -> Answer | None:
        return await self._run(_core.find(external_id, self.retry))

    async def iter_answers(self, *, external_id: str | None = None, status: str | None = None,
                           verdict: str | None = None, since: datetime | str | None = None,
                           page_size: int = 100) -> AsyncIterator[Answer]:
        params = _core.list_params(external_id=external_id, status=status, verdict=verdict, since=since,
                                   limit=page_size)
        cursor: str | None = None
        while True:
            page: Page = await self._run(_core.page(params, cursor, self.retry))
            for answer in page.results:
                yield answer
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
