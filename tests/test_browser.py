"""The review page in a real browser: a reviewer adjudicates an answer by keyboard only.

Headless Chromium (Debian's `chromium` package) driven by the `playwright` Python package against
pytest-django's live server, which runs the real app in a thread on the test database. Run with
`pytest tests/test_browser.py -s` to see the keystrokes and seconds it took.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import ExitStack

import pytest
from django.contrib.auth.models import Group

from reviewapp.models import Answer, AuditEvent, Claim, Review
from tests import factories as make
from tests.conftest import CHROMIUM, wait_for


pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)",
    ),
]

# Both sentences change a number of a near-identical passage sentence, so the offline judge flags
# both (CONTRADICTED) and the answer stays in review after the first decision.
TWO_FLAGS = (
    "Riders aged 65 and older pay a reduced fare of $1.50 per ride. A 30-day pass costs $75.00."
)
PASSWORD = "pw-rita-123"  # tests.factories.user's


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(5000)
    page = context.new_page()
    # Uncaught script errors, errors logged by scripts (htmx logs failed requests), and failed
    # requests but the browser's own favicon probe.
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"script error: {exc}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}")
            if msg.type == "error" and not msg.text.startswith("Failed to load resource") else None)
    page.on("response", lambda r: errors.append(f"{r.status} {r.request.method} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.js_errors = errors
    yield page
    context.close()


def test_a_reviewer_adjudicates_an_answer_by_keyboard_only(page, live_server):
    rita = make.user("rita", "reviewer")
    answer = make.judged(TWO_FLAGS)
    first, second = answer.claims.exclude(label="SUPPORTED").order_by("position")
    assert answer.review_status == "in_review"
    assert answer.claims.exclude(label="SUPPORTED").count() == 2
    assert (first.label, second.label) == ("CONTRADICTED", "CONTRADICTED")
    later = make.judged()  # a second, newer item so the queue is a queue
    assert later.review_status == "in_review"

    # 1. Sign in by typing into the form (Enter submits); after this, only shortcut keys.
    page.goto("/accounts/login/?next=/queue/")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")

    # 2. The queue lists the answer.
    page.wait_for_url("**/queue/")
    # the setting: stay after `f`
    page.evaluate("localStorage.setItem('claimdesk.stayAfterFinish', '1')")
    rows = page.locator("table.queue tbody tr")
    # id and question
    assert rows.count() == 2 and rows.first.locator(f'a[href="/review/{answer.pk}/"]').count() == 2
    page.screenshot(path="/tmp/queue.png", full_page=True)

    keystrokes: list[str] = []

    def press(key: str) -> None:
        keystrokes.append(key)
        page.keyboard.press(key)

    def panel_post(key: str, url_part: str, done_js: str, arg=None) -> None:
        """Press `key`, wait for the htmx POST it sends and for the swapped panel to show
        `done_js`."""
        with page.expect_response(
            lambda r: url_part in r.url and r.request.method == "POST"
        ) as response:
            press(key)
        assert (
            response.value.status == 200
        ), f"{key}: {response.value.status} {response.value.text()[:500]}"
        page.wait_for_function(done_js, arg=arg)

    def selected() -> int:
        return int(page.locator(".claim-card.selected").get_attribute("data-claim"))

    def go_to(claim: Claim) -> None:
        ids = [
            int(x)
            for x in page.locator(".claim-card[data-claim]").evaluate_all(
                "els => els.map(e => e.dataset.claim)"
            )
        ]
        while selected() != claim.pk:
            press("j" if ids.index(selected()) < ids.index(claim.pk) else "k")
        assert page.locator(f"#claim-{claim.pk}.selected").count() == 1

    decided_as = (
        "([id, text]) => (document.querySelector(`#claim-${id} .decided-as`)?.textContent ||"
        " '').includes(text)"
    )
    undecided = (
        "([id]) => { const c = document.querySelector(`#claim-${id}`); return c &&"
        " !c.querySelector('.decided-as') }"
    )
    adjudicated = (
        "() => (document.querySelector('#review-panel h1')?.textContent ||"
        " '').includes('adjudicated: ')"
    )

    # 3. `n` starts reviewing: leases the next item and opens it.
    with page.expect_navigation():
        press("n")
    page.wait_for_url(f"**/review/{answer.pk}/")
    started = time.monotonic()
    paused = 0.0

    # 4. The first flagged claim is selected; confirm it.
    assert selected() == first.pk
    panel_post("c", "/decide", decided_as, [first.pk, "confirm by rita"])
    assert Answer.objects.get(pk=answer.pk).review_status == "in_review"  # one flagged claim left

    shot = time.monotonic()
    page.screenshot(path="/tmp/review.png", full_page=True)
    paused += time.monotonic() - shot

    # ...overturn the other one to UNSUPPORTED (o, then 4): every flagged claim is decided, but
    # finishing is its own step...
    go_to(second)
    press("o")
    panel_post("4", "/decide", decided_as, [second.pk, "overturn by rita"])
    assert "All flagged claims decided" in page.locator("#review-panel .all-decided").inner_text()
    assert Answer.objects.get(pk=answer.pk).review_status == "in_review"
    # still decidable
    assert page.locator(f"#claim-{first.pk} form.decide button:not([disabled])").count() > 0

    # ...undo it...
    panel_post("u", "/undo", undecided, [second.pk])
    assert page.locator(f"#claim-{second.pk} form.decide").count() == 1

    # ...redo it, and finish (f).
    go_to(second)
    press("o")
    panel_post("4", "/decide", decided_as, [second.pk, "overturn by rita"])
    panel_post("f", "/finish", adjudicated)
    seconds = time.monotonic() - started - paused
    keys_total = len(keystrokes)
    assert "Unsupported" in page.locator(f"#claim-{second.pk} .decided-as").inner_text()
    assert (
        page.locator("#review-panel .messages").inner_text()
        == f"Answer {answer.pk} adjudicated: Ungrounded. Next: n"
    )

    # 5. The database.
    first.refresh_from_db()
    second.refresh_from_db()
    answer.refresh_from_db()
    assert (first.human_label, first.decision, first.decided_by) == (first.label, "confirm", rita)
    assert (second.human_label, second.decision, second.decided_by) == (
        "UNSUPPORTED",
        "overturn",
        rita,
    )
    reviews = list(Review.objects.filter(answer=answer).order_by("created_at", "id"))
    assert [(r.claim_id, r.decision) for r in reviews] == [
        (first.pk, "confirm"),
        (second.pk, "overturn"),
        (second.pk, "undo"),
        (second.pk, "overturn"),
    ]
    assert reviews[2].undoes_id == reviews[1].pk
    assert (answer.review_status, answer.adjudicated_verdict, answer.lease_holder) == (
        "adjudicated",
        "UNGROUNDED",
        None,
    )
    audit = list(
        AuditEvent.objects.filter(object_type="claim")
        .order_by("id")
        .values_list("action", "object_id", "actor")
    )
    assert audit == [
        ("claim.confirm", str(first.pk), rita.pk), ("claim.overturn", str(second.pk), rita.pk),
        ("claim.undo", str(second.pk), rita.pk), ("claim.overturn", str(second.pk), rita.pk),
    ]
    assert (
        AuditEvent.objects.filter(action="answer.adjudicated", object_id=str(answer.pk)).count()
        == 1
    )
    assert (
        AuditEvent.objects.filter(action="answer.reopened", object_id=str(answer.pk)).count() == 0
    )
    assert {r.decision_mode for r in reviews} == {"explicit"}

    # 6. `?` shows the keyboard help; Escape hides it. j/k move the selection without a request.
    help_overlay = page.locator("#help")
    assert help_overlay.is_hidden()
    page.keyboard.press("?")
    help_overlay.wait_for(state="visible")
    assert "overturn to SUPPORTED" in help_overlay.inner_text()
    # a modal dialog, with a backdrop
    assert page.evaluate("document.querySelector('#help').matches(':modal')")
    before = selected()
    page.keyboard.press("j")  # the dialog has the keys: the selection stays
    assert selected() == before
    page.keyboard.press("Escape")
    help_overlay.wait_for(state="hidden")
    page.keyboard.press("k")
    assert selected() == first.pk
    assert page.locator(".claim-seg.sel").first.get_attribute("data-claims").split() == [
        str(first.pk)
    ]
    page.keyboard.press("j")
    assert selected() == second.pk

    assert page.js_errors == []

    # 7. `n` on the review page goes on to the next item; an action that cannot be done (undo with
    #    nothing to undo) answers 409 and the page shows why, in place.
    with page.expect_navigation():
        page.keyboard.press("n")
    page.wait_for_url(f"**/review/{later.pk}/")
    assert Answer.objects.get(pk=later.pk).lease_holder == rita
    # shown in place already, not again here
    assert f"Answer {answer.pk} adjudicated" not in page.content()
    with page.expect_response(lambda r: "/undo" in r.url) as response:
        page.keyboard.press("u")
    assert response.value.status == 409
    page.locator("#review-panel .error").wait_for()
    assert "no decision on this answer to undo" in page.locator("#review-panel .error").inner_text()
    assert page.js_errors == [f"409 POST {live_server.url}/review/{later.pk}/undo"]

    # 8. Leaving the page gives the lease back (a beacon on pagehide), before the test's data goes.
    page.goto("about:blank")
    wait_for(lambda: Answer.objects.get(pk=later.pk).lease_holder_id is None, timeout=5)
    print(
        f"\nkeyboard review of answer {answer.pk}: {keys_total} keystrokes ({' '.join(keystrokes)})"
        f" and {seconds:.2f} s with an undo and redo (from landing on the review page, excluding"
        " the screenshot; `n` counted)"
    )


def test_a_key_pressed_before_a_swap_settles_still_goes_through_htmx(page, live_server):
    # htmx wires up swapped-in forms when the swap settles; a key pressed before that must not
    # submit the new panel's form the plain way (a whole-page reload). The settle delay is
    # stretched here so the key surely comes first (it is 20 ms: a fast typist or a busy machine).
    make.user("rita", "reviewer")
    answer = make.judged(TWO_FLAGS)
    first = answer.claims.exclude(label="SUPPORTED").order_by("position").first()
    page.goto(f"/accounts/login/?next=/review/{answer.pk}/")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")
    page.wait_for_url(f"**/review/{answer.pk}/")
    with page.expect_navigation():  # opening the link left the answer free; `t` takes it
        page.keyboard.press("t")
    page.evaluate("htmx.config.defaultSettleDelay = 3000")
    with page.expect_response(lambda r: "/decide" in r.url):
        page.keyboard.press("c")
    page.wait_for_function(
        "([id]) => !!document.querySelector(`#claim-${id} .decided-as`)", arg=[first.pk]
    )
    with page.expect_response(lambda r: "/undo" in r.url and r.request.method == "POST") as undo:
        page.keyboard.press("u")
    # the panel, swapped in place (the plain form answers a redirect)
    assert undo.value.status == 200
    assert undo.value.request.headers.get("hx-request") == "true"
    assert page.url.endswith(f"/review/{answer.pk}/")
    assert Review.objects.filter(claim=first, decision="undo").count() == 1
    assert page.js_errors == []


def _sign_in(page, next_url: str) -> None:
    page.goto(f"/accounts/login/?next={next_url}")
    page.fill("input[name=username]", "rita")
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")


def test_s_skips_to_the_next_answer_and_the_skipped_one_does_not_come_back(page, live_server):
    rita = make.user("rita", "reviewer")
    first, second = make.judged(TWO_FLAGS), make.judged(TWO_FLAGS)
    _sign_in(page, "/queue/")
    with page.expect_navigation():
        page.keyboard.press("n")
    page.wait_for_url(f"**/review/{first.pk}/")
    with page.expect_navigation():
        page.keyboard.press("s")
    page.wait_for_url(f"**/review/{second.pk}/")
    assert f"Skipped answer {first.pk}" in page.locator(".messages").inner_text()
    assert Answer.objects.get(pk=second.pk).lease_holder == rita
    assert Answer.objects.get(pk=first.pk).lease_holder is None
    with page.expect_navigation():
        page.keyboard.press("n")  # never the answer I am on, nor the skipped one: nothing else here
    page.wait_for_url("**/queue/")
    assert (
        f"answer {second.pk}, which you left, is back in the queue"
        in page.locator(".messages").inner_text()
    )
    assert Answer.objects.get(pk=second.pk).lease_holder is None
    assert page.js_errors == []


def test_the_words_that_differ_are_marked_inside_both_highlights_of_a_contradicted_claim(
    page, live_server
):
    make.user("rita", "reviewer")
    # One word swapped for its opposite: the offline judge reads CONTRADICTED and where.
    answer = make.judged("Riders aged 65 and younger pay a reduced fare of $1.00 per ride.")
    claim = answer.claims.get()
    assert claim.label == "CONTRADICTED"
    _sign_in(page, f"/review/{answer.pk}/")
    page.wait_for_url(f"**/review/{answer.pk}/")
    in_answer = page.locator(f'#answer-text .claim-seg[data-claims~="{claim.pk}"] mark.diff')
    in_passage = page.locator(
        f'#passage-P1 .evidence-seg.evidence-closest[data-claims~="{claim.pk}"] mark.diff'
    )
    assert in_answer.all_inner_texts() == ["younger"] and in_passage.all_inner_texts() == ["older"]
    assert in_answer.get_attribute("title") == "differs from the closest passage text (opposite)"
    assert in_passage.get_attribute("title") == f"differs from claim {claim.cid} (opposite)"
    # Said to screen readers, yet not in the text: the answer and the passage read back exactly.
    said = page.evaluate(
        "getComputedStyle(document.querySelector('mark.diff'), '::before').content"
    )
    assert said == '"differs: "'
    assert page.locator("#answer-text").evaluate("e => e.textContent") == answer.answer
    assert (
        page.locator("#passage-P1 p.untrusted").evaluate("e => e.textContent")
        == answer.passages.get(pid="P1").text
    )
    assert (
        page.locator(".diff-legend").count() == 2
        and page.locator(".diff-legend").first.is_visible()
    )
    # Visibly marked: a weight and an underline of their own, whatever the colours.
    style = in_answer.evaluate(
        "e => [getComputedStyle(e).fontWeight, getComputedStyle(e).textDecorationLine]"
    )
    assert style == ["700", "underline"]
    page.screenshot(path="/tmp/review-differences.png")
    assert page.js_errors == []


def _twenty_claims() -> Answer:
    """20 sentences, one claim each, spread over four long passages; every third number is wrong."""
    sentences = [
        f"Route {n} buses run every {n + 4} minutes from the"
        f" {['north', 'south', 'east', 'west'][n % 4]} terminal."
        for n in range(1, 21)
    ]
    said = [
        s.replace(f"every {n + 4} ", f"every {n + 14} ") if n % 3 == 0 else s
        for n, s in enumerate(sentences, 1)
    ]
    passages = [
        {
            "id": f"P{i + 1}",
            "text": " ".join(sentences[i * 5 : (i + 1) * 5]) + " Timetables change in winter." * 40,
        }
        for i in range(4)
    ]
    answer = make.judged(" ".join(said), passages=passages)
    Answer.objects.filter(pk=answer.pk).update(review_status="in_review")
    return answer


WIDEST = """Array.from(document.querySelectorAll("body *"))
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .slice(0, 6)
  .map(e => `${e.tagName}.${e.className}#${e.id} ${Math.round(e.getBoundingClientRect().right)}`)
  .join("; ")"""
IN_VIEW = """(selector) => {
  const el = document.querySelector(selector);
  if (!el) return false;
  const r = el.getBoundingClientRect();
  let box = {top: 0, bottom: window.innerHeight};
  for (let p = el.parentElement; p; p = p.parentElement) {
    if (getComputedStyle(p).overflowY === "auto") { const b = p.getBoundingClientRect(); box =
        {top: Math.max(b.top, 0), bottom: Math.min(b.bottom, window.innerHeight)}; break; }
  }
  return r.top >= box.top - 1 && r.bottom <= box.bottom + 1 && r.height > 0;
}"""


def test_the_selected_card_and_its_evidence_stay_in_view_for_every_claim_of_a_20_claim_answer(
    page, live_server
):
    make.user("rita", "reviewer")
    answer = _twenty_claims()
    claims = list(answer.claims.order_by("position"))
    assert len(claims) == 20
    page.set_viewport_size({"width": 1440, "height": 900})
    page.emulate_media(reduced_motion="reduce")  # the evidence jumps into view: nothing to wait out
    _sign_in(page, f"/review/{answer.pk}/")
    page.wait_for_url(f"**/review/{answer.pk}/")
    # only the columns scroll
    assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 1")
    while int(page.locator(".claim-card.selected").get_attribute("data-claim")) != claims[0].pk:
        page.keyboard.press("k")
    for index, claim in enumerate(claims):
        if index:
            page.keyboard.press("j")
        assert page.locator(".claim-card.selected").get_attribute("data-claim") == str(claim.pk)
        page.wait_for_function(IN_VIEW, arg=f"#claim-{claim.pk}")
        page.wait_for_function(IN_VIEW, arg=".evidence-seg.sel")
        # focus follows j/k
        assert page.evaluate("document.activeElement.id") == f"claim-{claim.pk}"
    # read-only: the take-this-answer alert stays visible
    alert = page.locator("#review-panel .warning")
    assert alert.is_visible() and alert.bounding_box()["y"] >= 0
    page.screenshot(path="/tmp/review-desktop.png")
    assert page.js_errors == []


def test_no_page_scrolls_sideways_on_a_390_px_phone_and_the_review_columns_stack(page, live_server):
    rita = make.user("rita", "reviewer")
    rita.groups.add(Group.objects.get_or_create(name="admin")[0])
    answer = make.judged(TWO_FLAGS)
    page.set_viewport_size({"width": 390, "height": 844})
    _sign_in(page, "/queue/")
    for url in [
        "/queue/",
        "/answers/",
        f"/review/{answer.pk}/",
        "/policy/",
        "/calibration/",
        "/examples/",
        "/exports/",
        "/webhooks/",
    ]:
        page.goto(url)
        width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert (
            width[0] <= width[1]
        ), f"{url} is {width[0]} px wide on a {width[1]} px screen: " + page.evaluate(WIDEST)
        if url.startswith("/review/"):
            page.screenshot(path="/tmp/review-phone.png", full_page=True)
            left, right = (
                page.locator(".columns > .left").bounding_box(),
                page.locator(".columns > .right").bounding_box(),
            )
            assert right["y"] >= left["y"] + left["height"] - 1  # passages below the claims
    page.screenshot(path="/tmp/last-phone.png", full_page=True)
    assert page.js_errors == []


CONTRAST = """(selector) => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v +
      0.055) / 1.055) ** 2.4; };
                               return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (el) => { for (; el; el = el.parentElement) { const c =
      getComputedStyle(el).backgroundColor;
                               if (!c.startsWith("rgba(0, 0, 0, 0)") && c !== "transparent")
                                   return c; } return "rgb(255, 255, 255)"; };
  return Array.from(document.querySelectorAll(selector)).slice(0, 20).map((el) => {
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(background(el)))].sort((x,
        y) => y - x);
    return (a + 0.05) / (b + 0.05);
  });
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_labels_read_as_text_with_aa_contrast_in_the_light_and_the_dark_theme(
    page, live_server, scheme
):
    make.user("rita", "reviewer")
    answer = make.judged(TWO_FLAGS)
    page.emulate_media(color_scheme=scheme)
    _sign_in(page, f"/review/{answer.pk}/")
    page.wait_for_url(f"**/review/{answer.pk}/")
    body = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (body == "rgb(18, 21, 27)") == (scheme == "dark"), body
    # Every label says its name in words, not only by colour and icon (the icon is hidden from
    # readers).
    for text in page.locator(".claim-card .label").all_inner_texts():
        assert any(
            name in text
            for name in ("Supported", "Contradicted", "Unsupported", "Partially supported")
        ), text
    assert (
        page.locator(".claim-card .label [aria-hidden=true]").count()
        == page.locator(".claim-card .label").count()
    )
    assert (
        page.locator(".closest-tag").first.inner_text()
        == "closest text, does not support the claim"
    )
    said = page.evaluate(
        "getComputedStyle(document.querySelector('.evidence-closest'), '::before').content"
    )
    # read out, yet not in the passage's text
    assert said == '"closest text, does not support the claim: "'
    for selector in (
        ".claim-text",
        ".claim-card .label",
        ".closest-tag",
        ".meta",
        ".hint",
        ".passage p",
        "button:not([disabled])",
        "a",
    ):
        ratios = page.evaluate(CONTRAST, selector)
        assert ratios and min(ratios) >= 4.5, f"{scheme} {selector}: contrast {min(ratios):.2f}"
    # Focus is visible on the selected card and moves with j/k.
    page.keyboard.press("j")
    focused = page.evaluate(
        "[document.activeElement.dataset.claim,"
        " getComputedStyle(document.activeElement).outlineStyle]"
    )
    assert (
        focused[0] == page.locator(".claim-card.selected").get_attribute("data-claim")
        and focused[1] != "none"
    )
    page.screenshot(path=f"/tmp/review-{scheme}.png")
    assert page.js_errors == []


