"""Evidence-level labels in Chromium (issue 32, item 5): selecting text in a passage fills the
selected claim's evidence form; `m` and the keyboard finish the mark; the server stores the span."""

from __future__ import annotations

import pytest

from reviewapp.models import EvidenceMark
from tests import factories as make
from tests.conftest import CHROMIUM
from tests.test_gold_browser import _sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)",
    ),
]
SPAN_TEXT = "30-day pass costs $92.00"


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(10_000)  # a shared, loaded machine: the first page can be slow
    yield context.new_page()
    context.close()


def test_a_selected_passage_span_and_the_keyboard_mark_the_claims_evidence(page, live_server):
    make.user("rita", "reviewer")
    answer = make.in_review()
    claim = make.flagged(answer)
    _sign_in(page, "rita", "/queue/")
    page.wait_for_url("**/queue/")
    with page.expect_navigation():
        page.keyboard.press("n")
    page.wait_for_url(f"**/review/{answer.pk}/")
    form = page.locator(f"#evidence-{claim.pk}")
    # Select the words in P2 as a mouse would (a Range over the passage's text).
    page.evaluate(
        """(words) => {
        const text = document.querySelector('.passage-text[data-pid="P2"]');
        const at = text.textContent.indexOf(words);
        const walker = document.createTreeWalker(text, NodeFilter.SHOW_TEXT);
        const range = document.createRange();
        let seen = 0;
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const length = node.textContent.length;
            if (seen <= at && at < seen + length) range.setStart(node, at - seen);
            const end = at + words.length;
            if (seen < end && end <= seen + length) range.setEnd(node, end - seen);
            seen += length;
        }
        getSelection().removeAllRanges();
        getSelection().addRange(range);
    }""",
        SPAN_TEXT,
    )
    page.wait_for_function(
        f"document.querySelector('#evidence-{claim.pk}').elements.start.value !== ''"
    )
    start = int(form.locator("input[name=start]").input_value())
    assert form.locator("select[name=passage]").input_value() == "P2"
    assert int(form.locator("input[name=end]").input_value()) - start == len(SPAN_TEXT)
    assert SPAN_TEXT in form.locator(".evidence-selection").inner_text()
    page.evaluate("getSelection().removeAllRanges()")
    # From here the keyboard alone: m, the stance, the cause, the button.
    page.keyboard.press("m")
    assert page.evaluate("document.activeElement.name") == "stance"
    page.keyboard.type("c")  # contradicts
    page.keyboard.press("Tab")
    page.keyboard.type("g")  # generation error
    page.keyboard.press("Tab")
    with page.expect_response(lambda r: r.url.endswith(f"/claims/{claim.pk}/evidence")) as reply:
        page.keyboard.press("Enter")
    assert reply.value.status == 200
    mark = EvidenceMark.objects.get(claim=claim)
    assert (mark.passage.text[mark.start : mark.end], mark.stance, mark.cause) == (
        SPAN_TEXT,
        "contradicts",
        "generation_error",
    )
    assert "Yours:" in page.locator(f"#evidence-{claim.pk} .evidence-current").inner_text()
