"""Pairwise comparison pages: admins start one and read its results (and export them); reviewers
decide its items, blind, by keys."""

from __future__ import annotations

import csv

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from reviewapp.access import admin_required, reviewer_required
from reviewapp.models import Comparison, ComparisonItem, JudgeRun
from reviewapp.pages import bad_request
from reviewapp.pairwise import selectors, service

CHOICE_KEYS = (("left", "1", "Left"), ("right", "2", "Right"), ("both_right", "3", "Both right"),
               ("both_wrong", "4", "Both wrong"))


@admin_required
def comparisons(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        post = request.POST
        try:
            comparison = service.comparison_start(
                user=request.user,
                kind=post.get("kind", ""),
                name=post.get("name", "").strip() or "comparison",
                side_a=post.get("side_a", "").strip(),
                side_b=post.get("side_b", "").strip(),
            )
        except service.ComparisonError as exc:
            return bad_request(request, str(exc), back=reverse("comparisons"))
        return redirect("comparison_results", comparison.pk)
    configs = (
        JudgeRun.objects.filter(is_current=True).values_list("config_key", flat=True).distinct()
    )
    return render(request, "reviewapp/comparisons.html", {
        "comparisons": Comparison.objects.order_by("-created_at")[:100], "configs": sorted(configs),
        "kinds": Comparison.Kind.choices})


def _sides(item: ComparisonItem, unit: selectors.Unit):
    """(left, right) of a unit as the reviewer sees it."""
    return (unit.a, unit.b) if item.a_on_left else (unit.b, unit.a)


@reviewer_required
def compare(request: HttpRequest, comparison_id: int) -> HttpResponse:
    comparison = get_object_or_404(Comparison, pk=comparison_id)
    item = selectors.next_item(comparison, request.user)
    context = {"comparison": comparison, "item": item, "choice_keys": CHOICE_KEYS}
    if item is not None:
        decided = selectors.decided_units(item, request.user)
        answers = (
            (item.answer_a, item.answer_b) if item.a_on_left else (item.answer_b, item.answer_a)
        )
        rows = [{"unit": unit, "left": left, "right": right, "decided": unit.key in decided}
                for unit in selectors.units(item) for left, right in [_sides(item, unit)]]
        context |= {"rows": rows, "left_answer": answers[0], "right_answer": answers[1],
                    "pending": sum(1 for row in rows if row["unit"].differs and not row["decided"]),
                    "first_pending": next((row["unit"].key for row in rows
                                           if row["unit"].differs and not row["decided"]), "")}
    return render(request, "reviewapp/compare.html", context)


@require_POST
@reviewer_required
def choose(request: HttpRequest, comparison_id: int, item_id: int) -> HttpResponse:
    item = get_object_or_404(ComparisonItem.objects.select_related("comparison"), pk=item_id,
                             comparison_id=comparison_id)
    try:
        service.choice_record(user=request.user, item=item, unit=request.POST.get("unit", ""),
                              side=request.POST.get("choice", ""))
    except service.ComparisonError as exc:
        return bad_request(request, str(exc), back=reverse("compare", args=[comparison_id]))
    return redirect("compare", comparison_id)


@admin_required
def comparison_results(request: HttpRequest, comparison_id: int) -> HttpResponse:
    comparison = get_object_or_404(Comparison, pk=comparison_id)
    return render(
        request,
        "reviewapp/comparison_results.html",
        {
            "comparison": comparison,
            "tallies": selectors.results(comparison),
            "items": comparison.items.count(),
        },
    )


class _Echo:
    def write(self, value):
        return value


@admin_required
def comparison_export(request: HttpRequest, comparison_id: int) -> StreamingHttpResponse:
    comparison = get_object_or_404(Comparison, pk=comparison_id)
    writer = csv.writer(_Echo())
    header = [
        "comparison",
        "kind",
        "side_a",
        "side_b",
        "item",
        "answer_a",
        "answer_b",
        "unit",
        "category",
        "choice",
        "reviewer",
        "decided_at",
    ]

    def rows():
        yield writer.writerow(header)
        for c in selectors.export_rows(comparison):
            yield writer.writerow(
                [
                    comparison.pk,
                    comparison.kind,
                    comparison.side_a,
                    comparison.side_b,
                    c.item.position,
                    c.item.answer_a_id,
                    c.item.answer_b_id,
                    c.unit,
                    c.category,
                    c.choice,
                    c.reviewer.get_username(),
                    c.decided_at.isoformat(),
                ]
            )

    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="comparison-{comparison.pk}.csv"'
    return response
