"""safe_answer keeps only SUPPORTED text and text that claims nothing, cut at clause boundaries."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from judges.backends.offline.judge import judge_offline
from judges.types import JudgeRequest, Passage
from judges.safe import safe_answer
from judges.types import Claim


def flagged(answer: str, sentence: str, label: str = "UNSUPPORTED") -> Claim:
    start = answer.index(sentence)
    return Claim(id="c1", text=sentence, answer_span=(start, start + len(sentence)), label=label)


def test_it_removes_exactly_the_unsupported_sentence(fare_request):
    answer = "Adults pay $2.75 per ride. A weekend pass costs $3.00. Children under 5 ride free."
    result = judge_offline(fare_request(answer))
    assert (
        safe_answer(answer, result.claims)
        == "Adults pay $2.75 per ride. Children under 5 ride free."
    )


def test_contradicted_and_partially_supported_sentences_are_both_removed():
    answer = "Adults pay $2.75. Seniors pay $9. Passes are sold online."
    claims = [
        flagged(answer, "Seniors pay $9.", "CONTRADICTED"),
        flagged(answer, "Passes are sold online.", "PARTIALLY_SUPPORTED"),
    ]
    assert safe_answer(answer, claims) == "Adults pay $2.75."


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


def test_a_flagged_claim_that_cannot_be_placed_withholds_the_whole_answer():
    answer = "Adults pay $2.75. Seniors pay $9."
    assert (
        safe_answer(answer, [Claim(id="c1", text="Seniors pay nine dollars.", label="UNSUPPORTED")])
        == ""
    )


def test_a_supported_claim_without_a_span_changes_nothing():
    answer = "Seniors pay $9."
    assert (
        safe_answer(answer, [Claim(id="c1", text="Seniors pay $9.", label="SUPPORTED")]) == answer
    )


# --- clauses -------------------------------------------------------------------------------------


def test_the_guardrail_example_of_the_issue_hands_nothing_back():
    answer = "Yes, pets are allowed in the apartments, so you can keep a cat."
    request = JudgeRequest(
        question="Can I keep a cat?",
        answer=answer,
        passages=[Passage(id="P1", text="Pets are not allowed in the apartments.")],
    )
    assert safe_answer(answer, judge_offline(request).claims) == ""


def test_a_partially_supported_clause_goes_and_its_supported_neighbour_stays():
    answer = "Adults pay $2.75 per ride [P1], and seniors pay $9 [P1]."
    claims = [flagged(answer, "Adults pay $2.75 per ride [P1]", "SUPPORTED"),
              flagged(answer, "seniors pay $9 [P1].", "PARTIALLY_SUPPORTED")]
    assert safe_answer(answer, claims) == "Adults pay $2.75 per ride [P1]."


def test_a_removed_first_clause_takes_its_yes_and_the_next_clause_starts_the_sentence():
    answer = "Yes, pets are allowed in the apartments, so you can keep a cat."
    claims = [flagged(answer, "pets are allowed in the apartments", "CONTRADICTED"),
              flagged(answer, "you can keep a cat.", "SUPPORTED")]
    assert safe_answer(answer, claims) == "You can keep a cat."


def test_a_yes_stays_with_its_kept_clause():
    answer = "Yes, pets are allowed in the apartments, but cats are not."
    expected = "Yes, pets are allowed in the apartments."
    assert safe_answer(answer, [flagged(answer, "cats are not.")]) == expected


def test_a_bare_yes_goes_when_the_sentence_it_answers_with_goes():
    answer = "Yes. Pets are allowed. Rent is $900."
    assert safe_answer(answer, [flagged(answer, "Pets are allowed.")]) == "Rent is $900."
    assert safe_answer(answer, [flagged(answer, "Rent is $900.")]) == "Yes. Pets are allowed."


def test_a_semicolon_clause_goes_alone_and_keeps_the_sentence_end():
    answer = "Kids ride free; seniors pay $9; adults pay $2.75!"
    assert (
        safe_answer(answer, [flagged(answer, "seniors pay $9")])
        == "Kids ride free; adults pay $2.75!"
    )
    assert (
        safe_answer(answer, [flagged(answer, "adults pay $2.75!")])
        == "Kids ride free; seniors pay $9!"
    )


def test_a_removed_aside_leaves_the_clause_around_it():
    answer = "Adults pay $2.75 (seniors pay $9) per ride."
    assert safe_answer(answer, [flagged(answer, "seniors pay $9")]) == "Adults pay $2.75 per ride."


def test_a_subordinate_clause_goes_with_the_clause_it_leans_on():
    answer = "Adults pay $2.75, while seniors pay $9."
    assert safe_answer(answer, [flagged(answer, "Adults pay $2.75")]) == ""
    assert safe_answer(answer, [flagged(answer, "seniors pay $9.")]) == "Adults pay $2.75."


def test_an_interrupting_relative_clause_takes_its_sentence_with_it():
    answer = "The museum, which opened in 1901, is free on Sundays. It has a cafe."
    assert safe_answer(answer, [flagged(answer, "which opened in 1901")]) == "It has a cafe."


def test_a_list_item_keeps_its_bullet_when_its_first_clause_goes():
    answer = "- Seniors pay $9; kids ride free\n- Adults pay $2.75"
    assert (
        safe_answer(answer, [flagged(answer, "Seniors pay $9")])
        == "- Kids ride free\n- Adults pay $2.75"
    )


def test_a_lowercase_sentence_is_not_capitalized():
    answer = "seniors pay $9, but adults pay $2.75."
    assert safe_answer(answer, [flagged(answer, "seniors pay $9")]) == "adults pay $2.75."


# --- properties ----------------------------------------------------------------------------------

_JOINTS = [", and ", ", but ", "; ", ", so ", ", which ", ", while ", " ("]
_LABELS = ["SUPPORTED", "PARTIALLY_SUPPORTED", "UNSUPPORTED", "CONTRADICTED"]


def _word(number: int) -> str:
    # Unique, letters only, and never a joint word: "zqa", "zqb", ...
    return "zq" + "".join(chr(ord("a") + int(digit)) for digit in str(number))


@st.composite
def _judged_answers(draw) -> tuple[str, list[Claim], list[tuple[str, Claim | None]]]:
    """An answer of sentences made of clauses of unique words, the claims on it, and each clause's
    words with the clause-aligned claim made for it (None when that clause claims nothing)."""
    counter = iter(range(10_000))
    answer, claims, clauses = "", [], []
    for _ in range(draw(st.integers(1, 3))):
        if answer:
            answer += draw(st.sampled_from([" ", "  ", "\n", "\n\n"]))
        if draw(st.booleans()):
            answer += draw(st.sampled_from(["Yes, ", "No, ", "Yes. ", "- "]))
        for position in range(draw(st.integers(1, 4))):
            joint = "" if position == 0 else draw(st.sampled_from(_JOINTS))
            words = " ".join(_word(next(counter)) for _ in range(draw(st.integers(2, 4))))
            if position == 0:
                words = words.capitalize()
            start = len(answer) + len(joint)
            answer += joint + words + (")" if joint == " (" else "")
            label = draw(st.sampled_from([None, *_LABELS]))
            claim = (
                None
                if label is None
                else Claim(
                    id=f"c{len(claims) + 1}",
                    text=words,
                    answer_span=(start, start + len(words)),
                    label=label,
                )
            )
            claims += [claim] if claim else []
            clauses.append((words, claim))
        answer += draw(st.sampled_from([".", "!", "?", " [P1].", ""]))
    for _ in range(draw(st.integers(0, 2))):  # claims a judge placed across clause boundaries
        start, end = sorted(draw(st.integers(0, len(answer))) for _ in range(2))
        if start < end:
            claims.append(
                Claim(
                    id=f"c{len(claims) + 1}",
                    text=answer[start:end],
                    answer_span=(start, end),
                    label=draw(st.sampled_from(_LABELS)),
                )
            )
    return answer, claims, clauses


def _words_touching(answer: str, span: tuple[int, int]) -> set[str]:
    """The clause words (each unique; joint words repeat) that the span reaches into, lowercased."""
    words = re.finditer(r"zq\w+", answer, re.IGNORECASE)
    return {m.group().lower() for m in words if m.start() < span[1] and span[0] < m.end()}


@settings(max_examples=400, deadline=None)
@given(_judged_answers())
def test_no_word_of_a_claim_that_is_not_supported_survives(judged):
    answer, claims, _ = judged
    kept_words = set(re.findall(r"zq\w+", safe_answer(answer, claims).lower()))
    for claim in claims:
        if claim.label != "SUPPORTED":
            assert not (_words_touching(answer, claim.answer_span) & kept_words), claim


@settings(max_examples=400, deadline=None)
@given(_judged_answers())
def test_what_is_kept_reads_as_text(judged):
    answer, claims, _ = judged
    safe = safe_answer(answer, claims)
    assert not re.search(r"\s[,;.!?]|[,;]\s*[.!?]|^[\s,;]|[,;]\s*$|\(\s*\)|,,|;;", safe), (
        answer,
        safe,
    )
    for line in safe.splitlines():
        assert not re.match(r"(?:- )?(?:and|but|so|yet)\b", line, re.IGNORECASE), (answer, safe)
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", safe):
        if sentence.strip():
            first = re.search(r"[A-Za-z]", sentence)
            assert first and first.group().isupper(), (answer, safe, claims)


@settings(max_examples=300, deadline=None)
@given(_judged_answers())
def test_a_supported_coordinate_clause_no_flagged_claim_touches_survives_byte_exact(judged):
    answer, claims, clauses = judged
    flagged_spans = [claim.answer_span for claim in claims if claim.label != "SUPPORTED"]
    safe = safe_answer(answer, claims)
    for words, claim in clauses:
        start = answer.index(words)
        before = answer[max(0, start - 8):start]
        coordinate = not re.search(r"(?:which|while|\()\s*$", before)
        untouched = all(not (s < start + len(words) and start < e) for s, e in flagged_spans)
        if coordinate and untouched and claim is not None and claim.label == "SUPPORTED":
            rest = words[1:]  # its first letter may be capitalized as a new sentence start
            whole_sentence_untouched = _sentence_untouched(answer, start, flagged_spans)
            if whole_sentence_untouched:
                assert rest in safe, (words, safe)


def _sentence_untouched(answer: str, position: int, flagged_spans: list[tuple[int, int]]) -> bool:
    # A clause is promised to survive only where no flagged claim reached into its sentence through
    # a clause it leans on (an aside or a subordinate clause after it, or the particle before it).
    from judges.text import split_sentences

    for start, end in split_sentences(answer):
        if start <= position < end:
            return all(not (s < end and start < e) for s, e in flagged_spans)
    return True


@settings(max_examples=200, deadline=None)
@given(_judged_answers())
def test_an_answer_with_every_claim_supported_comes_back_byte_for_byte(judged):
    answer, claims, _ = judged
    supported = [claim.model_copy(update={"label": "SUPPORTED"}) for claim in claims]
    assert safe_answer(answer, supported) == answer
