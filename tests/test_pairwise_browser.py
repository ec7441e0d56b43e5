"""A pairwise comparison in a real browser: a reviewer decides both pairs by keys only (headless
Chromium against the live server, as tests/test_browser.py)."""

from __future__ import annotations

import pytest

from reviewapp.models import ComparisonChoice
from tests import factories as make
from tests.conftest import CHROMIUM, wait_for
from tests.test_browser import _sign_in, page  # noqa: F401 (the page fixture)
from tests.test_pairwise import _start, with_second_judge

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
]


def test_a_reviewer_decides_a_judge_comparison_by_keys_only(page, live_server):  # noqa: F811
    for _ in range(2):
        with_second_judge(make.judged(), {1: "SUPPORTED"})  # the judges differ on c2
    comparison = _start()
    make.user("rita", "reviewer")
    _sign_in(page, f"/compare/{comparison.pk}/")
    assert page.locator(".next-marker").count() == 1

    with page.expect_navigation():
        page.keyboard.press("1")  # left
    with page.expect_navigation():
        page.keyboard.press("4")  # both wrong
    page.wait_for_selector("text=Nothing left for you to decide")

    choices = wait_for(lambda: list(ComparisonChoice.objects.order_by("item__position")), timeout=5)
    first, second = comparison.items.all()
    assert [c.choice for c in choices] == ["A" if first.a_on_left else "B", "both_wrong"]
    assert not page.js_errors, page.js_errors
