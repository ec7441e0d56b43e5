"""judges.locate: where a judge's quote stands in the passages, and how well it matches.

Plain pytest (no Django). The property tests are in test_locate_properties.py."""

from __future__ import annotations

import pytest

from judges.locate import (
    FUZZY_FLOOR,
    MIN_FUZZY_CHARS,
    UNVERIFIED_NO_QUOTE,
    UNVERIFIED_QUOTE,
    Located,
    distrust_unverified_quotes,
    find_in_text,
    locate,
    normalize_text,
    normalized,
)
from judges.types import Claim, Evidence, Passage

P1 = (
    "Section 4.2 Reduced fares. The regular adult fare is $2.75 per ride. Riders aged 65 and older "
    "pay a reduced fare of $1.35 per ride with a valid Senior ID card. Children under 5 ride free "
    "with a paying adult; up to 3 children per adult."
)
P2 = (
    "A 30\u2011day pass costs $86.00 and is valid for unlimited rides on buses and trains \u2014 "
    "including express routes. The agency calls it \u201cthe best value for daily riders.\u201d "
    "Reduced\u00a0Fare passes for seniors cost $43. Passes are sold at station vending machines "
    "and at the customer service center."
)
P3 = "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior ID card."
PASSAGES = [Passage(id="P1", text=P1), Passage(id="P2", text=P2), Passage(id="P3", text=P3)]
TEXT = {passage.id: passage.text for passage in PASSAGES}


def source(located: Located) -> str:
    start, end = located.span
    return TEXT[located.passage_id][start:end]


# --- exact ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pid,start,end", [("P1", 27, 68), ("P1", 69, 160), ("P2", 0, 26), ("P2", 150, 188)]
)
def test_every_exact_quote_is_found_at_its_true_position(pid, start, end):
    quote = TEXT[pid][start:end]
    located = locate(quote, PASSAGES, pid)
    assert (located.passage_id, located.span, located.match) == (pid, (start, end), "exact")
    assert located.score == 100.0


def test_an_exact_quote_in_a_later_passage_is_found_there():
    quote = "Passes are sold at station vending machines"
    located = locate(quote, PASSAGES)
    assert (located.passage_id, located.match) == ("P2", "exact") and source(located) == quote


def test_when_the_preferred_passage_is_wrong_the_quote_is_found_in_the_right_one():
    quote = "The regular adult fare is $2.75 per ride."
    located = locate(quote, PASSAGES, "P2")
    assert (located.passage_id, located.span, located.match) == ("P1", (27, 68), "exact")


def test_the_preferred_passage_wins_when_several_hold_the_quote():
    quote = "Riders aged 65 and older pay a reduced fare"
    assert locate(quote, PASSAGES, "P3").passage_id == "P3"
    assert locate(quote, PASSAGES, "P1").passage_id == "P1"
    assert locate(quote, PASSAGES).passage_id == "P1"  # no preference: passage order


def test_an_exact_match_anywhere_beats_a_normalized_match_in_the_preferred_passage():
    passages = [
        Passage(id="A", text="The Fare Is $2.75."),
        Passage(id="B", text="the fare is $2.75."),
    ]
    located = locate("the fare is $2.75", passages, "A")
    assert (located.passage_id, located.match) == ("B", "exact")


def test_outer_whitespace_of_a_quote_does_not_stop_an_exact_match():
    located = locate("  The regular adult fare is $2.75 per ride.\n", PASSAGES)
    assert (located.span, located.match) == ((27, 68), "exact")


