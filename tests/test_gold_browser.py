"""Gold answers in Chromium (issue 32): a reviewer gets gold answers among live ones and nothing in
the page or the lease tells them apart; after wrong decisions on gold past the minimum they are
paused, a lead sees the banner and the second look, and the `reviewer.paused` webhook goes out."""

from __future__ import annotations

import json
import re

import pytest

from reviewapp.models import Answer, GoldCopy, ReviewerPause, WebhookDelivery
from reviewapp.quality import service as gold_service
from reviewapp.review import service as review_service
from reviewapp.webhooks.service import delivery_send
from tests import factories as make
from tests.conftest import CHROMIUM
from tests.webhook_receiver import Receiver

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)",
    ),
]


@pytest.fixture
def context(browser, live_server):
    contexts = []

    def new():
        ctx = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
        ctx.set_default_timeout(10_000)  # a shared, loaded machine: the first page can be slow
        contexts.append(ctx)
        return ctx.new_page()

    yield new
    for ctx in contexts:
        ctx.close()


def _sign_in(page, name: str, next_url: str) -> None:
    page.goto(f"/accounts/login/?next={next_url}")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", f"pw-{name}-123")
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")


def _answer_id(page) -> int:
    return int(re.search(r"/review/(\d+)/", page.url).group(1))


def _panel(page) -> str:
    """The review panel as the reviewer gets it, with every number (ids, counts, times) and the
    CSRF token (new on each page) masked."""
    html = page.locator("#review-panel").evaluate("e => e.outerHTML")
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', 'name="csrfmiddlewaretoken"', html)
    return re.sub(r"\d+", "#", html)


def _lease_renew_status(page) -> int:
    return page.evaluate("""async () => {
        const panel = document.querySelector('#review-panel');
        const token = JSON.parse(document.body.getAttribute('hx-headers'))['x-csrftoken'];
        const headers = {'X-CSRFToken': token};
        const reply = await fetch(panel.dataset.leaseUrl, {method: 'POST', headers});
        return reply.status; }""")


def _decide_and_finish(page, overturn: bool) -> None:
    """On the selected flagged claim: `c` confirms, `o` `1` overturns to SUPPORTED; then `f`."""
    with page.expect_response(lambda r: "/decide" in r.url):
        if overturn:
            page.keyboard.press("o")
            page.keyboard.press("1")
        else:
            page.keyboard.press("c")
    page.wait_for_selector(".claim-card.decided")
    with page.expect_navigation():
        page.keyboard.press("f")


def test_gold_among_live_answers_then_a_pause_a_banner_and_the_webhook(
    context, live_server, monkeypatch, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    lead, rita = make.user("leo", "lead"), make.user("rita", "reviewer")
    golds = []
    for _ in range(2):  # two adjudicated fare answers, c2 CONTRADICTED by the lead: marked gold
        answer = make.in_review()
        assert review_service.lease_take(user=lead, answer=answer)
        review_service.answer_finish(user=lead, answer=answer)
        golds.append(gold_service.gold_mark(user=lead, answer=answer).answer_id)
    live_first, live_second = make.in_review(), make.in_review()
    make.next_policy(gold_rate=0.5, gold_min_claims=4, gold_pause_below=0.8, note="gold on")
    draws = iter([False, True, True])  # the rate's draws, scripted: live, gold, gold, then live
    monkeypatch.setattr(gold_service, "gold_due", lambda rate: next(draws, False))

    with Receiver() as receiver:
        _, endpoint = make.webhook_endpoint(url=receiver.url, events=("reviewer.paused",))
        receiver.secret = endpoint.secret
        page = context()
        _sign_in(page, "rita", "/queue/")
        page.wait_for_url("**/queue/")
        with page.expect_navigation():
            page.keyboard.press("n")
        assert _answer_id(page) == live_first.pk
        live_panel, live_lease = _panel(page), _lease_renew_status(page)
        _decide_and_finish(page, overturn=True)  # a live decision (before any gold window)

        # The next item is a gold copy: the same page, the same lease, nothing that says gold.
        first_gold = _answer_id(page)
        assert first_gold not in (live_first.pk, live_second.pk, *golds)
        assert GoldCopy.objects.get(answer_id=first_gold).reviewer == rita
        assert _panel(page) == live_panel
        assert _lease_renew_status(page) == live_lease == 204
        assert "gold" not in page.content().lower()
        _decide_and_finish(page, overturn=True)  # wrong: the gold label is CONTRADICTED

        assert (
            GoldCopy.objects.get(answer_id=_answer_id(page)).gold.answer_id
            != GoldCopy.objects.get(answer_id=first_gold).gold.answer_id
        )
        assert "gold" not in page.content().lower()
        _decide_and_finish(page, overturn=True)  # wrong again: 2 of 4 gold claims right, below 80%

        # Paused: back on the queue, told so; `n` hands out no live answer.
        page.wait_for_url("**/queue/")
        assert "paused from the live queue" in page.locator(".messages").inner_text()
        with page.expect_navigation():
            page.keyboard.press("n")
        assert "paused from the live queue" in page.locator(".messages").inner_text()
        assert Answer.objects.get(pk=live_second.pk).lease_holder is None
        pause = ReviewerPause.objects.get(reviewer=rita, resumed_at__isnull=True)
        assert (pause.accuracy, pause.claims) == (0.5, 4)

        # The lead sees the banner on any page, the second look and the figures.
        lead_page = context()
        _sign_in(lead_page, "leo", "/answers/")
        banner = lead_page.locator("#paused-banner")
        assert "rita is paused from the live queue" in " ".join(banner.inner_text().split())
        with lead_page.expect_navigation():
            banner.get_by_role("link", name=re.compile("second look")).click()
        rows = lead_page.locator("table.second-look tbody tr")
        assert f"/review/{live_first.pk}/" in rows.first.inner_html()
        lead_page.goto("/reviewers/")
        row = lead_page.locator("#gold-rita").inner_text()
        assert "2/4" in row and "paused" in row and "50.0%" in row

        # The webhook: one delivery, no answer, sent signed to the receiver.
        delivery = WebhookDelivery.objects.get(event="reviewer.paused")
        assert delivery.answer_id is None
        assert delivery_send(delivery_id=delivery.pk).status == "delivered"
    (received,) = receiver.received
    body = json.loads(received.body)
    assert received.verified and body["type"] == "reviewer.paused"
    assert body["data"]["reviewer"]["username"] == "rita" and body["data"]["gold_accuracy"] == 0.5
