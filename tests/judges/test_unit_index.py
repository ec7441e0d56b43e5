"""The lazy unit index (judges.passages.UnitIndex) answers what reading every unit of the passage
gives: the eager index the offline judge was built on, kept here as the reference. Generated text
is full of near misses: numbers in every form (cents, thousands, decimals, number words, dates,
times, year ranges), names, apostrophes, accents and sentence ends of every kind."""

from __future__ import annotations

import bisect

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from judges import passages, text
from judges.text import numeric

_PIECES = st.sampled_from(
    [
        "one",
        "One",
        "fifty cents",
        "fifty percent",
        "Twenty-one",
        "five hundred",
        "seventeen",
        "phone",
        "$",
        "$ ",
        "€",
        "5",
        "50",
        "05",
        "0.50",
        ".5",
        "1,500",
        "1,5000",
        "1500",
        "15.00",
        "2.75",
        "275",
        "0",
        "0.0",
        "100",
        "90",
        "9",
        "65",
        "2007",
        "2011",
        "2007 -- 11",
        "1998–99",
        "2026",
        "12",
        "%",
        " cents",
        " dollars",
        " percent",
        "st",
        "th",
        "May",
        "may",
        "June 30",
        "30 June",
        "Jan. 5, 2027",
        "July 2026",
        "5th of",
        "1/5/2027",
        "2027-01-05",
        "5:00",
        "5 p.m.",
        "17:30",
        "am",
        "P2",
        "[3]",
        "\n1. ",
        "\n",
        " ",
        "  ",
        ", ",
        ". ",
        "! ",
        "? ",
        ".\n",
        ". Riders",
        ". The",
        "e.g. ",
        "Sec. 4.2",
        "rider",
        "riders",
        "Rider",
        "rider's",
        "O'Brien",
        "McManus",
        "NBA",
        "Café",
        "Cafe\u0301",
        "scored",
        "scoring",
        "score",
        "the",
        "and",
        "Metro",
        "metro",
        "…",
        "\"",
        ")",
        "x",
        "a",
        "٥",
        "$٥",
        "٢٠٢٦",
        "١٢:٣٠",
        "rock'n'roll",
        "a'b'c'd",
        "'",
        "'s",
        "don't",
        "riders'",
        "Policies",
        "policy",
        "carried",
        "Carry",
        "_rid",
        "5pm",
        "ride",
        "rides",
        "RIDER",
        "pride",
    ]
)
_TEXTS = st.lists(_PIECES, max_size=40).map("".join)
# Many sentences, so many quantity pieces: a value written in a quarter of them has them all read.
_LONG_TEXTS = st.lists(st.lists(_PIECES, max_size=8).map("".join), min_size=9, max_size=20).map(
    ". The ".join
)
_VALUES = [
    "0",
    "0.5",
    "5",
    "50",
    "500",
    "0.05",
    "1500",
    "15",
    "2.75",
    "275",
    "9",
    "90",
    "65",
    "2007",
    "2011",
    "2026",
    "2027",
    "12",
    "1",
    "100",
    "21",
    "2027-01-05",
    "2027-01",
    "--01-05",
    "--06-30",
    "2026-07",
    "17:00",
    "05:00",
    "17:30",
    "05:30",
    "4.2",
    "30",
]


def _eager(sample: str):
    spans = text.rough_pieces(sample)
    starts = [span[0] for span in spans]
    unit_values = [set() for _ in spans]
    passage_values = text.year_range_values(sample)
    for quantity in text.quantities(sample, every_word=True):
        readings = text.quantity_readings(quantity)
        passage_values.update(readings)
        position = bisect.bisect_right(starts, quantity.span[0]) - 1
        if position >= 0:
            unit_values[position].update(readings)
    postings: dict[str, list[int]] = {}
    units = []
    for position, (start, end) in enumerate(spans):
        stems, names = text.piece_stems(sample, start, end)
        units.append((stems, names))
        for word_stem in stems:
            postings.setdefault(word_stem, []).append(position)
    quantity_postings: dict[str, list[int]] = {}
    for position, values in enumerate(unit_values):
        for value in values:
            quantity_postings.setdefault(value, []).append(position)
    return spans, units, postings, quantity_postings, passage_values


@settings(max_examples=1500, deadline=None)
@given(
    st.one_of(_TEXTS, _LONG_TEXTS), st.lists(st.sampled_from(_VALUES), max_size=6), st.booleans()
)
def test_the_lazy_unit_index_answers_what_the_eager_reading_gives(sample, asked, stems_first):
    spans, units, postings, quantity_postings, passage_values = _eager(sample)
    passages.clear_caches()
    index = passages.UnitIndex(sample)
    assert index.spans == spans and index.size == len(spans)

    def check_stems():
        # Some found at once (with stems the text lacks), then each asked on its own.
        index.learn_stems([*sorted(postings)[::2], "nowhere", "polic", "ri"])
        for word_stem, found in postings.items():
            assert index.postings(word_stem) == tuple(found)
        assert index.postings("nowhere") == ()
        # What a unit holds of some stems, before its words are read (from the postings) and after.
        some = [*sorted(postings)[1::2], "nowhere"]
        for position, (stems, names) in enumerate(units):
            assert index.held(position, some) == stems & set(some)
            assert (index.unit(position).stems, index.unit(position).names) == (stems, names)
            assert index.held(position, some) == stems & set(some)

    def check_values():
        # Some read at once, then asked in an order of their own, then all of them: what was read
        # for one value must not change the answer for another.
        index.read_values(asked[:3])
        for value in [*asked, *_VALUES, *sorted(passage_values)]:
            assert index.value_units(value) == tuple(quantity_postings.get(value, ())), value
            assert index.has_value(value) == (value in passage_values), value

    if stems_first:
        check_stems()
        check_values()
    else:
        check_values()
        check_stems()


