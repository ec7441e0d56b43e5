"""One definition of "the same text": every check folds text the way judges.locate does.

The quotation check, the provenance check's named sources, claim placement and the overlap of a
finding with a claim all ask whether two texts are the same after normalization; each must answer
as the evidence locator answers for the same pair, whatever the quotation marks, dashes, spaces,
ligatures or Unicode forms."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from judges.checks import find_in_passages
from judges.checks.matching import claim_span, texts_overlap
from judges.locate import find_in_text, locate
from judges.types import Claim, JudgeRequest
from tests.judges.checking import checked, sentence_claims

CAFE = ("Entry to the Musée d’Orsay costs €16 for adults. "
        "The café in Zürich opens at 9:30 and serves crème brûlée.")


def request_with(answer: str, *texts: str) -> JudgeRequest:
    return JudgeRequest.model_validate(
        {
            "question": "What does it cost?",
            "passages": [
                {"id": f"P{number}", "text": text} for number, text in enumerate(texts, start=1)
            ],
            "answer": answer,
        }
    )


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# --- quotation marks ---------------------------------------------------------------------------


def test_a_quotation_with_straight_quotes_inside_matches_a_passage_with_curly_ones():
    passage = "The card marked ‘senior’ is valid on all buses and trains."
    request = request_with(
        'The rules say \'the card marked "senior" is valid on all buses\' today.', passage
    )
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_a_quotation_with_curly_quotes_inside_matches_a_passage_with_straight_ones():
    passage = 'The card marked "senior" is valid on all buses and trains.'
    request = request_with(
        "The rules say 'the card marked ‘senior’ is valid on all buses' today.", passage
    )
    assert checked(request, *sentence_claims(request)).fabrications == []


QUOTE_MARKS = ["'", '"', "‘", "’", "“", "”", "„", "«", "»", "`", "´", "ʼ", "′", "″", "＂", "＇"]


@pytest.mark.parametrize("written", QUOTE_MARKS)
@pytest.mark.parametrize("stored", ["'", '"', "’", "”"])
def test_the_quotation_check_and_the_locator_agree_on_every_quotation_mark(stored, written):
    passages = request_with("x", f"Riders say {stored}free{stored} on the night bus.").passages
    quote = f"riders say {written}free{written} on the night bus"
    assert locate(quote, passages).found
    assert find_in_passages(quote, passages) == "P1"


def test_a_judges_quote_with_straight_quotes_is_found_where_the_passage_has_curly_ones():
    passages = request_with("x", "Staff call it the “fare cap” on weekdays.").passages
    assert find_in_passages('Staff call it the "fare cap"', passages) == "P1"
    assert locate('Staff call it the "fare cap"', passages).match == "normalized"


# --- Unicode forms -----------------------------------------------------------------------------


def test_an_nfd_passage_verifies_an_nfc_quotation():
    request = request_with('The guide says "the café in Zürich opens at 9:30" daily.', nfd(CAFE))
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_an_nfd_passage_gives_the_numbers_of_an_nfc_answer():
    answer = "Entry to the Musée d'Orsay costs €16. The café in Zürich opens at 9:30."
    request = request_with(answer, nfd(CAFE))
    assert checked(request, *sentence_claims(request)).fabrications == []


def test_an_nfc_claim_is_placed_in_an_nfd_answer():
    answer = nfd("Tickets are sold at the café. The café in Zürich opens at 9:30.")
    claim = Claim(
        id="c1",
        text="The café in Zürich opens at 9:30.",
        answer_span=None,
        label="SUPPORTED",
        explanation="",
    )
    span = claim_span(claim, answer)
    assert span is not None and unicodedata.normalize("NFC", answer[slice(*span)]) == claim.text


def test_the_fi_ligature_is_the_two_letters():
    passages = request_with("x", "The ﬁnal stop is Harbour Square.").passages
    assert find_in_passages("the final stop is Harbour Square", passages) == "P1"
    assert locate("the final stop is Harbour Square", passages).match == "normalized"


# --- dashes and spaces -------------------------------------------------------------------------

DASHES = sorted(chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Pd")
DASHES.append("\u2212")  # the minus sign, which is Sm


@pytest.mark.parametrize("dash", DASHES, ids=[f"U+{ord(d):04X}" for d in DASHES])
def test_every_dash_is_a_hyphen_to_the_quotation_check(dash):
    passages = request_with("x", "A 30-day pass costs $86.00 at any station.").passages
    assert find_in_passages(f"A 30{dash}day pass costs $86.00", passages) == "P1"


@pytest.mark.parametrize(
    "space", ["\u00a0", "\u202f", "\u2009", "\u3000", "\u200b\u00a0", " \u2060"]
)
def test_non_breaking_and_invisible_spaces_are_a_space(space):
    passages = request_with("x", "A 30-day pass costs $86.00 at any station.").passages
    quote = f"pass{space}costs $86.00"
    assert find_in_passages(quote, passages) == "P1"
    assert locate(quote, passages).match == "normalized"


def test_a_zero_width_space_inside_a_word_is_not_there():
    passages = request_with("x", "A 30-day pass costs $86.00 at any station.").passages
    assert find_in_passages("pass co\u200bsts $86.00", passages) == "P1"


def test_the_locator_ignores_spaces_before_closing_punctuation_like_the_quotation_check():
    text = "Veeram ( Valour ) , 2014 film by Siva ."
    found = find_in_text("Veeram (Valour), 2014 film", text, fuzzy=False)
    assert found is not None and text[slice(*found.span)] == "Veeram ( Valour ) , 2014 film"


# --- claim placement and overlap ---------------------------------------------------------------


def test_a_claim_with_straight_quotes_is_placed_in_an_answer_with_curly_ones():
    answer = "Seniors pay less. Staff call it the ‘fare cap’ on weekdays."
    claim = Claim(id="c1", text="Staff call it the \"fare cap\" on weekdays.", answer_span=None,
                  label="SUPPORTED", explanation="")
    span = claim_span(claim, answer)
    assert span is not None and answer[slice(*span)] == "Staff call it the ‘fare cap’ on weekdays."


def test_texts_overlap_across_quotation_marks_and_invisible_characters():
    assert texts_overlap("the “fare cap”", "Staff call it the 'fare cap' on weekdays.")
    assert texts_overlap("fare\u200b cap", "Staff call it the fare cap.")
    assert not texts_overlap("fare caps", "Staff call it the fare cap.")


@pytest.mark.parametrize("sentence", [
    "Entry to the Musée d'Orsay costs €16 for adults.",
    "The café in Zürich opens at 9:30 and serves crème brûlée.",
])
def test_the_offline_judge_reads_an_nfd_passage_as_its_nfc_answer(sentence):
    from judges.backends.offline.judge import judge_offline

    [claim] = judge_offline(request_with(sentence, nfd(CAFE))).claims
    assert claim.label == "SUPPORTED", claim.explanation