# --- normalized -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "quote,pid,expected",
    [
        # case and whitespace
        (
            "the REGULAR adult fare   is $2.75\nper ride",
            "P1",
            "The regular adult fare is $2.75 per ride",
        ),
        # curly quotes in the passage, straight ones in the quote (single and double are the same)
        (
            'The agency calls it "the best value for daily riders."',
            "P2",
            "The agency calls it \u201cthe best value for daily riders.\u201d",
        ),
        ("it 'the best value for daily riders'", "P2", "it \u201cthe best value for daily riders"),
        # a non-breaking hyphen and an em dash in the passage, ASCII in the quote
        ("A 30-day pass costs $86.00", "P2", "A 30\u2011day pass costs $86.00"),
        (
            "on buses and trains - including express routes",
            "P2",
            "on buses and trains \u2014 including express routes",
        ),
        # a dash in the quote that the passage writes as a hyphen
        ("Children under 5 ride free with a paying adult \u2013 up to 3", "P1", None),
        # NFKC: a non-breaking space in the passage, a ligature and full-width digits in the quote
        (
            "Reduced Fare passes for seniors cost $43",
            "P2",
            "Reduced\u00a0Fare passes for seniors cost $43",
        ),
        (
            "passes are sold at station vending machines and at the customer service center",
            "P2",
            "Passes are sold at station vending machines and at the customer service center",
        ),
        (
            "with a valid \uff33\uff45\uff4e\uff49\uff4f\uff52 ID card",
            "P1",
            "with a valid Senior ID card",
        ),
        ("cost \uff04\uff14\uff13", "P2", "cost $43"),
        ("the ﬁrst", "P1", None),
        # zero-width characters in the quote
        ("Children\u200b under 5 ride\u2060 free", "P1", "Children under 5 ride free"),
        # punctuation at the quote's edges
        (
            '"Riders aged 65 and older pay a reduced fare,"',
            "P1",
            "Riders aged 65 and older pay a reduced fare",
        ),
        ("...ride free with a paying adult!", "P1", "ride free with a paying adult"),
    ],
)
def test_edited_quotes_are_found_normalized_and_slice_back_to_the_source_text(quote, pid, expected):
    located = locate(quote, PASSAGES)
    if expected is None:  # an edit the normalization does not undo (dash for ";") or no such text
        assert located.match in ("fuzzy", "not_found")
        return
    assert (located.passage_id, located.match, located.score) == (pid, "normalized", 100.0)
    assert source(located) == expected


@pytest.mark.parametrize("quote,expected", [
    ("Riders aged 65 \u2026 with a valid Senior ID card",
     "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior ID card"),
    ("Riders aged 65 and older ... $1.35 per ride ... Senior ID card",
     "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior ID card"),
    ("The regular adult fare [...] per ride", "The regular adult fare is $2.75 per ride"),
    ("Children under 5 . . . paying adult", "Children under 5 ride free with a paying adult"),
])
def test_an_ellipsis_in_a_quote_is_a_gap_whose_pieces_appear_in_order(quote, expected):
    located = locate(quote, PASSAGES, "P1")
    assert (located.passage_id, located.match) == ("P1", "normalized")
    assert source(located) == expected


def test_ellipsis_pieces_out_of_order_or_too_far_apart_are_not_a_normalized_match():
    assert locate("with a valid Senior ID card ... Riders aged 65", PASSAGES).match != "normalized"
    far = Passage(
        id="F", text="Start of the rule. " + "filler words here. " * 40 + "End of the rule."
    )
    assert locate("Start of the rule ... End of the rule", [far]).match == "not_found"
    near = Passage(
        id="N", text="Start of the rule. " + "filler words here. " * 10 + "End of the rule."
    )
    assert locate("Start of the rule ... End of the rule", [near]).match == "normalized"


def test_an_ellipsis_that_is_in_the_passage_itself_matches_as_written():
    passage = Passage(
        id="E", text="Fares rise in 2027... maybe. Fares rise in 2027 and fall in 2028."
    )
    located = locate("Fares rise in 2027... maybe", [passage])
    assert (located.match, located.span) == ("exact", (0, 27))


def test_normalized_spans_map_back_through_expanding_and_dropped_characters():
    text = (
        "Die Stra\u00dfe: \ufb01ve caf\u0065\u0301s \u2014 \u201cfree\u201d\u200b"
        " rides\u00a0\u00a0today."
    )
    passage = Passage(id="U", text=text)
    located = locate("strasse: five caf\u00e9s - \"free\" rides today", [passage])
    assert located.match == "normalized"
    assert (
        text[located.span[0] : located.span[1]]
        == "Stra\u00dfe: \ufb01ve caf\u0065\u0301s \u2014 \u201cfree\u201d\u200b"
        " rides\u00a0\u00a0today"
    )


