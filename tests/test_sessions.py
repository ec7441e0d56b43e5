"""Sessions (issue 33 item 2): answers posted with one session_id are the turns of a conversation;
a turn's judge also reads the passages earlier turns retrieved (as data, ids `turn<N>:<id>`), the
review page shows the earlier turns with their verdicts, and /answers/?session= lists the turns in
order with the session's verdict."""

from __future__ import annotations

import pytest

from reviewapp.api.clients import api_client_create
from reviewapp.judging.service import answer_judge
from reviewapp.models import Answer
from reviewapp.sessions.selectors import session_verdict
from tests import factories as make

pytestmark = pytest.mark.django_db

TURN_1 = {
    "session_id": "chat-9",
    "question": "How much is a senior fare?",
    "passages": [
        {
            "text": "Riders aged 65 and older pay a reduced fare of $1.00 per ride.",
            "title": "Fare Policy",
        }
    ],
    "answer": "Riders aged 65 and older pay a reduced fare of $1.00 per ride.",
}
# Turn 2 retrieved only about passes; its first sentence rests on what turn 1 retrieved.
TURN_2 = {
    "session_id": "chat-9",
    "question": "And a monthly pass?",
    "passages": [
        {"text": "A 30-day pass costs $92.00 and covers all buses and trains.", "title": "Passes"}
    ],
    "answer": (
        "Riders aged 65 and older pay a reduced fare of $1.00 per ride. A 30-day pass costs $92.00."
    ),
}


def _post_and_judge(api, payload, token=None) -> Answer:
    response = api.post(payload, **({"token": token} if token else {}))
    assert response.status_code == 202, response.content
    answer = Answer.objects.get(public_id=response.json()["id"])
    answer_judge(answer_id=answer.pk)
    answer.refresh_from_db()
    return answer


def _labels(api, answer):
    return [
        (c["label"], [e["passage_id"] for e in c["evidence"]])
        for c in api.get(answer.public_id).json()["claims"]
    ]


def test_a_claim_may_rest_on_a_passage_an_earlier_turn_retrieved(api):
    _post_and_judge(api, TURN_1)
    second = _post_and_judge(api, TURN_2)
    assert _labels(api, second) == [("SUPPORTED", ["turn1:P1"]), ("SUPPORTED", ["P1"])]
    assert api.get(second.public_id).json()["session_id"] == "chat-9"


def test_without_the_session_the_same_claim_has_no_evidence(api):
    _post_and_judge(api, TURN_1)
    alone = _post_and_judge(api, TURN_2 | {"session_id": None})
    assert [label for label, _ in _labels(api, alone)] == ["UNSUPPORTED", "SUPPORTED"]
    assert api.get(alone.public_id).json()["session_id"] is None


def test_another_clients_turns_under_the_same_session_id_are_not_read(api):
    _, other_token = api_client_create(name="other-bot")
    _post_and_judge(api, TURN_1, token=other_token)
    second = _post_and_judge(api, TURN_2)
    assert [label for label, _ in _labels(api, second)] == ["UNSUPPORTED", "SUPPORTED"]


def test_the_review_page_shows_the_earlier_turns_with_their_verdicts(api, client):
    first = _post_and_judge(api, TURN_1 | {"question": "<i>senior</i> fare?"})
    second = _post_and_judge(api, TURN_2)
    client.force_login(make.user("rita", "reviewer"))
    page = client.get(f"/review/{second.pk}/").content.decode()
    assert 'aria-label="Earlier turns of this session"' in page
    assert f'href="/review/{first.pk}/"' in page and f">{first.verdict}</span>" in page
    assert "&lt;i&gt;senior&lt;/i&gt; fare?" in page and "<i>senior</i>" not in page
    assert 'href="/answers/?session=chat-9"' in page
    # The first turn has no earlier one.
    assert (
        "Earlier turns of this session" not in client.get(f"/review/{first.pk}/").content.decode()
    )


def test_the_session_list_shows_the_turns_in_order_with_the_worst_verdict(api, client):
    first = _post_and_judge(api, TURN_1)
    second = _post_and_judge(api, TURN_2 | {"answer": "A 30-day pass costs $75.00."})
    _post_and_judge(api, TURN_1 | {"session_id": "another-chat"})
    client.force_login(make.user("rita", "reviewer"))
    page = client.get("/answers/", {"session": "chat-9"}).content.decode()
    assert page.index(f'href="/review/{first.pk}/"') < page.index(f'href="/review/{second.pk}/"')
    assert page.count('href="/review/') == 2
    assert (
        second.verdict == "UNGROUNDED"
        and '<span class="verdict verdict-ungrounded">UNGROUNDED</span>' in page
    )
    assert "2 turns, 1 not grounded" in page


def test_a_session_is_as_grounded_as_its_worst_turn_and_unjudged_until_all_are():
    def turn(verdict, adjudicated=""):
        return Answer(verdict=verdict, adjudicated_verdict=adjudicated)

    assert session_verdict([turn("GROUNDED"), turn("MOSTLY_GROUNDED")]).verdict == "MOSTLY_GROUNDED"
    assert (
        session_verdict([turn("GROUNDED"), turn("GROUNDED", "UNGROUNDED")]).verdict == "UNGROUNDED"
    )
    assert session_verdict([turn("GROUNDED"), turn("")]).verdict is None


@pytest.mark.parametrize("session_id", ["", " padded", "line\nbreak", "x" * 201])
def test_a_bad_session_id_is_a_400_naming_it(api, session_id):
    response = api.post(TURN_1 | {"session_id": session_id})
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["session_id"]
