"""Passage text indexed for the offline judge: which words and numbers it contains, and which of its
sentences best matches a claim.

Only `Passage.text` is indexed. Header fields (title, agency, section, source, fetched date) are
never evidence for a policy fact, so they are not searched here.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from judges.text import (
    Span, content_words, key_terms, number_values, passage_quantities,
    quantity_readings, quantity_values, piece_stems, rough_pieces, split_sentences, year_range_values,
)
from judges.text import _piece_values  # cleared with the other caches


@dataclass(frozen=True)
class Piece:
    span: Span
    terms: frozenset[str]


@dataclass(frozen=True)
class PassageIndex:
    text: str
    terms: frozenset[str]  # content words and normalized numbers
    numbers: frozenset[str]  # normalized numbers only

    def best_sentence(self, terms: frozenset[str]) -> Span | None:
        """The sentence sharing the most terms with `terms` (the earliest on a tie), or None.

        pysbd costs several milliseconds per passage, far more than the rest of the judge, so it
        only settles the boundaries around the best-matching rough piece: that piece and one
        neighbour on each side, which covers a sentence that an abbreviation cut into pieces.
        """
        pieces = _pieces(self.text)
        best = _most_shared(terms, pieces)
        if best is None:
            return None
        first = pieces[max(best - 1, 0)].span[0]
        last = pieces[min(best + 1, len(pieces) - 1)].span[1]
        region = self.text[first:last]
        sentences = [Piece((start + first, end + first), found) for (start, end), found in _sentences(region)]
        choice = _most_shared(terms, sentences)
        return sentences[choice].span if choice is not None else pieces[best].span


def _most_shared(terms: frozenset[str], pieces: Sequence[Piece]) -> int | None:
    best, best_count = None, 0
    for position, piece in enumerate(pieces):
        count = len(terms & piece.terms)
        if count > best_count:  # strictly greater: ties go to the earlier piece
            best, best_count = position, count
    return best


# The same policy passages come back for answer after answer, so what is learnt about a passage
# text is kept per process. Bounded, because a passage may be up to 100k characters.
@lru_cache(maxsize=512)
def index_passage(text: str) -> PassageIndex:
    numbers = frozenset(number_values(text))
    return PassageIndex(text=text, terms=frozenset(content_words(text)) | numbers, numbers=numbers)


@lru_cache(maxsize=512)
def _pieces(text: str) -> tuple[Piece, ...]:
    return tuple(Piece(span, key_terms(text[span[0]:span[1]])) for span in rough_pieces(text))


@lru_cache(maxsize=4096)  # keyed by a few hundred characters around a match, so more of them
def _sentences(text: str) -> tuple[tuple[Span, frozenset[str]], ...]:
    return tuple((span, key_terms(text[span[0]:span[1]])) for span in split_sentences(text))


def clear_caches() -> None:
    """Forget every indexed passage (benchmarks use it to measure the cold path)."""
    index_passage.cache_clear()
    index_units.cache_clear()
    quantity_values.cache_clear()
    passage_quantities.cache_clear()
    _piece_values.cache_clear()
    _pieces.cache_clear()
    _sentences.cache_clear()


# --- units: the offline judge v2's view of a passage ----------------------------------------


NEGATIONS = frozenset("not no never without none nor neither cannot can't won't don't doesn't didn't isn't "
                      "aren't wasn't weren't hasn't haven't hadn't shouldn't wouldn't couldn't n't".split())
# Words stating a cause or an effect; a claim that has one needs a window that has one too.
CAUSAL = re.compile(
    r"\b(?:because|due to|owing to|thanks to|as a result|result(?:s|ed|ing)? (?:in|from)|lead(?:s|ing)? to"
    r"|led to|caus(?:e|es|ed|ing)|so that|therefore|hence|consequently|attribut\w+ to|blame[sd]?"
    r"|in response to|after which|prompt(?:s|ed|ing)?|sparked|trigger(?:s|ed|ing)?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Unit:
    """A sentence-like piece of a passage (`rough_pieces`), with what the judge compares."""

    span: Span
    stems: frozenset[str]
    quantities: frozenset[str]  # `quantity_values` of the piece
    names: frozenset[str]  # stems of the words written like names


@dataclass(frozen=True)
class UnitIndex:
    text: str
    units: tuple[Unit, ...]
    stems: frozenset[str]
    quantities: frozenset[str]
    unit_frequency: dict[str, int]  # stem -> how many units contain it
    postings: dict[str, tuple[int, ...]]  # stem -> the units containing it
    quantity_postings: dict[str, tuple[int, ...]]  # quantity value -> the units giving it


@lru_cache(maxsize=512)
def index_units(text: str) -> UnitIndex:
    spans = rough_pieces(text)
    starts = [span[0] for span in spans]
    unit_values: list[set[str]] = [set() for _ in spans]
    # What quantity_values(text) gives, from the same pass rather than a second one.
    passage_values = year_range_values(text)
    for quantity in passage_quantities(text):  # one pass over the passage, then placed
        readings = quantity_readings(quantity)
        passage_values.update(readings)
        position = bisect.bisect_right(starts, quantity.span[0]) - 1
        if position >= 0:
            unit_values[position].update(readings)
    units: list[Unit] = []
    postings: dict[str, list[int]] = {}
    for span, values in zip(spans, unit_values):
        # Each piece's words on their own: no word crosses a piece boundary (a piece ends at
        # whitespace or a line break), so these are content_tokens(text) piece by piece.
        unit_stems, names = piece_stems(text, span[0], span[1])
        for word in unit_stems:
            postings.setdefault(word, []).append(len(units))
        units.append(Unit(span=span, stems=unit_stems, quantities=frozenset(values), names=names))
    quantity_postings: dict[str, list[int]] = {}
    for position, values in enumerate(unit_values):
        for value in values:
            quantity_postings.setdefault(value, []).append(position)
    return UnitIndex(
        text=text, units=tuple(units),
        stems=frozenset(postings), quantities=frozenset(passage_values),
        unit_frequency={word: len(found) for word, found in postings.items()},
        postings={word: tuple(found) for word, found in postings.items()},
        quantity_postings={value: tuple(found) for value, found in quantity_postings.items()},
    )
