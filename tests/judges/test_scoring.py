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
    assert verdict_for(claims("SUPPORTED", "SUPPORTED", "SUPPORTED", "CONTRADICTED")) == "UNGROUNDED"


def test_fewer_than_half_supported_is_ungrounded():
    assert verdict_for(claims("SUPPORTED", "UNSUPPORTED", "PARTIALLY_SUPPORTED")) == "UNGROUNDED"


def test_half_or_more_supported_without_contradiction_is_mostly_grounded():
    assert verdict_for(claims("SUPPORTED", "UNSUPPORTED")) == "MOSTLY_GROUNDED"
    assert verdict_for(claims("SUPPORTED", "SUPPORTED", "PARTIALLY_SUPPORTED")) == "MOSTLY_GROUNDED"
