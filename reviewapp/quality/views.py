"""Leads' gold actions: mark an answer gold, resume a paused reviewer, the second look, the gold
export. Thin: parse, call reviewapp.quality's service or selectors, render."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from reviewapp.access import admin_required, is_lead_or_admin, lead_or_admin_required
from reviewapp.models import Answer, ReviewerPause
from reviewapp.pages import BadRequest, bad_request, posted_note
from reviewapp.quality import exports, selectors
from reviewapp.quality import service as gold_service
from reviewapp.quality.service import GoldError


@require_POST
@lead_or_admin_required
def gold_mark(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = get_object_or_404(Answer.objects.select_related("judged_by"), pk=answer_id)
    try:
        if request.POST.get("remove"):
            gold_service.gold_unmark(user=request.user, answer=answer)
            messages.success(request, f"Answer {answer.pk} is no longer handed out as gold.")
        else:
            gold = gold_service.gold_mark(user=request.user, answer=answer)
            messages.success(
                request,
                f"Answer {answer.pk} is gold: reviewers are scored on its "
                f"{len(gold.labels)} claim label{'s' if len(gold.labels) != 1 else ''}.",
            )
    except GoldError as exc:
        messages.error(request, str(exc))
    return redirect("review", answer_id=answer.pk)


@require_POST
@lead_or_admin_required
def reviewer_resume(request: HttpRequest, pause_id: int) -> HttpResponse:
    try:
        note = posted_note(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("reviewers"))
    pause = get_object_or_404(ReviewerPause.objects.select_related("reviewer"), pk=pause_id)
    if gold_service.reviewer_resume(user=request.user, pause_id=pause.pk, note=note):
        messages.success(request, f"{pause.reviewer.get_username()} is back in the live queue.")
    else:
        messages.info(request, f"{pause.reviewer.get_username()} was already resumed.")
    return redirect("reviewers")


@require_GET
@lead_or_admin_required
def second_look(request: HttpRequest, pause_id: int) -> HttpResponse:
    pause = get_object_or_404(
        ReviewerPause.objects.select_related("reviewer", "resumed_by"), pk=pause_id
    )
    return render(
        request,
        "reviewapp/second_look.html",
        {"pause": pause, "decisions": selectors.second_look(pause)},
    )


@require_GET
@admin_required
def gold_export(request: HttpRequest) -> HttpResponse:
    response = StreamingHttpResponse(exports.gold_lines(), content_type="application/x-ndjson")
    response["Content-Disposition"] = 'attachment; filename="reviewer-quality.gold.jsonl"'
    return response


def paused_banner(request) -> dict:
    """Template context: for leads and admins, every reviewer paused now (the page banner)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not is_lead_or_admin(user):
        return {}
    return {"paused_reviewers": selectors.open_pauses()}
