from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.db import DatabaseError, connection
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django_htmx.http import HttpResponseStopPolling

from reviewapp import selectors
from reviewapp.highlight import pieces
from reviewapp.models import Answer


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"


class LogoutView(auth_views.LogoutView):
    pass


@login_required
def home(request: HttpRequest) -> HttpResponse:
    answers = list(Answer.objects.select_related("client").order_by("-created_at", "-id")[:50])
    still_judging = any(a.status in (Answer.Status.QUEUED, Answer.Status.JUDGING) for a in answers)
    context = {"answers": answers, "still_judging": still_judging}
    if request.htmx:
        if not still_judging:
            response = render(request, "reviewapp/home.html#answer-table", context)
            return HttpResponseStopPolling(response.content)
        return render(request, "reviewapp/home.html#answer-table", context)
    return render(request, "reviewapp/home.html", context)


@login_required
def answer_detail(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = get_object_or_404(Answer.objects.select_related("judged_by", "client"), pk=answer_id)
    claims = selectors.shown_claims(answer)
    spans = [(c.answer_start, c.answer_end, c) for c in claims if c.answer_start is not None]
    evidence_by_pid: dict[str, list] = {}
    for claim in claims:
        for ev in claim.evidence.all():
            if ev.start is not None:
                evidence_by_pid.setdefault(ev.passage_pid, []).append((ev.start, ev.end, claim))
    passages = [(p, pieces(p.text, evidence_by_pid.get(p.pid, []))) for p in answer.passages.all()]
    context = {
        "answer": answer,
        "answer_pieces": pieces(answer.answer, spans),
        "claims": claims,
        "passages": passages,
        "run": answer.judged_by,
        "failed_run": selectors.latest_failed_run(answer) if answer.status == Answer.Status.FAILED else None,
        "findings": answer.judged_by.findings if answer.judged_by else {},
    }
    return render(request, "reviewapp/answer_detail.html", context)


def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and compose health checks: the process serves and the database answers."""
    try:
        connection.ensure_connection()
    except DatabaseError:
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")
