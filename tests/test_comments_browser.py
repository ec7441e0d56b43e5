"""The comment thread in Chromium: posted through htmx without leaving the page, hostile text shown
as the same text with nothing run, and a refused comment swapped in with its reason."""

from __future__ import annotations

import pytest

from reviewapp.judging.service import answer_judge
from tests import factories as make
from tests.conftest import CHROMIUM
from tests.xss_corpus import PAYLOADS, assert_nothing_ran, sign_in, watched_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
]


@pytest.fixture
def page(browser, live_server):
    yield from watched_page(browser, live_server.url)


def _comment(page, text: str) -> None:
    page.fill("#comments textarea", text)
    page.click("#comments button[type=submit]")


def test_comments_post_in_place_show_as_text_and_a_refusal_says_why(page, live_server):
    make.user("ada", "admin")
    answer = make.ingested()
    answer_judge(answer_id=answer.pk)
    sign_in(page)
    page.goto(f"/review/{answer.pk}/")
    url = page.url
    page.locator("#comments > summary").click()  # the drawer, closed on load

    _comment(page, "   ")
    page.locator("#comment-error").wait_for()
    assert (
        page.locator("#comment-error").text_content()
        == "Write something first: an empty comment is not saved."
    )

    shown = PAYLOADS[:6] + ["two\nlines"]
    for n, text in enumerate(shown, start=1):
        _comment(page, text)
        page.locator("#comments .comment").nth(n - 1).wait_for()
    assert page.locator("#comment-error").count() == 0
    bodies = page.locator("#comments .comment-body").evaluate_all(
        "els => els.map(e => e.textContent)"
    )
    assert bodies == shown
    assert page.url == url  # swapped in place: no navigation
    assert_nothing_ran(page, "comments")

    page.reload()
    assert page.locator("#comments .comment-body").count() == len(shown)
    assert_nothing_ran(page, "comments after reload")
