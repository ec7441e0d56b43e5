"""The measured miss rate (/calibration/, /policy/) and the load-versus-catch curve (/policy/) on
fixed cases computed by hand (reviewapp/labels/missrate.py)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from reviewapp.labels import missrate
from reviewapp.models import ApiClient, GoldAnswer, GoldCopy, Policy, ReviewPass
from tests import factories as make

S, U, C = "SUPPORTED", "UNSUPPORTED", "CONTRADICTED"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _client(name: str) -> ApiClient:
    return ApiClient.objects.create(name=name, token_hash=name.ljust(64, "x"),
                                    token_prefix=f"cdk_{name[:4]}")


def _audited(reviewer, probability: float, *, missed: str = "", client=None,
             model: str = "gpt-4o-mini"):
    """An adjudicated answer of the audit sample; `missed`: the category of a claim a human
    flagged."""
    answer = make.answer(routing_reason="audit sample", audit_probability=probability,
                         client=client, model=model, grounding_score=0.97)
    if missed:
        make.claim(answer, S, U, reviewer=reviewer, category=missed)
    else:
        make.claim(answer, S, S, reviewer=reviewer)
    return answer


@pytest.fixture
def fixed_case(db):
    """Near the threshold (audited with chance 0.5): 4 answers, 1 missed (a price claim). Far above
    it (chance 0.1): 6 answers, 1 missed (a date claim). bot-a has the near ones and one far miss,
    bot-b five far answers without a miss; bot-b's are judged by another model."""
    rita = make.user("rita", "reviewer")
    a, b = _client("bot-a"), _client("bot-b")
    _audited(rita, 0.5, missed="price", client=a)
    for _ in range(3):
        _audited(rita, 0.5, client=a)
    _audited(rita, 0.1, missed="date", client=a)
    for _ in range(5):
        _audited(rita, 0.1, client=b, model="gpt-4o")


def test_the_miss_rate_and_its_interval_match_a_hand_computation(fixed_case):
    # Weights 1/pi: 4 x 2 and 6 x 10, sum 68; misses 2 + 10 = 12: p = 12/68 = 0.17647.
    # V = [4 (1-p)^2 + 3 * 4 p^2 + 100 (1-p)^2 + 5 * 100 p^2] / 68^2 = 0.018702: p(1-p)/V = 7.771;
    # Kish 68^2 / (4 * 4 + 6 * 100) = 7.5065, the smaller: n_eff = 7.5065.
    # Wilson at p, n_eff (z^2 = 3.841459): z^2/n = 0.511751; centre (p + z^2/2n) / (1 + z^2/n)
    # = 0.432347 / 1.511751 = 0.285991; half 1.959964 sqrt(p(1-p)/n + z^2/4n^2) / 1.511751
    # = 1.959964 * sqrt(0.019361 + 0.017044) / 1.511751 = 0.247371: [0.03862, 0.53336].
    rates = missrate.miss_rates(target=0.2)
    overall = rates["overall"]
    assert (overall.answers, overall.missed) == (10, 2)
    assert overall.value == pytest.approx(12 / 68)
    assert overall.effective == pytest.approx(68 ** 2 / 616)
    assert (overall.low, overall.high) == pytest.approx((0.03862, 0.53336), abs=1e-5)
    assert rates["above"]  # 53.3% > 20%


def test_the_miss_rate_is_broken_down_by_client_judge_and_category(fixed_case):
    rates = missrate.miss_rates(target=0.5)
    clients = {row.name: row for row in rates["by_client"]}
    # bot-a: weights 2,2,2,2 and 10; misses 2 + 10 = 12 of 18. bot-b: none of 50.
    assert clients["bot-a"].estimate.value == pytest.approx(12 / 18)
    assert clients["bot-b"].estimate.value == 0.0
    # No miss: Wilson at Kish's n = 50^2 / (5 * 100) = 5, upper bound z^2 / (5 + z^2) = 0.4345.
    assert clients["bot-b"].estimate.high == pytest.approx(3.841459 / (5 + 3.841459), abs=1e-6)
    assert clients["bot-a"].above and not clients["bot-b"].above
    judges = {row.name: row.estimate.answers for row in rates["by_judge"]}
    assert judges == {"claim_audit@v1 · gpt-4o": 5, "claim_audit@v1 · gpt-4o-mini": 5}
    categories = {row.name: row.estimate.value for row in rates["by_category"]}
    assert categories == pytest.approx({"price": 2 / 68, "date": 10 / 68})


