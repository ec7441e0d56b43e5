"""A failed htmx action with the database down (issue 28, item 9): a visible, polite error, and
what the reviewer typed stays. Chromium against the live server."""

from __future__ import annotations

import pytest

from tests import factories as make
from tests.conftest import CHROMIUM
from tests.test_browser import PASSWORD, page  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
]


def test_a_decision_posted_while_the_database_is_down_says_so_and_keeps_the_note(
    page, live_server, monkeypatch  # noqa: F811
):
    from django.db import OperationalError
    from django.db.backends import utils

    make.user("rita", "reviewer")
    answer = make.in_review()
    page.goto("/accounts/login/?next=/queue/")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")
    page.goto(f"/review/{answer.pk}/")
    page.click("text=Take this answer")
    note = page.locator("textarea[name=note]").first
    note.fill("the pass is $92.00, not $75.00")

    def refused(*args, **kwargs):
        raise OperationalError(
            "connection to server at 127.0.0.1, port 5432 failed: Connection refused"
        )

    monkeypatch.setattr(utils.CursorWrapper, "execute", refused)
    page.locator("button.confirm").first.click()
    alert = page.locator("#action-error")
    alert.wait_for()
    assert "cannot reach its database" in alert.inner_text() and "still here" in alert.inner_text()
    assert note.input_value() == "the pass is $92.00, not $75.00"
    monkeypatch.undo()
