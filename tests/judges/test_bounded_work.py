"""Bounded work (issue 16, item 6): a request's cost is bounded in its size, and what the caps leave
unread is reported, never passed (judges.checks.bounds)."""

from __future__ import annotations

import json
import random
import re
import time
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import worst_case
from judges.backends.offline import judge as offline
from judges import passages as passage_index
from judges.checks import apply, apply_checks, mentions, trust
from judges.checks.bounds import (
    MAX_CITATIONS, MAX_CLAIMS, MAX_PIECES, MAX_QUOTATIONS, MAX_VALUES, checked_extent,
)
from judges.backends.offline.judge import judge_offline
from judges.text import rough_pieces, sentences, split_sentences, stems
from judges.types import JudgeRequest
from tests.judges.checking import backend_result, sentence_claims
from tests.judges.conftest import FARE_POLICY, REPO_ROOT

NOT_CHECKED = "Not checked: the answer has more than"


def _request(answer: str, *texts: str) -> JudgeRequest:
    texts = texts or (FARE_POLICY,)
    return JudgeRequest.model_validate(
        {
            "question": "Fares?",
            "answer": answer,
            "passages": [{"id": f"P{n}", "text": t} for n, t in enumerate(texts, 1)],
        }
    )


def _unchecked(result):
    """The claims that say the judge did not read them."""
    return [claim for claim in result.claims if claim.explanation.startswith("Not checked:")]


# --- real answers are read whole
# -------------------------------------------------------------------


def test_no_dev_answer_comes_near_a_cap():
    """The caps bite only on answers built to be expensive: every dev answer is read whole, with
    room to spare on every count."""
    for name in ("hagrid-dev.jsonl", "faithbench-dev.jsonl"):
        for line in (REPO_ROOT.parent / "shared" / "data" / name).read_text().splitlines():
            answer = json.loads(line)["answer"]
            assert checked_extent(answer).complete
            assert len(split_sentences(answer)) * 10 < MAX_PIECES


# --- each cap: what is past it is one UNSUPPORTED claim, or one finding ---------------------------


def _price(number: int) -> str:
    return f"${number + 1}.{number % 100:02d}"


