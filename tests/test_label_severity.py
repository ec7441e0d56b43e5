"""How bad a label is, stated once (judges.types.LABEL_SEVERITY): a claim's colour on the review
page, its answer's place in the queue and the answer's verdict all read the same order."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from judges.scoring import grounding_score, verdict_for
from judges.types import LABEL_SEVERITY, LABELS, VERDICT_SEVERITY, Claim, worse_label
from reviewapp.policy.routing import decide_route
from reviewapp.templatetags.claimdesk import worst_label

POLICY = SimpleNamespace(
    score_threshold=0.95,
    blocking_labels=["PARTIALLY_SUPPORTED", "UNSUPPORTED", "CONTRADICTED"],
    critical_categories=[],
    critical_single_claim_blocks=False,
    audit_sample_rate=0.0,
    audit_near_rate=0.0,
    audit_near_margin=0.0,
    audit_confidence_below=0.0,
    reviewers_per_answer=1,
    multi_review_scope="all",
    multi_review_share=1.0,
    supported_confidence_floor=0.0,
)


def _seen(labels):
    """What the three readers make of an answer whose claims carry these labels."""
    claims = [Claim(id=f"c{n}", text="x", label=label) for n, label in enumerate(labels, start=1)]
    colour = worst_label([SimpleNamespace(label=label, human_label="") for label in labels])
    route = decide_route(policy=POLICY, answer_id=1, grounding_score=grounding_score(claims),
                         claims=[(label, "other") for label in labels])
    return colour, route.priority, verdict_for(claims)


def test_contradicted_is_worse_than_unsupported_everywhere():
    assert worse_label("UNSUPPORTED", "CONTRADICTED") == "CONTRADICTED"
    colour, priority, verdict = _seen(["UNSUPPORTED", "CONTRADICTED"])
    assert colour == "CONTRADICTED"
    assert priority == _seen(["CONTRADICTED"])[1] > _seen(["UNSUPPORTED"])[1]
    assert verdict == "UNGROUNDED"


@pytest.mark.parametrize("labels", list(itertools.combinations_with_replacement(LABELS, 2)))
def test_the_worst_claim_colours_the_highlight_and_sets_the_queue_priority(labels):
    colour, priority, _ = _seen(labels)
    assert colour == worse_label(*labels)
    assert priority == _seen([colour])[1]


def test_one_claim_answers_rank_alike_by_colour_by_queue_priority_and_by_verdict():
    by_severity = sorted(LABELS, key=LABEL_SEVERITY.__getitem__)
    seen = [_seen([label]) for label in by_severity]
    assert [colour for colour, _, _ in seen] == by_severity
    priorities = [priority for _, priority, _ in seen]
    # strictly rising: every step worse is reviewed sooner
    assert priorities == sorted(set(priorities))
    verdicts = [VERDICT_SEVERITY[verdict] for _, _, verdict in seen]
    assert verdicts == sorted(verdicts) and verdicts[0] < verdicts[-1]