def test_a_six_claim_answer_takes_a_handful_of_keys_from_the_queue(page, live_server):
    """The figure the closing note quotes: keys and seconds from the queue to an adjudicated 6-claim
    answer."""
    rita = make.user("rita", "reviewer")
    sentences = [f"Route {n} buses run every {n + 4} minutes." for n in range(1, 7)]
    said = [
        s.replace(f"every {n + 4} ", f"every {n + 14} ") if n % 2 == 0 else s
        for n, s in enumerate(sentences, 1)
    ]
    answer = make.judged(" ".join(said), passages=[{"id": "P1", "text": " ".join(sentences)}])
    assert answer.claims.count() == 6 and answer.claims.exclude(label="SUPPORTED").count() == 3
    _sign_in(page, "/queue/")
    keys: list[str] = []
    started = time.monotonic()
    with page.expect_navigation():
        keys.append("n")
        page.keyboard.press("n")
    page.wait_for_url(f"**/review/{answer.pk}/")
    # c2, c4, c6 are flagged, c2 selected: confirm it, j past c3 (selected after c2), confirm c4, j
    # past c5, overturn c6 to UNSUPPORTED, finish (the rest confirmed in bulk; the next answer
    # opens).
    decided = 0
    for key in ("c", "j", "c", "j", "o", "4"):
        keys.append(key)
        if key in "oj":
            page.keyboard.press(key)
            continue
        with page.expect_response(
            lambda r: r.request.method == "POST" and "/review/" in r.url
        ) as response:
            page.keyboard.press(key)
        assert response.value.status == 200
        decided += 1  # the swapped panel is in before the next key (as a reviewer sees it)
        page.wait_for_function(
            "n => document.querySelector('#claim-count b')?.textContent === `${n}/6`", arg=decided
        )
    keys.append("f")
    with page.expect_navigation():
        page.keyboard.press("f")
    page.locator(".messages").wait_for()
    seconds = time.monotonic() - started
    answer.refresh_from_db()
    modes = sorted(Review.objects.filter(answer=answer).values_list("decision_mode", flat=True))
    assert answer.review_status == "adjudicated" and modes == ["bulk"] * 3 + ["explicit"] * 3
    assert (
        answer.lease_holder is None
        and Review.objects.filter(answer=answer).exclude(reviewer=rita).count() == 0
    )
    print(
        f"\n6-claim answer: {len(keys)} keystrokes ({' '.join(keys)}), {seconds:.2f} s from the"
        " queue to adjudicated"
    )
    assert page.js_errors == []


