from judges.scoring import grounding_score, verdict_for
from judges.types import Claim


def claims(*labels: str) -> list[Claim]:
    return [Claim(id=f"c{n}", text="claim", label=label) for n, label in enumerate(labels, start=1)]


def test_the_score_is_the_share_of_supported_claims_to_four_places():
    assert grounding_score(claims("SUPPORTED", "SUPPORTED", "PARTIALLY_SUPPORTED")) == 0.6667
    assert grounding_score(claims("SUPPORTED", "UNSUPPORTED")) == 0.5


def test_an_answer_without_claims_scores_one_and_is_grounded():
    assert grounding_score([]) == 1.0
    assert verdict_for([]) == "GROUNDED"


def test_only_supported_claims_make_an_answer_grounded():
    assert verdict_for(claims("SUPPORTED", "SUPPORTED")) == "GROUNDED"


def test_any_contradiction_makes_an_answer_ungrounded():
    assert (
        verdict_for(claims("SUPPORTED", "SUPPORTED", "SUPPORTED", "CONTRADICTED")) == "UNGROUNDED"
    )


def test_fewer_than_half_supported_is_ungrounded():
    assert verdict_for(claims("SUPPORTED", "UNSUPPORTED", "PARTIALLY_SUPPORTED")) == "UNGROUNDED"


def test_half_or_more_supported_without_contradiction_is_mostly_grounded():
    assert verdict_for(claims("SUPPORTED", "UNSUPPORTED")) == "MOSTLY_GROUNDED"
    assert verdict_for(claims("SUPPORTED", "SUPPORTED", "PARTIALLY_SUPPORTED")) == "MOSTLY_GROUNDED"


def test_confidence_orders_answers_of_one_share_without_crossing_the_threshold():
    sure = claims("SUPPORTED", "SUPPORTED")
    unsure = [c.model_copy(update={"confidence": 0.0}) for c in sure]
    half = [sure[0].model_copy(update={"confidence": 0.5}), sure[1]]
    assert grounding_score(sure) == 1.0
    assert grounding_score(unsure) == 0.96  # every claim SUPPORTED: still over the seeds' 0.95
    assert grounding_score(unsure) < grounding_score(half) < grounding_score(sure)
    flagged = claims("SUPPORTED", "UNSUPPORTED")
    assert grounding_score([flagged[0].model_copy(update={"confidence": 0.0}), flagged[1]]) == 0.48