_DIGIT_PIECES = st.sampled_from(
    [
        "0",
        "00",
        "05",
        "5",
        "50",
        "500",
        "0.05",
        ".5",
        "5.",
        "1.5",
        "1.5.3",
        "15",
        "150",
        "1,500",
        "1,5000",
        "10,000.50",
        "1,500.00",
        "2,75",
        "0.0",
        ",",
        ".",
        " ",
        ". ",
        "$",
        "$ ",
        " cents",
        "-",
        "2027",
        "12",
        "May 5, ",
        "a",
        "x1",
        "1x",
        "9",
    ]
)
_PLAIN_VALUES = st.one_of(st.sampled_from(_VALUES),
                          st.from_regex(r"[0159]{1,4}(\.[0159]{1,3})?", fullmatch=True))


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.one_of(_DIGIT_PIECES, _PIECES), max_size=30).map("".join), _PLAIN_VALUES)
def test_the_digit_pieces_of_a_value_are_those_of_the_runs_of_digits_giving_it(sample, value):
    # The reading the scan per value replaced: every run of digits of the text, those giving the
    # value (with another script's digits every piece is read instead).
    assume(passages._OTHER_DIGIT.search(sample) is None)
    index = passages.UnitIndex(sample)
    index._pieces()
    expected = {index._piece_of(run.start()) for run in passages._RUN_DIGITS.finditer(sample)
                if value in (text.normalize_number(run.group()),
                             text.normalize_number(run.group(), in_cents=True))}
    if passages._YEAR_VALUE.fullmatch(value):
        expected |= index._pieces_matching(passages._digits_alone(value))
    assert index._digit_pieces(value) == expected


def test_the_lazy_unit_index_reads_only_the_pieces_that_may_hold_a_value():
    sample = "Seniors pay $1.35 per ride. Riders aged 65 and older ride free. A day pass is $5.00."
    index = passages.UnitIndex(sample)
    assert index.value_units("1.35") == (0,)
    assert index._read == {0}  # the other sentences hold no 1, 3 and 5 in that order
    assert index.value_units("5") == (2,)
    assert index.has_value("65") and not index.has_value("6.5")


def test_the_lazy_unit_index_finds_each_way_of_writing_a_value():
    # One sentence per way a value is written, each in its own quantity piece, so a value is
    # found only when the piece that writes it is read.
    sample = (
        "Doors open at 5 p.m. daily. Apply by June 30. Forms dated 1/5/2027 count. Renewals from"
        " 2026-07-01 apply. Tickets cost fifty cents. Children under twelve ride free. Fares rose"
        " in 2007 -- 11. Passes cost 1,500.00 dollars. Transfers cost $0.50 each."
    )
    spans, _, _, quantity_postings, passage_values = _eager(sample)
    for value in [
        "17:00",
        "05:00",
        "--06-30",
        "2027-01-05",
        "2027-01",
        "--01-05",
        "2027",
        "2026-07-01",
        "2026-07",
        "2026",
        "0.5",
        "12",
        "2011",
        "1500",
        "2007",
        "9",
    ]:
        index = passages.UnitIndex(sample)
        assert index.value_units(value) == tuple(quantity_postings.get(value, ())), value
        assert index.has_value(value) == (value in passage_values), value
        assert index.has_value(value) == (value != "9"), value


def test_threads_sharing_a_unit_index_get_what_the_eager_reading_gives():
    # index_units' cache hands one index to every thread; values asked at once must not see a
    # piece marked read before its values are in.
    import random
    import sys
    import threading

    from bench.offline_judge import passage_text

    rng = random.Random(5)
    sample = passage_text(rng, 6000)
    _, _, _, quantity_postings, passage_values = _eager(sample)
    values = sorted(passage_values) + _VALUES
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(20):
            index = passages.UnitIndex(sample)
            wrong: list[str] = []

            def ask(seed: int) -> None:
                for value in random.Random(seed).sample(values, len(values)):
                    if index.value_units(value) != tuple(quantity_postings.get(value, ())):
                        wrong.append(value)

            threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert not wrong
    finally:
        sys.setswitchinterval(interval)


def test_every_value_a_number_word_gives_is_one_that_the_index_looks_for_in_number_words():
    tens = ["", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    ones = numeric._UNITS_WORDS + [
        f"{ten}-{one}" for ten in tens[1:] for one in numeric._UNITS_WORDS[1:10]
    ]
    written = [*ones, *tens[1:]]
    units = [
        "",
        " dollars",
        " cents",
        " percent",
        " per cent",
        " hundred",
        " hundred cents",
        " Cents",
    ]
    checked = 0
    for words in written:
        for unit in units:
            for quantity in text.quantities(f"It is {words}{unit} in all.", every_word=True):
                if quantity.is_word:
                    assert quantity.value in passages._NUMBER_WORD_VALUES, (words, unit, quantity)
                    checked += 1
    assert checked == len(written) * len(units)
