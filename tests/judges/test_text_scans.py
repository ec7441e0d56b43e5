"""The quick scans of judges.text find exactly what the full regex scans find.

`quantities` tries its slow patterns (numbers, number words, month names, year ranges, list
numbers) only where a match can begin (`judges.text.matches_at`); these tests hold each quick scan
to the pattern's own finditer on generated text full of near misses: number words inside longer
words, currency signs in runs, digits glued to letters, months in every case, year ranges."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judges import text
from judges.text import numeric, scan, sentences

_PIECES = st.sampled_from(
    [
        "one",
        "One",
        "ONE",
        "phone",
        "none",
        "seventeen",
        "seven",
        "Twenty-one",
        "twentyone",
        "fifty percent",
        "eighteen",
        "weight",
        "often",
        "ten",
        "tens",
        "zero",
        "hundred",
        "$",
        "$$",
        "€",
        "£",
        "$ ",
        "5",
        "12",
        "1,500",
        "2.75",
        "0.50",
        ".5",
        ",",
        ".",
        "-",
        "–",
        "—",
        " to ",
        "19",
        "20",
        "2007",
        "2007 -- 11",
        "1998–99",
        "2019-2021",
        "May",
        "may",
        "MAY",
        "Mayor",
        "Jan.",
        "jan",
        "January",
        "Sept.",
        "sep",
        "Dec",
        "december",
        "5th of",
        "30 June",
        "June 30",
        "p.m.",
        "am",
        "5:00",
        "\n",
        "\n1. ",
        "\n- 2) ",
        " ",
        "  ",
        "\t",
        "x",
        "P2",
        "c1",
        "é",
        "İ",
        "five",
        "FIVE",
        "Five",
        "ninety-nine",
        "[3]",
        "(P2)",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=25).map("".join)


def _spans(matches) -> list[tuple[int, int]]:
    return [match.span() for match in matches]


# judges.text._NUMBER as it was written before it opened with a set of characters.
_NUMBER_AS_ALTERNATION = re.compile(
    r"(?:(?<![.,\d])(?P<money>[$€£])\s?|(?<![\w.,$€£]))"
    r"(?P<digits>(?>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?))"
    r"(?:(?P<suffix>%|\+|st|nd|rd|th)|\s?(?P<unit>dollars?|cents?|¢|percent))?"
    r"(?!\w)"
)


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
def test_the_number_pattern_reads_what_the_alternation_reads(sample):
    assert [
        (
            m.span(),
            numeric._digits_of(m),
            m.group("amount") is not None,
            m.group("suffix"),
            m.group("unit"),
        )
        for m in numeric._NUMBER.finditer(sample)
    ] == [
        (
            m.span(),
            m.group("digits"),
            m.group("money") is not None,
            m.group("suffix"),
            m.group("unit"),
        )
        for m in _NUMBER_AS_ALTERNATION.finditer(sample)
    ]


@settings(max_examples=1500, deadline=None)
@given(_TEXTS)
def test_the_number_word_scan_finds_what_finditer_finds(sample):
    assert list(numeric._number_word_runs(sample)) == _spans(
        numeric._NUMBER_WORD_RUN.finditer(sample)
    )


@settings(max_examples=1500, deadline=None)
@given(_TEXTS, st.booleans())
def test_the_month_scan_finds_what_finditer_finds(sample, any_case):
    pattern = numeric._MONTH_WORD_ANY_CASE if any_case else numeric._MONTH_WORD
    assert _spans(numeric._month_words(sample, any_case)) == _spans(pattern.finditer(sample))


@settings(max_examples=1500, deadline=None)
@given(_TEXTS)
def test_the_year_range_and_list_number_scans_find_what_finditer_finds(sample):
    assert _spans(numeric._year_ranges(sample)) == _spans(numeric._YEAR_RANGE.finditer(sample))
    assert _spans(text.matches_at(numeric._LIST_ORDINAL, sample, scan.line_starts(sample))) == \
        _spans(numeric._LIST_ORDINAL.finditer(sample))


_CLOCK_PIECES = st.sampled_from(
    ["5", "10", "12", "٥", "١٢", "0", " ", "p.m.", "P. M.", "am", "AM", "pm", "a", "m", "."])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_CLOCK_PIECES, max_size=12).map("".join))
def test_the_meridiem_hint_stands_in_every_hour_time(sample):
    for match in numeric._HOUR_TIME.finditer(sample):
        assert numeric._MERIDIEM_HINT.search(match.group())


def test_the_scans_cover_real_finds():
    sample = (
        "Seniors (sixty-five and older) pay $1.35\n1. Apply by May 5, 2027; fares rose 2019–21."
    )
    assert [m.group() for m in numeric._NUMBER.finditer(sample)] == [
        "$1.35",
        "1",
        "5",
        "2027",
        "2019",
        "21",
    ]
    assert list(numeric._number_word_runs(sample)) == [(9, 14), (15, 19)]
    assert [m.group() for m in numeric._month_words(sample, True)] == ["May"]
    assert [m.group() for m in numeric._year_ranges(sample)] == ["2019–21"]
    assert [
        m.group(1) for m in text.matches_at(numeric._LIST_ORDINAL, sample, scan.line_starts(sample))
    ] == ["1"]


# --- quantity pieces
# ----------------------------------------------------------------------------------

_SENTENCE_PIECES = st.one_of(
    _PIECES,
    st.sampled_from(
        [
            ". ",
            "! ",
            "? ",
            ".\n",
            ". R",
            ". Riders",
            "! Then",
            "? Fares",
            ". May",
            ". June 5",
            "Jan. ",
            "Jan. Five",
            "A. M.",
            "5 A. M. Riders",
            "p.m. Next",
            "Sec. Five",
            ". Sixty",
            ".  Two",
            ". X",
            ". The",
            "e.g. Most",
        ]
    ),
)
_SENTENCE_TEXTS = st.lists(_SENTENCE_PIECES, max_size=30).map("".join)


def _whole_text_values(sample: str) -> frozenset[str]:
    values = text.year_range_values(sample)
    for quantity in text.quantities(sample, every_word=True):
        values.update(text.quantity_readings(quantity))
    return frozenset(values)


@settings(max_examples=2000, deadline=None)
@given(_SENTENCE_TEXTS)
def test_a_text_cut_into_quantity_pieces_has_the_quantities_of_the_whole(sample):
    pieces = text.quantity_pieces(sample)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(sample)
    assert all(left[1] == right[0] for left, right in pairwise(pieces))
    by_piece = [
        (
            quantity.text,
            (quantity.span[0] + start, quantity.span[1] + start),
            quantity.value,
            quantity.kind,
        )
        for start, end in pieces
        for quantity in text.quantities(sample[start:end], every_word=True)
    ]
    whole = [(q.text, q.span, q.value, q.kind) for q in text.quantities(sample, every_word=True)]
    assert by_piece == whole
    assert text.quantity_values.__wrapped__(sample) == _whole_text_values(sample)


@settings(max_examples=2000, deadline=None)
@given(_SENTENCE_TEXTS, st.data())
def test_quantity_pieces_put_end_to_end_have_their_own_quantities(sample, data):
    # The unit index reads the pieces it needs with one call, leaving out the pieces between them.
    pieces = text.quantity_pieces(sample)
    kept = sorted(data.draw(st.sets(st.integers(0, len(pieces) - 1))))
    joined, expected = "", []
    for number in kept:
        start, end = pieces[number]
        expected += [(q.text, q.span[0] + len(joined), q.value, q.kind)
                     for q in text.quantities(sample[start:end], every_word=True)]
        joined += sample[start:end]
    found = text.quantities(joined, every_word=True)
    assert [(q.text, q.span[0], q.value, q.kind) for q in found] == expected


@settings(max_examples=1500, deadline=None)
@given(_SENTENCE_TEXTS)
def test_readings_by_start_are_those_of_the_quantities(sample):
    quantities = text.quantities(sample, every_word=True)
    assert sorted(text.readings_by_start(sample)) == [
        (quantity.span[0], text.quantity_readings(quantity)) for quantity in quantities]


def test_quantity_pieces_cut_between_sentences_only():
    sample = "Apply by Jan. 5, 2027. Riders aged sixty-five ride free. A. M. Peak fares apply."
    assert [sample[s:e] for s, e in text.quantity_pieces(sample)] == [
        "Apply by Jan. 5, 2027. ", "Riders aged sixty-five ride free. A. M. ", "Peak fares apply."]


# --- rough pieces and their words
# ---------------------------------------------------------------------

_PROSE_PIECES = st.one_of(
    _SENTENCE_PIECES,
    st.sampled_from(
        [
            "O'Brien",
            "rock'n'roll",
            "riders’ cards",
            "McManus",
            "NBA",
            "Café",
            "Cafe\u0301",
            "Angoulême",
            "\u2029",
            "…",
            "...",
            "?!",
            "\"",
            "”",
            "’",
            ")",
            "]",
            "[",
            "(",
            " \n ",
            "\r\n",
            "  \t",
            "U.S. ",
            "e.g. the",
            "Sec. 4.2",
            # Whitespace of every kind the regex `\s` and str.strip take: rough_pieces relies on
            # both.
            "\n\n",
            " \n",
            "\t\n",
            "\v",
            "\f",
            "\r",
            "\x1c",
            "\x1f",
            "\x85",
            "\xa0",
            "\u2028",
            "\u3000",
            ".\xa0",
            "!\u2029",
        ]
    ),
)
_PROSE = st.lists(_PROSE_PIECES, max_size=40).map("".join)


# The ends of rough pieces: sentence punctuation (and any closing quote or bracket) before
# whitespace or the end of the text, or a line break.
_PIECE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|\n")


def _reference_rough_pieces(sample: str) -> list[tuple[int, int]]:
    # The definition: each stretch up to a piece end (and the rest), trimmed, if anything is left.
    spans, start = [], 0
    for match in _PIECE_END.finditer(sample):
        spans.extend(sentences._trimmed(sample, start, match.end()))
        start = match.end()
    spans.extend(sentences._trimmed(sample, start, len(sample)))
    return spans


@settings(max_examples=2000, deadline=None)
@given(_PROSE)
def test_rough_pieces_and_their_words_are_those_of_the_whole_text(sample):
    pieces = text.rough_pieces(sample)
    assert pieces == _reference_rough_pieces(sample)
    whole = [
        (t.stem, t.span[0], t.span[1] - t.span[0], t.is_name) for t in text.content_tokens(sample)
    ]
    assert [
        reading for start, end in pieces for reading in text.token_readings(sample, start, end)
    ] == whole
    for start, end in pieces:
        readings = list(text.token_readings(sample, start, end))
        assert text.piece_stems(sample, start, end) == (
            frozenset(r[0] for r in readings), frozenset(r[0] for r in readings if r[3]))


@settings(max_examples=2000, deadline=None)
@given(_PROSE)
def test_quantity_pieces_cut_from_the_rough_pieces_are_those_the_scan_cuts(sample):
    assert text.quantity_pieces(sample, text.rough_pieces(sample)) == text.quantity_pieces(sample)


# Words that overlap and nest ("any" in "anyone", "you" in "your", "ai" in "again"), as the
# injection rules' head words do.
_HEAD_WORDS = ("any", "anyone", "any one", "one", "you", "your", "yo", "ai", "a.i.", "again",
               "ignor", "ignore", "set aside")
_HEAD_TEXTS = st.lists(st.sampled_from([*_HEAD_WORDS, " ", "x", ".", "\n", "é"]), max_size=30).map(
    "".join)


@settings(max_examples=1500, deadline=None)
@given(_HEAD_TEXTS, st.sets(st.sampled_from(_HEAD_WORDS)))
def test_one_scan_for_every_set_of_words_finds_where_each_set_begins(sample, words):
    starts = scan.WordStarts(sample, frozenset(_HEAD_WORDS))
    assert starts.of(frozenset(words)) == scan.word_positions(sample, words)


def test_a_word_outside_the_vocabulary_scanned_is_refused():
    starts = scan.WordStarts("ignore it", frozenset({"ignor"}))
    assert starts.of(frozenset({"ignor"})) == [0]
    with pytest.raises(ValueError, match="it"):
        starts.of(frozenset({"it"}))