def test_an_invalid_policy_value_shows_its_message_beside_the_field_instead_of_the_old_preview(
    page, live_server
):
    rita = make.user("rita", "reviewer")
    rita.groups.add(Group.objects.get_or_create(name="admin")[0])
    make.judged(TWO_FLAGS)
    _sign_in(page, "/policy/")
    page.wait_for_url("**/policy/")
    # the preview of the policy in force, loaded with the page
    page.locator("#preview table").wait_for()
    page.fill("input[name=score_threshold]", "1.7")
    page.locator("input[name=score_threshold]").dispatch_event("change")
    beside = page.locator("#error-score_threshold")
    page.locator("#error-score_threshold", has_text="less than or equal to 1").wait_for()
    assert (
        page.locator("#preview table").count() == 0
        and "No preview" in page.locator("#preview").inner_text()
    )
    field, message = (
        page.locator("input[name=score_threshold]").bounding_box(),
        beside.bounding_box(),
    )
    assert abs(message["y"] - field["y"]) < 60  # beside the field, not at the foot of the form
    page.fill("input[name=score_threshold]", "0.9")
    page.locator("input[name=score_threshold]").dispatch_event("change")
    page.locator("#preview table").wait_for()
    assert beside.inner_text() == ""
    assert page.js_errors == []


