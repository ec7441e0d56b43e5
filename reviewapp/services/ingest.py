from __future__ import annotations

import logging
from typing import NamedTuple

from django.db import IntegrityError, transaction

from judges import JudgeRequest
from judges.profiles import UnknownProfile, get_profile
from reviewapp.models import Answer, ApiClient, Passage

log = logging.getLogger(__name__)


class InvalidRequest(ValueError):
    """A payload that is well-formed but names something that does not exist."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class Ingested(NamedTuple):
    answer: Answer
    created: bool


def answer_ingest(*, client: ApiClient | None, request: JudgeRequest) -> Ingested:
    """Store an answer with its passages and queue it for judging once the rows are committed.

    The same external_id from the same client returns the answer already stored.
    """
    if request.profile is not None:
        try:
            get_profile(request.profile)
        except UnknownProfile as exc:
            raise InvalidRequest("profile", str(exc)) from None
    # Insert first and let the unique (client, external_id) constraint find a repeat: a repeat is
    # a client's retry, rare, while a look-up before every insert is a round trip on every POST.
    try:
        answer = _store(client=client, request=request)
    except IntegrityError:
        if request.external_id is None or client is None:
            raise
        # Posted before (or by a concurrent request that committed first): that is the answer.
        existing = Answer.objects.filter(client=client, external_id=request.external_id).first()
        if existing is None:
            raise  # another constraint failed
        return Ingested(existing, created=False)
    return Ingested(answer, created=True)


@transaction.atomic
def _store(*, client: ApiClient | None, request: JudgeRequest) -> Answer:
    answer = Answer.objects.create(
        client=client,
        external_id=request.external_id,
        question=request.question,
        answer=request.answer,
        prior_turns=[turn.model_dump() for turn in request.prior_turns],
        metadata=request.metadata,
        requested_profile=request.profile or "",
    )
    Passage.objects.bulk_create(
        Passage(
            answer=answer,
            pid=passage.id,
            position=position,
            text=passage.text,
            tag=passage.tag or "",
            agency=passage.agency or "",
            title=passage.title or "",
            section=passage.section or "",
            source_url=passage.source_url or "",
            fetched_at=passage.fetched_at or "",
        )
        for position, passage in enumerate(request.passages)
    )
    # robust: if the broker is down the answer is still stored (status queued) and the
    # error is logged; the client's request does not fail after its data was committed.
    transaction.on_commit(lambda: enqueue_judging(answer.pk), robust=True)
    return answer


def enqueue_judging(answer_id: int) -> None:
    from reviewapp.tasks import judge_answer

    judge_answer.delay(answer_id)
