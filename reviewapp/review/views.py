"""The reviewer's pages: the queue, the answers list, the review page and its decisions.

Thin: parse the request, call a selector or a service, render. Every page works as plain HTML
forms; htmx (when present) swaps the changed parts instead."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from judges.types import CATEGORIES, LABELS
from reviewapp.api import selectors as api_selectors
from reviewapp.review import selectors
from reviewapp.access import (
    is_admin,
    is_lead,
    is_lead_or_admin,
    lead_or_admin_required,
    reviewer_required,
)
from reviewapp.highlight import Differs, segments
from reviewapp.labels.reviewer_agreement import reviewer_agreement
from reviewapp.models import Answer, Claim, Evidence, EvidenceMark, JudgeRun, Policy, Review
from reviewapp.pages import BadRequest, bad_request, form_errors, int_or_none, posted_note
from reviewapp.quality import selectors as quality_selectors
from reviewapp.review import comments as comments_service
from reviewapp.review import drafts as drafts_service
from reviewapp.review import evidence as evidence_service
from reviewapp.review.forms import AssignForm, CommentForm, QueueFilterForm
from reviewapp.review import service as review_service
from reviewapp.review.service import ReopenUnconfirmed, ReviewError
from reviewapp.sessions import views as session_views
from reviewapp.sessions.views import earlier_turns_context


@reviewer_required
def answers(request: HttpRequest) -> HttpResponse:
    if "session" in request.GET:
        return session_views.session(request, request.GET["session"])
    try:
        filters = _filters(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("answers"))
    answers = selectors.filtered_answers(
        selectors.posted_answers(), filters=filters, user=request.user
    )
    page = selectors.answers_page(
        answers, after=request.GET.get("after", ""), before=request.GET.get("before", "")
    )
    still_judging = any(
        a.status in (Answer.Status.QUEUED, Answer.Status.JUDGING) for a in page.rows
    )
    context = {
        "page": page,
        "answers": page.rows,
        "still_judging": still_judging,
        "filters": filters,
        "form": QueueFilterForm(request.GET),
        "query_without_cursor": _query_without(request, "after", "before"),
        "reviewers": (
            review_service.assignable_reviewers() if is_lead_or_admin(request.user) else []
        ),
        "assign_page": ASSIGN_PAGE,
    }
    if request.htmx:
        response = render(request, "reviewapp/answers.html#answer-table", context)
        return response if still_judging else HttpResponseStopPolling(response.content)
    return render(request, "reviewapp/answers.html", context)


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


@reviewer_required
def queue(request: HttpRequest) -> HttpResponse:
    try:
        filters = _filters(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("queue"))
    rows, cursor = selectors.queue_page(
        selectors.queue_answers(filters=filters, user=request.user),
        after=request.GET.get("after", ""),
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
        counts = render_to_string(
            "reviewapp/queue.html#queue-counts", context | {"oob": True}, request=request
        )
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
    leaving = int_or_none(request.POST.get("leaving"))  # `n` on a review page: the answer it leaves
    queue = selectors.queue_answers(filters=filters, user=request.user)
    answer = review_service.lease_next(user=request.user, queue=queue, leaving=leaving)
    if answer is None and leaving is not None and queue.filter(pk=leaving).exists():
        messages.info(
            request,
            f"No other answer to review here; answer {leaving}, which you left, is back in the"
            " queue.",
        )
        return _redirect(request, reverse("queue"))
    if answer is None:
        return _nothing_left(request)
    return _redirect(request, reverse("review", args=[answer.pk]))


def _nothing_left(request: HttpRequest) -> HttpResponse:
    """No next answer: the queue is empty here, or the reviewer is paused from it (and told so)."""
    paused = quality_selectors.open_pause(request.user) is not None
    messages.info(
        request,
        review_service.PAUSED_MESSAGE if paused else "Nothing left to review here. Well done.",
    )
    return _redirect(request, reverse("queue"))


def _redirect(request: HttpRequest, url: str) -> HttpResponse:
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def _review_context(request: HttpRequest, answer: Answer, *, selected: int | None = None) -> dict:
    user = request.user
    seen = selectors.claims_seen_by(user, answer)
    claims = seen.claims
    drafts = drafts_service.drafts_for(user, answer)
    for claim in claims:
        # What the note box shows: the reviewer's draft (typed, not yet saved with a decision) over
        # the note.
        claim.draft = drafts.get(claim.pk)
        claim.note_shown = claim.draft if claim.draft is not None else claim.note
        claim.note_unsaved = claim.draft is not None and claim.draft != claim.note
    selected = (
        selected
        if any(c.pk == selected for c in claims)
        else next(
            (c.pk for c in claims if c.label != "SUPPORTED" and not c.decision),
            claims[0].pk if claims else None,
        )
    )
    answer_spans = [(c.answer_start, c.answer_end, c) for c in claims if c.answer_start is not None]
    evidence_spans: dict[str, list] = {}
    for claim in claims:
        for ev in claim.evidence.all():
            if ev.start is not None:
                evidence_spans.setdefault(ev.passage_pid, []).append((ev.start, ev.end, claim))
                evidence_spans[ev.passage_pid] += _differing(ev, claim, "span", (ev.start, ev.end))
                if claim.answer_start is not None:
                    answer_spans += _differing(
                        ev, claim, "answer_span", (claim.answer_start, claim.answer_end)
                    )
    run = answer.judged_by
    holds = review_service.holds_lease(user=user, answer=answer)
    adjudicating = answer.review_status == Answer.ReviewStatus.ADJUDICATING
    decidable = answer.review_status == Answer.ReviewStatus.IN_REVIEW or (
        adjudicating and is_lead(user)
    )
    read_only = decidable and not holds
    passages = list(answer.passages.all())
    return {
        "answer": answer,
        "answer_segments": segments(answer.answer, answer_spans),
        "claims": claims,
        "selected": selected,
        "passages": [(p, segments(p.text, evidence_spans.get(p.pid, []))) for p in passages],
        "passage_choices": [(p.pid, p.pid) for p in passages],
        "has_differences": any(isinstance(mark, Differs) for _, _, mark in answer_spans)
        or any(
            isinstance(mark, Differs) for spans in evidence_spans.values() for _, _, mark in spans
        ),
        "run": run,
        "failed_run": (
            api_selectors.latest_failed_run(answer)
            if answer.status == Answer.Status.FAILED
            else None
        ),
        "findings": run.findings if run else {},
        # Every other run on this answer (an escalation's first judge, re-judges), for comparison.
        "other_runs": answer.runs.exclude(pk=run.pk if run else None).order_by("started_at"),
        "labels": LABELS,
        "categories": CATEGORIES,
        "overturn_reasons": Review.Reason.choices,
        "skip_reasons": review_service.SKIP_REASONS.items(),
        "holds_lease": holds,
        "decidable": decidable,
        "adjudicating": adjudicating,
        "can_add_claim": decidable and not adjudicating and not seen.multi,
        "read_only": read_only,
        "held_by_other": read_only and not review_service.can_take(user=user, answer=answer),
        "held_message": review_service.lease_refusal(answer, user) if read_only else "",
        "pending": seen.pending,
        "decided_count": sum(1 for c in claims if c.decision),
        "multi_review": seen.multi,
        "blind_now": seen.blind,
        "progress": review_service.review_progress(user=user),
        "is_admin": is_admin(user),
        "reviewers": review_service.assignable_reviewers() if is_lead_or_admin(user) else [],
        "gold_state": quality_selectors.gold_state(user, answer),
        "evidence_marks": evidence_service.marks_by_claim(user, claims),
        "stances": EvidenceMark.Stance.choices,
        "causes": EvidenceMark.Cause.choices,
    }


def _differing(
    ev: Evidence, claim: Claim, side: str, within: tuple[int, int]
) -> list[tuple[int, int, Differs]]:
    """The evidence's differing words on one side (`span`: the passage, `answer_span`: the answer)
    as marks, kept inside the highlight they are drawn in."""
    spans = []
    for difference in ev.differences:
        if difference.get(side):
            start, end = difference[side]
            spans.append(
                (max(start, within[0]), min(end, within[1]), Differs(claim, difference["kind"]))
            )
    return spans


def _load(answer_id: int) -> Answer:
    return get_object_or_404(
        Answer.objects.select_related("judged_by", "client", "lease_holder"), pk=answer_id
    )


@reviewer_required
def review(request: HttpRequest, answer_id: int) -> HttpResponse:
    # Reading never takes the lease: a prefetch or a tab of 35 links must not lock answers away
    # from everyone else. The lease comes with an explicit POST (take, next, a decision).
    answer = _load(answer_id)
    try:
        selected = int(request.GET.get("claim", ""))
    except ValueError:
        selected = None
    context = _review_context(request, answer, selected=selected)
    if (
        request.GET.get("confirm_reopen")
        and answer.review_status == Answer.ReviewStatus.ADJUDICATED
    ):
        context["confirm_reopen"] = (
            REOPEN_QUESTION  # the no-JavaScript path of `u` on a finished answer
        )
    return render(
        request,
        "reviewapp/review.html",
        context
        | comments_context(answer, user=request.user, others_hidden=context["blind_now"])
        | earlier_turns_context(answer)
        | {"guidelines": Policy.current()},
    )


def _after_action(request: HttpRequest, answer: Answer, *, selected: int | None, error: str = "",
                  status: int = 409, confirm_reopen: str = "") -> HttpResponse:
    """htmx: re-render the review panel (claims, highlights, progress); plain form: redirect back.
    `confirm_reopen`: the question to ask before an undo reopens an adjudicated answer."""
    if not request.htmx:
        if error and status == 400:
            return bad_request(request, error, back=reverse("review", args=[answer.pk]))
        if error:
            messages.error(request, error)
        query = (
            "?confirm_reopen=1" if confirm_reopen else (f"?claim={selected}" if selected else "")
        )
        return redirect(reverse("review", args=[answer.pk]) + query)
    answer.refresh_from_db()
    context = _review_context(request, answer, selected=selected) | {
        "error": error,
        "confirm_reopen": confirm_reopen,
    }
    return render(
        request, "reviewapp/review.html#review-panel", context, status=status if error else 200
    )


REOPEN_QUESTION = (
    "This answer is adjudicated and its client has the verdict: undoing reopens it for review "
    "and tells the client (answer.reopened)."
)


@require_POST
@reviewer_required
def decide(request: HttpRequest, answer_id: int, claim_id: int) -> HttpResponse:
    answer = _load(answer_id)
    claim = get_object_or_404(
        Claim.objects.select_related("decided_by"), pk=claim_id, answer=answer
    )
    claim.answer = answer
    try:
        note = posted_note(request)
    except BadRequest as exc:
        return _after_action(request, answer, selected=claim.pk, error=str(exc), status=400)
    try:
        review_service.claim_decide(
            user=request.user,
            claim=claim,
            # An overturn button carries its label as `overturn_to`; confirm is `decision=confirm`.
            decision=(
                "overturn" if request.POST.get("overturn_to") else request.POST.get("decision", "")
            ),
            label=request.POST.get("overturn_to") or request.POST.get("label") or None,
            note=note,
            expected_version=int_or_none(request.POST.get("version")) or 0,
            reason=request.POST.get("reason", "") if request.POST.get("overturn_to") else "",
        )
    except ReviewError as exc:
        return _after_action(request, answer, selected=claim.pk, error=str(exc))
    drafts_service.drafts_clear(request.user, [claim.pk])  # the note went with the decision
    return _after_action(request, answer, selected=_next_in_order(answer, after=claim))


@require_POST
@reviewer_required
def evidence_mark(request: HttpRequest, answer_id: int, claim_id: int) -> HttpResponse:
    """On a claim: the passage span that supports or contradicts it, and the cause (or neither:
    cleared)."""
    answer = _load(answer_id)
    claim = get_object_or_404(Claim, pk=claim_id, answer=answer)
    claim.answer = answer
    start, end = (request.POST.get(name, "").strip() for name in ("start", "end"))
    if (start and int_or_none(start) is None) or (end and int_or_none(end) is None):
        return _after_action(
            request,
            answer,
            selected=claim.pk,
            status=400,
            error="start, end: whole numbers, the span's character offsets in the passage.",
        )
    try:
        evidence_service.evidence_mark(
            user=request.user,
            claim=claim,
            passage_pid=request.POST.get("passage", ""),
            start=int_or_none(start),
            end=int_or_none(end),
            stance=request.POST.get("stance", ""),
            cause=request.POST.get("cause", ""),
        )
    except ReviewError as exc:
        return _after_action(request, answer, selected=claim.pk, error=str(exc), status=400)
    return _after_action(request, answer, selected=claim.pk)


def _next_in_order(answer: Answer, *, after: Claim) -> int:
    """The claim after `after` in the answer's order, whatever its label or state: the selection
    only ever moves forward, so `c j c j` visits every claim and none is skipped unseen; on the
    last claim it stays."""
    following = (selectors.shown_claims_for_review(answer).filter(position__gt=after.position)
                 .order_by("position", "id").first())
    return following.pk if following else after.pk


@require_POST
@lead_or_admin_required
def reopen(request: HttpRequest, answer_id: int) -> HttpResponse:
    """A lead sends a settled answer of several reviewers back to adjudication (audited)."""
    answer = _load(answer_id)
    try:
        review_service.answer_reopen(user=request.user, answer=answer)
    except ReviewError as exc:
        return _after_action(request, answer, selected=None, error=str(exc))
    messages.success(request, "Reopened: decide the claims again and finish to adjudicate it anew.")
    return _after_action(request, answer, selected=None)


@require_POST
@reviewer_required
def note_draft(request: HttpRequest, answer_id: int, claim_id: int) -> HttpResponse:
    """The note box of a claim, as it is typed (the page posts it a moment after each change):
    204."""
    claim = get_object_or_404(Claim, pk=claim_id, answer_id=answer_id)
    try:
        note = posted_note(request)
    except BadRequest as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    drafts_service.draft_save(user=request.user, claim=claim, text=note)
    return HttpResponse(status=204)


@require_POST
@reviewer_required
def note_edit(request: HttpRequest, answer_id: int, claim_id: int) -> HttpResponse:
    """"Save note" on a decided claim: its decision again, with the note now in the box."""
    answer = _load(answer_id)
    claim = get_object_or_404(
        Claim.objects.select_related("decided_by"), pk=claim_id, answer=answer
    )
    claim.answer = answer
    try:
        note = posted_note(request)
        drafts_service.note_edit(user=request.user, claim=claim, note=note)
    except BadRequest as exc:
        return _after_action(request, answer, selected=claim.pk, error=str(exc), status=400)
    except ReviewError as exc:
        return _after_action(request, answer, selected=claim.pk, error=str(exc))
    return _after_action(request, answer, selected=claim.pk)


@require_POST
@reviewer_required
def undo(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = _load(answer_id)
    was_adjudicated = answer.review_status == Answer.ReviewStatus.ADJUDICATED
    try:
        claim = review_service.decision_undo(user=request.user, answer=answer,
                                             reopen=request.POST.get("reopen") == "1")
    except ReopenUnconfirmed:
        return _after_action(request, answer, selected=None, confirm_reopen=REOPEN_QUESTION)
    except ReviewError as exc:
        return _after_action(request, answer, selected=None, error=str(exc))
    if was_adjudicated:
        messages.info(request, f"Answer {answer.pk} reopened for review; its client was told "
                               "(answer.reopened).")
    return _after_action(request, answer, selected=claim.pk)


@require_POST
@reviewer_required
def add_claim(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = _load(answer_id)
    start, end = int_or_none(request.POST.get("start")), int_or_none(request.POST.get("end"))
    text = request.POST.get("text", "")
    try:
        note = posted_note(request)
    except BadRequest as exc:
        return _after_action(request, answer, selected=None, error=str(exc), status=400)
    if (start is None or end is None) and text.strip():
        # the no-JavaScript path: the reviewer pastes the text
        found = answer.answer.find(text.strip())
        start, end = (found, found + len(text.strip())) if found >= 0 else (None, None)
    try:
        if start is None or end is None:
            raise ReviewError(
                "Select the answer text the claim covers (it must appear in the answer exactly)."
            )
        claim = review_service.claim_add(user=request.user, answer=answer, start=start, end=end,
                                         label=request.POST.get("label", ""), note=note,
                                         category=request.POST.get("category") or "other")
    except ReviewError as exc:
        return _after_action(request, answer, selected=None, error=str(exc))
    return _after_action(request, answer, selected=claim.pk)


@reviewer_required
def run_compare(request: HttpRequest, answer_id: int, run_id: int) -> HttpResponse:
    """Another judge run on an answer (a re-judge's) beside the answer's own, claim by claim."""
    answer = _load(answer_id)
    other = get_object_or_404(JudgeRun.objects.select_related("job"), pk=run_id, answer=answer)
    rows = selectors.run_comparison(answer, other)
    return render(request, "reviewapp/run_compare.html", {
        "answer": answer, "shown": answer.judged_by, "other": other, "rows": rows,
        "differing": sum(row.differs for row in rows),
    })


@require_POST
@reviewer_required
def finish(request: HttpRequest, answer_id: int) -> HttpResponse:
    answer = _load(answer_id)
    try:
        with transaction.atomic():  # the drafts go with the finish, or stay drafts
            notes = drafts_service.drafts_for_finish(user=request.user, answer=answer)
            review_service.answer_finish(user=request.user, answer=answer, notes=notes)
            drafts_service.drafts_clear(request.user, notes)
    except ReviewError as exc:
        return _after_action(request, answer, selected=None, error=str(exc))
    answer.refresh_from_db()
    if answer.review_status == Answer.ReviewStatus.ADJUDICATED:
        messages.success(
            request,
            f"Answer {answer.pk} adjudicated: {answer.get_adjudicated_verdict_display()}. Next: n",
        )
    elif answer.review_status == Answer.ReviewStatus.ADJUDICATING:
        messages.success(
            request,
            f"Your review of answer {answer.pk} is in; the reviewers disagree, so a lead decides."
            " Next: n",
        )
    else:
        messages.success(
            request,
            f"Your review of answer {answer.pk} is in; it waits for another reviewer. Next: n",
        )
    if (
        request.POST.get("then") == "next"
    ):  # the page's setting: go on to the next answer (else stay)
        following = review_service.lease_next(user=request.user, leaving=answer.pk)
        if following is None:
            return _nothing_left(request)
        return _redirect(request, reverse("review", args=[following.pk]))
    return _after_action(request, answer, selected=None)


@require_POST
@reviewer_required
def lease_take(request: HttpRequest, answer_id: int) -> HttpResponse:
    """'Take this answer': lease the answer being read, if it waits and nobody else holds it."""
    answer = _load(answer_id)
    if not review_service.lease_take(user=request.user, answer=answer):
        messages.error(request, review_service.lease_refusal(answer, request.user))
    return _redirect(request, reverse("review", args=[answer.pk]))


@require_POST
@reviewer_required
def skip(request: HttpRequest, answer_id: int) -> HttpResponse:
    """s: pass on this answer (it goes to someone else) and open the next one."""
    answer = _load(answer_id)
    try:
        review_service.answer_skip(
            user=request.user, answer=answer, reason=request.POST.get("reason", "")
        )
    except ReviewError as exc:
        return bad_request(request, str(exc), back=reverse("review", args=[answer.pk]))
    following = review_service.lease_next(user=request.user)
    messages.info(request, f"Skipped answer {answer.pk}; it goes to someone else for now.")
    if following is None:
        return _nothing_left(request)
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


COMMENTS = "reviewapp/_comments.html"


def comments_context(
    answer: Answer, *, user, form: CommentForm | None = None, others_hidden: bool | None = None
) -> dict:
    """What the partial needs. `others_hidden`: show `user` only their own comments and how many
    others there are (a blind review, until the reviewer has finished; found out when not given)."""
    shown, hidden = selectors.comments_seen_by(user, answer, blind=others_hidden)
    return {"answer": answer, "comments": shown, "comments_hidden": hidden,
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
            return render(request, COMMENTS, comments_context(answer, user=request.user, form=form)
                          | {"comments_open": True}, status=400)
        return bad_request(
            request,
            f"Comment not saved: {form_errors(form)}",
            back=reverse("review", args=[answer.pk]),
        )
    comments_service.comment_add(user=request.user, answer=answer, body=form.cleaned_data["body"])
    if request.htmx:  # the drawer stays open on the thread just written to
        context = comments_context(answer, user=request.user) | {"comments_open": True}
        return render(request, COMMENTS, context)
    return redirect(reverse("review", args=[answer.pk]) + "#comments")


@lead_or_admin_required
def adjudication(request: HttpRequest) -> HttpResponse:
    """Answers whose reviewers disagree, for a lead to settle on /review/<id>/."""
    return render(
        request,
        "reviewapp/adjudication.html",
        {"rows": selectors.adjudication_queue()[:200], "now": timezone.now()},
    )


ASSIGN_PAGE = selectors.QUEUE_PAGE_SIZE  # more answers than a page at once: the lead confirms


def _same_site(request: HttpRequest, url: str) -> str:
    """`url` when it is a path on this site: "//evil.example/" also starts with a slash."""
    safe = url_has_allowed_host_and_scheme(
        url, allowed_hosts=None, require_https=request.is_secure()
    )
    return url if safe and url.startswith("/") and not url.startswith("//") else ""


@require_POST
@lead_or_admin_required
def assign(request: HttpRequest) -> HttpResponse:
    """Assign one answer (`answer`) or the answers the /answers/ filters match to a reviewer."""
    form = AssignForm(request.POST)
    back = _same_site(request, request.POST.get("back", "")) or reverse("answers")
    if not form.is_valid():
        return bad_request(request, f"Not assigned: {form_errors(form)}", back=back)
    data = form.cleaned_data
    if data["answer"]:
        ids = [data["answer"]]
    else:
        try:
            filters = _filters(request)
        except BadRequest as exc:
            return bad_request(request, str(exc), back=back)
        waiting = selectors.filtered_answers(
            selectors.posted_answers(), filters=filters, user=request.user
        )
        ids = list(waiting.filter(review_status=Answer.ReviewStatus.IN_REVIEW).in_queue_order()
                   .values_list("pk", flat=True)[: review_service.ASSIGN_MAX])
        if len(ids) > ASSIGN_PAGE and not request.POST.get("confirm_many"):
            return bad_request(
                request,
                f"Not assigned: these filters match {len(ids)} waiting answers, "
                f"more than one page ({ASSIGN_PAGE}). Tick \"more than one page\" "
                "to assign them all, or narrow the filters.",
                back=back,
            )
    try:
        count = review_service.answers_assign(
            by=request.user, reviewer=data["reviewer"], answer_ids=ids
        )
    except ReviewError as exc:
        return bad_request(request, str(exc), back=back)
    messages.success(
        request,
        f"Assigned {count} of {len(ids)} answer{'s' if len(ids) != 1 else ''} "
        f"to {data['reviewer'].get_username()}.",
    )
    return redirect(back)


@lead_or_admin_required
def reviewers(request: HttpRequest) -> HttpResponse:
    """Each reviewer's progress, and their agreement with the final labels several reviewers
    reached."""
    agreement = {a.reviewer: a for a in reviewer_agreement().values()}
    return render(
        request,
        "reviewapp/reviewers.html",
        {
            "rows": selectors.reviewer_progress(),
            "agreement_by_reviewer": agreement,
            "gold_quality": quality_selectors.gold_quality(),
            "policy": Policy.current(),
        },
    )