def test_the_normalized_form_and_its_index_map():
    text = "  A\u00a0\u00a0B\u2019s \u201cC\u201d\u2014D\u200bE \ufb01  "
    norm = normalized(text)
    assert norm.text == "a b's 'c'-de fi"
    assert len(norm.starts) == len(norm.ends) == len(norm.text)
    for k, ch in enumerate(norm.text):
        start, end = norm.starts[k], norm.ends[k]
        assert 0 <= start < end <= len(text)
        assert ch in normalize_text(text[start:end]) or ch == " "
    assert normalize_text("\u2026") == "..."


# --- fuzzy ------------------------------------------------------------------------------------


def test_a_paraphrase_with_a_typo_is_found_fuzzy_above_the_floor():
    quote = "Riders aged 65 or older pay a reducd fare of $1.35 per ride"
    located = locate(quote, PASSAGES, "P1")
    assert (located.passage_id, located.match) == ("P1", "fuzzy")
    assert FUZZY_FLOOR <= located.score < 100
    assert source(located) == "Riders aged 65 and older pay a reduced fare of $1.35 per ride"


def test_a_fuzzy_match_ends_on_word_boundaries():
    located = locate("passes are sold at staton vending machines and at the customer", PASSAGES)
    assert located.match == "fuzzy"
    text = source(located)
    assert text == "Passes are sold at station vending machines and at the customer"


def test_the_best_fuzzy_match_wins_across_passages():
    passages = [Passage(id="A", text="Seniors ride at half fare on weekends only."),
                Passage(id="B", text="Senior riders pay half fare on weekdays and weekends.")]
    located = locate("Senior riders pay half fare on weekdays and weekend", passages, "A")
    assert located.passage_id == "B"


@pytest.mark.parametrize("quote", [
    "Metro is the best transit agency in the state",
    "Students with a valid ID ride free on weekends",
    "Monthly passes can be bought online through the app",
])
def test_an_unrelated_sentence_is_not_found(quote):
    located = locate(quote, PASSAGES, "P1")
    assert (located.passage_id, located.span, located.match, located.score) == (
        "P1",
        None,
        "not_found",
        0.0,
    )


@pytest.mark.parametrize("quote", [
    "Riders aged 65 and older pay a reduced fare of $1.45 per ride",  # a changed number
    "Riders aged 66 and older pay a reduced fare of $1.35 per ride",
    "Children under 5 do not ride free with a paying adult",  # an added negation
    "A 30-day pass costs $96.00",
])
def test_a_fuzzy_match_never_changes_a_number_or_a_negation(quote):
    assert locate(quote, PASSAGES).match == "not_found"


@pytest.mark.parametrize(
    "quote,match",
    [
        (
            (
                "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid"
                " Medicare card"
            ),
            "not_found",
        ),
        (
            (
                "Riders aged 65 and older pay a reduced fare of $1.35 per ride with a valid Senior"
                " ID crad"
            ),
            "fuzzy",
        ),
        (
            "Passes are sold at station ticket machines and at the customer service center",
            "not_found",
        ),
        ("Passes are sold at station vending machines and at the customer service centre", "fuzzy"),
    ],
)
def test_a_fuzzy_match_never_swaps_a_content_word_but_forgives_a_typo_in_one(quote, match):
    assert locate(quote, PASSAGES).match == match


def test_a_short_quote_does_not_match_fuzzily():
    quote = "adult fair"  # a typo of "adult fare", under MIN_FUZZY_CHARS
    assert len(normalize_text(quote)) < MIN_FUZZY_CHARS
    assert locate(quote, PASSAGES).match == "not_found"
    # short quotes still match normalized
    assert locate("ADULT FARE", PASSAGES).match == "normalized"


