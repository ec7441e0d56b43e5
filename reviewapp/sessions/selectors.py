"""Reads of a session: its turns in order, their verdict, the earlier turns' passages a judge
reads."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from judges.types import MAX_PASSAGE_ID_CHARS, MAX_PASSAGES, worse_verdict
from reviewapp.models import Answer, Passage

# How many earlier turns' passages a turn's judge reads (the nearest first): a long chat's first
# turns rarely hold what its latest answer rests on, and the request stays within MAX_PASSAGES.
EARLIER_TURNS_READ = 5


def session_turns(*, session_id: str, client_id: int | None = None) -> QuerySet[Answer]:
    """The session's answers in posting order; of one client when given (ids are the client's
    own)."""
    turns = Answer.objects.filter(session_id=session_id).exclude(session_id="")
    if client_id is not None:
        turns = turns.filter(client_id=client_id)
    return turns.order_by("created_at", "id")


def earlier_turns(answer: Answer) -> list[Answer]:
    """The turns of the answer's session posted before it, oldest first ([] outside a session)."""
    if not answer.session_id:
        return []
    before = Q(created_at__lt=answer.created_at) | Q(created_at=answer.created_at, id__lt=answer.pk)
    turns = session_turns(session_id=answer.session_id, client_id=answer.client_id)
    return list(turns.filter(before).select_related("judged_by"))


@dataclass(frozen=True)
class SessionVerdict:
    # The worst turn's (a reviewer's verdict over the judge's); None while any turn is unjudged.
    verdict: str | None
    turns: int
    judged: int
    flagged_turns: int  # turns whose verdict is not GROUNDED


def turn_verdict(answer: Answer) -> str:
    return answer.adjudicated_verdict or answer.verdict


def session_verdict(turns: list[Answer]) -> SessionVerdict:
    """A session is as grounded as its worst turn: one UNGROUNDED turn makes it UNGROUNDED."""
    verdicts = [turn_verdict(turn) for turn in turns]
    known = [v for v in verdicts if v]
    worst = worse_verdict(*known) if known and len(known) == len(verdicts) else None
    return SessionVerdict(verdict=worst, turns=len(turns), judged=len(known),
                          flagged_turns=sum(1 for v in known if v != "GROUNDED"))


def earlier_turn_passages(answer: Answer, passages: list[tuple]) -> list[tuple]:
    """The passages the nearest earlier turns retrieved, as rows like `passages`
    (store.PASSAGE_COLUMNS), for the judge to read beside the answer's own: id `turn<N>:<its id>`
    (N: the turn's number in the session) and a header naming the turn, so a claim may rest on them
    and say where it found it. Data like any passage, never instructions. [] outside a session."""
    turns = earlier_turns(answer)
    if not turns:
        return []
    number = {turn.pk: position for position, turn in enumerate(turns, start=1)}
    read = turns[-EARLIER_TURNS_READ:]
    taken = {row[1] for row in passages}
    room = MAX_PASSAGES - len(passages)
    rows = []
    nearest_first = Passage.objects.filter(answer__in=read).order_by(
        "-answer__created_at", "-answer_id", "position"
    )
    for (
        row_id,
        answer_id,
        pid,
        position,
        text,
        tag,
        *header_and_source,
    ) in nearest_first.values_list(
        "id",
        "answer_id",
        "pid",
        "position",
        "text",
        "tag",
        "agency",
        "title",
        "section",
        "source_url",
        "fetched_at",
    ):
        turn = number[answer_id]
        new_pid = f"turn{turn}:{pid}"
        if len(new_pid) > MAX_PASSAGE_ID_CHARS:
            new_pid = f"turn{turn}:#{position + 1}"
        if len(rows) >= room or new_pid in taken:
            continue
        taken.add(new_pid)
        header = f"earlier turn {turn}" + (f" · {tag}" if tag else "")
        rows.append((row_id, new_pid, text, header[:200], *header_and_source))
    return rows