def test_prior_turns_open_when_the_question_leans_on_them_and_metadata_waits_collapsed(
    page, live_server
):
    make.user("rita", "reviewer")
    turns = [
        {"role": "user", "content": "Do seniors pay less?"},
        {"role": "assistant", "content": "Yes, from 65."},
    ]
    answers = [
        make.ingested(
            question="She's 63",
            prior_turns=turns,
            metadata={"channel": "sms", "session": {"id": "s-1", "turn": 3}},
        ),
        make.ingested(question="How much does a senior pay for one bus ride?", prior_turns=turns),
    ]
    _sign_in(page, f"/review/{answers[0].pk}/")
    page.wait_for_url(f"**/review/{answers[0].pk}/")
    assert page.locator("details.turns").get_attribute("open") is not None
    # "Do seniors pay less?" without a click
    assert page.locator("details.turns li").first.is_visible()
    metadata = page.locator("details.metadata")
    assert (
        metadata.get_attribute("open") is None
        and not page.locator("details.metadata dd").first.is_visible()
    )
    metadata.locator("summary").click()
    assert page.locator("details.metadata").inner_text().count("sms") == 1
    assert '{"id": "s-1", "turn": 3}' in metadata.inner_text()
    page.goto(f"/review/{answers[1].pk}/")
    # a question that stands alone
    assert page.locator("details.turns").get_attribute("open") is None
    assert page.locator("details.metadata").count() == 0
    assert page.js_errors == []


