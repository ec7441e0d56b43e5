"""Admin pages for worked examples: /examples/ lists overturned claims to pick from and the sets
made so far; /examples/<id>/ shows one set and what it carries. Thin: parse, call, render."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from judges.examples import MAX_EXAMPLES
from reviewapp.labels import selectors
from reviewapp.access import admin_required
from reviewapp.models import ExampleSet, Policy
from reviewapp.labels import examples as examples_service
from reviewapp.labels.forms import ExampleSetForm, ProfileFilterForm
from reviewapp.pages import bad_request, form_errors


def _ids(values: list[str]) -> list[int] | None:
    try:
        return [int(value) for value in values]
    except ValueError:
        return None


def _page(
    request: HttpRequest, form: ExampleSetForm, *, error: str = "", status: int = 200
) -> HttpResponse:
    filter_form = ProfileFilterForm(request.GET)
    if not filter_form.is_valid():
        return bad_request(
            request, f"Filter not understood: {form_errors(filter_form)}", back=reverse("examples")
        )
    profile = filter_form.cleaned_data["profile"]
    claims = selectors.overturned_claims(profile=profile)
    # After a refused POST the page comes back with the admin's ticks and reasons as they were.
    picked = set(request.POST.getlist("claim"))
    rows = [(claim, str(claim.pk) in picked, request.POST.get(f"reason-{claim.pk}", claim.note))
            for claim in claims[: selectors.EXAMPLE_CANDIDATES_SHOWN]]
    return render(request, "reviewapp/examples.html", {
        "form": form,
        "error": error,
        "profile": profile,
        "profiles": selectors.overturned_profiles(),
        "rows": rows,
        "count": claims.count(),
        "sets": ExampleSet.objects.select_related("created_by").order_by("-created_at", "-id")[:50],
        "max_examples": MAX_EXAMPLES,
    }, status=status)


@admin_required
def examples(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request, ExampleSetForm(initial={"profile": request.GET.get("profile", "")}))
    form = ExampleSetForm(request.POST)
    claim_ids = _ids(request.POST.getlist("claim"))
    if not form.is_valid() or claim_ids is None:
        return _page(
            request, form, error="" if claim_ids is not None else "Unknown claim ids.", status=400
        )
    reasons = {
        claim_id: request.POST.get(f"reason-{claim_id}", "").strip() for claim_id in claim_ids
    }
    try:
        created = examples_service.example_set_create(
            user=request.user,
            profile=form.cleaned_data["profile"],
            claim_ids=claim_ids,
            reasons=reasons,
            note=form.cleaned_data["note"],
        )
    except examples_service.ExampleSetError as exc:
        return _page(request, form, error=str(exc), status=400)
    messages.success(request, f"Created {created}: select it on the policy page to judge with it.")
    return redirect("example_set", set_id=created.pk)


@admin_required
def example_set(request: HttpRequest, set_id: int) -> HttpResponse:
    chosen = get_object_or_404(ExampleSet.objects.select_related("created_by"), pk=set_id)
    return render(request, "reviewapp/example_set.html", {
        "set": chosen,
        "examples": chosen.examples.select_related("source_claim"),
        "in_force": Policy.current().example_set_id == chosen.pk,
        "runs": chosen.runs.count(),
    })


@admin_required
def example_set_json(request: HttpRequest, set_id: int) -> HttpResponse:
    """The set as `python -m judges check|eval --examples SET.json` reads it."""
    chosen = get_object_or_404(ExampleSet, pk=set_id)
    response = JsonResponse(examples_service.worked_examples_for(chosen).model_dump(mode="json"),
                            json_dumps_params={"indent": 2, "ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{chosen}.json"'
    return response
