"""A session on the staff pages: /answers/?session=<id> lists its turns in order with the session's
verdict; the review page shows an answer's earlier turns (earlier_turns_context)."""

from __future__ import annotations

from itertools import groupby

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from reviewapp.models import Answer
from reviewapp.pages import bad_request
from reviewapp.sessions import selectors

MAX_SESSION_ID_CHARS = Answer._meta.get_field("session_id").max_length


def session(request: HttpRequest, session_id: str) -> HttpResponse:
    """Each client's turns of the session (a session id is a client's own), in order, with a
    verdict."""
    if len(session_id) > MAX_SESSION_ID_CHARS or not session_id.strip():
        return bad_request(
            request,
            f"session: at most {MAX_SESSION_ID_CHARS} characters, not blank",
            back="/answers/",
        )
    turns = list(selectors.session_turns(session_id=session_id).select_related("client")
                 .order_by("client_id", "created_at", "id"))
    groups = [(client, rows, selectors.session_verdict(rows))
              for client, rows in ((c, list(r)) for c, r in groupby(turns, key=lambda a: a.client))]
    return render(request, "reviewapp/session.html", {"session_id": session_id, "groups": groups})


def earlier_turns_context(answer: Answer) -> dict:
    turns = selectors.earlier_turns(answer)
    verdict = selectors.session_verdict([*turns, answer]) if turns else None
    return {"earlier_turns": turns, "session": verdict}
