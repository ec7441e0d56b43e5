"""XSS in a real browser: hostile text in every field a client or a judge controls, rendered on the
queue, answers, review and export pages in headless Chromium. No script runs, the text shows as
the same text, and the highlight spans stay on their exact offsets. Also item 11: the page's CSP
refuses inline scripts and eval, and htmx is configured to talk only to its own origin.

The text goes in the way it does in production: questions, answers and passages (with their
headers) through the ingest service, claims and explanations from an LLM judge (the fake OpenAI
server, over HTTP, through the real openai backend), notes through the review service.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from reviewapp.models import Answer, Claim
from reviewapp.review import service as review_service
from reviewapp.judging.service import answer_judge
from tests import factories as make
from tests.conftest import CHROMIUM
from tests.fake_openai import Reply
from tests.xss_corpus import PAYLOADS, assert_nothing_ran, sign_in, watched_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"needs Debian's chromium at {CHROMIUM}"),
]


@pytest.fixture
def page(browser, live_server):
    yield from watched_page(browser, live_server.url)


def _hostile_answer(fake_llm, settings) -> tuple[Answer, list[str]]:
    """One answer with a payload in every field, judged by the (fake) LLM, two claims decided with
    notes."""
    sentences = [f"Claim {i}: {p}." for i, p in enumerate(PAYLOADS)]
    passage = "Riders aged 65 and older pay $1.00 per ride. " + " ".join(PAYLOADS)
    answer = make.ingested(
        question=" | ".join(PAYLOADS),
        answer=" ".join(sentences),
        prior_turns=[{"role": "user", "content": p} for p in PAYLOADS[:5]],
        passages=[{"id": "P1", "text": passage, "tag": PAYLOADS[0][:200], "agency": PAYLOADS[1],
                   "title": PAYLOADS[4], "section": PAYLOADS[8], "source_url": PAYLOADS[5]}],
    )
    claims = [
        {"claim_id": f"c{i + 1}", "claim_text": sentence, "verification_status": "UNSUPPORTED",
         "source_passage_id": None, "source_text": None, "explanation": PAYLOADS[-1 - i]}
        for i, sentence in enumerate(sentences)
    ]
    # One SUPPORTED claim quoting the passage's hostile text, so the passage gets an evidence
    # highlight.
    claims[0] |= {
        "verification_status": "SUPPORTED",
        "source_passage_id": "P1",
        "source_text": PAYLOADS[0],
    }
    fake_llm.enqueue(
        Reply.ok(
            json.dumps(
                {
                    "claims": claims,
                    "grounding_score": 1 / len(claims),
                    "total_claims": len(claims),
                    "supported_claims": 1,
                    "unsupported_claims": len(claims) - 1,
                    "contradicted_claims": 0,
                }
            )
        )
    )
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake_llm.base_url, "test-key"
    make.openai_policy()
    answer_judge(answer_id=answer.pk)
    answer.refresh_from_db()
    assert (answer.status, answer.review_status) == ("judged", "in_review"), answer.judged_by.error
    return answer, sentences


def test_hostile_text_shows_as_text_runs_nothing_and_keeps_exact_highlights(
    page, live_server, fake_llm, settings
):
    ada = make.user("ada", "admin")
    for payload in PAYLOADS:  # one queue row per payload, as its question
        assert len(payload) < 110  # the queue shows 110 characters of a question
        answer = make.ingested(question=payload)
        answer_judge(answer_id=answer.pk)
    hostile, sentences = _hostile_answer(fake_llm, settings)
    review_service.lease_take(user=ada, answer=hostile)
    decided = list(hostile.claims.exclude(label="SUPPORTED").order_by("position")[:2])
    for claim, note in zip(decided, PAYLOADS[-2:]):
        claim.answer = hostile
        review_service.claim_decide(
            user=ada,
            claim=claim,
            decision="overturn",
            label="CONTRADICTED",
            note=note,
            expected_version=claim.version,
        )
    sign_in(page)

    # The queue: every question exactly, and the search box echoing a payload.
    page.goto("/queue/?" + urlencode({"q": PAYLOADS[8]}))
    assert_nothing_ran(page, "queue (search)")
    assert page.locator("input[name=q]").input_value() == PAYLOADS[8]
    page.goto("/queue/")
    assert_nothing_ran(page, "queue")
    questions = page.locator("td.question a").evaluate_all("els => els.map(e => e.textContent)")
    assert set(PAYLOADS) <= set(questions)

    page.goto("/answers/")
    assert_nothing_ran(page, "answers")
    cells = page.locator("td.question").evaluate_all("els => els.map(e => e.textContent)")
    assert set(PAYLOADS) <= set(cells)

    # The review page.
    page.goto(f"/review/{hostile.pk}/")
    page.locator("details").evaluate_all("els => els.forEach(e => e.open = true)")  # turns, history
    assert_nothing_ran(page, "review")
    text = lambda selector: page.locator(selector).evaluate_all(  # noqa: E731
        "els => els.map(e => e.textContent)"
    )
    assert text(".answer-pin .question .untrusted")[0] == hostile.question
    assert text("#answer-text")[0] == hostile.answer
    assert [t.split(": ", 1)[1] for t in text("details.turns li")] == PAYLOADS[:5]
    claims = list(hostile.claims.order_by("position"))
    assert text(".claim-card .claim-text") == [c.text for c in claims] == sentences
    # The deterministic checks may append their findings to the judge's explanation.
    assert text(".claim-card .explanation") == [c.explanation for c in claims]
    assert all(c.explanation.startswith(PAYLOADS[-1 - i]) for i, c in enumerate(claims))
    passage = hostile.passages.get()
    assert text("article.passage p.untrusted") == [passage.text]
    header = text("article.passage header")[0]
    for field in ("tag", "agency", "title", "section"):
        assert getattr(passage, field) in header
    assert passage.source_url in text("article.passage .provenance")[0]
    notes = text("details.history li .untrusted")
    assert notes == PAYLOADS[-2:]

    # Highlights: each segment sits at its offset, and each claim's segments spell its span exactly.
    segments = page.locator("#answer-text .seg").evaluate_all(
        "els => els.map(e => [Number(e.dataset.start), e.textContent, (e.dataset.claims ||"
        " '').split(' ')])"
    )
    for start, seg_text, _ in segments:
        assert hostile.answer[start:start + len(seg_text)] == seg_text
    for claim in claims:
        spelled = "".join(seg_text for _, seg_text, ids in segments if str(claim.pk) in ids)
        assert spelled == hostile.answer[claim.answer_start:claim.answer_end] == claim.text
    evidence = claims[0].evidence.get()
    highlighted = page.locator(
        f'article.passage .evidence-seg[data-claims~="{claims[0].pk}"]'
    ).evaluate_all("els => els.map(e => e.textContent).join('')")
    assert highlighted == passage.text[evidence.start:evidence.end] == PAYLOADS[0]

    # Selecting a claim by keyboard (the page's script at work) runs nothing either.
    for _ in range(3):
        page.keyboard.press("j")
    assert_nothing_ran(page, "review after j")

    # The exports page echoing hostile filters, with and without an error.
    queries = [
        {"profile": PAYLOADS[8], "since": PAYLOADS[0]},
        {"profile": PAYLOADS[4]},
        {"profile": "claim_verification"},
    ]
    for query in queries:
        page.goto("/exports/?" + urlencode(query))
        assert_nothing_ran(page, f"exports {query}")
        assert page.locator("input[name=profile]").input_value() == query["profile"]
    page.goto("/exports/?" + urlencode({"profile": PAYLOADS[8], "since": PAYLOADS[0]}))
    assert repr(PAYLOADS[0]) in page.locator("p.error").text_content()

    # What the export links serve: files to download or plain text, never HTML a browser would run.
    for fmt in ("jsonl", "csv", "golden"):
        # A streamed export on a busy 2-core box can take longer than the page timeout (5 s) to
        # start.
        download = page.request.get(f"/exports/download?format={fmt}", timeout=30000)
        assert download.status == 200
        assert download.headers["content-disposition"].startswith("attachment;")
        assert download.headers["x-content-type-options"] == "nosniff"
        assert "html" not in download.headers["content-type"]
        if (
            fmt != "golden"
        ):  # the golden set holds adjudicated answers only; this one is still in review
            # the last payload, a note and explanation, as data
            assert ">htmx</div>" in download.text()
    manifest = page.request.get(
        "/exports/manifest?" + urlencode({"format": "jsonl", "profile": PAYLOADS[0]})
    )
    assert manifest.headers["content-type"].split(";")[0] in ("text/plain", "application/json")
    page.goto("/exports/manifest?" + urlencode({"format": "jsonl", "profile": PAYLOADS[2]}))
    assert_nothing_ran(page, "manifest error")

    page.goto("/calibration/")
    assert_nothing_ran(page, "calibration")
    assert Claim.objects.filter(answer=hostile, decision="overturn").count() == 2


def test_the_csp_refuses_inline_scripts_and_eval_and_htmx_stays_on_its_origin(page, live_server):
    make.user("ada", "admin")
    sign_in(page)
    response = page.goto("/queue/")
    policy = response.headers["content-security-policy"]
    script_src = next(part for part in policy.split("; ") if part.startswith("script-src"))
    assert script_src == "script-src 'self'"  # no 'unsafe-inline', no 'unsafe-eval'

    # An inline script added to the live page is refused by the browser.
    with pytest.raises(Exception, match="Content Security Policy|Refused"):
        page.add_script_tag(content="window.__inline = true")
    assert page.evaluate("window.__inline") is None
    assert any(v.startswith("script-src") for v in page.evaluate("window.__csp"))

    config = page.evaluate(
        "[htmx.config.selfRequestsOnly, htmx.config.allowEval, htmx.config.allowScriptTags]"
    )
    assert config == [True, False, False]

    # htmx evaluates no JavaScript from attributes (allowEval false): a `js:` hx-vals is not even
    # tried...
    page.evaluate("""() => {
      const el = document.createElement("button");
      el.id = "js-vals";
      el.textContent = "js vals";
      el.setAttribute("hx-get", "/healthz");
      el.setAttribute("hx-vals", "js:{x: (window.__evaluated = true)}");
      el.setAttribute("hx-swap", "none");
      document.querySelector("main").prepend(el);
      htmx.process(el);
    }""")
    violations = len(page.evaluate("window.__csp"))
    # A real click (not one dispatched from evaluate(), whose code the CSP does not govern).
    with page.expect_response("**/healthz*"):
        page.click("#js-vals")
    assert page.evaluate("window.__evaluated") is None
    assert len(page.evaluate("window.__csp")) == violations
    # ...and were htmx configured to try, the CSP (no 'unsafe-eval') would refuse it.
    page.evaluate("htmx.config.allowEval = true")
    page.click("#js-vals")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__evaluated") is None
    new = page.evaluate("window.__csp")[violations:]
    assert any("eval" in v for v in new), new

    # htmx refuses a request to another origin before sending it (the CSP's connect-src would too).
    violations = len(page.evaluate("window.__csp"))
    page.evaluate("""() => {
      window.__refused = [];
      document.body.addEventListener("htmx:invalidPath",
          (e) => window.__refused.push(e.detail.path));
      const el = document.querySelector("#js-vals");
      el.setAttribute("hx-get", "https://example.org/steal");
      el.removeAttribute("hx-vals");
      htmx.process(el);
    }""")
    page.click("#js-vals")
    page.wait_for_function("window.__refused.length > 0")
    assert page.evaluate("window.__refused") == ["https://example.org/steal"]
    assert page.evaluate("window.__csp")[violations:] == []  # refused by htmx, not left to the CSP
