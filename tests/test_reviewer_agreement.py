"""Agreement between reviewers read from Review rows (reviewapp/labels/reviewer_agreement.py) and
shown on /calibration/, with judge-versus-consensus beside judge-versus-single."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewapp.labels import calibration
from reviewapp.models import Claim, Review
from reviewapp.labels.reviewer_agreement import (
    every_current_decision,
    reviewer_agreement,
    reviewers_agreement,
)
from tests import factories as make

pytestmark = pytest.mark.django_db

S, P, C, U = "SUPPORTED", "PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED"


@pytest.fixture(autouse=True)
def _fewer_resamples(settings):
    settings.AGREEMENT_RESAMPLES = 200  # the intervals' maths is tests/test_agreement.py's


def decide(
    claim: Claim, reviewer, label: str, *, mode: str = "explicit", stage: str = "review"
) -> Review:
    """A reviewer's decision as its Review row; a blank label undoes the reviewer's latest decision
    on the claim, as the review service writes an undo (it names the row it undoes)."""
    undoes = None
    if not label:
        undoes = (
            Review.objects.filter(claim=claim, reviewer=reviewer, stage=stage)
            .order_by("-id")
            .first()
        )
    decision = "undo" if not label else "confirm" if label == claim.label else "overturn"
    return Review.objects.create(
        claim=claim,
        answer=claim.answer,
        reviewer=reviewer,
        decision=decision,
        final_label=label,
        claim_version=1,
        decision_mode=mode,
        stage=stage,
        undoes=undoes,
    )


def claim(judge: str, final: str = "", *, method: str = "", category: str = "price") -> Claim:
    row = make.claim(make.answer(), judge, final, category=category)
    if method:
        Claim.objects.filter(pk=row.pk).update(consensus_method=method)
        row.refresh_from_db()
    return row


@pytest.fixture
def team():
    return {name: make.user(name, "reviewer") for name in ("rita", "ron", "rosa")}


def _double_review(team):
    """rita and ron on four claims: (S,S) (U,U) (U,S) (C,C), so kappa 7/11 (see below); plus what
    must not count: an earlier decision replaced, an undecided-again one, a lead's settlement, a
    bulk confirm and a claim a reviewer added."""
    rita, ron, rosa = team["rita"], team["ron"], team["rosa"]
    pairs = [
        (S, S, S, "unanimous"),
        (U, U, U, "unanimous"),
        (U, S, U, "lead"),
        (C, C, C, "unanimous"),
    ]
    claims = []
    for first, second, final, method in pairs:
        c = claim(U, final, method=method)
        decide(c, rita, first)
        decide(c, ron, second)
        claims.append(c)
    decide(claims[2], rita, S)
    decide(claims[2], rita, U)  # rita changed her mind: her latest decision counts
    decide(claims[2], team["rosa"], U)
    decide(claims[2], team["rosa"], "")  # rosa is undecided again: no decision
    # a settlement, not a vote
    decide(claims[2], make.user("lena", "lead"), U, stage="adjudication")
    bulk = claim(S, S, method="unanimous")
    decide(bulk, rita, S)
    decide(bulk, ron, S, mode="bulk")
    added = make.claim(make.answer(), U, U, origin="reviewer")
    decide(added, rosa, U)
    decide(added, rita, S)
    return claims


def test_a_reviewers_decision_is_their_latest_review_row_and_adjudication_is_no_vote(team):
    claims = _double_review(team)
    decisions = {(d.claim_id, d.reviewer): d.label for d in every_current_decision()}
    assert decisions[claims[2].pk, "rita"] == U
    assert (claims[2].pk, "rosa") not in decisions and (claims[2].pk, "lena") not in decisions
    # the added claim is not counted
    assert {d.reviewer for d in every_current_decision()} == {
        "rita",
        "ron",
    }


def test_pair_kappa_alpha_and_percent_agreement_match_hand_computed_values(team):
    _double_review(team)
    figures = reviewers_agreement()
    [pair] = figures["pairs"]
    assert (pair.first, pair.second, pair.shared, pair.bulk.left_out) == ("rita", "ron", 5, 1)
    # rita S U U C, ron S U S C: po 3/4; rita's shares S 1 U 2 C 1, ron's S 2 U 1 C 1, so
    # pe = (1*2 + 2*1 + 1*1) / 16 = 5/16 and kappa = (12 - 5) / (16 - 5) = 7/11
    assert pair.figures.claims == 4
    assert pair.figures.percent.value == pytest.approx(0.75)
    assert pair.figures.kappa.value == pytest.approx(7 / 11)
    # alpha: n 8 values (S 3, U 3, C 2), one disagreeing claim adds 2: 1 - 7 * 2 / (64 - 9 - 9 - 4)
    assert pair.figures.alpha.value == pytest.approx(1 - 14 / 42)
    # Fleiss' kappa over both (Scott's pi for two): pe from all 8 ratings, S 3 U 3 C 2 -> 22/64
    assert figures["overall"].kappa.value == pytest.approx((0.75 - 22 / 64) / (1 - 22 / 64))
    assert (figures["bulk"].left_out, figures["bulk"].of) == (1, 10)
    low, high = pair.figures.kappa.low, pair.figures.kappa.high
    assert low <= 7 / 11 <= high


def test_bulk_decisions_count_when_asked(team):
    _double_review(team)
    [pair] = reviewers_agreement(include_bulk=True)["pairs"]
    assert pair.figures.claims == 5 and pair.figures.percent.value == pytest.approx(0.8)


def test_per_label_and_per_category_figures(team):
    _double_review(team)
    for c in Claim.objects.filter(human_label=C):
        Claim.objects.filter(pk=c.pk).update(category="age")
    figures = reviewers_agreement()
    by_label = dict(figures["by_label"])
    # CONTRADICTED or not: both said C on the same claim and not-C on the three others
    assert by_label[C].kappa.value == pytest.approx(1.0) and by_label[C].percent.value == 1.0
    assert (
        by_label[P].kappa.value is None
        and "every rating is not PARTIALLY_SUPPORTED" in by_label[P].kappa.reason
    )
    by_category = dict(figures["by_category"])
    assert by_category["age"].claims == 1 and by_category["age"].kappa.value is None
    assert by_category["age"].kappa.reason.startswith("every rating is CONTRADICTED")
    assert by_category["price"].claims == 3


def test_each_reviewers_agreement_with_the_final_label(team):
    _double_review(team)
    single = claim(U, S, method="single")  # one reviewer decided alone: the final label is theirs
    decide(single, team["ron"], S)
    rows = {r.reviewer: r for r in reviewer_agreement().values()}
    # final labels S U U C (and S on the claim ron accepted in bulk): rita S U U C S keeps all five,
    # ron S U S C three of four
    assert (rows["rita"].claims, rows["rita"].agreed, rows["rita"].percent.value) == (5, 5, 1.0)
    assert (rows["ron"].claims, rows["ron"].agreed, rows["ron"].percent.value) == (4, 3, 0.75)
    assert (rows["ron"].bulk.left_out, rows["ron"].bulk.of) == (1, 5)
    assert rows["rita"].kappa.value == pytest.approx(1.0)
    only_ron = reviewer_agreement(reviewer_ids=[team["ron"].pk])
    assert list(only_ron) == [team["ron"].pk] and only_ron[team["ron"].pk].agreed == 3


def test_the_judge_is_measured_against_single_and_consensus_final_labels_apart():
    rita = make.user("rita", "reviewer")
    for judge, human, method in [
        (U, U, "single"),
        (U, S, ""),
        (S, S, "majority"),
        (U, U, "lead"),
        (C, U, "unanimous"),
    ]:
        make.claim(make.answer(), judge, human, reviewer=rita)
        Claim.objects.filter(human_label=human, consensus_method="", label=judge).update(
            consensus_method=method
        )
    [row] = calibration.judge_agreement(calibration.audit_misses())
    single, consensus = row["by_method"]["single"], row["by_method"]["consensus"]
    assert (single["claims"], single["agreement"].value) == (2, 0.5)
    assert (consensus["claims"], consensus["agreement"].value) == (3, pytest.approx(2 / 3))
    assert row["claims"] == 5


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_calibration_page_shows_reviewer_agreement_with_intervals_and_reasons(client, team):
    _double_review(team)
    client.force_login(make.admin())
    html = client.get("/calibration/").content.decode()
    text = _text(html)
    assert "Agreement between reviewers" in text
    assert re.search(
        r"rita × ron 5 1 4 75\.0% \[[\d.]+%–100\.0%\] 0\.64 \[-?[\d.]+–1\.00\] 0\.67 \[", text
    ), text
    # PARTIALLY_SUPPORTED
    assert (
        "n/a (every rating is not PARTIALLY_SUPPORTED: agreement beyond chance is undefined)"
        in text
    )
    assert "rita 5 5 100.0%" in text and "ron 4 3 75.0%" in text
    assert 'id="judge-vs-consensus"' in html


def test_the_page_is_honest_with_no_double_review(client):
    client.force_login(make.admin())
    text = _text(client.get("/calibration/").content.decode())
    assert "No claim decided by two reviewers yet." in text
    assert "n/a (nothing to compare: no claim with two ratings)" in text


def _page_queries() -> int:
    with CaptureQueriesContext(connection) as queries:
        calibration.calibration_page()
    return len(queries)


def test_the_page_costs_the_same_queries_whatever_the_number_of_reviewers(team):
    _double_review(team)
    few = _page_queries()
    more = [make.user(f"rev{i}", "reviewer") for i in range(5)]
    for i in range(6):
        c = claim(U, U, method="majority", category=["price", "age", "date"][i % 3])
        for reviewer in more[: 2 + i % 4]:
            decide(c, reviewer, U if i % 2 else S)
    assert len(reviewers_agreement()["pairs"]) > 5
    assert _page_queries() == few