def test_the_answer_list_filters_in_place_and_the_queue_counters_follow_the_filters(
    page, live_server
):
    make.user("rita", "reviewer")
    flagged = make.judged(TWO_FLAGS)
    bicycle = make.judged()
    Answer.objects.filter(pk=bicycle.pk).update(
        question="Is there a bicycle rule?",
        review_status="adjudicated",
        adjudicated_verdict="GROUNDED",
    )
    _sign_in(page, "/answers/")
    page.wait_for_url("**/answers/")
    assert "2 answers" in page.locator("#answer-total").inner_text()
    with page.expect_response(lambda r: "/answers/?" in r.url):
        page.select_option("select[name=review_status]", "adjudicated")
    page.locator("#answer-total", has_text="1 answer match").wait_for()
    assert "review_status=adjudicated" in page.url  # the filtered list has its own address
    assert page.locator("table.answers tbody tr").count() == 1
    assert page.locator("td.human-verdict").inner_text() == "Grounded"
    page.goto("/queue/")
    waiting = page.locator("#queue-counts li").first
    assert waiting.inner_text() == "1 waiting"
    with page.expect_response(
        lambda r: "/queue/?" in r.url and r.request.headers.get("hx-request") == "true"
    ):
        page.fill("input[name=q]", "bicycle")
        # htmx: the table is swapped, not the page
        page.locator("input[name=q]").dispatch_event("change")
    # the bicycle answer is adjudicated
    page.locator("#queue-counts li", has_text="0 waiting").wait_for()
    assert page.locator("#queue-counts li", has_text="adjudicated").inner_text() == "1 adjudicated"
    assert page.locator("table.queue tbody tr").inner_text().startswith("Nothing waiting")
    assert flagged.pk != bicycle.pk and page.js_errors == []


