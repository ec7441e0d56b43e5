"""Web pages. Thin: parse the request, call a selector or a service, render.

Every page works as plain HTML forms; htmx (when present) swaps the changed parts instead.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from judges.types import CATEGORIES, LABELS
from reviewapp import metrics as metrics_series
from reviewapp import selectors
from reviewapp.access import admin_required, is_admin, reviewer_required
from reviewapp.forms import CommentForm, NoteForm, PolicyForm, QueueFilterForm, RejudgeForm, form_errors
from reviewapp.highlight import Differs, segments
from reviewapp.models import Answer, Claim, Evidence, Job, Policy
from reviewapp.services import comments as comments_service
from reviewapp.services import jobs as jobs_service
from reviewapp.services import liveness
from reviewapp.services import policy as policy_service
from reviewapp.services import review as review_service
from reviewapp.services.review import ReviewError


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | {
            "sso_provider": settings.OIDC_PROVIDER_NAME if settings.SSO_ENABLED else ""}


class LogoutView(auth_views.LogoutView):
    pass


def healthz(request: HttpRequest) -> HttpResponse:
    """For load balancers and compose health checks: the process serves and the database answers."""
    try:
        connection.ensure_connection()
    except DatabaseError:
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")


def health(request: HttpRequest) -> HttpResponse:
    """For monitors: each worker's last consumed canary, stale workers, answers stuck; 503 if not ok.
    Hostnames and counts only, no answer content."""
    try:
        status = liveness.worker_status()
    except DatabaseError:
        return JsonResponse({"ok": False, "error": "database unavailable"}, status=503)
    return JsonResponse(status, status=200 if status["ok"] else 503)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """For Prometheus: counts and histograms only, no answer content; METRICS_TOKEN as a bearer token
    (a session does not open it: scrapers have none, and a reviewer needs no fleet figures)."""
    if not settings.METRICS_TOKEN:
        return HttpResponse("metrics are off: set METRICS_TOKEN to serve them", status=404, content_type="text/plain")
    given = request.headers.get("Authorization", "").encode("utf-8", "replace")
    if not hmac.compare_digest(given, f"Bearer {settings.METRICS_TOKEN}".encode()):
        response = HttpResponse("a valid METRICS_TOKEN is required: Authorization: Bearer <token>", status=401,
                                content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    try:
        body = metrics_series.exposition()
    except DatabaseError:
        return HttpResponse("database unavailable", status=503, content_type="text/plain")
    return HttpResponse(body, content_type=metrics_series.CONTENT_TYPE)


# --- answers (everything posted, newest first) ------------------------------------------------


@reviewer_required
def answers(request: HttpRequest) -> HttpResponse:
    try:
        filters = _filters(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("answers"))
    answers = selectors.filtered_answers(selectors.posted_answers(), filters=filters, user=request.user)
    page = selectors.answers_page(answers, after=request.GET.get("after", ""), before=request.GET.get("before", ""))
    still_judging = any(a.status in (Answer.Status.QUEUED, Answer.Status.JUDGING) for a in page.rows)
    context = {"page": page, "answers": page.rows, "still_judging": still_judging, "filters": filters,
               "form": QueueFilterForm(request.GET), "query_without_cursor": _query_without(request, "after", "before")}
    if request.htmx:
        response = render(request, "reviewapp/answers.html#answer-table", context)
        return response if still_judging else HttpResponseStopPolling(response.content)
    return render(request, "reviewapp/answers.html", context)


# --- the queue -------------------------------------------------------------------------------


class BadRequest(Exception):
    """A value from the request a form refused; the page answers 400 with its message."""


def bad_request(request: HttpRequest, error: str, *, back: str = "") -> HttpResponse:
    return render(request, "reviewapp/bad_request.html", {"error": error, "back": back}, status=400)


def _filters(request: HttpRequest) -> selectors.QueueFilters:
    get = request.GET
    form = QueueFilterForm(get)
    if not form.is_valid():
        raise BadRequest(f"Filters not understood: {form_errors(form)}")
    data = form.cleaned_data
    return selectors.QueueFilters(
        label=get.get("label", "") if get.get("label") in LABELS else "",
        category=get.get("category", "") if get.get("category") in CATEGORIES else "",
        client=data["client"],
        since=data["since"],
        until=data["until"],
        profile=data["profile"],
        mine=get.get("mine") == "1",
        q=data["q"],
        status=data["status"],
        verdict=data["verdict"],
        review_status=data["review_status"],
    )


def _note(request: HttpRequest) -> str:
    form = NoteForm({"note": request.POST.get("note", "")[:2000]})
    if not form.is_valid():
        raise BadRequest(f"Note not saved: {form_errors(form)}")
    return form.cleaned_data["note"]


@reviewer_required
def queue(request: HttpRequest) -> HttpResponse:
    try:
        filters = _filters(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("queue"))
    rows, cursor = selectors.queue_page(
        selectors.queue_answers(filters=filters, user=request.user), after=request.GET.get("after", "")
    )
    context = {
        "rows": rows,
        "flags": selectors.claim_labels_by_answer(rows),
        "next_cursor": cursor,
        "filters": filters,
        "counts": selectors.queue_counts(filters, request.user),
        "labels": LABELS,
        "categories": CATEGORIES,
        "query_without_cursor": _query_without(request, "after"),
        "progress": review_service.review_progress(user=request.user),
        "now": timezone.now(),
        "skips": selectors.skips_today() if is_admin(request.user) else None,
    }
    if request.htmx and request.htmx.target == "queue-table":
        # The filters changed: the table, and the counters beside it (out of band), follow them.
        table = render_to_string("reviewapp/queue.html#queue-table", context, request=request)
        counts = render_to_string("reviewapp/queue.html#queue-counts", context | {"oob": True}, request=request)
        return HttpResponse(table + counts)
    return render(request, "reviewapp/queue.html", context)


def _query_without(request: HttpRequest, *keys: str) -> str:
    query = request.GET.copy()
    for key in keys:
        query.pop(key, None)
    return query.urlencode()


@require_POST
@reviewer_required
def queue_next(request: HttpRequest) -> HttpResponse:
    """'Start reviewing' / n: lease the next free answer (within the current filters) to me."""
    try:
        filters = _filters(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("queue"))
    leaving = _int(request.POST.get("leaving"))  # `n` on a review page: the answer it leaves
    queue = selectors.queue_answers(filters=filters, user=request.user)
    answer = review_service.lease_next(user=request.user, queue=queue, leaving=leaving)
    if answer is None and leaving is not None and queue.filter(pk=leaving).exists():
        messages.info(request, f"No other answer to review here; answer {leaving}, which you left, is back in the queue.")
        return _redirect(request, reverse("queue"))
    if answer is None:
        messages.info(request, "Nothing left to review here. Well done.")
        return _redirect(request, reverse("queue"))
    return _redirect(request, reverse("review", args=[answer.pk]))


def _redirect(request: HttpRequest, url: str) -> HttpResponse:
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


# --- reviewing one answer ---------------------------------------------------------------------


def _review_context(request: HttpRequest, answer: Answer, *, selected: int | None = None) -> dict:
    claims = list(
        selectors.shown_claims_for_review(answer).select_related("decided_by").prefetch_related("evidence", "reviews__reviewer")
    )
    selected = selected if any(c.pk == selected for c in claims) else next(
        (c.pk for c in claims if c.label != "SUPPORTED" and not c.decision), claims[0].pk if claims else None
    )
    answer_spans = [(c.answer_start, c.answer_end, c) for c in claims if c.answer_start is not None]
    evidence_spans: dict[str, list] = {}
    for claim in claims:
        for ev in claim.evidence.all():
            if ev.start is not None:
                evidence_spans.setdefault(ev.passage_pid, []).append((ev.start, ev.end, claim))
                evidence_spans[ev.passage_pid] += _differing(ev, claim, "span", (ev.start, ev.end))
                if claim.answer_start is not None:
                    answer_spans += _differing(ev, claim, "answer_span", (claim.answer_start, claim.answer_end))
    run = answer.judged_by
    holds = review_service.holds_lease(user=request.user, answer=answer)
    return {
        "answer": answer,
        "answer_segments": segments(answer.answer, answer_spans),
        "claims": claims,
        "selected": selected,
        "passages": [(p, segments(p.text, evidence_spans.get(p.pid, []))) for p in answer.passages.all()],
        "has_differences": any(isinstance(mark, Differs) for _, _, mark in answer_spans)
        or any(isinstance(mark, Differs) for spans in evidence_spans.values() for _, _, mark in spans),
        "run": run,
        "failed_run": selectors.latest_failed_run(answer) if answer.status == Answer.Status.FAILED else None,
        "findings": run.findings if run else {},
        # Every other run on this answer (an escalation's first judge, re-judges), for comparison.
        "other_runs": answer.runs.exclude(pk=run.pk if run else None).order_by("started_at"),
        "labels": LABELS,
        "holds_lease": holds,
        "read_only": answer.review_status == Answer.ReviewStatus.IN_REVIEW and not holds,
        "held_by_other": not holds and review_service.lease_live(answer),
        "pending": review_service.pending_claims(answer).count(),
        "progress": review_service.review_progress(user=request.user),
        "is_admin": is_admin(request.user),
    }


def _differing(ev: Evidence, claim: Claim, side: str, within: tuple[int, int]) -> list[tuple[int, int, Differs]]:
    """The evidence's differing words on one side (`span`: the passage, `answer_span`: the answer)
    as marks, kept inside the highlight they are drawn in."""
    spans = []
    for difference in ev.differences:
        if difference.get(side):
            start, end = difference[side]
            spans.append((max(start, within[0]), min(end, within[1]), Differs(claim, difference["kind"])))
    return spans


def _load(answer_id: int) -> Answer:
    return get_object_or_404(Answer.objects.select_related("judged_by", "client", "lease_holder"), pk=answer_id)


@reviewer_required
def review(request: HttpRequest, answer_id: int) -> HttpResponse:
    # Reading never takes the lease: a prefetch or a tab of 35 links must not lock answers away
    # from everyone else. The lease comes with an explicit POST (take, next, a decision).
    answer = _load(answer_id)
    try:
        selected = int(request.GET.get("claim", ""))
    except ValueError:
        selected = None
    return render(request, "reviewapp/review.html", _review_context(request, answer, selected=selected)
                  | comments_context(answer, user=request.user))


def _after_action(request: HttpRequest, answer: Answer, *, selected: int | None, error: str = "",
                  status: int = 409) -> HttpResponse:
    """htmx: re-render the review panel (claims, highlights, progress); plain form: redirect back."""
    if not request.htmx:
        if error and status == 400:
            return bad_request(request, error, back=reverse("review", args=[answer.pk]))
        if error:
            messages.error(request, error)
        url = reverse("review", args=[answer.pk]) + (f"?claim={selected}" if selected else "")
        return redirect(url)
    answer.refresh_from_db()
    context = _review_context(request, answer, selected=selected) | {"error": error}
    return render(request, "reviewapp/review.html#review-panel", context, status=status if error else 200)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


@require_POST
@reviewer_required
def decide(request: HttpRequest, answer_id: int, claim_id: int) -> HttpResponse:
    answer = _load(answer_id)
    claim = get_object_or_404(Claim.objects.select_related("decided_by"), pk=claim_id, answer=answer)
    claim.answer = answer
    try:
        note = _note(request)
    except BadRequest as exc:
        return _after_action(request, answer, selected=claim.pk, error=str(exc), status=400)
    try:
        review_service.claim_decide(
            user=request.user,
            claim=claim,
            # An overturn button carries its label as `overturn_to`; confirm is `decision=confirm`.
            decision="overturn" if request.POST.get("overturn_to") else request.POST.get("decision", ""),
            label=request.POST.get("overturn_to") or request.POST.get("label") or None,
            note=note,
            expected_version=_int(request.POST.get("version")) or 0,
        )
    except ReviewError as exc:
        return _after_action(request, answer, selected=claim.pk, error=str(exc))
    return _after_action(request, answer, selected=_next_pending(answer, after=claim))


def _next_pending(answer: Answer, *, after: Claim) -> int | None:
    pending = review_service.pending_claims(answer).order_by("position")
    following = pending.filter(position__gt=after.position).first() or pending.first()
    return following.pk if following else after.pk


@require_POST
@reviewer_required
def undo(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = _load(answer_id)
    try:
        claim = review_service.decision_undo(user=request.user, answer=answer)
    except ReviewError as exc:
        return _after_action(request, answer, selected=None, error=str(exc))
    return _after_action(request, answer, selected=claim.pk)


@require_POST
@reviewer_required
def add_claim(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = _load(answer_id)
    start, end = _int(request.POST.get("start")), _int(request.POST.get("end"))
    text = request.POST.get("text", "")
    try:
        note = _note(request)
    except BadRequest as exc:
        return _after_action(request, answer, selected=None, error=str(exc), status=400)
    if (start is None or end is None) and text.strip():
        found = answer.answer.find(text.strip())  # the no-JavaScript path: the reviewer pastes the text
        start, end = (found, found + len(text.strip())) if found >= 0 else (None, None)
    try:
        if start is None or end is None:
            raise ReviewError("Select the answer text the claim covers (it must appear in the answer exactly).")
        claim = review_service.claim_add(user=request.user, answer=answer, start=start, end=end,
                                         label=request.POST.get("label", ""), note=note)
    except ReviewError as exc:
        return _after_action(request, answer, selected=None, error=str(exc))
    return _after_action(request, answer, selected=claim.pk)


@require_POST
@reviewer_required
def finish(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = _load(answer_id)
    try:
        review_service.answer_finish(user=request.user, answer=answer)
    except ReviewError as exc:
        return _after_action(request, answer, selected=None, error=str(exc))
    answer.refresh_from_db()
    messages.success(request, f"Answer {answer.pk} adjudicated: {answer.get_adjudicated_verdict_display()}. Next: n")
    return _after_action(request, answer, selected=None)


@require_POST
@reviewer_required
def lease_take(request: HttpRequest, answer_id: int) -> HttpResponse:
    """'Take this answer': lease the answer being read, if it waits and nobody else holds it."""
    answer = _load(answer_id)
    if not review_service.lease_take(user=request.user, answer=answer):
        messages.error(request, review_service.lease_refusal(answer))
    return _redirect(request, reverse("review", args=[answer.pk]))


@require_POST
@reviewer_required
def skip(request: HttpRequest, answer_id: int) -> HttpResponse:
    """s: pass on this answer (it goes to someone else) and open the next one."""
    answer = _load(answer_id)
    review_service.answer_skip(user=request.user, answer=answer)
    following = review_service.lease_next(user=request.user)
    messages.info(request, f"Skipped answer {answer.pk}; it goes to someone else for now.")
    if following is None:
        messages.info(request, "Nothing left to review here. Well done.")
        return _redirect(request, reverse("queue"))
    return _redirect(request, reverse("review", args=[following.pk]))


@require_POST
@reviewer_required
def lease_renew(request: HttpRequest, answer_id: int) -> HttpResponse:
    """Polled while the review page is open; 409 tells the page its lease is gone."""
    renewed = review_service.lease_renew(user=request.user, answer_id=answer_id)
    return HttpResponse(status=204 if renewed else 409)


@require_POST
@reviewer_required
def lease_release(request: HttpRequest, answer_id: int) -> HttpResponse:
    review_service.lease_release(user=request.user, answer_id=answer_id)
    if request.POST.get("beacon"):
        return HttpResponse(status=204)  # sent by the page as it closes; nobody reads the reply
    return _redirect(request, reverse("queue"))


# --- an answer's comment thread ---------------------------------------------------------------
# One htmx partial, reviewapp/_comments.html, for every page about an answer (the review page,
# the adjudication view): render it with comments_context().

COMMENTS = "reviewapp/_comments.html"


def comments_context(answer: Answer, *, user, form: CommentForm | None = None, others_hidden: bool = False) -> dict:
    """What the partial needs. `others_hidden`: show `user` only their own comments and how many
    others there are (for a blind review, until the reviewer has finished)."""
    thread = selectors.answer_comments(answer)
    shown = [c for c in thread if c.author_id == user.pk] if others_hidden else thread
    return {"answer": answer, "comments": shown, "comments_hidden": len(thread) - len(shown),
            "comment_form": form or CommentForm()}


@require_GET
@reviewer_required
def answer_comments(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = get_object_or_404(Answer, pk=answer_id)
    return render(request, COMMENTS, comments_context(answer, user=request.user))


@require_POST
@reviewer_required
def comment_add(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = get_object_or_404(Answer, pk=answer_id)
    form = CommentForm(request.POST)
    if not form.is_valid():
        if request.htmx:  # the thread again, the form keeping the text and saying what is wrong
            return render(request, COMMENTS, comments_context(answer, user=request.user, form=form), status=400)
        return bad_request(request, f"Comment not saved: {form_errors(form)}", back=reverse("review", args=[answer.pk]))
    comments_service.comment_add(user=request.user, answer=answer, body=form.cleaned_data["body"])
    if request.htmx:
        return render(request, COMMENTS, comments_context(answer, user=request.user))
    return redirect(reverse("review", args=[answer.pk]) + "#comments")


# --- policy (admins) ---------------------------------------------------------------------------


def _history() -> list[tuple[Policy, list]]:
    versions = list(Policy.objects.select_related("created_by", "example_set").order_by("-version")[:50])
    return [(p, policy_service.policy_diff_shown(older, p)) for p, older in zip(versions, versions[1:] + [None])]


def _policy_page(request: HttpRequest, form: PolicyForm, status: int = 200,
                 rejudge_form: RejudgeForm | None = None) -> HttpResponse:
    current = Policy.current()
    return render(request, "reviewapp/policy.html", {
        "current": current,
        "judge_in_force": selectors.judge_in_force(current),
        "form": form,
        "rejudge_form": rejudge_form or RejudgeForm(initial={
            "backend": settings.JUDGE_BACKEND, "model": "" if settings.JUDGE_BACKEND == "offline" else settings.JUDGE_MODEL}),
        "history": _history(),
        "jobs": selectors.jobs()[:10],
        "health": liveness.worker_status(),
    }, status=status)


@admin_required
def policy(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = PolicyForm(request.POST)
        if form.is_valid():
            values = dict(form.cleaned_data)
            note = values.pop("note")
            created = policy_service.policy_create(user=request.user, values=values, note=note)
            messages.success(request, f"Policy v{created.version} is now in force for new judge runs.")
            return redirect("policy")
        return _policy_page(request, form, status=400)
    return _policy_page(request, PolicyForm(initial=policy_service.policy_values(Policy.current())))


@require_POST
@admin_required
def policy_preview(request: HttpRequest) -> HttpResponse:
    form = PolicyForm(request.POST, preview=True)
    # Each field's message (or none, once corrected) goes beside it, swapped out of band.
    errors = "".join(render_to_string("reviewapp/policy.html#field-error", {"field": field, "oob": True})
                     for field in form)
    if not form.is_valid():
        preview = render_to_string("reviewapp/policy.html#preview", {"preview_errors": form_errors(form)})
        return HttpResponse(preview + errors)
    values = {k: v for k, v in form.cleaned_data.items() if k != "note"}
    days = min(max(_int(request.POST.get("days")) or 7, 1), 90)
    preview = selectors.routing_preview(current=Policy.current(), candidate=Policy(**values), days=days)
    return HttpResponse(render_to_string("reviewapp/policy.html#preview", {"preview": preview}) + errors)


@require_POST
@admin_required
def policy_rollback(request: HttpRequest, version: int) -> HttpResponse:
    get_object_or_404(Policy, version=version)
    try:
        note = _note(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("policy"))
    created = policy_service.policy_rollback(user=request.user, version=version, note=note)
    messages.success(request, f"Rolled back: policy v{created.version} carries v{version}'s values.")
    return redirect("policy")


@require_POST
@admin_required
def policy_reroute(request: HttpRequest) -> HttpResponse:
    job = jobs_service.job_start_reroute(user=request.user)
    messages.success(request, f"Re-routing {job.total} waiting answers under policy v{job.params['policy_version']}.")
    return redirect(reverse("policy") + "#jobs")


@require_POST
@admin_required
def policy_rejudge(request: HttpRequest) -> HttpResponse:
    form = RejudgeForm(request.POST)
    if not form.is_valid():  # the page again, with the messages beside the fields
        current = PolicyForm(initial=policy_service.policy_values(Policy.current()))
        return _policy_page(request, current, status=400, rejudge_form=form)
    data = form.cleaned_data
    ids = selectors.rejudge_answer_ids(since=data["since"], until=data["until"], review_status=data["review_status"],
                                       limit=data["limit"], include_golden=data["include_golden"])
    offline = data["backend"] == "offline"
    job = jobs_service.job_start_rejudge(user=request.user, answer_ids=ids, profile=data["profile"],
                                         backend=data["backend"],
                                         model="" if offline else data["model"] or settings.JUDGE_MODEL,
                                         example_set=data["example_set"])
    judge = "the offline judge" if offline else f"{data['example_set'] or data['profile']} (openai)"
    messages.success(request, f"Re-judging {job.total} answers with {judge}.")
    return redirect(reverse("policy") + "#jobs")


@admin_required
def job_progress(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(selectors.jobs(), pk=job_id)
    response = render(request, "reviewapp/_job.html", {"job": job})
    if job.status in (Job.Status.DONE, Job.Status.FAILED):
        return HttpResponseStopPolling(response.content)
    return response
