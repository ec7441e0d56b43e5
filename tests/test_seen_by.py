"""What a reviewer may see (reviewapp.review.selectors: claims_seen_by, comments_seen_by): one
review, the claims as stored; several and blind, only the reviewer's own decisions, history and
comments until they finish; several and not blind, every reviewer's decisions side by side."""

from __future__ import annotations

import pytest

from reviewapp.models import Policy
from reviewapp.policy.service import policy_create, policy_values
from reviewapp.review import comments as comments_service
from reviewapp.review import service as review_service
from reviewapp.review.selectors import claims_seen_by, comments_seen_by
from tests import factories as make

pytestmark = pytest.mark.django_db


def _routed_for(reviewers: int, *, blind: bool = True):
    """An answer the judge flagged (c1 SUPPORTED, c2 CONTRADICTED), routed for `reviewers`."""
    values = policy_values(Policy.current()) | {"reviewers_per_answer": reviewers, "blind": blind}
    policy_create(user=make.user("policy-admin", "admin"), values=values, note="seen-by tests")
    return make.in_review()


def _decide(user, answer, note: str) -> None:
    assert review_service.lease_next(user=user).pk == answer.pk
    review_service.claim_decide(user=user, claim=make.flagged(answer), decision="overturn",
                                label="UNSUPPORTED", note=note, expected_version=0)


def _flagged(seen):
    return next(c for c in seen.claims if c.cid == "c2")


def test_with_one_review_the_claims_are_shown_as_stored(rita):
    answer = _routed_for(1)
    _decide(rita, answer, "stale fare")
    seen = claims_seen_by(rita, answer)
    assert (seen.multi, seen.blind, seen.pending) == (False, False, 0)
    claim = _flagged(seen)
    assert (claim.human_label, claim.note) == ("UNSUPPORTED", "stale fare")
    assert claim.pass_decisions == []
    assert [r.reviewer for r in claim.shown_history] == [rita]


def test_a_blind_reviewer_sees_no_other_reviewers_decisions_history_or_comments(rita, ron):
    answer = _routed_for(2)
    _decide(rita, answer, "rita thinks P2 is stale")
    comments_service.comment_add(user=rita, answer=answer, body="rita's comment")
    seen = claims_seen_by(ron, answer)
    assert (seen.multi, seen.blind, seen.pending) == (True, True, 1)
    claim = _flagged(seen)
    assert (claim.human_label, claim.decision, claim.note, claim.decided_by) == ("", "", "", None)
    assert claim.shown_history == [] and claim.pass_decisions == []
    assert comments_seen_by(ron, answer) == ([], 1)
    # Alice sees her own decision, and only hers, while she has not finished either.
    mine = _flagged(claims_seen_by(rita, answer))
    assert (mine.human_label, mine.decided_by) == ("UNSUPPORTED", rita)
    assert mine.note == "rita thinks P2 is stale"
    assert [c.body for c in comments_seen_by(rita, answer)[0]] == ["rita's comment"]


def test_once_finished_a_reviewer_sees_every_reviewers_decision_side_by_side(rita, ron):
    answer = _routed_for(2)
    _decide(rita, answer, "rita: unsupported")
    _decide(ron, answer, "ron: unsupported")
    review_service.answer_finish(user=rita, answer=answer)
    seen = claims_seen_by(rita, answer)
    assert seen.blind is False
    claim = _flagged(seen)
    assert sorted(r.reviewer.username for r in claim.pass_decisions) == ["rita", "ron"]
    assert claim.reviewers_disagree is False
    assert claims_seen_by(ron, answer).blind is True  # ron has not finished


def test_with_blind_off_the_others_decisions_show_before_finishing(rita, ron):
    answer = _routed_for(2, blind=False)
    _decide(rita, answer, "rita: unsupported")
    seen = claims_seen_by(ron, answer)
    assert (seen.multi, seen.blind) == (True, False)
    assert [r.note for r in _flagged(seen).pass_decisions] == ["rita: unsupported"]