def test_a_rejudge_the_offline_judge_would_not_run_as_chosen_is_refused_beside_the_field(
    page, live_server
):
    from reviewapp.models import Job

    rita = make.user("rita", "reviewer")
    rita.groups.add(Group.objects.get_or_create(name="admin")[0])
    make.judged(TWO_FLAGS)
    _sign_in(page, "/policy/")
    page.wait_for_url("**/policy/")
    # the demo's backend
    assert page.locator("#rejudge select[name=backend]").input_value() == "offline"
    assert page.locator("#rejudge input[name=model]").input_value() == ""  # no model listed for it
    page.select_option("#rejudge select[name=profile]", "sentence_map")
    with page.expect_navigation():
        page.locator("#rejudge button[type=submit]").click()
    form = page.locator("#rejudge")
    assert (
        "judges by its own rules" in form.inner_text()
        and "sentence_map" in form.locator("select[name=profile]").input_value()
    )
    assert not Job.objects.exists()
    page.js_errors.clear()  # the refusal is a 400 on purpose
    page.select_option("#rejudge select[name=profile]", "")
    with page.expect_navigation():
        page.locator("#rejudge button[type=submit]").click()
    job = page.locator("ul.jobs li").first
    assert "the offline judge" in job.inner_text() and "gpt-4o-mini" not in job.inner_text()
    assert page.js_errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_on_the_queue_the_review_page_and_the_policy(
    page, live_server, scheme
):
    from axe_playwright_python.sync_playwright import Axe

    rita = make.user("rita", "reviewer")
    rita.groups.add(Group.objects.get_or_create(name="admin")[0])
    answer = make.judged(TWO_FLAGS)
    page.emulate_media(color_scheme=scheme)
    _sign_in(page, "/queue/")
    axe = Axe()
    found = {}
    for url in ["/queue/", f"/review/{answer.pk}/", "/policy/"]:
        page.goto(url)
        results = axe.run(page)
        found[url] = [
            (v["id"], [n["target"] for n in v["nodes"]])
            for v in results.response["violations"]
            if v["impact"] in ("serious", "critical")
        ]
    assert found == {url: [] for url in found}, found


