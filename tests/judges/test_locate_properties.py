"""Properties of judges.locate (hypothesis), and the share of edited quotes it recovers.

Plain pytest (no Django)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from judges.locate import FUZZY_FLOOR, MIN_FUZZY_CHARS, _needle, locate, normalize_text
from judges.types import Passage

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Characters that stress the normalization: case pairs with expansions, ligatures, combining
# marks, invisible characters, every kind of space, quotation mark and dash, ellipses, digits.
TRICKY = (
    "aAbBzZ \u00df\u1e9e\ufb01\u0130\u0301\u0308e\u00e9\u200b\u200d\u00ad\ufeff\u00a0\u2009\t\n"
    "\u2026.,;:!?'\"\u2018\u2019\u201c\u201d\u00ab\u00bb-\u2010\u2011\u2013\u2014\u2212()[]$%"
    "0123456789\uff21\uff11"
)
texts = st.one_of(
    st.text(min_size=1, max_size=300), st.text(alphabet=TRICKY, min_size=1, max_size=300)
)
passage_texts = texts.filter(lambda text: text.strip())


def passages_of(*texts: str) -> list[Passage]:
    return [Passage(id=f"P{number}", text=text) for number, text in enumerate(texts, start=1)]


# --- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(passage_texts, passage_texts, st.data())
def test_any_substring_of_a_passage_is_found_exactly(other, text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    quote = text[start:end]
    passages = passages_of(other, text)
    for preferred in ("P2", None, "P1"):
        located = locate(quote, passages, preferred)
        assert located.match == "exact" and located.score == 100.0
        held = {p.id: p.text for p in passages}[located.passage_id]
        # An earlier identical occurrence is fine: the slice is the quote.
        assert held[located.span[0]:located.span[1]] == quote
        if preferred == "P2":
            assert located.passage_id == "P2"


def _check_spans(quote: str, passages: list[Passage]) -> None:
    located = locate(quote, passages)
    assert located.match in ("exact", "normalized", "fuzzy", "not_found")
    assert 0.0 <= located.score <= 100.0
    if located.match == "not_found":
        assert located.span is None and located.score == 0.0
        return
    held = {p.id: p.text for p in passages}[located.passage_id]
    start, end = located.span
    assert 0 <= start < end <= len(held)
    if located.match == "normalized":
        assert located.score == 100.0
        # Every piece of the quote (the whole quote when it has no ellipsis), normalized and
        # without its edge punctuation, is in the normalized slice.
        found = normalize_text(held[start:end])
        assert all(piece in found for piece in _needle(quote).pieces)
    if located.match == "fuzzy":
        assert located.score >= FUZZY_FLOOR
        assert len(normalize_text(quote)) >= MIN_FUZZY_CHARS


@SETTINGS
@given(texts, passage_texts, passage_texts)
def test_spans_always_lie_inside_their_text_for_arbitrary_quotes(quote, first, second):
    _check_spans(quote, passages_of(first, second))


@SETTINGS
@given(passage_texts, st.data())
def test_spans_lie_inside_their_text_for_near_misses_too(text, data):
    # A substring with a few random characters changed: exercises normalized and fuzzy matching.
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    chars = list(text[start:end])
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(chars)))
        chars.insert(position, data.draw(st.sampled_from(TRICKY)))
    _check_spans("".join(chars), passages_of(text))


@SETTINGS
@given(st.integers(0, 10_000))
def test_a_fuzzy_match_is_never_below_the_floor(seed):
    rng = random.Random(seed)
    passages = policy_passages(rng, count=2, chars=600)
    text = passages[1].text
    start = rng.randrange(0, len(text) - 60)
    quote = list(text[start:start + rng.randint(12, 60)])
    for _ in range(rng.randint(1, 8)):  # from a typo to a different text
        position = rng.randrange(len(quote))
        quote[position] = rng.choice("abcdefghijklmnopqrstuvwxyz ")
    located = locate("".join(quote), passages)
    if located.match == "fuzzy":
        assert located.score >= FUZZY_FLOOR
        found = normalize_text(
            passages_by_id(passages)[located.passage_id][located.span[0] : located.span[1]]
        )
        # The score is the similarity of the quote to the very text returned.
        assert (
            fuzz.ratio(normalize_text("".join(quote)).strip(" .,;:!?'\"()-"), found)
            >= FUZZY_FLOOR - 1
        )


def passages_by_id(passages: list[Passage]) -> dict[str, str]:
    return {p.id: p.text for p in passages}


# --- the share of edited quotes recovered ------------------------------------------------------

RIDERS = ["adult", "senior", "student", "child", "veteran", "youth", "commuter", "Medicare"]
PRODUCTS = [
    "single-ride ticket",
    "day pass",
    "7-day pass",
    "30-day pass",
    "transfer",
    "paratransit trip",
]
DOCUMENTS = ["Senior ID card", "Medicare card", "student ID", "Reduced Fare card", "proof of age"]
PLACES = ["customer service center", "ticket vending machine", "station agent", "mobile app"]
SENTENCES = [
    "The {product} fare for {rider} riders is ${price}, according to Sec. {section} of the tariff.",
    "Riders aged {age} and older qualify for the reduced fare with a valid {document}.",
    "A {rider} {product} can be bought at any {place}; it is valid for {minutes} minutes.",
    "Applications for the {rider} discount must be submitted by {month} {day}, {year}.",
    (
        "Eligible {rider} riders pay {percent}% of the regular {product} fare \u2014 e.g. ${price}"
        " per trip."
    ),
    "Up to {count} children under {age} may ride free with each paying {rider} rider.",
    "The {document} must be shown to the operator on request (a copy is not accepted).",
    "Lost {document}s are replaced at the {place} for a fee of ${price}.",
    (
        "The agency calls the {product} \u201cthe best value for {rider} riders\u201d in its {year}"
        " guide."
    ),
    (
        "{rider}s\u2019 passes are non\u2011transferable, and refunds take {count}\u2013{minutes}"
        " days."
    ),
]


def policy_sentence(rng: random.Random) -> str:
    return rng.choice(SENTENCES).format(
        product=rng.choice(PRODUCTS), rider=rng.choice(RIDERS), document=rng.choice(DOCUMENTS),
        place=rng.choice(PLACES), month=rng.choice(["January", "March", "June", "September"]),
        price=f"{rng.randint(1, 120)}.{rng.choice(['00', '25', '50', '75'])}",
        section=f"{rng.randint(1, 9)}.{rng.randint(1, 9)}", age=rng.choice([5, 6, 12, 18, 62, 65]),
        minutes=rng.choice([90, 120, 180]), day=rng.randint(1, 28), year=rng.choice([2025, 2026]),
        percent=rng.choice([25, 50, 75]), count=rng.randint(2, 9),
    )


def policy_passages(rng: random.Random, count: int, chars: int) -> list[Passage]:
    passages = []
    for number in range(1, count + 1):
        text = ""
        while len(text) < chars:
            text += policy_sentence(rng) + rng.choice([" ", " ", " ", "\n", "  "])
        passages.append(Passage(id=f"P{number}", text=text.strip()))
    return passages


def _words(rng, quote, edit):
    spaces = [i for i, ch in enumerate(quote) if ch == " "]
    if not spaces:
        return quote
    i = rng.choice(spaces)
    return quote[:i] + edit + quote[i + 1:]


EDITS = {
    "upper": lambda rng, q: q.upper(),
    "lower": lambda rng, q: q.lower(),
    "title": lambda rng, q: q.title(),
    "space": lambda rng, q: _words(rng, q, rng.choice(["  ", "\n", "\t", " \n ", "\u00a0"])),
    "outer whitespace": lambda rng, q: rng.choice([" ", "\n", ""])
    + q
    + rng.choice([" ", "\n  ", ""]),
    "straight quotes": lambda rng, q: q.replace("\u201c", '"')
    .replace("\u201d", '"')
    .replace("\u2019", "'"),
    "single quotes": lambda rng, q: q.replace("\u201c", "'").replace("\u201d", "'"),
    "ascii dashes": lambda rng, q: q.replace("\u2014", "-")
    .replace("\u2013", "-")
    .replace("\u2011", "-"),
    "other dashes": lambda rng, q: q.replace("-", rng.choice(["\u2010", "\u2013", "\u2212"])),
    "wrapped in quotes": lambda rng, q: (
        rng.choice(['"', "\u201c", "'"]) + q + rng.choice(['"', "\u201d", "'"])
    ),
    "edge punctuation": lambda rng, q: (
        rng.choice(["", "(", "..."]) + q.rstrip(".,;") + rng.choice([".", ",", ";", "!", ""])
    ),
    "comma added": lambda rng, q: _words(rng, q, ", "),
    "comma dropped": lambda rng, q: q.replace(", ", " ", 1),
    "semicolon for comma": lambda rng, q: (
        q.replace(", ", "; ", 1) if ", " in q and rng.random() < 0.7 else q.replace("; ", ", ", 1)
    ),
    "ellipsis": lambda rng, q: _ellipsis(rng, q),
    "zero width": lambda rng, q: _words(rng, q, rng.choice([" \u200b", "\u200b ", " \ufeff"])),
    "ligature": lambda rng, q: q.replace("fi", "\ufb01"),
}


def _ellipsis(rng, quote):
    words = quote.split(" ")
    if len(words) < 6:
        return quote
    a = rng.randint(2, len(words) - 3)
    b = rng.randint(a + 1, min(len(words) - 1, a + 8))
    return (
        " ".join(words[:a])
        + rng.choice([" ... ", " \u2026 ", "... ", " [...] "])
        + " ".join(words[b:])
    )


def edited_quotes(seed: int, cases: int):
    """(passages, pid, preferred pid, true span, edited quote, edit names), reproducibly."""
    rng = random.Random(seed)
    for _ in range(cases):
        passages = policy_passages(rng, count=3, chars=rng.choice([800, 2000, 5000]))
        target = rng.choice(passages)
        text = target.text
        length = rng.randint(20, 200)
        start = rng.randrange(0, len(text) - length)
        quote = text[start:start + length]
        edited = quote
        while edited == quote:  # only edits that change the quote count
            names = rng.sample(sorted(EDITS), rng.randint(1, 3))
            for name in names:
                edited = EDITS[name](rng, edited)
        # The judge names the right passage most of the time; sometimes another, sometimes none.
        preferred = rng.choice([target.id, target.id, target.id, None, rng.choice(passages).id])
        yield passages, target.id, preferred, (start, start + length), edited, names


def recovered(located, passages, pid, span) -> bool:
    if located.match == "not_found":
        return False
    held = passages_by_id(passages)
    found = held[located.passage_id][located.span[0]:located.span[1]]
    true = held[pid][span[0]:span[1]]
    if located.passage_id == pid:
        overlap = min(span[1], located.span[1]) - max(span[0], located.span[0])
        if overlap >= 0.8 * (span[1] - span[0]):
            return True
    # An identical occurrence elsewhere is as good.
    return fuzz.ratio(normalize_text(found), normalize_text(true)) >= 90


def test_at_least_95_percent_of_quotes_with_whitespace_case_punctuation_or_ellipsis_edits_are_found():
    cases = list(edited_quotes(seed=20260816, cases=300))
    results = []
    for passages, pid, preferred, span, quote, names in cases:
        located = locate(quote, passages, preferred)
        results.append((recovered(located, passages, pid, span), located, quote, names))
        if located.match == "fuzzy":
            assert located.score >= FUZZY_FLOOR
    rate = sum(ok for ok, *_ in results) / len(results)
    by_match = {}
    for _, located, _, _ in results:
        by_match[located.match] = by_match.get(located.match, 0) + 1
    print(f"\nedited quotes recovered: {rate:.1%} of {len(results)}; matches: {by_match}")
    misses = [(quote, names, located.match) for ok, located, quote, names in results if not ok]
    assert rate >= 0.95, misses[:10]
