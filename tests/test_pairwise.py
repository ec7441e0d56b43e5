"""Pairwise comparisons (issue 33 item 4): an admin compares two judges on the same answers or two
pipelines (metadata variant A/B) on the same questions; a reviewer decides the claims whose labels
differ (or the answers) by keys, blind to the sides, shuffled per pair; results are win rates with
95% Wilson intervals, per category, and a CSV export."""

from __future__ import annotations

import csv
import io

import pytest

from reviewapp.models import Claim, Comparison, ComparisonChoice, JudgeRun
from reviewapp.pairwise import selectors, service
from tests import factories as make

pytestmark = pytest.mark.django_db

OTHER_JUDGE = JudgeRun.make_config_key("claim_audit", "v2", "openai", "fake-judge")


def with_second_judge(answer, labels: dict[int, str]):
    """A current run of OTHER_JUDGE on the answer: the shown run's claims, relabelled where `labels`
    says."""
    run = JudgeRun.objects.create(
        answer=answer,
        profile="claim_audit",
        prompt_version="v2",
        backend="openai",
        model="fake-judge",
        config_key=OTHER_JUDGE,
        is_current=True,
        status="succeeded",
        verdict="GROUNDED",
        grounding_score=1.0,
    )
    for claim in Claim.objects.filter(run=answer.judged_by):
        Claim.objects.create(
            run=run,
            answer=answer,
            position=claim.position,
            cid=claim.cid,
            text=claim.text,
            answer_start=claim.answer_start,
            answer_end=claim.answer_end,
            label=labels.get(claim.position, claim.label),
            category=claim.category,
        )
    return run


@pytest.fixture
def judged_twice():
    """Two answers judged offline (c1 SUPPORTED, c2 CONTRADICTED) and by OTHER_JUDGE, which calls c2
    SUPPORTED."""
    answers = [make.judged(), make.judged()]
    for answer in answers:
        with_second_judge(answer, {1: "SUPPORTED"})
    return answers


def _start(kind="judges", **fields):
    offline = (
        JudgeRun.objects.exclude(config_key=OTHER_JUDGE)
        .values_list("config_key", flat=True)
        .first()
    )
    return service.comparison_start(user=make.admin(), kind=kind, name="v1 vs v2",
                                    **({"side_a": offline, "side_b": OTHER_JUDGE} | fields))


def test_a_judge_comparison_pairs_the_claims_and_needs_a_choice_only_where_labels_differ(
    judged_twice,
):
    comparison = _start()
    assert comparison.items.count() == 2
    units = selectors.units(comparison.items.first())
    assert [(u.a.label, u.b.label, u.differs) for u in units] == [
        ("SUPPORTED", "SUPPORTED", False), ("CONTRADICTED", "SUPPORTED", True)]


def test_sides_are_shuffled_per_pair():
    answers = [make.judged() for _ in range(24)]
    for answer in answers:
        with_second_judge(answer, {})
    assert {item.a_on_left for item in _start().items.all()} == {True, False}


@pytest.mark.parametrize("a_on_left", [True, False])
def test_a_reviewer_decides_by_keys_blind_and_the_choice_is_stored_unblinded(
    client, judged_twice, a_on_left
):
    comparison = _start()
    comparison.items.update(a_on_left=a_on_left)
    client.force_login(make.user("rita", "reviewer"))
    page = client.get(f"/compare/{comparison.pk}/").content.decode()
    assert (
        "<kbd>1</kbd> left, <kbd>2</kbd> right, <kbd>3</kbd> both right, <kbd>4</kbd> both wrong"
        in page
    )
    assert "offline" not in page and OTHER_JUDGE not in page  # blind: no side is named
    assert page.count('class="choose-form"') == 1 and 'title="the keys decide this one">▶' in page

    item = comparison.items.first()
    response = client.post(
        f"/compare/{comparison.pk}/items/{item.pk}/choose", {"unit": "a1", "choice": "left"}
    )
    assert response.status_code == 302
    stored = ComparisonChoice.objects.get()
    assert stored.choice == ("A" if a_on_left else "B") and stored.category == "price"
    # The next pair comes up; after it, nothing is left.
    second = comparison.items.last()
    client.post(
        f"/compare/{comparison.pk}/items/{second.pk}/choose", {"unit": "a1", "choice": "both_wrong"}
    )
    assert (
        "Nothing left for you to decide"
        in client.get(f"/compare/{comparison.pk}/").content.decode()
    )


