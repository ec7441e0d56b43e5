"""The admin's policy pages: edit and preview the policy, roll back, re-route, re-judge, job
progress."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from reviewapp.policy import selectors
from reviewapp.access import (
    admin_required,
)
from reviewapp.judging import jobs as jobs_service
from reviewapp.judging import liveness
from reviewapp.labels import missrate
from reviewapp.models import Job, Policy
from reviewapp.pages import BadRequest, bad_request, form_errors, int_or_none, posted_note
from reviewapp.policy.forms import (
    AuditSamplingForm,
    CatchForm,
    GuidelinesForm,
    PolicyForm,
    RejudgeForm,
)
from reviewapp.policy import service as policy_service
from reviewapp.quality.forms import GOLD_FIELDS, GoldPolicyForm


def _history() -> list[tuple[Policy, list]]:
    versions = list(
        Policy.objects.select_related("created_by", "example_set").order_by("-version")[:50]
    )
    return [
        (p, policy_service.policy_diff_shown(older, p))
        for p, older in zip(versions, versions[1:] + [None])
    ]


def _policy_forms(data=None, *, preview: bool = False) -> tuple[PolicyForm, AuditSamplingForm]:
    if data is None:
        initial = policy_service.policy_values(Policy.current())
        return PolicyForm(initial=initial), AuditSamplingForm(initial=initial)
    return PolicyForm(data, preview=preview), AuditSamplingForm(data)


def _policy_page(
    request: HttpRequest,
    forms: tuple[PolicyForm, AuditSamplingForm],
    status: int = 200,
    rejudge_form: RejudgeForm | None = None,
    guidelines_form: GuidelinesForm | None = None,
    gold_form: GoldPolicyForm | None = None,
) -> HttpResponse:
    current = Policy.current()
    form, audit_form = forms
    catch_form = CatchForm(request.GET)
    catch_error = "" if catch_form.is_valid() else form_errors(catch_form)
    catch = catch_form.cleaned_data.get("catch") if not catch_error else None
    curve = missrate.load_catch(current, catch=None if catch is None else catch / 100)
    chosen = curve["chosen"].point if curve["chosen"] else None
    if chosen is not None and not form.is_bound:  # the chosen threshold fills the form, unsaved
        form.initial["score_threshold"] = chosen.threshold
    return render(
        request,
        "reviewapp/policy.html",
        {
            "miss_rate": missrate.shown_miss_rates(current),
            "curve": curve,
            "catch_asked": catch,
            "catch_error": catch_error,
            "current": current,
            "gold_form": gold_form
            or GoldPolicyForm(initial={f: getattr(current, f) for f in GOLD_FIELDS}),
            "judge_in_force": selectors.judge_in_force(current),
            "form": form,
            "audit_form": audit_form,
            "rejudge_form": rejudge_form
            or RejudgeForm(
                initial={
                    "backend": settings.JUDGE_BACKEND,
                    "model": "" if settings.JUDGE_BACKEND == "offline" else settings.JUDGE_MODEL,
                }
            ),
            "guidelines_form": guidelines_form
            or GuidelinesForm(initial={"guidelines": current.guidelines}),
            "history": _history(),
            "jobs": selectors.jobs()[:10],
            "routed_earlier": selectors.routed_under_older_policy(current),
            "health": liveness.worker_status(),
        },
        status=400 if catch_error else status,
    )


@admin_required
def policy(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form, audit_form = forms = _policy_forms(request.POST)
        gold_form = GoldPolicyForm(request.POST)
        if all([form.is_valid(), audit_form.is_valid(), gold_form.is_valid()]):
            values = (
                dict(form.cleaned_data)
                | audit_form.cleaned_data
                | gold_form.values(Policy.current())
            )
            note = values.pop("note")
            created = policy_service.policy_create(user=request.user, values=values, note=note)
            messages.success(
                request, f"Policy v{created.version} is now in force for new judge runs."
            )
            return redirect("policy")
        return _policy_page(request, forms, status=400, gold_form=gold_form)
    return _policy_page(request, _policy_forms())


@require_POST
@admin_required
def policy_preview(request: HttpRequest) -> HttpResponse:
    form, audit_form = _policy_forms(request.POST, preview=True)
    # Each field's message (or none, once corrected) goes beside it, swapped out of band.
    errors = "".join(
        render_to_string("reviewapp/policy.html#field-error", {"field": field, "oob": True})
        for field in [*form, *audit_form]
    )
    if not all([form.is_valid(), audit_form.is_valid()]):
        problems = "; ".join(filter(None, [form_errors(form), form_errors(audit_form)]))
        preview = render_to_string("reviewapp/policy.html#preview", {"preview_errors": problems})
        return HttpResponse(preview + errors)
    values = {k: v for k, v in (form.cleaned_data | audit_form.cleaned_data).items() if k != "note"}
    days = min(max(int_or_none(request.POST.get("days")) or 7, 1), 90)
    preview = selectors.routing_preview(
        current=Policy.current(), candidate=Policy(**values), days=days
    )
    return HttpResponse(
        render_to_string("reviewapp/policy.html#preview", {"preview": preview}) + errors
    )


@require_POST
@admin_required
def policy_rollback(request: HttpRequest, version: int) -> HttpResponse:
    get_object_or_404(Policy, version=version)
    try:
        note = posted_note(request)
    except BadRequest as exc:
        return bad_request(request, str(exc), back=reverse("policy"))
    created = policy_service.policy_rollback(user=request.user, version=version, note=note)
    messages.success(
        request, f"Rolled back: policy v{created.version} carries v{version}'s values."
    )
    return redirect("policy")


@require_POST
@admin_required
def policy_guidelines(request: HttpRequest) -> HttpResponse:
    form = GuidelinesForm(request.POST)
    if form.is_valid():
        try:
            created = policy_service.guidelines_update(
                user=request.user,
                text=form.cleaned_data["guidelines"],
                note=form.cleaned_data["note"],
            )
        except ValueError as exc:
            form.add_error("guidelines", str(exc).removeprefix("guidelines: "))
        else:
            messages.success(
                request, f"Policy v{created.version}: reviewers now read these guidelines."
            )
            return redirect(reverse("policy") + "#guidelines")
    return _policy_page(request, _policy_forms(), status=400, guidelines_form=form)


@require_POST
@admin_required
def policy_reroute(request: HttpRequest) -> HttpResponse:
    job = jobs_service.job_start_reroute(user=request.user)
    messages.success(
        request,
        f"Re-routing {job.total} waiting answers under policy v{job.params['policy_version']}.",
    )
    return redirect(reverse("policy") + "#jobs")


@require_POST
@admin_required
def policy_rejudge(request: HttpRequest) -> HttpResponse:
    form = RejudgeForm(request.POST)
    if not form.is_valid():  # the page again, with the messages beside the fields
        return _policy_page(request, _policy_forms(), status=400, rejudge_form=form)
    data = form.cleaned_data
    ids = selectors.rejudge_answer_ids(
        since=data["since"],
        until=data["until"],
        review_status=data["review_status"],
        limit=data["limit"],
        include_golden=data["include_golden"],
    )
    offline = data["backend"] == "offline"
    job = jobs_service.job_start_rejudge(
        user=request.user,
        answer_ids=ids,
        profile=data["profile"],
        backend=data["backend"],
        model="" if offline else data["model"] or settings.JUDGE_MODEL,
        example_set=data["example_set"],
    )
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