def _priced(count: int) -> str:
    """Sentences of `count` distinct prices, two to a sentence (so that the values cap comes
    before the sentences cap)."""
    return " ".join(
        f"The fare is {_price(2 * n)} or {_price(2 * n + 1)}." for n in range(count // 2)
    )


def _named(count: int) -> list[str]:
    """`count` distinct names of letters (no numbers: they would pass the values cap first)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[n // 26 % 26] + letters[n % 26] for n in range(count)]


@pytest.mark.parametrize(
    "answer, reason, stop",
    [
        (
            _priced(MAX_VALUES + 40),
            f"more than {MAX_VALUES} distinct numbers ({MAX_VALUES + 40})",
            f"The fare is {_price(MAX_VALUES)} or",
        ),
        (
            " ".join(f"Pass {name} works." for name in _named(MAX_PIECES + 5)),
            f"more than {MAX_PIECES} sentences",
            f"Pass {_named(MAX_PIECES + 1)[-1]} works.",
        ),
        (
            " ".join(f"It says “fares rise in zone {n}” here." for n in range(MAX_QUOTATIONS + 5)),
            f"more than {MAX_QUOTATIONS} quotations",
            f"It says “fares rise in zone {MAX_QUOTATIONS}”",
        ),
        (
            " ".join(
                f"Seniors ride at half fare [P1]{' [P1]' * 9}."
                for _ in range(MAX_CITATIONS // 10 + 3)
            ),
            f"more than {MAX_CITATIONS} citation markers",
            "Seniors ride at half fare",
        ),
    ],
    ids=["values", "sentences", "quotations", "citations"],
)
def test_the_judge_reads_up_to_a_cap_and_says_what_it_left(answer, reason, stop):
    extent = checked_extent(answer)
    assert reason in extent.reason
    assert answer[extent.end:].startswith(stop)
    result = judge_offline(_request(answer))
    *judged, last = result.claims
    assert _unchecked(result) == [last]
    assert last.label == "UNSUPPORTED" and last.answer_span == (extent.end, len(answer))
    assert last.explanation.startswith(NOT_CHECKED) and reason in last.explanation
    assert all(claim.answer_span[1] <= extent.end for claim in judged)
    assert result.verdict != "GROUNDED"


def test_one_sentence_past_a_cap_is_read_up_to_the_value_that_passes_it():
    answer = (
        "The fares are " + ", ".join(f"${n}.{n % 100:02d}" for n in range(1, MAX_VALUES + 60)) + "."
    )
    extent = checked_extent(answer)
    assert answer[extent.end:].startswith(f"${MAX_VALUES + 1}.")
    result = judge_offline(_request(answer))
    assert [claim.answer_span[0] for claim in result.claims] == [0, extent.end]
    assert result.claims[-1].explanation.startswith(NOT_CHECKED)


def test_the_judge_stops_at_its_claim_cap_inside_a_sentence():
    names = _named(MAX_CLAIMS + 20)
    clauses = "; ".join(f"the {name} route serves stations north of the river" for name in names)
    result = judge_offline(_request(f"Riders say {clauses}."))
    assert len(result.claims) == MAX_CLAIMS
    assert result.claims[-1].explanation.startswith(f"{NOT_CHECKED} {MAX_CLAIMS - 1:,} claims")
    assert f"the {names[MAX_CLAIMS - 1]} route" in result.claims[-1].text[:20]
    assert f"the {names[MAX_CLAIMS - 2]} route" in result.claims[-2].text


def test_the_judge_stops_once_its_claims_have_scored_its_budget(monkeypatch):
    """Claims whose words are in every passage sentence cost a score for each: past MAX_SCORED
    (unit, term) pairs for the answer, the rest is not judged."""
    monkeypatch.setattr(offline, "MAX_SCORED", 2_000)
    passage = " ".join(f"Fare rider pass number {n}." for n in range(500))
    answer = " ".join("Fare rider pass." for _ in range(20))
    result = judge_offline(_request(answer, passage))
    unchecked = _unchecked(result)
    assert len(unchecked) == 1 and unchecked[0] is result.claims[-1]
    assert "more than 2,000 passage sentences scored" in unchecked[0].explanation
    # Three terms in 500 units each: 1,500 scored by the first claim, 3,000 by the second, and the
    # third is not judged.
    assert len(result.claims) == 2 + 1


def test_every_backend_has_what_lies_past_a_cap_lowered(fare_request):
    answer = _priced(MAX_VALUES + 40)
    request = fare_request(answer)
    result = apply_checks(request, backend_result(answer, *sentence_claims(request)))
    extent = checked_extent(answer)
    past = [claim for claim in result.claims if claim.answer_span[0] >= extent.end]
    assert past and all(claim.label == "UNSUPPORTED" for claim in past)
    assert all(NOT_CHECKED in claim.explanation for claim in past)
    assert not any(
        NOT_CHECKED in claim.explanation
        for claim in result.claims
        if claim.answer_span[1] <= extent.end
    )
    assert result.verdict != "GROUNDED"


def test_a_backend_result_past_the_claim_cap_has_the_rest_lowered_unread(monkeypatch, fare_request):
    monkeypatch.setattr(apply, "MAX_CLAIMS", 2)
    request = fare_request("The regular adult fare is $2.75 per ride. A 30-day pass costs $86.00. "
                           "Children under 5 ride free. Reduced Fare passes for seniors cost $43.")
    result = apply_checks(request, backend_result(request.answer, *sentence_claims(request)))
    assert [claim.label for claim in result.claims] == [
        "SUPPORTED",
        "SUPPORTED",
        "UNSUPPORTED",
        "UNSUPPORTED",
    ]
    assert all("the checks read the first 2." in claim.explanation for claim in result.claims[2:])
    assert result.verdict == "MOSTLY_GROUNDED" and result.grounding_score == 0.5
    assert "Remove or source c3, c4" in result.rewrite_note


# --- sentence splitting stays linear -----------------------------------------------------------


def test_a_long_line_is_split_in_chunks_to_the_sentences_of_the_whole_line(monkeypatch):
    read: list[int] = []
    split = sentences._pysbd_sentences
    monkeypatch.setattr(
        sentences, "_pysbd_sentences", lambda line: read.append(len(line)) or split(line)
    )
    line = " ".join(f"Zone {name} is open. Seniors ride free on the {name} line, e.g. at noon."
                    for name in _named(80))
    chunked = sentences._split_sentences.__wrapped__(line)
    assert len(read) > 4 and sum(read) == len(line) and max(read) < sentences.LINE_CHUNK_CHARS + 60
    monkeypatch.setattr(sentences, "LINE_CHUNK_CHARS", len(line))
    assert chunked == sentences._split_sentences.__wrapped__(line)
    assert len(chunked) == 160


# --- every family of the worst-case bench: bounded cost ----------------------------------------

# CPU seconds for one request at the API's caps, judge and checks together, and the checks again on
# a span-less backend result on cold caches. Before the caps on work each of these families took
# 16-150 s, one stage each: distinct values, claims (and pysbd), quotations, citations, provenance
# statements against 100 passages, many passages, words every passage sentence holds. With them
# each takes a few seconds on a loaded 2-core box; bench/worst_case.py times all 17 families
# (bench/README.md, "Bounded work"). Building a request at the caps takes seconds too, so only
# these run here.
WORK_BOUND_S = 10.0
COSTLIEST_FAMILIES = ("numbers-one-list", "tiny-sentences", "quotations", "citations", "provenance",
                      "many-passages", "common-words")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("family", COSTLIEST_FAMILIES)
def test_a_request_of_each_worst_case_family_costs_a_bounded_time(family):
    caps = worst_case.Caps(1.0)
    request = JudgeRequest.model_validate(
        worst_case.within_caps(
            worst_case.FAMILIES[family](caps, random.Random(worst_case.SEED)), caps
        )
    )
    passage_index.clear_caches()
    started = time.process_time()
    result = judge_offline(request)
    checked = apply_checks(request, result)
    spanless = worst_case.spanless(request)
    passage_index.clear_caches()
    apply_checks(request, spanless)
    spent = time.process_time() - started
    assert spent < WORK_BOUND_S, f"{family}: {spent:.2f} s"
    assert len(result.claims) <= MAX_CLAIMS
    if not checked_extent(request.answer).complete:
        assert _unchecked(result) and checked.verdict != "GROUNDED", family


# --- the provenance check reads each passage's section ids once ------------------------------

_SECTION_TEXT = st.lists(
    st.sampled_from(
        [
            "Section ",
            "section",
            "Sec. ",
            "sec.",
            "§",
            "§ ",
            " ",
            "4",
            "2",
            ".",
            "a",
            "B",
            "1",
            "0",
            "x",
            ",",
            "\n",
            "SECTION  ",
            "_",
            "٤",
        ]
    ),
    max_size=12,
)


@settings(max_examples=1000, deadline=None)
@given(
    _SECTION_TEXT,
    st.sampled_from(["4", "4.2", "4.2a", "2", "12", "1.0", "4a", "42", "2.1", "0", "4B", "٤"]),
)
def test_a_passage_names_a_section_as_one_search_for_it_finds(pieces, sid):
    """What a search of each passage for each section id found (the rule before the index)."""
    text = "".join(pieces)
    searched = re.compile(rf"(?:section|sec\.|§)\s*{re.escape(sid)}(?![\w.]?\d)", re.IGNORECASE)
    assert mentions._text_names_section(sid, [SimpleNamespace(text=text)]) == bool(
        searched.search(text)
    )


# --- the support check: closest sentences by stem, and its budget ------------------------------

_WORDS = st.sampled_from(
    ["fare", "rider", "pass", "zone", "senior", "bus", "free", "monthly", "card", "train"]
)
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=6).map(
    lambda words: " ".join(words).capitalize() + "."
)
_PASSAGE_TEXT = st.lists(_SENTENCE, min_size=1, max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_PASSAGE_TEXT, min_size=1, max_size=4),
    st.sets(
        st.sampled_from(
            ["fare", "rider", "pass", "zone", "senior", "bus", "free", "monthli", "card", "train"]
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_the_closest_sentences_are_those_comparing_every_sentence_gives(texts, wanted, rough):
    """How they were found before: every sentence of every passage compared with the claim, sorted
    stably by the stems shared, the first three kept that share one."""
    passages = [SimpleNamespace(id=f"P{n}", text=text) for n, text in enumerate(texts, 1)]
    scored = []
    for passage in passages:
        spans = rough_pieces(passage.text) if rough else split_sentences(passage.text)
        scored += [
            (len(wanted & stems(passage.text[s:e])), passage.id, passage.text[s:e])
            for s, e in spans
        ]
    scored.sort(key=lambda row: -row[0])
    expected = [
        (pid, sentence) for shared, pid, sentence in scored[: trust.CLOSEST_SENTENCES] if shared
    ]
    assert trust._closest_sentences(wanted, passages, rough, [0]) == expected


def test_the_support_check_lowers_the_claims_past_its_budget(monkeypatch, fare_request):
    monkeypatch.setattr(trust, "MAX_SCORED", 1)
    request = fare_request(
        "Seniors pay a reduced fare with a Senior ID card. Children ride free with an adult. "
        "Passes are sold at vending machines in every station."
    )
    result = apply_checks(request, backend_result(request.answer, *sentence_claims(request)))
    notes = ["Not checked: the answer has claims whose words fill the passages" in c.explanation
             for c in result.claims]
    assert notes == [False, True, True]  # the first claim is compared, and passes the budget
    assert all(c.label == "UNSUPPORTED" for c, noted in zip(result.claims, notes) if noted)
