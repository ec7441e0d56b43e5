"""An answer's comment thread: reviewers and leads write, every comment is audited and escaped,
bad input is a readable 400, and the thread is append-only."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction

from reviewapp.models import AnswerComment, AuditEvent
from reviewapp.review.comments import COMMENTED
from tests import factories as make

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true", "HX-Target": "comments"}
SCRIPT = '<script>alert("x")</script> & <b onmouseover="x()">bold</b>'


@pytest.fixture
def answer():
    return make.answer(review_status="in_review")


def _add(client, answer, body, **headers):
    return client.post(f"/review/{answer.pk}/comments/add", {"body": body}, headers=headers)


def test_a_reviewer_comments_and_the_thread_shows_it_escaped_on_the_review_page(client, answer):
    rita = make.user("rita", "reviewer")
    client.force_login(rita)
    response = _add(client, answer, SCRIPT)
    assert response.status_code == 302 and response["Location"] == f"/review/{answer.pk}/#comments"
    page = client.get(f"/review/{answer.pk}/").content.decode()
    assert (
        '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b'
        ' onmouseover=&quot;x()&quot;&gt;bold&lt;/b&gt;'
        in page
    )
    assert "<script>alert" not in page and 'onmouseover="x()"' not in page
    [comment] = AnswerComment.objects.all()
    assert (comment.author, comment.body, comment.answer) == (rita, SCRIPT, answer)


def test_every_comment_is_an_audit_event(client, answer):
    lena = make.user("lena", "lead")  # a lead is a reviewer too
    client.force_login(lena)
    assert _add(client, answer, "  c2 needs a second look  ", **HTMX).status_code == 200
    [comment] = AnswerComment.objects.all()
    assert comment.body == "c2 needs a second look"  # stripped
    [event] = AuditEvent.objects.filter(action=COMMENTED)
    assert (event.actor, event.object_type, event.object_id) == (lena, "answer", str(answer.pk))
    assert event.after == {"comment": comment.pk, "characters": len(comment.body)}


def test_htmx_gets_the_thread_back_as_a_partial(client, answer):
    client.force_login(make.user("rita", "reviewer"))
    _add(client, answer, "first", **HTMX)
    html = _add(client, answer, "second\nline", **HTMX).content.decode()
    assert 'id="comments"' in html and "<html" not in html
    assert html.index("first") < html.index("second\nline")
    assert "Comments <span class=\"count\">(2)</span>" in html
    assert (
        client.get(f"/review/{answer.pk}/comments").content.decode().count('class="comment"') == 2
    )


@pytest.mark.parametrize(
    "body, message",
    [
        ("", "Write something first: an empty comment is not saved."),
        ("   \n ", "Write something first: an empty comment is not saved."),
        (
            "x" * (AnswerComment.BODY_MAX + 1),
            (
                f"A comment holds at most {AnswerComment.BODY_MAX} characters; this one has"
                f" {AnswerComment.BODY_MAX + 1}."
            ),
        ),
        ("a\x00b", "Null characters are not allowed."),
    ],
)
def test_bad_input_is_a_readable_400_and_saves_nothing(client, answer, body, message):
    client.force_login(make.user("rita", "reviewer"))
    plain = _add(client, answer, body)
    assert plain.status_code == 400 and message in plain.content.decode()
    partial = _add(client, answer, body, **HTMX)
    assert partial.status_code == 400
    html = partial.content.decode()
    assert message in html and 'id="comment-error"' in html and 'id="comments"' in html
    assert (
        not AnswerComment.objects.exists()
        and not AuditEvent.objects.filter(action=COMMENTED).exists()
    )


def test_a_comment_of_exactly_the_limit_is_kept(client, answer):
    client.force_login(make.user("rita", "reviewer"))
    assert _add(client, answer, "y" * AnswerComment.BODY_MAX, **HTMX).status_code == 200
    assert len(AnswerComment.objects.get().body) == AnswerComment.BODY_MAX


def test_users_without_the_reviewer_role_get_403_and_strangers_sign_in(client, answer):
    response = _add(client, answer, "hello")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(make.user("vic"))
    assert _add(client, answer, "hello").status_code == 403
    assert client.get(f"/review/{answer.pk}/comments").status_code == 403
    assert not AnswerComment.objects.exists()


def test_an_unknown_answer_is_a_404(client):
    client.force_login(make.user("rita", "reviewer"))
    assert client.post("/review/999999/comments/add", {"body": "x"}).status_code == 404


def test_comments_are_append_only_in_the_database(client, answer):
    client.force_login(make.user("rita", "reviewer"))
    _add(client, answer, "kept")
    for statement in (lambda: AnswerComment.objects.update(body="rewritten"),
                      lambda: AnswerComment.objects.all().delete()):
        with pytest.raises(DatabaseError, match="append-only"):
            with transaction.atomic():
                statement()
    with pytest.raises(ValueError, match="append-only"):
        AnswerComment.objects.get().delete()
    assert AnswerComment.objects.get().body == "kept"


def test_a_blind_reviewer_can_be_shown_only_their_own_comments(answer):
    from reviewapp.review.views import comments_context

    rita, ron = make.user("rita", "reviewer"), make.user("ron", "reviewer")
    AnswerComment.objects.create(answer=answer, author=rita, body="mine")
    AnswerComment.objects.create(answer=answer, author=ron, body="c2 is CONTRADICTED")
    context = comments_context(answer, user=rita, others_hidden=True)
    assert [c.body for c in context["comments"]] == ["mine"] and context["comments_hidden"] == 1
    assert len(comments_context(answer, user=rita)["comments"]) == 2
