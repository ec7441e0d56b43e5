"""The reviewer's desk in Chromium (issue 30): notes that survive, a layout that holds with comments
at laptop sizes and on a phone, a selection that only moves forward, reopening that asks first.

Screenshots go to /tmp/desk-*.png (`pytest tests/test_review_desk_browser.py -s` prints the
figures).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from reviewapp.models import Answer, AnswerComment, Claim, NoteDraft, Policy, WebhookDelivery
from reviewapp.policy import service as policy_service
from tests import factories as make
from tests.conftest import CHROMIUM
from tests.test_browser import PASSWORD, TWO_FLAGS, _sign_in
from tests.test_review_desk import six_claims

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium)",
    ),
]


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 768})
    context.set_default_timeout(5000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"script error: {exc}"))
    page.on("console", lambda msg: errors.append(f"console: {msg.text}")
            if msg.type == "error" and not msg.text.startswith("Failed to load resource") else None)
    page.js_errors = errors
    yield page
    context.close()


def _take(page, answer: Answer) -> None:
    """Sign in and lease `answer` with `n`, as a reviewer starts."""
    _sign_in(page, "/queue/")
    page.wait_for_url("**/queue/")
    with page.expect_navigation():
        page.keyboard.press("n")
    page.wait_for_url(f"**/review/{answer.pk}/")


def _selected(page) -> int:
    return int(page.locator(".claim-card.selected").get_attribute("data-claim"))


# --- notes ------------------------------------------------------------------------------------


def test_a_typed_note_survives_esc_a_move_a_reload_and_goes_with_the_finish(page, live_server):
    make.user("rita", "reviewer")
    answer = make.judged(TWO_FLAGS)
    first, second = answer.claims.exclude(label="SUPPORTED").order_by("position")
    _take(page, answer)
    assert _selected(page) == first.pk
    page.keyboard.press("e")
    page.keyboard.type("P2 says $92.00, not <b>$75</b>")
    with page.expect_response(lambda r: r.url.endswith(f"/claims/{first.pk}/draft")) as saved:
        page.keyboard.press("Escape")  # leaves the box; the draft is posted at once
    assert saved.value.status == 204
    page.keyboard.press("j")
    assert _selected(page) == second.pk
    page.reload()
    box = page.locator(f"#claim-{first.pk} textarea[name=note]")
    assert box.input_value() == "P2 says $92.00, not <b>$75</b>"
    assert "goes with your decision" in page.locator(f"#claim-{first.pk} .draft-state").inner_text()
    # `f` right after typing (no Esc, no pause): the draft is saved first, then the finish takes it.
    page.locator(f"#claim-{second.pk}").click()
    page.keyboard.press("e")
    page.keyboard.type("typed and finished")
    page.keyboard.press("Escape")
    with page.expect_navigation():
        page.keyboard.press("f")
    notes = dict(Claim.objects.filter(answer=answer).values_list("pk", "note"))
    assert (notes[first.pk], notes[second.pk]) == (
        "P2 says $92.00, not <b>$75</b>",
        "typed and finished",
    )
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicated"
    assert page.js_errors == []


def test_n_with_an_unsaved_note_asks_in_the_page_esc_stays_and_enter_leaves_with_the_draft(
    page, live_server
):
    make.user("rita", "reviewer")
    answer = make.judged(TWO_FLAGS)
    first = answer.claims.exclude(label="SUPPORTED").order_by("position").first()
    _take(page, answer)
    later = make.judged(TWO_FLAGS.replace("$1.50", "$1.60"))  # what `n` opens next
    page.keyboard.press("e")
    page.keyboard.type("check the senior fare")
    page.keyboard.press("Escape")
    dialogs: list[str] = []
    # the browser's confirm(): none
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.keyboard.press("n")
    question = page.locator("#leave-confirm")
    question.wait_for()
    assert f"Your note on {first.cid} is not saved with a decision" in question.inner_text()
    assert page.evaluate("document.activeElement.value") == "leave"  # Enter leaves
    page.keyboard.press("j")  # keys do nothing behind the dialog
    assert _selected(page) == first.pk
    page.keyboard.press("Escape")  # stays: the dialog closes, nothing else happens
    assert not question.is_visible() and page.url.endswith(f"/review/{answer.pk}/")
    page.keyboard.press("s")  # skip asks the same
    question.wait_for()
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    question.wait_for()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_url(f"**/review/{later.pk}/")
    assert dialogs == []
    assert NoteDraft.objects.get(claim=first).text == "check the senior fare"  # the draft stayed
    assert Answer.objects.get(pk=answer.pk).review_status == "in_review"  # left, not skipped
    assert page.js_errors == []


# --- the layout -------------------------------------------------------------------------------


PANES = """() => ['.columns > .left', '.columns > .right', '.answer-pin']
  .map(s => Math.round(document.querySelector(s).getBoundingClientRect().height))"""
# Whether a click at the centre of each toolbar button lands on that button (not a comment over it).
CLICKABLE = """() => Array.from(document.querySelectorAll('.toolbar button'))
  .filter(b => b.offsetParent).map(b => {
  const r = b.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return [b.textContent.trim().slice(0, 24), r.height >= 1 && (hit === b || b.contains(hit))];
})"""


@pytest.mark.parametrize("size", [(1366, 768), (1440, 900)])
@pytest.mark.parametrize("comments", [0, 10])
def test_both_panes_keep_300_px_and_the_toolbar_its_clicks_with_comments(
    page, live_server, size, comments
):
    rita = make.user("rita", "reviewer")
    answer = six_claims()
    for n in range(comments):
        AnswerComment.objects.create(
            answer=answer, author=rita, body=f"comment {n}\nsecond line\nthird line"
        )
    page.set_viewport_size({"width": size[0], "height": size[1]})
    _take(page, answer)
    left, right, pinned = page.evaluate(PANES)
    assert left >= 300 and right >= 300, (left, right)
    assert page.locator(".toolbar").bounding_box()["height"] < 50  # one line of buttons, not two
    assert "{#" not in page.locator("body").inner_text()  # no template comment shows as text
    assert page.locator("#answer-text").is_visible() and pinned <= 0.25 * size[1] + 1
    assert all(ok for _, ok in page.evaluate(CLICKABLE)), page.evaluate(CLICKABLE)
    # The selected card's buttons are inside its pane, not cut off.
    page.wait_for_function(
        """() => {
      const b = document.querySelector('.claim-card.selected button.confirm')
        .getBoundingClientRect();
      const p = document.querySelector('.columns > .left').getBoundingClientRect();
      return b.top >= p.top && b.bottom <= p.bottom; }"""
    )
    page.screenshot(path=f"/tmp/desk-{size[0]}x{size[1]}-{comments}-comments.png")
    summary = page.locator("#comments > summary")
    assert summary.inner_text().startswith(f"Comments ({comments})")
    summary.click()  # open: the thread scrolls in its drawer, the toolbar still takes its clicks
    page.locator("#comments .comment-form").wait_for()
    assert all(ok for _, ok in page.evaluate(CLICKABLE)), page.evaluate(CLICKABLE)
    # the drawer lies over the page, it takes no height
    assert page.evaluate(PANES)[:2] == [
        left,
        right,
    ]
    page.screenshot(path=f"/tmp/desk-{size[0]}x{size[1]}-{comments}-comments-open.png")
    page.locator("#skip-form button").click()  # a click on a toolbar button does what it says
    page.wait_for_url("**/queue/")
    print(
        f"\n{size[0]}x{size[1]}, {comments} comments: claims {left} px, passages {right} px, answer"
        f" {pinned} px"
    )
    assert page.js_errors == []


def test_on_a_390_px_phone_the_toolbar_stays_in_reach_and_buttons_are_finger_sized(
    page, live_server
):
    make.user("rita", "reviewer")
    answer = six_claims()
    page.set_viewport_size({"width": 390, "height": 844})
    _take(page, answer)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    finish = page.locator("#finish-form button").bounding_box()
    # At the page's foot Finish is still on screen, whole, and a finger's height.
    assert 0 <= finish["y"] < 844 and 0 <= finish["x"] and finish["x"] + finish["width"] <= 390
    assert finish["height"] >= 44
    page.screenshot(path="/tmp/desk-390.png")
    page.screenshot(path="/tmp/desk-390-full.png", full_page=True)
    assert page.js_errors == []


# Every visible control less tall than a finger, as [text or name, height].
SMALL_BUTTONS = """() => Array.from(document.querySelectorAll(
  'button, select, textarea, input:not([type=checkbox]):not([type=radio]):not([type=hidden])'))
  .filter(b => b.offsetParent)
  .map(b => [(b.textContent.trim() || b.name).slice(0, 30),
             Math.round(b.getBoundingClientRect().height)])
  .filter(([, h]) => h < 44)"""


def test_on_a_390_px_phone_every_queue_column_is_on_screen_and_every_control_finger_sized(
    page, live_server
):
    make.user("rita", "reviewer")
    answer = make.judged(TWO_FLAGS)
    page.set_viewport_size({"width": 390, "height": 844})
    _sign_in(page, "/queue/")
    page.wait_for_url("**/queue/")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    row = page.locator("table.queue tbody tr").first
    for column in (
        "Why it is here",
        "Score",
        "Judge",
    ):  # each named by its header, whole, on screen
        cell = row.locator(f"td[data-label='{column}']")
        box = cell.bounding_box()
        assert cell.is_visible() and box["x"] >= 0 and box["x"] + box["width"] <= 390, (column, box)
        assert (
            page.evaluate("c => getComputedStyle(c, '::before').content", cell.element_handle())
            == f'"{column}: "'
        )
    assert (
        row.locator("td[data-label='Judge']").inner_text()
        == f"{answer.judged_by.profile}@{answer.judged_by.prompt_version}"
    )
    assert page.evaluate(SMALL_BUTTONS) == []
    page.screenshot(path="/tmp/desk-390-queue.png", full_page=True)
    page.goto(f"/review/{answer.pk}/")
    page.keyboard.press("t")
    page.locator("#finish-form button:not([disabled])").wait_for()
    assert page.evaluate(SMALL_BUTTONS) == []
    assert page.js_errors == []


def test_a_claim_is_added_by_keyboard_selection_in_the_answers_copy(page, live_server):
    make.user("rita", "reviewer")
    answer = make.judged(TWO_FLAGS)
    _take(page, answer)
    start = TWO_FLAGS.index("reduced fare")
    selected = _selected(page)
    box = page.locator("#add-claim textarea.select-source")
    box.focus()
    page.keyboard.press("Control+Home")
    for _ in range(start + 2):  # into "reduced": the claim widens to whole words
        page.keyboard.press("ArrowRight")
    for _ in range(len("duced fa")):
        page.keyboard.press("Shift+ArrowRight")
    form = page.locator("#add-claim")
    assert form.locator("input[name=text]").input_value() == "duced fa"
    assert "filled" in form.get_attribute("class")
    page.keyboard.press("j")  # a key in the copy moves no claim, decides nothing and edits nothing
    assert box.input_value() == TWO_FLAGS and _selected(page) == selected
    form.locator("select[name=category]").select_option("price")
    form.locator("select[name=label]").select_option("CONTRADICTED")
    form.locator("button[type=submit]").focus()
    with page.expect_response(lambda r: r.url.endswith("/add-claim")) as added:
        page.keyboard.press("Enter")
    assert added.value.status == 200
    claim = Claim.objects.get(answer=answer, origin="reviewer")
    assert (claim.text, claim.category, claim.human_label) == (
        "reduced fare",
        "price",
        "CONTRADICTED",
    )
    assert (claim.answer_start, claim.answer_end) == (start, start + len("reduced fare"))
    assert page.js_errors == []


def test_g_opens_the_guidelines_beside_the_claims_and_they_stay_open_through_a_decision_and_a_reload(
    page, live_server
):
    rita = make.user("rita", "reviewer")
    policy_service.guidelines_update(
        user=make.admin(),
        note="rules",
        text="## Prices\n\nConfirm a price only when **the passage** states it.",
    )
    answer = six_claims()
    _take(page, answer)
    panel = page.locator("#guidelines")
    assert not panel.is_visible()
    page.keyboard.press("g")
    panel.wait_for()
    assert panel.locator("h2", has_text="Prices").is_visible() and "policy v2" in panel.inner_text()
    assert page.locator(".review-head .guidelines-toggle").get_attribute("aria-expanded") == "true"
    # Beside the claims, not over them: the selected card and its Confirm button stay clickable.
    claims, shown = page.locator(".columns > .left").bounding_box(), panel.bounding_box()
    assert shown["x"] >= claims["x"] + claims["width"] - 1, (claims, shown)
    # the toolbar above it too
    assert all(ok for _, ok in page.evaluate(CLICKABLE)), page.evaluate(CLICKABLE)
    page.screenshot(path="/tmp/desk-guidelines.png")
    with page.expect_response(lambda r: "/decide" in r.url):
        page.locator(".claim-card.selected button.confirm").click()
    page.wait_for_function("() => document.querySelector('#claim-count b')?.textContent === '1/6'")
    assert panel.is_visible()  # a decision's redraw leaves it open
    page.reload()
    panel.wait_for()  # so does a reload (kept in this browser)
    assert page.locator(".review-head .guidelines-toggle").get_attribute("aria-expanded") == "true"
    page.keyboard.press("g")
    assert not panel.is_visible()
    assert Policy.current().guidelines.startswith("## Prices") and rita.is_active
    assert page.js_errors == []


# --- keys -------------------------------------------------------------------------------------


def test_c_never_moves_the_selection_backwards(page, live_server):
    make.user("rita", "reviewer")
    answer = six_claims()
    order = [c.pk for c in answer.claims.order_by("position")]
    _take(page, answer)
    while _selected(page) != order[0]:
        page.keyboard.press("k")
    seen = [_selected(page)]
    for n in range(1, 7):
        with page.expect_response(lambda r: "/decide" in r.url):
            page.keyboard.press("c")
        page.wait_for_function(
            "n => document.querySelector('#claim-count b')?.textContent === `${n}/6`", arg=n
        )
        seen.append(_selected(page))
    assert seen == order + [order[-1]]  # one claim forward each time, then it stays on the last
    assert "0</b> flagged left" in page.locator("#claim-count").inner_html()
    assert page.js_errors == []


def test_u_after_finishing_asks_before_reopening_and_the_client_is_told(page, live_server):
    make.user("rita", "reviewer")
    bot, endpoint = make.webhook_endpoint(events=("answer.adjudicated",))
    answer = make.judged(TWO_FLAGS, client=bot)
    _take(page, answer)
    page.check("#stay-after-finish")  # stay on the answer after `f`
    with page.expect_response(lambda r: r.url.endswith("/finish")):
        page.keyboard.press("f")
    page.wait_for_function(
        "() => (document.querySelector('#review-panel h1')?.textContent ||"
        " '').includes('adjudicated: ')"
    )
    with page.expect_response(lambda r: r.url.endswith("/undo")) as asked:
        page.keyboard.press("u")
    assert asked.value.status == 200
    question = page.locator("#reopen-confirm")
    question.wait_for()
    assert "reopens it for review and tells the client" in question.inner_text()
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicated"  # nothing happened yet
    # Enter or u confirms
    assert page.evaluate("document.activeElement.closest('#reopen-form') !== null")
    with page.expect_response(lambda r: r.url.endswith("/undo")):
        page.keyboard.press("u")
    page.locator("#review-panel .messages", has_text="reopened").wait_for()
    assert Answer.objects.get(pk=answer.pk).review_status == "in_review"
    assert (
        WebhookDelivery.objects.filter(
            answer=answer, endpoint=endpoint, event="answer.reopened"
        ).count()
        == 1
    )
    assert page.js_errors == []


def _disputed() -> Answer:
    """An answer two reviewers decided differently, waiting for a lead (as on /adjudication/)."""
    from reviewapp.review import service as review_service
    from tests.test_double_review import _double

    answer = _double()
    claim = make.flagged(answer)
    for name, label in (("alice", "UNSUPPORTED"), ("bob", "CONTRADICTED")):
        user = make.user(name, "reviewer")
        review_service.lease_next(user=user)
        review_service.claim_decide(
            user=user, claim=claim, decision="overturn", label=label, note="", expected_version=0
        )
        review_service.answer_finish(user=user, answer=answer)
    assert Answer.objects.get(pk=answer.pk).review_status == "adjudicating"
    return answer


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_on_the_review_page_with_comments_open_and_on_adjudication(
    page, live_server, scheme
):
    from axe_playwright_python.sync_playwright import Axe

    rita = make.user("rita", "reviewer")
    rita.groups.add(Group.objects.get_or_create(name="lead")[0])
    answer = make.judged(TWO_FLAGS)
    AnswerComment.objects.create(answer=answer, author=rita, body="a comment\nover two lines")
    page.emulate_media(color_scheme=scheme)
    _sign_in(page, f"/review/{answer.pk}/")
    found = {}
    page.locator("#comments > summary").click()
    page.locator("#comments .comment-form").wait_for()
    page.keyboard.press("g")  # the guidelines panel open too
    page.locator("#guidelines").wait_for()
    found["review"] = Axe().run(page).response["violations"]
    page.keyboard.press("?")
    page.locator("#help").wait_for()
    found["review+help"] = Axe().run(page).response["violations"]
    disputed = _disputed()
    page.goto("/adjudication/")
    # a row to check, not an empty list
    page.locator(f"a[href='/review/{disputed.pk}/']").first.wait_for()
    found["adjudication"] = Axe().run(page).response["violations"]
    page.goto(f"/review/{disputed.pk}/")  # a lead's view: the reviewers' decisions side by side
    page.locator("table.pass-decisions.disagree").first.wait_for()
    found["review (lead)"] = Axe().run(page).response["violations"]
    serious = {
        where: [
            (v["id"], [n["target"] for n in v["nodes"]])
            for v in violations
            if v["impact"] in ("serious", "critical")
        ]
        for where, violations in found.items()
    }
    assert serious == {where: [] for where in found}, serious
    assert page.js_errors == []
    assert PASSWORD  # the factories' password signs rita in


def test_axe_finds_nothing_serious_on_runs_side_by_side_and_the_policy_with_jobs(page, live_server):
    from axe_playwright_python.sync_playwright import Axe

    from reviewapp.judging import jobs as jobs_service
    from reviewapp.models import Job, JudgeRun, Passage

    admin = make.admin("rita")  # signs in as _sign_in does
    policy_service.guidelines_update(user=admin, note="rules",
                                     text="# Prices\n\n- confirm a price the passage states")
    answer = make.in_review()
    fixed = "A 30-day pass costs $75.00 and covers all buses."  # the re-judge finds c2 supported
    Passage.objects.filter(answer=answer, pid="P2").update(text=fixed)
    job = jobs_service.job_start_rejudge(user=admin, answer_ids=[answer.pk], profile="",
                                         backend="offline", model="", example_set=None)
    jobs_service.answer_rejudge(job_id=job.pk, answer_id=answer.pk)
    side = JudgeRun.objects.get(job=job)
    _sign_in(page, "/policy/")
    page.locator(f"#job-{job.pk} a[href='/review/{answer.pk}/runs/{side.pk}/']").wait_for()
    found = {"policy": Axe().run(page).response["violations"]}
    page.locator(f"#job-{job.pk} a[href='/review/{answer.pk}/runs/{side.pk}/']").click()
    page.locator("#run-differences").wait_for()
    assert "1 of 2 claims differs" in page.locator("#run-differences").inner_text()
    found["runs side by side"] = Axe().run(page).response["violations"]
    serious = {
        where: [
            (v["id"], [n["target"] for n in v["nodes"]])
            for v in violations
            if v["impact"] in ("serious", "critical")
        ]
        for where, violations in found.items()
    }
    assert serious == {where: [] for where in found}, serious
    assert Job.objects.get(pk=job.pk).kind == "rejudge" and page.js_errors == []