@pytest.mark.timeout(600)
def test_two_reviewers_in_two_browsers_give_every_answer_exactly_two_distinct_reviewers(
    browser, live_server
):
    """Double review (issue 21): two reviewers press n and f at the same moments, 50 answers each
    needing two reviews; the server hands each answer to both, never twice to one."""
    from reviewapp.models import Policy, ReviewPass

    Policy.objects.create(
        version=Policy.current().version + 1, reviewers_per_answer=2, note="double review"
    )
    answers = [make.judged(TWO_FLAGS) for _ in range(50)]
    assert {a.reviews_required for a in answers} == {2}
    pages = []
    for name in ("rita", "ron"):
        make.user(name, "reviewer")
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": 1400, "height": 900}
        )
        context.set_default_timeout(10000)
        page = context.new_page()
        page.js_errors = []
        page.on("pageerror", lambda exc, page=page: page.js_errors.append(f"script error: {exc}"))
        page.goto("/accounts/login/?next=/queue/")
        page.fill("input[name=username]", name)
        page.fill("input[name=password]", f"pw-{name}-123")
        with page.expect_navigation():
            page.press("input[name=password]", "Enter")
        # `f` stays: n hands the next
        page.evaluate("localStorage.setItem('claimdesk.stayAfterFinish', '1')")
        pages.append(page)
    started, rounds = time.monotonic(), 0
    active = list(pages)
    while active:
        rounds += 1
        with ExitStack() as navigations:
            for page in active:
                navigations.enter_context(page.expect_navigation())
            for page in active:
                page.keyboard.press("n")  # both lease at once
        # the others are told nothing is left
        active = [page for page in active if "/review/" in page.url]
        with ExitStack() as finishes:
            responses = [
                finishes.enter_context(
                    page.expect_response(
                        lambda r: r.request.method == "POST" and r.url.endswith("/finish")
                    )
                )
                for page in active
            ]
            for page in active:
                page.keyboard.press("f")
        assert all(response.value.status == 200 for response in responses)
        assert rounds <= 60, "more rounds than answers: someone was handed an answer twice or none"
    seconds = time.monotonic() - started
    finished = Counter(
        ReviewPass.objects.filter(status="finished").values_list("answer_id", flat=True)
    )
    assert finished == {a.pk: 2 for a in answers}
    assert set(Answer.objects.values_list("review_status", flat=True)) == {"adjudicated"}
    assert [page.js_errors for page in pages] == [[], []]
    print(f"\n2 reviewers x 50 answers (2 reviews each): {rounds} rounds, {seconds:.1f} s")
    for page in pages:
        page.context.close()