def test_calibration_and_policy_say_the_miss_rate_passes_the_target(fixed_case, client):
    make.next_policy(miss_rate_target=0.2, note="at most 20%")
    client.force_login(make.admin())
    for url in ("/calibration/", "/policy/"):
        text = _text(client.get(url).content.decode())
        assert ("Miss rate: 17.6% [3.9%–53.3%] (2 of 10 audited answers, weighted: worth 8 answers"
                " of equal weight)") in text
        assert "Above the target of 20.0%: the interval's upper bound, 53.3%, passes it." in text
    calibration = _text(client.get("/calibration/").content.decode())
    assert "bot-a 66.7% [" in calibration
    assert "bot-b 0.0% [0.0%–43.4%] 0 of 5 above" in calibration  # 5 audits cannot rule out 43%


def test_a_gold_copy_of_an_audited_answer_counts_in_no_figure(fixed_case):
    # A reviewer's copy of a gold answer keeps its source's routing reason: it is no one's answer.
    source = _audited(make.user("ron", "reviewer"), 0.5, missed="price")
    copy = _audited(make.user("gil", "reviewer"), 0.5, missed="price")
    gold = GoldAnswer.objects.create(answer=source, run=source.judged_by, labels=[])
    GoldCopy.objects.create(gold=gold, answer=copy, reviewer=make.user("tess", "reviewer"))
    # The fixed case's 10 and the source; not the copy.
    assert missrate.miss_rates(target=None)["overall"].answers == 11


@pytest.mark.django_db
def test_without_audited_answers_the_pages_say_so_and_raise_no_alert(client):
    client.force_login(make.admin())
    make.next_policy(miss_rate_target=0.02, note="2%")
    text = _text(client.get("/policy/").content.decode())
    assert "Miss rate: no audited answer adjudicated yet" in text and "Above the target" not in text


# --- the curve ---------------------------------------------------------------------------------


@pytest.fixture
def curve_case(db):
    """tests/test_sampling.py's fixture as rows: sent by their score 0.40 (flagged by a human), 0.60
    (flagged), 0.70 (not); sent by an UNSUPPORTED claim at 0.95 (flagged); audited with chance 0.5
    at 0.85 (flagged) and 0.98 (not). One finished review took 120 s."""
    rita = make.user("rita", "reviewer")
    for score, judge_label, human, reason, chance in [
        (0.40, S, U, "score 0.40 < 0.95", None), (0.60, S, C, "score 0.60 < 0.95", None),
        (0.70, S, S, "score 0.70 < 0.95", None), (0.95, U, U, "1 UNSUPPORTED claim", None),
        (0.85, S, U, "audit sample", 0.5), (0.98, S, S, "audit sample", 0.5),
    ]:
        answer = make.answer(routing_reason=reason, grounding_score=score, audit_probability=chance)
        make.claim(answer, judge_label, human, reviewer=rita, category="other")
    done = ReviewPass.objects.create(answer=answer, reviewer=rita, status="finished")
    ReviewPass.objects.filter(pk=done.pk).update(
        finished_at=done.started_at + timedelta(seconds=120))


def test_the_curves_points_match_the_hand_computation_on_rows(curve_case):
    curve = missrate.load_catch(Policy.current())
    rows = {round(p.threshold, 2): (p.load, p.catch, p.precision, hours)
            for p, hours in curve["rows"]}
    # As in tests/test_sampling.py: weights 1,1,1,1,2,2 (total 8), flagged weight 5.
    assert rows[0.5][:3] == pytest.approx((2 / 8, 2 / 5, 1.0))
    assert rows[0.8][:3] == pytest.approx((4 / 8, 3 / 5, 3 / 4))
    assert rows[0.9][:3] == pytest.approx((6 / 8, 1.0, 5 / 6))
    assert rows[1.0][:3] == pytest.approx((1.0, 1.0, 5 / 8))
    # Hours per 30 days: load x 6 judged answers in 90 days x 30/90 x 120 s / 3600.
    assert rows[0.5][3] == pytest.approx(2 / 8 * 6 / 3 * 120 / 3600)
    assert (curve["reviewed"], curve["flagged"], curve["seconds"]) == (6, 4, 120)
    # The threshold in force, 0.95: everything but the 0.98 answer (weight 2) is sent.
    assert (curve["current"].load, curve["current"].catch) == pytest.approx((6 / 8, 1.0))


def test_choosing_a_catch_puts_the_lowest_threshold_reaching_it_in_the_form(curve_case, client):
    client.force_login(make.admin())
    page = client.get("/policy/?catch=60").content.decode()
    text = _text(page)
    # Catch reaches 3/5 once the 0.60 answer is sent: the first grid threshold above 0.60.
    assert "For catch ≥ 60.0%: threshold 0.62 , which catches 60.0%, sends 37.5% to review" in text
    assert re.search(r'name="score_threshold" value="0.62"', page)
    assert "<svg" in page and "Load, catch and precision by threshold" in page
    bad = client.get("/policy/?catch=ninety")
    assert bad.status_code == 400 and "catch: Enter a whole number." in bad.content.decode()
    too_much = client.get("/policy/?catch=101").content.decode()
    assert "catch: Ensure this value is less than or equal to 100." in too_much