def test_results_give_win_rates_with_wilson_intervals_per_category_and_export(client, judged_twice):
    comparison = _start()
    rita, ron = make.user("rita", "reviewer"), make.user("ron", "reviewer")
    first, second = comparison.items.all()
    for reviewer, item, side in (
        (rita, first, "A"),
        (rita, second, "A"),
        (ron, first, "B"),
        (ron, second, "A"),
    ):
        seen = "left" if (side == "A") == item.a_on_left else "right"
        service.choice_record(user=reviewer, item=item, unit="a1", side=seen)
    overall = selectors.results(comparison)[0]
    assert (overall.a, overall.b, overall.a_rate) == (3, 1, 0.75)
    low, high = overall.a_interval
    assert round(low, 3) == 0.301 and round(high, 3) == 0.954  # Wilson, 3 of 4, 95%

    admin = make.admin("adam")
    client.force_login(admin)
    page = client.get(f"/compare/{comparison.pk}/results").content.decode()
    assert (
        "<td>all</td><td>3</td><td>1</td><td>0</td><td>0</td>" in page
        and "0.75 (0.30–0.95)" in page
    )
    assert "<td>price</td>" in page
    export = b"".join(client.get(f"/compare/{comparison.pk}/export.csv").streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(export)))
    assert (
        len(rows) == 4 and {row["choice"] for row in rows} == {"A", "B"} and rows[0]["unit"] == "a1"
    )


def test_a_pipeline_comparison_pairs_variant_answers_to_the_same_question(client):
    a = make.judged(metadata={"variant": "A"}, question="Senior fare?")
    b = make.judged(metadata={"variant": "B"}, question="Senior fare?")
    make.judged(metadata={"variant": "A"}, question="No partner")
    comparison = _start(kind="pipelines", side_a="A", side_b="B")
    item = comparison.items.get()
    assert (item.answer_a_id, item.answer_b_id) == (a.pk, b.pk)
    assert [u.key for u in selectors.units(item)] == ["answer"]
    client.force_login(make.user("rita", "reviewer"))
    assert (
        "Which answer is better grounded?"
        in client.get(f"/compare/{comparison.pk}/").content.decode()
    )
    client.post(
        f"/compare/{comparison.pk}/items/{item.pk}/choose",
        {"unit": "answer", "choice": "both_right"},
    )
    assert selectors.results(comparison)[0].both_right == 1


@pytest.mark.parametrize(
    ("post", "message"),
    [
        # same labels
        (
            {"unit": "a0", "choice": "left"},
            "unit: not a unit of this item that needs a choice",
        ),
        # sides stay blind
        (
            {"unit": "a1", "choice": "A"},
            "choice: must be left, right, both_right or both_wrong",
        ),
    ],
)
def test_a_bad_choice_is_a_400_naming_the_field(client, judged_twice, post, message):
    comparison = _start()
    client.force_login(make.user("rita", "reviewer"))
    response = client.post(
        f"/compare/{comparison.pk}/items/{comparison.items.first().pk}/choose", post
    )
    assert response.status_code == 400 and message in response.content.decode()
    assert not ComparisonChoice.objects.exists()


def test_starting_needs_two_different_sides_with_something_to_compare(client, judged_twice):
    client.force_login(make.admin())
    same = client.post(
        "/compare/", {"name": "x", "kind": "judges", "side_a": OTHER_JUDGE, "side_b": OTHER_JUDGE}
    )
    none = client.post(
        "/compare/", {"name": "x", "kind": "pipelines", "side_a": "A", "side_b": "B"}
    )
    assert (same.status_code, none.status_code) == (400, 400)
    assert "side_b: must differ from side_a" in same.content.decode()
    assert not Comparison.objects.exists()
    assert OTHER_JUDGE in client.get("/compare/").content.decode()  # offered to pick


def test_wilson_interval():
    assert selectors.wilson(0, 0) is None
    low, high = selectors.wilson(8, 10)
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