def test_a_quote_longer_than_every_passage_is_scored_against_the_whole_passage():
    passages = [Passage(id="S", text="Seniors pay $1.35 per ride.")]
    assert locate(
        "Seniors pay $1.35 per ride, and this quote goes on about other fares", passages
    ).match == ("not_found")
    located = locate("Seniors pay $1.35 per ride!!", passages)
    assert located.match == "normalized" and located.span == (0, 26)


def test_blank_and_empty_quotes_are_not_found():
    assert locate("", PASSAGES).match == "not_found"
    assert locate("\u200b", PASSAGES).match == "not_found"
    assert locate("...", PASSAGES, "P2") == Located("P2", None, "not_found", 0.0)


# --- one text (answers) -----------------------------------------------------------------------


def test_find_in_text_prefers_a_match_at_or_after_the_hint():
    answer = "Seniors pay $1.35. Kids ride free. seniors  pay $1.35."
    assert find_in_text("Seniors pay $1.35.", answer).span == (0, 18)
    assert find_in_text("Seniors pay $1.35.", answer, hint=1).match == "normalized"
    # "." is the same: taken in
    assert find_in_text("Seniors pay $1.35.", answer, hint=1).span == (
        35,
        54,
    )
    assert find_in_text("Kids ride free", answer, hint=40).span == (19, 33)  # only before the hint
    assert find_in_text("kids rides for free", answer) is None  # too short to be fuzzy
    assert find_in_text("Kids are riding for free", answer) is None


def test_find_in_text_without_fuzzy():
    answer = "Riders aged 65 and older pay a reduced fare of $1.35 per ride."
    quote = "Riders aged 65 and older pay a reducd fare"
    assert find_in_text(quote, answer).match == "fuzzy"
    assert find_in_text(quote, answer, fuzzy=False) is None


# --- distrust_unverified_quotes ---------------------------------------------------------------


def claim(label="SUPPORTED", *matches, explanation="P1 says so."):
    evidence = [
        Evidence(passage_id="P1", quote="q", span=None if m == "not_found" else (0, 1), match=m)
        for m in matches
    ]
    return Claim(id="c1", text="x", label=label, evidence=evidence, explanation=explanation)


def test_a_supported_claim_whose_every_quote_is_not_found_is_downgraded_and_flagged():
    (result,) = distrust_unverified_quotes([claim("SUPPORTED", "not_found", "not_found")])
    assert result.label == "PARTIALLY_SUPPORTED"
    assert result.explanation == UNVERIFIED_QUOTE + "P1 says so."
    assert result.explanation.startswith(
        "Unverified quote: the judge's quote is not in any passage. "
    )
    assert [e.match for e in result.evidence] == ["not_found", "not_found"]  # kept for the UI


@pytest.mark.parametrize(
    "matches", [("exact",), ("not_found", "fuzzy"), ("normalized", "not_found")]
)
def test_a_supported_claim_with_one_located_quote_stays_supported(matches):
    original = claim("SUPPORTED", *matches)
    assert distrust_unverified_quotes([original]) == [original]


@pytest.mark.parametrize("label", ["PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED"])
def test_other_labels_are_left_alone(label):
    original = claim(label, "not_found")
    assert distrust_unverified_quotes([original], require_evidence=True) == [original]


def test_a_supported_claim_without_evidence_is_downgraded_only_when_evidence_is_required():
    original = claim("SUPPORTED")
    assert distrust_unverified_quotes([original]) == [original]
    (result,) = distrust_unverified_quotes([original], require_evidence=True)
    assert result.label == "PARTIALLY_SUPPORTED" and result.explanation.startswith(
        UNVERIFIED_NO_QUOTE
    )
    assert result.explanation.startswith("Unverified quote:")


def test_distrust_is_idempotent_and_keeps_order():
    claims = [claim("SUPPORTED", "exact"), claim("SUPPORTED", "not_found"), claim("UNSUPPORTED")]
    once = distrust_unverified_quotes(claims, require_evidence=True)
    assert [c.label for c in once] == ["SUPPORTED", "PARTIALLY_SUPPORTED", "UNSUPPORTED"]
    assert distrust_unverified_quotes(once, require_evidence=True) == once
    assert claims[1].label == "SUPPORTED"  # the input is not modified
