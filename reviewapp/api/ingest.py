from __future__ import annotations

import hashlib
import logging
from contextlib import nullcontext
from typing import NamedTuple

import orjson
from pydantic import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from judges import JudgeRequest
from reviewapp.api import payload as api_payload
from judges.profiles import UnknownProfile, get_profile
from reviewapp import enqueue, store
from reviewapp.models import Answer, ApiClient

log = logging.getLogger(__name__)


class InvalidRequest(ValueError):
    """A payload that is well-formed but names something that does not exist."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ExternalIdReused(Exception):
    """The client posted this external_id before with a different request: a new answer under an
    old id, which must not be answered with the old verdict."""

    def __init__(self, external_id: str, stored_hash: str, request_hash: str):
        super().__init__(f"external_id {external_id!r} was posted before with a different request")
        self.external_id = external_id
        self.stored_hash = stored_hash
        self.request_hash = request_hash


# What is judged; external_id names it and metadata rides along (a retry may carry new trace ids).
_HASHED_FIELDS = {"question", "answer", "prior_turns", "passages", "profile"}
_LATER_PASSAGE_DEFAULTS = {
    "score": None,
    "metadata": {},
    "kind": "document",
    "tool_name": None,
    "call_id": None,
    "arguments": None,
}


def request_hash(request: JudgeRequest) -> str:
    """SHA-256 of the validated request's judged fields, as JSON with sorted keys: the same
    answer posted twice hashes the same however its JSON was spelt (key order, spacing, escapes,
    defaults left out or written out)."""
    fields = request.model_dump(mode="json", include=_HASHED_FIELDS)
    for passage in fields["passages"]:
        # Passage fields added later count only when given, so that a request stored before they
        # existed, sent again, hashes as it did then.
        for name, default in _LATER_PASSAGE_DEFAULTS.items():
            if name in passage and passage[name] == default:
                del passage[name]
    return hashlib.sha256(orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)).hexdigest()


class Ingested(NamedTuple):
    answer: Answer
    created: bool


def answer_ingest(*, client: ApiClient | None, request: JudgeRequest) -> Ingested:
    """Store an answer with its passages and queue it for judging once the rows are committed.

    The same external_id from the same client returns the answer already stored, if it was the
    same request (or was stored before requests were hashed); else raises ExternalIdReused.
    """
    if request.profile is not None:
        try:
            get_profile(request.profile)
        except UnknownProfile as exc:
            raise InvalidRequest("profile", str(exc)) from None
    # Insert first and let the unique (client, external_id) constraint find a repeat: a repeat is
    # a client's retry, rare, while a look-up before every insert is a round trip on every POST.
    # Only an answer with an external_id can be posted again, so only its request is hashed.
    digest = request_hash(request) if request.external_id is not None else None
    try:
        answer = _store(client=client, request=request, digest=digest)
    except IntegrityError:
        if request.external_id is None or client is None:
            raise
        # Posted before (or by a concurrent request that committed first): that is the answer.
        existing = Answer.objects.filter(client=client, external_id=request.external_id).first()
        if existing is None:
            raise  # another constraint failed
        if existing.request_hash is not None and existing.request_hash != digest:
            raise ExternalIdReused(request.external_id, existing.request_hash, digest) from None
        return Ingested(existing, created=False)
    return Ingested(answer, created=True)


def _passage_fields(request: JudgeRequest) -> list[dict]:
    """The request's passages as Passage fields, in order (absent header fields stored blank; a
    plain JudgeRequest's passages are documents)."""
    return [
        {
            "pid": p.id,
            "position": position,
            "text": p.text,
            "tag": p.tag or "",
            "agency": p.agency or "",
            "title": p.title or "",
            "section": p.section or "",
            "source_url": p.source_url or "",
            "fetched_at": p.fetched_at or "",
            "score": p.score,
            "metadata": p.metadata,
            "kind": getattr(p, "kind", "document"),
            "tool_name": getattr(p, "tool_name", None) or "",
            "call_id": getattr(p, "call_id", None) or "",
            "tool_arguments": getattr(p, "arguments", None),
        }
        for position, p in enumerate(request.passages)
    ]


def _store(*, client: ApiClient | None, request: JudgeRequest, digest: str | None) -> Answer:
    now = timezone.now()
    answer = Answer(
        client=client,
        external_id=request.external_id,
        question=request.question,
        answer=request.answer,
        prior_turns=[turn.model_dump() for turn in request.prior_turns],
        metadata=request.metadata,
        requested_profile=request.profile or "",
        request_hash=digest,
        created_at=now,
        updated_at=now,
        session_id=getattr(request, "session_id", None) or "",
    )
    # Inside a caller's transaction, a savepoint, so that a repeat's IntegrityError leaves that
    # transaction usable; on its own the statement is atomic and needs no BEGIN / COMMIT.
    with transaction.atomic() if connection.in_atomic_block else nullcontext():
        # the answer and its passages, one round trip
        store.answer_insert(answer, _passage_fields(request))
        answer_id = answer.pk
        # robust: if the broker is down the answer is still stored (status queued) and the
        # error is logged; the client's request does not fail after its data was committed.
        # (Outside a transaction, on_commit runs it at once.)
        transaction.on_commit(lambda: enqueue.judge_answer_later(answer_id), robust=True)
    return answer


def runs_ingest(*, client: ApiClient, payloads: list[dict]) -> tuple[list[Answer], list[str]]:
    """Ingest RAG runs read from traces (reviewapp.api.otlp): the answers stored or found again (a
    re-sent trace is the same request under the same external_id), and a reason per run refused."""
    answers, refused = [], []
    for payload in payloads:
        try:
            request = api_payload.JudgeRequest.model_validate(payload)
            answers.append(answer_ingest(client=client, request=request).answer)
        except ValidationError as exc:
            first = exc.errors()[0]
            refused.append(
                f"{'.'.join(str(part) for part in first['loc']) or 'run'}: {first['msg']}"
            )
        except (InvalidRequest, ExternalIdReused) as exc:
            refused.append(str(exc))
    return answers, refused
