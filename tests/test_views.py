"""The web pages: sign-in required, untrusted text escaped, highlights on exact offsets."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from reviewapp.highlight import segments
from reviewapp.judging.service import answer_judge
from tests import factories as make
from tests.factories import fare_payload

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/queue/", "/answers/", "/review/1/"])
def test_strangers_are_sent_to_sign_in(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_login_page_renders(client):
    assert client.get("/accounts/login/").status_code == 200


def test_the_answer_list_shows_verdicts(client, reviewer):
    make.judged()
    response = client.get("/answers/")
    assert response.status_code == 200
    assert b"How much is a senior fare?" in response.content
    assert b"verdict-" in response.content


def test_the_answer_list_polls_while_answers_wait_and_stops_after(client, reviewer):
    answer = make.ingested()
    assert b'hx-trigger="every 2s"' in client.get("/answers/").content
    answer_judge(answer_id=answer.pk)
    response = client.get("/answers/", headers={"HX-Request": "true"})
    assert response.status_code == 286  # htmx's "stop polling"
    assert b"<html" not in response.content  # only the partial


def test_untrusted_text_is_escaped_everywhere_on_the_answer_page(client, reviewer):
    script = "<script>alert(1)</script>"
    answer = make.judged(
        question=f"Fare? {script}",
        answer=f"Seniors pay $1.00 per ride. <img src=x onerror=alert(2)> {script}",
        passages=[
            {"text": f"Riders aged 65 and older pay $1.00 per ride. {script}", "title": script}
        ],
    )
    html = client.get(f"/review/{answer.pk}/").content.decode()
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "hx-disable" in html


def test_segments_cover_the_text_exactly_with_overlapping_and_adjacent_marks():
    text = "abcdefghij"
    result = segments(text, [(2, 4, "x"), (3, 6, "overlap"), (6, 8, "adjacent")])
    assert "".join(s.text for s in result) == text
    assert [(s.text, s.marks) for s in result] == [
        ("ab", ()),
        ("c", ("x",)),
        ("d", ("x", "overlap")),
        ("ef", ("overlap",)),
        ("gh", ("adjacent",)),
        ("ij", ()),
    ]
    assert [s.start for s in result] == [0, 2, 3, 4, 6, 8]


def test_segments_clip_spans_to_the_text_and_ignore_empty_ones():
    assert [(s.text, s.marks) for s in segments("abc", [(1, 99, "m"), (2, 2, "empty")])] == [
        ("a", ()),
        ("bc", ("m",)),
    ]


def test_healthz_answers_ok_when_the_database_does(client):
    response = client.get("/healthz")
    assert (response.status_code, response.content) == (200, b"ok")


def test_create_api_token_prints_a_working_token_once(api):
    out = StringIO()
    call_command("create_api_token", "pipeline-prod", stdout=out, stderr=StringIO())
    token = out.getvalue().strip()
    assert token.startswith("cdk_")
    assert api.post(fare_payload(), token=token).status_code == 202


def test_create_api_token_refuses_a_duplicate_name():
    call_command("create_api_token", "dup", stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_api_token", "dup")


def test_pages_forbid_inline_scripts_and_htmx_only_talks_to_its_own_origin(client, reviewer):
    response = client.get("/queue/")
    policy = response["Content-Security-Policy"]
    script_src = next(part for part in policy.split("; ") if part.startswith("script-src"))
    assert script_src == "script-src 'self'"
    assert "frame-ancestors 'none'" in policy
    html = response.content.decode()
    assert '"selfRequestsOnly": true' in html and '"allowEval": false' in html
    assert "<script>" not in html  # every script is a file


@pytest.mark.parametrize(
    "question, leans",
    [
        ("She's 63", True),
        ("And for students?", True),
        ("What about the weekend pass?", True),
        ("Does it cost more at peak hours on weekdays?", True),
        ("How much does a senior pay for one bus ride?", False),
        ("Is there a bicycle rule on the express trains?", False),
    ],
)
def test_a_question_leans_on_prior_turns_when_short_or_referring_back(question, leans):
    from reviewapp.templatetags.claimdesk import leans_on_prior_turns

    assert leans_on_prior_turns(question) is leans
