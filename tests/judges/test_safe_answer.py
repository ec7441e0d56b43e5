from judges.offline import judge_offline
from judges.safe import safe_answer
from judges.types import Claim


def flagged(answer: str, sentence: str, label: str = "UNSUPPORTED") -> Claim:
    start = answer.index(sentence)
    return Claim(id="c1", text=sentence, answer_span=(start, start + len(sentence)), label=label)


def test_it_removes_exactly_the_unsupported_sentence(fare_request):
    answer = "Adults pay $2.75 per ride. A weekend pass costs $3.00. Children under 5 ride free."
    result = judge_offline(fare_request(answer))
    assert safe_answer(answer, result.claims) == "Adults pay $2.75 per ride. Children under 5 ride free."


def test_contradicted_sentences_are_removed_and_partially_supported_ones_kept():
    answer = "Adults pay $2.75. Seniors pay $9. Passes are sold online."
    claims = [
        flagged(answer, "Seniors pay $9.", "CONTRADICTED"),
        flagged(answer, "Passes are sold online.", "PARTIALLY_SUPPORTED"),
    ]
    assert safe_answer(answer, claims) == "Adults pay $2.75. Passes are sold online."


def test_an_answer_with_nothing_flagged_comes_back_byte_for_byte():
    answer = "  Adults pay $2.75.\n\nSeniors pay $1.35.  \n"
    assert safe_answer(answer, [flagged(answer, "Adults pay $2.75.", "SUPPORTED")]) == answer


def test_a_removed_sentence_leaves_one_separator_not_two():
    answer = "One fact.  Two fact.  Three fact."
    assert safe_answer(answer, [flagged(answer, "Two fact.")]) == "One fact.  Three fact."


def test_paragraph_breaks_survive_when_the_sentence_before_them_goes():
    answer = "Adults pay $2.75. Seniors pay $9.\n\nPasses cost $86."
    expected = "Adults pay $2.75.\n\nPasses cost $86."
    assert safe_answer(answer, [flagged(answer, "Seniors pay $9.")]) == expected


def test_a_removed_list_item_takes_its_line_with_it():
    answer = "Fares:\n- Adults pay $2.75\n- Seniors pay $9\n- Children ride free\n"
    expected = "Fares:\n- Adults pay $2.75\n- Children ride free\n"
    assert safe_answer(answer, [flagged(answer, "- Seniors pay $9")]) == expected


def test_removing_the_first_or_last_sentence_keeps_the_answers_own_edges():
    answer = " First claim. Middle claim. Last claim.\n"
    assert safe_answer(answer, [flagged(answer, "First claim.")]) == " Middle claim. Last claim.\n"
    assert safe_answer(answer, [flagged(answer, "Last claim.")]) == " First claim. Middle claim.\n"


def test_nothing_is_left_when_every_sentence_is_unsupported():
    answer = "Seniors pay $9. Passes cost $1."
    assert safe_answer(answer, [flagged(answer, answer)]) == ""


def test_a_claim_without_a_span_removes_nothing():
    answer = "Seniors pay $9."
    assert safe_answer(answer, [Claim(id="c1", text="Seniors pay $9.", label="UNSUPPORTED")]) == answer
